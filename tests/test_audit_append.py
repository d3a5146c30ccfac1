"""Adversarial audit of the model's append side, rule by rule (docs/rules.md: FMT-*, VAL-*,
CMP-*, CNV-*, CON-1, vectors TV-17..TV-27).

Each test pins one rule's behaviour in a small deterministic case and names the rule in its
docstring. Where the rules are silent or ambiguous the docstring says which reading was chosen and why.
"""

from __future__ import annotations

import pytest

from models.cluster import Cluster
from models.codec import decode_batch, decode_batches, encode_batch, encode_batches
from models.config import TopicConfig, effective_bounds
from models.constants import LONG_MAX, LONG_MIN, TIMESTAMP_TYPE_MASK, Codec, ErrorCode, TimestampType
from models.conversion import (
    ZSTD_DOWN_CONVERSION_TEXT,
    DownConversionError,
    check_buildable,
    down_convert,
    fetch_view,
)
from models.errors import BuildError
from models.profiles import PROFILES, Profile
from models.records import (
    AnyBatch,
    ConsumerRecord,
    DefaultBatch,
    Header,
    LegacyBatch,
    LegacyMessage,
    Record,
    RecordSpec,
    all_records,
    build_legacy,
    build_v2,
)
from models.validator import (
    TIMESTAMP_REJECTED_TEXT,
    AppendRejected,
    ValidatedAppend,
    ValidationPath,
    out_of_range_text,
    timestamp_out_of_range,
    validate_and_assign,
)

K0_10_0 = PROFILES["kafka-0.10.0"]
K0_10 = PROFILES["kafka-0.10"]
K2_8 = PROFILES["kafka-2.8"]
K3_9 = PROFILES["kafka-3.9"]
K4_0 = PROFILES["kafka-4.0"]
K4_1 = PROFILES["kafka-4.1"]

NOW = 1_700_000_000_000
CT = TimestampType.CREATE_TIME
LAT = TimestampType.LOG_APPEND_TIME
NO_TYPE = TimestampType.NO_TIMESTAMP_TYPE
GZIP = Codec.GZIP


def _long(value: int) -> int:
    return ((value - LONG_MIN) % (1 << 64)) + LONG_MIN


def specs(*timestamps: int) -> list[RecordSpec]:
    return [RecordSpec(ts, key=f"k{i}".encode(), value=b"v") for i, ts in enumerate(timestamps)]


def run(
    batches: tuple[AnyBatch, ...] | list[AnyBatch],
    config: TopicConfig,
    profile: Profile,
    now: int = NOW,
    next_offset: int = 0,
) -> ValidatedAppend | AppendRejected:
    return validate_and_assign(batches, config=config, profile=profile, now=now, next_offset=next_offset)


def accepted(
    batches: tuple[AnyBatch, ...] | list[AnyBatch],
    config: TopicConfig,
    profile: Profile,
    now: int = NOW,
    next_offset: int = 0,
) -> ValidatedAppend:
    out = run(batches, config, profile, now, next_offset)
    assert isinstance(out, ValidatedAppend), f"expected acceptance under {profile.name}, got {out}"
    return out


def rejected(
    batches: tuple[AnyBatch, ...] | list[AnyBatch], config: TopicConfig, profile: Profile, now: int = NOW
) -> AppendRejected:
    out = run(batches, config, profile, now)
    assert isinstance(out, AppendRejected), f"expected rejection under {profile.name}, got {out}"
    return out


def bounds_config(profile: Profile, before: int, after: int, **kw: object) -> TopicConfig:
    if profile.has_before_after_configs:
        return TopicConfig(before_max_ms=before, after_max_ms=after, **kw)  # type: ignore[arg-type]
    assert before == after
    return TopicConfig(difference_max_ms=before, **kw)  # type: ignore[arg-type]


def v1_wrapper(*timestamps: int, wrapper_ts: int | None = None, lat: bool = False) -> LegacyBatch:
    (w,) = build_legacy(
        specs(*timestamps),
        magic=1,
        codec=GZIP,
        timestamp_type=LAT if lat else CT,
        wrapper_timestamp=wrapper_ts,
    )
    return w


def read(batches: tuple[AnyBatch, ...]) -> list[tuple[int, TimestampType]]:
    return [(r.timestamp, r.timestamp_type) for r in all_records(batches)]


# --------------------------------------------------------------------------------------------
# §2 VAL-3: the -1 exemption by profile


@pytest.mark.parametrize(
    ("profile", "exempt"), [(K0_10_0, False), (K0_10, False), (K2_8, True), (K3_9, True), (K4_0, True)]
)
def test_val3_minus_one_exemption_by_profile(profile: Profile, exempt: bool) -> None:
    """VAL-3: a v1 record stamped -1 on a CreateTime topic with a finite bound is exempt from
    0.11 on; 0.10.0-0.10.2 checked it like any value (|-1 - now| > bound → rejected)."""
    magic = 1 if profile.max_magic < 2 else 2
    config = bounds_config(profile, 1000, 1000, message_format_magic=magic)
    batches = build_legacy(specs(-1), magic=1) if magic == 1 else (build_v2(specs(-1)),)
    out = run(batches, config, profile)
    assert isinstance(out, ValidatedAppend) is exempt, out


@pytest.mark.parametrize("profile", [K0_10_0, K0_10])
def test_val3_v0_records_are_not_range_checked_before_0_11(profile: Profile) -> None:
    """VAL-3 (ambiguity): 0.10.x did not exempt -1, but a v0 message has no timestamp field and
    Kafka 0.10's validator only called the timestamp check for messages with magic > 0 (the same
    guard that protected the LogAppendTime overwrite). Reading chosen: v0 records are never
    range-checked, so a 0.9 producer is not rejected wholesale by a finite difference.max.ms."""
    config = TopicConfig(difference_max_ms=1000, message_format_magic=0)
    out = accepted(build_legacy(specs(5, 6), magic=0), config, profile)
    assert read(out.batches) == [(-1, NO_TYPE), (-1, NO_TYPE)]


def test_val3_log_append_time_topic_never_range_checks() -> None:
    """VAL-3: on a LogAppendTime topic the bounds are ignored whatever the record says."""
    config = TopicConfig(timestamp_type=LAT, before_max_ms=0, after_max_ms=0)
    out = accepted([build_v2(specs(0, LONG_MAX))], config, K4_0)
    assert out.max_timestamp == NOW


# --------------------------------------------------------------------------------------------
# VAL-4 / VAL-5: the range predicates on Java longs


def test_val4_bounds_inclusive() -> None:
    """VAL-4: ts = now - before and ts = now + after are accepted; one beyond is rejected."""
    config = bounds_config(K4_0, 100, 50)
    accepted([build_v2(specs(NOW - 100, NOW + 50))], config, K4_0)
    assert isinstance(run([build_v2(specs(NOW - 101))], config, K4_0), AppendRejected)
    assert isinstance(run([build_v2(specs(NOW + 51))], config, K4_0), AppendRejected)


def test_val4_long_min_wraps_to_future_and_is_rejected_with_finite_after() -> None:
    """VAL-4 [DERIVED]: now - Long.MIN_VALUE wraps negative, its negation is ~2^63 → "future" →
    rejected under 4.0's default after = 1 h, although before = Long.MAX_VALUE."""
    out = rejected([build_v2(specs(LONG_MIN))], TopicConfig(), K4_0)
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    assert out.record_errors[0].message == (
        f"Timestamp {LONG_MIN} of message with offset 0 is out of range. "
        f"The timestamp should be within [{NOW - LONG_MAX}, {NOW + 3_600_000}]"
    )


