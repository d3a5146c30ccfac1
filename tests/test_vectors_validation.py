"""The leader's validator and the conversions against the test vectors TV-17..TV-27 (docs/rules.md), plus the exact
texts of VAL-7..VAL-15 and CNV-1..7.

Profiles: the LogValidatorTest vectors pass the target magic directly; a real broker only stores
v0/v1 while it honours `message.format.version` (CNV-3), so v0/v1 targets use kafka-2.8 with the
topic's format set, and v2 targets use kafka-3.9 / kafka-4.0.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from models.cluster import Cluster
from models.codec import encode_batches, encoded_size, legacy_crc
from models.config import TopicConfig
from models.constants import (
    CONTROL_MASK,
    LONG_MAX,
    NOT_SERVED,
    TRANSACTIONAL_MASK,
    Codec,
    ErrorCode,
    TimestampType,
)
from models.conversion import (
    ZSTD_DOWN_CONVERSION_TEXT,
    DownConversionError,
    down_convert,
    fetch_magic_for_version,
    fetch_view,
)
from models.profiles import PROFILES, Profile, RecordErrorsStyle
from models.records import (
    AnyBatch,
    DefaultBatch,
    Header,
    LegacyBatch,
    LegacyMessage,
    Record,
    RecordSpec,
    all_records,
    build_batches,
    build_legacy,
    build_v2,
)
from models.validator import (
    MULTIPLE_BATCHES_TEXT,
    RECORDS_REJECTED_TEXT_2_5,
    TIMESTAMP_REJECTED_TEXT,
    AppendOrigin,
    AppendRejected,
    RecordError,
    ValidatedAppend,
    ValidationPath,
    check_produce_request,
    produce_magic_for_version,
    validate_and_assign,
)

K0_10 = PROFILES["kafka-0.10"]
K2_8 = PROFILES["kafka-2.8"]
K3_9 = PROFILES["kafka-3.9"]
K4_0 = PROFILES["kafka-4.0"]
K2_4 = replace(K2_8, name="kafka-2.4 (test)", record_errors=RecordErrorsStyle.FIRST)

NOW = 1_700_000_000_000
LAT = TimestampType.LOG_APPEND_TIME
CT = TimestampType.CREATE_TIME


def specs(*timestamps: int) -> list[RecordSpec]:
    return [RecordSpec(ts, key=str(i + 1).encode(), value=b"v") for i, ts in enumerate(timestamps)]


def topic(profile: Profile, magic: int = 2, **kwargs: object) -> TopicConfig:
    """A topic for `profile` whose log stores `magic` (CNV-3: only pre-IBP-3.0 profiles honour it)."""
    return TopicConfig(message_format_magic=magic, **kwargs)  # type: ignore[arg-type]


def profile_for(magic: int) -> Profile:
    return K2_8 if magic < 2 else K4_0


def bounded(profile: Profile, magic: int, bound: int, **kwargs: object) -> TopicConfig:
    """before = after = `bound`, written in the profile's config vocabulary (VAL-6)."""
    if profile.has_before_after_configs:
        return topic(profile, magic, before_max_ms=bound, after_max_ms=bound, **kwargs)
    return topic(profile, magic, difference_max_ms=bound, **kwargs)


def accept(
    batches: tuple[AnyBatch, ...] | list[AnyBatch],
    config: TopicConfig,
    profile: Profile,
    now: int = NOW,
    next_offset: int = 0,
    **kwargs: object,
) -> ValidatedAppend:
    out = validate_and_assign(
        batches, config=config, profile=profile, now=now, next_offset=next_offset, **kwargs
    )  # type: ignore[arg-type]
    assert isinstance(out, ValidatedAppend), f"expected the append to be accepted, got {out}"
    return out


def reject(
    batches: tuple[AnyBatch, ...] | list[AnyBatch],
    config: TopicConfig,
    profile: Profile,
    now: int = NOW,
    **kwargs: object,
) -> AppendRejected:
    out = validate_and_assign(batches, config=config, profile=profile, now=now, next_offset=0, **kwargs)  # type: ignore[arg-type]
    assert isinstance(out, AppendRejected), f"expected the append to be rejected, got {out}"
    return out


def size(batches: tuple[AnyBatch, ...] | list[AnyBatch]) -> int:
    return sum(encoded_size(b) for b in batches)


def read_ts(batches: tuple[AnyBatch, ...]) -> list[int]:
    return [r.timestamp for r in all_records(batches)]


# --------------------------------------------------------------------------------------------
# TV-17 .. TV-27


@pytest.mark.vector("TV-17")
@pytest.mark.parametrize(("magic", "shallow"), [(1, 1), (2, 2)])
def test_tv17_create_time_uncompressed_in_place(magic: int, shallow: int) -> None:
    """TV-17 (CMP-2, CMP-7): in place, timestamps unchanged, max now+1, shallow offset per magic."""
    profile = profile_for(magic)
    batches = build_batches(specs(NOW - 1, NOW + 1, NOW), magic=magic)
    out = accept(batches, bounded(profile, magic, 1000), profile)
    assert out.path is ValidationPath.IN_PLACE_UNCOMPRESSED
    assert read_ts(out.batches) == [NOW - 1, NOW + 1, NOW]
    assert out.max_timestamp == NOW + 1
    assert out.offset_of_max_timestamp == shallow
    assert size(out.batches) == size(batches)
    assert (out.first_offset, out.last_offset, out.records_converted) == (0, 2, 0)


@pytest.mark.vector("TV-18")
@pytest.mark.parametrize("magic", [1, 2])
def test_tv18_compressed_same_codec_stays_in_place(magic: int) -> None:
    """TV-18 (CMP-1): gzip in, gzip topic: in place, max now+1, shallow 2, size unchanged, 0 converted."""
    profile = profile_for(magic)
    batches = build_batches(specs(NOW - 1, NOW + 1, NOW), magic=magic, codec=Codec.GZIP)
    out = accept(batches, bounded(profile, magic, 1000), profile)
    assert out.path is ValidationPath.IN_PLACE_COMPRESSED
    assert out.max_timestamp == NOW + 1
    assert out.offset_of_max_timestamp == 2
    assert size(out.batches) == size(batches)
    assert out.records_converted == 0


@pytest.mark.vector("TV-18")
@pytest.mark.parametrize("magic", [1, 2])
def test_tv18_uncompressed_into_gzip_topic_is_rebuilt(magic: int) -> None:
    """TV-18 (CMP-1, CMP-5): uncompressed in, topic gzip: one rebuilt batch, timestamps kept, 3 converted."""
    profile = profile_for(magic)
    batches = build_batches(specs(NOW - 1, NOW + 1, NOW), magic=magic)
    out = accept(batches, bounded(profile, magic, 1000, compression_type="gzip"), profile)
    assert out.path is ValidationPath.REBUILD
    assert len(out.batches) == 1 and out.batches[0].codec is Codec.GZIP
    assert read_ts(out.batches) == [NOW - 1, NOW + 1, NOW]
    assert out.max_timestamp == NOW + 1
    assert out.offset_of_max_timestamp == 2
    assert out.records_converted == 3


