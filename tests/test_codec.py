"""Byte codec of message formats v0, v1 and v2 (docs/rules.md, FMT-1..14; CON-1 for the reader's view).

The strategies here can produce *invalid contents* on purpose (a producer-set LogAppendTime bit, a
wrapper timestamp that is not the inner max, timestamps below -1 and near ±2^63, huge negative v2
deltas): the codec must carry whatever a broker may receive, byte for byte.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import replace

import crc32c
import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from models.codec import (
    crc_matches,
    decode_batch,
    decode_batches,
    encode_batch,
    encode_batches,
    encoded_size,
    legacy_crc,
    v2_crc,
)
from models.constants import (
    CODEC_MASK,
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    TIMESTAMP_TYPE_MASK,
    Codec,
    TimestampType,
)
from models.errors import BuildError, CodecError
from models.records import (
    AnyBatch,
    DefaultBatch,
    Header,
    LegacyBatch,
    LegacyMessage,
    Record,
    RecordSpec,
    build_batches,
    build_v2,
)

# --------------------------------------------------------------------------------------------
# Strategies (small named pieces; test_codec_errors.py reuses them)

int64s = st.integers(LONG_MIN, LONG_MAX)
int32s = st.integers(INT_MIN, INT_MAX)
int16s = st.integers(-(1 << 15), (1 << 15) - 1)
# FMT-8: writers refuse < -1 but readers do not check; the codec must carry any int64.
timestamps = st.one_of(
    st.integers(-1, 2**42),
    st.sampled_from([-1, -2, LONG_MIN, LONG_MIN + 1, LONG_MAX, LONG_MAX - 1, 0]),
    int64s,
)
payloads = st.none() | st.binary(max_size=24)
headers = st.lists(st.builds(Header, st.text(max_size=6), payloads), max_size=3).map(tuple)
legacy_codecs = st.sampled_from([Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4])
v2_codecs = st.sampled_from(list(Codec))
timestamp_types = st.sampled_from([TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME])


@st.composite
def v2_records(draw: st.DrawFn, index: int) -> Record:
    return Record(
        offset_delta=draw(st.just(index) | int32s),
        # FMT-11: deltas are zig-zag varlongs and may be negative or huge.
        timestamp_delta=draw(st.integers(-1000, 1000) | int64s),
        key=draw(payloads),
        value=draw(payloads),
        headers=draw(headers),
        attributes=draw(st.just(0) | st.integers(0, 255)),
    )


@st.composite
def v2_batches(
    draw: st.DrawFn, codec: Codec | None = None, timestamp_type: TimestampType | None = None
) -> DefaultBatch:
    codec = draw(v2_codecs) if codec is None else codec
    ts_type = draw(timestamp_types) if timestamp_type is None else timestamp_type
    n = draw(st.integers(0, 4))
    records = tuple(draw(v2_records(i)) for i in range(n))
    # FMT-10: bits 4-6 (transactional, control, delete horizon) and the unused bits 7-15 round-trip too.
    extra = draw(
        st.sampled_from([0, 0x10, 0x20, 0x30, 0x40]) | st.integers(0, 0xFFFF).map(lambda a: a & ~0x0F)
    )
    attributes = int(codec) | extra | _type_bit(ts_type)
    return DefaultBatch(
        base_offset=draw(st.integers(0, 2**40) | int64s),
        partition_leader_epoch=draw(st.just(-1) | int32s),
        attributes=attributes,
        last_offset_delta=draw(st.just(max(n - 1, 0)) | int32s),
        base_timestamp=draw(timestamps),
        max_timestamp=draw(timestamps),
        producer_id=draw(st.just(-1) | int64s),
        producer_epoch=draw(st.just(-1) | int16s),
        base_sequence=draw(st.just(-1) | int32s),
        records_=records,
    )


def _type_bit(ts_type: TimestampType) -> int:
    return TIMESTAMP_TYPE_MASK if ts_type is TimestampType.LOG_APPEND_TIME else 0


@st.composite
def legacy_plain_messages(draw: st.DrawFn, magic: int) -> LegacyMessage:
    # The type bit is drawn freely: FMT-4 ignores it for v0 and FMT-7 for inner messages.
    bit = draw(st.sampled_from([0, TIMESTAMP_TYPE_MASK]))
    return LegacyMessage(
        magic=magic,
        attributes=bit | draw(st.just(0) | st.integers(0, 15).map(lambda a: a << 4)),
        timestamp=draw(timestamps) if magic == 1 else None,
        key=draw(payloads),
        value=draw(payloads),
    )


@st.composite
def legacy_batches(
    draw: st.DrawFn, magic: int, codec: Codec | None = None, timestamp_type: TimestampType | None = None
) -> LegacyBatch:
    codec = draw(legacy_codecs) if codec is None else codec
    ts_type = draw(timestamp_types) if timestamp_type is None else timestamp_type
    attributes = int(codec) | _type_bit(ts_type)
    if codec is Codec.NONE:
        message = replace(draw(legacy_plain_messages(magic)), attributes=attributes)
    else:
        n = draw(st.integers(0, 4))
        # FMT-7: inner offsets are relative 0..n-1 normally; crafted ones may be anything. A v1
        # wrapper may hold v0 inner messages (TV-25).
        relative = draw(st.booleans())
        inner = tuple(
            LegacyBatch(
                offset=i if relative else draw(int64s),
                message=draw(legacy_plain_messages(draw(st.sampled_from([0, 1])))),
            )
            for i in range(n)
        )
        message = LegacyMessage(
            magic=magic,
            attributes=attributes,
            # Any wrapper timestamp, not only the inner max (invalid contents on purpose).
            timestamp=draw(timestamps) if magic == 1 else None,
            key=draw(st.none() | st.binary(max_size=4)),
            inner=inner,
        )
    return LegacyBatch(offset=draw(st.integers(0, 2**40) | int64s), message=message)


def any_batches() -> st.SearchStrategy[AnyBatch]:
    return st.one_of(v2_batches(), legacy_batches(0), legacy_batches(1))


# --------------------------------------------------------------------------------------------
# Assertion helpers


def assert_round_trip(batch: AnyBatch) -> bytes:
    data = encode_batch(batch)
    assert len(data) == encoded_size(batch)
    back = decode_batch(data)
    assert back == batch, f"decode(encode(b)) != b for magic {batch.magic}\n  b    = {batch}\n  back = {back}"
    assert encode_batch(back) == data, "encode(decode(bytes)) != bytes"
    # CON-1: the reader's view survives the trip.
    assert back.records() == batch.records()
    assert back.max_timestamp == batch.max_timestamp
    assert back.timestamp_type == batch.timestamp_type
    assert back.offset_of_max_timestamp() == batch.offset_of_max_timestamp()
    return data


# --------------------------------------------------------------------------------------------
# Round trips


@given(batch=v2_batches())
def test_v2_round_trip(batch: DefaultBatch) -> None:
    """FMT-9..12 for every codec and both timestamp types, including invalid contents."""
    assert_round_trip(batch)


@pytest.mark.parametrize("magic", [0, 1])
@given(data=st.data())
def test_legacy_round_trip(magic: int, data: st.DataObject) -> None:
    """FMT-1..7 for every legacy codec and both type bits (a producer-set LogAppendTime bit too)."""
    assert_round_trip(data.draw(legacy_batches(magic)))


@given(batches=st.lists(any_batches(), max_size=4))
def test_record_set_round_trip(batches: list[AnyBatch]) -> None:
    """A record set mixes magics; each entry's layout is chosen by its byte 16."""
    data = encode_batches(batches)
    assert decode_batches(data) == tuple(batches)
    assert encode_batches(decode_batches(data)) == data
    assert data == b"".join(encode_batch(b) for b in batches)