def test_val4_long_min_at_now_zero_is_not_rejected() -> None:
    """VAL-4 [DERIVED]: with now = 0, 0 - Long.MIN_VALUE = Long.MIN_VALUE and -(Long.MIN_VALUE) =
    Long.MIN_VALUE in Java: neither side exceeds its bound, so the record passes."""
    assert not timestamp_out_of_range(LONG_MIN, now=0, before=0, after=0, rule=K4_0.range_rule)


def test_val5_math_abs_long_min_never_rejects() -> None:
    """VAL-5 [DERIVED]: |ts - now| with ts - now = Long.MIN_VALUE stays negative in Java → never
    rejected, even with difference 0; other huge distances are rejected."""
    assert not timestamp_out_of_range(LONG_MIN, now=0, before=0, after=0, rule=K2_8.range_rule)
    assert timestamp_out_of_range(LONG_MIN + 1, now=0, before=0, after=0, rule=K2_8.range_rule)
    assert timestamp_out_of_range(LONG_MIN, now=1, before=10, after=10, rule=K2_8.range_rule)
    config = TopicConfig(difference_max_ms=0)
    accepted([build_v2(specs(LONG_MIN))], config, K2_8, now=0)


def test_val5_symmetric() -> None:
    """VAL-5: reject iff |ts - now| > difference, both directions."""
    config = TopicConfig(difference_max_ms=10)
    accepted([build_v2(specs(NOW - 10, NOW + 10))], config, K2_8)
    assert isinstance(run([build_v2(specs(NOW - 11))], config, K2_8), AppendRejected)
    assert isinstance(run([build_v2(specs(NOW + 11))], config, K2_8), AppendRejected)


# --------------------------------------------------------------------------------------------
# VAL-6: effective bounds


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (TopicConfig(), (LONG_MAX, LONG_MAX)),
        (TopicConfig(difference_max_ms=5), (5, 5)),
        (TopicConfig(difference_max_ms=5, before_max_ms=7), (7, 5)),
        (TopicConfig(difference_max_ms=5, after_max_ms=7), (5, 7)),
        (TopicConfig(difference_max_ms=5, before_max_ms=LONG_MAX, after_max_ms=9), (5, 9)),
        (TopicConfig(difference_max_ms=5, before_max_ms=LONG_MAX, after_max_ms=LONG_MAX), (5, 5)),
        (TopicConfig(before_max_ms=7), (7, LONG_MAX)),
    ],
)
def test_val6_kafka_3_9_fallback_per_side(config: TopicConfig, expected: tuple[int, int]) -> None:
    """VAL-6 (3.6-3.9): each side is its KIP-937 config unless that is Long.MAX_VALUE (set or
    unset), then difference.max.ms — independently per side."""
    assert effective_bounds(config, K3_9) == expected


def test_val6_other_versions() -> None:
    """VAL-6: 0.10.0-3.5 both sides = difference; 4.0+ before default Long.MAX_VALUE, after 1 h."""
    assert effective_bounds(TopicConfig(difference_max_ms=3), K2_8) == (3, 3)
    assert effective_bounds(TopicConfig(), K2_8) == (LONG_MAX, LONG_MAX)
    assert effective_bounds(TopicConfig(), K4_0) == (LONG_MAX, 3_600_000)
    assert effective_bounds(TopicConfig(before_max_ms=1, after_max_ms=LONG_MAX), K4_1) == (1, LONG_MAX)


# --------------------------------------------------------------------------------------------
# VAL-7: exact texts per style


def test_val7_text_3_6_with_wrapped_bound() -> None:
    """VAL-7 (3.6+): offset as in the request, [now-before, now+after] with 64-bit wraparound
    (3.9: after falls back to difference = Long.MAX_VALUE, so now + after wraps negative)."""
    config = TopicConfig(before_max_ms=1000)
    batch = build_v2(specs(NOW, NOW - 1001))
    out = rejected([batch], config, K3_9)
    high = _long(NOW + LONG_MAX)
    assert high < 0
    assert [(e.batch_index, e.message) for e in out.record_errors] == [
        (
            1,
            f"Timestamp {NOW - 1001} of message with offset 1 is out of range. "
            f"The timestamp should be within [{NOW - 1000}, {high}]",
        )
    ]
    assert out.error_message == TIMESTAMP_REJECTED_TEXT


def test_val7_text_0_11_symmetric_and_relative_offset_with_log_not_empty() -> None:
    """VAL-7 (0.11-3.5): [now-diff, now+diff]; the offset printed is the producer's relative offset
    (2), not the offset the log would assign (102)."""
    config = TopicConfig(difference_max_ms=10)
    out = run([build_v2(specs(NOW, NOW, NOW + 11))], config, K2_8, next_offset=100)
    assert isinstance(out, AppendRejected)
    assert out.record_errors[0].message == (
        f"Timestamp {NOW + 11} of message with offset 2 is out of range. "
        f"The timestamp should be within [{NOW - 10}, {NOW + 10}]"
    )


def test_val7_text_0_10_no_offset_no_bracket_no_record_errors() -> None:
    """VAL-7 (0.10.0-0.10.2): no offset, no closing bracket; VAL-11: < 2.4 no record_errors and
    no error_message on the wire, the text is only the exception's."""
    config = TopicConfig(difference_max_ms=10, message_format_magic=1)
    out = rejected(build_legacy(specs(NOW - 11), magic=1), config, K0_10)
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    assert out.record_errors == () and out.error_message is None
    assert out.detail == (
        f"Timestamp {NOW - 11} of message is out of range. The timestamp should be within "
        f"[{NOW - 10}, {NOW + 10}"
    )


def test_val7_offset_of_compressed_v1_inner_is_the_request_offset() -> None:
    """VAL-7: inside a v1 wrapper (wrapper offset 2, inner 0..2) the printed offset is the inner
    record's absolute offset computed from the request's wrapper offset."""
    config = TopicConfig(difference_max_ms=10, message_format_magic=1)
    out = run([v1_wrapper(NOW, NOW + 50, NOW)], config, K2_8, next_offset=1000)
    assert isinstance(out, AppendRejected)
    assert [e.batch_index for e in out.record_errors] == [1]
    message = out.record_errors[0].message
    assert message is not None and "with offset 1 is out of range" in message


def test_val7_out_of_range_text_function() -> None:
    """VAL-7: the helper prints both bounds with Java long wraparound."""
    text = out_of_range_text(5, 3, now=0, before=LONG_MAX, after=LONG_MAX, style=K4_0.error_text)
    assert text.endswith(f"[{-LONG_MAX}, {LONG_MAX}]")
    text = out_of_range_text(5, 3, now=10, before=LONG_MAX, after=LONG_MAX, style=K4_0.error_text)
    assert text.endswith(f"[{10 - LONG_MAX}, {_long(10 + LONG_MAX)}]")


# --------------------------------------------------------------------------------------------
# VAL-8: producer-set LogAppendTime flag


def lat_flagged_v2(
    base: int, deltas: tuple[int, ...], max_ts: int, codec: Codec = Codec.NONE
) -> DefaultBatch:
    records = tuple(
        Record(offset_delta=i, timestamp_delta=d, key=f"k{i}".encode(), value=b"v")
        for i, d in enumerate(deltas)
    )
    return DefaultBatch(
        attributes=int(codec) | TIMESTAMP_TYPE_MASK,
        last_offset_delta=len(records) - 1,
        base_timestamp=base,
        max_timestamp=max_ts,
        records_=records,
    )


@pytest.mark.parametrize("profile", [K0_10_0, K0_10, K2_8])
def test_val8_always_rejected_before_3_6(profile: Profile) -> None:
    """VAL-8 (0.10.0-3.5): a LogAppendTime-flagged batch is rejected on a CreateTime topic even
    in range, with the exact text."""
    magic = min(profile.max_magic, 1)
    config = TopicConfig(message_format_magic=magic)
    batches = build_legacy(specs(NOW), magic=1, timestamp_type=LAT, log_append_time=NOW)
    out = rejected(batches, config, profile)
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    text = out.detail if profile.record_errors.value == "none" else out.record_errors[0].message
    assert text is not None
    assert text.startswith("Invalid timestamp type in message LegacyRecordBatch(offset=0, Record(magic=1")
    assert text.endswith(". Producer should not set timestamp type to LogAppendTime.")


