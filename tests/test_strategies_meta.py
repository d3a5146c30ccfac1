"""Meta-tests of strategies/: each strategy generates what it claims (issue 3, "a meta-test for each
strategy"). `find` shows a value is reachable; `@given` shows a property of every value drawn."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TypeVar

import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

from models.cluster import Cluster
from models.codec import decode_batches, encode_batches
from models.config import TopicConfig, check_config, effective_bounds
from models.constants import (
    LONG_MAX,
    LONG_MIN,
    MAGIC_V0,
    MAGIC_V1,
    MAGIC_V2,
    TIMESTAMP_TYPE_MASK,
    Codec,
    ErrorCode,
    TimestampType,
)
from models.profiles import PROFILES, Profile
from models.records import AnyBatch, DefaultBatch, LegacyBatch, RecordSpec, build_v2
from strategies.clocks import (
    ClockMove,
    ClockMoveKind,
    ProducerClock,
    broker_clock_offsets,
    clock_moves,
    producer_clocks,
)
from strategies.configs import MAX_BOUND_MS, MIN_BOUND_MS, compression_types, topic_configs
from strategies.failover import failover_sequences
from strategies.records import (
    Invalidity,
    batches,
    combinations,
    invalid_batches,
    labelled_invalid_batches,
    record_specs,
)
from strategies.timestamps import (
    bound_probe_values,
    bound_probes,
    nanoseconds_mistake,
    seconds_mistake,
    timestamps,
    unit_mistakes,
    window,
)

T = TypeVar("T")

NOW = 1_700_000_000_000
BEFORE = 3_600_000
AFTER = 60_000
FAST = settings(max_examples=50, deadline=None)
ALL_MAGICS = (MAGIC_V0, MAGIC_V1, MAGIC_V2)
PROFILE_NAMES = sorted(PROFILES)


def reachable(strategy: st.SearchStrategy[T], condition: Callable[[T], bool]) -> T:
    """`find` with a fixed budget: the value exists among what the strategy generates. Generation only
    (no shrinking): the claim is reachability, and shrinking nested batches would cost seconds."""
    budget = settings(max_examples=2_000, database=None, deadline=None, phases=(Phase.generate,))
    return find(strategy, condition, settings=budget)


def in_int64(value: int) -> bool:
    return LONG_MIN <= value <= LONG_MAX


def ts() -> st.SearchStrategy[int]:
    return timestamps(NOW, before=BEFORE, after=AFTER)


# -------------------------------------------------------------------------------- timestamps


@pytest.mark.parametrize(
    "probe",
    [NOW - BEFORE, NOW - BEFORE - 1, NOW + AFTER, NOW + AFTER + 1],
    ids=["at-before", "past-before", "at-after", "past-after"],
)
def test_boundary_timestamps_hit_each_bound_and_one_past_it(probe: int) -> None:
    """VAL-4: boundary=True reaches exactly now-before, now-before-1, now+after, now+after+1."""
    assert reachable(timestamps(NOW, before=BEFORE, after=AFTER, boundary=True), lambda t: t == probe) == probe


def test_bound_probes_are_the_last_accepted_and_first_rejected_values_of_the_model() -> None:
    """VAL-4 against the reference model: of the four probes the two at the bounds are accepted, the two
    one past them rejected with INVALID_TIMESTAMP (the probes sit where the rule flips)."""
    profile = PROFILES["kafka-4.0"]
    config = TopicConfig(before_max_ms=BEFORE, after_max_ms=AFTER)
    verdicts = {}
    for probe in bound_probe_values(NOW, BEFORE, AFTER):
        cluster = Cluster(profile=profile, broker_ids=(0,), start_time=NOW)
        cluster.create_topic("t", config)
        response = cluster.produce("t", 0, [build_v2([RecordSpec(timestamp=probe)])])
        verdicts[probe] = response.error
    assert verdicts == {
        NOW - BEFORE: ErrorCode.NONE,
        NOW - BEFORE - 1: ErrorCode.INVALID_TIMESTAMP,
        NOW + AFTER: ErrorCode.NONE,
        NOW + AFTER + 1: ErrorCode.INVALID_TIMESTAMP,
    }


def test_bound_probes_clamp_to_int64_with_unbounded_sides() -> None:
    """An unbounded side (Long.MAX_VALUE, VAL-6 default) clamps to int64 instead of overflowing."""
    values = bound_probe_values(NOW, LONG_MAX, LONG_MAX)
    assert all(in_int64(v) for v in values)
    assert LONG_MAX in values and NOW - LONG_MAX in values
    assert reachable(bound_probes(NOW, LONG_MAX, LONG_MAX), lambda t: t == LONG_MAX) == LONG_MAX


@FAST
@given(timestamps(NOW, before=BEFORE, after=AFTER, specials=False, mistakes=False))
def test_ordinary_timestamps_stay_inside_the_window_with_a_margin(t: int) -> None:
    lo, hi = window(NOW, BEFORE, AFTER, margin=1_000)
    assert lo <= t <= hi


@FAST
@given(timestamps(NOW, before=LONG_MAX, after=LONG_MAX, boundary=True, negative=True))
def test_timestamps_are_always_int64(t: int) -> None:
    assert in_int64(t)


@FAST
@given(timestamps(NOW, before=BEFORE, after=AFTER, boundary=True))
def test_timestamps_without_negative_never_go_below_minus_one(t: int) -> None:
    """FMT-8: a Java producer cannot send ts < -1, so the default strategy does not either."""
    assert t >= -1


@pytest.mark.parametrize(
    ("name", "condition"),
    [
        ("no-timestamp", lambda t: t == -1),
        ("zero", lambda t: t == 0),
        ("near-long-max", lambda t: t >= LONG_MAX - 1_000),
        ("long-max", lambda t: t == LONG_MAX),
        ("seconds", lambda t: t == NOW // 1_000),
        ("nanoseconds", lambda t: t == NOW * 1_000_000),
        ("ordinary", lambda t: NOW - BEFORE + 1_000 <= t <= NOW + AFTER - 1_000),
    ],
)
def test_timestamps_reach_every_special_kind(name: str, condition: Callable[[int], bool]) -> None:
    reachable(ts(), condition)


def test_negative_timestamps_reach_below_minus_one_and_long_min() -> None:
    strategy = timestamps(NOW, before=BEFORE, after=AFTER, negative=True)
    assert reachable(strategy, lambda t: t < -1) < -1
    assert reachable(strategy, lambda t: t == LONG_MIN) == LONG_MIN


@pytest.mark.parametrize(
    "condition",
    [
        lambda t: t == seconds_mistake(NOW),
        lambda t: t == nanoseconds_mistake(NOW),
        lambda t: t == NOW * 1_000,
        lambda t: seconds_mistake(NOW) < t < seconds_mistake(NOW) + 61,
        lambda t: nanoseconds_mistake(NOW) < t,
    ],
    ids=["seconds", "nanoseconds", "microseconds", "seconds-jittered", "nanoseconds-jittered"],
)
def test_unit_mistakes_produce_each_wrong_unit(condition: Callable[[int], bool]) -> None:
    reachable(unit_mistakes(NOW), condition)


@FAST
@given(unit_mistakes(NOW))
def test_unit_mistakes_are_far_outside_a_two_day_window(t: int) -> None:
    """A unit mistake is never a plausible millisecond value: it lies beyond any bounded window."""
    assert abs(t - NOW) > MAX_BOUND_MS


# -------------------------------------------------------------------------------- records, batches


@FAST
@given(record_specs(ts(), min_size=2, max_size=5))
def test_record_specs_respect_sizes_and_stay_small(specs: list[RecordSpec]) -> None:
    assert 2 <= len(specs) <= 5
    for s in specs:
        assert s.key is None or len(s.key) <= 32
        assert s.value is None or len(s.value) <= 32


def test_record_specs_produce_headers_and_null_keys() -> None:
    reachable(record_specs(ts()), lambda specs: any(s.headers for s in specs))
    reachable(record_specs(ts()), lambda specs: any(s.key is None for s in specs))


@pytest.mark.parametrize(
    ("magic", "codec"), combinations(ALL_MAGICS, tuple(Codec)), ids=lambda v: getattr(v, "name", str(v))
)
def test_batches_produce_every_magic_codec_combination(magic: int, codec: Codec) -> None:
    strategy = batches(ts(), magics=ALL_MAGICS, codecs=tuple(Codec), max_records=2)
    found = reachable(strategy, lambda bs: bs[0].magic == magic and bs[0].codec is codec)
    assert found[0].magic == magic


def test_combinations_never_pair_zstd_with_legacy_magic() -> None:
    """FMT-4: zstd needs magic 2."""
    pairs = combinations(ALL_MAGICS, tuple(Codec))
    assert (MAGIC_V2, Codec.ZSTD) in pairs
    assert (MAGIC_V0, Codec.ZSTD) not in pairs and (MAGIC_V1, Codec.ZSTD) not in pairs
    with pytest.raises(ValueError, match="no producible"):
        combinations((MAGIC_V1,), (Codec.ZSTD,))


def _shape_ok(bs: tuple[AnyBatch, ...]) -> bool:
    first = bs[0]
    if isinstance(first, DefaultBatch):
        return len(bs) == 1 and first.max_timestamp == max(r.timestamp for r in first.records())
    assert all(isinstance(b, LegacyBatch) for b in bs)
    if first.codec is Codec.NONE:
        return all(b.record_count == 1 for b in bs)
    return len(bs) == 1 and first.record_count >= 1


@FAST
@given(batches(ts(), magics=ALL_MAGICS, codecs=tuple(Codec), max_records=4))
def test_batches_have_the_producer_shape_and_survive_the_codec(bs: tuple[AnyBatch, ...]) -> None:
    """v2: one batch with MaxTimestamp = max (FMT-11); legacy uncompressed: one entry per record;
    compressed: one wrapper (FMT-7). The bytes decode back to the same consumer view (CON-1)."""
    assert _shape_ok(bs)
    if bs[0].magic != MAGIC_V0:
        assert bs[0].codec is not Codec.ZSTD or bs[0].magic == MAGIC_V2
    decoded = decode_batches(encode_batches(bs))
    assert [r for b in decoded for r in b.records()] == [r for b in bs for r in b.records()]


def test_batches_produce_requested_timestamp_types_and_producer_fields() -> None:
    both = (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME)
    strategy = batches(ts(), magics=(MAGIC_V1, MAGIC_V2), timestamp_types=both, max_records=2)
    reachable(strategy, lambda bs: bs[0].timestamp_type is TimestampType.LOG_APPEND_TIME and bs[0].magic == 1)
    reachable(strategy, lambda bs: bs[0].timestamp_type is TimestampType.LOG_APPEND_TIME and bs[0].magic == 2)
    reachable(strategy, lambda bs: isinstance(bs[0], DefaultBatch) and bs[0].producer_id >= 0)
    reachable(strategy, lambda bs: isinstance(bs[0], DefaultBatch) and bs[0].producer_id == -1)


# -------------------------------------------------------------------------------- invalid batches


def _read_timestamps(b: AnyBatch) -> list[int]:
    if isinstance(b, DefaultBatch):
        return [b.base_timestamp + r.timestamp_delta for r in b.records_]
    if b.message.inner:
        return [e.message.stored_timestamp for e in b.message.inner]
    return [b.message.stored_timestamp]


def has_defect(kind: Invalidity, bs: tuple[AnyBatch, ...]) -> bool:
    """The defect restated from the rules, independently of how the strategy crafts it."""
    first = bs[0]
    if kind is Invalidity.PRODUCER_LOG_APPEND_TIME:  # VAL-8
        return first.magic >= 1 and all(
            (b.attributes if isinstance(b, DefaultBatch) else b.message.attributes) & TIMESTAMP_TYPE_MASK for b in bs
        )
    if kind is Invalidity.WRAPPER_NOT_MAX:  # FMT-7
        return (
            isinstance(first, LegacyBatch)
            and first.magic == 1
            and first.codec is not Codec.NONE
            and first.max_timestamp != max(_read_timestamps(first))
        )
    if kind is Invalidity.TIMESTAMP_BELOW_MINUS_ONE:  # FMT-8, VAL-15
        return first.magic >= 1 and any(t < -1 for b in bs for t in _read_timestamps(b))
    assert isinstance(first, DefaultBatch)
    deltas = [r.timestamp_delta for r in first.records_]
    if kind is Invalidity.HEADER_MAX_NOT_MAX:  # VAL-13
        return first.max_timestamp != max(_read_timestamps(first))
    if kind is Invalidity.HUGE_DELTA:  # FMT-11
        return any(abs(d) >= 1 << 40 for d in deltas) and all(in_int64(t) for t in _read_timestamps(first))
    return any(d < 0 for d in deltas)  # NEGATIVE_DELTA, FMT-11


@pytest.mark.parametrize("kind", list(Invalidity), ids=str)
def test_invalid_batches_produce_each_kind(kind: Invalidity) -> None:
    found_kind, bs = reachable(labelled_invalid_batches(ts()), lambda labelled: labelled[0] is kind)
    assert has_defect(found_kind, bs)


@FAST
@given(labelled_invalid_batches(ts(), magics=ALL_MAGICS, max_records=4))
def test_invalid_batches_carry_the_defect_they_are_labelled_with(
    labelled: tuple[Invalidity, tuple[AnyBatch, ...]],
) -> None:
    kind, bs = labelled
    assert has_defect(kind, bs), kind
    # Crafted, but still encodable: the suite must be able to send it (ARCHITECTURE: "craft any batch").
    assert len(encode_batches(bs)) > 0


def test_invalid_batches_respect_the_kinds_and_magics_asked() -> None:
    with pytest.raises(ValueError, match="no invalidity"):
        reachable(invalid_batches(ts(), magics=(MAGIC_V2,), kinds=(Invalidity.WRAPPER_NOT_MAX,)), lambda _: True)
    bs = reachable(invalid_batches(ts(), magics=(MAGIC_V1,), kinds=(Invalidity.WRAPPER_NOT_MAX,)), lambda _: True)
    assert has_defect(Invalidity.WRAPPER_NOT_MAX, bs)


# -------------------------------------------------------------------------------- topic configs


@st.composite
def profile_and_config(draw: st.DrawFn, bounded: bool) -> tuple[Profile, TopicConfig]:
    profile = PROFILES[draw(st.sampled_from(PROFILE_NAMES))]
    return profile, draw(topic_configs(profile, bounded=bounded))


@FAST
@given(profile_and_config(bounded=True))
def test_topic_configs_are_valid_and_bounded_for_every_profile(pc: tuple[Profile, TopicConfig]) -> None:
    """VAL-6: only configs the profile has; bounded = finite effective bounds (1 s .. 2 days)."""
    profile, config = pc
    check_config(config, profile)
    if not profile.has_difference_config:
        assert config.difference_max_ms is None
    if not profile.has_before_after_configs:
        assert config.before_max_ms is None and config.after_max_ms is None
    before, after = effective_bounds(config, profile)
    assert MIN_BOUND_MS <= before <= MAX_BOUND_MS and MIN_BOUND_MS <= after <= MAX_BOUND_MS
    assert config.compression_type in compression_types(profile)
    assert config.retention_ms == -1 or config.retention_ms >= 7 * 24 * 3_600_000


@FAST
@given(profile_and_config(bounded=False))
def test_unbounded_topic_configs_are_valid_for_every_profile(pc: tuple[Profile, TopicConfig]) -> None:
    check_config(pc[1], pc[0])


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_topic_configs_reach_the_profile_specific_settings(name: str) -> None:
    profile = PROFILES[name]
    strategy = topic_configs(profile, bounded=False)
    reachable(strategy, lambda c: c.timestamp_type is TimestampType.LOG_APPEND_TIME)
    reachable(strategy, lambda c: c.segment_bytes <= 1_024 and c.index_interval_bytes <= 64)
    reachable(strategy, lambda c: LONG_MAX in effective_bounds(c, profile))  # unbounded is reachable
    if profile.has_difference_config:
        reachable(strategy, lambda c: c.difference_max_ms is not None)
    if profile.has_before_after_configs:
        reachable(strategy, lambda c: c.before_max_ms is not None and c.after_max_ms is not None)
    if profile.max_magic == MAGIC_V2:
        reachable(strategy, lambda c: c.compression_type == "zstd")


def test_short_retention_only_when_asked() -> None:
    strategy = topic_configs("kafka-4.0", retention=True)
    reachable(strategy, lambda c: 0 < c.retention_ms <= MAX_BOUND_MS)


# -------------------------------------------------------------------------------- clocks


def test_producer_clocks_step_backwards() -> None:
    clock = reachable(producer_clocks(), lambda c: c.steps_backwards)
    at, ms = clock.backward_steps[0]
    # Same true time, the send at the step reads `ms` earlier than the send before it.
    assert clock.read(NOW, at) <= clock.read(NOW, at - 1) - ms


def test_producer_clocks_drift_and_are_offset() -> None:
    clock = reachable(producer_clocks(), lambda c: c.drift_ppm != 0)
    day = 24 * 3_600_000
    # Drift accumulates with true time: one day at d ppm moves the reading by ~d*0.0864 s.
    gained = clock.read(clock.origin_ms + day, 0) - day - clock.read(clock.origin_ms, 0)
    assert gained == day * clock.drift_ppm // 1_000_000
    reachable(producer_clocks(), lambda c: c.offset_ms > 60_000)
    reachable(producer_clocks(), lambda c: c.offset_ms < -60_000)


def test_an_exact_producer_clock_reads_true_time() -> None:
    assert ProducerClock().read(NOW + 5, 3) == NOW + 5


@pytest.mark.parametrize("kind", list(ClockMoveKind), ids=str)
def test_clock_moves_produce_each_kind_with_its_sign(kind: ClockMoveKind) -> None:
    move = reachable(clock_moves(), lambda m: m.kind is kind)
    assert (move.apply(NOW) < NOW) == (kind is ClockMoveKind.STEP_BACK)


@FAST
@given(clock_moves(), broker_clock_offsets((0, 1, 2)))
def test_clock_moves_go_backwards_only_as_steps(move: ClockMove, offsets: dict[int, int]) -> None:
    assert (move.delta_ms < 0) == (move.kind is ClockMoveKind.STEP_BACK)
    assert set(offsets) == {0, 1, 2}


# -------------------------------------------------------------------------------- failover


@FAST
@given(st.data())
def test_failover_sequences_name_existing_brokers_and_move_at_least_once(data: st.DataObject) -> None:
    brokers = data.draw(st.lists(st.integers(0, 9), min_size=2, max_size=4, unique=True))
    moves = data.draw(failover_sequences(brokers, initial_leader=brokers[0]))
    assert len(moves) >= 1
    assert all(m.broker in brokers for m in moves)
    targets = [brokers[0], *(m.broker for m in moves)]
    assert all(a != b for a, b in itertools.pairwise(targets)), "each move changes the leader"


def test_failover_sequences_are_accepted_by_the_model_cluster() -> None:
    """Every move is a legal election in the reference model (REP-4)."""
    moves = reachable(failover_sequences((0, 1, 2), min_moves=3), lambda ms: len({m.broker for m in ms}) == 3)
    cluster = Cluster(broker_ids=(0, 1, 2), start_time=NOW)
    cluster.create_topic("t", TopicConfig())
    for m in moves:
        cluster.advance_clock(m.broker, m.clock_skew_ms)
        cluster.elect_leader("t", 0, m.broker)
        assert cluster.partition("t", 0).leader == m.broker


def test_failover_sequences_need_two_brokers_to_move() -> None:
    with pytest.raises(ValueError, match="two brokers"):
        reachable(failover_sequences((7,)), lambda _: True)
    reachable(failover_sequences((7,), to_other=False), lambda ms: all(m.broker == 7 for m in ms))
