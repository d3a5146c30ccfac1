"""Bad input to the byte codec: always `CodecError(field, offset, reason)`, never a stray exception.

One test per bad-input case of the codec contract (see `models/codec.py` docstring for who is
blamed when lengths disagree), then a Hypothesis test that truncates and flips bytes of valid
encodings (FMT-1..11).
"""

from __future__ import annotations

import gzip
import struct
import zlib
from dataclasses import replace

import crc32c
import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.codec import decode_batch, decode_batches, encode_batch, encode_batches
from models.compression import compress
from models.constants import Codec
from models.errors import CodecError
from models.records import (
    AnyBatch,
    DefaultBatch,
    Header,
    LegacyBatch,
    LegacyMessage,
    RecordSpec,
    build_batches,
    build_v2,
)
from tests.test_codec import any_batches

# --------------------------------------------------------------------------------------------
# Crafting helpers


def expect(data: bytes, field: str, offset: int, *, verify_crc: bool = True) -> CodecError:
    """Decode `data` and assert the CodecError names `field` at absolute byte `offset`."""
    with pytest.raises(CodecError) as info:
        decode_batches(data, verify_crc=verify_crc)
    err = info.value
    assert (err.field, err.offset) == (field, offset), f"expected {field}@{offset}, got {err}"
    return err