@pytest.mark.vector("TV-19")
@pytest.mark.parametrize(("magic", "max_ts", "shallow"), [(0, -1, -1), (1, NOW, 0), (2, NOW, 2)])
def test_tv19_log_append_time_uncompressed(magic: int, max_ts: int, shallow: int) -> None:
    """TV-19 (CMP-3, CMP-6, CMP-7): v0 max -1; v1/v2 every record reads now; v2 keeps BaseTimestamp."""
    profile = profile_for(magic)
    batches = build_batches(specs(1234, 1234, 1234), magic=magic)
    out = accept(batches, topic(profile, magic, timestamp_type=LAT), profile)
    assert out.path is ValidationPath.IN_PLACE_UNCOMPRESSED
    assert (out.max_timestamp, out.offset_of_max_timestamp) == (max_ts, shallow)
    assert read_ts(out.batches) == [-1 if magic == 0 else NOW] * 3
    if magic == 2:
        (batch,) = out.batches
        assert isinstance(batch, DefaultBatch)
        assert batch.base_timestamp == 1234 and batch.max_timestamp == NOW
        assert batch.timestamp_type is LAT
    assert size(out.batches) == size(batches)


@pytest.mark.vector("TV-20")
@pytest.mark.parametrize("magic", [1, 2])
def test_tv20_log_append_time_gzip_in_place(magic: int) -> None:
    """TV-20 (CMP-3, CMP-8): in place; all records read now; v2 BaseTimestamp still 1234; shallow 2."""
    profile = profile_for(magic)
    batches = build_batches(specs(1234, 1234, 1234), magic=magic, codec=Codec.GZIP)
    out = accept(batches, topic(profile, magic, timestamp_type=LAT), profile)
    assert out.path is ValidationPath.IN_PLACE_COMPRESSED
    assert read_ts(out.batches) == [NOW] * 3
    assert out.offset_of_max_timestamp == 2 and out.max_timestamp == NOW
    (batch,) = out.batches
    if isinstance(batch, DefaultBatch):
        assert batch.base_timestamp == 1234
    else:
        # CMP-3 / CMP-8: only the wrapper gets `now`; inner stored values keep the producer's.
        assert [e.message.timestamp for e in batch.message.inner] == [1234] * 3
    assert size(out.batches) == size(batches)


@pytest.mark.vector("TV-21")
@pytest.mark.parametrize(("magic", "profile"), [(1, K2_8), (2, K3_9)])
def test_tv21_log_append_time_rebuilt_from_v0(magic: int, profile: Profile) -> None:
    """TV-21 (CMP-4, CNV-4): v0 gzip into a v1/v2 LogAppendTime topic: rebuilt, all read now."""
    batches = build_legacy(specs(-1, -1, -1), magic=0, codec=Codec.GZIP)
    out = accept(batches, topic(profile, magic, timestamp_type=LAT), profile)
    assert out.path is ValidationPath.REBUILD
    assert read_ts(out.batches) == [NOW] * 3
    assert (out.max_timestamp, out.offset_of_max_timestamp, out.records_converted) == (NOW, 2, 3)
    (batch,) = out.batches
    if isinstance(batch, DefaultBatch):
        assert batch.base_timestamp == -1
    else:
        # CMP-4: a rebuilt v1 wrapper writes `now` into every inner message too.
        assert [e.message.timestamp for e in batch.message.inner] == [NOW] * 3


@pytest.mark.vector("TV-22")
@pytest.mark.parametrize(("magic", "profile"), [(1, K2_8), (2, K3_9)])
def test_tv22_create_time_up_conversion_from_v0(magic: int, profile: Profile) -> None:
    """TV-22 (CNV-4): v0 gzip into a v1/v2 CreateTime topic: max -1, BaseTimestamp -1, shallow -1."""
    batches = build_legacy(specs(-1, -1, -1), magic=0, codec=Codec.GZIP)
    out = accept(batches, topic(profile, magic), profile)
    assert (out.max_timestamp, out.offset_of_max_timestamp) == (-1, -1)
    (batch,) = out.batches
    assert batch.timestamp_type is CT
    assert batch.magic == magic
    if isinstance(batch, DefaultBatch):
        assert batch.base_timestamp == -1


@pytest.mark.vector("TV-22")
def test_tv22_create_time_up_conversion_v1_to_v2() -> None:
    """TV-22 (CNV-4): v1 gzip ts X into v2: max X, shallow 2, 3 converted."""
    x = NOW - 5
    batches = build_legacy(specs(x, x, x), magic=1, codec=Codec.GZIP)
    out = accept(batches, topic(K3_9), K3_9)
    assert (out.max_timestamp, out.offset_of_max_timestamp, out.records_converted) == (x, 2, 3)
    assert read_ts(out.batches) == [x] * 3


@pytest.mark.vector("TV-23")
@pytest.mark.parametrize("magic", [1, 2])
@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP])
def test_tv23_past_timestamp_rejected(magic: int, codec: Codec) -> None:
    """TV-23 (VAL-4/5, VAL-9): ts = now - 1001 with bounds 1000 → INVALID_TIMESTAMP, nothing written."""
    profile = profile_for(magic)
    batches = build_batches(specs(NOW - 1001), magic=magic, codec=codec)
    out = reject(batches, bounded(profile, magic, 1000), profile)
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    assert out.error_message == TIMESTAMP_REJECTED_TEXT
    assert [e.batch_index for e in out.record_errors] == [0]


@pytest.mark.vector("TV-23")
def test_tv23_v2_gzip_converted_to_v1_has_three_record_errors() -> None:
    """TV-23 (VAL-9, VAL-11): a v2 gzip batch of 3 out-of-range records for a v1 topic → 3 errors."""
    batches = [build_v2(specs(NOW - 1001, NOW - 1001, NOW - 1001), codec=Codec.GZIP)]
    out = reject(batches, bounded(K2_8, 1, 1000), K2_8)
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    assert [e.batch_index for e in out.record_errors] == [0, 1, 2]


@pytest.mark.vector("TV-24")
@pytest.mark.parametrize("profile", [K3_9, K4_0])
@pytest.mark.parametrize("delta", [-(24 * 3600_000 + 300_000), 3600_000 + 300_000])
def test_tv24_kip937_before_and_after(profile: Profile, delta: int) -> None:
    """TV-24 (VAL-4, KIP-937): before = 24 h, after = 1 h; 5 minutes beyond either side → 3 errors."""
    config = topic(profile, before_max_ms=24 * 3600_000, after_max_ms=3600_000)
    out = reject([build_v2(specs(NOW + delta, NOW + delta, NOW + delta))], config, profile)
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    assert len(out.record_errors) == 3


