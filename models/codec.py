"""Byte codec of Kafka message formats v0, v1 and v2 (docs/rules.md, FMT-1..14).

Public API::

    encode_batch(batch) -> bytes             one log entry (v0/v1) or one record batch (v2)
    encode_batches(batches) -> bytes         a record set: the entries concatenated
    encoded_size(batch) -> int               len(encode_batch(batch)), cached
    decode_batches(data, *, verify_crc=True, partial_tail=False, legacy_zstd=False, keep_count_lies=False)
                                             -> tuple[AnyBatch, ...]
    decode_batch(data, *, verify_crc=True) -> AnyBatch     exactly one entry
    legacy_crc(message) -> int               CRC32 of a v0/v1 message, magic..end (FMT-3)
    v2_crc(batch) -> int                     CRC-32C of a v2 batch, attributes..end (FMT-9)
    crc_matches(batch) -> bool               every CRC override (outer and inner) is None or correct

Layouts (big-endian): v0/v1 log entry = Offset int64, MessageSize int32 (FMT-1), then the message
CRC uint32, Magic int8, Attributes int8, [Timestamp int64, v1 only], Key (int32 length, -1 = null),
Value (int32 length, -1 = null) (FMT-2/3). A compressed wrapper's value is the compressed
concatenation of its inner log entries (FMT-7). v2: the 61-byte header of FMT-9, then the records
section (compressed as a whole per the codec bits), each record as in FMT-11 with zig-zag varints.
The magic of each entry is read at byte 16 for both layouts.

Canonical form: ``decode_batch(encode_batch(b)) == b`` for every batch whose override fields
(`DefaultBatch.crc/length/records_count`, `LegacyBatch.size`, `LegacyMessage.crc`) are None,
provided that v0 messages have ``timestamp=None``, v1 messages an int timestamp, and compressed
wrappers ``value=None`` (the encoder always writes a wrapper's value from `inner` and ignores
`value`; it ignores `inner` of an uncompressed message). The decoder sets an override field to None
when the stored value is the true one and keeps it otherwise (only possible for `crc` with
``verify_crc=False``, for a negative `records_count` of an empty batch and, with ``keep_count_lies``,
for a `records_count` over whole records: any other lie does not decode). The encoder honours every
override so that the suite can craft corrupt bytes. It also
encodes, for the same reason, things the decoder refuses: unknown codec bits 5..7 (records or the
legacy `value` written uncompressed), zstd on magic 0/1 (compressed with zstd anyway; read back only
with ``legacy_zstd``, as a broker reads it to refuse it), unknown
magic values in `LegacyMessage.magic` (laid out as v1 when the magic is >= 1, else as v0).

Errors: every bad input raises `models.errors.CodecError(field, offset, reason)` and nothing else
(no IndexError, struct.error, UnicodeDecodeError, ValueError or compression-library exception):

- `field` is the name of the field at fault, in the spec's words: ``offset``, ``size`` (legacy
  MessageSize), ``length`` (v2 Length), ``magic``, ``crc``, ``attributes``, ``timestamp``,
  ``key_length``, ``key``, ``value_length``, ``value``, ``partition_leader_epoch``,
  ``last_offset_delta``, ``base_timestamp``, ``max_timestamp``, ``producer_id``,
  ``producer_epoch``, ``base_sequence``, ``records_count``, ``records`` (v2 compressed section),
  and inside a v2 record ``record_length``, ``record_attributes``, ``timestamp_delta``,
  ``offset_delta``, ``headers_count``, ``header_key_length``, ``header_key``,
  ``header_value_length``, ``header_value``. Inner messages of a legacy wrapper use the same names
  as outer ones; the `reason` says "inner entry i".
- `offset` is the absolute byte offset, in the buffer given to the decoder, of that field. A
  field that lives inside compressed data has no byte of its own in the buffer: its offset is
  that of the compressed payload (the wrapper's value bytes, or the v2 records section at batch
  byte 61) and the reason gives the position inside the decompressed bytes.
- Who is blamed when lengths disagree: an entry whose size/Length is negative, smaller than
  the fixed header or runs past the buffer → ``size``/``length``; a legacy message whose fields
  run past or stop short of MessageSize → ``size``; v2 records running out exactly at a record
  boundary, or whole extra records after RecordsCount → ``records_count``; a record cut in the
  middle or extra bytes that are not whole records → ``length`` (uncompressed) or ``records``
  (compressed); fields running past or short of a record's own length → ``record_length``.
- A cut before byte 17 of an entry (where the magic lives) names ``offset`` (< 8 bytes left),
  ``size`` (< 12) or ``magic`` (< 17).
- Varints: a varint (int32 fields) longer than 5 bytes or a varlong longer than 10 bytes, or a
  value outside the field's range, names that field at the varint's first byte.
- A header key that is not valid UTF-8 names ``header_key`` (Kafka itself would decode it with
  replacement characters; the model refuses so that a conformance failure is visible).

Encoding a value that does not fit its field (a timestamp outside int64, an offset delta outside
int32, attributes outside uint8/uint16, a header key with lone surrogates, ...) raises
`CodecError` too, naming the field and the offset where it would have been written relative to
the start of the encoded entry (fields inside a v2 record report the record's start; fields of
inner legacy entries are relative to the uncompressed inner stream).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import crc32c as _crc32c

from .compression import compress, decompress
from .constants import CODEC_MASK, MAGIC_V0, MAGIC_V1, MAGIC_V2, Codec
from .errors import CodecError
from .records import AnyBatch, DefaultBatch, Header, LegacyBatch, LegacyMessage, Record

# FMT-9: v2 header, 61 bytes: BaseOffset, Length, PartitionLeaderEpoch, Magic, CRC, Attributes,
# LastOffsetDelta, BaseTimestamp, MaxTimestamp, ProducerId, ProducerEpoch, BaseSequence, RecordsCount.
_V2_HEADER = struct.Struct(">qiibIHiqqqhii")
V2_HEADER_SIZE = 61
V2_LENGTH_OFFSET = 8
V2_MAGIC_OFFSET = 16
V2_CRC_OFFSET = 17
V2_ATTRIBUTES_OFFSET = 21
V2_RECORDS_COUNT_OFFSET = 57
# Length counts the bytes after the Length field: 61 - 12 = 49 for an empty batch.
_V2_MIN_LENGTH = V2_HEADER_SIZE - 12
LOG_OVERHEAD = 12  # FMT-1: Offset int64 + MessageSize int32
MAGIC_OFFSET = 16  # both layouts: 12 + CRC 4 (legacy) or 8+4+4 (v2)
_LEGACY_MAGICS = (MAGIC_V0, MAGIC_V1)
_MAX_NESTING = 8  # nested legacy wrappers are craftable; a bound keeps adversarial input finite

_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "uint8": (0, (1 << 8) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "uint32": (0, (1 << 32) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}
_FORMATS = {
    "int8": ">b",
    "uint8": ">B",
    "int16": ">h",
    "uint16": ">H",
    "int32": ">i",
    "uint32": ">I",
    "int64": ">q",
}


# --------------------------------------------------------------------------------------------
# Writing


class _Writer:
    """A growing buffer whose range errors name the field and where it would have been written."""

    def __init__(self, base: int = 0) -> None:
        self.buf = bytearray()
        self.base = base

    @property
    def at(self) -> int:
        return self.base + len(self.buf)

    def fixed(self, kind: str, field: str, value: int) -> None:
        lo, hi = _RANGES[kind]
        if not isinstance(value, int) or not lo <= value <= hi:
            raise CodecError(field, self.at, f"{value!r} does not fit {kind} [{lo}, {hi}]")
        self.buf += struct.pack(_FORMATS[kind], value)

    def varint(self, field: str, value: int, *, bits: int = 32) -> None:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        if not isinstance(value, int) or not lo <= value <= hi:
            kind = "varint" if bits == 32 else "varlong"
            raise CodecError(field, self.at, f"{value!r} does not fit a {kind} [{lo}, {hi}]")
        # FMT-11: zig-zag, then 7 bits per byte, least significant group first.
        zz = ((value << 1) ^ (value >> (bits - 1))) & ((1 << bits) - 1)
        while zz >= 0x80:
            self.buf.append((zz & 0x7F) | 0x80)
            zz >>= 7
        self.buf.append(zz)

    def varlong(self, field: str, value: int) -> None:
        self.varint(field, value, bits=64)

    def raw(self, data: bytes) -> None:
        self.buf += data


def _write_v2_bytes(w: _Writer, field: str, data: bytes | None) -> None:
    if data is None:
        w.varint(f"{field}_length", -1)
        return
    w.varint(f"{field}_length", len(data))
    w.raw(data)


def _encode_record(record: Record, at: int) -> bytes:
    """FMT-11: Length varint, Attributes int8, TimestampDelta varlong, OffsetDelta varint, Key,
    Value, Headers. Range errors report `at`, the record's own start."""
    body = _Writer()
    try:
        body.fixed("uint8", "record_attributes", record.attributes)
        # FMT-11: deltas may be negative (zig-zag); any int64 delta is representable.
        body.varlong("timestamp_delta", record.timestamp_delta)
        body.varint("offset_delta", record.offset_delta)
        _write_v2_bytes(body, "key", record.key)
        _write_v2_bytes(body, "value", record.value)
        body.varint("headers_count", len(record.headers))
        for header in record.headers:
            try:
                key = header.key.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise CodecError(
                    "header_key", body.at, f"header key is not encodable as UTF-8: {exc}"
                ) from None
            _write_v2_bytes(body, "header_key", key)
            _write_v2_bytes(body, "header_value", header.value)
    except CodecError as exc:
        raise CodecError(exc.field, at, f"record at byte {at}: {exc.reason}") from None
    out = _Writer(at)
    out.varint("record_length", len(body.buf))
    out.raw(bytes(body.buf))
    return bytes(out.buf)