@pytest.mark.parametrize("profile", [K3_9, K4_0, K4_1])
def test_val8_lat_topic_rejects_flag(profile: Profile) -> None:
    """VAL-8 (3.6+): a LogAppendTime topic still rejects a producer-set flag."""
    out = rejected([lat_flagged_v2(NOW, (0,), NOW)], TopicConfig(timestamp_type=LAT), profile)
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    assert out.record_errors[0].message == (
        f"Invalid timestamp type in message DefaultRecord(offset=0, timestamp={NOW}, key=2 bytes, "
        "value=1 bytes). Producer should not set timestamp type to LogAppendTime."
    )


@pytest.mark.parametrize("profile", [K3_9, K4_0, K4_1])
def test_val8_compressed_in_place_prints_the_partial_record(profile: Profile) -> None:
    """VAL-8: a compressed v2 batch kept in place is read with skipKeyValueIterator (LogValidator
    .validateMessagesAndAssignOffsetsCompressed: `inPlaceAssignment && magic >= 2`), so the record is printed by
    PartialDefaultRecord.toString, with its stored key and value sizes (javap of kafka-clients 3.9.1); seen on a
    real 3.9.1. Recompressed (not in place) it is a DefaultRecord as before."""
    batch = lat_flagged_v2(NOW, (0,), NOW, codec=Codec.GZIP)
    out = rejected([batch], TopicConfig(timestamp_type=LAT), profile)
    assert out.record_errors[0].message == (
        f"Invalid timestamp type in message PartialDefaultRecord(offset=0, timestamp={NOW}, key=2 bytes, "
        "value=1 bytes). Producer should not set timestamp type to LogAppendTime."
    )
    rebuilt = rejected([batch], TopicConfig(timestamp_type=LAT, compression_type="lz4"), profile)
    assert rebuilt.record_errors[0].message.startswith("Invalid timestamp type in message DefaultRecord(offset=0")


@pytest.mark.parametrize("profile", [K3_9, K4_0])
def test_val8_in_place_accepts_then_reads_base_plus_delta(profile: Profile) -> None:
    """VAL-8 (3.6+) [DERIVED]: CreateTime topic, flagged v2 batch whose records read MaxTimestamp
    (in range) → accepted; the in-place path clears the flag, after which records read
    BaseTimestamp + delta — values never validated (here 1 and 2, far outside 1 h)."""
    batch = lat_flagged_v2(1, (0, 1), NOW)
    out = accepted([batch], bounds_config(profile, 1000, 1000), profile)
    assert out.path is ValidationPath.IN_PLACE_UNCOMPRESSED
    (stored,) = out.batches
    assert stored.timestamp_type is CT and stored.max_timestamp == NOW
    assert read(out.batches) == [(1, CT), (2, CT)]
    assert out.max_timestamp == NOW


def test_val8_flag_with_minus_one_read_is_rejected_3_6() -> None:
    """VAL-8 (3.6+): records that read -1 skip the range branch and reach the flag check."""
    out = rejected([lat_flagged_v2(5, (0,), -1)], TopicConfig(), K4_0)
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    assert "Producer should not set timestamp type to LogAppendTime." in (out.record_errors[0].message or "")


def test_val8_compressed_in_place_accepts_and_reads_base_plus_delta() -> None:
    """VAL-8 (3.6+): the same on the compressed in-place path (gzip into a producer-codec topic)."""
    out = accepted([lat_flagged_v2(7, (0, 3), NOW, GZIP)], TopicConfig(), K4_0)
    assert out.path is ValidationPath.IN_PLACE_COMPRESSED
    assert read(out.batches) == [(7, CT), (10, CT)]


def test_val8_recompression_gives_every_record_the_max() -> None:
    """VAL-8 (3.6+) [DERIVED]: on the rebuild path every record gets the batch MaxTimestamp as its
    CreateTime (the records were read through FMT-12)."""
    out = accepted([lat_flagged_v2(7, (0, 3), NOW, GZIP)], TopicConfig(compression_type="lz4"), K4_0)
    assert out.path is ValidationPath.REBUILD
    assert read(out.batches) == [(NOW, CT), (NOW, CT)]
    (stored,) = out.batches
    assert isinstance(stored, DefaultBatch) and stored.base_timestamp == NOW


def test_val8_flag_out_of_range_reports_range_error_3_6() -> None:
    """VAL-8 / VAL-7: when the flagged record is out of range, the range error is the one reported."""
    out = rejected([lat_flagged_v2(NOW, (0,), NOW + 10_000)], bounds_config(K4_0, 10, 10), K4_0)
    assert (out.record_errors[0].message or "").startswith(f"Timestamp {NOW + 10_000} of message")


def test_val8_inner_bit_never_consulted() -> None:
    """VAL-8 / FMT-7: an inner v1 message flagged LogAppendTime inside a CreateTime wrapper is
    not rejected (the wrapper's type is used)."""
    w = v1_wrapper(NOW, NOW)
    inner = tuple(
        LegacyBatch(
            offset=e.offset,
            message=LegacyMessage(
                magic=1, attributes=TIMESTAMP_TYPE_MASK, timestamp=NOW, key=b"k", value=b"v"
            ),
        )
        for e in w.message.inner
    )
    w2 = LegacyBatch(
        offset=w.offset, message=LegacyMessage(magic=1, attributes=int(GZIP), timestamp=NOW, inner=inner)
    )
    for profile in (K2_8, K0_10):
        accepted([w2], TopicConfig(message_format_magic=1), profile)


# --------------------------------------------------------------------------------------------
# VAL-9 / VAL-10: ordering, texts, multi-batch legacy


def test_val9_order_first_failure_per_record_and_invalid_record_text() -> None:
    """VAL-9: key check precedes the timestamp check (one error per record); no timestamp error →
    INVALID_RECORD with the 3.2+ text listing at most three errors."""
    batch = build_v2(
        [
            RecordSpec(NOW, key=None),
            RecordSpec(NOW, key=b"k"),
            RecordSpec(NOW, key=None),
            RecordSpec(NOW, key=None),
            RecordSpec(NOW, key=None),
        ]
    )
    out = rejected([batch], TopicConfig(compacted=True), K4_0)
    assert out.error is ErrorCode.INVALID_RECORD
    # The rules do not quote the key-check text: only its prefix is pinned here.
    text = out.record_errors[0].message or ""
    assert text.startswith("Compacted topic cannot accept message without key in topic partition topic-0")
    assert [e.batch_index for e in out.record_errors] == [0, 2, 3, 4]
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{text}')" for i in (0, 2, 3))
    assert out.error_message == (
        "One or more records have been rejected due to 4 record errors in total, and only showing "
        f"the first three errors at most: [{shown}]"
    )


def test_val9_key_error_before_timestamp_error_but_timestamp_wins_code() -> None:
    """VAL-9: a keyless out-of-range record reports the key error (first failure); another
    record's timestamp error makes the whole rejection INVALID_TIMESTAMP."""
    batch = build_v2([RecordSpec(NOW + 10**9, key=None), RecordSpec(NOW + 10**9, key=b"k")])
    out = rejected([batch], TopicConfig(compacted=True), K4_0)
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    assert out.error_message == TIMESTAMP_REJECTED_TEXT
    assert (out.record_errors[0].message or "").startswith("Compacted topic cannot accept")
    assert (out.record_errors[1].message or "").startswith(f"Timestamp {NOW + 10**9}")