# Every magic × codec combination, listed so the coverage is visible (FMT-4: zstd only for v2).
COMBINATIONS = [
    (0, Codec.NONE),
    (0, Codec.GZIP),
    (0, Codec.SNAPPY),
    (0, Codec.LZ4),
    (1, Codec.NONE),
    (1, Codec.GZIP),
    (1, Codec.SNAPPY),
    (1, Codec.LZ4),
    (2, Codec.NONE),
    (2, Codec.GZIP),
    (2, Codec.SNAPPY),
    (2, Codec.LZ4),
    (2, Codec.ZSTD),
]
TRICKY_RECORDS = [
    RecordSpec(timestamp=1_700_000_000_000, key=b"k1", value=b"v1", headers=(Header("h", b"x"),)),
    RecordSpec(timestamp=-1, key=None, value=None),
    RecordSpec(timestamp=LONG_MAX, key=b"", value=b"v" * 300),
    RecordSpec(timestamp=-5, key=b"k4", value=b"", headers=(Header("", None), Header("ü", b""))),
]


@pytest.mark.parametrize(
    ("magic", "codec"), COMBINATIONS, ids=[f"v{m}-{c.name.lower()}" for m, c in COMBINATIONS]
)
@pytest.mark.parametrize("timestamp_type", [TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME])
def test_every_magic_and_codec(magic: int, codec: Codec, timestamp_type: TimestampType) -> None:
    specs = TRICKY_RECORDS if magic == 2 else [replace(r, headers=()) for r in TRICKY_RECORDS]
    batches = build_batches(
        specs, magic=magic, base_offset=100, codec=codec, timestamp_type=timestamp_type, log_append_time=77
    )
    data = encode_batches(batches)
    back = decode_batches(data)
    assert back == batches
    assert encode_batches(back) == data
    assert [b.records() for b in back] == [b.records() for b in batches]
    # The codec id sits in the low bits of the (first) attributes byte: v2 @22 (low byte of int16 @21),
    # legacy @17 (entry 12 + CRC 4 + magic 1).
    assert data[16] == magic
    codec_byte = data[22] if magic == 2 else data[17]
    assert codec_byte & 0x07 == codec
    assert all(b.codec is codec for b in back)