def put(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def fix_legacy_crc(data: bytes) -> bytes:
    """Recompute the CRC32 of the entry at byte 0 (FMT-3: magic..end of the message)."""
    (size,) = struct.unpack_from(">i", data, 8)
    return put(data, 12, ">I", zlib.crc32(data[16 : 12 + size]))


def fix_v2_crc(data: bytes) -> bytes:
    return put(data, 17, ">I", crc32c.crc32c(data[21:]))


def varint(value: int) -> bytes:
    zz = (value << 1) ^ (value >> 63)
    zz &= (1 << 64) - 1
    out = bytearray()
    while zz >= 0x80:
        out.append((zz & 0x7F) | 0x80)
        zz >>= 7
    out.append(zz)
    return bytes(out)


def v2_with_section(section: bytes, count: int, attributes: int = 0) -> bytes:
    """A v2 batch whose records section is `section` verbatim, with consistent Length and CRC."""
    header = encode_batch(DefaultBatch(attributes=attributes))[:61]
    header = put(header, 8, ">i", 49 + len(section))
    header = put(header, 57, ">i", count)
    return fix_v2_crc(header + section)


def legacy_entry(magic: int, attributes: int, value: bytes | None) -> bytes:
    """A v0/v1 log entry at offset 0 with a null key and `value` verbatim (no encoder involved)."""
    body = bytes([magic, attributes]) + (struct.pack(">q", 0) if magic == 1 else b"")
    body += struct.pack(">i", -1) + struct.pack(">i", -1 if value is None else len(value)) + (value or b"")
    return struct.pack(">qiI", 0, 4 + len(body), zlib.crc32(body)) + body


def record(body: bytes) -> bytes:
    return varint(len(body)) + body


PLAIN_RECORD_BODY = b"\x00" + varint(0) + varint(0) + varint(-1) + varint(-1) + varint(0)

V2 = build_v2([RecordSpec(10, key=b"a", value=b"b"), RecordSpec(20, value=b"cc")])
V2_BYTES = encode_batch(V2)
V1 = LegacyBatch(offset=3, message=LegacyMessage(magic=1, timestamp=10, key=b"k", value=b"v"))
V1_BYTES = encode_batch(V1)
V0 = LegacyBatch(offset=3, message=LegacyMessage(magic=0, key=b"k", value=b"v"))
V0_BYTES = encode_batch(V0)
(V1_GZIP,) = build_batches([RecordSpec(1, value=b"x"), RecordSpec(2, value=b"y")], magic=1, codec=Codec.GZIP)
V1_VALUE_AT = 34  # 12 + CRC 4 + magic 1 + attributes 1 + timestamp 8 + key length 4 (null) + value length 4


# --------------------------------------------------------------------------------------------
# Truncation


SAMPLES = {
    "v0-none": V0,
    "v1-none": V1,
    "v1-gzip": V1_GZIP,
    "v0-lz4": build_batches([RecordSpec(1, value=b"x")], magic=0, codec=Codec.LZ4)[0],
    "v2-none": V2,
    "v2-snappy": build_v2([RecordSpec(5, value=b"v", headers=(Header("h", b"1"),))], codec=Codec.SNAPPY),
    "v2-zstd": build_v2([RecordSpec(5)], codec=Codec.ZSTD),
}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_truncation_at_every_cut_point(name: str) -> None:
    data = encode_batch(SAMPLES[name])
    for cut in range(len(data)):
        with pytest.raises(CodecError) as info:
            decode_batch(data[:cut])
        # A field cut off before the magic byte is named at the offset it would have had.
        assert 0 <= info.value.offset <= max(cut, 16), (cut, info.value)


def test_truncation_names_the_field_reached() -> None:
    expect(V2_BYTES[:5], "offset", 0)
    expect(V2_BYTES[:10], "size", 8)
    expect(V2_BYTES[:16], "magic", 16)
    expect(V2_BYTES[:40], "length", 8)
    expect(V1_BYTES[:20], "size", 8)
    with pytest.raises(CodecError) as info:
        decode_batch(b"")
    assert (info.value.field, info.value.offset) == ("offset", 0)


def test_partial_tail_drops_only_an_incomplete_last_entry() -> None:
    data = V2_BYTES + V1_BYTES[:20]
    assert decode_batches(data, partial_tail=True) == (V2,)
    expect(data, "size", len(V2_BYTES) + 8)


def test_decode_batch_refuses_two_entries() -> None:
    with pytest.raises(CodecError) as info:
        decode_batch(V0_BYTES + V0_BYTES)
    assert (info.value.field, info.value.offset) == ("offset", len(V0_BYTES))


# --------------------------------------------------------------------------------------------
# Bad CRC


@pytest.mark.parametrize(
    ("data", "crc_at", "value_at"),
    [(V0_BYTES, 12, -1), (V1_BYTES, 12, -1), (V2_BYTES, 17, -2)],
    ids=["v0", "v1", "v2"],
)
def test_bad_crc(data: bytes, crc_at: int, value_at: int) -> None:
    flipped = bytearray(data)
    flipped[value_at] ^= 0x01  # a byte of the last value, covered by the CRC of every format
    err = expect(bytes(flipped), "crc", crc_at)
    assert "CRC" in err.reason
    # Without verification the stored (now wrong) CRC is kept in the override field.
    back = decode_batch(bytes(flipped), verify_crc=False)
    stored = struct.unpack_from(">I", data, crc_at)[0]
    assert (back.crc if isinstance(back, DefaultBatch) else back.message.crc) == stored


def test_bad_inner_crc_points_at_the_compressed_value() -> None:
    assert isinstance(V1_GZIP, LegacyBatch)
    first = V1_GZIP.message.inner[0]
    bad = replace(first, message=replace(first.message, crc=0xDEADBEEF))
    data = encode_batch(replace(V1_GZIP, message=replace(V1_GZIP.message, inner=(bad, first))))
    err = expect(data, "crc", V1_VALUE_AT)
    assert "inner entry 0" in err.reason
    back = decode_batch(data, verify_crc=False)
    assert isinstance(back, LegacyBatch) and back.message.inner[0].message.crc == 0xDEADBEEF


# --------------------------------------------------------------------------------------------
# Unknown magic and codec bits


@pytest.mark.parametrize("magic", [3, -1, 127])
@pytest.mark.parametrize("data", [V2_BYTES, V1_BYTES], ids=["v2-entry", "v1-entry"])
def test_unknown_magic(data: bytes, magic: int) -> None:
    expect(put(data, 16, ">b", magic), "magic", 16)


def test_magic_2_inside_a_legacy_wrapper() -> None:
    inner = put(encode_batch(V0), 16, ">b", 2)
    data = legacy_entry(1, int(Codec.GZIP), gzip.compress(inner, mtime=0))
    err = expect(data, "magic", V1_VALUE_AT)
    assert "inner entry 0" in err.reason


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_unknown_codec_bits_v2(codec_id: int) -> None:
    expect(encode_batch(DefaultBatch(attributes=codec_id)), "attributes", 21)


@pytest.mark.parametrize("codec_id", [5, 6, 7])
@pytest.mark.parametrize("magic", [0, 1])
def test_unknown_codec_bits_legacy(magic: int, codec_id: int) -> None:
    message = LegacyMessage(magic=magic, attributes=codec_id, timestamp=0 if magic else None, value=b"?")
    expect(encode_batch(LegacyBatch(offset=0, message=message)), "attributes", 17)


@pytest.mark.parametrize("magic", [0, 1])
def test_zstd_on_legacy_magic(magic: int) -> None:
    """FMT-4: zstd is rejected for magic < 2 (the encoder can still craft it)."""
    inner = (LegacyBatch(offset=0, message=LegacyMessage(magic=magic, timestamp=0 if magic else None)),)
    message = LegacyMessage(
        magic=magic, attributes=int(Codec.ZSTD), timestamp=0 if magic else None, inner=inner
    )
    data = encode_batch(LegacyBatch(offset=0, message=message))
    err = expect(data, "attributes", 17)
    assert "zstd" in err.reason


# --------------------------------------------------------------------------------------------
# Lengths that lie


@pytest.mark.parametrize("delta", [+1, +100, -1, -5])
def test_v2_length_lies(delta: int) -> None:
    length = struct.unpack_from(">i", V2_BYTES, 8)[0]
    data = put(V2_BYTES, 8, ">i", length + delta)
    expect(data, "length", 8, verify_crc=False)
    # Extra bytes after the batch so that a too-long Length stays inside the buffer.
    expect(data + b"\x00" * 200, "length", 8, verify_crc=False)


@pytest.mark.parametrize("length", [-1, -(2**31), 0, 48])
def test_v2_length_negative_or_below_the_header(length: int) -> None:
    expect(put(V2_BYTES, 8, ">i", length), "length", 8)


@pytest.mark.parametrize("delta", [+1, -1])
@pytest.mark.parametrize("codec", [Codec.NONE, Codec.LZ4])
def test_v2_records_count_lies(codec: Codec, delta: int) -> None:
    batch = replace(V2, attributes=int(codec))
    data = encode_batch(replace(batch, records_count=len(batch.records_) + delta))
    err = expect(data, "records_count", 57)
    assert "RecordsCount" in err.reason


def test_v2_negative_records_count_with_records() -> None:
    expect(encode_batch(replace(V2, records_count=-1)), "records_count", 57)


def test_v2_compressed_records_cut_mid_record() -> None:
    section = record(PLAIN_RECORD_BODY)[:-2]
    data = v2_with_section(compress(Codec.GZIP, section, magic=2), 1, attributes=int(Codec.GZIP))
    err = expect(data, "records", 61)
    assert "decompressed" in err.reason


@pytest.mark.parametrize("delta", [+1, -1])
def test_v2_record_length_lies(delta: int) -> None:
    body = PLAIN_RECORD_BODY
    section = varint(len(body) + delta) + body + (b"\x00" if delta > 0 else b"")
    expect(v2_with_section(section, 1), "record_length", 61)


def test_v2_negative_record_length() -> None:
    expect(v2_with_section(varint(-3) + PLAIN_RECORD_BODY, 1), "record_length", 61)


@pytest.mark.parametrize("field", ["key", "value"])
def test_v2_key_or_value_length_below_minus_one(field: str) -> None:
    key = varint(-2) if field == "key" else varint(-1)
    value = varint(-2) if field == "value" else varint(-1)
    body = b"\x00" + varint(0) + varint(0) + key + value + varint(0)
    at = 61 + 1 + 3 + (0 if field == "key" else 1)
    expect(v2_with_section(record(body), 1), f"{field}_length", at)


def test_v2_negative_header_count() -> None:
    body = b"\x00" + varint(0) + varint(0) + varint(-1) + varint(-1) + varint(-1)
    expect(v2_with_section(record(body), 1), "headers_count", 61 + 1 + 5)


def test_v2_null_header_key() -> None:
    body = b"\x00" + varint(0) + varint(0) + varint(-1) + varint(-1) + varint(1) + varint(-1) + varint(-1)
    expect(v2_with_section(record(body), 1), "header_key_length", 61 + 1 + 6)


@pytest.mark.parametrize("delta", [+1, +50, -1, -3])
def test_legacy_size_lies(delta: int) -> None:
    data = put(V1_BYTES, 8, ">i", len(V1_BYTES) - 12 + delta)
    expect(data, "size", 8, verify_crc=False)
    expect(data + b"\x00" * 64, "size", 8, verify_crc=False)


@pytest.mark.parametrize("size", [-1, -(2**31), 0, 3])
def test_legacy_size_negative_or_tiny(size: int) -> None:
    expect(put(V0_BYTES, 8, ">i", size), "size", 8)


def test_legacy_key_length_below_minus_one() -> None:
    data = fix_legacy_crc(put(V0_BYTES, 18, ">i", -7))
    expect(data, "key_length", 18)


def test_legacy_key_length_past_the_message() -> None:
    data = fix_legacy_crc(put(V0_BYTES, 18, ">i", 1000))
    expect(data, "size", 8)


def test_legacy_wrapper_with_null_value() -> None:
    expect(legacy_entry(1, int(Codec.GZIP), None), "value_length", 30)


# --------------------------------------------------------------------------------------------
# Varints and header keys


def test_varlong_longer_than_10_bytes() -> None:
    body = b"\x00" + b"\x80" * 10 + b"\x00" + varint(0) + varint(-1) + varint(-1) + varint(0)
    err = expect(v2_with_section(record(body), 1), "timestamp_delta", 63)
    assert "longer than 10 bytes" in err.reason


def test_varint_longer_than_5_bytes() -> None:
    body = b"\x00" + varint(0) + b"\x80" * 5 + b"\x00" + varint(-1) + varint(-1) + varint(0)
    err = expect(v2_with_section(record(body), 1), "offset_delta", 64)
    assert "longer than 5 bytes" in err.reason


def test_varint_wider_than_32_bits() -> None:
    body = b"\x00" + varint(0) + b"\xff\xff\xff\xff\x7f" + varint(-1) + varint(-1) + varint(0)
    expect(v2_with_section(record(body), 1), "offset_delta", 64)


def test_header_key_not_utf8() -> None:
    body = PLAIN_RECORD_BODY[:-1] + varint(1) + varint(2) + b"\xff\xfe" + varint(-1)
    err = expect(v2_with_section(record(body), 1), "header_key", 61 + 1 + 6)
    assert "UTF-8" in err.reason


# --------------------------------------------------------------------------------------------
# Decompression garbage


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_v2_compressed_garbage(codec: Codec) -> None:
    err = expect(v2_with_section(b"\x01garbage\x02", 1, attributes=int(codec)), "records", 61)
    assert "decompress" in err.reason


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4])
def test_legacy_wrapper_garbage(codec: Codec) -> None:
    expect(legacy_entry(1, int(codec), b"\x01garbage\x02"), "value", V1_VALUE_AT)


