"""The compact binary formats between Python and the bridge (kts.bridge.RecordsBridge), both directions.

Big-endian throughout; "bytes" = int32 length (-1 = null) + data; "text" = bytes of UTF-8.

- spec (what to build; `encode_spec`): int8 magic, int8 codec id, int8 timestamp type id, int64 logAppendTime
  (-1 = none), int64 baseOffset, int32 count, then per record int64 timestamp, bytes key, bytes value, int32
  header count, per header bytes key (UTF-8), bytes value.
- build / down-convert result (`decode_records_result`): int8 status (0 ok, 1 refused); ok: bytes records;
  refused: text "<Java exception class>: <message>".
- read result (`decode_read`): int8 status; ok: int32 batch count, then per batch int8 magic, int8 codec id,
  int8 timestamp type id, int64 baseOffset, int64 lastOffset, int64 maxTimestamp, int64 offsetOfMaxTimestamp
  (-1 = none), int8 CRC valid, int32 record count, per record int64 offset, int64 timestamp, bytes key, bytes
  value, int32 header count, per header bytes key, bytes value.
- oracle request / response (`encode_oracle_request`, `decode_oracle_response`): see RecordsBridge.oracle.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from conformance.targets.kinds.codec_library import BatchRequest, ReadBatch
from models.constants import NO_TIMESTAMP, Codec, TimestampType
from models.records import ConsumerRecord, Header

OK, REFUSED = 0, 1
_B = struct.Struct(">b")
_I = struct.Struct(">i")
_Q = struct.Struct(">q")
_SPEC_HEAD = struct.Struct(">bbbqqi")
_BATCH_HEAD = struct.Struct(">bbbqqqqbi")
_RECORD_HEAD = struct.Struct(">qq")


class CompactError(ValueError):
    """A bridge answer that does not parse: a bug of ours (bridge and Python out of step), never Kafka's."""


@dataclass(frozen=True)
class Refused:
    """Kafka's code refused the operation: its exception class and message."""

    detail: str


@dataclass(frozen=True)
class JavaBatch:
    """One batch as Kafka's reader reports it (RecordBatch getters, FMT-14) and its records (CON-1)."""

    magic: int
    codec: Codec
    timestamp_type: TimestampType
    base_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int  # RecordBatch.offsetOfMaxTimestamp(), -1 when empty
    crc_valid: bool
    records: tuple[ConsumerRecord, ...]

    def read_batch(self) -> ReadBatch:
        return ReadBatch(
            magic=self.magic,
            base_offset=self.base_offset,
            last_offset=self.last_offset,
            timestamp_type=self.timestamp_type,
            max_timestamp=self.max_timestamp,
            records=self.records,
        )


# --- writing ------------------------------------------------------------------------------------------


def _bytes(out: bytearray, data: bytes | None) -> None:
    if data is None:
        out += _I.pack(-1)
    else:
        out += _I.pack(len(data))
        out += data


def encode_spec(request: BatchRequest) -> bytes:
    """The spec of `request` for RecordsBridge.build (a missing log_append_time is sent as -1, NO_TIMESTAMP)."""
    out = bytearray(
        _SPEC_HEAD.pack(
            request.magic,
            int(request.codec),
            int(request.timestamp_type),
            NO_TIMESTAMP if request.log_append_time is None else request.log_append_time,
            request.base_offset,
            len(request.records),
        )
    )
    for record in request.records:
        out += _Q.pack(record.timestamp)
        _bytes(out, record.key)
        _bytes(out, record.value)
        out += _I.pack(len(record.headers))
        for header in record.headers:
            _bytes(out, header.key.encode("utf-8"))
            _bytes(out, header.value)
    return bytes(out)


@dataclass(frozen=True)
class Conversion:
    """One down-conversion the oracle asks for: Kafka's of the model's stored batch to `to_magic` from
    `first_offset`, and Kafka's reading of the model's own conversion (`model_records`, None when the model
    refused)."""

    to_magic: int
    first_offset: int
    model_records: bytes | None


def encode_oracle_request(spec: bytes, model_records: bytes | None, conversions: Sequence[Conversion]) -> bytes:
    out = bytearray()
    _bytes(out, spec)
    _bytes(out, model_records)
    out += _I.pack(len(conversions))
    for conversion in conversions:
        out += _B.pack(conversion.to_magic)
        out += _Q.pack(conversion.first_offset)
        _bytes(out, conversion.model_records)
    return bytes(out)