# --------------------------------------------------------------------------------------------
# Fixed byte-level checks


def test_v2_header_field_offsets() -> None:
    """FMT-9: BaseOffset@0 Length@8 Epoch@12 Magic@16 CRC@17 Attributes@21 LastOffsetDelta@23
    BaseTimestamp@27 MaxTimestamp@35 ProducerId@43 ProducerEpoch@51 BaseSequence@53 RecordsCount@57."""
    batch = DefaultBatch(
        base_offset=0x0102030405060708,
        partition_leader_epoch=7,
        attributes=TIMESTAMP_TYPE_MASK | 0x10,
        last_offset_delta=1,
        base_timestamp=1000,
        max_timestamp=2000,
        producer_id=99,
        producer_epoch=3,
        base_sequence=42,
        records_=(Record(offset_delta=0, timestamp_delta=0), Record(offset_delta=1, timestamp_delta=5)),
    )
    data = encode_batch(batch)
    assert struct.unpack_from(">q", data, 0)[0] == 0x0102030405060708
    assert struct.unpack_from(">i", data, 8)[0] == len(data) - 12
    assert struct.unpack_from(">i", data, 12)[0] == 7
    assert data[16] == 2
    assert struct.unpack_from(">I", data, 17)[0] == crc32c.crc32c(data[21:]) == v2_crc(batch)
    assert struct.unpack_from(">h", data, 21)[0] == 0x18
    assert struct.unpack_from(">i", data, 23)[0] == 1
    assert struct.unpack_from(">q", data, 27)[0] == 1000
    assert struct.unpack_from(">q", data, 35)[0] == 2000
    assert struct.unpack_from(">q", data, 43)[0] == 99
    assert struct.unpack_from(">h", data, 51)[0] == 3
    assert struct.unpack_from(">i", data, 53)[0] == 42
    assert struct.unpack_from(">i", data, 57)[0] == 2
    # FMT-11 second record: length zz(6)=12, attrs 0, tsDelta zz(5)=10, offDelta zz(1)=2, key/value
    # zz(-1)=1 (null), 0 headers.
    assert data[61 + 7 :] == bytes([12, 0, 10, 2, 1, 1, 0])