def test_val9_inner_crc_is_corrupt_message_immediately() -> None:
    """VAL-9: a bad inner CRC in a compressed v1 set aborts with CORRUPT_MESSAGE, no record errors,
    even when an earlier record had a timestamp error (2.5+: records are collected first, but the
    CRC exception is thrown at once)."""
    w = v1_wrapper(NOW + 10**9, NOW)
    bad = LegacyBatch(offset=1, message=LegacyMessage(magic=1, timestamp=NOW, key=b"k", value=b"v", crc=1))
    w2 = LegacyBatch(
        offset=w.offset,
        message=LegacyMessage(magic=1, attributes=int(GZIP), timestamp=NOW, inner=(w.message.inner[0], bad)),
    )
    out = rejected([w2], TopicConfig(message_format_magic=1, difference_max_ms=1000), K2_8)
    assert out.error is ErrorCode.CORRUPT_MESSAGE and out.record_errors == ()


def test_val10_legacy_multi_batch_first_failing_batch_aborts() -> None:
    """VAL-10: uncompressed v1 single-message batches; errors per batch: the first failing batch
    aborts, batch_index is 0, later batches' errors are not reported."""
    batches = build_legacy(specs(NOW, NOW - 5000, NOW - 6000), magic=1)
    out = rejected(batches, TopicConfig(message_format_magic=1, difference_max_ms=1000), K2_8)
    assert [e.batch_index for e in out.record_errors] == [0]
    assert f"Timestamp {NOW - 5000} of message with offset 1 " in (out.record_errors[0].message or "")


def test_val10_legacy_multi_batch_on_convert_path() -> None:
    """VAL-10: the same on the convert path (v1 request into a v2 log)."""
    batches = build_legacy(specs(NOW - 5000, NOW - 6000), magic=1)
    out = rejected(batches, TopicConfig(before_max_ms=1000), K4_0)
    assert [e.batch_index for e in out.record_errors] == [0]
    assert f"Timestamp {NOW - 5000} of message with offset 0 " in (out.record_errors[0].message or "")


def test_val10_v2_more_than_one_batch() -> None:
    """VAL-10: v2 must be exactly one batch."""
    out = rejected([build_v2(specs(NOW)), build_v2(specs(NOW))], TopicConfig(), K4_0)
    assert out.error is ErrorCode.INVALID_RECORD
    assert out.detail == "Compressed outer record has more than one batch"


# --------------------------------------------------------------------------------------------
# VAL-11 / VAL-12 through the cluster


def test_val11_val12_cluster_produce() -> None:
    """VAL-11: a rejection answers base_offset -1, log_append_time -1, log_start_offset current,
    nothing written. VAL-12: success answers log_append_time = now on LogAppendTime topics, -1 on
    CreateTime topics."""
    cluster = Cluster(profile=K4_0, broker_ids=(0,), start_time=NOW)
    cluster.create_topic("ct")
    cluster.create_topic("lat", TopicConfig(timestamp_type=LAT))
    bad = cluster.produce("ct", 0, [build_v2(specs(NOW + 10**8))])
    assert (bad.error, bad.base_offset, bad.log_append_time, bad.log_start_offset) == (
        ErrorCode.INVALID_TIMESTAMP,
        -1,
        -1,
        0,
    )
    assert bad.error_message == TIMESTAMP_REJECTED_TEXT and len(bad.record_errors) == 1
    assert cluster.leader_log("ct").log_end_offset == 0
    ok = cluster.produce("ct", 0, [build_v2(specs(NOW))])
    assert (ok.error, ok.base_offset, ok.log_append_time) == (ErrorCode.NONE, 0, -1)
    cluster.advance_clock(0, 5)
    lat = cluster.produce("lat", 0, [build_v2(specs(1, 2))])
    assert (lat.error, lat.base_offset, lat.log_append_time) == (ErrorCode.NONE, 0, NOW + 5)


# --------------------------------------------------------------------------------------------
# VAL-13 / VAL-14 / VAL-15


def test_val13_header_max_recomputed_on_create_time() -> None:
    """VAL-13: a producer MaxTimestamp that is not the max is overwritten (v2 and v1 wrapper)."""
    from dataclasses import replace

    batch = replace(build_v2(specs(NOW - 5, NOW - 3)), max_timestamp=NOW + 99)
    out = accepted([batch], TopicConfig(), K4_0)
    assert out.batches[0].max_timestamp == NOW - 3 and out.max_timestamp == NOW - 3
    allneg = replace(build_v2(specs(-1, -1)), max_timestamp=7)
    assert accepted([allneg], TopicConfig(), K4_0).batches[0].max_timestamp == -1
    w = v1_wrapper(NOW - 5, NOW - 3, wrapper_ts=NOW + 99)
    out1 = accepted([w], TopicConfig(message_format_magic=1), K2_8)
    assert out1.path is ValidationPath.IN_PLACE_COMPRESSED
    assert out1.batches[0].max_timestamp == NOW - 3 and out1.batches[0].timestamp_type is CT


def test_val14_base_offset_and_idempotent_to_old_magic() -> None:
    """VAL-14: client v2 batch with BaseOffset != 0 → INVALID_RECORD; idempotent v2 data into a
    v1 log → UNSUPPORTED_FOR_MESSAGE_FORMAT."""
    out = rejected([build_v2(specs(NOW), base_offset=3)], TopicConfig(), K4_0)
    assert out.error is ErrorCode.INVALID_RECORD
    idem = build_v2(specs(NOW), producer_id=5, producer_epoch=0, base_sequence=0)
    out2 = rejected([idem], TopicConfig(message_format_magic=1), K2_8)
    assert out2.error is ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT


def test_val15_negative_timestamp_in_place_accepted_rebuild_unknown_server_error() -> None:
    """VAL-15 / FMT-8: ts -5 in a v2 batch passes the range check (before = Long.MAX_VALUE) and
    is stored in place; a rebuild (recompression) makes the builder throw → UNKNOWN_SERVER_ERROR."""
    out = accepted([build_v2(specs(-5, NOW))], TopicConfig(), K4_0)
    assert read(out.batches)[0] == (-5, CT)
    bad = rejected([build_v2(specs(-5, NOW))], TopicConfig(compression_type="gzip"), K4_0)
    assert bad.error is ErrorCode.UNKNOWN_SERVER_ERROR and bad.error_message is None
    assert bad.detail == "Invalid negative timestamp -5"


def test_fmt8_builder_refusal() -> None:
    """FMT-8: the record builder refuses any timestamp < -1 ('Invalid negative timestamp <ts>'),
    accepts -1 and 0. The model's `build_*` helpers deliberately do NOT refuse: they are also the
    suite's crafting tools for non-Java clients (VAL-15); the refusal lives in `check_buildable`,
    which every rebuilding path (validator rebuild/convert, down-conversion) calls."""
    check_buildable([-1, 0, LONG_MAX], magic=2, codec=Codec.NONE)
    for ts in (-2, LONG_MIN):
        with pytest.raises(BuildError, match=f"Invalid negative timestamp {ts}"):
            check_buildable([0, ts], magic=1, codec=GZIP)
    with pytest.raises(BuildError):
        check_buildable([0], magic=0, codec=Codec.NONE, has_headers=True)


# --------------------------------------------------------------------------------------------
# §3 CMP-*