@pytest.mark.vector("TV-25")
def test_tv25_magic_mismatches_and_timestamp_error_in_one_wrapper() -> None:
    """TV-25 (VAL-9): now = 0, v1 gzip wrapper with one v1 record ts 1200 and five v0 records, v0
    topic: 6 record errors, the timestamp one wins the code."""
    inner = (
        LegacyBatch(offset=0, message=LegacyMessage(magic=1, timestamp=1200, key=b"k", value=b"v")),
        *(LegacyBatch(offset=i, message=LegacyMessage(magic=0, key=b"k", value=b"v")) for i in range(1, 6)),
    )
    wrapper = LegacyBatch(
        offset=5, message=LegacyMessage(magic=1, attributes=int(Codec.GZIP), timestamp=1200, inner=inner)
    )
    out = reject([wrapper], bounded(K2_8, 0, 1000), K2_8, now=0)
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    assert out.error_message == TIMESTAMP_REJECTED_TEXT
    assert [e.batch_index for e in out.record_errors] == [0, 1, 2, 3, 4, 5]
    assert out.record_errors[0].message == (
        "Timestamp 1200 of message with offset 0 is out of range. "
        "The timestamp should be within [-1000, 1000]"
    )
    for error in out.record_errors[1:]:
        assert error.message is not None
        assert error.message.startswith("Record LegacyRecordBatch(offset=")
        assert "'s magic does not match outer magic 1 in topic partition" in error.message


@pytest.mark.vector("TV-26")
@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP])
def test_tv26_builder_info_log_append_time(magic: int, codec: Codec) -> None:
    """TV-26 (CMP-4, CMP-6): what the builder reports on the rebuilding paths, LogAppendTime L:
    max L for every magic (even v0); shallow 0 for uncompressed v0/v1, else 2; v1/v2 records read L."""
    profile = profile_for(magic)
    out = accept(_builder_source(magic, codec, 0, 2, 1), _builder_topic(profile, magic, codec, LAT), profile)
    assert out.path in (ValidationPath.CONVERT, ValidationPath.REBUILD)
    assert out.max_timestamp == NOW
    assert out.offset_of_max_timestamp == (0 if codec is Codec.NONE and magic < 2 else 2)
    assert read_ts(out.batches) == [-1 if magic == 0 else NOW] * 3


@pytest.mark.vector("TV-26")
@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP])
def test_tv26_builder_info_create_time(magic: int, codec: Codec) -> None:
    """TV-26 (CMP-5, CMP-7): CreateTime ts 0, 2, 1: max 2 (v0: -1); shallow 1 for uncompressed v1,
    -1 for v0, else 2."""
    profile = profile_for(magic)
    out = accept(_builder_source(magic, codec, 0, 2, 1), _builder_topic(profile, magic, codec, CT), profile)
    assert out.path in (ValidationPath.CONVERT, ValidationPath.REBUILD)
    if magic == 0:
        assert (out.max_timestamp, out.offset_of_max_timestamp) == (-1, -1)
    else:
        shallow = 1 if (codec is Codec.NONE and magic == 1) else 2
        assert (out.max_timestamp, out.offset_of_max_timestamp) == (2, shallow)
        assert read_ts(out.batches) == [0, 2, 1]


def _builder_source(magic: int, codec: Codec, *ts: int) -> tuple[AnyBatch, ...]:
    # A source the validator must rebuild into (magic, codec): another magic when the target is
    # uncompressed (CONVERT), uncompressed records for a compressed topic otherwise (REBUILD).
    if codec is Codec.NONE:
        return build_batches(specs(*ts), magic=1 if magic != 1 else 2)
    return build_batches(specs(*ts), magic=magic)


def _builder_topic(profile: Profile, magic: int, codec: Codec, ts_type: TimestampType) -> TopicConfig:
    return topic(profile, magic, timestamp_type=ts_type, compression_type=codec.name.lower())


def _tv27_batches(codec: Codec) -> list[DefaultBatch]:
    control = CONTROL_MASK | TRANSACTIONAL_MASK
    marker = Record(
        offset_delta=0, timestamp_delta=0, key=b"\x00\x00\x00\x00", value=b"\x00\x00\x00\x00\x00\x00"
    )
    return [
        build_v2([RecordSpec(10, key=b"1", value=b"a")], codec=codec, timestamp_type=LAT, log_append_time=10),
        DefaultBatch(
            base_offset=1,
            attributes=control,
            base_timestamp=11,
            max_timestamp=11,
            producer_id=7,
            producer_epoch=0,
            records_=(marker,),
        ),
        build_v2(
            [RecordSpec(12, key=b"2", value=b"b"), RecordSpec(13, key=b"3", value=b"c")],
            base_offset=2,
            codec=codec,
        ),
        DefaultBatch(
            base_offset=4,
            attributes=control,
            base_timestamp=14,
            max_timestamp=14,
            producer_id=7,
            producer_epoch=0,
            records_=(replace(marker, key=b"\x00\x00\x00\x01"),),
        ),
    ]


@pytest.mark.vector("TV-27")
@pytest.mark.parametrize(("codec", "types"), [(Codec.GZIP, [LAT, CT]), (Codec.NONE, [LAT, CT, CT])])
def test_tv27_down_conversion_mixed_create_and_log_append_time(
    codec: Codec, types: list[TimestampType]
) -> None:
    """TV-27 (CNV-5, 3.8): markers dropped; compressed → one wrapper per batch; uncompressed → one
    entry per record; keys and timestamps preserved; type per batch."""
    out = down_convert(_tv27_batches(codec), to_magic=1, fetch_offset=0)
    assert [b.magic for b in out] == [1] * len(types)
    assert [b.timestamp_type for b in out] == types
    records = all_records(out)
    assert [r.key for r in records] == [b"1", b"2", b"3"]
    assert [r.offset for r in records] == [0, 2, 3]
    assert [r.timestamp for r in records] == [10, 12, 13]
    # The same through a 3.8/3.9 broker's Fetch v3 (CNV-2: v2-3 read magic 1).
    error, view = fetch_view(_tv27_batches(codec), fetch_version=3, profile=K3_9, config=TopicConfig())
    assert (error, view) == (ErrorCode.NONE, out)


