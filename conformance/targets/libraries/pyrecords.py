"""The record layer of kafka-python and aiokafka seen through the codec protocol
(conformance/targets/kinds/codec_library.py).

Both libraries ship the same record API (aiokafka's began as a copy of kafka-python's): a v2 builder
`DefaultRecordBatchBuilder(magic, compression_type, is_transactional, producer_id, producer_epoch, base_sequence,
batch_size)`, a v0/v1 builder `LegacyRecordBatchBuilder(magic, compression_type, batch_size)`, both with
`append(offset, timestamp, key, value, headers)` and `build()`, and batch readers that iterate records with
`offset`, `timestamp`, `timestamp_type`, `key`, `value`, `headers`. `PythonRecordLayer` drives such a record layer
as each library's producer and consumer do, and only translates values:

- building: records are appended with offsets 0..n-1 (a producer's relative offsets; both producers do so), the
  batch at base offset 0 (the broker assigns offsets);
- reading: the library's `None` timestamp type of a v0 record (it has no NoTimestampType) is NoTimestampType, its
  `None` timestamp is -1 (NO_TIMESTAMP, what Java's ConsumerRecord shows, CON-1); a batch's type is the batch's
  own getter where the library has one, else its first record's; its max timestamp where the library exposes it
  (v2), else None; a legacy batch's base and last offsets are its first and last record's;
- anything the library raises (its own errors, a TypeError, a struct.error, an AssertionError) is CodecRefused
  with the library's message: the suites decide whether refusing was right.

Neither library has a broker-side LogAppendTime builder ("Timestamp Type is set by Broker") nor a down-converter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from conformance.judging.capabilities import CodecCapability
from conformance.targets.kinds.codec_library import BatchRequest, CodecRefused, ReadBatch
from models.constants import MAGIC_V2, NO_TIMESTAMP, Codec, TimestampType
from models.records import ConsumerRecord, Header

# Larger than any batch the suites build: the builders refuse an append past batch_size (except the first).
_BATCH_SIZE = 1 << 30


def _type(raw: int | None) -> TimestampType:
    return TimestampType.NO_TIMESTAMP_TYPE if raw is None else TimestampType(raw)


@dataclass(kw_only=True, eq=False)
class PythonRecordLayer:
    """A kafka-python-style record layer as a codec library (see the module doc)."""

    capabilities = frozenset({CodecCapability.BUILD, CodecCapability.READ, CodecCapability.BATCH_MAX_TIMESTAMP})
    build_magics = frozenset({0, 1, 2})
    read_magics = frozenset({0, 1, 2})

    name: str
    version: str
    codecs: frozenset[Codec]
    default_builder: Callable[..., Any]  # DefaultRecordBatchBuilder
    legacy_builder: Callable[..., Any]  # LegacyRecordBatchBuilder
    batches: Callable[[bytes], Iterable[tuple[int, Any]]]  # a record set's batches with their magic

    def build(self, request: BatchRequest) -> bytes:
        if request.timestamp_type is not TimestampType.CREATE_TIME or request.log_append_time is not None:
            raise CodecRefused(f"{self.name} has no LogAppendTime builder (the broker sets the timestamp type)")
        if request.base_offset != 0:
            raise CodecRefused(f"{self.name}'s builders write base offset 0, as its producer does")
        try:
            if request.magic == MAGIC_V2:
                builder = self.default_builder(2, int(request.codec), 0, -1, -1, -1, _BATCH_SIZE)
                for i, r in enumerate(request.records):
                    builder.append(i, r.timestamp, r.key, r.value, [(h.key, h.value) for h in r.headers])
            else:
                if any(r.headers for r in request.records):
                    raise CodecRefused(f"magic v{request.magic} has no record headers")
                builder = self.legacy_builder(request.magic, int(request.codec), _BATCH_SIZE)
                for i, r in enumerate(request.records):
                    builder.append(i, r.timestamp, r.key, r.value)
            return bytes(builder.build())
        except CodecRefused:
            raise
        except Exception as exc:  # the library's own refusal, whatever it raises
            raise CodecRefused(f"{type(exc).__name__}: {exc}") from None

    def read(self, data: bytes) -> tuple[ReadBatch, ...]:
        try:
            return tuple(self._read_batch(magic, batch) for magic, batch in self.batches(bytes(data)))
        except Exception as exc:  # the library's own refusal, whatever it raises
            raise CodecRefused(f"{type(exc).__name__}: {exc}") from None

    def _read_batch(self, magic: int, batch: Any) -> ReadBatch:
        records = tuple(
            ConsumerRecord(
                offset=r.offset,
                timestamp=NO_TIMESTAMP if r.timestamp is None else r.timestamp,
                timestamp_type=_type(r.timestamp_type),
                key=r.key,
                value=r.value,
                headers=tuple(Header(k, v) for k, v in (r.headers or ())),
            )
            for r in batch
        )
        if magic == MAGIC_V2:
            return ReadBatch(
                magic=magic,
                base_offset=batch.base_offset,
                last_offset=batch.base_offset + batch.last_offset_delta,
                timestamp_type=_type(batch.timestamp_type),
                max_timestamp=batch.max_timestamp,
                records=records,
            )
        own_type = getattr(batch, "timestamp_type", _NOT_EXPOSED)
        if own_type is _NOT_EXPOSED:
            own_type = records[0].timestamp_type if records else TimestampType.NO_TIMESTAMP_TYPE
        else:
            own_type = _type(own_type)
        return ReadBatch(
            magic=magic,
            base_offset=records[0].offset if records else -1,
            last_offset=records[-1].offset if records else -1,
            timestamp_type=own_type,
            max_timestamp=None,
            records=records,
        )

    def convert(self, data: bytes, *, to_magic: int, first_offset: int = 0) -> bytes:
        raise CodecRefused(f"{self.name} has no down-converter")

    def close(self) -> None:
        return None


_NOT_EXPOSED = object()


def sliced(data: bytes) -> Iterator[tuple[int, memoryview]]:
    """(magic, bytes) of each whole entry of a record set, by the Length field at byte 8 and the magic at byte
    16 that every format shares (as both libraries' MemoryRecords do); a partial tail is left out."""
    view = memoryview(data)
    pos = 0
    while len(data) - pos >= 17:
        length = int.from_bytes(data[pos + 8 : pos + 12], "big", signed=True)
        end = pos + 12 + length
        if length < 0 or end > len(data):
            return
        yield int.from_bytes(data[pos + 16 : pos + 17], "big", signed=True), view[pos:end]
        pos = end