def test_v2_crc_does_not_cover_the_leader_epoch() -> None:
    """FMT-9: the CRC-32C covers attributes..end, not PartitionLeaderEpoch."""
    a = encode_batch(DefaultBatch(partition_leader_epoch=1))
    b = encode_batch(DefaultBatch(partition_leader_epoch=2))
    assert a[17:21] == b[17:21]
    c = encode_batch(DefaultBatch(max_timestamp=5))
    assert c[17:21] != a[17:21], "MaxTimestamp is covered"


def test_v2_record_varints_are_zigzag() -> None:
    """FMT-11: Length varint, Attributes, TimestampDelta varlong, OffsetDelta varint, Key, Value, Headers."""
    record = Record(offset_delta=300, timestamp_delta=-1, key=None, value=b"v", headers=(Header("h", None),))
    data = encode_batch(DefaultBatch(records_=(record,)))
    body = bytes([0x00, 0x01, 0xD8, 0x04, 0x01, 0x02]) + b"v" + bytes([0x02, 0x02]) + b"h" + bytes([0x01])
    assert data[61:] == bytes([len(body) * 2]) + body
    big = encode_batch(DefaultBatch(records_=(Record(offset_delta=0, timestamp_delta=LONG_MIN),)))
    assert big[62:73] == b"\x00" + b"\xff" * 9 + b"\x01", "zz(LONG_MIN) = 2^64-1: ten bytes"


def test_v1_message_layout() -> None:
    """FMT-1/3: Offset@0 Size@8 CRC@12 Magic@16 Attributes@17 Timestamp@18 KeyLength@26."""
    entry = LegacyBatch(
        offset=5,
        message=LegacyMessage(
            magic=1, attributes=TIMESTAMP_TYPE_MASK, timestamp=123456, key=b"ab", value=None
        ),
    )
    data = encode_batch(entry)
    assert struct.unpack_from(">q", data, 0)[0] == 5
    assert struct.unpack_from(">i", data, 8)[0] == len(data) - 12 == 22 + 2
    assert struct.unpack_from(">I", data, 12)[0] == zlib.crc32(data[16:]) == legacy_crc(entry.message)
    assert data[16] == 1
    assert data[17] == TIMESTAMP_TYPE_MASK
    assert struct.unpack_from(">q", data, 12 + 6)[0] == 123456
    assert struct.unpack_from(">i", data, 26)[0] == 2
    assert data[30:32] == b"ab"
    assert struct.unpack_from(">i", data, 32)[0] == -1


def test_v0_message_layout() -> None:
    """FMT-2: no timestamp; KeyLength@18 (entry 12 + 6); overhead 14."""
    entry = LegacyBatch(offset=0, message=LegacyMessage(magic=0, key=None, value=b"xyz"))
    data = encode_batch(entry)
    assert struct.unpack_from(">i", data, 8)[0] == 14 + 3
    assert data[16] == 0
    assert struct.unpack_from(">i", data, 18)[0] == -1
    assert struct.unpack_from(">i", data, 22)[0] == 3
    assert data[26:] == b"xyz"


def test_legacy_wrapper_value_is_the_compressed_inner_entries() -> None:
    """FMT-7: the wrapper value is a compressed stream of inner log entries with relative offsets."""
    (wrapper,) = build_batches([RecordSpec(10), RecordSpec(30), RecordSpec(20)], magic=1, codec=Codec.GZIP)
    assert isinstance(wrapper, LegacyBatch)
    data = encode_batch(wrapper)
    value_len = struct.unpack_from(">i", data, 30)[0]
    inner = zlib.decompress(data[34 : 34 + value_len], wbits=31)
    assert inner == b"".join(encode_batch(e) for e in wrapper.message.inner)
    assert [struct.unpack_from(">q", inner, i * 34)[0] for i in range(3)] == [0, 1, 2]
    assert struct.unpack_from(">q", data, 18)[0] == 30, "wrapper timestamp = max of inner (builder)"