@pytest.mark.vector("TV-27")
def test_tv27_zstd_cannot_be_down_converted() -> None:
    """TV-27 (CNV-5): zstd → UnsupportedCompressionTypeException with the exact text."""
    with pytest.raises(DownConversionError) as info:
        down_convert(_tv27_batches(Codec.ZSTD), to_magic=1, fetch_offset=0)
    assert info.value.error is ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert (
        str(info.value)
        == ZSTD_DOWN_CONVERSION_TEXT
        == ("Down-conversion of zstandard-compressed batches is not supported")
    )
    error, view = fetch_view(_tv27_batches(Codec.ZSTD), fetch_version=3, profile=K3_9, config=TopicConfig())
    assert (error, view) == (ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, ())


# --------------------------------------------------------------------------------------------
# VAL-7: per-record out-of-range text per ErrorTextStyle


def test_val7_text_3_6_before_after() -> None:
    out = reject([build_v2(specs(NOW, NOW + 1001))], bounded(K4_0, 2, 1000), K4_0)
    assert out.record_errors == (
        RecordError(
            1,
            (
                f"Timestamp {NOW + 1001} of message with offset 1 is out of range. "
                f"The timestamp should be within [{NOW - 1000}, {NOW + 1000}]"
            ),
        ),
    )


def test_val7_text_0_11_symmetric_difference() -> None:
    batches = build_legacy(specs(NOW, NOW - 2000), magic=1, codec=Codec.GZIP)
    out = reject(batches, bounded(K2_8, 1, 500), K2_8)
    assert out.record_errors == (
        RecordError(
            1,
            (
                f"Timestamp {NOW - 2000} of message with offset 1 is out of range. "
                f"The timestamp should be within [{NOW - 500}, {NOW + 500}]"
            ),
        ),
    )


def test_val7_text_0_10_has_no_offset_and_no_closing_bracket() -> None:
    # 0.10 reports no record errors on the wire (VAL-11): the text is the exception's.
    out = reject(build_legacy(specs(NOW + 600), magic=1), bounded(K0_10, 1, 500), K0_10)
    assert (out.error, out.error_message, out.record_errors) == (ErrorCode.INVALID_TIMESTAMP, None, ())
    assert out.detail == (
        f"Timestamp {NOW + 600} of message is out of range. "
        f"The timestamp should be within [{NOW - 500}, {NOW + 500}"
    )


def test_val7_printed_bounds_wrap_around_with_default_long_max() -> None:
    """VAL-7 [DERIVED]: 3.9 with only before set: after falls back to difference = Long.MAX_VALUE,
    and now + Long.MAX_VALUE is printed after 64-bit wraparound (a large negative number)."""
    out = reject([build_v2(specs(NOW - 5000))], topic(K3_9, before_max_ms=1000), K3_9)
    wrapped_high = NOW + LONG_MAX - (1 << 64)
    assert wrapped_high < 0
    assert out.record_errors[0].message == (
        f"Timestamp {NOW - 5000} of message with offset 0 is out of range. "
        f"The timestamp should be within [{NOW - 1000}, {wrapped_high}]"
    )


def test_val4_long_min_is_rejected_as_future_with_finite_after() -> None:
    """VAL-4 overflow note: ts = Long.MIN_VALUE is about 2^63 "in the future" after wraparound."""
    out = reject([build_v2(specs(-(1 << 63)))], topic(K4_0), K4_0)
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    assert reject([build_v2(specs(-(1 << 63)))], topic(K2_8, difference_max_ms=1000), K2_8).record_errors
    # [DERIVED] A distance of exactly Long.MIN_VALUE (ts = Long.MIN_VALUE + now) is negative both
    # ways on Java longs, and Java's abs(Long.MIN_VALUE) stays negative (VAL-5): never rejected.
    wrapping = -(1 << 63) + NOW
    accept([build_v2(specs(wrapping))], topic(K4_0, before_max_ms=1000), K4_0)
    accept([build_v2(specs(wrapping))], topic(K2_8, difference_max_ms=1000), K2_8)


# --------------------------------------------------------------------------------------------
# VAL-8: the producer-set LogAppendTime flag, per profile


def _lat_flagged_v2(*ts: int, max_ts: int) -> DefaultBatch:
    return replace(build_v2(specs(*ts)), max_timestamp=max_ts).with_header(
        timestamp_type=LAT, max_timestamp=max_ts
    )


@pytest.mark.parametrize("profile", [K0_10, K2_8])
def test_val8_flag_always_rejected_before_3_6(profile: Profile) -> None:
    batches = build_legacy(specs(NOW), magic=1, timestamp_type=LAT, log_append_time=NOW)
    out = reject(batches, topic(profile, 1), profile)
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    message = LegacyMessage(magic=1, attributes=8, timestamp=NOW, key=b"1", value=b"v")
    # 0.10 carries no record errors (VAL-11): the record text is only the exception's.
    text = out.record_errors[0].message if out.record_errors else out.detail
    assert text == (
        f"Invalid timestamp type in message LegacyRecordBatch(offset=0, Record(magic=1, attributes=8, "
        f"compression=none, crc={legacy_crc(message)}, LogAppendTime={NOW}, key=1 bytes, value=1 bytes)). "
        "Producer should not set timestamp type to LogAppendTime."
    )


@pytest.mark.parametrize("profile", [K3_9, K4_0])
def test_val8_flag_accepted_on_create_time_topic_in_range_since_3_6(profile: Profile) -> None:
    """VAL-8 [DISAGREE DIS-8]: accepted; in place the type becomes CreateTime and records then read
    BaseTimestamp + delta, values that were never validated."""
    batch = _lat_flagged_v2(5, 6, max_ts=NOW)
    out = accept([batch], topic(profile), profile)
    (stored,) = out.batches
    assert stored.timestamp_type is CT and stored.max_timestamp == NOW
    assert read_ts(out.batches) == [5, 6]
    assert out.max_timestamp == NOW


def test_val8_flag_accepted_then_rebuilt_gives_every_record_the_max() -> None:
    out = accept([_lat_flagged_v2(5, 6, max_ts=NOW)], topic(K4_0, compression_type="gzip"), K4_0)
    assert out.path is ValidationPath.REBUILD
    assert read_ts(out.batches) == [NOW, NOW]
    assert out.batches[0].timestamp_type is CT


@pytest.mark.parametrize(
    ("config", "max_ts", "expected_start"),
    [
        (topic(K4_0, timestamp_type=LAT), NOW, "Invalid timestamp type in message DefaultRecord(offset=0, "),
        (topic(K4_0), -1, "Invalid timestamp type in message DefaultRecord(offset=0, timestamp=-1, "),
        (
            topic(K4_0, after_max_ms=10),
            NOW + 11,
            f"Timestamp {NOW + 11} of message with offset 0 is out of range",
        ),
    ],
)
def test_val8_flag_rejected_on_3_6_elsewhere(config: TopicConfig, max_ts: int, expected_start: str) -> None:
    """VAL-8, 3.6+: LogAppendTime topic → flag error; CreateTime topic with records reading -1 → flag
    error; out of range → the range error."""
    out = reject([_lat_flagged_v2(5, 6, max_ts=max_ts)], config, K4_0)
    assert out.error is ErrorCode.INVALID_TIMESTAMP
    first = out.record_errors[0].message
    assert first is not None and first.startswith(expected_start)
    if "Invalid timestamp type" in expected_start:
        assert first == (
            f"Invalid timestamp type in message DefaultRecord(offset=0, timestamp={max_ts}, key=1 bytes, "
            "value=1 bytes). Producer should not set timestamp type to LogAppendTime."
        )