def _v2_tail(batch: DefaultBatch) -> bytes:
    """Attributes..end of a v2 batch: what the CRC-32C covers (FMT-9)."""
    records = _Writer(V2_HEADER_SIZE)
    for record in batch.records_:
        records.raw(_encode_record(record, records.at))
    section = bytes(records.buf)
    codec_id = batch.attributes & CODEC_MASK
    if codec_id != Codec.NONE and codec_id in Codec._value2member_map_:
        section = compress(Codec(codec_id), section, magic=MAGIC_V2)
    # Unknown codec ids 5..7 keep the records uncompressed: crafted input the decoder rejects.
    w = _Writer(V2_ATTRIBUTES_OFFSET)
    w.fixed("uint16", "attributes", batch.attributes)
    w.fixed("int32", "last_offset_delta", batch.last_offset_delta)
    w.fixed("int64", "base_timestamp", batch.base_timestamp)
    w.fixed("int64", "max_timestamp", batch.max_timestamp)
    w.fixed("int64", "producer_id", batch.producer_id)
    w.fixed("int16", "producer_epoch", batch.producer_epoch)
    w.fixed("int32", "base_sequence", batch.base_sequence)
    count = batch.records_count if batch.records_count is not None else len(batch.records_)
    w.fixed("int32", "records_count", count)
    w.raw(section)
    return bytes(w.buf)