def test_v0_lz4_wrapper_carries_the_kip57_header_checksum() -> None:
    (wrapper,) = build_batches([RecordSpec(1, value=b"a")], magic=0, codec=Codec.LZ4)
    data = encode_batch(wrapper)
    # v0 wrapper: entry 12 + CRC 4 + magic 1 + attributes 1 + key length 4 (-1) + value length 4.
    frame = data[26:]
    assert frame[:4] == b"\x04\x22\x4d\x18"
    assert frame[6] == (xxhash.xxh32_intdigest(frame[0:6]) >> 8) & 0xFF
    assert decode_batch(data) == wrapper


# --------------------------------------------------------------------------------------------
# CRCs and overrides


def test_crc_override_is_written_and_kept_without_verification() -> None:
    batch = DefaultBatch(records_=(Record(offset_delta=0, timestamp_delta=0, value=b"x"),))
    good = v2_crc(batch)
    bad = replace(batch, crc=good ^ 1)
    assert crc_matches(batch) and crc_matches(replace(batch, crc=good))
    assert not crc_matches(bad)
    data = encode_batch(bad)
    assert struct.unpack_from(">I", data, 17)[0] == good ^ 1
    assert decode_batch(data, verify_crc=False) == bad
    assert decode_batch(encode_batch(replace(batch, crc=good))) == batch, (
        "a correct stored CRC decodes as None"
    )


def test_inner_crc_override_is_detected_by_crc_matches() -> None:
    (wrapper,) = build_batches([RecordSpec(1), RecordSpec(2)], magic=1, codec=Codec.SNAPPY)
    assert isinstance(wrapper, LegacyBatch)
    first = wrapper.message.inner[0]
    wrong = replace(first, message=replace(first.message, crc=legacy_crc(first.message) ^ 0xFF))
    corrupt = replace(wrapper, message=replace(wrapper.message, inner=(wrong, *wrapper.message.inner[1:])))
    assert crc_matches(wrapper)
    assert not crc_matches(corrupt)
    assert decode_batch(encode_batch(corrupt), verify_crc=False) == corrupt


def test_length_and_size_overrides_are_written() -> None:
    v2 = encode_batch(DefaultBatch(length=1234, records_count=9))
    assert struct.unpack_from(">i", v2, 8)[0] == 1234
    assert struct.unpack_from(">i", v2, 57)[0] == 9
    legacy = encode_batch(LegacyBatch(offset=0, size=-3, message=LegacyMessage(magic=0)))
    assert struct.unpack_from(">i", legacy, 8)[0] == -3


def test_negative_records_count_of_an_empty_batch_is_kept() -> None:
    batch = DefaultBatch(records_count=-1)
    assert decode_batch(encode_batch(batch)) == batch


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP])
@pytest.mark.parametrize("held", [2, 4])
def test_records_count_lie_over_whole_records_decodes_with_keep_count_lies(codec: Codec, held: int) -> None:
    """VAL-14: a broker reads a v2 batch whose RecordsCount (3, agreeing with LastOffsetDelta 2) disagrees with the
    whole records it holds and refuses it in the validator (Kafka's DefaultRecordBatch.RecordIterator); with
    `keep_count_lies` the decoder hands it over with the stored count kept, without it the bytes do not decode."""
    batch = build_v2([RecordSpec(5 + i, b"k%d" % i, b"v") for i in range(held)], codec=codec)
    lying = replace(batch, records_count=3, last_offset_delta=2)
    data = encode_batch(lying)
    assert decode_batches(data, verify_crc=False, keep_count_lies=True) == (lying,)
    with pytest.raises(CodecError) as err:
        decode_batches(data, verify_crc=False)
    assert err.value.field == "records_count"


