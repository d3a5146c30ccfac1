"""The seeded faults of conformance.adapters.mutants: registry sanity, and for every mutant a deterministic
witness proving its fault is observable through the Implementation protocol on one of its declared
clauses (and that the same witness passes against the reference model).

A witness drives the implementation under test and a separate reference model with the same operations
and compares what they show with `check_equal` on a declared clause; the expectation never comes from
the implementation's own answers.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable

import pytest

from conformance.adapters.model import ModelFactory
from conformance.adapters.mutants import MUTANTS, Mutant, MutantFactory
from conformance.checks import CheckRecord, ClauseViolation, check_equal, recording
from conformance.implementation import Implementation
from conformance.observables import Obs
from models.clauses import CLAUSES
from models.cluster import ProduceResponse
from models.config import TopicConfig
from models.constants import Codec, TimestampType
from models.errors import ConfigError
from models.records import RecordSpec, build_legacy, build_v2

CLAUSE_IDS = {c.id for c in CLAUSES}
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
    run = _earliest_after_retention((-2 * DAY,), (0,), (-2 * DAY,), (0,), segment_bytes=1)
    _compare("IDX.retention-prefix-rule", "log start after retention", impl, ref, run)


def _w_earliest_zero(impl: Implementation, ref: Implementation) -> None:
    run = _earliest_after_retention((-2 * DAY,), (0,), segment_bytes=1)
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
}

# Where a witness needs another profile than kafka-4.0 (legacy produce, down-conversion, 3.6-3.9 fallback).
WITNESS_PROFILES: dict[str, str] = {
    "no-fallback-to-difference": "kafka-3.9",
    "v1-wrapper-lat-inner-own-timestamp": "kafka-2.8",
    "down-conversion-drops-type": "kafka-3.9",
    "down-conversion-drops-timestamps": "kafka-3.9",
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


@pytest.mark.parametrize("mutant_id", sorted(MUTANTS))
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
    assert set(WITNESSES) == set(MUTANTS)


# ------------------------------------------------------------------------------------ witnesses


@pytest.mark.parametrize("mutant_id", sorted(MUTANTS))
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


@pytest.mark.parametrize("mutant_id", sorted(MUTANTS))
def test_witness_passes_against_the_model(mutant_id: str) -> None:
    profile = _profile_for(mutant_id)
    WITNESSES[mutant_id](ModelFactory(profile=profile).build(), ModelFactory(profile=profile).build())