def _encode_v2(batch: DefaultBatch) -> bytes:
    tail = _v2_tail(batch)
    w = _Writer()
    w.fixed("int64", "base_offset", batch.base_offset)
    # Length counts PartitionLeaderEpoch (4) + Magic (1) + CRC (4) + the tail.
    w.fixed("int32", "length", batch.length if batch.length is not None else 9 + len(tail))
    w.fixed("int32", "partition_leader_epoch", batch.partition_leader_epoch)
    w.fixed("int8", "magic", MAGIC_V2)
    w.fixed("uint32", "crc", batch.crc if batch.crc is not None else _crc32c.crc32c(tail))
    w.raw(tail)
    return bytes(w.buf)


def _legacy_body(message: LegacyMessage, at: int) -> bytes:
    """Magic..end of a v0/v1 message: what the CRC32 covers (FMT-3). `at` = offset of Magic."""
    w = _Writer(at)
    w.fixed("int8", "magic", message.magic)
    w.fixed("uint8", "attributes", message.attributes)
    if message.magic >= MAGIC_V1:
        # A v1 message without a timestamp is written as -1 (NO_TIMESTAMP, FMT-5's read value).
        w.fixed("int64", "timestamp", -1 if message.timestamp is None else message.timestamp)
    w.fixed("int32", "key_length", -1 if message.key is None else len(message.key))
    if message.key is not None:
        w.raw(message.key)
    codec_id = message.attributes & CODEC_MASK
    value = message.value
    if codec_id != Codec.NONE and codec_id in Codec._value2member_map_:
        inner = b"".join(_encode_legacy(entry, 0) for entry in message.inner)
        codec = Codec(codec_id)
        # FMT-4 forbids zstd below v2, but the suite must be able to send it and see it refused.
        value = compress(codec, inner, magic=MAGIC_V2 if codec is Codec.ZSTD else message.magic)
    w.fixed("int32", "value_length", -1 if value is None else len(value))
    if value is not None:
        w.raw(value)
    return bytes(w.buf)