def test_keep_count_lies_still_refuses_bytes_that_are_not_whole_records() -> None:
    """`keep_count_lies` keeps only a count lie: a section not ending on a record boundary still blames Length."""
    data = bytearray(encode_batch(build_v2([RecordSpec(5, b"k", b"v")])))
    data += b"\x0a"  # a record announcing 5 bytes, then the end of the batch
    struct.pack_into(">i", data, 8, struct.unpack_from(">i", data, 8)[0] + 1)
    with pytest.raises(CodecError) as err:
        decode_batches(bytes(data), verify_crc=False, keep_count_lies=True)
    assert err.value.field == "length"


@pytest.mark.parametrize("magic", [1, 2])
def test_with_header_refuses_no_timestamp_type(magic: int) -> None:
    """FMT-10 (FMT-4 for v1): a v2 batch (or v1 message) header holds CreateTime or LogAppendTime only. Kafka's
    DefaultRecordBatch.setMaxTimestamp(NO_TIMESTAMP_TYPE, ..) throws IllegalArgumentException from computeAttributes
    ("Timestamp type must be provided to compute attributes for message format v2 and above";
    DefaultRecordBatchTest.testSetNoTimestampTypeNotAllowed), as AbstractLegacyRecordBatch.setMaxTimestamp does for
    v1 through LegacyRecord.computeAttributes; the model used to clear bit 3 and store CreateTime."""
    batch = build_batches([RecordSpec(1), RecordSpec(2), RecordSpec(3)], magic=magic)[0]
    text = "message format v2 and above" if magic == 2 else "message format v1"
    with pytest.raises(BuildError, match=f"Timestamp type must be provided to compute attributes for {text}"):
        batch.with_header(timestamp_type=TimestampType.NO_TIMESTAMP_TYPE, max_timestamp=-1)


@pytest.mark.parametrize("magic", [1, 2])
def test_builders_refuse_no_timestamp_type_above_v0(magic: int) -> None:
    """FMT-10 (FMT-4 for v1): Kafka's MemoryRecordsBuilder constructor refuses NoTimestampType for magic > 0
    (IllegalArgumentException "TimestampType must be set for magic >= 0"); a v0 build has no type to set."""
    with pytest.raises(BuildError, match="TimestampType must be set for magic >= 0"):
        build_batches([RecordSpec(1)], magic=magic, timestamp_type=TimestampType.NO_TIMESTAMP_TYPE)
    (v0,) = build_batches([RecordSpec(1)], magic=0, timestamp_type=TimestampType.NO_TIMESTAMP_TYPE)
    assert v0.timestamp_type is TimestampType.NO_TIMESTAMP_TYPE


def test_encoded_size_matches_and_is_stable() -> None:
    (batch,) = build_batches([RecordSpec(5, value=b"abc")], magic=2, codec=Codec.ZSTD)
    assert encoded_size(batch) == len(encode_batch(batch)) == encoded_size(replace(batch))


@given(v2_batches(), st.integers(0, 2**40), st.integers(-1, 2**31 - 1), st.integers(-1, 2**45))
def test_encoded_size_of_a_derived_batch_is_its_byte_length(
    batch: DefaultBatch, base_offset: int, epoch: int, max_timestamp: int
) -> None:
    """The log's size cache (keyed by the records tuple) agrees with a fresh encoding of every batch the
    validator derives from a sent one (offsets, epoch, max timestamp, type and codec changed)."""
    assert encoded_size(batch) == len(encode_batch(batch, cache=False))
    for derived in (
        replace(batch, base_offset=base_offset, partition_leader_epoch=epoch, max_timestamp=max_timestamp),
        replace(batch, attributes=batch.attributes ^ 0x08),
        replace(batch, attributes=(batch.attributes & ~CODEC_MASK) | int(Codec.GZIP)),
        replace(batch, attributes=batch.attributes & ~CODEC_MASK),
    ):
        assert encoded_size(derived) == len(encode_batch(derived, cache=False))


