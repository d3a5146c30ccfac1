"""Programs for the broker-level differential (conformance.oracles.broker_level): what several producers with skewed
clocks, a moving broker clock and a reader do to one topic-partition, drawn as plain data.

A `Program` is a topic configuration (CreateTime or LogAppendTime, validation bounds, compression, small segments
and index intervals: strategies.configs), a broker clock to start from, one to three producer clocks
(strategies.clocks: offsets, drift, backward steps) and a list of operations:

- `Produce`: one producer's request, a batch of a (magic, codec) the profile takes, its records' timestamps read
  from that producer's clock at the broker's `now` or drawn odd (-1, 0, near Long.MAX, unit mistakes, exactly at
  and one past the validation bounds: strategies.timestamps), at a Produce version that carries the magic, and
  rarely at a version the broker no longer serves;
- `MoveClock`: the broker clock advances, steps back or jumps (REP-3, IDX-9);
- `Fetch`: from the log start or an absolute offset, at any Fetch version the profile serves (old versions
  down-convert where the profile does, CNV-5), rarely one it no longer serves;
- `Lookup`: ListOffsets v1+ for a sent timestamp (and its neighbours), a special target (-1..-5) or anything;
- `Alter`: a new topic configuration.

Everything is drawn up front, so a program is a value: it is run against an implementation and the model alike,
written as JSON for a reproducer (`program_to_json`) and read back (`program_from_json`), and Hypothesis shrinks
it. The broker clock an operation runs at is the program's start plus the clock moves before it (`clock_at`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from hypothesis import strategies as st

from models.config import TopicConfig, effective_bounds
from models.constants import MAGIC_V2, Codec, TimestampType
from models.profiles import Profile
from models.records import Header, RecordSpec
from strategies.clocks import ClockMove, ClockMoveKind, ProducerClock, clock_moves, producer_clocks
from strategies.configs import topic_configs
from strategies.records import deltas_fit_int64, record_specs
from strategies.timestamps import REALISTIC_NOW_MS, around, clamp_int64, timestamps

SPECIAL_TARGETS = (-1, -2, -3, -4, -5)  # LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED
MAX_RECORDS = 6
FIRST_V2_PRODUCE = 3  # VAL-14: magic 2 needs Produce v3+
LAST_LEGACY_PRODUCE = 2  # CNV-1: magic 0/1 travel in Produce v0-v2


@dataclass(frozen=True)
class Produce:
    producer: int  # index into Program.producers (for the reader; the timestamps are already drawn)
    magic: int
    codec: Codec
    timestamp_type: TimestampType  # the batch's attribute as the producer sets it (LogAppendTime: VAL-8)
    records: tuple[RecordSpec, ...]
    version: int


@dataclass(frozen=True)
class MoveClock:
    delta_ms: int


@dataclass(frozen=True)
class Fetch:
    offset: int | None  # None: the log start offset, as a consumer reading from the earliest
    version: int


@dataclass(frozen=True)
class Lookup:
    target: int
    version: int
    read_committed: bool


@dataclass(frozen=True)
class Alter:
    config: TopicConfig


Operation = Produce | MoveClock | Fetch | Lookup | Alter
COMPARED = (Produce, Fetch, Lookup, Alter)  # the operations with an answer to compare (a clock move has none)


@dataclass(frozen=True)
class Program:
    config: TopicConfig
    start_ms: int
    producers: tuple[ProducerClock, ...]
    ops: tuple[Operation, ...]

    def clock_at(self, index: int) -> int:
        """The broker's `now` when operation `index` runs: the start plus every clock move before it."""
        now = self.start_ms
        for op in self.ops[:index]:
            if isinstance(op, MoveClock):
                now = clamp_int64(now + op.delta_ms)
        return now

    @property
    def compared_ops(self) -> int:
        return sum(1 for op in self.ops if isinstance(op, COMPARED))


def kind_of(op: Operation) -> str:
    return {Produce: "produce", MoveClock: "clock", Fetch: "fetch", Lookup: "lookup", Alter: "alter"}[type(op)]


# -- drawing


def _rarely() -> st.SearchStrategy[bool]:
    """True one time in 25, shrinking to False (a flat integer test would favour its bounds, as Hypothesis does)."""
    return st.sampled_from((False,) * 24 + (True,))


def _versions(low: int, high: int) -> tuple[int, ...]:
    return tuple(range(low, high + 1)) if low <= high else ()


@st.composite
def _produce(draw: st.DrawFn, profile: Profile, config: TopicConfig, now: int, producer: int,
             clock: ProducerClock, sends: int, pairs: tuple[tuple[int, Codec], ...]) -> Produce:  # fmt: skip
    magic, codec = draw(st.sampled_from(pairs), label="magic, codec")
    low, high = profile.produce_versions
    versions = (_versions(max(low, FIRST_V2_PRODUCE), high) if magic == MAGIC_V2
                else _versions(low, min(high, LAST_LEGACY_PRODUCE)))  # fmt: skip
    removed = low > 0 and (not versions or draw(_rarely(), label="removed version?"))
    version = low - 1 if removed else draw(st.sampled_from(versions), label="produce version")
    flag = draw(st.sampled_from((TimestampType.CREATE_TIME,) * 9 + (TimestampType.LOG_APPEND_TIME,)), label="flag")
    before, after = effective_bounds(config, profile)
    own = clock.read(now, sends)  # what this producer's clock reads at the broker's `now`
    ts = st.one_of(
        around(own, -2_000, 2_000),
        around(own, -2_000, 2_000),
        timestamps(now, before=before, after=after, boundary=True, margin=0),
    )
    specs = draw(record_specs(ts, min_size=1, max_size=MAX_RECORDS, with_headers=magic == MAGIC_V2), label="records")
    if magic == MAGIC_V2 and not deltas_fit_int64(specs):
        specs = specs[:1]  # FMT-11: v2 deltas must fit an int64 (strategies.records.batches does the same)
    return Produce(producer, magic, codec, flag, tuple(specs), version)


