"""The seeded faults of conformance.faults: registry sanity, and for every mutant a deterministic
witness proving its fault is observable through the Implementation protocol on one of its declared
clauses (and that the same witness passes against the reference model).

A witness drives the implementation under test and a separate reference model with the same operations
and compares what they show with `check_equal` on a declared clause; the expectation never comes from
the implementation's own answers.
"""

from __future__ import annotations

import json
import pickle
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.commands import kill_table as mutation
from conformance.commands.kill_table import CRASHED, KILLED, KillResult, KillTable, order_tests, run_kill_table
from conformance.faults import MUTANTS, Mutant, MutantFactory
from conformance.judging.checks import CheckRecord, ClauseViolation, check_equal, recording
from conformance.judging.observables import Obs
from conformance.judging.results import TestResult
from conformance.plugin.launcher import CollectedTest, SuitesRun
from conformance.targets.kinds.implementation import Implementation, Kind
from conformance.targets.libraries.model.model_broker import ModelFactory
from models.clauses import CLAUSES
from models.cluster import ProduceResponse
from models.codec import v2_crc
from models.config import TopicConfig
from models.constants import LONG_MAX, LONG_MIN, Codec, IsolationLevel, TimestampType
from models.errors import ConfigError
from models.records import RecordSpec, build_legacy, build_v2

CLAUSE_IDS = {c.id for c in CLAUSES}
# The mutants of the broker's behaviour; codec and client mutants are tested beside their adapters.
BROKER_MUTANTS = sorted(m for m, mutant in MUTANTS.items() if mutant.kind is Kind.BROKER)
DAY = 24 * 3600 * 1000
HOUR = 3600 * 1000
LAT = TimestampType.LOG_APPEND_TIME
T = "t"

Witness = Callable[[Implementation, Implementation], None]


# ------------------------------------------------------------------------------------ helpers


def _specs(*timestamps: int) -> list[RecordSpec]:
    return [RecordSpec(timestamp=ts, key=b"k%d" % i, value=b"v") for i, ts in enumerate(timestamps)]


def _now(impl: Implementation) -> int:
    return impl.clock(impl.leader(T, 0))


# One batch per segment: a witness batch of 1-4 records is 71..101 bytes, two do not fit, and one does (a batch
# larger than its segment is refused, RECORD_LIST_TOO_LARGE, as Kafka refuses it).
ONE_BATCH_SEGMENT = 128

def _setup(impl: Implementation, **config: object) -> int:
    impl.create_topic(T, TopicConfig(**config))  # type: ignore[arg-type]
    return _now(impl)


def _produce_v2(impl: Implementation, *timestamps: int, version: int = 9, **kw: object) -> ProduceResponse:
    return impl.produce(T, 0, [build_v2(_specs(*timestamps), **kw)], produce_version=version)  # type: ignore[arg-type]


def _compare(
    clause: str, what: str, impl: Implementation, ref: Implementation, run: Callable[[Implementation], object]
) -> None:
    """The same operations on both sides; the reference model's answer is the expectation."""
    check_equal(clause, _observable(what), run(impl), run(ref), what)


# The observable a witness compares, by the words of its description (a witness compares whole answers).
_OBSERVABLES = (
    ("produce error", Obs.PRODUCE_ERROR),
    ("record_errors", Obs.PRODUCE_RECORD_ERROR_INDEXES),
    ("log_append_time", Obs.PRODUCE_LOG_APPEND_TIME),
    ("BaseTimestamp", Obs.BATCH_BASE_TIMESTAMP),
    ("MaxTimestamp", Obs.BATCH_MAX_TIMESTAMP),
    ("create topic", Obs.CREATE_TOPICS_REFUSED),
    ("log start", Obs.LOG_START_OFFSET),
    ("EARLIEST", Obs.LIST_OFFSETS_OFFSET),
    ("lookup", Obs.LIST_OFFSETS_OFFSET),
    ("timestamps", Obs.RECORD_TIMESTAMPS),
    ("records", Obs.RECORD_TIMESTAMPS),
)


def _observable(what: str) -> Obs:
    return next((obs for words, obs in _OBSERVABLES if words in what), Obs.RECORD_TIMESTAMPS)


def _record_timestamps(impl: Implementation, fetch_version: int = 12) -> tuple[tuple[int, str], ...]:
    records = impl.fetch(T, 0, 0, fetch_version=fetch_version).records()
    return tuple((r.timestamp, r.timestamp_type.name) for r in records)


def _lookup(impl: Implementation, target: int, version: int = 9) -> tuple[object, int, int, int]:
    a = impl.list_offsets(T, 0, target, version=version)
    return a.error.name, a.offset, a.timestamp, a.leader_epoch


def _error_of(clause: str, *timestamps_from_now: int, **config: object) -> Witness:
    """Produce one v2 batch with timestamps now+delta and compare the error codes on `clause`."""

    def witness(impl: Implementation, ref: Implementation) -> None:
        def run(i: Implementation) -> str:
            now = _setup(i, **config)
            return _produce_v2(i, *(now + d if d is not None else -1 for d in timestamps_from_now)).error.name

        _compare(clause, "produce error", impl, ref, run)

    return witness


# ------------------------------------------------------------------------------------ witnesses


