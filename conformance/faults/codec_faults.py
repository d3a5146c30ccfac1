"""Record-codec faults: the reference codec (conformance.targets.libraries.model.model_codec.ModelCodec) with one
step changed,
each a fault some client or codec library has shipped or could ship. They run the codec suites (kind CODEC:
suites/test_codec_*.py) as `--target mutant:<id>`, as the implementation `mutant:<id>` whose `.codec` is the
faulty codec; each overrides one named seam of ModelCodec (its building, reading or converting step).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from conformance.faults.mutant import _mutant, _rewritten
from conformance.targets.kinds.codec_library import BatchRequest
from conformance.targets.kinds.codec_target import CodecImplementation
from conformance.targets.kinds.implementation import Implementation, Kind
from conformance.targets.libraries.model.model_codec import ModelCodec
from conformance.targets.target import mutant_name
from models.codec import LOG_OVERHEAD, encode_batch
from models.constants import (
    DELETE_HORIZON_MASK,
    MAGIC_V0,
    MAGIC_V1,
    MAGIC_V2,
    NO_TIMESTAMP,
    TIMESTAMP_TYPE_MASK,
    Codec,
    TimestampType,
)
from models.profiles import Profile
from models.records import AnyBatch, ConsumerRecord, DefaultBatch, LegacyBatch, RecordSpec

LAT = TimestampType.LOG_APPEND_TIME
CREATE_TIME = TimestampType.CREATE_TIME


@dataclass(frozen=True)
class CodecBuild:
    """The build of a codec mutant: the implementation `mutant:<id>` holding a `codec` instance. A value of a name
    and a class, so the mutant pickles by reference (as a broker mutant's ModelBuild)."""

    mutant_id: str
    codec: type[ModelCodec]

    def __call__(self, profile: Profile) -> Implementation:
        return CodecImplementation(mutant_name(self.mutant_id), profile, self.codec())


def _codec_mutant(mutant_id: str, description: str, clauses: Sequence[str], codec: type[ModelCodec]) -> None:
    """Register a codec mutant built by CodecBuild."""
    _mutant(mutant_id, description, clauses, kind=Kind.CODEC)(CodecBuild(mutant_id, codec))


# --------------------------------------------------------------------------------------------- building


class _SetsLatBit(ModelCodec):
    def written_type(self, request: BatchRequest) -> TimestampType:
        return LAT


_codec_mutant(
    "codec-builder-sets-lat-bit",
    "A producer's builder sets the LogAppendTime bit (bit 3) on what it writes, which a broker rejects (VAL-8).",
    ("FMT.builder-createtime-type",),
    _SetsLatBit,
)


class _DeltasFromPrevious(ModelCodec):
    def timestamp_delta(self, request: BatchRequest, index: int, base: int) -> int:
        previous = request.records[index - 1].timestamp if index else base
        return request.records[index].timestamp - previous


_codec_mutant(
    "codec-builder-deltas-from-previous",
    "A v2 builder writes each TimestampDelta relative to the previous record instead of BaseTimestamp (FMT-11), so "
    "records from the third on read wrong times.",
    ("FMT.builder-keeps-record-timestamps",),
    _DeltasFromPrevious,
)


class _WrapperZero(ModelCodec):
    def wrapper_timestamp(self, records: Sequence[RecordSpec]) -> int:
        return 0


_codec_mutant(
    "codec-builder-v1-wrapper-zero",
    "A producer writes 0 as a compressed CreateTime v1 wrapper's timestamp instead of the largest inner one (FMT-7; "
    "the broker recomputes it, VAL-13).",
    ("FMT.builder-v1-wrapper-max",),
    _WrapperZero,
)


class _BaseMin(ModelCodec):
    def base_timestamp(self, records: Sequence[RecordSpec]) -> int:
        return min((r.timestamp for r in records), default=NO_TIMESTAMP)


_codec_mutant(
    "codec-builder-v2-base-min",
    "A v2 builder writes the smallest record timestamp as BaseTimestamp instead of the first record's (FMT-11), "
    "deltas rebased so the records still read right.",
    ("FMT.builder-v2-base-first",),
    _BaseMin,
)


class _MaxLast(ModelCodec):
    def max_timestamp(self, records: Sequence[RecordSpec]) -> int:
        return records[-1].timestamp if records else NO_TIMESTAMP


_codec_mutant(
    "codec-builder-v2-max-last",
    "A v2 builder writes the last record's timestamp as MaxTimestamp instead of the largest (FMT-11).",
    ("FMT.builder-v2-max",),
    _MaxLast,
)


class _WrapperOffsetFirst(ModelCodec):
    def wrapper_offset(self, request: BatchRequest) -> int:
        return request.base_offset


_codec_mutant(
    "codec-builder-v1-wrapper-offset-first",
    "A compressed v1 wrapper carries the offset of its first inner message instead of its last (FMT-7, KIP-31).",
    ("FMT.v1-wrapper-relative-offsets",),
    _WrapperOffsetFirst,
)


class _LengthWithPrefix(ModelCodec):
    def encode(self, batches: Sequence[AnyBatch]) -> bytes:
        # FMT-9: Length counts the bytes after itself; this writer counts BaseOffset and Length too.
        return b"".join(
            encode_batch(replace(b, length=len(encode_batch(b)))) if isinstance(b, DefaultBatch) else encode_batch(b)
            for b in batches
        )


_codec_mutant(
    "codec-builder-v2-length-with-prefix",
    "A v2 writer's Length field counts the 12 bytes of BaseOffset and Length too (FMT-9), so readers run past the "
    "batch.",
    ("FMT.v2-header-layout",),
    _LengthWithPrefix,
)


class _SizeWithoutCrc(ModelCodec):
    def encode(self, batches: Sequence[AnyBatch]) -> bytes:
        # FMT-1: MessageSize covers the whole message, CRC included; this writer leaves the CRC out.
        return b"".join(
            encode_batch(replace(b, size=len(encode_batch(b)) - LOG_OVERHEAD - 4))
            if isinstance(b, LegacyBatch)
            else encode_batch(b)
            for b in batches
        )


_codec_mutant(
    "codec-builder-legacy-size-without-crc",
    "A v0/v1 writer's MessageSize leaves out the 4-byte CRC (FMT-1), so the entries do not frame.",
    ("FMT.legacy-entry-framing", "FMT.v0-no-timestamp"),
    _SizeWithoutCrc,
)


def _v0_with_timestamp(entry: LegacyBatch) -> bytes:
    """An uncompressed v0 message laid out with a v1 timestamp field (-1) after its attributes (FMT-2 has none)."""
    m = entry.message
    body = struct.pack(">bBq", MAGIC_V0, m.attributes, NO_TIMESTAMP)
    for field in (m.key, m.value):
        body += struct.pack(">i", -1) if field is None else struct.pack(">i", len(field)) + field
    return struct.pack(">qiI", entry.offset, 4 + len(body), zlib.crc32(body)) + body


class _V0WritesTimestamp(ModelCodec):
    def encode(self, batches: Sequence[AnyBatch]) -> bytes:
        return b"".join(
            _v0_with_timestamp(b)
            if isinstance(b, LegacyBatch) and b.magic == MAGIC_V0 and not b.is_compressed
            else encode_batch(b)
            for b in batches
        )


_codec_mutant(
    "codec-builder-v0-writes-timestamp",
    "A v0 writer lays out a timestamp field as v1 does (FMT-2: a v0 message has none, 14 bytes of overhead).",
    ("FMT.v0-no-timestamp",),
    _V0WritesTimestamp,
)


class _AcceptsBelowMinusOne(ModelCodec):
    def refusal(self, request: BatchRequest) -> str | None:
        # FMT-8's sign check left out: only what the format itself cannot hold is refused.
        valid = replace(request, records=tuple(replace(r, timestamp=max(r.timestamp, -1)) for r in request.records))
        return super().refusal(valid)


_codec_mutant(
    "codec-writer-accepts-below-minus-one",
    "A record writer accepts timestamps below -1 (FMT-8: Kafka's builders refuse them).",
    ("FMT.writer-rejects-below-minus-one",),
    _AcceptsBelowMinusOne,
)


class _LatKeepsCreateTime(ModelCodec):
    def appended_time(self, request: BatchRequest) -> int | None:
        return None


_codec_mutant(
    "codec-builder-lat-keeps-create-time",
    "A broker-side LogAppendTime build sets bit 3 but keeps the producer timestamps instead of the append time "
    "(TV-26: MaxTimestamp, v1 messages and wrapper carry it).",
    ("FMT.builder-log-append-time",),
    _LatKeepsCreateTime,
)


class _LatZeroDeltas(ModelCodec):
    def timestamp_delta(self, request: BatchRequest, index: int, base: int) -> int:
        if request.timestamp_type is LAT:
            return 0
        return super().timestamp_delta(request, index, base)


_codec_mutant(
    "codec-builder-lat-zero-deltas",
    "A LogAppendTime v2 build writes every TimestampDelta as 0, dropping the producer times that clearing bit 3 "
    "would expose again (FMT-12).",
    ("FMT.v2-lat-deltas-kept",),
    _LatZeroDeltas,
)


# --------------------------------------------------------------------------------------------- reading


def _each(records: tuple[ConsumerRecord, ...], **fields: object) -> tuple[ConsumerRecord, ...]:
    return tuple(replace(r, **fields) for r in records)  # type: ignore[arg-type]


class _Misreads(ModelCodec):
    """A reader fault: the records of each batch `misreads` picks are what `misread` makes of the model's
    reading (the `consumer_records` step); every other batch reads right."""

    def consumer_records(self, batch: AnyBatch) -> tuple[ConsumerRecord, ...]:
        records = super().consumer_records(batch)
        return self.misread(batch, records) if self.misreads(batch) else records

    def misreads(self, batch: AnyBatch) -> bool:
        return False

    def misread(self, batch: Any, records: tuple[ConsumerRecord, ...]) -> tuple[ConsumerRecord, ...]:
        return records


class _V0ReadsZero(_Misreads):
    def misreads(self, batch: AnyBatch) -> bool:
        return batch.magic == MAGIC_V0

    def misread(self, batch: Any, records: tuple[ConsumerRecord, ...]) -> tuple[ConsumerRecord, ...]:
        return _each(records, timestamp=0)


_codec_mutant(
    "codec-reader-v0-reads-zero",
    "A reader gives v0 records (no timestamp field) timestamp 0 instead of -1 (FMT-5).",
    ("CON.v0-no-timestamp", "FMT.v0-no-timestamp"),
    _V0ReadsZero,
)


def _plain_v1(batch: AnyBatch) -> bool:
    return isinstance(batch, LegacyBatch) and batch.magic == MAGIC_V1 and not batch.is_compressed


class _V1IgnoresTypeBit(_Misreads):
    """One fault, seen at both levels a reader reports it: bit 3 of a plain v1 message is not read."""

    def batch_timestamp_type(self, batch: AnyBatch) -> TimestampType:
        return CREATE_TIME if _plain_v1(batch) else super().batch_timestamp_type(batch)

    def misreads(self, batch: AnyBatch) -> bool:
        return _plain_v1(batch)

    def misread(self, batch: Any, records: tuple[ConsumerRecord, ...]) -> tuple[ConsumerRecord, ...]:
        return _each(records, timestamp_type=CREATE_TIME)


_codec_mutant(
    "codec-reader-v1-ignores-type-bit",
    "A reader ignores bit 3 of an uncompressed v1 message and reports CreateTime for a LogAppendTime one (FMT-4, "
    "FMT-6).",
    ("CON.v1-uncompressed-own", "FMT.v1-uncompressed-own-timestamp", "FMT.legacy-type-bit"),
    _V1IgnoresTypeBit,
)


def _wrapper(batch: AnyBatch) -> LegacyBatch | None:
    if isinstance(batch, LegacyBatch) and batch.magic == MAGIC_V1 and batch.is_compressed:
        return batch
    return None


class _MisreadsWrapper(_Misreads):
    """A reader fault of the inner messages of a compressed v1 wrapper of `wrapper_type` (None: of any type):
    `inner` is what the reader makes of each record with its inner entry."""

    wrapper_type: TimestampType | None = None

    def misreads(self, batch: AnyBatch) -> bool:
        wrapper = _wrapper(batch)
        return wrapper is not None and self.wrapper_type in (None, wrapper.timestamp_type)

    def misread(self, batch: Any, records: tuple[ConsumerRecord, ...]) -> tuple[ConsumerRecord, ...]:
        return tuple(self.inner(batch, r, e) for r, e in zip(records, batch.message.inner, strict=True))

    def inner(self, wrapper: LegacyBatch, record: ConsumerRecord, entry: LegacyBatch) -> ConsumerRecord:
        return record


class _CreateTimeWrapperTime(_MisreadsWrapper):
    wrapper_type = CREATE_TIME

    def misread(self, batch: Any, records: tuple[ConsumerRecord, ...]) -> tuple[ConsumerRecord, ...]:
        return _each(records, timestamp=batch.max_timestamp)


_codec_mutant(
    "codec-reader-createtime-wrapper-time",
    "A reader gives every inner record of a CreateTime v1 wrapper the wrapper's timestamp instead of its own (FMT-7).",
    ("CON.v1-wrapper-createtime-inner",),
    _CreateTimeWrapperTime,
)


class _LatWrapperInnerTime(_MisreadsWrapper):
    wrapper_type = LAT

    def inner(self, wrapper: LegacyBatch, record: ConsumerRecord, entry: LegacyBatch) -> ConsumerRecord:
        return replace(record, timestamp=entry.message.stored_timestamp)


_codec_mutant(
    "codec-reader-lat-wrapper-inner-time",
    "A reader takes the inner records' own timestamps under a LogAppendTime v1 wrapper instead of the wrapper's "
    "(FMT-7; the client bug class of Sarama #885 and KafkaJS #838).",
    ("CON.v1-wrapper-lat-wrapper-value",),
    _LatWrapperInnerTime,
)


class _V0InnerWrapperTime(_MisreadsWrapper):
    wrapper_type = LAT

    def inner(self, wrapper: LegacyBatch, record: ConsumerRecord, entry: LegacyBatch) -> ConsumerRecord:
        return replace(record, timestamp=wrapper.max_timestamp) if entry.message.magic == MAGIC_V0 else record


_codec_mutant(
    "codec-reader-v0-inner-wrapper-time",
    "A reader gives v0 inner messages of a LogAppendTime v1 wrapper the wrapper's time instead of -1 (FMT-7).",
    ("CON.v1-wrapper-v0-inner",),
    _V0InnerWrapperTime,
)


class _InnerTypeBit(_MisreadsWrapper):
    def inner(self, wrapper: LegacyBatch, record: ConsumerRecord, entry: LegacyBatch) -> ConsumerRecord:
        if entry.message.magic != MAGIC_V1:
            return record
        return replace(record, timestamp_type=LAT if entry.message.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME)


_codec_mutant(
    "codec-reader-inner-type-bit",
    "A reader reports an inner v1 message's own bit 3 as its type instead of the wrapper's (FMT-7, DIS-6).",
    ("FMT.v1-inner-type-bit-ignored",),
    _InnerTypeBit,
)


class _MisreadsV2(_Misreads):
    """A reader fault of the records of a v2 batch: `record` is what the reader makes of each one from its
    bytes' record (`rec`, with its TimestampDelta)."""

    def misreads(self, batch: AnyBatch) -> bool:
        return isinstance(batch, DefaultBatch)

    def misread(self, batch: Any, records: tuple[ConsumerRecord, ...]) -> tuple[ConsumerRecord, ...]:
        return tuple(self.record(batch, r, rec) for r, rec in zip(records, batch.records_, strict=True))

    def record(self, batch: DefaultBatch, record: ConsumerRecord, rec: Any) -> ConsumerRecord:
        return record


class _UnsignedDelta(_MisreadsV2):
    def misreads(self, batch: AnyBatch) -> bool:
        return super().misreads(batch) and batch.timestamp_type is not LAT

    def record(self, batch: DefaultBatch, record: ConsumerRecord, rec: Any) -> ConsumerRecord:
        return replace(record, timestamp=batch.base_timestamp + abs(rec.timestamp_delta))


_codec_mutant(
    "codec-reader-v2-unsigned-delta",
    "A v2 reader drops the sign of a TimestampDelta, so records earlier than the first read late (FMT-11).",
    ("CON.v2-createtime-base-plus-delta", "FMT.v2-record-delta"),
    _UnsignedDelta,
)


class _LatBasePlusDelta(_MisreadsV2):
    def misreads(self, batch: AnyBatch) -> bool:
        return super().misreads(batch) and batch.timestamp_type is LAT

    def record(self, batch: DefaultBatch, record: ConsumerRecord, rec: Any) -> ConsumerRecord:
        return replace(record, timestamp=batch.base_timestamp + rec.timestamp_delta)


_codec_mutant(
    "codec-reader-v2-lat-base-plus-delta",
    "A v2 reader reads LogAppendTime records as BaseTimestamp + delta instead of MaxTimestamp (FMT-12; the bug of "
    "ruby-kafka #706 and kafka_protocol #60).",
    ("CON.v2-lat-max-timestamp", "FMT.v2-lat-reads-max"),
    _LatBasePlusDelta,
)


class _V2NoTimestampType(ModelCodec):
    def batch_timestamp_type(self, batch: AnyBatch) -> TimestampType:
        if isinstance(batch, DefaultBatch) and batch.max_timestamp == NO_TIMESTAMP:
            return TimestampType.NO_TIMESTAMP_TYPE
        return super().batch_timestamp_type(batch)


_codec_mutant(
    "codec-reader-v2-no-timestamp-type",
    "A v2 reader reports NoTimestampType for a batch whose MaxTimestamp is -1 (FMT-10: never for v2).",
    ("FMT.v2-type-never-none",),
    _V2NoTimestampType,
)


class _HorizonDeltaOnly(_MisreadsV2):
    def misreads(self, batch: AnyBatch) -> bool:
        return super().misreads(batch) and bool(batch.attributes & DELETE_HORIZON_MASK)

    def record(self, batch: DefaultBatch, record: ConsumerRecord, rec: Any) -> ConsumerRecord:
        return replace(record, timestamp=rec.timestamp_delta)


_codec_mutant(
    "codec-reader-delete-horizon-delta-only",
    "A v2 reader takes BaseTimestamp for the delete horizon only and reads bare deltas when bit 6 is set "
    "(FMT-11, KIP-534).",
    ("FMT.v2-delete-horizon-base",),
    _HorizonDeltaOnly,
)


# --------------------------------------------------------------------------------------------- converting


class _DownConvertLosesType(ModelCodec):
    def down_converted(self, batches: Sequence[AnyBatch], *, to_magic: int, first_offset: int) -> tuple[AnyBatch, ...]:
        return _rewritten(
            super().down_converted(batches, to_magic=to_magic, first_offset=first_offset),
            lambda b: isinstance(b, LegacyBatch) and b.magic == MAGIC_V1 and b.timestamp_type is LAT,
            lambda b: b.with_header(timestamp_type=CREATE_TIME, max_timestamp=b.max_timestamp),
        )


_codec_mutant(
    "codec-down-convert-loses-type",
    "Down-conversion writes a LogAppendTime v2 batch as CreateTime v1 messages (CNV-5 keeps the type).",
    ("CNV.down-convert-keeps-type",),
    _DownConvertLosesType,
)


class _DownConvertWrapperZero(ModelCodec):
    def down_converted(self, batches: Sequence[AnyBatch], *, to_magic: int, first_offset: int) -> tuple[AnyBatch, ...]:
        return _rewritten(
            super().down_converted(batches, to_magic=to_magic, first_offset=first_offset),
            lambda b: _wrapper(b) is not None and b.timestamp_type is CREATE_TIME,
            lambda b: replace(b, message=replace(b.message, timestamp=0)),
        )


_codec_mutant(
    "codec-down-convert-wrapper-zero",
    "Down-conversion writes 0 as a CreateTime v1 wrapper's timestamp instead of the largest record timestamp "
    "(CNV-5).",
    ("CNV.down-convert-createtime-keeps-timestamps",),
    _DownConvertWrapperZero,
)


class _DownConvertV0AsV1(ModelCodec):
    def down_converted(self, batches: Sequence[AnyBatch], *, to_magic: int, first_offset: int) -> tuple[AnyBatch, ...]:
        return super().down_converted(batches, to_magic=max(to_magic, MAGIC_V1), first_offset=first_offset)


_codec_mutant(
    "codec-down-convert-v0-as-v1",
    "Down-conversion for a v0 reader writes v1 messages, timestamps and types included (CNV-5: v0 drops them).",
    ("CNV.down-convert-v0-drops",),
    _DownConvertV0AsV1,
)


class _DownConvertKeepsControl(ModelCodec):
    def down_converted(self, batches: Sequence[AnyBatch], *, to_magic: int, first_offset: int) -> tuple[AnyBatch, ...]:
        out: list[AnyBatch] = []
        for batch in batches:
            if isinstance(batch, DefaultBatch) and batch.is_control:
                out.append(batch)
            else:
                out.extend(super().down_converted((batch,), to_magic=to_magic, first_offset=first_offset))
        return tuple(out)


_codec_mutant(
    "codec-down-convert-keeps-control",
    "Down-conversion passes transaction markers (control batches) through to the old client (CNV-5 drops them).",
    ("CNV.down-convert-drops-control",),
    _DownConvertKeepsControl,
)


class _DownConvertZstdAsGzip(ModelCodec):
    def down_converted(self, batches: Sequence[AnyBatch], *, to_magic: int, first_offset: int) -> tuple[AnyBatch, ...]:
        regzipped = _rewritten(
            batches,
            lambda b: isinstance(b, DefaultBatch) and b.codec is Codec.ZSTD and to_magic < MAGIC_V2,
            lambda b: replace(b, attributes=(b.attributes & ~0x07) | int(Codec.GZIP), crc=None),
        )
        return super().down_converted(regzipped, to_magic=to_magic, first_offset=first_offset)


_codec_mutant(
    "codec-down-convert-zstd-as-gzip",
    "Down-conversion recompresses zstd batches with gzip instead of refusing them (CNV-5: "
    "UNSUPPORTED_COMPRESSION_TYPE).",
    ("CNV.down-convert-zstd-unsupported",),
    _DownConvertZstdAsGzip,
)
