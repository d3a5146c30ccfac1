"""Records and batches of message formats v0, v1 and v2, and how a reader sees them (FMT-*, CON-1).

Two batch shapes, as in Kafka:

- `DefaultBatch`: a v2 record batch (FMT-9..12) holding `Record`s with timestamp/offset deltas.
- `LegacyBatch`: a v0/v1 log entry (FMT-1): an offset plus one `LegacyMessage`. When the message is
  a compressed wrapper, its `inner` entries are the decoded inner log entries (FMT-7).

Both are frozen and can hold *invalid* contents (a producer-set LogAppendTime bit, a wrapper
timestamp that is not the max, timestamps below -1, a wrong CRC through `crc`): the suite must be
able to craft anything a broker may receive. The `build_*` functions make the batches a well-behaved
Java producer would write (FMT-11: BaseTimestamp = the first record's timestamp, MaxTimestamp = max).

Every batch answers the same reader questions (`Batch` protocol): `magic`, `codec`,
`timestamp_type`, `max_timestamp`, `base_offset`, `last_offset`, `records()` (the consumer's
view, CON-1) and `offset_of_max_timestamp()` (FMT-14).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, runtime_checkable

from .constants import (
    CODEC_MASK,
    CONTROL_MASK,
    MAGIC_V0,
    MAGIC_V1,
    MAGIC_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    Codec,
    TimestampType,
)
from .errors import BuildError


@dataclass(frozen=True)
class Header:
    key: str
    value: bytes | None


@dataclass(frozen=True)
class ConsumerRecord:
    """What a consumer sees for one record (CON-1): its offset, read timestamp and the batch's type. The model's
    readers always give a type; None is a client library's record where the library exposes no timestamp type (a
    driver's null, docs/driver-protocol.md), which the client suites then do not compare."""

    offset: int
    timestamp: int
    timestamp_type: TimestampType | None
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()


@runtime_checkable
class Batch(Protocol):
    """The reader's questions every stored batch answers (FMT-14)."""

    @property
    def magic(self) -> int: ...
    @property
    def codec(self) -> Codec: ...
    @property
    def timestamp_type(self) -> TimestampType: ...
    @property
    def max_timestamp(self) -> int: ...
    @property
    def base_offset(self) -> int: ...
    @property
    def last_offset(self) -> int: ...
    @property
    def record_count(self) -> int: ...
    @property
    def partition_leader_epoch(self) -> int: ...
    def records(self) -> tuple[ConsumerRecord, ...]: ...
    def offset_of_max_timestamp(self) -> int: ...