# --------------------------------------------------------------------------------------------
# VAL-9 / VAL-11: top-level texts and record errors per profile


def test_val9_invalid_record_text_since_3_2() -> None:
    batch = build_v2([RecordSpec(NOW, key=None, value=b"v") for _ in range(4)])
    out = reject([batch], topic(K4_0, compacted=True), K4_0, topic_partition="t-3")
    text = "Compacted topic cannot accept message without key in topic partition t-3"
    assert out.error is ErrorCode.INVALID_RECORD
    assert out.record_errors == tuple(RecordError(i, text) for i in range(4))
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{text}')" for i in range(3))
    assert out.error_message == (
        "One or more records have been rejected due to 4 record errors in total, "
        f"and only showing the first three errors at most: [{shown}]"
    )


def test_val9_invalid_record_text_2_5_to_3_1() -> None:
    out = reject([build_v2([RecordSpec(NOW, key=None)])], topic(K2_8, compacted=True), K2_8)
    assert (out.error, out.error_message) == (ErrorCode.INVALID_RECORD, RECORDS_REJECTED_TEXT_2_5)


def test_val9_timestamp_error_wins_the_code_and_text() -> None:
    batch = build_v2([RecordSpec(NOW, key=None), RecordSpec(NOW + 7200_000, key=b"k")])
    out = reject([batch], topic(K4_0, compacted=True), K4_0)
    assert (out.error, out.error_message) == (ErrorCode.INVALID_TIMESTAMP, TIMESTAMP_REJECTED_TEXT)
    assert [e.batch_index for e in out.record_errors] == [0, 1]


def test_val11_kafka_2_4_reports_only_the_first_record_with_null_message() -> None:
    batches = [build_v2(specs(NOW, NOW - 2000, NOW - 3000))]
    out = reject(batches, bounded(K2_4, 2, 1000), K2_4)
    text = (
        f"Timestamp {NOW - 2000} of message with offset 1 is out of range. "
        f"The timestamp should be within [{NOW - 1000}, {NOW + 1000}]"
    )
    assert (out.error, out.error_message, out.record_errors) == (
        ErrorCode.INVALID_TIMESTAMP,
        text,
        (RecordError(1, None),),
    )


def test_val9_inner_crc_is_corrupt_message_without_record_errors() -> None:
    (wrapper,) = build_legacy(specs(NOW, NOW), magic=1, codec=Codec.GZIP)
    bad_inner = replace(wrapper.message.inner[1], message=replace(wrapper.message.inner[1].message, crc=1))
    corrupt = replace(wrapper, message=replace(wrapper.message, inner=(wrapper.message.inner[0], bad_inner)))
    out = reject([corrupt], topic(K2_8, 1), K2_8)
    assert (out.error, out.error_message, out.record_errors) == (ErrorCode.CORRUPT_MESSAGE, None, ())


def test_val9_corrupt_record_after_a_timestamp_error_depends_on_the_profile() -> None:
    """2.5+ scans the whole batch, so a later corrupt inner record throws CORRUPT_MESSAGE; before,
    the first failing record was thrown at once."""
    (wrapper,) = build_legacy(specs(NOW - 5000, NOW), magic=1, codec=Codec.GZIP)
    bad_inner = replace(wrapper.message.inner[1], message=replace(wrapper.message.inner[1].message, crc=1))
    corrupt = [
        replace(wrapper, message=replace(wrapper.message, inner=(wrapper.message.inner[0], bad_inner)))
    ]
    assert reject(corrupt, bounded(K2_8, 1, 1000), K2_8).error is ErrorCode.CORRUPT_MESSAGE
    assert reject(corrupt, bounded(K0_10, 1, 1000), K0_10).error is ErrorCode.INVALID_TIMESTAMP


def _with_compressed_inner(wrapper: LegacyBatch, index: int) -> LegacyBatch:
    """`wrapper` with inner message `index` carrying the gzip codec bits itself."""
    inner = list(wrapper.message.inner)
    message = inner[index].message
    inner[index] = replace(inner[index], message=replace(message, attributes=message.attributes | int(Codec.GZIP)))
    return replace(wrapper, message=replace(wrapper.message, inner=tuple(inner)))


@pytest.mark.parametrize("magic", [0, 1])
def test_val9_compressed_inner_message_stops_the_legacy_iterator(magic: int) -> None:
    """VAL-9: Kafka's AbstractLegacyRecordBatch.DeepRecordsIterator.makeNext throws InvalidRecordException "Inner
    messages must not be compressed" when it reaches an inner message with codec bits (3.9:
    AbstractLegacyRecordBatch.java 408-409), before LogValidator.validateRecordCompression could see it: a
    batch-level INVALID_RECORD without error_message or record_errors, which beats the record errors collected
    for earlier messages (2.5+ processes them after the loop). In 2.4 the first failing record is thrown before
    the iterator gets there."""
    (wrapper,) = build_legacy(specs(NOW - 10 * 3_600_000, NOW, NOW), magic=magic, codec=Codec.GZIP)
    sent = [_with_compressed_inner(wrapper, 1)]
    expected = AppendRejected(ErrorCode.INVALID_RECORD, None, (), "Inner messages must not be compressed")
    assert reject(sent, bounded(K3_9, 2, 3_600_000), K3_9) == expected
    assert reject(sent, bounded(K2_8, magic, 3_600_000), K2_8) == expected
    if magic == 1:  # a v0 message has no timestamp to fail (VAL-3)
        assert reject(sent, bounded(K2_4, 1, 3_600_000), K2_4).error is ErrorCode.INVALID_TIMESTAMP


def test_val9_corrupt_inner_message_before_a_compressed_one_is_corrupt_message() -> None:
    """VAL-9: the messages before the compressed one were validated, so a corrupt one among them throws first
    (LogValidator.validateRecord: CorruptRecordException)."""
    (wrapper,) = build_legacy(specs(NOW, NOW), magic=1, codec=Codec.GZIP)
    bad = replace(wrapper.message.inner[0], message=replace(wrapper.message.inner[0].message, crc=1))
    corrupt_first = replace(wrapper, message=replace(wrapper.message, inner=(bad, wrapper.message.inner[1])))
    sent = _with_compressed_inner(corrupt_first, 1)
    assert reject([sent], topic(K3_9), K3_9).error is ErrorCode.CORRUPT_MESSAGE