def _encode_legacy(entry: LegacyBatch, at: int) -> bytes:
    body = _legacy_body(entry.message, at + LOG_OVERHEAD + 4)
    w = _Writer(at)
    w.fixed("int64", "offset", entry.offset)
    w.fixed("int32", "size", entry.size if entry.size is not None else 4 + len(body))
    crc = entry.message.crc if entry.message.crc is not None else zlib.crc32(body)
    w.fixed("uint32", "crc", crc)
    w.raw(body)
    return bytes(w.buf)


def _encode_uncached(batch: AnyBatch) -> bytes:
    if isinstance(batch, DefaultBatch):
        return _encode_v2(batch)
    return _encode_legacy(batch, 0)


# Batches are frozen values: equal batches have equal bytes, so an equality-keyed cache is exact.
# Only small encodings are kept so that the cache cannot pin large payloads in memory.
_CACHE: dict[AnyBatch, bytes] = {}
_CACHE_MAX_ENTRIES = 4096
_CACHE_MAX_BYTES = 64 * 1024


def encode_batch(batch: AnyBatch, *, cache: bool = True) -> bytes:
    """The bytes of one v2 batch or one v0/v1 log entry (see the module doc for overrides).
    `cache=False` always encodes afresh (benchmarks)."""
    if not cache:
        return _encode_uncached(batch)
    try:
        cached = _CACHE.get(batch)
    except TypeError:
        # An unhashable field (e.g. a bytearray key): encode without the cache.
        return _encode_uncached(batch)
    if cached is not None:
        return cached
    data = _encode_uncached(batch)
    if isinstance(batch, DefaultBatch):
        _note_section_size(batch, len(data))
    if len(data) <= _CACHE_MAX_BYTES:
        if len(_CACHE) >= _CACHE_MAX_ENTRIES:
            _CACHE.clear()  # crude but never wrong, and safe if two threads race here
        _CACHE[batch] = data
    return data


def encode_batches(batches: Sequence[AnyBatch], *, cache: bool = True) -> bytes:
    """A record set: the entries concatenated. Range errors report offsets in the whole set."""
    out = bytearray()
    for batch in batches:
        try:
            out += encode_batch(batch, cache=cache)
        except CodecError as exc:
            raise CodecError(exc.field, exc.offset + len(out), exc.reason) from None
    return bytes(out)


# The records section of a v2 batch depends only on its records and codec, and every header field is fixed
# width (FMT-9), so the batches the log derives from one sent batch (offsets, epoch, max timestamp and type
# assigned: the same `records_` tuple) share one size. Keyed by the tuple's identity, which the entry pins.
_SECTION_SIZES: dict[int, tuple[tuple[Record, ...], int, int]] = {}


def encoded_size(batch: AnyBatch) -> int:
    """Size in bytes of `encode_batch(batch)` (the log's byte accounting, IDX-4)."""
    if not isinstance(batch, DefaultBatch):
        return len(encode_batch(batch))
    codec_id = batch.attributes & CODEC_MASK
    known = _SECTION_SIZES.get(id(batch.records_))
    if known is not None and known[0] is batch.records_ and known[1] == codec_id:
        return V2_HEADER_SIZE + known[2]
    size = len(encode_batch(batch))
    _note_section_size(batch, size)
    return size


def _note_section_size(batch: DefaultBatch, size: int) -> None:
    if len(_SECTION_SIZES) >= _CACHE_MAX_ENTRIES:
        _SECTION_SIZES.clear()
    _SECTION_SIZES[id(batch.records_)] = (batch.records_, batch.attributes & CODEC_MASK, size - V2_HEADER_SIZE)


def legacy_crc(message: LegacyMessage) -> int:
    """CRC32 (zlib) over Magic..end of the message as the encoder writes it (FMT-3)."""
    return zlib.crc32(_legacy_body(message, LOG_OVERHEAD + 4))