@st.composite
def programs(
    draw: st.DrawFn,
    profile: Profile,
    pairs: tuple[tuple[int, Codec], ...],
    *,
    max_ops: int = 40,
    alter: bool = True,
) -> Program:
    """A program for `profile` (narrowed to the versions the target serves) whose batches use `pairs`, the
    (magic, codec) pairs the target can produce (strategies.records.combinations)."""
    config = draw(topic_configs(profile, bounded=draw(st.booleans(), label="bounded")), label="config")
    start = draw(around(REALISTIC_NOW_MS, 0, 400 * 24 * 3_600_000), label="start")
    producers = tuple(draw(st.lists(producer_clocks(), min_size=1, max_size=3), label="producers"))
    kinds = ("produce",) * 5 + ("fetch",) * 2 + ("lookup",) * 3 + ("clock",) * 2 + (("alter",) if alter else ())
    fetch_low, fetch_high = profile.fetch_versions
    fetch_versions = _versions(fetch_low, fetch_high)
    lookup_versions = _versions(max(1, profile.list_offsets_versions[0]), profile.list_offsets_versions[1])
    now, sends, sent = start, [0] * len(producers), list[int]()
    ops: list[Operation] = []
    for _ in range(draw(st.integers(1, max_ops), label="operations")):
        kind = draw(st.sampled_from(kinds), label="kind")
        if kind == "produce":
            who = draw(st.integers(0, len(producers) - 1), label="producer")
            op = draw(_produce(profile, config, now, who, producers[who], sends[who], pairs))
            sends[who] += 1
            sent.extend(r.timestamp for r in op.records)
            ops.append(op)
        elif kind == "clock":
            move: ClockMove = draw(clock_moves(), label="clock move")
            now = move.apply(now)
            ops.append(MoveClock(move.delta_ms))
        elif kind == "fetch":
            offset = draw(st.one_of(st.none(), st.integers(0, 60)), label="fetch offset")
            removed = fetch_low > 0 and draw(_rarely(), label="removed version?")
            version = fetch_low - 1 if removed else draw(st.sampled_from(fetch_versions), label="fetch version")
            ops.append(Fetch(offset, version))
        elif kind == "lookup" and lookup_versions:
            near = sorted({clamp_int64(t + d) for t in sent[-12:] for d in (-1, 0, 1) if t + d >= 0})
            choices = [st.sampled_from(SPECIAL_TARGETS), st.integers(0, 2**62)]
            if near:
                choices.insert(0, st.sampled_from(near))
            target = draw(st.one_of(*choices), label="target")
            version = draw(st.sampled_from(lookup_versions), label="lookup version")
            ops.append(Lookup(target, version, draw(st.booleans(), label="read committed")))
        elif kind == "alter":
            config = draw(topic_configs(profile, bounded=draw(st.booleans(), label="bounded")), label="new config")
            ops.append(Alter(config))
    return Program(config, start, producers, tuple(ops))


# -- JSON (reproducers)


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"hex": value.hex()}
    if isinstance(value, Codec | TimestampType | ClockMoveKind):
        return value.name
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def program_to_json(program: Program) -> dict[str, Any]:
    return {
        "config": _plain(asdict(program.config)),
        "start_ms": program.start_ms,
        "producers": [_plain(asdict(p)) for p in program.producers],
        "ops": [{"op": kind_of(op), **_plain(asdict(op))} for op in program.ops],
    }


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes.fromhex(value["hex"])


def _config(data: dict[str, Any]) -> TopicConfig:
    fields = dict(data)
    fields["timestamp_type"] = TimestampType[fields["timestamp_type"]]
    return TopicConfig(**fields)


def _op(data: dict[str, Any]) -> Operation:
    kind = data["op"]
    if kind == "produce":
        records = tuple(
            RecordSpec(r["timestamp"], _bytes(r["key"]), _bytes(r["value"]),
                       tuple(Header(h["key"], _bytes(h["value"])) for h in r["headers"]))
            for r in data["records"]
        )
        return Produce(data["producer"], data["magic"], Codec[data["codec"]], TimestampType[data["timestamp_type"]],
                       records, data["version"])  # fmt: skip
    if kind == "clock":
        return MoveClock(data["delta_ms"])
    if kind == "fetch":
        return Fetch(data["offset"], data["version"])
    if kind == "lookup":
        return Lookup(data["target"], data["version"], data["read_committed"])
    if kind == "alter":
        return Alter(_config(data["config"]))
    raise ValueError(f"unknown operation {kind!r}: one of produce, clock, fetch, lookup, alter")


def program_from_json(data: dict[str, Any]) -> Program:
    producers = tuple(
        ProducerClock(p["offset_ms"], p["drift_ppm"], tuple((a, b) for a, b in p["backward_steps"]), p["origin_ms"])
        for p in data["producers"]
    )
    return Program(_config(data["config"]), data["start_ms"], producers, tuple(_op(o) for o in data["ops"]))


def dumps(program: Program) -> str:
    return json.dumps(program_to_json(program), sort_keys=True)


__all__ = [
    "COMPARED",
    "Alter",
    "Fetch",
    "Lookup",
    "MoveClock",
    "Operation",
    "Produce",
    "Program",
    "dumps",
    "kind_of",
    "program_from_json",
    "program_to_json",
    "programs",
]