def test_cmp1_path_selection() -> None:
    """CMP-1: none/none same magic → in place; none/none other magic → convert; same codec same
    magic → compressed in place; different codec → rebuild. The model has no compression *level*
    (TopicConfig.compression_type is a codec name only), so 'different level, same codec stays in
    place' reduces to 'same codec stays in place', which is what is asserted here."""
    v2 = build_v2(specs(NOW))
    assert accepted([v2], TopicConfig(), K4_0).path is ValidationPath.IN_PLACE_UNCOMPRESSED
    assert accepted(build_legacy(specs(NOW), magic=1), TopicConfig(), K4_0).path is ValidationPath.CONVERT
    gz = build_v2(specs(NOW), codec=GZIP)
    assert (
        accepted([gz], TopicConfig(compression_type="gzip"), K4_0).path is ValidationPath.IN_PLACE_COMPRESSED
    )
    assert accepted([gz], TopicConfig(), K4_0).path is ValidationPath.IN_PLACE_COMPRESSED
    assert accepted([gz], TopicConfig(compression_type="lz4"), K4_0).path is ValidationPath.REBUILD
    assert accepted([gz], TopicConfig(compression_type="none"), K4_0).path is ValidationPath.REBUILD
    assert accepted([v2], TopicConfig(compression_type="gzip"), K4_0).path is ValidationPath.REBUILD


def test_cmp1_v1_inner_offsets_not_0_to_n_force_rebuild() -> None:
    """CMP-1: a v1 wrapper whose inner offsets are not exactly 0..n-1 is rebuilt, not rejected."""
    w = v1_wrapper(NOW, NOW + 1, NOW + 2)
    inner = tuple(
        LegacyBatch(offset=o, message=e.message) for o, e in zip((0, 2, 3), w.message.inner, strict=True)
    )
    odd = LegacyBatch(
        offset=3, message=LegacyMessage(magic=1, attributes=int(GZIP), timestamp=NOW + 2, inner=inner)
    )
    out = accepted([odd], TopicConfig(message_format_magic=1), K2_8, next_offset=10)
    assert out.path is ValidationPath.REBUILD
    assert [r.offset for r in all_records(out.batches)] == [10, 11, 12]
    assert read(out.batches) == [(NOW, CT), (NOW + 1, CT), (NOW + 2, CT)]


def test_cmp1_v0_target_is_never_in_place() -> None:
    """CMP-1 / CMP-6: a compressed v0 set into a v0 log, same codec, is rebuilt (target magic 0)."""
    (w,) = build_legacy(specs(1, 2), magic=0, codec=GZIP)
    out = accepted([w], TopicConfig(message_format_magic=0), K2_8)
    assert out.path is ValidationPath.REBUILD
    assert out.max_timestamp == -1 and out.offset_of_max_timestamp == -1


def test_cmp3_v1_compressed_lat_keeps_inner_stored_timestamps() -> None:
    """CMP-3 / CMP-8: in place, only the wrapper gets now + bit 3; inner messages keep the producer
    values (invisible to readers, FMT-7)."""
    out = accepted([v1_wrapper(11, 12)], TopicConfig(timestamp_type=LAT, message_format_magic=1), K2_8)
    assert out.path is ValidationPath.IN_PLACE_COMPRESSED
    (stored,) = out.batches
    assert isinstance(stored, LegacyBatch)
    assert stored.message.timestamp == NOW and stored.timestamp_type is LAT
    assert [e.message.timestamp for e in stored.message.inner] == [11, 12]
    assert read(out.batches) == [(NOW, LAT), (NOW, LAT)]


def test_cmp3_v1_uncompressed_lat_overwrites_each_message() -> None:
    """CMP-3: v1 uncompressed in place: each message's field := now and bit 3 set."""
    out = accepted(
        build_legacy(specs(11, 12), magic=1), TopicConfig(timestamp_type=LAT, message_format_magic=1), K2_8
    )
    assert all(
        isinstance(b, LegacyBatch) and b.message.timestamp == NOW and b.message.attributes & 8
        for b in out.batches
    )
    assert out.max_timestamp == NOW and out.offset_of_max_timestamp == 0


def test_cmp4_rebuilt_lat_v2_base_timestamp_is_first_read_timestamp() -> None:
    """CMP-4: v2 rebuild on a LogAppendTime topic: MaxTimestamp = now, bit 3, BaseTimestamp = the
    first source record's read timestamp (v1 gzip source ts 40, 20 → 40; v0 source → -1)."""
    out = accepted([v1_wrapper(40, 20)], TopicConfig(timestamp_type=LAT), K4_0)
    (stored,) = out.batches
    assert isinstance(stored, DefaultBatch)
    assert (stored.base_timestamp, stored.max_timestamp, stored.timestamp_type) == (40, NOW, LAT)
    assert [r.timestamp_delta for r in stored.records_] == [0, -20]
    (v0,) = build_legacy(specs(1, 2), magic=0, codec=GZIP)
    (stored0,) = accepted([v0], TopicConfig(timestamp_type=LAT), K4_0).batches
    assert isinstance(stored0, DefaultBatch) and stored0.base_timestamp == -1


def test_cmp4_rebuilt_lat_v1_stamps_inner_and_wrapper() -> None:
    """CMP-4: v1 rebuild with LogAppendTime: every inner message and the wrapper = now."""
    out = accepted(
        [build_v2(specs(3, 4), codec=GZIP)], TopicConfig(timestamp_type=LAT, message_format_magic=1), K2_8
    )
    (stored,) = out.batches
    assert isinstance(stored, LegacyBatch)
    assert stored.message.timestamp == NOW
    assert [e.message.timestamp for e in stored.message.inner] == [NOW, NOW]


def test_cmp6_v0_target_lat() -> None:
    """CMP-6: in place uncompressed with LogAppendTime and target v0 → max -1; the convert path to
    v0 returns the builder's value `now` (the documented internal inconsistency)."""
    cfg = TopicConfig(timestamp_type=LAT, message_format_magic=0)
    inplace = accepted(build_legacy(specs(1), magic=0), cfg, K2_8)
    assert (inplace.path, inplace.max_timestamp, inplace.offset_of_max_timestamp) == (
        ValidationPath.IN_PLACE_UNCOMPRESSED,
        -1,
        -1,
    )
    conv = accepted(build_legacy(specs(1, 2), magic=1), cfg, K2_8)
    assert (conv.path, conv.max_timestamp) == (ValidationPath.CONVERT, NOW)
    assert read(conv.batches) == [(-1, NO_TYPE), (-1, NO_TYPE)]


@pytest.mark.parametrize(("profile", "expected"), [(K2_8, 11), (K3_9, 12), (K4_0, 12)])
def test_cmp7_uncompressed_v1_create_time_per_profile(profile: Profile, expected: int) -> None:
    """CMP-7: v1 uncompressed CreateTime, ts 5, 9, 9 at offsets 10..12 (two single-message batches
    tie on the max). 0.10.1-3.7 leader: exact record offset of the first max (11). 3.8+: last
    offset of the earliest batch holding the max — the single-message batch at 11. Both give 11
    for v1; v2 (one batch) separates them: exact 11 vs batch last 12."""
    if profile is K2_8:
        out = accepted(
            build_legacy(specs(5, 9, 9), magic=1),
            TopicConfig(message_format_magic=1),
            profile,
            next_offset=10,
        )
        assert out.offset_of_max_timestamp == 11
        out2 = accepted([build_v2(specs(5, 9, 9))], TopicConfig(), profile, next_offset=10)
        assert out2.offset_of_max_timestamp == expected
    else:
        out2 = accepted([build_v2(specs(5, 9, 9))], TopicConfig(), profile, next_offset=10)
        assert out2.offset_of_max_timestamp == expected


def test_cmp7_legacy_lat_first_offset_and_compressed_last() -> None:
    """CMP-7 (3.8-4.0): v1 uncompressed LogAppendTime → first offset of the append; compressed →
    last offset."""
    cfg = TopicConfig(timestamp_type=LAT, message_format_magic=1)
    out = accepted(build_legacy(specs(1, 2, 3), magic=1), cfg, K2_8, next_offset=4)
    assert out.offset_of_max_timestamp == 4
    out2 = accepted([v1_wrapper(1, 2, 3)], cfg, K2_8, next_offset=4)
    assert out2.offset_of_max_timestamp == 6


