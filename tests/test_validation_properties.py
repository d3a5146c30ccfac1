"""Properties of the leader's validator (VAL-3..5, VAL-9, VAL-13, CMP-3/4, FMT-7, FMT-12).

Each property compares the model with an oracle written here from the spec's sentence, not with the
model's own helpers: plain Python integers with values far from 64-bit overflow.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from models.config import TopicConfig
from models.constants import LONG_MAX, Codec, ErrorCode, TimestampType
from models.profiles import PROFILES, Profile
from models.records import AnyBatch, RecordSpec, all_records, build_batches
from models.validator import AppendRejected, ValidatedAppend, validate_and_assign

NOW = 1_700_000_000_000
K0_10 = PROFILES["kafka-0.10"]
K2_8 = PROFILES["kafka-2.8"]
K3_9 = PROFILES["kafka-3.9"]
K4_0 = PROFILES["kafka-4.0"]
LEGACY_CODECS = [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4]


def profile_for(magic: int) -> Profile:
    # CNV-3: only a profile that honours message.format.version stores v0/v1.
    return K2_8 if magic < 2 else K4_0


def codecs_for(magic: int) -> st.SearchStrategy[Codec]:
    return st.sampled_from(LEGACY_CODECS + ([Codec.ZSTD] if magic == 2 else []))


def specs(timestamps: list[int]) -> list[RecordSpec]:
    return [RecordSpec(ts, key=b"k%d" % i, value=b"v") for i, ts in enumerate(timestamps)]


def run(
    batches: tuple[AnyBatch, ...], config: TopicConfig, profile: Profile, next_offset: int = 0
) -> ValidatedAppend | AppendRejected:
    return validate_and_assign(batches, config=config, profile=profile, now=NOW, next_offset=next_offset)


@st.composite
def appends(draw: st.DrawFn, timestamps: st.SearchStrategy[int]) -> tuple[int, Codec, int, Codec, list[int]]:
    """(source magic, source codec, target magic, topic codec, record timestamps)."""
    target = draw(st.sampled_from([0, 1, 2]))
    source = draw(st.sampled_from([0, 1, 2]))
    source_codec = draw(codecs_for(source))
    topic_codec = draw(st.sampled_from([Codec.NONE, *LEGACY_CODECS] + ([Codec.ZSTD] if target == 2 else [])))
    ts = draw(st.lists(timestamps, min_size=1, max_size=6))
    return source, source_codec, target, topic_codec, ts


def topic_for(target: int, topic_codec: Codec | None, **kwargs: object) -> TopicConfig:
    compression = "producer" if topic_codec is None else topic_codec.name.lower()
    return TopicConfig(message_format_magic=target, compression_type=compression, **kwargs)  # type: ignore[arg-type]


@given(appends(st.integers(min_value=-1, max_value=NOW * 2)), st.integers(0, 10**6))
def test_log_append_time_records_read_now(
    case: tuple[int, Codec, int, Codec, list[int]], next_offset: int
) -> None:
    """LogAppendTime topics (CMP-3, CMP-4, FMT-7, FMT-12): whatever the producer wrote, for every
    source/target magic and codec, every accepted record reads as its batch's max, which is now
    (v0 stores no timestamp: -1), and offsets run from next_offset without gaps."""
    source, source_codec, target, topic_codec, ts = case
    batches = build_batches(specs(ts), magic=source, codec=source_codec)
    out = run(
        batches,
        topic_for(target, topic_codec, timestamp_type=TimestampType.LOG_APPEND_TIME),
        profile_for(target),
        next_offset,
    )
    assert isinstance(out, ValidatedAppend), out
    records = all_records(out.batches)
    assert [r.offset for r in records] == list(range(next_offset, next_offset + len(ts)))
    expected = -1 if target == 0 else NOW
    assert [r.timestamp for r in records] == [expected] * len(ts)
    for batch in out.batches:
        assert batch.magic == target
        if target > 0:
            assert batch.max_timestamp == NOW
            assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert out.log_append_time == NOW


@given(appends(st.integers(min_value=-1, max_value=NOW + 3_600_000)))  # 4.0 default after = 1 h
def test_create_time_keeps_timestamps_and_header_max_is_the_record_max(
    case: tuple[int, Codec, int, Codec, list[int]],
) -> None:
    """CreateTime (VAL-13, CMP-2, CMP-5, CNV-4): accepted records keep their timestamps (v0 on either
    side: -1) and every batch header max is the max of its records' timestamps (-1 if none)."""
    source, source_codec, target, topic_codec, ts = case
    batches = build_batches(specs(ts), magic=source, codec=source_codec)
    out = run(batches, topic_for(target, topic_codec), profile_for(target))
    assert isinstance(out, ValidatedAppend), out
    expected = [-1 if (source == 0 or target == 0) else t for t in ts]
    assert [r.timestamp for r in all_records(out.batches)] == expected
    for batch in out.batches:
        if target > 0:
            assert batch.timestamp_type is TimestampType.CREATE_TIME
            assert batch.max_timestamp == max([-1] + [r.timestamp for r in batch.records()])
    assert out.max_timestamp == max(expected) if target > 0 else out.max_timestamp == -1