def test_val9_compressed_inner_message_over_the_wire_is_invalid_record() -> None:
    """VAL-9 through Produce v2 bytes on a kafka-3.9 cluster: INVALID_RECORD (87), nothing written."""
    (wrapper,) = build_legacy(specs(NOW, NOW), magic=1, codec=Codec.GZIP)
    cluster = Cluster(profile=K3_9, start_time=NOW)
    cluster.create_topic("t", topic(K3_9))
    answer = cluster.produce_bytes("t", 0, encode_batches([_with_compressed_inner(wrapper, 0)]), produce_version=2)
    assert (answer.error, answer.error_message, answer.record_errors) == (ErrorCode.INVALID_RECORD, None, ())
    assert cluster.fetch("t", 0, 0).batches == ()


def test_val9_shallow_crc_is_corrupt_message() -> None:
    batch = replace(build_v2(specs(NOW)), crc=12345)
    out = reject([batch], topic(K4_0), K4_0)
    assert (out.error, out.error_message, out.record_errors) == (ErrorCode.CORRUPT_MESSAGE, None, ())


def test_val10_legacy_multi_batch_first_failing_batch_aborts() -> None:
    batches = build_legacy(specs(NOW, NOW - 5000, NOW - 6000), magic=1)
    out = reject(batches, bounded(K2_8, 1, 1000), K2_8)
    assert [
        (e.batch_index, e.message is not None and str(NOW - 5000) in e.message) for e in out.record_errors
    ] == [(0, True)]


def test_val10_v2_must_be_exactly_one_batch() -> None:
    batches = [build_v2(specs(NOW)), build_v2(specs(NOW))]
    out = reject(batches, topic(K4_0), K4_0)
    assert (out.error, out.error_message, out.detail) == (
        ErrorCode.INVALID_RECORD,
        None,
        MULTIPLE_BATCHES_TEXT,
    )


# --------------------------------------------------------------------------------------------
# VAL-1, VAL-12, VAL-14, CNV-1, CNV-6, VAL-15


def test_val1_replication_never_reaches_the_validator() -> None:
    with pytest.raises(ValueError, match="VAL-1"):
        validate_and_assign(
            [build_v2(specs(NOW))],
            config=topic(K4_0),
            profile=K4_0,
            now=NOW,
            next_offset=0,
            origin=AppendOrigin.REPLICATION,
        )


def test_val1_raft_leader_appends_skip_the_timestamp_check() -> None:
    batch = replace(build_v2(specs(0), base_offset=7), partition_leader_epoch=3)
    out = accept(
        [batch],
        topic(K4_0, after_max_ms=0, before_max_ms=0),
        K4_0,
        leader_epoch=3,
        origin=AppendOrigin.RAFT_LEADER,
    )
    assert out.batches == (batch,) and out.path is ValidationPath.UNVALIDATED
    assert (out.first_offset, out.last_offset) == (7, 7)


def test_val1_coordinator_appends_are_validated() -> None:
    out = reject([build_v2(specs(0))], topic(K4_0, before_max_ms=10), K4_0, origin=AppendOrigin.COORDINATOR)
    assert out.error is ErrorCode.INVALID_TIMESTAMP


@pytest.mark.parametrize(("ts_type", "expected"), [(LAT, NOW), (CT, -1)])
def test_val12_log_append_time_in_the_response(ts_type: TimestampType, expected: int) -> None:
    out = accept([build_v2(specs(NOW - 3))], topic(K4_0, timestamp_type=ts_type), K4_0, next_offset=40)
    assert out.log_append_time == expected
    assert (out.first_offset, out.last_offset) == (40, 40)


@pytest.mark.parametrize(("version", "magic"), [(0, 0), (1, 0), (2, 1), (3, 2), (12, 2)])
def test_cnv1_produce_version_to_magic(version: int, magic: int) -> None:
    assert produce_magic_for_version(version) == magic


def test_val14_produce_v3_requires_magic_2() -> None:
    out = check_produce_request(build_legacy(specs(NOW), magic=1), produce_version=5, profile=K3_9)
    assert out == AppendRejected(
        ErrorCode.INVALID_RECORD,
        None,
        (),
        "Produce requests with version 5 are only allowed to contain record batches with magic version 2",
    )


def test_val14_produce_v3_requires_exactly_one_batch() -> None:
    out = check_produce_request([build_v2(specs(NOW)), build_v2(specs(NOW))], produce_version=9, profile=K4_0)
    assert out is not None and out.error is ErrorCode.INVALID_RECORD


def _zstd_wrapper(magic: int) -> LegacyBatch:
    """A v0/v1 wrapper whose codec bits say zstd (its value stays gzip: Kafka refuses it before decompressing)."""
    (wrapper,) = build_legacy(specs(NOW - 1, NOW), magic=magic, codec=Codec.GZIP)
    return replace(wrapper, message=replace(wrapper.message, attributes=int(Codec.ZSTD)))


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("ts_type", [CT, LAT])
@pytest.mark.parametrize("profile", [K2_8, K3_9])
def test_fmt4_zstd_legacy_wrapper_is_invalid_record(magic: int, ts_type: TimestampType, profile: Profile) -> None:
    """FMT-4 (KIP-110): Produce v0-v2 do not check the codec (ProduceRequest.validateRecords is v3+), so a v0/v1
    wrapper with codec zstd reaches LogValidator.validateMessagesAndAssignOffsetsCompressed; after validateBatch,
    batch.streamingIterator builds AbstractLegacyRecordBatch.DeepRecordsIterator, whose constructor throws
    InvalidRecordException "Invalid wrapper compressionType found in legacy deep record iterator <wrapper magic>"
    (Kafka 2.1+, KAFKA-4514; 3.9: AbstractLegacyRecordBatch.java 329-330). ReplicaManager.appendToLocalLog answers
    it as any Throwable: INVALID_RECORD (87), no error_message, no record_errors; nothing is written. Only
    Produce v3-v6 answer UNSUPPORTED_COMPRESSION_TYPE, and for a magic 2 batch (ProduceRequest.java:239)."""
    sent = [_zstd_wrapper(magic)]
    assert check_produce_request(sent, produce_version=2, profile=profile) is None
    config = TopicConfig(timestamp_type=ts_type)
    text = f"Invalid wrapper compressionType found in legacy deep record iterator {magic}"
    assert reject(sent, config, profile) == AppendRejected(ErrorCode.INVALID_RECORD, None, (), text)
    cluster = Cluster(profile=profile, start_time=NOW)
    cluster.create_topic("t", config)
    answer = cluster.produce_bytes("t", 0, encode_batches(sent), produce_version=2)
    assert (answer.error, answer.error_message, answer.record_errors) == (ErrorCode.INVALID_RECORD, None, ())
    assert cluster.fetch("t", 0, 0).batches == ()