def v2_crc(batch: DefaultBatch) -> int:
    """CRC-32C over Attributes..end as the encoder writes it (FMT-9; the leader epoch is not covered)."""
    result: int = _crc32c.crc32c(_v2_tail(batch))
    return result


def crc_matches(batch: AnyBatch) -> bool:
    """True when every CRC override in `batch` (outer and inner) is None or the computed value."""
    if isinstance(batch, DefaultBatch):
        return batch.crc is None or batch.crc == v2_crc(batch)
    return _message_crc_matches(batch.message)


def _message_crc_matches(message: LegacyMessage) -> bool:
    if message.crc is not None and message.crc != legacy_crc(message):
        return False
    if message.attributes & CODEC_MASK:
        return all(_message_crc_matches(entry.message) for entry in message.inner)
    return True


# --------------------------------------------------------------------------------------------
# Reading


@dataclass
class _Reader:
    """A cursor over `data[pos:end]`.

    `payload_at` is None when `data` is the caller's buffer (positions are absolute offsets);
    otherwise `data` is decompressed and every error points at the compressed payload's offset.
    A read past `end` blames `limit_field` at `limit_at` (the length field that set `end`), or the
    field being read when `limit_field` is None (the end of the buffer itself).
    """

    data: bytes
    pos: int
    end: int
    payload_at: int | None = None
    limit_field: str | None = None
    limit_at: int = 0
    where: str = ""

    def at(self, pos: int) -> int:
        return pos if self.payload_at is None else self.payload_at

    def describe(self, pos: int) -> str:
        if self.payload_at is None:
            return f"byte {pos}"
        return f"byte {pos} of the decompressed payload at byte {self.payload_at}"

    def error(self, field: str, pos: int, reason: str) -> CodecError:
        prefix = f"{self.where}: " if self.where else ""
        return CodecError(field, self.at(pos), f"{prefix}{reason}")

    def need(self, n: int, field: str) -> int:
        start = self.pos
        if n > self.end - start:
            reason = f"{field} at {self.describe(start)} needs {n} bytes but only {self.end - start} remain"
            if self.limit_field is None:
                raise self.error(field, start, reason + " (truncated)")
            raise self.error(
                self.limit_field, self.limit_at, reason + f" before the end set by {self.limit_field}"
            )
        self.pos = start + n
        return start

    def fixed(self, kind: str, field: str) -> int:
        fmt = _FORMATS[kind]
        start = self.need(struct.calcsize(fmt), field)
        (value,) = struct.unpack_from(fmt, self.data, start)
        result: int = value
        return result

    def take(self, n: int, field: str) -> bytes:
        start = self.need(n, field)
        return self.data[start : start + n]

    def varint(self, field: str, *, bits: int = 32) -> int:
        start = self.pos
        max_bytes = 5 if bits == 32 else 10
        raw = 0
        shift = 0
        for i in range(max_bytes + 1):
            if i == max_bytes:
                kind = "varint" if bits == 32 else "varlong"
                raise self.error(
                    field, start, f"{kind} longer than {max_bytes} bytes at {self.describe(start)}"
                )
            byte = self.data[self.need(1, field)]
            raw |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        if raw >> bits:
            raise self.error(field, start, f"varint at {self.describe(start)} exceeds {bits} bits")
        return (raw >> 1) ^ -(raw & 1)

    def varlong(self, field: str) -> int:
        return self.varint(field, bits=64)

    def bounded(self, end: int, limit_field: str, limit_pos: int, where: str | None = None) -> _Reader:
        return _Reader(
            self.data,
            self.pos,
            end,
            self.payload_at,
            limit_field,
            self.at(limit_pos),
            self.where if where is None else where,
        )


def _read_v2_bytes(r: _Reader, field: str) -> bytes | None:
    length_pos = r.pos
    length = r.varint(f"{field}_length")
    if length == -1:
        return None
    if length < -1:
        raise r.error(f"{field}_length", length_pos, f"negative length {length} at {r.describe(length_pos)}")
    return r.take(length, field)