def java_long(value: int) -> int:
    """`value` as a Java long: two's complement over 64 bits (Kafka's timestamp arithmetic wraps, FMT-11)."""
    return ((value + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def codec_of(attributes: int) -> int:
    """Raw codec id in bits 0-2 (may be an unknown id 5..7 in crafted input)."""
    return attributes & CODEC_MASK


def _codec(attributes: int) -> Codec:
    raw = attributes & CODEC_MASK
    return Codec(raw) if raw in Codec._value2member_map_ else Codec.NONE


# Kafka's IllegalArgumentException texts for NoTimestampType where a format needs a type (FMT-4, FMT-10):
# DefaultRecordBatch.computeAttributes, LegacyRecord.computeAttributes, the MemoryRecordsBuilder constructor.
V2_NO_TIMESTAMP_TYPE_TEXT = "Timestamp type must be provided to compute attributes for message format v2 and above"
V1_NO_TIMESTAMP_TYPE_TEXT = "Timestamp type must be provided to compute attributes for message format v1"
BUILDER_NO_TIMESTAMP_TYPE_TEXT = "TimestampType must be set for magic >= 0"


# --------------------------------------------------------------------------------------------
# v2 (FMT-9..12)


@dataclass(frozen=True, kw_only=True)
class Record:
    """One v2 record (FMT-11). Its timestamp is BaseTimestamp + `timestamp_delta` on CreateTime."""

    offset_delta: int
    timestamp_delta: int
    key: bytes | None = None
    value: bytes | None = None
    headers: tuple[Header, ...] = ()
    attributes: int = 0


@dataclass(frozen=True, kw_only=True)
class DefaultBatch:
    """A v2 record batch (FMT-9). `crc`, `length` and `records_count` override what the encoder
    would compute, to craft corrupt bytes; `None` means "the true value"."""

    base_offset: int = 0
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH
    attributes: int = 0
    last_offset_delta: int = 0
    base_timestamp: int = NO_TIMESTAMP
    max_timestamp: int = NO_TIMESTAMP
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    base_sequence: int = NO_SEQUENCE
    records_: tuple[Record, ...] = ()
    crc: int | None = None
    length: int | None = None
    records_count: int | None = None

    @property
    def magic(self) -> int:
        return MAGIC_V2

    @property
    def codec(self) -> Codec:
        return _codec(self.attributes)

    @property
    def timestamp_type(self) -> TimestampType:
        # FMT-10: a v2 batch never reports NoTimestampType.
        if self.attributes & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def record_count(self) -> int:
        return len(self.records_)

    def record_timestamp(self, record: Record) -> int:
        """FMT-11/FMT-12: the read timestamp of one record of this batch."""
        if self.timestamp_type is TimestampType.LOG_APPEND_TIME:
            return self.max_timestamp
        # FMT-11: BaseTimestamp + TimestampDelta in Java long arithmetic (DefaultRecord.readFrom), wrapping.
        return java_long(self.base_timestamp + record.timestamp_delta)

    def records(self) -> tuple[ConsumerRecord, ...]:
        ts_type = self.timestamp_type
        return tuple(
            ConsumerRecord(
                offset=self.base_offset + r.offset_delta,
                timestamp=self.record_timestamp(r),
                timestamp_type=ts_type,
                key=r.key,
                value=r.value,
                headers=r.headers,
            )
            for r in self.records_
        )

    def offset_of_max_timestamp(self) -> int:
        # FMT-14: the first record whose read timestamp equals the batch max.
        for r in self.records_:
            if self.record_timestamp(r) == self.max_timestamp:
                return self.base_offset + r.offset_delta
        return -1

    def with_header(self, *, timestamp_type: TimestampType, max_timestamp: int) -> DefaultBatch:
        """FMT-13: rewrite type and MaxTimestamp (BaseTimestamp untouched); the CRC is recomputed.

        FMT-10: bit 3 holds CreateTime or LogAppendTime only, so NoTimestampType raises BuildError, as Kafka's
        DefaultRecordBatch.setMaxTimestamp does (its computeAttributes throws IllegalArgumentException; the
        unchanged-header shortcut before it never matches, a v2 batch never reporting NoTimestampType)."""
        if timestamp_type is TimestampType.NO_TIMESTAMP_TYPE:
            raise BuildError(V2_NO_TIMESTAMP_TYPE_TEXT)
        attrs = self.attributes & ~TIMESTAMP_TYPE_MASK
        if timestamp_type is TimestampType.LOG_APPEND_TIME:
            attrs |= TIMESTAMP_TYPE_MASK
        return replace(self, attributes=attrs, max_timestamp=max_timestamp, crc=None)


# --------------------------------------------------------------------------------------------
# v0 / v1 (FMT-1..7)


@dataclass(frozen=True, kw_only=True)
class LegacyMessage:
    """A v0 or v1 message (FMT-2/3). `timestamp` is None for v0 (no field). When the codec bits
    are set the message is a wrapper and `inner` holds its decoded inner log entries; `value` is
    then ignored by the encoder (it compresses `inner`). `crc` overrides the computed CRC."""

    magic: int
    attributes: int = 0
    timestamp: int | None = None
    key: bytes | None = None
    value: bytes | None = None
    inner: tuple[LegacyBatch, ...] = ()
    crc: int | None = None

    @property
    def codec(self) -> Codec:
        return _codec(self.attributes)

    @property
    def own_timestamp_type(self) -> TimestampType:
        """FMT-4: v0 always reports NoTimestampType; v1 reads bit 3."""
        if self.magic == MAGIC_V0:
            return TimestampType.NO_TIMESTAMP_TYPE
        if self.attributes & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def stored_timestamp(self) -> int:
        """FMT-5: the timestamp field as stored (-1 for v0)."""
        if self.magic == MAGIC_V0 or self.timestamp is None:
            return NO_TIMESTAMP
        return self.timestamp


@dataclass(frozen=True, kw_only=True)
class LegacyBatch:
    """A v0/v1 log entry (FMT-1): `offset` + one message. For a compressed v1 wrapper the inner
    entries carry relative offsets (0..n-1 as written) and `offset` is the absolute offset of the
    last one (FMT-7, KIP-31); a v0 wrapper's inner entries carry absolute offsets. `size`
    overrides the MessageSize field to craft a lying length."""

    offset: int
    message: LegacyMessage
    size: int | None = None

    @property
    def magic(self) -> int:
        return self.message.magic

    @property
    def codec(self) -> Codec:
        return self.message.codec

    @property
    def partition_leader_epoch(self) -> int:
        return NO_PARTITION_LEADER_EPOCH

    @property
    def is_compressed(self) -> bool:
        return codec_of(self.message.attributes) != Codec.NONE

    @property
    def timestamp_type(self) -> TimestampType:
        return self.message.own_timestamp_type

    @property
    def max_timestamp(self) -> int:
        # FMT-14: legacy = outer message timestamp (-1 for v0).
        return self.message.stored_timestamp

    def inner_offsets(self) -> tuple[int, ...]:
        """Absolute offsets of the inner entries of a compressed wrapper (FMT-7, KIP-31): v1 inner
        offsets are relative, the wrapper carrying the absolute offset of the last one; v0 inner
        offsets are absolute already."""
        inner = self.message.inner
        if not inner:
            return ()
        if self.magic == MAGIC_V0:
            return tuple(e.offset for e in inner)
        if self.offset == 0:
            # FMT-7: a v1 wrapper at offset 0 (produce data of some librdkafka versions) has absolute base 0:
            # Kafka's deep iterator (AbstractLegacyRecordBatch) takes the inner offsets as they are.
            return tuple(e.offset for e in inner)
        last_relative = inner[-1].offset
        return tuple(self.offset - last_relative + e.offset for e in inner)

    @property
    def base_offset(self) -> int:
        if self.is_compressed and self.message.inner:
            return self.inner_offsets()[0]
        return self.offset

    @property
    def last_offset(self) -> int:
        return self.offset

    @property
    def record_count(self) -> int:
        return len(self.message.inner) if self.is_compressed else 1

    def records(self) -> tuple[ConsumerRecord, ...]:
        wrapper = self.message
        if not self.is_compressed:
            return (
                ConsumerRecord(
                    offset=self.offset,
                    timestamp=wrapper.stored_timestamp,
                    timestamp_type=wrapper.own_timestamp_type,
                    key=wrapper.key,
                    value=wrapper.value,
                ),
            )
        ts_type = wrapper.own_timestamp_type
        out: list[ConsumerRecord] = []
        for offset, entry in zip(self.inner_offsets(), wrapper.inner, strict=True):
            inner = entry.message
            out.append(
                ConsumerRecord(
                    offset=offset,
                    timestamp=self.inner_timestamp(inner),
                    timestamp_type=ts_type,
                    key=inner.key,
                    value=inner.value,
                )
            )
        return tuple(out)

    def inner_timestamp(self, inner: LegacyMessage) -> int:
        """FMT-7: the timestamp an inner message of this compressed wrapper reads: the wrapper's type wins;
        LogAppendTime reads the wrapper timestamp, otherwise the inner message's own stored value; an
        inner v0 message reads -1 either way."""
        if inner.magic == MAGIC_V0:
            return NO_TIMESTAMP
        if self.message.own_timestamp_type is TimestampType.LOG_APPEND_TIME:
            return self.message.stored_timestamp
        return inner.stored_timestamp

    def offset_of_max_timestamp(self) -> int:
        if self.magic == MAGIC_V0:
            return -1
        target = self.max_timestamp
        for r in self.records():
            if r.timestamp == target:
                return r.offset
        return -1

    def with_header(self, *, timestamp_type: TimestampType, max_timestamp: int) -> LegacyBatch:
        """FMT-13 legacy analogue: rewrite the outer timestamp and type bit; v0 cannot carry one."""
        if self.magic == MAGIC_V0:
            raise ValueError("a magic v0 message has no timestamp to set (FMT-13)")
        if timestamp_type is TimestampType.NO_TIMESTAMP_TYPE:
            # FMT-4: as for v2, Kafka's AbstractLegacyRecordBatch.setMaxTimestamp refuses it through
            # LegacyRecord.computeAttributes (IllegalArgumentException).
            raise BuildError(V1_NO_TIMESTAMP_TYPE_TEXT)
        attrs = self.message.attributes & ~TIMESTAMP_TYPE_MASK
        if timestamp_type is TimestampType.LOG_APPEND_TIME:
            attrs |= TIMESTAMP_TYPE_MASK
        msg = replace(self.message, attributes=attrs, timestamp=max_timestamp, crc=None)
        return replace(self, message=msg)


AnyBatch = DefaultBatch | LegacyBatch


# --------------------------------------------------------------------------------------------
# Builders: what a well-behaved Java producer writes.


@dataclass(frozen=True)
class RecordSpec:
    """Input to the builders: a record as a producer hands it over."""

    timestamp: int
    key: bytes | None = None
    value: bytes | None = None
    headers: tuple[Header, ...] = field(default=())


def _attrs(codec: Codec, timestamp_type: TimestampType, transactional: bool = False) -> int:
    attrs = int(codec)
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        attrs |= TIMESTAMP_TYPE_MASK
    if transactional:
        attrs |= TRANSACTIONAL_MASK
    return attrs


def build_v2(
    records: Sequence[RecordSpec],
    *,
    base_offset: int = 0,
    codec: Codec = Codec.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    log_append_time: int | None = None,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    transactional: bool = False,
) -> DefaultBatch:
    """FMT-11: BaseTimestamp = the first record's timestamp (-1 when empty), MaxTimestamp = the max
    (or `log_append_time` for a LogAppendTime batch, as `MemoryRecordsBuilder` writes it). NoTimestampType
    raises BuildError: v2 cannot express it (FMT-10) and Kafka's MemoryRecordsBuilder constructor refuses it."""
    if timestamp_type is TimestampType.NO_TIMESTAMP_TYPE:
        raise BuildError(BUILDER_NO_TIMESTAMP_TYPE_TEXT)
    base_ts = records[0].timestamp if records else NO_TIMESTAMP
    recs = tuple(
        Record(
            offset_delta=i,
            # FMT-11: the builder subtracts in Java long arithmetic (MemoryRecordsBuilder.appendDefaultRecord): -1
            # then Long.MAX gives delta Long.MIN, which the reader's wrapping sum turns back into Long.MAX.
            timestamp_delta=java_long(r.timestamp - base_ts),
            key=r.key,
            value=r.value,
            headers=r.headers,
        )
        for i, r in enumerate(records)
    )
    if timestamp_type is TimestampType.LOG_APPEND_TIME and log_append_time is not None:
        max_ts = log_append_time
    else:
        max_ts = max((r.timestamp for r in records), default=NO_TIMESTAMP)
    return DefaultBatch(
        base_offset=base_offset,
        partition_leader_epoch=partition_leader_epoch,
        attributes=_attrs(codec, timestamp_type, transactional),
        last_offset_delta=max(len(records) - 1, 0),
        base_timestamp=base_ts,
        max_timestamp=max_ts,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        records_=recs,
    )


def build_legacy(
    records: Sequence[RecordSpec],
    *,
    magic: int,
    base_offset: int = 0,
    codec: Codec = Codec.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    log_append_time: int | None = None,
    wrapper_timestamp: int | None = None,
    inner_as_written: bool = False,
) -> tuple[LegacyBatch, ...]:
    """v0/v1 entries as `MemoryRecordsBuilder` writes them: uncompressed → one entry per record;
    compressed → one wrapper whose timestamp is the inner max (CreateTime) or the append time
    (LogAppendTime), inner offsets 0..n-1 (FMT-7). `wrapper_timestamp` overrides the wrapper value.
    `inner_as_written`: a compressed wrapper's inner messages keep their own timestamps, as CreateTime, whatever
    the wrapper's type (0.10's builder copied each message as written: CMP-4)."""
    if magic not in (MAGIC_V0, MAGIC_V1):
        raise ValueError(f"legacy magic must be 0 or 1, not {magic}")
    if codec is Codec.ZSTD:
        raise ValueError("zstd needs magic v2 (FMT-4)")
    if magic == MAGIC_V1 and timestamp_type is TimestampType.NO_TIMESTAMP_TYPE:
        # FMT-4: a v1 message needs a type; Kafka's MemoryRecordsBuilder constructor refuses it for magic > 0.
        raise BuildError(BUILDER_NO_TIMESTAMP_TYPE_TEXT)
    is_lat = timestamp_type is TimestampType.LOG_APPEND_TIME and magic == MAGIC_V1

    def ts_of(r: RecordSpec) -> int | None:
        if magic == MAGIC_V0:
            return None
        if is_lat and log_append_time is not None:
            return log_append_time
        return r.timestamp

    type_attrs = TIMESTAMP_TYPE_MASK if is_lat else 0
    if codec is Codec.NONE:
        return tuple(
            LegacyBatch(
                offset=base_offset + i,
                message=LegacyMessage(
                    magic=magic, attributes=type_attrs, timestamp=ts_of(r), key=r.key, value=r.value
                ),
            )
            for i, r in enumerate(records)
        )
    # KIP-31: v1 inner offsets are relative (0..n-1); v0 inner offsets are absolute. Inner messages
    # carry the builder's timestamp type bit, although readers only consult the wrapper's (FMT-7).
    inner_base = base_offset if magic == MAGIC_V0 else 0
    def inner_ts(r: RecordSpec) -> int | None:
        if inner_as_written:
            return None if magic == MAGIC_V0 else r.timestamp
        return ts_of(r)

    inner_attrs = 0 if inner_as_written else type_attrs
    inner = tuple(
        LegacyBatch(
            offset=inner_base + i,
            message=LegacyMessage(
                magic=magic, attributes=inner_attrs, timestamp=inner_ts(r), key=r.key, value=r.value
            ),
        )
        for i, r in enumerate(records)
    )
    if magic == MAGIC_V0:
        wts: int | None = None
    elif wrapper_timestamp is not None:
        wts = wrapper_timestamp
    elif is_lat and log_append_time is not None:
        wts = log_append_time
    else:
        wts = max((r.timestamp for r in records), default=NO_TIMESTAMP)
    wrapper = LegacyMessage(magic=magic, attributes=int(codec) | type_attrs, timestamp=wts, inner=inner)
    return (LegacyBatch(offset=base_offset + max(len(records) - 1, 0), message=wrapper),)


def build_batches(
    records: Sequence[RecordSpec],
    *,
    magic: int,
    base_offset: int = 0,
    codec: Codec = Codec.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    log_append_time: int | None = None,
) -> tuple[AnyBatch, ...]:
    """The batches a producer at `magic` sends for `records` (one v2 batch, or legacy entries)."""
    if magic == MAGIC_V2:
        return (
            build_v2(
                records,
                base_offset=base_offset,
                codec=codec,
                timestamp_type=timestamp_type,
                log_append_time=log_append_time,
            ),
        )
    return build_legacy(
        records,
        magic=magic,
        base_offset=base_offset,
        codec=codec,
        timestamp_type=timestamp_type,
        log_append_time=log_append_time,
    )


def with_base_offset(batch: AnyBatch, base_offset: int) -> AnyBatch:
    """The same batch placed at `base_offset` (offset assignment; the CRC of v2 does not cover it)."""
    if isinstance(batch, DefaultBatch):
        return replace(batch, base_offset=base_offset)
    if batch.is_compressed and batch.message.inner:
        shift = base_offset - batch.base_offset
        if batch.magic == MAGIC_V0:
            # v0 inner offsets are absolute: they move with the wrapper (the wrapper CRC covers the
            # compressed inner entries, so a stored CRC override no longer applies).
            inner = tuple(replace(e, offset=e.offset + shift) for e in batch.message.inner)
            message = replace(batch.message, inner=inner, crc=None)
            return replace(batch, offset=batch.offset + shift, message=message)
        # v1: the wrapper carries the absolute offset of the last inner entry (KIP-31), also for a wrapper that
        # was at offset 0 (FMT-7), whose base is 0 whatever its inner offsets span.
        inner = batch.message.inner
        return replace(batch, offset=base_offset + inner[-1].offset - inner[0].offset)
    return replace(batch, offset=base_offset)


def with_leader_epoch(batch: AnyBatch, epoch: int) -> AnyBatch:
    """v2 batches carry the leader epoch (not covered by the CRC, FMT-9); legacy ones cannot."""
    if isinstance(batch, DefaultBatch):
        return replace(batch, partition_leader_epoch=epoch)
    return batch


def all_records(batches: Sequence[AnyBatch]) -> tuple[ConsumerRecord, ...]:
    """CON-1: the consumer's view of a sequence of stored batches."""
    out: list[ConsumerRecord] = []
    for b in batches:
        out.extend(b.records())
    return tuple(out)


__all__ = [
    "MAGIC_V0",
    "MAGIC_V1",
    "MAGIC_V2",
    "AnyBatch",
    "Batch",
    "ConsumerRecord",
    "DefaultBatch",
    "Header",
    "LegacyBatch",
    "LegacyMessage",
    "Record",
    "RecordSpec",
    "all_records",
    "build_batches",
    "build_legacy",
    "build_v2",
    "codec_of",
    "java_long",
    "with_base_offset",
    "with_leader_epoch",
]