def test_fmt4_zstd_stays_unsupported_compression_type_for_v2_batches_at_produce_v3_to_v6() -> None:
    """FMT-4 / VAL-14: the request-level refusal is for a magic 2 zstd batch before Produce v7; a legacy one at
    v3+ is refused earlier for its magic (INVALID_RECORD)."""
    v2 = build_v2(specs(NOW), codec=Codec.ZSTD)
    assert check_produce_request([v2], produce_version=6, profile=K3_9) == AppendRejected(
        ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
        None,
        (),
        "Produce requests with version 6 are not allowed to use ZStandard compression",
    )
    refused = check_produce_request([_zstd_wrapper(1)], produce_version=6, profile=K3_9)
    assert refused is not None and refused.error is ErrorCode.INVALID_RECORD


def test_cnv1_old_produce_versions_accept_any_magic_before_4_0_and_are_gone_in_4_0() -> None:
    """CNV-1/CNV-7: Kafka 4.0 lists Produce v0-v2 in ApiVersions (KAFKA-18659) but its network layer closes the
    connection on them (Processor.parseRequestHeader: UnsupportedVersionException; observed on 4.0.2 and
    4.4.0): no answer, which a client reads as NETWORK_EXCEPTION, not an UNSUPPORTED_VERSION response."""
    assert check_produce_request([build_v2(specs(NOW))], produce_version=2, profile=K3_9) is None
    out = check_produce_request([build_v2(specs(NOW))], produce_version=2, profile=K4_0)
    assert out is not None and out.error is ErrorCode.NETWORK_EXCEPTION is NOT_SERVED


def test_val14_client_v2_base_offset_must_be_zero() -> None:
    batch = build_v2(specs(NOW), base_offset=5)
    assert reject([batch], topic(K4_0), K4_0).error is ErrorCode.INVALID_RECORD
    assert (
        accept([batch], topic(K4_0), K4_0, origin=AppendOrigin.COORDINATOR, next_offset=9).first_offset == 9
    )


def _count_lie(held: int, codec: Codec = Codec.NONE, *stamps: int) -> DefaultBatch:
    """A v2 batch whose header says 3 records (RecordsCount 3, LastOffsetDelta 2: consistent with each other, so
    `validateBatch` passes) while its body holds `held` records."""
    batch = build_v2(specs(*(stamps or (NOW,) * held)), codec=codec)
    return replace(batch, records_count=3, last_offset_delta=2)


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP])
@pytest.mark.parametrize("origin", [AppendOrigin.CLIENT, AppendOrigin.COORDINATOR])
@pytest.mark.parametrize(
    ("held", "text"),
    [
        (2, "Incorrect declared batch size, premature EOF reached"),
        (4, "Incorrect declared batch size, records still remaining in file"),
    ],
)
def test_val14_records_count_must_match_the_records_held(
    codec: Codec, origin: AppendOrigin, held: int, text: str
) -> None:
    """VAL-14: Kafka's DefaultRecordBatch.RecordIterator, which LogValidator's record loop runs, throws
    InvalidRecordException when RecordsCount disagrees with the records: reading past the last one ("premature
    EOF reached") or bytes left after the declared count ("records still remaining in file"); LogValidatorTest.
    testUnmatchedNumberOfRecords. Not a RecordValidationException: INVALID_RECORD (87), no message, no
    record_errors, for client and coordinator appends (validateBatch's count checks are for clients only)."""
    out = reject([_count_lie(held, codec)], topic(K4_0), K4_0, origin=origin)
    assert out == AppendRejected(ErrorCode.INVALID_RECORD, None, (), text)


def test_val14_records_count_lie_wins_over_record_errors_from_2_5() -> None:
    """VAL-14 / VAL-9: from 2.5 LogValidator collects record errors and processes them after the loop, so the
    iterator's InvalidRecordException wins; in 2.4 the first failing record is thrown before the iterator gets
    to the missing record."""
    batch = _count_lie(2, Codec.NONE, NOW, NOW - 10 * 3_600_000)
    config = bounded(K4_0, 2, 3_600_000)
    assert reject([batch], config, K4_0).detail == "Incorrect declared batch size, premature EOF reached"
    assert reject([batch], bounded(K2_4, 2, 3_600_000), K2_4).error is ErrorCode.INVALID_TIMESTAMP


@pytest.mark.parametrize("held", [2, 4])
def test_val14_records_count_lie_over_the_wire_is_invalid_record(held: int) -> None:
    """VAL-14: over raw bytes the broker reads the header (CRC, validateBatch) before the records, so a count lie
    over whole records is INVALID_RECORD (87), as for the batch object, not CORRUPT_MESSAGE (2)."""
    cluster = Cluster(profile=K4_0, start_time=NOW)
    cluster.create_topic("t", topic(K4_0))
    data = encode_batches([_count_lie(held)])
    assert cluster.produce_bytes("t", 0, data, produce_version=9).error is ErrorCode.INVALID_RECORD


def test_cnv6_transactional_batch_into_old_format_is_unsupported() -> None:
    batch = build_v2(specs(NOW), producer_id=1, producer_epoch=0, base_sequence=0, transactional=True)
    out = reject([batch], topic(K2_8, 1), K2_8)
    assert (out.error, out.error_message) == (ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, None)


def test_cnv6_produce_side_down_conversion_to_v0_drops_timestamps() -> None:
    out = accept([build_v2(specs(NOW - 1, NOW))], topic(K2_8, 0), K2_8)
    assert out.path is ValidationPath.CONVERT
    assert [(r.timestamp, r.timestamp_type) for r in all_records(out.batches)] == [
        (-1, TimestampType.NO_TIMESTAMP_TYPE)
    ] * 2


def test_val15_negative_timestamp_accepted_in_place_refused_on_rebuild() -> None:
    batch = build_v2(specs(-5, NOW))
    stored = accept([batch], topic(K4_0), K4_0)
    assert read_ts(stored.batches) == [-5, NOW]
    out = reject([batch], topic(K4_0, compression_type="gzip"), K4_0)
    assert (out.error, out.error_message, out.record_errors) == (ErrorCode.UNKNOWN_SERVER_ERROR, None, ())
    assert out.detail == "Invalid negative timestamp -5"


def test_cnv6_headers_cannot_be_written_below_v2() -> None:
    batch = build_v2([RecordSpec(NOW, key=b"k", headers=(Header("h", b"1"),))])
    assert reject([batch], topic(K2_8, 1), K2_8).error is ErrorCode.UNKNOWN_SERVER_ERROR


# --------------------------------------------------------------------------------------------
# CNV-2, CNV-5, CNV-7: the fetch side