# --------------------------------------------------------------------------------------------
# §6 CNV-*


def test_cnv4_up_conversion() -> None:
    """CNV-4: v0 → v2 CreateTime: -1 with type CreateTime; LogAppendTime: now. v1 → v2: preserved."""
    v0 = build_legacy(specs(1, 2), magic=0)
    assert read(accepted(v0, TopicConfig(), K4_0).batches) == [(-1, CT), (-1, CT)]
    assert read(accepted(v0, TopicConfig(timestamp_type=LAT), K4_0).batches) == [(NOW, LAT), (NOW, LAT)]
    v1 = build_legacy(specs(NOW - 7, NOW - 3), magic=1)
    out = accepted(v1, TopicConfig(), K4_0)
    assert out.path is ValidationPath.CONVERT and read(out.batches) == [(NOW - 7, CT), (NOW - 3, CT)]
    assert out.records_converted == 2
    v0_to_v1 = accepted(v0, TopicConfig(message_format_magic=1), K2_8)
    assert read(v0_to_v1.batches) == [(-1, CT), (-1, CT)]


def _stored_mix() -> tuple[AnyBatch, ...]:
    lat = build_v2(specs(10), timestamp_type=LAT, log_append_time=50, base_offset=0)
    ct = build_v2(
        [RecordSpec(12, key=b"a", headers=(Header("h", b"x"),)), RecordSpec(13, key=b"b")],
        base_offset=1,
        partition_leader_epoch=3,
    )
    return (lat, ct)


def test_cnv5_down_conversion_bullets() -> None:
    """CNV-5: type preserved; a LogAppendTime v2 batch → v1 with every message (and wrapper) =
    MaxTimestamp; CreateTime keeps record timestamps, wrapper = max; headers dropped; to v0 drops
    timestamps and type; uncompressed batch drops records below the fetch offset."""
    lat, ct = _stored_mix()
    v1 = down_convert((lat, ct), to_magic=1, fetch_offset=0)
    assert read(v1) == [(50, LAT), (12, CT), (13, CT)]
    assert [r.offset for r in all_records(v1)] == [0, 1, 2]
    from_2 = down_convert((lat, ct), to_magic=1, fetch_offset=2)
    assert read(from_2) == [(13, CT)] and [r.offset for r in all_records(from_2)] == [2]
    first = v1[0]
    assert isinstance(first, LegacyBatch) and first.message.timestamp == 50 and first.timestamp_type is LAT
    gz_lat = build_v2(specs(10, 11), timestamp_type=LAT, log_append_time=50, codec=GZIP)
    (w,) = down_convert((gz_lat,), to_magic=1, fetch_offset=1)
    assert isinstance(w, LegacyBatch) and w.message.timestamp == 50
    assert [e.message.timestamp for e in w.message.inner] == [50, 50]
    assert read((w,)) == [(50, LAT), (50, LAT)], "compressed: records below fetch offset kept"
    gz_ct = build_v2(specs(12, 15, 13), codec=GZIP)
    (w2,) = down_convert((gz_ct,), to_magic=1, fetch_offset=0)
    assert isinstance(w2, LegacyBatch) and w2.message.timestamp == 15 and w2.timestamp_type is CT
    v0 = down_convert((lat, ct), to_magic=0, fetch_offset=0)
    assert read(v0) == [(-1, NO_TYPE)] * 3


def test_cnv5_control_batches_and_zstd() -> None:
    """CNV-5: control batches dropped; zstd → UNSUPPORTED_COMPRESSION_TYPE with the exact text."""
    from dataclasses import replace

    marker = replace(build_v2(specs(5), base_offset=1), attributes=0x20 | 0x10)
    out = down_convert((build_v2(specs(4)), marker), to_magic=1, fetch_offset=0)
    assert len(out) == 1
    with pytest.raises(DownConversionError) as info:
        down_convert((build_v2(specs(4), codec=Codec.ZSTD),), to_magic=1, fetch_offset=0)
    assert info.value.error is ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert str(info.value) == ZSTD_DOWN_CONVERSION_TEXT


def test_cnv5_fetch_view_enable_flag_and_ibp() -> None:
    """CNV-5: with IBP >= 3.0 (kafka-3.9) a v3 fetch of v2 data is converted; with
    message.downconversion.enable=false a client gets UNSUPPORTED_VERSION, a replica does not."""
    stored = (build_v2(specs(7)),)
    err, served = fetch_view(stored, fetch_version=3, profile=K3_9, config=TopicConfig())
    assert err is ErrorCode.NONE and served[0].magic == 1
    off = TopicConfig(downconversion_enable=False)
    assert fetch_view(stored, fetch_version=3, profile=K3_9, config=off)[0] is ErrorCode.UNSUPPORTED_VERSION
    assert fetch_view(stored, fetch_version=3, profile=K3_9, config=off, replica=True)[0] is ErrorCode.NONE


def test_cnv5_no_conversion_needed_when_every_batch_is_readable_before_ibp_3_0_only() -> None:
    """CNV-5: before IBP 3.0 (2.8 here) Kafka's KafkaApis down-converts only when some fetched batch is not
    already compatible (`hasCompatibleMagic`), so readable data goes out as it is even with
    message.downconversion.enable=false. From 3.0 (KafkaApis.maybeConvertFetchedData, 3.0-3.9) the record version
    is always 2, every fetch <= v3 takes the conversion path, and a disabled conversion is UNSUPPORTED_VERSION for a
    client whatever the batches (observed on 3.9.1 with Fetch v0); a replica is exempt."""
    stored = tuple(build_legacy(specs(7), magic=1))
    off = TopicConfig(downconversion_enable=False, message_format_magic=2)
    assert fetch_view(stored, fetch_version=3, profile=K2_8, config=off) == (ErrorCode.NONE, stored)
    assert fetch_view(stored, fetch_version=3, profile=K3_9, config=off) == (ErrorCode.UNSUPPORTED_VERSION, ())
    assert fetch_view(stored, fetch_version=3, profile=K3_9, config=off, replica=True) == (ErrorCode.NONE, stored)


def test_cnv5_down_conversion_is_lazy_about_zstd() -> None:
    """CNV-5 (KIP-283, LazyDownConversionRecords/Send, 2.0-3.9): a zstd batch met before any batch converted fails
    the fetch with UNSUPPORTED_COMPRESSION_TYPE; met later, a consumer gets every batch before it (each response
    ends at it with an overflow batch, which a consumer skips; observed on 3.9.1); a topic whose compression.type
    is zstd refuses every fetch below v10 (KafkaApis.maybeConvertFetchedData)."""
    plain = build_v2(specs(7), base_offset=0)
    zstd = build_v2(specs(8), base_offset=1, codec=Codec.ZSTD)
    later = build_v2(specs(9), base_offset=2)
    config = TopicConfig()
    error, served = fetch_view((zstd, later), fetch_version=3, profile=K3_9, config=config)
    assert (error, served) == (ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, ())
    second = build_v2(specs(8), base_offset=1)
    zstd_third = build_v2(specs(9), base_offset=2, codec=Codec.ZSTD)
    error, served = fetch_view((plain, second, zstd_third, later), fetch_version=3, profile=K3_9, config=config)
    assert error is ErrorCode.NONE and [(b.base_offset, b.magic) for b in served] == [(0, 1), (1, 1)]
    error, served = fetch_view((plain, later), fetch_version=3, profile=K3_9, config=config)
    assert error is ErrorCode.NONE and len(served) == 2
    on_zstd_topic = TopicConfig(compression_type="zstd")
    assert fetch_view((plain,), fetch_version=9, profile=K3_9, config=on_zstd_topic)[0] is (
        ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    )
    assert fetch_view((plain,), fetch_version=10, profile=K3_9, config=on_zstd_topic)[0] is ErrorCode.NONE