def _read_record(r: _Reader, index: int) -> Record:
    start = r.pos
    length = r.varint("record_length")
    if length < 0:
        raise r.error("record_length", start, f"record {index} has negative length {length}")
    if length > r.end - r.pos:
        r.need(length, f"record {index}")  # raises, blaming whatever bounds `r`
    body = r.bounded(r.pos + length, "record_length", start)
    attributes = body.fixed("uint8", "record_attributes")
    timestamp_delta = body.varlong("timestamp_delta")
    offset_delta = body.varint("offset_delta")
    key = _read_v2_bytes(body, "key")
    value = _read_v2_bytes(body, "value")
    count_pos = body.pos
    count = body.varint("headers_count")
    if count < 0:
        raise body.error("headers_count", count_pos, f"record {index} has a negative header count {count}")
    headers: list[Header] = []
    for _ in range(count):
        key_pos = body.pos
        raw_key = _read_v2_bytes(body, "header_key")
        if raw_key is None:
            raise body.error("header_key_length", key_pos, f"record {index} has a null header key")
        try:
            header_key = raw_key.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise body.error(
                "header_key", key_pos, f"record {index}: header key is not UTF-8: {exc}"
            ) from None
        headers.append(Header(header_key, _read_v2_bytes(body, "header_value")))
    if body.pos != body.end:
        raise r.error(
            "record_length",
            start,
            f"record {index} declares {length} bytes but its fields end {body.end - body.pos} bytes earlier",
        )
    r.pos = body.end
    return Record(
        offset_delta=offset_delta,
        timestamp_delta=timestamp_delta,
        key=key,
        value=value,
        headers=tuple(headers),
        attributes=attributes,
    )


def _read_v2_records(r: _Reader, count: int, count_at: int, keep_count_lies: bool = False) -> tuple[Record, ...]:
    """Read RecordsCount records filling `r` exactly; see the module doc for who gets blamed.

    With `keep_count_lies` a section of whole records is read to its end whatever RecordsCount says (the
    caller keeps the stored count as the batch's `records_count` override): a broker reads the header first
    and refuses such a batch while iterating its records (VAL-14), so the lie must reach the validator."""
    if keep_count_lies:
        whole: list[Record] = []
        while r.pos < r.end:
            whole.append(_read_record(r, len(whole)))
        return tuple(whole)
    records: list[Record] = []
    for index in range(count):
        if r.pos == r.end:
            raise CodecError(
                "records_count", count_at, f"RecordsCount says {count} but the records end after {index}"
            )
        records.append(_read_record(r, index))
    if r.pos != r.end:
        left = r.end - r.pos
        extra = 0
        probe = _Reader(r.data, r.pos, r.end, r.payload_at, r.limit_field, r.limit_at, r.where)
        try:
            while probe.pos < probe.end:
                _read_record(probe, count + extra)
                extra += 1
        except CodecError:
            assert r.limit_field is not None
            raise CodecError(
                r.limit_field,
                r.limit_at,
                f"{left} bytes after the last of {max(count, 0)} records are not whole records",
            ) from None
        raise CodecError(
            "records_count",
            count_at,
            f"RecordsCount says {count} but {len(records) + extra} records are present",
        )
    return tuple(records)


def _decode_v2(data: bytes, start: int, verify_crc: bool, keep_count_lies: bool = False) -> tuple[DefaultBatch, int]:
    length_at = start + V2_LENGTH_OFFSET
    (length,) = struct.unpack_from(">i", data, length_at)
    if length < _V2_MIN_LENGTH:
        raise CodecError(
            "length", length_at, f"Length {length} is below the {_V2_MIN_LENGTH} bytes of the header"
        )
    end = start + LOG_OVERHEAD + length
    if end > len(data):
        raise CodecError(
            "length",
            length_at,
            f"Length {length} runs past the end of the buffer (batch would end at byte {end}, "
            f"buffer has {len(data)})",
        )
    (
        base_offset,
        _,
        epoch,
        _,
        stored_crc,
        attributes,
        last_offset_delta,
        base_ts,
        max_ts,
        producer_id,
        producer_epoch,
        base_sequence,
        records_count,
    ) = _V2_HEADER.unpack_from(data, start)
    computed_crc = _crc32c.crc32c(data[start + V2_ATTRIBUTES_OFFSET : end])
    if verify_crc and stored_crc != computed_crc:
        raise CodecError(
            "crc",
            start + V2_CRC_OFFSET,
            f"stored CRC-32C {stored_crc:#010x} != computed {computed_crc:#010x}",
        )
    codec_id = attributes & CODEC_MASK
    if codec_id not in Codec._value2member_map_:
        raise CodecError(
            "attributes", start + V2_ATTRIBUTES_OFFSET, f"unknown compression codec id {codec_id}"
        )
    section_at = start + V2_HEADER_SIZE
    count_at = start + V2_RECORDS_COUNT_OFFSET
    if codec_id == Codec.NONE:
        reader = _Reader(data, section_at, end, None, "length", length_at)
    else:
        plain = decompress(Codec(codec_id), data[section_at:end], magic=MAGIC_V2, offset=section_at)
        reader = _Reader(plain, 0, len(plain), section_at, "records", section_at)
    records = _read_v2_records(reader, records_count, count_at, keep_count_lies)
    batch = DefaultBatch(
        base_offset=base_offset,
        partition_leader_epoch=epoch,
        attributes=attributes,
        last_offset_delta=last_offset_delta,
        base_timestamp=base_ts,
        max_timestamp=max_ts,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        records_=records,
        crc=None if stored_crc == computed_crc else stored_crc,
        records_count=None if records_count == len(records) else records_count,
    )
    return batch, end