def expected_rejections(profile: Profile, ts: list[int], before: int, after: int) -> list[int]:
    """VAL-3..5 as sentences: CreateTime; -1 exempt from 0.11; 3.6+ rejects iff now - ts > before or
    ts - now > after; before, iff |ts - now| > difference."""
    failing = []
    for i, t in enumerate(ts):
        if t == -1 and profile.exempt_no_timestamp:
            continue
        if profile.has_before_after_configs:
            bad = NOW - t > before or t - NOW > after
        else:
            bad = abs(t - NOW) > before
        if bad:
            failing.append(i)
    return failing


bounds = st.integers(min_value=0, max_value=10**7)
near_now = st.one_of(st.just(-1), st.integers(min_value=NOW - 2 * 10**7, max_value=NOW + 2 * 10**7))


@given(
    st.sampled_from([K0_10, K2_8, K3_9, K4_0]),
    st.sampled_from([1, 2]),
    st.sampled_from([Codec.NONE, Codec.GZIP]),
    bounds,
    bounds,
    st.lists(near_now, min_size=1, max_size=6),
)
def test_acceptance_is_the_range_predicate(
    profile: Profile, magic: int, codec: Codec, before: int, after: int, ts: list[int]
) -> None:
    """VAL-3..5, VAL-9: an append is accepted iff no record fails the profile's range predicate; a
    rejection writes nothing and (2.5+) lists exactly the failing records' indexes in the batch."""
    magic = min(magic, profile.max_magic)
    if profile.has_before_after_configs:
        config = TopicConfig(before_max_ms=before, after_max_ms=after)
    else:
        after = before
        config = TopicConfig(difference_max_ms=before, message_format_magic=magic)
    source_codec = codec
    if magic < 2 and codec is Codec.NONE:
        ts = ts[:1]  # one message: a legacy uncompressed set reports one batch at a time (VAL-10)
    batches = build_batches(specs(ts), magic=magic, codec=source_codec)
    out = run(batches, config, profile)
    failing = expected_rejections(profile, ts, before, after)
    if not failing:
        assert isinstance(out, ValidatedAppend), out
        return
    assert isinstance(out, AppendRejected), out
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    if profile.record_errors.value == "all":
        assert [e.batch_index for e in out.record_errors] == failing
    else:
        assert out.record_errors == ()


@given(
    st.sampled_from([K3_9, K4_0]),
    st.integers(min_value=0, max_value=10**9),
    st.integers(min_value=0, max_value=10**9),
    st.sampled_from([Codec.NONE, Codec.LZ4]),
)
def test_bounds_are_inclusive(profile: Profile, before: int, after: int, codec: Codec) -> None:
    """VAL-4: ts = now - before and ts = now + after are accepted; one millisecond beyond is not."""
    config = TopicConfig(before_max_ms=before, after_max_ms=after)

    def verdict(t: int) -> bool:
        return isinstance(
            run(build_batches(specs([t]), magic=2, codec=codec), config, profile), ValidatedAppend
        )

    assert verdict(NOW - before) and verdict(NOW + after)
    assert not verdict(NOW - before - 1)
    assert not verdict(NOW + after + 1)


@given(st.integers(min_value=0, max_value=10**9))
def test_symmetric_bound_is_inclusive_and_3_9_falls_back_to_it(difference: int) -> None:
    """VAL-5 / VAL-6: |ts - now| = difference is accepted, one more is not; in 3.6-3.9 before/after
    left at Long.MAX_VALUE fall back to the difference config (per side)."""
    for profile, config in (
        (K2_8, TopicConfig(difference_max_ms=difference)),
        (K3_9, TopicConfig(difference_max_ms=difference, before_max_ms=LONG_MAX)),
    ):
        for t, ok in (
            (NOW - difference, True),
            (NOW + difference, True),
            (NOW - difference - 1, False),
            (NOW + difference + 1, False),
        ):
            out = run(build_batches(specs([t]), magic=2), config, profile)
            assert isinstance(out, ValidatedAppend) is ok, (profile.name, t, out)