@pytest.mark.parametrize(("version", "magic"), [(0, 0), (1, 0), (2, 1), (3, 1), (4, 2), (17, 2)])
def test_cnv2_fetch_version_to_magic(version: int, magic: int) -> None:
    assert fetch_magic_for_version(version) == magic


def test_cnv7_4_0_serves_as_is_and_gives_no_answer_to_removed_versions() -> None:
    """CNV-7: Fetch v0-v3 (gone in 4.0) close the connection (NOT_SERVED), as Produce v0-v2 do."""
    stored = build_legacy(specs(NOW), magic=1)
    assert fetch_view(stored, fetch_version=3, profile=K4_0, config=TopicConfig()) == (
        ErrorCode.NETWORK_EXCEPTION,
        (),
    )
    assert fetch_view(stored, fetch_version=4, profile=K4_0, config=TopicConfig()) == (ErrorCode.NONE, stored)


def test_cnv5_disabled_down_conversion_is_unsupported_version_for_clients_only() -> None:
    stored = (build_v2(specs(NOW)),)
    config = TopicConfig(downconversion_enable=False)
    assert fetch_view(stored, fetch_version=3, profile=K3_9, config=config) == (
        ErrorCode.UNSUPPORTED_VERSION,
        (),
    )
    error, view = fetch_view(stored, fetch_version=3, profile=K3_9, config=config, replica=True)
    assert error is ErrorCode.NONE and view[0].magic == 1


def test_cnv5_conversion_follows_the_topic_record_version_before_ibp_3_0() -> None:
    stored = build_legacy(specs(NOW), magic=1)
    assert fetch_view(stored, fetch_version=2, profile=K2_8, config=TopicConfig(message_format_magic=1)) == (
        ErrorCode.NONE,
        stored,
    )
    error, view = fetch_view(
        stored, fetch_version=1, profile=K2_8, config=TopicConfig(message_format_magic=1)
    )
    assert error is ErrorCode.NONE
    assert [(r.timestamp, r.timestamp_type) for r in all_records(view)] == [
        (-1, TimestampType.NO_TIMESTAMP_TYPE)
    ]


def test_cnv5_uncompressed_v2_drops_records_below_the_fetch_offset() -> None:
    stored = (build_v2(specs(NOW, NOW + 1, NOW + 2), base_offset=10),)
    out = down_convert(stored, to_magic=1, fetch_offset=11)
    assert [(r.offset, r.timestamp) for r in all_records(out)] == [(11, NOW + 1), (12, NOW + 2)]
    compressed = (build_v2(specs(NOW, NOW + 1, NOW + 2), base_offset=10, codec=Codec.GZIP),)
    assert [r.offset for r in all_records(down_convert(compressed, to_magic=1, fetch_offset=11))] == [
        10,
        11,
        12,
    ]


def test_cnv5_log_append_time_v2_gives_every_v1_message_the_batch_max() -> None:
    stored = (build_v2(specs(5, 6), codec=Codec.GZIP, timestamp_type=LAT, log_append_time=NOW),)
    (wrapper,) = down_convert(stored, to_magic=1, fetch_offset=0)
    assert isinstance(wrapper, LegacyBatch)
    assert wrapper.message.timestamp == NOW and wrapper.timestamp_type is LAT
    assert [e.message.timestamp for e in wrapper.message.inner] == [NOW, NOW]


def test_a_rejection_carries_the_log_start_offset_only_where_the_log_validated_the_batch() -> None:
    """VAL-11, from Kafka's ReplicaManager.appendToLocalLog: a request refused before the log (KafkaApis,
    ProduceRequest.validateRecords: Produce v3+ with a magic 0 batch) and a corrupt batch (CorruptRecordException)
    answer UNKNOWN_LOG_APPEND_INFO, log_start_offset -1; a record the log's validation rejects (INVALID_TIMESTAMP)
    answers the partition's log start offset."""
    from models.constants import ErrorCode, TimestampType
    from models.records import LegacyBatch, LegacyMessage, RecordSpec, build_v2

    now = 1_700_000_000_000
    cluster = Cluster(profile=PROFILES["kafka-4.0"], broker_ids=(0,), start_time=now)
    config = TopicConfig(timestamp_type=TimestampType.CREATE_TIME, before_max_ms=1000, after_max_ms=1000)
    cluster.create_topic("t", config)
    legacy = LegacyBatch(offset=0, message=LegacyMessage(magic=0, attributes=0, timestamp=None, key=None, value=None))
    refused = cluster.produce("t", 0, [legacy], produce_version=9)
    assert (refused.error, refused.base_offset, refused.log_append_time, refused.log_start_offset) == (
        ErrorCode.INVALID_RECORD, -1, -1, -1)  # fmt: skip
    good = build_v2([RecordSpec(timestamp=now)])
    corrupt = bytearray(encode_batches([good]))
    corrupt[-1] ^= 0xFF  # the last record byte: the CRC-32C no longer matches
    answer = cluster.produce_bytes("t", 0, bytes(corrupt), produce_version=9)
    assert (answer.error, answer.log_start_offset, answer.error_message) == (ErrorCode.CORRUPT_MESSAGE, -1, None)
    late = cluster.produce("t", 0, [build_v2([RecordSpec(timestamp=now - 10_000)])], produce_version=9)
    assert (late.error, late.base_offset, late.log_start_offset) == (ErrorCode.INVALID_TIMESTAMP, -1, 0)


def test_an_append_larger_than_a_segment_is_record_list_too_large() -> None:
    """Kafka's UnifiedLog.append (javap of 3.9.1: after validation, `validRecords.sizeInBytes >
    config.segmentSize` throws RecordBatchTooLargeException "Message batch size is N bytes in append to partition
    T, which exceeds the maximum configured segment size of S."): RECORD_LIST_TOO_LARGE (18), no message, log
    start offset -1 (ReplicaManager's UNKNOWN_LOG_APPEND_INFO), nothing written; a batch that fits is appended."""
    from models.cluster import Cluster
    from models.codec import encode_batches

    big = [build_v2(specs(NOW, NOW, NOW))]
    size = len(encode_batches(big))
    cluster = Cluster(profile=K3_9, broker_ids=(0,), start_time=NOW)
    cluster.create_topic("small", config=TopicConfig(segment_bytes=size - 1))
    refused = cluster.produce("small", 0, big, produce_version=9)
    assert (refused.error, refused.base_offset, refused.log_start_offset) == (ErrorCode.RECORD_LIST_TOO_LARGE, -1, -1)
    assert refused.error_message is None and cluster.leader_log("small").log_end_offset == 0
    cluster.create_topic("fits", config=TopicConfig(segment_bytes=size))
    assert cluster.produce("fits", 0, big, produce_version=9).error is ErrorCode.NONE
