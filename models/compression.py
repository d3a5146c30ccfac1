"""Compression codecs of Kafka record batches, as Kafka frames them (FMT-4, FMT-10).

`compress(codec, data, magic=...)` and `decompress(codec, data, magic=..., offset=...)` wrap
maintained libraries; only the framing Kafka adds is written here:

- gzip: stdlib `gzip`, deterministic (mtime 0). Multi-member streams decode.
- snappy: the xerial snappy-java stream Kafka's `SnappyOutputStream` writes: the 8-byte magic
  ``b"\\x82SNAPPY\\x00"``, int32 version 1, int32 minimum compatible version 1, then blocks of
  (int32 big-endian length, raw snappy block) of at most 32 KiB uncompressed each. On decode a plain
  raw snappy block (no xerial header, as some librdkafka builds send) is accepted too, and so are
  concatenated xerial streams (a repeated header between blocks).
- lz4: an LZ4 frame as Kafka writes it (independent 64 KiB blocks, no block or content checksum,
  no content size). KIP-57 quirk: for magic 0 Kafka computes the frame descriptor's header
  checksum byte (HC) over the 4 magic bytes + FLG + BD instead of the descriptor alone, and
  expects that wrong byte on read. Magic 0 is therefore written with the wrong HC, and on
  decode its HC is repaired before the frame reaches the lz4 library. Magic >= 1 uses the
  correct HC in both directions (a magic-1 frame with the KIP-57 byte is corrupt).
- zstd: `cramjam.zstd`, magic 2 only (FMT-4: "zstd is rejected for magic < 2").

Errors: `compress` raises `ValueError` for zstd below magic 2 (a programming error: the batch
builders never produce it). `decompress` raises `models.errors.CodecError` for any input that does
not decompress, with `field` (default ``"records"``; the legacy codec passes ``"value"``),
`offset` = the absolute byte offset of the compressed payload, and a one-sentence `reason`. No
library exception (zlib.error, OSError, RuntimeError, cramjam.DecompressionError) escapes.
"""

from __future__ import annotations

import gzip
import struct

import cramjam
import lz4.frame
import xxhash

from .constants import MAGIC_V0, MAGIC_V2, Codec
from .errors import CodecError

XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_VERSION = 1
XERIAL_MIN_COMPATIBLE_VERSION = 1
XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", XERIAL_VERSION, XERIAL_MIN_COMPATIBLE_VERSION)
XERIAL_BLOCK_SIZE = 32 * 1024

LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"
_LZ4_FLG_CONTENT_SIZE = 0x08
_LZ4_FLG_DICT_ID = 0x01


def lz4_header_checksum(descriptor: bytes) -> int:
    """The LZ4 frame HC byte: second byte of xxh32(descriptor, seed 0)."""
    return (xxhash.xxh32_intdigest(descriptor, seed=0) >> 8) & 0xFF


def _lz4_descriptor_end(frame: bytes) -> int:
    """Index of the HC byte: after FLG, BD and the optional content size / dictionary id."""
    flg = frame[4]
    end = 6
    if flg & _LZ4_FLG_CONTENT_SIZE:
        end += 8
    if flg & _LZ4_FLG_DICT_ID:
        end += 4
    return end


def _with_header_checksum(frame: bytes, *, kip57: bool) -> bytes:
    """Rewrite the HC byte: KIP-57 (magic 0) covers magic+descriptor, the LZ4 spec only the descriptor."""
    hc_at = _lz4_descriptor_end(frame)
    covered = frame[0:hc_at] if kip57 else frame[4:hc_at]
    return frame[:hc_at] + bytes([lz4_header_checksum(covered)]) + frame[hc_at + 1 :]


def _lz4_compress(data: bytes, magic: int) -> bytes:
    frame: bytes = lz4.frame.compress(
        data,
        block_size=lz4.frame.BLOCKSIZE_MAX64KB,
        block_linked=False,
        block_checksum=False,
        content_checksum=False,
        store_size=False,
    )
    if magic == MAGIC_V0:
        # KIP-57: the 0.8-0.10.0 Java writer hashed the frame magic too; v0 readers expect it.
        frame = _with_header_checksum(frame, kip57=True)
    return frame