def _read_legacy_bytes(m: _Reader, field: str) -> bytes | None:
    length_pos = m.pos
    length = m.fixed("int32", f"{field}_length")
    if length == -1:
        return None
    if length < -1:
        raise m.error(f"{field}_length", length_pos, f"negative length {length} at {m.describe(length_pos)}")
    return m.take(length, field)


def _decode_legacy(r: _Reader, verify_crc: bool, depth: int, legacy_zstd: bool = False) -> LegacyBatch:
    """One v0/v1 log entry at `r.pos` (FMT-1..3); wrappers are decompressed recursively (FMT-7)."""
    offset = r.fixed("int64", "offset")
    size_pos = r.pos
    size = r.fixed("int32", "size")
    if size < 0:
        raise r.error("size", size_pos, f"negative MessageSize {size}")
    if size > r.end - r.pos:
        raise r.error(
            "size",
            size_pos,
            f"MessageSize {size} runs past the end ({r.end - r.pos} bytes left after {r.describe(r.pos)})",
        )
    m = r.bounded(r.pos + size, "size", size_pos)
    crc_pos = m.pos
    stored_crc = m.fixed("uint32", "crc")
    magic_pos = m.pos
    magic = m.fixed("int8", "magic")
    if magic not in _LEGACY_MAGICS:
        raise m.error("magic", magic_pos, f"unknown magic {magic} (expected 0 or 1 in a legacy entry)")
    computed_crc = zlib.crc32(r.data[magic_pos : m.end])
    if verify_crc and stored_crc != computed_crc:
        raise m.error("crc", crc_pos, f"stored CRC32 {stored_crc:#010x} != computed {computed_crc:#010x}")
    attributes_pos = m.pos
    attributes = m.fixed("uint8", "attributes")
    codec_id = attributes & CODEC_MASK
    if codec_id not in Codec._value2member_map_:
        raise m.error("attributes", attributes_pos, f"unknown compression codec id {codec_id}")
    if codec_id == Codec.ZSTD and not legacy_zstd:
        raise m.error("attributes", attributes_pos, f"zstd is not allowed for magic {magic} (FMT-4)")
    timestamp = m.fixed("int64", "timestamp") if magic == MAGIC_V1 else None
    key = _read_legacy_bytes(m, "key")
    value_pos = m.pos
    value = _read_legacy_bytes(m, "value")
    if m.pos != m.end:
        raise r.error(
            "size", size_pos, f"MessageSize {size} exceeds the message's fields by {m.end - m.pos} bytes"
        )
    r.pos = m.end
    inner: tuple[LegacyBatch, ...] = ()
    if codec_id != Codec.NONE:
        if value is None:
            raise m.error("value_length", value_pos, "a compressed wrapper has a null value (FMT-7)")
        if depth >= _MAX_NESTING:
            raise m.error("value", value_pos + 4, f"wrappers nested more than {_MAX_NESTING} deep")
        payload_at = m.at(value_pos + 4)
        # A zstd wrapper below v2 (read only with `legacy_zstd`) holds zstd frames as the encoder writes them.
        framing = MAGIC_V2 if codec_id == Codec.ZSTD else magic
        plain = decompress(Codec(codec_id), value, magic=framing, offset=payload_at, field="value")
        ir = _Reader(plain, 0, len(plain), payload_at)
        entries: list[LegacyBatch] = []
        while ir.pos < ir.end:
            ir.where = f"inner entry {len(entries)}"
            entries.append(_decode_legacy(ir, verify_crc, depth + 1, legacy_zstd))
        inner = tuple(entries)
        value = None
    message = LegacyMessage(
        magic=magic,
        attributes=attributes,
        timestamp=timestamp,
        key=key,
        value=value,
        inner=inner,
        crc=None if stored_crc == computed_crc else stored_crc,
    )
    return LegacyBatch(offset=offset, message=message)