# --- reading ------------------------------------------------------------------------------------------


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def unpack(self, s: struct.Struct) -> tuple[int, ...]:
        try:
            values = s.unpack_from(self.data, self.pos)
        except struct.error:
            raise CompactError(f"bridge answer truncated at byte {self.pos} of {len(self.data)}") from None
        self.pos += s.size
        return tuple(values)

    def i8(self) -> int:
        return self.unpack(_B)[0]

    def i32(self) -> int:
        return self.unpack(_I)[0]

    def bytes_(self) -> bytes | None:
        length = self.i32()
        if length < 0:
            return None
        end = self.pos + length
        if end > len(self.data):
            raise CompactError(f"bridge answer truncated: {length} bytes at byte {self.pos} of {len(self.data)}")
        value = self.data[self.pos : end]
        self.pos = end
        return value

    def text(self) -> str:
        return (self.bytes_() or b"").decode("utf-8", "replace")

    def done(self) -> None:
        if self.pos != len(self.data):
            raise CompactError(f"{len(self.data) - self.pos} unexpected bytes at the end of a bridge answer")


def decode_records_result(blob: bytes) -> bytes | Refused:
    """A build or down-convert result: the records, or Kafka's refusal."""
    r = _Reader(blob)
    status = r.i8()
    if status == REFUSED:
        return Refused(r.text())
    records = r.bytes_()
    r.done()
    if status != OK or records is None:
        raise CompactError(f"unknown status {status} in a bridge answer")
    return records


def _timestamp_type(type_id: int) -> TimestampType:
    try:
        return TimestampType(type_id)
    except ValueError:
        raise CompactError(f"unknown timestamp type id {type_id} in a bridge answer") from None


def decode_read(blob: bytes) -> tuple[JavaBatch, ...] | Refused:
    """A read result: the batches as Kafka's reader reports them, or its refusal (e.g. corrupt input)."""
    r = _Reader(blob)
    status = r.i8()
    if status == REFUSED:
        return Refused(r.text())
    if status != OK:
        raise CompactError(f"unknown status {status} in a bridge answer")
    batches: list[JavaBatch] = []
    for _ in range(r.i32()):
        magic, codec_id, type_id, base_offset, last_offset, max_ts, offset_of_max, valid, count = r.unpack(_BATCH_HEAD)
        ts_type = _timestamp_type(type_id)
        records: list[ConsumerRecord] = []
        for _ in range(count):
            offset, timestamp = r.unpack(_RECORD_HEAD)
            key = r.bytes_()
            value = r.bytes_()
            headers = tuple(Header((r.bytes_() or b"").decode("utf-8", "replace"), r.bytes_()) for _ in range(r.i32()))
            # CON-1: a consumer record carries its batch's timestamp type (CompletedFetch.parseRecord).
            records.append(ConsumerRecord(offset, timestamp, ts_type, key, value, headers))
        batches.append(
            JavaBatch(
                magic=magic,
                codec=Codec(codec_id),
                timestamp_type=ts_type,
                base_offset=base_offset,
                last_offset=last_offset,
                max_timestamp=max_ts,
                offset_of_max_timestamp=offset_of_max,
                crc_valid=bool(valid),
                records=tuple(records),
            )
        )
    r.done()
    return tuple(batches)


@dataclass(frozen=True)
class ConversionAnswer:
    converted: bytes | Refused | None  # None: nothing to convert (the model had no stored bytes)
    read_converted: tuple[JavaBatch, ...] | Refused | None
    read_model_converted: tuple[JavaBatch, ...] | Refused | None


@dataclass(frozen=True)
class OracleAnswer:
    """Kafka's side of one differential case (RecordsBridge.oracle)."""

    built: bytes | Refused
    read_built: tuple[JavaBatch, ...] | Refused | None
    read_model: tuple[JavaBatch, ...] | Refused | None
    conversions: tuple[ConversionAnswer, ...]


def decode_oracle_response(blob: bytes, conversions: int) -> OracleAnswer:
    if not blob:
        raise CompactError("the bridge could not parse the oracle request (empty answer)")
    r = _Reader(blob)

    def read_or_none() -> tuple[JavaBatch, ...] | Refused | None:
        part = r.bytes_()
        return None if part is None else decode_read(part)

    build_part = r.bytes_()
    if build_part is None:
        raise CompactError("the oracle answer has no build result")
    built = decode_records_result(build_part)
    read_built = read_or_none()
    read_model = read_or_none()
    answers: list[ConversionAnswer] = []
    for _ in range(conversions):
        part = r.bytes_()
        converted = None if part is None else decode_records_result(part)
        answers.append(ConversionAnswer(converted, read_or_none(), read_or_none()))
    r.done()
    return OracleAnswer(built, read_built, read_model, tuple(answers))