def test_v1_message_without_timestamp_is_written_as_minus_one() -> None:
    data = encode_batch(LegacyBatch(offset=0, message=LegacyMessage(magic=1)))
    assert struct.unpack_from(">q", data, 18)[0] == -1


# --------------------------------------------------------------------------------------------
# Values that do not fit their field


@pytest.mark.parametrize(
    ("batch", "field", "offset"),
    [
        (DefaultBatch(max_timestamp=LONG_MAX + 1), "max_timestamp", 35),
        (DefaultBatch(base_timestamp=LONG_MIN - 1), "base_timestamp", 27),
        (DefaultBatch(attributes=1 << 16), "attributes", 21),
        (DefaultBatch(partition_leader_epoch=INT_MAX + 1), "partition_leader_epoch", 12),
        (
            DefaultBatch(records_=(Record(offset_delta=0, timestamp_delta=LONG_MAX + 1),)),
            "timestamp_delta",
            61,
        ),
        (DefaultBatch(records_=(Record(offset_delta=INT_MAX + 1, timestamp_delta=0),)), "offset_delta", 61),
        (
            DefaultBatch(
                records_=(Record(offset_delta=0, timestamp_delta=0, headers=(Header("\udc80", None),)),)
            ),
            "header_key",
            61,
        ),
        (LegacyBatch(offset=0, message=LegacyMessage(magic=1, timestamp=LONG_MAX + 1)), "timestamp", 18),
        (LegacyBatch(offset=LONG_MIN - 1, message=LegacyMessage(magic=0)), "offset", 0),
        (LegacyBatch(offset=0, message=LegacyMessage(magic=0, attributes=256)), "attributes", 17),
        (LegacyBatch(offset=0, message=LegacyMessage(magic=0), size=INT_MAX + 1), "size", 8),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_out_of_range_values_raise_codec_error(batch: AnyBatch, field: str, offset: int) -> None:
    with pytest.raises(CodecError) as info:
        encode_batch(batch)
    assert (info.value.field, info.value.offset) == (field, offset), info.value


def test_record_set_encoding_error_offsets_are_absolute() -> None:
    first = DefaultBatch()
    with pytest.raises(CodecError) as info:
        encode_batches([first, DefaultBatch(max_timestamp=LONG_MAX + 1)])
    assert (info.value.field, info.value.offset) == ("max_timestamp", len(encode_batch(first)) + 35)


# --------------------------------------------------------------------------------------------
# FMT-13: setting a batch's (type, max timestamp), the record-layer operation a broker stamps LogAppendTime with


@given(base=st.integers(0, 2**41), deltas=st.lists(st.integers(-1000, 1000), min_size=1, max_size=4),
       stamp=st.integers(0, 2**41))  # fmt: skip
def test_set_max_timestamp_rewrites_only_attributes_max_and_crc(base: int, deltas: list[int], stamp: int) -> None:
    """FMT.set-max-timestamp-keeps-base: the bytes that change are the CRC (17-20), the attributes (21-22) and
    MaxTimestamp (35-42); BaseTimestamp (27-34) and every record stay; unchanged type and max change nothing."""
    batch = build_batches([RecordSpec(base + d, b"k", b"v") for d in deltas], magic=2)[0]
    before = encode_batch(batch)
    after = encode_batch(batch.with_header(timestamp_type=TimestampType.LOG_APPEND_TIME, max_timestamp=stamp))
    changed = {i for i, (x, y) in enumerate(zip(before, after, strict=True)) if x != y}
    assert changed <= set(range(17, 23)) | set(range(35, 43))
    assert before[27:35] == after[27:35]
    assert crc_matches(decode_batch(after))
    same = batch.with_header(timestamp_type=batch.timestamp_type, max_timestamp=batch.max_timestamp)
    assert encode_batch(same) == before
