"""The reference codec: the model's own record layer (models/records.py builders, models/codec.py bytes,
models/conversion.py down-conversion) seen through the codec protocol. It is the oracle the codec suites compare
every library with, and it has every capability.

Each step a Kafka record layer takes is one named method (a seam), so that a codec mutant
(conformance/faults/codec_faults.py) changes exactly one of them:

- building: `refusal` (what the Java builders refuse, FMT-8), `written_type` (the type bit, VAL-8),
  `appended_time` (a broker-side builder's LogAppendTime, FMT-7/FMT-12), `wrapper_offset` and `wrapper_timestamp`
  (a compressed v1 wrapper, FMT-7), `base_timestamp` / `max_timestamp` / `timestamp_delta` (a v2 batch, FMT-11),
  `encode` (the bytes, FMT-1..3, FMT-9);
- reading: `batch_timestamp_type` (FMT-4, FMT-10, FMT-14) and `consumer_records` (CON-1: FMT-5..7, FMT-11, FMT-12);
- converting: `down_converted` (CNV-5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from conformance.judging.capabilities import CodecCapability
from conformance.targets.kinds.codec_library import BatchRequest, CodecRefused, ReadBatch
from conformance.targets.kinds.implementation import reference_version
from models.codec import decode_batches, encode_batches
from models.constants import MAGIC_V1, MAGICS, Codec, TimestampType
from models.conversion import DownConversionError, check_buildable, down_convert
from models.errors import BuildError, CodecError
from models.records import AnyBatch, ConsumerRecord, DefaultBatch, RecordSpec, build_batches, java_long


def check_request(request: BatchRequest) -> None:
    """FMT-8/FMT-4: raise BuildError where Kafka's builders refuse the records of `request`, by its timestamps, magic,
    codec and headers (models.conversion.check_buildable); the model's codec and the differential's model side ask
    it alike."""
    check_buildable(
        (r.timestamp for r in request.records),
        magic=request.magic,
        codec=request.codec,
        has_headers=any(r.headers for r in request.records),
    )


class ModelCodec:
    """The model's record layer as a codec library: builds as Apache Kafka's MemoryRecordsBuilder does (a
    producer's, or with `log_append_time` a broker's), reads as its consumer does, down-converts as 0.10-3.9."""

    name = "model"
    capabilities = frozenset(CodecCapability)
    build_magics = frozenset(MAGICS)
    read_magics = frozenset(MAGICS)
    codecs = frozenset(Codec)

    def __init__(self) -> None:
        self.version = reference_version()

    # -- building

    def build(self, request: BatchRequest) -> bytes:
        refused = self.refusal(request)
        if refused is not None:
            raise CodecRefused(refused)
        try:
            return self.encode(self.written(request))
        except CodecError as exc:  # a value its field cannot hold (e.g. a delta beyond an int64)
            raise CodecRefused(str(exc)) from None

    def refusal(self, request: BatchRequest) -> str | None:
        """FMT-8: the Java builders refuse a timestamp below -1 (whatever the magic), zstd and headers below v2;
        a LogAppendTime build needs the append time (MemoryRecordsBuilder's logAppendTime)."""
        try:
            check_request(request)
        except BuildError as exc:
            return str(exc)
        if request.timestamp_type is TimestampType.LOG_APPEND_TIME and request.log_append_time is None:
            return "a LogAppendTime batch is built with the broker's append time (log_append_time)"
        return None

    def written(self, request: BatchRequest) -> tuple[AnyBatch, ...]:
        """The batches a Kafka builder writes for `request` (models.records.build_batches), each header field
        through its seam."""
        built = build_batches(
            request.records,
            magic=request.magic,
            base_offset=request.base_offset,
            codec=request.codec,
            timestamp_type=self.written_type(request),
            log_append_time=self.appended_time(request),
        )
        return tuple(self._headers(batch, request) for batch in built)

    def _headers(self, batch: AnyBatch, request: BatchRequest) -> AnyBatch:
        records = request.records
        if isinstance(batch, DefaultBatch):
            base = self.base_timestamp(records)
            deltas = tuple(self.timestamp_delta(request, i, base) for i in range(len(records)))
            rebased = tuple(replace(r, timestamp_delta=d) for r, d in zip(batch.records_, deltas, strict=True))
            lat = batch.timestamp_type is TimestampType.LOG_APPEND_TIME and request.log_append_time is not None
            highest = batch.max_timestamp if lat else self.max_timestamp(records)
            return replace(batch, base_timestamp=base, max_timestamp=highest, records_=rebased)
        createtime_wrapper = (
            batch.magic == MAGIC_V1 and batch.is_compressed and batch.timestamp_type is TimestampType.CREATE_TIME
        )
        if batch.magic == MAGIC_V1 and batch.is_compressed:
            batch = replace(batch, offset=self.wrapper_offset(request))
        if createtime_wrapper:
            return replace(batch, message=replace(batch.message, timestamp=self.wrapper_timestamp(records)))
        return batch

    def written_type(self, request: BatchRequest) -> TimestampType:
        """VAL-8: the type bit written is the one asked for (a producer asks for CreateTime)."""
        return request.timestamp_type

    def appended_time(self, request: BatchRequest) -> int | None:
        """FMT-7/FMT-12 (TV-26): a broker-side LogAppendTime build stamps this append time."""
        return request.log_append_time

    def wrapper_offset(self, request: BatchRequest) -> int:
        """FMT-7 (KIP-31): a v1 wrapper carries the absolute offset of its last inner message."""
        return request.base_offset + max(len(request.records) - 1, 0)

    def wrapper_timestamp(self, records: Sequence[RecordSpec]) -> int:
        """FMT-7: a CreateTime v1 wrapper carries the largest inner timestamp."""
        return max((r.timestamp for r in records), default=-1)

    def base_timestamp(self, records: Sequence[RecordSpec]) -> int:
        """FMT-11: BaseTimestamp is the first record appended (-1 for none)."""
        return records[0].timestamp if records else -1

    def max_timestamp(self, records: Sequence[RecordSpec]) -> int:
        """FMT-11: a CreateTime v2 batch's MaxTimestamp is the largest record timestamp."""
        return max((r.timestamp for r in records), default=-1)

    def timestamp_delta(self, request: BatchRequest, index: int, base: int) -> int:
        """FMT-11: each record's delta from BaseTimestamp (kept under LogAppendTime too, FMT-12)."""
        return java_long(request.records[index].timestamp - base)  # Java's long subtraction wraps

    def encode(self, batches: Sequence[AnyBatch]) -> bytes:
        """FMT-1..3, FMT-9: the bytes of the entries."""
        return encode_batches(batches)

    # -- reading

    def read(self, data: bytes) -> tuple[ReadBatch, ...]:
        try:
            batches = decode_batches(data)
        except CodecError as exc:
            raise CodecRefused(str(exc)) from None
        return tuple(self.read_batch(batch) for batch in batches)

    def read_batch(self, batch: AnyBatch) -> ReadBatch:
        return ReadBatch(
            magic=batch.magic,
            base_offset=batch.base_offset,
            last_offset=batch.last_offset,
            timestamp_type=self.batch_timestamp_type(batch),
            max_timestamp=batch.max_timestamp,
            records=self.consumer_records(batch),
        )

    def batch_timestamp_type(self, batch: AnyBatch) -> TimestampType:
        """FMT-4/FMT-10/FMT-14: v0 NoTimestampType, otherwise bit 3 of the (outer) attributes."""
        return batch.timestamp_type

    def consumer_records(self, batch: AnyBatch) -> tuple[ConsumerRecord, ...]:
        """CON-1: what a consumer reads from `batch` (models.records: FMT-5..7, FMT-11, FMT-12)."""
        return batch.records()

    # -- converting

    def convert(self, data: bytes, *, to_magic: int, first_offset: int = 0) -> bytes:
        try:
            batches = decode_batches(data)
            return self.encode(self.down_converted(batches, to_magic=to_magic, first_offset=first_offset))
        except DownConversionError as exc:
            raise CodecRefused(exc.message) from None
        except (BuildError, CodecError) as exc:
            raise CodecRefused(str(exc)) from None

    def down_converted(self, batches: Sequence[AnyBatch], *, to_magic: int, first_offset: int) -> tuple[AnyBatch, ...]:
        """CNV-5: Kafka 0.10-3.9's down-conversion of stored batches for a client reading at most `to_magic`."""
        return down_convert(batches, to_magic=to_magic, fetch_offset=first_offset)

    def close(self) -> None:
        return None


__all__ = ["ModelCodec"]