def _lz4_decompress(data: bytes, magic: int) -> bytes:
    if len(data) < 7 or data[:4] != LZ4_FRAME_MAGIC:
        raise ValueError("not an LZ4 frame (missing magic 04 22 4D 18)")
    if magic == MAGIC_V0:
        if len(data) <= _lz4_descriptor_end(data):
            raise ValueError("LZ4 frame descriptor truncated")
        # KIP-57: magic 0 frames carry the wrong HC; Kafka's v0 reader ignores it, so repair it.
        data = _with_header_checksum(data, kip57=False)
    out: bytes = lz4.frame.decompress(data)
    return out


def _snappy_compress(data: bytes) -> bytes:
    parts = [XERIAL_HEADER]
    for start in range(0, len(data), XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(data[start : start + XERIAL_BLOCK_SIZE]))
        parts.append(struct.pack(">i", len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_decompress(data: bytes) -> bytes:
    if not data.startswith(XERIAL_MAGIC):
        # librdkafka may send one raw snappy block without the xerial framing.
        return bytes(cramjam.snappy.decompress_raw(data))
    out: list[bytes] = []
    pos = 0
    while pos < len(data):
        if data.startswith(XERIAL_MAGIC, pos):
            # snappy-java accepts concatenated streams: a header may start any block.
            if pos + len(XERIAL_HEADER) > len(data):
                raise ValueError(f"xerial header truncated at byte {pos}")
            pos += len(XERIAL_HEADER)
            continue
        if pos + 4 > len(data):
            raise ValueError(f"xerial block length truncated at byte {pos}")
        (size,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if size < 0 or pos + size > len(data):
            raise ValueError(f"xerial block length {size} at byte {pos - 4} runs past the stream")
        out.append(bytes(cramjam.snappy.decompress_raw(data[pos : pos + size])))
        pos += size
    return b"".join(out)


def compress(codec: Codec, data: bytes, *, magic: int) -> bytes:
    """Compress `data` (a records section or inner log entries) as Kafka frames `codec` at `magic`."""
    if codec is Codec.NONE:
        return bytes(data)
    if codec is Codec.GZIP:
        # Level 6: what Java's Deflater default (-1) means, i.e. what a Java producer writes.
        return gzip.compress(data, compresslevel=6, mtime=0)
    if codec is Codec.SNAPPY:
        return _snappy_compress(data)
    if codec is Codec.LZ4:
        return _lz4_compress(data, magic)
    if codec is Codec.ZSTD:
        if magic < MAGIC_V2:
            raise ValueError(f"zstd needs magic 2, not {magic} (FMT-4)")
        return bytes(cramjam.zstd.compress(data))
    raise ValueError(f"unknown codec {codec!r}")


def decompress(codec: Codec, data: bytes, *, magic: int, offset: int = 0, field: str = "records") -> bytes:
    """Inverse of `compress`; any failure raises `CodecError(field, offset, reason)` (see module doc)."""
    if codec is Codec.ZSTD and magic < MAGIC_V2:
        raise CodecError(field, offset, f"zstd compression is not allowed for magic {magic} (FMT-4)")
    try:
        if codec is Codec.NONE:
            return bytes(data)
        if codec is Codec.GZIP:
            if not data:
                # Java's GZIPInputStream fails on an empty stream (no header); Python returns b"".
                raise ValueError("empty gzip stream (no header)")
            return gzip.decompress(data)
        if codec is Codec.SNAPPY:
            return _snappy_decompress(bytes(data))
        if codec is Codec.LZ4:
            return _lz4_decompress(bytes(data), magic)
        if codec is Codec.ZSTD:
            return bytes(cramjam.zstd.decompress(data))
    except CodecError:
        raise
    except Exception as exc:  # zlib/gzip, lz4 and cramjam each raise their own types; see module doc
        raise CodecError(field, offset, f"{codec.name.lower()} payload does not decompress: {exc}") from None
    raise CodecError(field, offset, f"unknown compression codec id {int(codec)}")


__all__ = [
    "LZ4_FRAME_MAGIC",
    "XERIAL_BLOCK_SIZE",
    "XERIAL_HEADER",
    "XERIAL_MAGIC",
    "compress",
    "decompress",
    "lz4_header_checksum",
]