def _entry_end_if_complete(data: bytes, pos: int) -> int | None:
    """End of the entry at `pos` per its size/Length field, or None when it runs past the buffer."""
    if len(data) - pos < LOG_OVERHEAD:
        return None
    (size,) = struct.unpack_from(">i", data, pos + 8)
    end = pos + LOG_OVERHEAD + size
    return end if size >= 0 and end <= len(data) else None


def _decode_entries(
    data: bytes, verify_crc: bool, partial_tail: bool, legacy_zstd: bool = False, keep_count_lies: bool = False
) -> list[tuple[int, AnyBatch]]:
    out: list[tuple[int, AnyBatch]] = []
    pos = 0
    while pos < len(data):
        if partial_tail and _entry_end_if_complete(data, pos) is None:
            break
        start = pos
        left = len(data) - pos
        if left < MAGIC_OFFSET + 1:
            field, at = (
                ("offset", pos) if left < 8 else ("size", pos + 8) if left < 12 else ("magic", pos + 16)
            )
            raise CodecError(field, at, f"truncated entry: {left} bytes left, the magic is at entry byte 16")
        (magic,) = struct.unpack_from(">b", data, pos + MAGIC_OFFSET)
        batch: AnyBatch
        if magic == MAGIC_V2:
            batch, pos = _decode_v2(data, pos, verify_crc, keep_count_lies)
        elif magic in (MAGIC_V0, MAGIC_V1):
            reader = _Reader(data, pos, len(data))
            batch = _decode_legacy(reader, verify_crc, 0, legacy_zstd)
            pos = reader.pos
        else:
            raise CodecError("magic", pos + MAGIC_OFFSET, f"unknown magic {magic} (expected 0, 1 or 2)")
        out.append((start, batch))
    return out


def decode_batches(
    data: bytes,
    *,
    verify_crc: bool = True,
    partial_tail: bool = False,
    legacy_zstd: bool = False,
    keep_count_lies: bool = False,
) -> tuple[AnyBatch, ...]:
    """Decode a record set (concatenated v0/v1 entries and v2 batches; the magic at byte 16 of
    each entry picks the layout). With `verify_crc` a wrong CRC raises CodecError("crc", ...),
    otherwise it is kept in the batch's `crc` field. With `partial_tail` an incomplete last entry
    (its size/Length runs past the end) is dropped, as Kafka consumers do with a fetch response
    cut at its byte limit; everything else still raises. With `legacy_zstd` a v0/v1 wrapper with
    the zstd codec is read (a broker reads it, then refuses it on its codec bits, FMT-4/CMP-1)
    instead of raising. With `keep_count_lies` a v2 batch whose RecordsCount disagrees with the whole records
    its section holds is read with every record and the stored count kept in `records_count`, as a broker
    reads it to refuse it with INVALID_RECORD (VAL-14) rather than as undecodable bytes."""
    entries = _decode_entries(bytes(data), verify_crc, partial_tail, legacy_zstd, keep_count_lies)
    return tuple(batch for _, batch in entries)


def decode_batch(data: bytes, *, verify_crc: bool = True) -> AnyBatch:
    """Decode exactly one entry; zero or several raise CodecError("offset", <start of the second>)."""
    entries = _decode_entries(bytes(data), verify_crc, False)
    if not entries:
        raise CodecError("offset", 0, "expected one entry, the buffer is empty")
    if len(entries) > 1:
        raise CodecError("offset", entries[1][0], f"expected one entry, found {len(entries)}")
    return entries[0][1]


__all__ = [
    "LOG_OVERHEAD",
    "V2_HEADER_SIZE",
    "crc_matches",
    "decode_batch",
    "decode_batches",
    "encode_batch",
    "encode_batches",
    "encoded_size",
    "legacy_crc",
    "v2_crc",
]