def test_cnv7_4_0_serves_as_is_and_refuses_old_fetch() -> None:
    """CNV-7: 4.0 has no down-conversion: v0/v1 on disk served as they are; Fetch v0-3 get no answer (the
    connection is closed: NETWORK_EXCEPTION)."""
    stored = (*build_legacy(specs(7), magic=1), build_v2(specs(8), base_offset=1))
    err, served = fetch_view(stored, fetch_version=4, profile=K4_0, config=TopicConfig())
    assert err is ErrorCode.NONE and served == stored
    assert (
        fetch_view(stored, fetch_version=3, profile=K4_0, config=TopicConfig())[0]
        is ErrorCode.NETWORK_EXCEPTION
    )


# --------------------------------------------------------------------------------------------
# §8 CON-1: every row, via records and via decode of encoded bytes


def _con1_rows() -> list[tuple[str, AnyBatch, list[tuple[int, TimestampType]]]]:
    v0 = build_legacy(specs(5), magic=0)[0]
    (v0z,) = build_legacy(specs(5, 6), magic=0, codec=GZIP)
    v1_ct = build_legacy(specs(5), magic=1)[0]
    v1_lat = LegacyBatch(
        offset=0, message=LegacyMessage(magic=1, attributes=8, timestamp=77, key=b"k", value=b"v")
    )
    w_ct = v1_wrapper(5, 9, wrapper_ts=100)
    w_lat = LegacyBatch(
        offset=w_ct.offset,
        message=LegacyMessage(magic=1, attributes=int(GZIP) | 8, timestamp=100, inner=w_ct.message.inner),
    )
    v0_inner = tuple(
        LegacyBatch(offset=i, message=LegacyMessage(magic=0, key=b"k", value=b"v")) for i in range(2)
    )
    w_v0_ct = LegacyBatch(
        offset=1, message=LegacyMessage(magic=1, attributes=int(GZIP), timestamp=3, inner=v0_inner)
    )
    w_v0_lat = LegacyBatch(
        offset=1, message=LegacyMessage(magic=1, attributes=int(GZIP) | 8, timestamp=3, inner=v0_inner)
    )
    v2_ct = build_v2(specs(20, 10))
    v2_lat = lat_flagged_v2(20, (0, -10), 99)
    return [
        ("v0", v0, [(-1, NO_TYPE)]),
        ("v0 compressed", v0z, [(-1, NO_TYPE), (-1, NO_TYPE)]),
        ("v1 uncompressed CT", v1_ct, [(5, CT)]),
        ("v1 uncompressed LAT", v1_lat, [(77, LAT)]),
        ("v1 wrapper CT", w_ct, [(5, CT), (9, CT)]),
        ("v1 wrapper LAT", w_lat, [(100, LAT), (100, LAT)]),
        ("v1 wrapper v0 inner CT", w_v0_ct, [(-1, CT), (-1, CT)]),
        ("v1 wrapper v0 inner LAT", w_v0_lat, [(-1, LAT), (-1, LAT)]),
        ("v2 CT", v2_ct, [(20, CT), (10, CT)]),
        ("v2 LAT", v2_lat, [(99, LAT), (99, LAT)]),
    ]


@pytest.mark.parametrize("row", range(10))
def test_con1_table_records_and_decoded_bytes(row: int) -> None:
    """CON-1: each row of the table, on the model value and on decode(encode(value))."""
    name, batch, expected = _con1_rows()[row]
    assert read((batch,)) == expected, name
    decoded = decode_batch(encode_batch(batch))
    assert read((decoded,)) == expected, name
    assert all(isinstance(r, ConsumerRecord) for r in decoded.records())


def test_con1_after_lat_append_bytes_roundtrip() -> None:
    """CON-1 / CMP-3: what a LogAppendTime append stores reads `now` from its bytes too."""
    out = accepted([build_v2(specs(1, 2), codec=GZIP)], TopicConfig(timestamp_type=LAT), K4_0)
    decoded = decode_batches(encode_batches(out.batches))
    assert read(decoded) == [(NOW, LAT), (NOW, LAT)]
    (d,) = decoded
    assert isinstance(d, DefaultBatch) and d.base_timestamp == 1


def test_val9_invalid_record_text_before_3_2() -> None:
    """VAL-9: 2.5-3.1 top-level INVALID_RECORD text is just "One or more records have been rejected"."""
    batch = build_v2([RecordSpec(NOW, key=None)])
    out = rejected([batch], TopicConfig(compacted=True), K2_8)
    assert out.error is ErrorCode.INVALID_RECORD
    assert out.error_message == "One or more records have been rejected"
    assert [e.batch_index for e in out.record_errors] == [0]


def test_cmp2_in_place_create_time_touches_only_offsets_epoch_and_header() -> None:
    """CMP-2: in place, records untouched (BaseTimestamp, deltas, keys); offsets and the v2
    leader epoch assigned; the stored bytes differ from the request only in the header fields
    the CRC does not cover (BaseOffset, PartitionLeaderEpoch)."""
    batch = build_v2(specs(NOW - 3, NOW - 9, NOW - 1))
    out = validate_and_assign(
        [batch], config=TopicConfig(), profile=K4_0, now=NOW, next_offset=40, leader_epoch=6
    )
    assert isinstance(out, ValidatedAppend)
    (stored,) = out.batches
    assert isinstance(stored, DefaultBatch)
    assert (stored.base_offset, stored.partition_leader_epoch) == (40, 6)
    assert stored.records_ == batch.records_ and stored.base_timestamp == batch.base_timestamp
    assert encode_batch(stored)[17:] == encode_batch(batch)[17:]
    assert (out.max_timestamp, out.offset_of_max_timestamp, out.records_converted) == (NOW - 1, 42, 0)


def test_cmp3_v1_compressed_lat_inner_values_survive_bytes() -> None:
    """CMP-3 / FMT-7: the producer values inside an in-place LogAppendTime v1 wrapper are still in
    the stored bytes (decode shows them) while every reader sees the wrapper's `now`."""
    out = accepted([v1_wrapper(11, 12)], TopicConfig(timestamp_type=LAT, message_format_magic=1), K2_8)
    decoded = decode_batch(encode_batch(out.batches[0]))
    assert isinstance(decoded, LegacyBatch)
    assert [e.message.timestamp for e in decoded.message.inner] == [11, 12]
    assert read((decoded,)) == [(NOW, LAT), (NOW, LAT)]


def test_val10_two_compressed_legacy_wrappers_rejected() -> None:
    """VAL-10: a compressed legacy set must be exactly one batch."""
    out = rejected([v1_wrapper(NOW), v1_wrapper(NOW)], TopicConfig(message_format_magic=1), K2_8)
    assert (out.error, out.detail) == (
        ErrorCode.INVALID_RECORD,
        "Compressed outer record has more than one batch",
    )


def test_cmp1_uncompressed_control_batch_stays_in_place() -> None:
    """CMP-1: a coordinator's uncompressed control batch is not compressed even on a gzip topic."""
    from dataclasses import replace

    from models.validator import AppendOrigin

    marker = replace(build_v2(specs(NOW), producer_id=1, producer_epoch=0), attributes=0x20 | 0x10)
    out = validate_and_assign(
        [marker],
        config=TopicConfig(compression_type="gzip"),
        profile=K4_0,
        now=NOW,
        next_offset=0,
        origin=AppendOrigin.COORDINATOR,
    )
    assert isinstance(out, ValidatedAppend) and out.path is ValidationPath.IN_PLACE_COMPRESSED
    assert out.batches[0].codec is Codec.NONE