def _w_lat_ignored(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> object:
        now = _setup(i, timestamp_type=LAT)
        _produce_v2(i, now - 10, now - 5)
        return _record_timestamps(i)

    _compare("CMP.lat-every-record-reads-now", "record timestamps on a LogAppendTime topic", impl, ref, run)


def _w_difference_honoured(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> str:
        try:
            i.create_topic(T, TopicConfig(difference_max_ms=1000))
        except ConfigError:
            return "ConfigError"
        now = _now(i)
        return "created: " + _produce_v2(i, now - 5000).error.name

    _compare("VAL.difference-config-removed", "create topic with difference.max.ms", impl, ref, run)


def _w_lat_flag(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> str:
        now = _setup(i, timestamp_type=LAT)
        return _produce_v2(i, now - 10, timestamp_type=LAT, log_append_time=now - 10).error.name

    _compare("VAL.lat-flag-rejected-on-lat-topic", "produce error", impl, ref, run)


def _w_partial(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> tuple[str, int]:
        now = _setup(i)
        error = _produce_v2(i, now, now + 2 * HOUR).error.name
        return error, i.list_offsets(T, 0, -1, version=9).offset

    _compare("VAL.whole-batch-rejected", "(produce error, log end offset)", impl, ref, run)


def _w_record_errors(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> tuple[int, ...]:
        now = _setup(i, before_max_ms=1000)
        return tuple(e.batch_index for e in _produce_v2(i, now, now - 5000, now - 6000).record_errors)

    _compare("VAL.record-errors-batch-index", "record_errors batch indexes", impl, ref, run)


def _w_lat_response(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> int:
        now = _setup(i, timestamp_type=LAT)
        return _produce_v2(i, now - 10).log_append_time

    _compare("VAL.lat-response-time", "log_append_time", impl, ref, run)


def _w_createtime_response(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> int:
        now = _setup(i)
        return _produce_v2(i, now - 10).log_append_time

    _compare("VAL.createtime-response-minus-one", "log_append_time", impl, ref, run)


def _w_lat_base_delta(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> object:
        now = _setup(i, timestamp_type=LAT)
        _produce_v2(i, now - 10, now - 5)
        return _record_timestamps(i)

    _compare("CON.v2-lat-max-timestamp", "record timestamps of a LogAppendTime batch", impl, ref, run)


def _w_lat_base(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> int:
        now = _setup(i, timestamp_type=LAT)
        _produce_v2(i, now - 10, now - 5)
        batch = i.fetch(T, 0, 0, fetch_version=12).batches[0]
        return batch.base_timestamp  # type: ignore[union-attr]

    _compare("FMT.set-max-timestamp-keeps-base", "stored BaseTimestamp", impl, ref, run)


def _w_header_max_kept(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> int:
        now = _setup(i)
        from dataclasses import replace

        batch = replace(build_v2(_specs(now - 10, now - 5)), max_timestamp=now - 1000)
        i.produce(T, 0, [batch], produce_version=9)
        return i.fetch(T, 0, 0, fetch_version=12).batches[0].max_timestamp

    _compare("VAL.header-max-recomputed", "stored MaxTimestamp", impl, ref, run)


def _w_header_max_last(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> int:
        now = _setup(i)
        _produce_v2(i, now, now - 10)
        return i.fetch(T, 0, 0, fetch_version=12).batches[0].max_timestamp

    _compare("VAL.header-max-recomputed", "stored MaxTimestamp", impl, ref, run)


def _w_v1_wrapper(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> object:
        now = _setup(i, timestamp_type=LAT, message_format_magic=1)
        batches = build_legacy(_specs(now - 100, now - 50), magic=1, codec=Codec.GZIP)
        i.produce(T, 0, batches, produce_version=2)
        return _record_timestamps(i, fetch_version=4)

    _compare("CON.v1-wrapper-lat-wrapper-value", "inner record timestamps", impl, ref, run)


def _w_index_non_strict(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> object:
        now = _setup(i, index_interval_bytes=1)
        _produce_v2(i, now - 100)
        _produce_v2(i, now - 100)
        _produce_v2(i, now - 200)
        return _lookup(i, now - 100)

    _compare("LO.first-ge-target", "lookup of a tied timestamp", impl, ref, run)


def _w_index_next_offset(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> object:
        now = _setup(i, index_interval_bytes=1)
        for d in (300, 100, 500):
            _produce_v2(i, now - d)
        return _lookup(i, now - 100)

    _compare("LO.first-ge-target", "lookup of an indexed timestamp", impl, ref, run)


def _earliest_after_retention(*batches: tuple[int, ...], **config: object) -> Callable[[Implementation], object]:
    def run(i: Implementation) -> object:
        now = _setup(i, retention_ms=DAY, **config)
        for deltas in batches:
            _produce_v2(i, *(now + d for d in deltas))
        i.retention_tick()
        return _lookup(i, -2)

    return run


def _w_retention_smallest(impl: Implementation, ref: Implementation) -> None:
    run = _earliest_after_retention((-2 * DAY, 0))
    _compare("IDX.retention-by-largest-timestamp", "log start after retention", impl, ref, run)


def _w_retention_first_batch(impl: Implementation, ref: Implementation) -> None:
    run = _earliest_after_retention((-2 * DAY,), (0,))
    _compare("IDX.retention-by-largest-timestamp", "log start after retention", impl, ref, run)


def _w_retention_prefix(impl: Implementation, ref: Implementation) -> None:
    run = _earliest_after_retention((-2 * DAY,), (0,), (-2 * DAY,), (0,), segment_bytes=ONE_BATCH_SEGMENT)
    _compare("IDX.retention-prefix-rule", "log start after retention", impl, ref, run)


def _w_earliest_zero(impl: Implementation, ref: Implementation) -> None:
    run = _earliest_after_retention((-2 * DAY,), (0,), segment_bytes=ONE_BATCH_SEGMENT)
    _compare("LO.earliest-is-log-start", "EARLIEST after retention", impl, ref, run)


def _w_follower_restamps(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> object:
        now = _setup(i, timestamp_type=LAT)
        for b in i.brokers():
            if b != i.leader(T, 0):
                i.set_clock(b, now + 5000)
        _produce_v2(i, now - 10)
        follower = next(b for b in i.brokers() if b != i.leader(T, 0))
        i.elect_leader(T, 0, follower)
        return _record_timestamps(i)

    _compare("REP.follower-no-restamp", "record timestamps after failover", impl, ref, run)


def _w_lat_clamped(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> int:
        now = _setup(i, timestamp_type=LAT)
        _produce_v2(i, now - 10)
        i.set_clock(i.leader(T, 0), now - 10_000)
        return _produce_v2(i, now - 20).log_append_time

    _compare("REP.lat-not-clamped", "log_append_time after a backward step", impl, ref, run)


def _w_down_type(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> object:
        now = _setup(i, timestamp_type=LAT)
        _produce_v2(i, now - 10, now - 5)
        return _record_timestamps(i, fetch_version=3)

    _compare("CNV.down-convert-keeps-type", "down-converted records", impl, ref, run)


def _w_down_timestamps(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> object:
        now = _setup(i)
        _produce_v2(i, now - 10, now - 5)
        return _record_timestamps(i, fetch_version=3)

    _compare("CNV.down-convert-createtime-keeps-timestamps", "down-converted records", impl, ref, run)


def _w_removed_produce_served(impl: Implementation, ref: Implementation) -> None:
    def run(i: Implementation) -> object:
        now = _setup(i)
        legacy = build_legacy(_specs(now - 10), magic=1)
        return i.produce(T, 0, legacy, produce_version=2).error  # type: ignore[arg-type]

    _compare("CNV.no-conversion", "produce error", impl, ref, run)


def _lookup_witness(clause: str, deltas: tuple[int, ...], target: int, version: int = 9) -> Witness:
    """One batch with timestamps now+delta, then ListOffsets for now+target (or the special target
    itself when it is negative and small)."""

    def witness(impl: Implementation, ref: Implementation) -> None:
        def run(i: Implementation) -> object:
            now = _setup(i)
            _produce_v2(i, *(now + d for d in deltas))
            return _lookup(i, target if -10 <= target < 0 else now + target, version)

        _compare(clause, f"ListOffsets v{version}", impl, ref, run)

    return witness


def _legacy_records(
    clause: str, *, magic: int, codec: Codec = Codec.NONE, inner: bool = False, **config: object
) -> Witness:
    """Produce one legacy set (magic 0/1, Produce v2) stamped before now and compare what is stored: the record
    timestamps a consumer reads, or (`inner`) the inner messages' own timestamps below the consumer view."""

    def witness(impl: Implementation, ref: Implementation) -> None:
        def run(i: Implementation) -> object:
            now = _setup(i, **config)
            sent = build_legacy(_specs(now - 10, now - 5), magic=magic, codec=codec)
            i.produce(T, 0, sent, produce_version=2)
            if not inner:
                return _record_timestamps(i, fetch_version=4)
            batches = i.fetch(T, 0, 0, fetch_version=4).batches
            return [[e.message.stored_timestamp for e in b.message.inner] for b in batches]  # type: ignore[union-attr]

        observable = Obs.INNER_TIMESTAMPS if inner else Obs.RECORD_TIMESTAMPS
        check_equal(clause, observable, run(impl), run(ref), f"legacy v{magic} set, {config}")

    return witness


WITNESSES: dict[str, Witness] = {
    "lat-ignored": _w_lat_ignored,
    "symmetric-range": _error_of("VAL.range-before-after", -5000, before_max_ms=1000),
    "before-bound-exclusive": _error_of("VAL.range-inclusive-bounds", -1000, before_max_ms=1000),
    "after-bound-exclusive": _error_of("VAL.range-inclusive-bounds", 1000, after_max_ms=1000),
    "no-timestamp-not-exempt": _error_of("VAL.no-timestamp-exempt", None, before_max_ms=1000),  # type: ignore[arg-type]
    "difference-honoured-in-4-0": _w_difference_honoured,
    "no-fallback-to-difference": _error_of("VAL.bounds-fallback-to-difference", -5000, difference_max_ms=1000),
    "after-default-unlimited": _error_of("VAL.after-default-one-hour", 2 * HOUR),
    "lat-topic-range-checked": _error_of("VAL.lat-topic-skips-range-check", 2 * HOUR, timestamp_type=LAT),
    "lat-flag-accepted-on-lat-topic": _w_lat_flag,
    "partial-batch-append": _w_partial,
    "record-errors-missing": _w_record_errors,
    "record-errors-index-off-by-one": _w_record_errors,
    "lat-response-minus-one": _w_lat_response,
    "lat-response-create-time": _w_lat_response,
    "createtime-response-now": _w_createtime_response,
    "lat-reads-base-plus-delta": _w_lat_base_delta,
    "lat-overwrites-base-timestamp": _w_lat_base,
    "header-max-not-recomputed": _w_header_max_kept,
    "header-max-last-record": _w_header_max_last,
    "v1-wrapper-lat-inner-own-timestamp": _w_v1_wrapper,
    "time-index-non-strict": _w_index_non_strict,
    "time-index-entry-next-offset": _w_index_next_offset,
    "retention-by-smallest-timestamp": _w_retention_smallest,
    "retention-by-first-batch": _w_retention_first_batch,
    "retention-ignores-prefix": _w_retention_prefix,
    "follower-restamps-lat": _w_follower_restamps,
    "lat-clamped-monotonic": _w_lat_clamped,
    "down-conversion-drops-type": _w_down_type,
    "down-conversion-drops-timestamps": _w_down_timestamps,
    "removed-produce-versions-served": _w_removed_produce_served,
    "lookup-last-match": _lookup_witness("LO.first-ge-target", (-100, -100, -50), -100),
    "lookup-closest-timestamp": _lookup_witness("LO.first-ge-target", (-100, -300, -200), -250),
    "lookup-batch-first-offset": _lookup_witness("LO.first-ge-target", (-10, 0), 0),
    "not-found-answers-leo": _lookup_witness("LO.not-found-minus-one", (-10,), 0),
    "max-timestamp-batch-last-offset": _lookup_witness("LO.max-timestamp-first-record", (-10, 0, -10), -3),
    "max-timestamp-last-record": _lookup_witness("LO.max-timestamp-first-record", (0, -10, 0), -3),
    "earliest-returns-zero": _w_earliest_zero,
    "epoch-missing": _lookup_witness("LO.epoch-of-found-batch", (-10, 0), 0),
    "max-timestamp-below-v7": _lookup_witness("LO.special-target-min-version", (-10, 0), -3, version=6),
    "unknown-target-searched": _lookup_witness("LO.unknown-target-unsupported", (-10, 0), -7),
    "lat-v1-uncompressed-keeps-producer-time": _legacy_records(
        "CMP.lat-v1-uncompressed-overwrites", magic=1, timestamp_type=LAT, message_format_magic=1
    ),
    "lat-v1-inplace-stamps-inner": _legacy_records(
        "CMP.lat-v1-compressed-wrapper-only", magic=1, codec=Codec.GZIP, inner=True, timestamp_type=LAT,
        message_format_magic=1,
    ),
    "lat-v1-rebuild-keeps-inner": _legacy_records(
        "CMP.lat-rebuild-v1-inner-now", magic=1, inner=True, timestamp_type=LAT, message_format_magic=1,
        compression_type="gzip",
    ),
    "up-convert-v0-stamps-now": _legacy_records("CNV.up-convert-v0-createtime", magic=0),
    "v1-uncompressed-reads-as-v0": _legacy_records("CON.v1-uncompressed-own", magic=1, message_format_magic=1),
}

# Where a witness needs another profile than kafka-4.0 (legacy produce, down-conversion, 3.6-3.9 fallback).
WITNESS_PROFILES: dict[str, str] = {
    "no-fallback-to-difference": "kafka-3.9",
    "v1-wrapper-lat-inner-own-timestamp": "kafka-2.8",
    "down-conversion-drops-type": "kafka-3.9",
    "down-conversion-drops-timestamps": "kafka-3.9",
    "lat-v1-uncompressed-keeps-producer-time": "kafka-2.8",
    "lat-v1-inplace-stamps-inner": "kafka-2.8",
    "lat-v1-rebuild-keeps-inner": "kafka-2.8",
    "up-convert-v0-stamps-now": "kafka-3.9",
    "v1-uncompressed-reads-as-v0": "kafka-2.8",
}


def _profile_for(mutant_id: str) -> str:
    return WITNESS_PROFILES.get(mutant_id, "kafka-4.0")


# ------------------------------------------------------------------------------------ registry sanity


def test_at_least_thirty_mutants_with_unique_kebab_ids() -> None:
    assert len(MUTANTS) >= 30
    for mutant_id, mutant in MUTANTS.items():
        assert mutant.id == mutant_id
        assert mutant_id == mutant_id.lower() and " " not in mutant_id and "_" not in mutant_id
        assert mutant.description.endswith(".")


@pytest.mark.parametrize("mutant_id", sorted(MUTANTS))
def test_declared_clauses_and_profiles_exist(mutant_id: str) -> None:
    mutant: Mutant = MUTANTS[mutant_id]
    assert mutant.clauses, "a mutant must declare the clauses it violates"
    for clause in mutant.clauses:
        assert clause in CLAUSE_IDS, f"{mutant_id} declares unknown clause {clause}"
    for profile in mutant.profiles or ():
        assert profile in {"kafka-0.10.0", "kafka-0.10", "kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"}


@pytest.mark.parametrize("mutant_id", BROKER_MUTANTS)
def test_factory_pickles_and_builds(mutant_id: str) -> None:
    mutant = MUTANTS[mutant_id]
    profile = _profile_for(mutant_id)
    factory = pickle.loads(pickle.dumps(MutantFactory(mutant=mutant_id, profile=profile)))
    assert factory.name == f"mutant:{mutant_id}"
    impl = factory.build()
    model = ModelFactory(profile=profile).build()
    assert impl.name == f"mutant:{mutant_id}"
    assert impl.profile == model.profile
    assert impl.capabilities == model.capabilities
    assert pickle.loads(pickle.dumps(mutant)) == mutant  # the build function pickles by reference


def test_every_mutant_has_a_witness() -> None:
    # Codec and client mutants have their witnesses beside their adapters (tests/test_codecs.py, test_clients.py).
    assert set(WITNESSES) == set(BROKER_MUTANTS)


# ------------------------------------------------------------------------------------ witnesses


@pytest.mark.parametrize("mutant_id", BROKER_MUTANTS)
def test_witness_kills_mutant_on_a_declared_clause(mutant_id: str) -> None:
    profile = _profile_for(mutant_id)
    declared = MUTANTS[mutant_id].profiles
    assert declared is None or profile in declared
    witness = WITNESSES[mutant_id]
    record = CheckRecord()
    try:
        with recording(record):
            witness(MutantFactory(mutant=mutant_id, profile=profile).build(), ModelFactory(profile=profile).build())
    except ClauseViolation as raised:
        caught = [raised]
    else:
        caught = record.lenient  # a SHOULD/MAY clause not met is recorded (NON-STRICT), not raised
    assert caught, f"the witness of {mutant_id} met no violation"
    assert any(v.clause_id in MUTANTS[mutant_id].clauses for v in caught)


@pytest.mark.parametrize("mutant_id", BROKER_MUTANTS)
def test_witness_passes_against_the_model(mutant_id: str) -> None:
    profile = _profile_for(mutant_id)
    WITNESSES[mutant_id](ModelFactory(profile=profile).build(), ModelFactory(profile=profile).build())


# ------------------------------------------------------------------------ the kill table
# (conformance.commands.kill_table)

LOOKUP = "LO.first-ge-target"
MACHINE = CollectedTest("suites/test_stateful.py::test_machine", (LOOKUP, *(f"VAL.c{i}" for i in range(20))))
WIDE = CollectedTest("suites/test_list_offsets.py::test_lookup", (LOOKUP, "LO.not-found-minus-one"))
DIRECT = CollectedTest("suites/test_list_offsets.py::test_direct", (LOOKUP,))
OTHER = CollectedTest("suites/test_validation.py::test_range", ("VAL.range-before-after",))


def _kill_row(mutant: str, profile: str, hypothesis_profile: str, status: str = KILLED) -> KillResult:
    row = KillResult(mutant, profile, hypothesis_profile, [LOOKUP], status=status, tests_run=1, wall_seconds=2.0)
    if status == KILLED:
        row.killed_by, row.killer, row.seconds_to_first_failure = [LOOKUP], DIRECT.nodeid, 1.5
        row.counterexample_lines, row.shrunk, row.replay = 3, True, "pytest ..."
    return row


def test_the_most_direct_tests_run_first_and_the_state_machine_last() -> None:
    assert order_tests([MACHINE, OTHER, WIDE, DIRECT], [LOOKUP]) == [DIRECT.nodeid, WIDE.nodeid, MACHINE.nodeid]
    assert order_tests([MACHINE, WIDE], [LOOKUP, "LO.not-found-minus-one"]) == [WIDE.nodeid, MACHINE.nodeid]
    assert order_tests([OTHER], [LOOKUP]) == []


def _result(fields: dict[str, object]) -> TestResult:
    """A test's result as the plugin's verdicts.json gives it (conformance.judging.results)."""
    return TestResult.from_json(fields)


def test_ci_finds_the_kill_without_shrinking_then_shrinks_only_the_killing_test(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first failure of another clause does not end the search; the first kill does; its test alone is
    replayed at ci (with shrinking) for the counterexample."""
    calls: list[SuitesRun] = []

    def run_pass(runner: object, run: SuitesRun, timeout_s: float) -> mutation._Pass:
        calls.append(run)
        first = run.tests[0]
        if len(calls) == 1:  # the first test fails, on a clause the mutant does not declare: pytest stops there
            verdicts = {"LO.not-found-minus-one": "FAIL", LOOKUP: "BLOCKED"}
            return mutation._Pass(1, "", [_result({"nodeid": first, "verdicts": verdicts, "finished_at": time.time()})])
        if len(calls) == 2:
            message = "Falsifying example: test(\n    data=...,\n    more=...,\n    rest=...,\n)"
            return mutation._Pass(1, "", [_result({"nodeid": first, "verdicts": {LOOKUP: "FAIL"},
                                                   "finished_at": time.time(), "message": message,
                                                   "replay": "pytest A --hypothesis-profile broker"})])
        return mutation._Pass(1, "", [_result({"nodeid": first, "verdicts": {LOOKUP: "FAIL"},
                                               "finished_at": time.time(),
                                               "message": "Falsifying example: test(\n    data=...,\n)",
                                               "replay": "pytest A --hypothesis-profile ci"})])  # fmt: skip

    monkeypatch.setattr(mutation._Runner, "run_pass", run_pass)
    result = mutation.run_mutant("m", [LOOKUP], [MACHINE, WIDE, OTHER, DIRECT], profile="kafka-4.0",
                                 hypothesis_profile="ci")  # fmt: skip
    assert [(c.tests, c.hypothesis_profile, c.maxfail) for c in calls] == [
        ((DIRECT.nodeid, WIDE.nodeid, MACHINE.nodeid), "broker", 1),
        ((WIDE.nodeid, MACHINE.nodeid), "broker", 1),
        ((WIDE.nodeid,), "ci", None),
    ]
    assert result.status == KILLED and result.killer == WIDE.nodeid and result.killed_by == [LOOKUP]
    assert result.other_clauses == ["LO.not-found-minus-one"]
    assert result.shrunk and result.counterexample_lines == 2 and result.replay == "pytest A --hypothesis-profile ci"
    assert result.seconds_to_first_failure is not None and 0 <= result.seconds_to_first_failure <= result.wall_seconds


def test_a_stopped_kill_table_keeps_its_finished_rows_and_resume_runs_the_rest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ids = sorted(MUTANTS)[:3]
    ran: list[str] = []
    stopping = [True]

    def run_mutant(runner: object, mutant: str, declared: object, tests: object, *, profile: str,
                   hypothesis_profile: str) -> KillResult:  # fmt: skip
        if stopping[0] and mutant != ids[0]:
            raise mutation.Interrupted(mutant)  # Ctrl-C while the second mutant runs
        ran.append(mutant)
        return _kill_row(mutant, profile, hypothesis_profile)

    monkeypatch.setattr(mutation, "collect", lambda run: [])
    monkeypatch.setattr(mutation._Runner, "run_mutant", run_mutant)
    table = KillTable(tmp_path, profile="kafka-4.0", hypothesis_profile="ci")
    with pytest.raises(KeyboardInterrupt):
        run_kill_table(table, only=ids, jobs=1)
    data = json.loads((tmp_path / "mutants.json").read_text(encoding="utf-8"))
    assert [r["mutant"] for r in data["results"]] == [ids[0]]
    assert data["summary"]["median_seconds_to_first_failure"] == 1.5
    assert f"`{ids[0]}`" in (tmp_path / "mutants.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mutants.json", "mutants.md"]  # no temporary files left

    ran.clear()
    stopping[0] = False
    resumed = KillTable(tmp_path, profile="kafka-4.0", hypothesis_profile="ci")
    resumed.load()
    rows = run_kill_table(resumed, only=ids, jobs=1)
    assert ran == ids[1:]
    assert [r.mutant for r in rows] == ids
    assert len(json.loads((tmp_path / "mutants.json").read_text(encoding="utf-8"))["results"]) == 3

    elsewhere = KillTable(tmp_path, profile="kafka-4.0", hypothesis_profile="fast")
    elsewhere.load()
    assert not elsewhere.rows  # rows of another Hypothesis budget are no part of this table


def test_resume_runs_crashed_rows_again(tmp_path: Path) -> None:
    table = KillTable(tmp_path, profile="kafka-4.0", hypothesis_profile="ci")
    table.add(_kill_row("a", "kafka-4.0", "ci"))
    table.add(_kill_row("b", "kafka-4.0", "ci", status=CRASHED))
    resumed = KillTable(tmp_path, profile="kafka-4.0", hypothesis_profile="ci")
    resumed.load()
    assert resumed.finished("a", "kafka-4.0") and not resumed.finished("a", "kafka-3.9")
    assert not resumed.finished("b", "kafka-4.0")


def test_a_real_mutant_is_killed_and_timed(tmp_path: Path) -> None:
    table = KillTable(tmp_path, profile="kafka-4.0", hypothesis_profile="fast")
    (row,) = run_kill_table(table, only=["lookup-last-match"], jobs=1)
    assert row.status == KILLED and LOOKUP in row.killed_by, row
    assert row.killer is not None and row.killer.startswith("suites/test_")
    assert row.seconds_to_first_failure is not None and 0 < row.seconds_to_first_failure <= row.wall_seconds
    assert "lookup-last-match" in (tmp_path / "mutants.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------ issue 11: witnesses of the
# mutants of the clauses the suites newly check (helper H4; appended, see WITNESSES.update below)

_SMALL_SEGMENTS = {"segment_bytes": ONE_BATCH_SEGMENT}


def _h4(clause: str, observable: Obs, run: Callable[[Implementation], object]) -> Witness:
    def witness(impl: Implementation, ref: Implementation) -> None:
        check_equal(clause, observable, run(impl), run(ref), clause)

    return witness


def _h4_error(clause: str, build: Callable[[int], list[object]], version: int = 9, **config: object) -> Witness:
    """Produce what `build(now)` returns on a topic of `config` and compare the error names."""

    def run(i: Implementation) -> str:
        now = _setup(i, **config)
        return i.produce(T, 0, build(now), produce_version=version).error.name  # type: ignore[arg-type]

    return _h4(clause, Obs.PRODUCE_ERROR, run)


def _h4_log_start(
    clause: str, clocks_and_stamps: tuple[tuple[int | None, int | None], ...], tick_at: int, **config: object
) -> Witness:
    """One-record batches, each sent with the leader clock at now+c (c None: unchanged) and stamped now+s (s
    None: no timestamp); then every clock to now+tick_at and a retention tick; compare the log start."""

    def run(i: Implementation) -> int:
        now = _setup(i, retention_ms=DAY, **config)
        for clock, stamp in clocks_and_stamps:
            if clock is not None:
                i.set_clock(i.leader(T, 0), now + clock)
            _produce_v2(i, -1 if stamp is None else now + stamp)
        for broker in i.brokers():
            i.set_clock(broker, now + tick_at)
        i.retention_tick()
        # EARLIEST: a fetch from 0 below the log start is OFFSET_OUT_OF_RANGE, which tells no log start offset.
        return i.list_offsets(T, 0, -2, version=9).offset

    return _h4(clause, Obs.LOG_START_OFFSET, run)


def _h4_lookup(clause: str, setup: Callable[[Implementation, int], None], target: Callable[[int], int],
               version: int = 9, **config: object) -> Witness:
    def run(i: Implementation) -> object:
        now = _setup(i, **config)
        setup(i, now)
        return _lookup(i, target(now), version)

    return _h4(clause, Obs.LIST_OFFSETS_OFFSET, run)


def _h4_read_committed(i: Implementation) -> object:
    now = _setup(i)
    _produce_v2(i, now - 10)
    a = i.list_offsets(T, 0, -1, version=9, isolation=IsolationLevel.READ_COMMITTED)
    return a.error.name, a.offset


def _h4_untimed_then_timed(i: Implementation, now: int) -> None:
    _produce_v2(i, -1)
    _produce_v2(i, now - 100)


def _h4_untimed_then_future(i: Implementation, now: int) -> None:
    _produce_v2(i, -1)
    _produce_v2(i, now + 1000)
    i.set_clock(i.leader(T, 0), now + HOUR)


def _h4_deleted(i: Implementation, now: int) -> None:
    _produce_v2(i, now - 2 * DAY)
    _produce_v2(i, now)
    i.retention_tick()


def _h4_v0(i: Implementation, now: int) -> None:
    _produce_v2(i, now - 100)
    i.set_clock(i.leader(T, 0), now + 1000)


def _h4_ties(i: Implementation, now: int) -> None:
    _produce_v2(i, now)
    _produce_v2(i, now)


def _h4_sparse_index(i: Implementation, now: int) -> None:
    _produce_v2(i, now - 300, now - 200)  # the first append writes no index entry (IDX-4)
    _produce_v2(i, now - 100)  # entry (now - 100, 2)


def _h4_keyed(now: int, *records: tuple[bytes | None, int]) -> list[object]:
    return [build_v2([RecordSpec(timestamp=now + d, key=k, value=b"v") for k, d in records])]


def _h4_messages(i: Implementation) -> tuple[str | None, ...]:
    now = _setup(i, before_max_ms=1000, after_max_ms=LONG_MAX)
    _produce_v2(i, now)
    return tuple(e.message for e in _produce_v2(i, now, now - 5000).record_errors)


def _h4_summary(i: Implementation) -> str | None:
    now = _setup(i, compacted=True)
    return i.produce(T, 0, _h4_keyed(now, (None, 0)), produce_version=9).error_message  # type: ignore[arg-type]


def _h4_corrupt_v2(now: int) -> list[object]:
    batch = build_v2(_specs(now - 10))
    return [replace(batch, max_timestamp=batch.max_timestamp + 1, crc=v2_crc(batch))]


def _h4_refused(i: Implementation) -> tuple[int, int, int]:
    """Produce v9 carrying a magic 1 batch: refused before the log (VAL-14), so no log start offset (VAL-11)."""
    now = _setup(i)
    answer = i.produce(T, 0, build_legacy(_specs(now - 10, now - 5), magic=1), produce_version=9)
    return answer.base_offset, answer.log_append_time, answer.log_start_offset


def _h4_count_lie(now: int) -> list[object]:
    """RecordsCount 3 and LastOffsetDelta 2 (consistent with each other) over 2 records (VAL-14)."""
    batch = build_v2(_specs(now - 10, now - 5))
    return [replace(batch, records_count=3, last_offset_delta=2)]


def _h4_zstd_v1(now: int) -> list[object]:
    (wrapper,) = build_legacy(_specs(now - 10, now - 5), magic=1, codec=Codec.GZIP)
    attributes = (wrapper.message.attributes & ~0x07) | Codec.ZSTD.value
    return [replace(wrapper, message=replace(wrapper.message, attributes=attributes))]


def _h4_idempotent(now: int, *deltas: int) -> list[object]:
    batch = build_v2(_specs(*(now + d for d in deltas)))
    return [replace(batch, producer_id=1 << 30, producer_epoch=0, base_sequence=0, crc=None)]


def _h4_duplicate(i: Implementation) -> int:
    now = _setup(i)
    i.produce(T, 0, _h4_idempotent(now, -10), produce_version=9)  # type: ignore[arg-type]
    return i.produce(T, 0, _h4_idempotent(now, -10), produce_version=9).log_append_time  # type: ignore[arg-type]


def _h4_retry_late(i: Implementation) -> str:
    now = _setup(i, before_max_ms=HOUR)
    i.produce(T, 0, _h4_idempotent(now, -HOUR + 1000), produce_version=9)  # type: ignore[arg-type]
    i.set_clock(i.leader(T, 0), now + 5000)
    return i.produce(T, 0, _h4_idempotent(now, -HOUR + 1000), produce_version=9).error.name  # type: ignore[arg-type]


def _h4_wrapper(i: Implementation) -> int:
    now = _setup(i, message_format_magic=1, compression_type="gzip")
    i.produce(T, 0, build_legacy(_specs(now - 50, now - 10), magic=1), produce_version=2)
    return i.fetch(T, 0, 0, fetch_version=4).batches[0].max_timestamp


def _h4_rebuilt_base(i: Implementation) -> int:
    now = _setup(i, compression_type="gzip")
    _produce_v2(i, now - 10, now - 50)
    return i.fetch(T, 0, 0, fetch_version=12).batches[0].base_timestamp  # type: ignore[union-attr]


_ROLLS = ((None, -10_000), (None, -5000), (None, -1000))

WITNESSES.update({
    "read-committed-no-stable-offset": _h4("LO.read-committed-lso", Obs.LIST_OFFSETS_OFFSET, _h4_read_committed),
    "max-timestamp-empty-answers-log-end": _h4_lookup("LO.max-timestamp-capped", lambda i, now: None, lambda now: -3),
    "lookup-searches-every-segment": _h4_lookup("LO.first-qualifying-segment", _h4_untimed_then_timed,
                                                lambda now: now - 100, **_SMALL_SEGMENTS),
    "untimed-segment-dated-now": _h4_lookup("IDX.largest-timestamp-mtime", _h4_untimed_then_future,
                                            lambda now: now + 500, **_SMALL_SEGMENTS),
    "lookup-searches-deleted-segments": _h4_lookup("LO.search-from-log-start", _h4_deleted, lambda now: now - 2 * DAY,
                                                   retention_ms=DAY, **_SMALL_SEGMENTS),
    "old-format-searched": _h4_lookup("LO.unsupported-for-message-format", lambda i, now: None, lambda now: 0,
                                      version=1, message_format_magic=0),
    "list-offsets-v0-searches-timestamps": _h4_lookup("LO.v0-segment-offsets", _h4_v0, lambda now: now + 500,
                                                      version=0),
    "earliest-capped-at-high-watermark": _h4_lookup("LO.cap-exempts-earliest", lambda i, now: None, lambda now: -2),
    "max-timestamp-latest-tie": _h4_lookup("LO.max-timestamp-earliest-on-ties", _h4_ties, lambda now: -3),
    "time-index-lookup-rounds-up": _h4_lookup("IDX.lookup-largest-le-target", _h4_sparse_index, lambda now: now - 250,
                                              index_interval_bytes=1),
    "first-record-error-decides": _h4_error("VAL.timestamp-error-wins",
                                            lambda now: _h4_keyed(now, (None, 0), (b"k", -5000)),
                                            compacted=True, before_max_ms=1000),
    "every-failure-per-record": _h4_error("VAL.first-failure-per-record", lambda now: _h4_keyed(now, (None, -5000)),
                                          compacted=True, before_max_ms=1000),
    "invalid-record-summary-plain": _h4("VAL.invalid-record-summary-text", Obs.PRODUCE_ERROR_MESSAGE, _h4_summary),
    "error-text-log-offset": _h4("VAL.error-offset-from-request", Obs.PRODUCE_RECORD_ERROR_MESSAGES, _h4_messages),
    "error-bounds-saturated": _h4("VAL.error-bounds-wraparound", Obs.PRODUCE_RECORD_ERROR_MESSAGES, _h4_messages),
    "negative-timestamps-exempt": _h4_error("VAL.range-long-min-is-future",
                                            lambda now: [build_v2(_specs(LONG_MIN))]),
    "symmetric-distance-exact": _h4_error("VAL.symmetric-long-min-accepted",
                                          lambda now: [build_v2(_specs(now + LONG_MIN))], difference_max_ms=HOUR),
    "negative-timestamps-rejected": _h4_error("VAL.below-minus-one-range-checked", lambda now: [build_v2(_specs(-2))]),
    "rebuild-clamps-negative-timestamps": _h4_error("VAL.below-minus-one-rebuild-fails",
                                                    lambda now: [build_v2(_specs(-2))], compression_type="gzip"),
    "crc-not-verified": _h4_error("FMT.v2-crc-coverage", _h4_corrupt_v2),
    "zstd-accepted-below-v2": _h4_error("FMT.zstd-requires-v2", _h4_zstd_v1, version=2),
    "records-count-unchecked": _h4_error("VAL.records-count-matches", _h4_count_lie),
    "rejection-keeps-log-start": _h4("VAL.rejection-response-fields", Obs.PRODUCE_REJECTION_FIELDS, _h4_refused),
    "duplicate-answered-as-new": _h4("VAL.duplicate-returns-cached-max", Obs.PRODUCE_LOG_APPEND_TIME, _h4_duplicate),
    "dedup-before-validation": _h4("VAL.validation-before-dedup", Obs.PRODUCE_ERROR, _h4_retry_late),
    "idempotence-dropped-on-old-format": _h4_error("VAL.idempotent-needs-v2", lambda now: _h4_idempotent(now, -10),
                                                   message_format_magic=1),
    "v1-wrapper-first-timestamp": _h4("FMT.v1-wrapper-timestamp-is-max", Obs.BATCH_MAX_TIMESTAMP, _h4_wrapper),
    "rebuilt-base-is-min": _h4("FMT.v2-base-is-first-record", Obs.BATCH_BASE_TIMESTAMP, _h4_rebuilt_base),
    "roll-by-wall-clock": _h4_log_start("IDX.roll-by-first-batch", _ROLLS, DAY - 7000, segment_ms=1000),
    "roll-age-absolute": _h4_log_start("IDX.future-first-timestamp-blocks-roll",
                                       ((None, 0), (5000, None), (10_000, None)), DAY + 1, segment_ms=1000),
    "untimed-segment-never-ages": _h4_log_start("IDX.roll-by-age-without-timestamps",
                                                ((None, None), (5000, None), (10_000, None)), DAY + 7000,
                                                segment_ms=1000),
    "time-index-full-one-late": _h4_log_start("IDX.full-index-forces-roll",
                                              ((None, -5000), (None, -4000), (None, -3000), (None, -2000)),
                                              DAY - 3500, segment_index_bytes=24, index_interval_bytes=1),
    "compaction-lag-ignored-for-roll": _h4_log_start("IDX.compacted-roll-max-lag", _ROLLS, DAY - 7000,
                                                     compacted=True, retention_deletes=True,
                                                     max_compaction_lag_ms=1000),
})
WITNESS_PROFILES.update({
    "old-format-searched": "kafka-2.8",
    "list-offsets-v0-searches-timestamps": "kafka-2.8",
    "symmetric-distance-exact": "kafka-2.8",
    "zstd-accepted-below-v2": "kafka-3.9",
    "idempotence-dropped-on-old-format": "kafka-2.8",
    "v1-wrapper-first-timestamp": "kafka-2.8",
})


def _h4_zstd_fetch(i: Implementation) -> str:
    now = _setup(i)
    _produce_v2(i, now - 10, codec=Codec.ZSTD)
    return i.fetch(T, 0, 0, fetch_version=3).error.name


# Without tiered storage -6 answers -1/-1 at v11 (kafka-4.2), where the fault answers the log start offset.
WITNESSES["tiered-targets-as-earliest"] = _lookup_witness("LO.earliest-pending-upload-none", (0,), -6, version=11)
WITNESS_PROFILES["tiered-targets-as-earliest"] = "kafka-4.2"
WITNESSES["zstd-down-converted"] = _h4("CNV.down-convert-zstd-unsupported", Obs.FETCH_ERROR, _h4_zstd_fetch)
WITNESS_PROFILES["zstd-down-converted"] = "kafka-3.9"
