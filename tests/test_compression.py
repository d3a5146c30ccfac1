"""Compression framing as Kafka writes it (FMT-4, FMT-10; KIP-57 for the lz4 header of magic 0)."""

from __future__ import annotations

import gzip
import struct

import cramjam
import lz4.frame
import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from models.compression import XERIAL_HEADER, XERIAL_MAGIC, compress, decompress
from models.constants import Codec
from models.errors import CodecError

# FMT-4: zstd only exists for magic 2.
CODEC_MAGIC = [
    (codec, magic) for magic in (0, 1, 2) for codec in Codec if codec is not Codec.ZSTD or magic == 2
]


def _id(value: object) -> str:
    return value.name.lower() if isinstance(value, Codec) else f"v{value}"


@pytest.mark.parametrize(("codec", "magic"), CODEC_MAGIC, ids=_id)
@given(data=st.binary(max_size=3000))
def test_round_trip_per_codec_and_magic(codec: Codec, magic: int, data: bytes) -> None:
    packed = compress(codec, data, magic=magic)
    assert decompress(codec, packed, magic=magic) == data, f"{codec.name} magic {magic}"


@pytest.mark.parametrize(("codec", "magic"), CODEC_MAGIC, ids=_id)
def test_round_trip_large_input_spans_several_blocks(codec: Codec, magic: int) -> None:
    # 150 KiB crosses both the 32 KiB xerial and the 64 KiB lz4 block sizes.
    data = bytes(range(256)) * 600
    packed = compress(codec, data, magic=magic)
    assert decompress(codec, packed, magic=magic) == data
    assert compress(codec, data, magic=magic) == packed, "compression must be deterministic"


def test_gzip_is_deterministic_with_zero_mtime() -> None:
    packed = compress(Codec.GZIP, b"abc", magic=2)
    assert packed[:2] == b"\x1f\x8b"
    assert struct.unpack_from("<I", packed, 4)[0] == 0, "gzip MTIME must be 0"
    assert gzip.decompress(packed) == b"abc"


def test_gzip_multi_member_stream_decodes() -> None:
    packed = gzip.compress(b"ab", mtime=0) + gzip.compress(b"cd", mtime=0)
    assert decompress(Codec.GZIP, packed, magic=1) == b"abcd"


def _xerial_blocks(packed: bytes) -> list[bytes]:
    blocks = []
    pos = len(XERIAL_HEADER)
    while pos < len(packed):
        (size,) = struct.unpack_from(">i", packed, pos)
        blocks.append(packed[pos + 4 : pos + 4 + size])
        pos += 4 + size
    assert pos == len(packed)
    return blocks


def test_snappy_uses_xerial_framing_with_32k_blocks() -> None:
    data = bytes(range(256)) * 300  # 76 800 bytes -> 3 blocks of at most 32 KiB
    packed = compress(Codec.SNAPPY, data, magic=1)
    assert packed.startswith(b"\x82SNAPPY\x00")
    assert packed[8:16] == struct.pack(">ii", 1, 1), "xerial version 1, min compatible version 1"
    blocks = _xerial_blocks(packed)
    sizes = [len(bytes(cramjam.snappy.decompress_raw(b))) for b in blocks]
    assert sizes == [32768, 32768, 76800 - 65536]


def test_snappy_empty_input_is_only_the_header() -> None:
    assert compress(Codec.SNAPPY, b"", magic=2) == XERIAL_HEADER
    assert decompress(Codec.SNAPPY, XERIAL_HEADER, magic=2) == b""


def test_snappy_raw_block_without_xerial_framing_decodes() -> None:
    raw = bytes(cramjam.snappy.compress_raw(b"librdkafka raw block" * 5))
    assert not raw.startswith(XERIAL_MAGIC)
    assert decompress(Codec.SNAPPY, raw, magic=2) == b"librdkafka raw block" * 5