def test_val1_raft_leader_skips_validation_and_replication_is_refused() -> None:
    """VAL-1: RAFT_LEADER appends skip the validator (an out-of-range timestamp is stored);
    follower (REPLICATION) appends never come to the validator."""
    from models.validator import AppendOrigin

    far = build_v2(specs(NOW + 10**9), partition_leader_epoch=0)
    out = validate_and_assign(
        [far],
        config=TopicConfig(),
        profile=K4_0,
        now=NOW,
        next_offset=0,
        leader_epoch=0,
        origin=AppendOrigin.RAFT_LEADER,
    )
    assert isinstance(out, ValidatedAppend) and out.path is ValidationPath.UNVALIDATED
    with pytest.raises(ValueError):
        validate_and_assign(
            [far], config=TopicConfig(), profile=K4_0, now=NOW, next_offset=0, origin=AppendOrigin.REPLICATION
        )


def test_val2_one_now_for_every_batch_of_the_append() -> None:
    """VAL-2: every LogAppendTime batch of one append gets the same `now` (legacy multi-batch)."""
    out = accepted(
        build_legacy(specs(1, 2, 3), magic=1), TopicConfig(timestamp_type=LAT, message_format_magic=1), K2_8
    )
    assert {b.max_timestamp for b in out.batches} == {NOW}


def test_val15_convert_path_builder_refusal_precedes_later_validation_error() -> None:
    """VAL-15 / VAL-9 (ambiguity, resolved from Kafka's convert path, which appends each record to
    the builder as soon as it passes while its batch has no error): v1 single-message batches
    [ts -5, out of range] converted into a v2 log → the builder refuses -5 first →
    UNKNOWN_SERVER_ERROR; in the other order the first batch fails validation → INVALID_TIMESTAMP.
    The compressed rebuild path validates every record before building: INVALID_TIMESTAMP."""
    config = TopicConfig(after_max_ms=1000)
    first_unbuildable = build_legacy(specs(-5, NOW + 10**9), magic=1)
    assert rejected(first_unbuildable, config, K4_0).error is ErrorCode.UNKNOWN_SERVER_ERROR
    first_invalid = build_legacy(specs(NOW + 10**9, -5), magic=1)
    assert rejected(first_invalid, config, K4_0).error is ErrorCode.INVALID_TIMESTAMP
    one_v2 = build_v2(specs(NOW + 10**9, -5))
    assert rejected([one_v2], TopicConfig(after_max_ms=1000, compression_type="gzip"), K4_0).error is (
        ErrorCode.INVALID_TIMESTAMP
    )
    compressed = build_v2(specs(-5, NOW + 10**9), codec=GZIP)
    assert rejected([compressed], TopicConfig(after_max_ms=1000, compression_type="lz4"), K4_0).error is (
        ErrorCode.INVALID_TIMESTAMP
    )


def test_val15_convert_path_headers_below_v2() -> None:
    """VAL-15 / FMT-8 [DERIVED]: a v2 record with headers converted into a v1 log (2.8, format v1)
    makes the builder throw (magic < 2 has no headers) → UNKNOWN_SERVER_ERROR, even when a later
    record of the batch is out of range."""
    batch = build_v2(
        [RecordSpec(NOW, key=b"a", headers=(Header("h", b"x"),)), RecordSpec(NOW + 10**9, key=b"b")]
    )
    out = rejected([batch], TopicConfig(message_format_magic=1, difference_max_ms=1000), K2_8)
    assert out.error is ErrorCode.UNKNOWN_SERVER_ERROR and out.error_message is None


# --------------------------------------------------------------------------------------------
# §1 FMT-*


def test_fmt3_fmt9_crc_coverage() -> None:
    """FMT-3: the v1 CRC covers the timestamp and type bit. FMT-9: the v2 CRC-32C covers both
    timestamps and the type bit but not the leader epoch or the base offset."""
    from dataclasses import replace

    from models.codec import legacy_crc, v2_crc

    m = LegacyMessage(magic=1, timestamp=5, key=b"k", value=b"v")
    assert legacy_crc(m) != legacy_crc(replace(m, timestamp=6))
    assert legacy_crc(m) != legacy_crc(replace(m, attributes=TIMESTAMP_TYPE_MASK))
    b = build_v2(specs(5, 6))
    assert v2_crc(b) == v2_crc(replace(b, partition_leader_epoch=9, base_offset=100))
    assert v2_crc(b) != v2_crc(replace(b, max_timestamp=7))
    assert v2_crc(b) != v2_crc(replace(b, base_timestamp=4))
    assert v2_crc(b) != v2_crc(replace(b, attributes=TIMESTAMP_TYPE_MASK))


def test_fmt4_v0_bit3_reports_no_timestamp_type() -> None:
    """FMT-4 / FMT-5: a v0 message with bit 3 set still reports NoTimestampType and -1, also after
    a byte round trip."""
    b = LegacyBatch(
        offset=0, message=LegacyMessage(magic=0, attributes=TIMESTAMP_TYPE_MASK, key=b"k", value=b"v")
    )
    assert read((b,)) == [(-1, NO_TYPE)]
    assert read((decode_batch(encode_batch(b)),)) == [(-1, NO_TYPE)]
    assert b.max_timestamp == -1


def test_fmt7_wrapper_timestamp_as_built() -> None:
    """FMT-7: the builder writes a CreateTime wrapper = max of inner timestamps, a LogAppendTime
    wrapper = the append time; inner offsets 0..n-1, wrapper offset = absolute last."""
    (ct,) = build_legacy(specs(5, 9, 7), magic=1, codec=GZIP, base_offset=10)
    assert ct.message.timestamp == 9 and ct.offset == 12
    assert [e.offset for e in ct.message.inner] == [0, 1, 2]
    assert [r.offset for r in ct.records()] == [10, 11, 12]
    (lat,) = build_legacy(specs(5, 9), magic=1, codec=GZIP, timestamp_type=LAT, log_append_time=33)
    assert lat.message.timestamp == 33 and read((lat,)) == [(33, LAT), (33, LAT)]


def test_fmt11_base_timestamp_is_first_not_min_and_empty_is_minus_one() -> None:
    """FMT-11: BaseTimestamp = the first record appended (not the minimum), deltas may be negative,
    MaxTimestamp = max; an empty batch has BaseTimestamp -1."""
    b = build_v2(specs(50, 10, 70))
    assert (b.base_timestamp, b.max_timestamp) == (50, 70)
    assert [r.timestamp_delta for r in b.records_] == [0, -40, 20]
    assert build_v2([]).base_timestamp == -1


def test_fmt12_fmt13_type_bit_flip_exposes_deltas_and_keeps_base() -> None:
    """FMT-12: with bit 3 every record reads MaxTimestamp; FMT-13: rewriting (type, max) never
    touches BaseTimestamp, so clearing the bit exposes BaseTimestamp + delta again. Legacy v0
    cannot take a header rewrite."""
    b = build_v2(specs(50, 10))
    lat = b.with_header(timestamp_type=LAT, max_timestamp=999)
    assert read((lat,)) == [(999, LAT), (999, LAT)] and lat.base_timestamp == 50
    back = lat.with_header(timestamp_type=CT, max_timestamp=999)
    assert read((back,)) == [(50, CT), (10, CT)]
    with pytest.raises(ValueError):
        build_legacy(specs(1), magic=0)[0].with_header(timestamp_type=CT, max_timestamp=1)


def test_fmt14_offset_of_max_first_occurrence() -> None:
    """FMT-14: the first record whose timestamp equals the batch max; v0 → -1; a LogAppendTime
    batch → its first record."""
    assert build_v2(specs(3, 9, 9), base_offset=20).offset_of_max_timestamp() == 21
    assert lat_flagged_v2(1, (0, 5), 77).offset_of_max_timestamp() == 0
    assert build_legacy(specs(1), magic=0)[0].offset_of_max_timestamp() == -1
    assert v1_wrapper(3, 9, 9).offset_of_max_timestamp() == 1