def test_a_v0_message_converted_by_0_10_is_range_checked_as_minus_one() -> None:
    """VAL-3 on 0.10 (-1 not exempt): Kafka 0.10.2.2's LogValidator.convertAndAssignOffsetsNonCompressed checks
    every message's timestamp, a v0 message's reading -1, while the in-place and compressed paths check only
    messages above v0; from 0.11 -1 is exempt. Observed on 0.10.2.2 and 0.10.1.1: uncompressed v0 messages to a
    v1 CreateTime topic with message.timestamp.difference.max.ms=1000 answer INVALID_TIMESTAMP."""
    v0 = build_batches(specs([-1, -1]), magic=0, codec=Codec.NONE)
    narrow = topic_for(1, Codec.NONE, difference_max_ms=1000)
    refused = run(v0, narrow, K0_10)
    assert isinstance(refused, AppendRejected) and refused.error is ErrorCode.INVALID_TIMESTAMP
    # The same messages where -1 is exempt (0.11 on), or within a wide bound, or stored as v0 (in place) pass.
    assert isinstance(run(v0, narrow, PROFILES["kafka-0.11"]), ValidatedAppend)
    assert isinstance(run(v0, topic_for(1, Codec.NONE), K0_10), ValidatedAppend)
    assert isinstance(run(v0, topic_for(0, Codec.NONE, difference_max_ms=1000), K0_10), ValidatedAppend)


def test_0_10_stores_an_in_place_v1_timestamp_below_minus_one_as_sent() -> None:
    """VAL-13: from 0.11 the in-place path rewrites an uncompressed v1 CreateTime message's timestamp to the batch
    max, -1 for one below -1; 0.10's assignOffsetsNonCompressed only set the offset (0.10.2.2 and 0.10.1.1 served
    back a v1 message stamped now + Long.MIN_VALUE as sent)."""
    low = NOW + -(2**63)
    v1 = build_batches(specs([low]), magic=1, codec=Codec.NONE)
    kept = run(v1, topic_for(1, Codec.NONE), K0_10)
    rewritten = run(v1, topic_for(1, Codec.NONE), PROFILES["kafka-0.11"])
    assert isinstance(kept, ValidatedAppend) and isinstance(rewritten, ValidatedAppend)
    assert [r.timestamp for r in all_records(kept.batches)] == [low]
    assert [r.timestamp for r in all_records(rewritten.batches)] == [-1]


def test_a_log_append_time_rebuild_stamps_the_inner_messages_from_0_11_only() -> None:
    """CMP-4: an uncompressed v1 set rebuilt gzip on a LogAppendTime topic. 0.11's MemoryRecordsBuilder stamps now
    in every inner message and the wrapper; 0.10's stamped the wrapper and copied each message as written (0.10.2.2
    LogValidator -> MemoryRecords.builderWithEntries -> appendWithOffset(offset, record), the bytes as sent; 0.10.2.2
    and 0.10.1.1 serve the producer's inner timestamps back)."""
    sent = build_batches(specs([NOW - 5, NOW - 3]), magic=1, codec=Codec.NONE)
    topic = topic_for(1, Codec.GZIP, timestamp_type=TimestampType.LOG_APPEND_TIME)
    for profile, inner in ((K0_10, [NOW - 5, NOW - 3]), (PROFILES["kafka-0.11"], [NOW, NOW])):
        stored = run(sent, topic, profile)
        assert isinstance(stored, ValidatedAppend), profile.name
        (wrapper,) = stored.batches
        assert (wrapper.timestamp_type, wrapper.max_timestamp) == (TimestampType.LOG_APPEND_TIME, NOW)
        assert [e.message.stored_timestamp for e in wrapper.message.inner] == inner, profile.name  # type: ignore[union-attr]
        # A consumer reads the wrapper's now either way (FMT-7).
        assert [r.timestamp for r in all_records(stored.batches)] == [NOW, NOW], profile.name


def test_0_10_merges_a_down_converted_fetch_into_one_message_set() -> None:
    """CNV-5: a Fetch v0 of a v1 topic holding a gzip wrapper at offset 5 and uncompressed messages 6 to 8. 0.10's
    toMessageFormat converts every fetched message to v0 and writes one set in the first batch's codec: one gzip
    wrapper 5 to 8 (seen on 0.10.2.2 and 0.10.1.1); from 0.11 each batch is converted on its own."""
    from models.conversion import fetch_view
    from models.records import build_legacy

    wrapper = build_legacy(specs([NOW]), magic=1, base_offset=5, codec=Codec.GZIP)
    singles = build_legacy(specs([NOW, NOW, NOW]), magic=1, base_offset=6)
    singles = tuple(b.__class__(offset=6 + i, message=b.message) for i, b in enumerate(singles))
    stored = (*wrapper, *singles)
    topic = topic_for(1, None)

    def served(profile: Profile) -> list[tuple[int, int, int]]:
        error, view = fetch_view(stored, fetch_version=0, profile=profile, config=topic, fetch_offset=5)
        assert error is ErrorCode.NONE
        return [(b.base_offset, b.last_offset, b.magic) for b in view]

    assert served(K0_10) == [(5, 8, 0)]
    assert served(PROFILES["kafka-0.11"]) == [(5, 5, 0), (6, 6, 0), (7, 7, 0), (8, 8, 0)]