def test_snappy_concatenated_xerial_streams_decode() -> None:
    packed = compress(Codec.SNAPPY, b"first", magic=1) + compress(Codec.SNAPPY, b"second", magic=1)
    assert decompress(Codec.SNAPPY, packed, magic=1) == b"firstsecond"


def _hc(covered: bytes) -> int:
    return (xxhash.xxh32_intdigest(covered, seed=0) >> 8) & 0xFF


def test_lz4_frame_as_kafka_writes_it() -> None:
    frame = compress(Codec.LZ4, b"x" * 100, magic=1)
    assert frame[:4] == b"\x04\x22\x4d\x18"
    # FLG 0x60: version 01, independent blocks, no block/content checksum, no content size.
    assert frame[4] == 0x60
    assert frame[5] == 0x40, "BD: 64 KiB maximum block size"


def test_lz4_magic0_header_checksum_is_the_kip57_wrong_one() -> None:
    """KIP-57: magic 0 hashes magic bytes + FLG + BD; magic 1 hashes FLG + BD only."""
    v0 = compress(Codec.LZ4, b"payload" * 10, magic=0)
    v1 = compress(Codec.LZ4, b"payload" * 10, magic=1)
    assert v0[6] == _hc(v0[0:6])
    assert v1[6] == _hc(v1[4:6])
    assert v0[6] != v1[6], "the two checksums must differ for this test to mean anything"
    assert v0[:6] == v1[:6] and v0[7:] == v1[7:], "only the HC byte differs"


def test_lz4_magic0_frame_decodes_and_magic1_rejects_the_wrong_checksum() -> None:
    v0 = compress(Codec.LZ4, b"payload", magic=0)
    assert decompress(Codec.LZ4, v0, magic=0) == b"payload"
    with pytest.raises(CodecError) as info:
        decompress(Codec.LZ4, v0, magic=1, offset=40)
    assert (info.value.field, info.value.offset) == ("records", 40)


def test_lz4_magic0_also_accepts_a_correct_header_checksum() -> None:
    # A client that fixed KIP-57 on its side still decodes: the v0 reader ignores the HC.
    standard = lz4.frame.compress(b"abc", block_linked=False, store_size=False)
    assert decompress(Codec.LZ4, standard, magic=0) == b"abc"


def test_zstd_needs_magic_2() -> None:
    with pytest.raises(ValueError, match="zstd"):
        compress(Codec.ZSTD, b"a", magic=1)
    packed = compress(Codec.ZSTD, b"a", magic=2)
    with pytest.raises(CodecError) as info:
        decompress(Codec.ZSTD, packed, magic=0, offset=7, field="value")
    assert (info.value.field, info.value.offset) == ("value", 7)


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
@pytest.mark.parametrize(
    "garbage",
    [b"", b"\x00", b"not compressed at all", XERIAL_MAGIC, b"\x04\x22\x4d\x18\x60"],
    ids=["empty", "zero", "text", "xerial-magic-only", "lz4-magic-flg-only"],
)
def test_garbage_raises_codec_error_with_payload_offset(codec: Codec, garbage: bytes) -> None:
    try:
        result = decompress(codec, garbage, magic=2, offset=61)
    except CodecError as exc:
        assert exc.field == "records"
        assert exc.offset == 61
    else:
        # b"\x00" is a valid raw snappy block of length 0; nothing else may pass.
        assert (codec, garbage, result) == (Codec.SNAPPY, b"\x00", b"")


@pytest.mark.parametrize(("codec", "magic"), [cm for cm in CODEC_MAGIC if cm[0] is not Codec.NONE], ids=_id)
def test_truncated_stream_raises_codec_error(codec: Codec, magic: int) -> None:
    packed = compress(codec, bytes(range(200)) * 5, magic=magic)
    for cut in (1, len(packed) // 2, len(packed) - 1):
        with pytest.raises(CodecError):
            decompress(codec, packed[:cut], magic=magic, offset=3)