def test_v1_lz4_with_the_kip57_checksum_is_garbage() -> None:
    """KIP-57: only magic 0 frames carry the wrong header checksum; for magic 1 it is corruption."""
    value = compress(Codec.LZ4, encode_batch(V1), magic=0)
    expect(legacy_entry(1, int(Codec.LZ4), value), "value", V1_VALUE_AT)
    back = decode_batch(legacy_entry(0, int(Codec.LZ4), value))
    assert isinstance(back, LegacyBatch) and back.message.inner == (V1,)


# --------------------------------------------------------------------------------------------
# Fuzz: only CodecError (or a clean decode) ever comes out


@given(
    batches=st.lists(any_batches(), min_size=1, max_size=3),
    cut=st.integers(0, 10_000),
    flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 255)), max_size=3),
    verify_crc=st.booleans(),
)
def test_truncations_and_byte_flips_only_raise_codec_error(
    batches: list[AnyBatch], cut: int, flips: list[tuple[int, int]], verify_crc: bool
) -> None:
    data = bytearray(encode_batches(batches))
    for position, mask in flips:
        data[position % len(data)] ^= mask
    data = data[: cut % (len(data) + 1)]
    try:
        decoded = decode_batches(bytes(data), verify_crc=verify_crc)
    except CodecError as exc:
        assert isinstance(exc.field, str) and exc.field
        assert 0 <= exc.offset < len(data) + 17, exc
    else:
        # Whatever decodes must re-encode (non-minimal varints aside, to the same size or less).
        assert isinstance(encode_batches(decoded), bytes)


def test_fuzz_seed_with_records_and_headers_survives() -> None:
    """A deterministic sweep of single-byte flips over a v2 batch with headers (complements the fuzz)."""
    data = encode_batch(SAMPLES["v2-snappy"]) + encode_batch(
        build_v2([RecordSpec(1, key=b"k", value=b"v", headers=(Header("a", None),))])
    )
    for position in range(len(data)):
        flipped = bytearray(data)
        flipped[position] ^= 0xFF
        try:
            decode_batches(bytes(flipped), verify_crc=False)
        except CodecError as exc:
            assert 0 <= exc.offset <= len(data)
