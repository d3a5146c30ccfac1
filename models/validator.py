"""Leader-append validation and offset/timestamp assignment (docs/rules.md: VAL-1..15, CMP-1..8,
CNV-1, CNV-4, CNV-6).

`validate_and_assign` is what a partition leader does with one produce request's record set before
anything is written: one clock reading `now` for the whole append (VAL-2); the shallow checks Kafka
runs before its validator (client v2 base offset 0, batch CRC); then one of the four paths of CMP-1,
named as the spec names them:

- IN_PLACE_UNCOMPRESSED: source and target uncompressed, same magic. Records untouched; offsets,
  v2 leader epoch and the header (type, max) rewritten (CMP-2, CMP-3, VAL-13).
- CONVERT: source and target uncompressed, magic differs. Records rebuilt in the target magic
  (CNV-4 up-conversion, CNV-6 produce-side down-conversion).
- IN_PLACE_COMPRESSED: same codec, same magic, target magic != 0, inner offsets 0..n-1. Only the
  batch header is rewritten (CMP-2, CMP-3; CMP-8: inner timestamps are never inspected).
- REBUILD: any other compressed case. Records rebuilt (recompressed) with the target codec and magic
  (CMP-4, CMP-5).

Every record is checked in the order of VAL-9 (magic → inner CRC → key on compacted topics → timestamp,
VAL-3..8), as Kafka's record iterator yields it (a v0/v1 inner message that is itself compressed stops the
iterator: the whole batch is INVALID_RECORD); any failing record rejects the whole batch and nothing is
written (VAL-9, VAL-10). Rejections carry the error code, the ProduceResponse error_message and
record_errors as the profile's Kafka version reports them (VAL-11), and the Java exception text in
`detail` (which the wire does not carry for errors other than record-validation errors).

`check_produce_request` holds the request-level checks done before the log is reached (VAL-14, CNV-1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from .codec import crc_matches, legacy_crc
from .config import TopicConfig, effective_bounds, target_magic
from .constants import (
    LONG_MIN,
    MAGIC_V0,
    MAGIC_V1,
    MAGIC_V2,
    NO_TIMESTAMP,
    NOT_SERVED,
    Codec,
    ErrorCode,
    TimestampType,
)
from .conversion import check_buildable
from .errors import BuildError
from .profiles import (
    ErrorTextStyle,
    LogAppendTimeFlagCheck,
    Profile,
    RangeRule,
    RecordErrorsStyle,
    ShallowOffsetOfMax,
)
from .records import (
    AnyBatch,
    DefaultBatch,
    Header,
    LegacyBatch,
    LegacyMessage,
    Record,
    RecordSpec,
    build_legacy,
    build_v2,
    codec_of,
    with_leader_epoch,
)

DEFAULT_TOPIC_PARTITION = "topic-0"

TIMESTAMP_REJECTED_TEXT = "One or more records have been rejected due to invalid timestamp"
RECORDS_REJECTED_TEXT_2_5 = "One or more records have been rejected"
MULTIPLE_BATCHES_TEXT = "Compressed outer record has more than one batch"


class AppendOrigin(Enum):
    """Who appends (VAL-1): leader appends from clients or the group/transaction coordinator are
    validated; the KRaft leader's are not; follower appends never reach the validator."""

    CLIENT = "client"
    COORDINATOR = "coordinator"
    RAFT_LEADER = "raft-leader"
    REPLICATION = "replication"


class ValidationPath(Enum):
    """CMP-1's four paths, plus UNVALIDATED for KRaft-leader appends that skip the validator (VAL-1)."""

    IN_PLACE_UNCOMPRESSED = "in-place-uncompressed"
    CONVERT = "convert"
    IN_PLACE_COMPRESSED = "in-place-compressed"
    REBUILD = "rebuild"
    UNVALIDATED = "unvalidated"


@dataclass(frozen=True)
class RecordError:
    """One entry of ProduceResponse.record_errors (VAL-11, KIP-467): the record's 0-based position in
    its batch and its message (None in Kafka 2.4, which reported only the first failing record)."""

    batch_index: int
    message: str | None

    def java_string(self) -> str:
        """How Kafka prints it inside the INVALID_RECORD top-level text (VAL-9, 3.2+)."""
        text = "null" if self.message is None else f"'{self.message}'"
        return f"RecordError(batchIndex={self.batch_index}, message={text})"


@dataclass(frozen=True)
class AppendRejected:
    """A rejected append: nothing was written and no offsets were consumed (VAL-9).

    `error_message` and `record_errors` are what the ProduceResponse carries (VAL-11): only
    record-validation rejections have them; other errors (CORRUPT_MESSAGE, UNSUPPORTED_VERSION,
    UNSUPPORTED_FOR_MESSAGE_FORMAT, a request-level INVALID_RECORD, UNKNOWN_SERVER_ERROR) reach the
    wire with a null message. `detail` is the text of the exception Kafka raised, for humans and
    client-side checks; it is never sent."""

    error: ErrorCode
    error_message: str | None
    record_errors: tuple[RecordError, ...]
    detail: str | None = None


@dataclass(frozen=True)
class ValidatedAppend:
    """An accepted append, as the log will store it.

    `batches` have their offsets assigned from the request's `next_offset`, v2 leader epoch set and
    header (type, max) rewritten per CMP-2..5, or are rebuilt when `path` says so.
    `max_timestamp` (CMP-6) and `offset_of_max_timestamp` (CMP-7, per the profile) are what the
    leader feeds the segment; `log_append_time` is the ProduceResponse field (VAL-12);
    `records_converted` counts the records written anew (0 on the in-place paths)."""

    batches: tuple[AnyBatch, ...]
    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time: int
    records_converted: int
    path: ValidationPath


# --------------------------------------------------------------------------------------------
# Request-level checks (VAL-14, CNV-1)


def produce_magic_for_version(version: int) -> int:
    """CNV-1 (`requiredMagicForVersion`): Produce v0-1 → magic 0, v2 → 1, v3+ → 2."""
    if version < 0:
        raise ValueError(f"a Produce version is >= 0, not {version}")
    if version <= 1:
        return MAGIC_V0
    if version == 2:
        return MAGIC_V1
    return MAGIC_V2


def check_produce_request(
    batches: Sequence[AnyBatch], *, produce_version: int, profile: Profile
) -> AppendRejected | None:
    """The request-level checks a broker makes before the log (VAL-14, CNV-1); None if they pass.

    A version the profile does not serve gets no answer (NOT_SERVED: the connection is closed; 4.0 removed
    Produce v0-2 although its ApiVersions lists them). From v3:
    at least one batch, magic 2, zstd only from v7, exactly one batch per partition (INVALID_RECORD /
    UNSUPPORTED_COMPRESSION_TYPE). Versions below 3 are not checked: brokers before 4.0 accept any
    magic there (CNV-1), and a v0/v1 wrapper with the zstd codec reaches the log, whose deep iterator
    refuses it with INVALID_RECORD (FMT-4, `_validate_compressed`). The response carries only the code
    (Kafka builds the partition response from the error alone); the exception text is in `detail`. The
    client v2 base-offset-0 rule of VAL-14 is checked where Kafka checks it, at the start of the leader
    append (`validate_and_assign`)."""
    if not profile.supports_produce_version(produce_version):
        lo, hi = profile.produce_versions
        return _rejected(
            NOT_SERVED,
            f"Produce v{produce_version} is not served by {profile.name} (served: v{lo}-v{hi}): the broker "
            "closes the connection without an answer",
        )
    if produce_version < 3:
        return None
    refused = _request_refusal(batches, produce_version)
    if refused is not None and not profile.request_checks_answered:
        # Before 2.1 ProduceRequest checked its records while it was parsed: a request failing the checks is never
        # answered, the connection is closed (2.0.1 and 1.1.1 drop it where 2.1.1 answers).
        return _rejected(NOT_SERVED, f"{refused.detail}: the request fails to parse, the broker closes the connection")
    return refused


def _request_refusal(batches: Sequence[AnyBatch], produce_version: int) -> AppendRejected | None:
    prefix = f"Produce requests with version {produce_version}"
    if not batches:
        return _rejected(
            ErrorCode.INVALID_RECORD, f"{prefix} must have at least one record batch per partition"
        )
    first = batches[0]
    if first.magic != MAGIC_V2:
        return _rejected(
            ErrorCode.INVALID_RECORD,
            f"{prefix} are only allowed to contain record batches with magic version 2",
        )
    if produce_version < 7 and first.codec is Codec.ZSTD:
        return _rejected(
            ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, f"{prefix} are not allowed to use ZStandard compression"
        )
    if len(batches) > 1:
        return _rejected(
            ErrorCode.INVALID_RECORD,
            f"{prefix} are only allowed to contain exactly one record batch per partition",
        )
    return None


def _rejected(error: ErrorCode, detail: str) -> AppendRejected:
    return AppendRejected(error, None, (), detail)


# --------------------------------------------------------------------------------------------
# 64-bit arithmetic: Kafka computes distances and printed bounds on Java longs (VAL-4, VAL-7).


def _long(value: int) -> int:
    """`value` wrapped to a signed 64-bit Java long."""
    return ((value - LONG_MIN) % (1 << 64)) + LONG_MIN


def timestamp_out_of_range(ts: int, *, now: int, before: int, after: int, rule: RangeRule) -> bool:
    """The range predicate of VAL-4 / VAL-5 on Java longs.

    BEFORE_AFTER (3.6+): reject iff (now - ts) > before or -(now - ts) > after; both bounds are
    inclusive for acceptance. SYMMETRIC (0.10.0-3.5): reject iff |ts - now| > difference, where
    Java's abs of Long.MIN_VALUE stays negative, so that distance never rejects."""
    if rule is RangeRule.BEFORE_AFTER:
        past = _long(now - ts)
        return past > before or _long(-past) > after
    distance = _long(ts - now)
    if distance < 0:
        distance = _long(-distance)
    return distance > before


def out_of_range_text(
    ts: int, offset: int, *, now: int, before: int, after: int, style: ErrorTextStyle
) -> str:
    """VAL-7: the per-record message, bounds printed with 64-bit wraparound."""
    low, high = _long(now - before), _long(now + after)
    if style is ErrorTextStyle.V0_10:
        # 0.10.0-0.10.2: no offset and no closing bracket.
        return f"Timestamp {ts} of message is out of range. The timestamp should be within [{low}, {high}"
    return (
        f"Timestamp {ts} of message with offset {offset} is out of range. "
        f"The timestamp should be within [{low}, {high}]"
    )


def log_append_time_flag_text(record_description: str) -> str:
    """VAL-8: the per-record message for a producer-set LogAppendTime flag."""
    return (
        f"Invalid timestamp type in message {record_description}. "
        "Producer should not set timestamp type to LogAppendTime."
    )


# --------------------------------------------------------------------------------------------
# Records as the validator iterates them


@dataclass(frozen=True)
class _SourceRecord:
    """One record of the request as Kafka's validator sees it: its offset as in the request, its
    read timestamp (FMT-7, FMT-12), its own magic, and the Java `toString` used in error texts."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    magic: int
    nested_compression: bool
    crc_valid: bool
    stored_crc: int | None
    describe: Callable[[], str]


def _java_byte(value: int) -> int:
    value &= 0xFF
    return value - 0x100 if value >= 0x80 else value


def _codec_name(attributes: int) -> str:
    raw = codec_of(attributes)
    return Codec(raw).name.lower() if raw in Codec._value2member_map_ else f"unknown({raw})"


def _legacy_description(offset: int, message: LegacyMessage, ts_type: TimestampType, ts: int) -> str:
    """`LegacyRecordBatch(offset=.., Record(..))` as Kafka prints a v0/v1 record [DERIVED]."""
    crc = message.crc if message.crc is not None else legacy_crc(message)
    key = len(message.key) if message.key is not None else 0
    value = len(message.value) if message.value is not None else 0
    attrs = _java_byte(message.attributes)
    codec = _codec_name(message.attributes)
    if message.magic > MAGIC_V0:
        type_name = {
            TimestampType.CREATE_TIME: "CreateTime",
            TimestampType.LOG_APPEND_TIME: "LogAppendTime",
            TimestampType.NO_TIMESTAMP_TYPE: "NoTimestampType",
        }[ts_type]
        body = (
            f"Record(magic={message.magic}, attributes={attrs}, compression={codec}, crc={crc}, "
            f"{type_name}={ts}, key={key} bytes, value={value} bytes)"
        )
    else:
        body = (
            f"Record(magic={message.magic}, attributes={attrs}, compression={codec}, crc={crc}, "
            f"key={key} bytes, value={value} bytes)"
        )
    return f"LegacyRecordBatch(offset={offset}, {body})"


def _v2_source_records(batch: DefaultBatch, *, partial: bool = False) -> list[_SourceRecord]:
    out: list[_SourceRecord] = []
    for record in batch.records_:
        offset = batch.base_offset + record.offset_delta
        ts = batch.record_timestamp(record)
        out.append(
            _SourceRecord(
                offset=offset,
                timestamp=ts,
                key=record.key,
                value=record.value,
                headers=record.headers,
                magic=MAGIC_V2,
                nested_compression=False,
                crc_valid=True,
                stored_crc=None,
                describe=_v2_describer(offset, ts, record, partial=partial),
            )
        )
    return out


def _v2_describer(offset: int, ts: int, record: Record, *, partial: bool = False) -> Callable[[], str]:
    """How Kafka prints the record in a per-record error (VAL-8): DefaultRecord.toString (0 bytes for a null key
    or value), or, where the compressed path validates in place and so reads with skipKeyValueIterator (Kafka
    2.6+, KAFKA-9820; LogValidator.validateMessagesAndAssignOffsetsCompressed: `inPlaceAssignment && magic >= 2`;
    2.5.1 still prints DefaultRecord),
    PartialDefaultRecord.toString, which prints the stored key and value sizes (-1 for null; javap of
    kafka-clients 3.9.1)."""

    def describe() -> str:
        if partial:
            key = len(record.key) if record.key is not None else -1
            value = len(record.value) if record.value is not None else -1
            return f"PartialDefaultRecord(offset={offset}, timestamp={ts}, key={key} bytes, value={value} bytes)"
        key = len(record.key) if record.key is not None else 0
        value = len(record.value) if record.value is not None else 0
        return f"DefaultRecord(offset={offset}, timestamp={ts}, key={key} bytes, value={value} bytes)"

    return describe


def _legacy_describer(
    offset: int, message: LegacyMessage, ts_type: TimestampType, ts: int
) -> Callable[[], str]:
    return lambda: _legacy_description(offset, message, ts_type, ts)


def _legacy_source_records(batch: LegacyBatch) -> list[_SourceRecord]:
    wrapper = batch.message
    if not batch.is_compressed:
        return [
            _SourceRecord(
                offset=batch.offset,
                timestamp=wrapper.stored_timestamp,
                key=wrapper.key,
                value=wrapper.value,
                headers=(),
                magic=wrapper.magic,
                nested_compression=False,
                crc_valid=True,  # the outer CRC is the shallow check, done before the validator
                stored_crc=wrapper.crc,
                describe=_legacy_describer(
                    batch.offset, wrapper, wrapper.own_timestamp_type, wrapper.stored_timestamp
                ),
            )
        ]
    read = batch.records()  # FMT-7: the wrapper's type wins; LogAppendTime reads the wrapper value
    entries = wrapper.inner
    last_inner = entries[-1].offset if entries else 0
    out: list[_SourceRecord] = []
    for entry, view in zip(entries, read, strict=True):
        # Offsets as Kafka's deep iterator gives them: v1 inner offsets are relative, made absolute
        # from the wrapper offset (KIP-31); v0 inner offsets are taken as they are.
        offset = batch.offset - last_inner + entry.offset if wrapper.magic >= MAGIC_V1 else entry.offset
        inner = entry.message
        out.append(
            _SourceRecord(
                offset=offset,
                timestamp=view.timestamp,
                key=inner.key,
                value=inner.value,
                headers=(),
                magic=inner.magic,
                nested_compression=codec_of(inner.attributes) != Codec.NONE,
                crc_valid=crc_matches(entry),
                stored_crc=inner.crc,
                describe=_legacy_describer(offset, inner, wrapper.own_timestamp_type, view.timestamp),
            )
        )
    return out


def _source_records(batch: AnyBatch, *, partial: bool = False) -> list[_SourceRecord]:
    if isinstance(batch, DefaultBatch):
        return _v2_source_records(batch, partial=partial)
    return _legacy_source_records(batch)


# --------------------------------------------------------------------------------------------
# The append context and the per-record checks (VAL-3..9)


class _Abort(Exception):
    """Internal: an exception Kafka throws out of the validator, carried to the caller as a value."""

    def __init__(self, rejected: AppendRejected) -> None:
        super().__init__(rejected.detail)
        self.rejected = rejected


def _abort(error: ErrorCode, detail: str) -> _Abort:
    return _Abort(_rejected(error, detail))


@dataclass(frozen=True)
class _Append:
    config: TopicConfig
    profile: Profile
    now: int
    next_offset: int
    leader_epoch: int
    origin: AppendOrigin
    topic_partition: str
    to_magic: int
    before: int
    after: int
    converting: bool = False  # CNV-4: the uncompressed records are rewritten in another magic (VAL-3 below)

    @property
    def log_append_time_topic(self) -> bool:
        return self.config.timestamp_type is TimestampType.LOG_APPEND_TIME

    @property
    def topic_type(self) -> TimestampType:
        if self.log_append_time_topic:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME


@dataclass(frozen=True)
class _Failure:
    error: ErrorCode
    batch_index: int
    message: str


def _timestamp_failure(batch: AnyBatch, record: _SourceRecord, index: int, ctx: _Append) -> _Failure | None:
    """VAL-3..8 for one record."""
    profile = ctx.profile
    ts = record.timestamp
    # VAL-3: CreateTime topics only; -1 is exempt from 0.11 on. A v0 record has no timestamp field: it reads
    # -1. 0.10.x (where -1 was not exempt) range-checked a v0 message only where it was converted (Kafka
    # 0.10.2.2 LogValidator.convertAndAssignOffsetsNonCompressed calls validateTimestamp on every message; the
    # in-place and compressed paths guard it with `record.magic > MAGIC_VALUE_V0`), so |-1 - now| beyond
    # message.timestamp.difference.max.ms refuses a v0 message written to a v1 topic there (0.10.2.2 and 0.10.1.1
    # answer INVALID_TIMESTAMP); from 0.11 its -1 is exempt anyway.
    range_applies = (
        not ctx.log_append_time_topic
        and (record.magic > MAGIC_V0 or ctx.converting)
        and (ts != NO_TIMESTAMP or not profile.exempt_no_timestamp)
    )
    if range_applies and timestamp_out_of_range(
        ts, now=ctx.now, before=ctx.before, after=ctx.after, rule=profile.range_rule
    ):
        text = out_of_range_text(
            ts, record.offset, now=ctx.now, before=ctx.before, after=ctx.after, style=profile.error_text
        )
        return _Failure(ErrorCode.INVALID_TIMESTAMP, index, text)
    if range_applies and profile.lat_flag_check is LogAppendTimeFlagCheck.ELSE_BRANCH:
        # VAL-8, 3.6+ [DISAGREE DIS-8]: a CreateTime topic accepts an in-range record of a batch the
        # producer flagged LogAppendTime; the flag is only looked at in the else branch.
        return None
    if batch.timestamp_type is TimestampType.LOG_APPEND_TIME:
        # VAL-8: the batch's (wrapper's) type; an inner message's own bit is never consulted.
        return _Failure(ErrorCode.INVALID_TIMESTAMP, index, log_append_time_flag_text(record.describe()))
    return None


def _record_failure(batch: AnyBatch, record: _SourceRecord, index: int, ctx: _Append) -> _Failure | None:
    """VAL-9's order for one record: magic → inner CRC (compressed v0/v1; aborts at once as CORRUPT_MESSAGE)
    → key on compacted topics → timestamp. Kafka's LogValidator.validateRecordCompression runs first but never
    fires from 0.11 on: a v2 record is never compressed, and the legacy iterator throws on a compressed inner
    message before handing it over (`_inner_compression_break`)."""
    tp = ctx.topic_partition
    if record.magic != batch.magic:
        return _Failure(
            ErrorCode.INVALID_RECORD,
            index,
            f"Record {record.describe()}'s magic does not match outer magic {batch.magic} "
            f"in topic partition {tp}",
        )
    if not record.crc_valid:
        raise _abort(
            ErrorCode.CORRUPT_MESSAGE,
            f"Record is corrupt (stored crc = {record.stored_crc}) in topic partition {tp}.",
        )
    if ctx.config.compacted and record.key is None:
        return _Failure(
            ErrorCode.INVALID_RECORD,
            index,
            f"Compacted topic cannot accept message without key in topic partition {tp}",
        )
    return _timestamp_failure(batch, record, index, ctx)


INCORRECT_SIZE_EOF_TEXT = "Incorrect declared batch size, premature EOF reached"
INCORRECT_SIZE_REMAINING_TEXT = "Incorrect declared batch size, records still remaining in file"


def _records_count_break(batch: AnyBatch, held: int) -> tuple[int, _Abort | None]:
    """VAL-14: how far Kafka's v2 record iterator gets through a batch whose RecordsCount disagrees with the
    records it holds: (records read and validated before the iterator throws, what it throws).

    Kafka does not compare the count with the records anywhere but in the iterator the validator's record loop
    runs (DefaultRecordBatch.RecordIterator, Kafka 0.11+, KAFKA-5031): its constructor throws
    InvalidRecordException "Found invalid record count N in magic v2 batch" for N < 0; `next()` throws
    "Incorrect declared batch size, records still remaining in file" on reading record N when bytes are left
    after it (before that record is validated), and reading a record past the end throws "Incorrect declared
    batch size, premature EOF reached" (uncompressedIterator: BufferUnderflowException; StreamRecordIterator:
    the varint's IllegalArgumentException on EOF). A count of 0 reads nothing (`iterator()` is empty).
    InvalidRecordException is not a RecordValidationException, so ReplicaManager.appendToLocalLog answers
    INVALID_RECORD (Errors.forException) with a null error_message, whatever the records' own failures:
    LogValidator only processes those after the loop. A client batch only gets here with a count that agrees
    with LastOffsetDelta (`validateBatch` refuses the rest first)."""
    if not isinstance(batch, DefaultBatch) or batch.records_count is None or batch.records_count == held:
        return held, None
    declared = batch.records_count
    if declared < 0:
        return 0, _abort(ErrorCode.INVALID_RECORD, f"Found invalid record count {declared} in magic v2 batch")
    if declared == 0:
        return 0, None
    if declared > held:
        return held, _abort(ErrorCode.INVALID_RECORD, INCORRECT_SIZE_EOF_TEXT)
    return declared - 1, _abort(ErrorCode.INVALID_RECORD, INCORRECT_SIZE_REMAINING_TEXT)


INNER_COMPRESSED_TEXT = "Inner messages must not be compressed"


def _inner_compression_break(records: list[_SourceRecord]) -> tuple[int, _Abort | None]:
    """VAL-9: how far Kafka's legacy deep iterator gets through a compressed v0/v1 set holding an inner message
    that is itself compressed: (records handed over before it, what it throws).

    AbstractLegacyRecordBatch.DeepRecordsIterator.makeNext (Kafka 3.9: AbstractLegacyRecordBatch.java 408-409;
    the same check in the iterator's earlier forms) throws InvalidRecordException "Inner messages must not be
    compressed" on reaching that message. The messages before it were validated (a corrupt one throws first);
    their record errors, which LogValidator processes only after the loop (2.5+), are lost: INVALID_RECORD
    with a null error_message and no record_errors."""
    for index, record in enumerate(records):
        if record.nested_compression:
            return index, _abort(ErrorCode.INVALID_RECORD, INNER_COMPRESSED_TEXT)
    return len(records), None


def _scan_batch(
    batch: AnyBatch, ctx: _Append, *, partial: bool = False
) -> tuple[list[_SourceRecord], list[_Failure], _Abort | None]:
    """Every record of one batch through VAL-9, as Kafka's record iterator yields them. Kafka 2.5+ collects
    every failing record; before, the first failure was thrown at once (so later records, even corrupt ones,
    were never read). The third value is what the iterator throws out of the record loop (a RecordsCount
    that disagrees with the records, `_records_count_break`; a compressed inner message,
    `_inner_compression_break`), None if the loop ends normally or a failure was thrown first; the caller
    raises it before the collected failures, where Kafka's loop would. `partial`: the records are read as
    Kafka's skipKeyValueIterator reads them (`_v2_describer`)."""
    records = _source_records(batch, partial=partial)
    if isinstance(batch, DefaultBatch):
        read, broken = _records_count_break(batch, len(records))
    else:
        read, broken = _inner_compression_break(records)
    records = records[:read]
    failures: list[_Failure] = []
    collect_all = ctx.profile.record_errors is RecordErrorsStyle.ALL
    for index, record in enumerate(records):
        failure = _record_failure(batch, record, index, ctx)
        if failure is not None:
            failures.append(failure)
            if not collect_all:
                # Before 2.5 the failure is thrown at once: the iterator never reaches the count problem.
                return records, failures, None
    return records, failures, broken


def _raise_if_failed(failures: list[_Failure], ctx: _Append) -> None:
    """VAL-9 / VAL-11: abort the whole append if any record of the batch failed."""
    if not failures:
        return
    style = ctx.profile.record_errors
    if style is RecordErrorsStyle.ALL:
        errors = tuple(RecordError(f.batch_index, f.message) for f in failures)
        if any(f.error is ErrorCode.INVALID_TIMESTAMP for f in failures):
            error, message = ErrorCode.INVALID_TIMESTAMP, TIMESTAMP_REJECTED_TEXT
        elif ctx.profile.invalid_record_text_3_2:
            shown = ", ".join(e.java_string() for e in errors[:3])
            error = ErrorCode.INVALID_RECORD
            message = (
                f"One or more records have been rejected due to {len(errors)} record errors in total, "
                f"and only showing the first three errors at most: [{shown}]"
            )
        else:
            error, message = ErrorCode.INVALID_RECORD, RECORDS_REJECTED_TEXT_2_5
        raise _Abort(AppendRejected(error, message, errors, message))
    first = failures[0]
    if style is RecordErrorsStyle.FIRST:
        # Kafka 2.4: only the first failing record, with a null message; its text is the error_message.
        raise _Abort(
            AppendRejected(first.error, first.message, (RecordError(first.batch_index, None),), first.message)
        )
    raise _Abort(AppendRejected(first.error, None, (), first.message))


def _validate_batch(first: AnyBatch, batch: AnyBatch, ctx: _Append) -> None:
    """Batch-level checks before its records (Kafka `validateBatch`; VAL-14, CNV-6)."""
    tp = ctx.topic_partition
    if batch.magic != first.magic:
        raise _abort(
            ErrorCode.INVALID_RECORD,
            f"Batch magic {batch.magic} is not the same as the first batch's magic byte {first.magic} "
            f"in topic partition {tp}",
        )
    if not isinstance(batch, DefaultBatch):
        return
    if ctx.origin is AppendOrigin.CLIENT:
        span = f"[{batch.base_offset}, {batch.last_offset}]"
        count_from_offsets = batch.last_offset - batch.base_offset + 1
        count = batch.records_count if batch.records_count is not None else batch.record_count
        if count_from_offsets <= 0:
            raise _abort(
                ErrorCode.INVALID_RECORD, f"Batch has an invalid offset range: {span} in topic partition {tp}"
            )
        if count <= 0:
            raise _abort(
                ErrorCode.INVALID_RECORD,
                f"Invalid reported count for record batch: {count} in topic partition {tp}",
            )
        if count != count_from_offsets:
            raise _abort(
                ErrorCode.INVALID_RECORD,
                f"Inconsistent batch offset range {span} and count of records {count} "
                f"in topic partition {tp}",
            )
        if batch.is_control:
            raise _abort(
                ErrorCode.INVALID_RECORD,
                f"Clients are not allowed to write control records in topic partition {tp}",
            )
        if batch.producer_id >= 0 and batch.base_sequence < 0:
            raise _abort(
                ErrorCode.INVALID_RECORD,
                f"Invalid sequence number {batch.base_sequence} in record batch with producerId "
                f"{batch.producer_id} in topic partition {tp}",
            )
    # CNV-6 / VAL-14: transactions and idempotence need magic 2 in the log.
    if batch.is_transactional and ctx.to_magic < MAGIC_V2:
        raise _abort(
            ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
            f"Transactional records cannot be used with magic version {ctx.to_magic}",
        )
    if batch.producer_id >= 0 and ctx.to_magic < MAGIC_V2:
        raise _abort(
            ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
            f"Idempotent records cannot be used with magic version {ctx.to_magic}",
        )


def _require_single_batch(batches: tuple[AnyBatch, ...], source_codec: Codec) -> None:
    """VAL-10: v2 and compressed record sets must be exactly one batch."""
    if (batches[0].magic >= MAGIC_V2 or source_codec is not Codec.NONE) and len(batches) > 1:
        raise _abort(ErrorCode.INVALID_RECORD, MULTIPLE_BATCHES_TEXT)


# --------------------------------------------------------------------------------------------
# Rewriting helpers


def _with_last_offset(batch: AnyBatch, last_offset: int) -> AnyBatch:
    """Kafka's `setLastOffset`: v2 base = last - LastOffsetDelta; a legacy entry's offset = last."""
    if isinstance(batch, DefaultBatch):
        return replace(batch, base_offset=last_offset - batch.last_offset_delta)
    return replace(batch, offset=last_offset)


def _with_header(batch: AnyBatch, timestamp_type: TimestampType, max_timestamp: int) -> AnyBatch:
    """FMT-13: rewrite (type, max); a no-op when both are unchanged (the stored bytes stay the same)."""
    if batch.timestamp_type is timestamp_type and batch.max_timestamp == max_timestamp:
        return batch
    return batch.with_header(timestamp_type=timestamp_type, max_timestamp=max_timestamp)


def _rebuild(
    records: list[_SourceRecord], first: AnyBatch, *, magic: int, codec: Codec, ctx: _Append
) -> tuple[tuple[AnyBatch, ...], int, int]:
    """Write `records` anew at `ctx.next_offset` in `magic` with `codec`, as Kafka's record builder
    does (CMP-4, CMP-5, CNV-4, CNV-6); returns (batches, max timestamp, shallow offset of max).

    Record timestamps are the source records' read timestamps (v0 → -1; a LogAppendTime-flagged
    batch accepted on a CreateTime topic gives every record its MaxTimestamp, VAL-8). On LogAppendTime
    topics the builder stamps `now` (v1: every inner message and the wrapper, only the wrapper before 0.11
    (`lat_rebuild_stamps_inner`); v2: MaxTimestamp, with BaseTimestamp = the first record's timestamp). The
    builder refuses timestamps < -1 (FMT-8, VAL-15) and headers below v2 [DERIVED: `appendWithOffset`]."""
    check_buildable(
        (r.timestamp for r in records),
        magic=magic,
        codec=codec,
        has_headers=any(r.headers for r in records),
    )
    lat = ctx.log_append_time_topic
    ts_type = TimestampType.LOG_APPEND_TIME if lat else TimestampType.CREATE_TIME
    specs = [RecordSpec(timestamp=r.timestamp, key=r.key, value=r.value, headers=r.headers) for r in records]
    base = ctx.next_offset
    built: tuple[AnyBatch, ...]
    if magic == MAGIC_V2:
        v2_first = first if isinstance(first, DefaultBatch) else None
        built = (
            build_v2(
                specs,
                base_offset=base,
                codec=codec,
                timestamp_type=ts_type,
                log_append_time=ctx.now if lat else None,
                partition_leader_epoch=ctx.leader_epoch,
                # The rebuilt batch keeps the producer's identity (first batch).
                producer_id=v2_first.producer_id if v2_first else -1,
                producer_epoch=v2_first.producer_epoch if v2_first else -1,
                base_sequence=v2_first.base_sequence if v2_first else -1,
                transactional=v2_first.is_transactional if v2_first else False,
            ),
        )
    else:
        built = build_legacy(
            specs,
            magic=magic,
            base_offset=base,
            codec=codec,
            timestamp_type=ts_type,
            log_append_time=ctx.now if lat else None,
            # CMP-4: 0.10 stamped only the new wrapper; its builder copied each inner message as written.
            inner_as_written=lat and not ctx.profile.lat_rebuild_stamps_inner,
        )
        if magic == MAGIC_V0 and codec is not Codec.NONE:
            built = tuple(_absolute_v0_inner(b) for b in built if isinstance(b, LegacyBatch))
    return (built, *_builder_info(records, magic=magic, codec=codec, ctx=ctx))


def _absolute_v0_inner(wrapper: LegacyBatch) -> LegacyBatch:
    """A v0 wrapper's inner entries carry absolute offsets (only v1 made them relative, KIP-31)."""
    base = wrapper.base_offset
    inner = tuple(replace(e, offset=base + i) for i, e in enumerate(wrapper.message.inner))
    return replace(wrapper, message=replace(wrapper.message, inner=inner))


def _builder_info(records: list[_SourceRecord], *, magic: int, codec: Codec, ctx: _Append) -> tuple[int, int]:
    """CMP-6/CMP-7 on the rebuilding paths: what Kafka's record builder reports (TV-26).

    LogAppendTime: (now, last offset) if compressed or v2, else (now, first offset) — also for a v0
    target (CMP-6's internal inconsistency). CreateTime: the max of record timestamps, tracked only
    for magic > 0 and only when strictly above -1; none → (-1, -1); else (max, last offset) if
    compressed or v2, else the offset of the first record holding it."""
    first, last = ctx.next_offset, ctx.next_offset + len(records) - 1
    batched = codec is not Codec.NONE or magic >= MAGIC_V2
    if ctx.log_append_time_topic:
        return ctx.now, (last if batched else first)
    max_ts, max_offset = NO_TIMESTAMP, -1
    if magic > MAGIC_V0:
        for i, r in enumerate(records):
            if r.timestamp > max_ts:
                max_ts, max_offset = r.timestamp, first + i
    if max_ts == NO_TIMESTAMP:
        return NO_TIMESTAMP, -1
    return max_ts, (last if batched else max_offset)


# --------------------------------------------------------------------------------------------
# The four paths (CMP-1)


def _assign_in_place_uncompressed(batches: tuple[AnyBatch, ...], ctx: _Append) -> ValidatedAppend:
    """CMP-2 / CMP-3 / VAL-13 on uncompressed batches already in the target magic."""
    first = batches[0]
    _require_single_batch(batches, Codec.NONE)
    counter = ctx.next_offset
    max_ts, shallow, exact = NO_TIMESTAMP, -1, -1
    stored: list[AnyBatch] = []
    for batch in batches:
        _validate_batch(first, batch, ctx)
        records, failures, broken = _scan_batch(batch, ctx)
        if broken is not None:
            raise broken
        # VAL-10: the first failing batch aborts; later batches are never looked at.
        _raise_if_failed(failures, ctx)
        batch_max, batch_max_offset = NO_TIMESTAMP, -1
        for i, r in enumerate(records):
            if batch.magic > MAGIC_V0 and r.timestamp > batch_max:
                batch_max, batch_max_offset = r.timestamp, counter + i
        counter += len(records)
        last = counter - 1
        # CMP-7: ties keep the earliest batch.
        if batch.magic > MAGIC_V0 and batch_max > max_ts:
            max_ts, shallow, exact = batch_max, last, batch_max_offset
        placed = _with_last_offset(batch, last)
        if placed.magic >= MAGIC_V2:
            placed = with_leader_epoch(placed, ctx.leader_epoch)
        if placed.magic > MAGIC_V0:
            if ctx.log_append_time_topic:
                # CMP-3: v1 messages get `now` and bit 3 (producer time lost); v2 MaxTimestamp := now,
                # BaseTimestamp and deltas kept.
                placed = _with_header(placed, TimestampType.LOG_APPEND_TIME, ctx.now)
            elif placed.magic >= MAGIC_V2 or ctx.profile.in_place_rewrites_v1_timestamp:
                # VAL-13 (and VAL-8's consequence: a LogAppendTime-flagged batch becomes CreateTime,
                # after which v2 records read BaseTimestamp + delta). 0.10 left a v1 message as sent: its
                # assignOffsetsNonCompressed (0.10.2.2 LogValidator) only sets the offset on CreateTime topics, so a
                # timestamp below -1 is stored as sent (0.10.2.2 and 0.10.1.1 serve it back), not as -1.
                placed = _with_header(placed, TimestampType.CREATE_TIME, batch_max)
        stored.append(placed)
    if ctx.log_append_time_topic:
        # CMP-6 / CMP-7: v0 has no timestamp to report; v1 single-record batches all hold `now`, the
        # first is the earliest; v2 is one batch: its last offset.
        if ctx.to_magic == MAGIC_V0:
            max_ts, offset_of_max = NO_TIMESTAMP, -1
        elif ctx.to_magic == MAGIC_V1:
            max_ts, offset_of_max = ctx.now, ctx.next_offset
        else:
            max_ts, offset_of_max = ctx.now, counter - 1
    elif ctx.profile.shallow_offset_of_max is ShallowOffsetOfMax.EXACT_RECORD:
        # CMP-7, 0.10.1-3.7 leader: the exact record holding the max.
        offset_of_max = exact
    else:
        offset_of_max = shallow
    return _accepted(
        tuple(stored), counter, max_ts, offset_of_max, 0, ValidationPath.IN_PLACE_UNCOMPRESSED, ctx
    )


def _convert_uncompressed(batches: tuple[AnyBatch, ...], ctx: _Append) -> ValidatedAppend:
    """CNV-4 / CNV-6: uncompressed records rewritten in the target magic."""
    first = batches[0]
    _require_single_batch(batches, Codec.NONE)
    ctx = replace(ctx, converting=True)
    collected: list[_SourceRecord] = []
    for batch in batches:
        _validate_batch(first, batch, ctx)
        records, failures, broken = _scan_batch(batch, ctx)
        # VAL-15 / FMT-8 [DERIVED]: Kafka's convert path hands each record to the builder as soon as
        # it passes while its batch has no error yet, so the builder's refusal of an earlier record
        # (timestamp < -1, headers below v2) surfaces as UNKNOWN_SERVER_ERROR before a later record's
        # validation error could reject the batch (the compressed rebuild path validates first).
        first_failure = failures[0].batch_index if failures else len(records)
        for r in records[:first_failure]:
            check_buildable((r.timestamp,), magic=ctx.to_magic, codec=Codec.NONE, has_headers=bool(r.headers))
        # The record iterator throws after the builder took the records read before it (VAL-14).
        if broken is not None:
            raise broken
        _raise_if_failed(failures, ctx)
        collected.extend(records)
    built, max_ts, offset_of_max = _rebuild(collected, first, magic=ctx.to_magic, codec=Codec.NONE, ctx=ctx)
    end = ctx.next_offset + len(collected)
    return _accepted(built, end, max_ts, offset_of_max, len(collected), ValidationPath.CONVERT, ctx)


def _validate_compressed(
    batches: tuple[AnyBatch, ...], source_codec: Codec, target_codec: Codec, ctx: _Append
) -> ValidatedAppend:
    """CMP-1's compressed path: in place when nothing forces a rebuild, else REBUILD."""
    first = batches[0]
    _require_single_batch(batches, source_codec)
    in_place = source_codec is target_codec
    if first.magic != ctx.to_magic or ctx.to_magic == MAGIC_V0:
        in_place = False
    if source_codec is Codec.NONE and isinstance(first, DefaultBatch) and first.is_control:
        in_place = True  # control batches are not compressed unless written compressed
    max_ts = NO_TIMESTAMP
    expected_offset = 0
    collected: list[_SourceRecord] = []
    for batch in batches:
        _validate_batch(first, batch, ctx)
        if batch.magic < MAGIC_V2 and batch.codec is Codec.ZSTD:
            # FMT-4 (KIP-110, Kafka 2.1+ KAFKA-4514): the legacy deep iterator's constructor refuses the wrapper
            # (AbstractLegacyRecordBatch.DeepRecordsIterator); an InvalidRecordException, so INVALID_RECORD with
            # no error_message. UNSUPPORTED_COMPRESSION_TYPE is only Produce v3-v6's request-level refusal.
            raise _abort(
                ErrorCode.INVALID_RECORD,
                f"Invalid wrapper compressionType found in legacy deep record iterator {batch.magic}",
            )
        # Kafka 2.6+ reads a v2 batch it will keep in place without keys and values (skipKeyValueIterator, KAFKA-9820).
        partial = in_place and first.magic >= MAGIC_V2 and ctx.profile.partial_in_place_records
        records, failures, broken = _scan_batch(batch, ctx, partial=partial)
        if broken is not None:
            raise broken
        _raise_if_failed(failures, ctx)
        for r in records:
            if batch.magic > MAGIC_V0 and ctx.to_magic > MAGIC_V0:
                max_ts = max(max_ts, r.timestamp)
                # CMP-1: inner offsets must be exactly 0..n-1 to stay in place.
                if r.offset != expected_offset:
                    in_place = False
            expected_offset += 1
        collected.extend(records)
    if not in_place:
        built, info_max, offset_of_max = _rebuild(
            collected, first, magic=ctx.to_magic, codec=target_codec, ctx=ctx
        )
        end = ctx.next_offset + len(collected)
        return _accepted(built, end, info_max, offset_of_max, len(collected), ValidationPath.REBUILD, ctx)
    end = ctx.next_offset + len(collected)
    last = end - 1
    placed = _with_last_offset(first, last)
    if ctx.log_append_time_topic:
        max_ts = ctx.now  # CMP-3: only the header (v1: the wrapper) gets `now`; CMP-8
    if ctx.to_magic >= MAGIC_V1:
        placed = _with_header(placed, ctx.topic_type, max_ts)
    if ctx.to_magic >= MAGIC_V2:
        placed = with_leader_epoch(placed, ctx.leader_epoch)
    # CMP-7: one batch, so its last offset.
    return _accepted((placed,), end, max_ts, last, 0, ValidationPath.IN_PLACE_COMPRESSED, ctx)


def _accepted(
    batches: tuple[AnyBatch, ...],
    end: int,
    max_ts: int,
    offset_of_max: int,
    converted: int,
    path: ValidationPath,
    ctx: _Append,
) -> ValidatedAppend:
    return ValidatedAppend(
        batches=batches,
        first_offset=ctx.next_offset,
        last_offset=end - 1,
        max_timestamp=max_ts,
        offset_of_max_timestamp=offset_of_max,
        # VAL-12: `now` on LogAppendTime topics, -1 on CreateTime topics.
        log_append_time=ctx.now if ctx.log_append_time_topic else NO_TIMESTAMP,
        records_converted=converted,
        path=path,
    )


# --------------------------------------------------------------------------------------------
# Entry point


def _analyze(batches: tuple[AnyBatch, ...], ctx: _Append) -> Codec:
    """The shallow checks Kafka makes before the validator (`analyzeAndValidateRecords`): a client v2
    batch must start at offset 0 (VAL-14); every batch CRC must match (outer message for v0/v1).
    Returns the source codec: the last non-none codec among the batches."""
    source = Codec.NONE
    tp = ctx.topic_partition
    for batch in batches:
        if isinstance(batch, DefaultBatch):
            if ctx.origin is AppendOrigin.CLIENT and batch.base_offset != 0:
                raise _abort(
                    ErrorCode.INVALID_RECORD,
                    f"The baseOffset of the record batch in the append to {tp} should be 0, "
                    f"but it is {batch.base_offset}",
                )
            if not crc_matches(batch):
                raise _abort(
                    ErrorCode.CORRUPT_MESSAGE,
                    f"Record is corrupt (stored crc = {batch.crc}) in topic partition {tp}.",
                )
        else:
            message = batch.message
            if message.crc is not None and message.crc != legacy_crc(message):
                raise _abort(
                    ErrorCode.CORRUPT_MESSAGE,
                    f"Record is corrupt (stored crc = {message.crc}) in topic partition {tp}.",
                )
        raw = codec_of(_attributes(batch))
        if raw not in Codec._value2member_map_:
            # [DERIVED] Kafka's CompressionType.forId throws IllegalArgumentException: not an API error.
            raise _abort(ErrorCode.UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {raw}")
        if raw != Codec.NONE:
            source = Codec(raw)
    return source


def _attributes(batch: AnyBatch) -> int:
    return batch.attributes if isinstance(batch, DefaultBatch) else batch.message.attributes


def _unvalidated(batches: tuple[AnyBatch, ...], ctx: _Append) -> ValidatedAppend:
    """VAL-1: the KRaft leader's batches skip the validator; offsets, epoch and headers are its own.
    Max and its offset come from the batch headers, as on followers (IDX-13)."""
    for batch in batches:
        if batch.partition_leader_epoch != ctx.leader_epoch:
            raise _abort(
                ErrorCode.INVALID_RECORD, "Append from Raft leader did not set the batch epoch correctly"
            )
    max_ts, offset_of_max = NO_TIMESTAMP, -1
    for batch in batches:
        if batch.max_timestamp > max_ts:
            max_ts, offset_of_max = batch.max_timestamp, batch.last_offset
    return ValidatedAppend(
        batches=batches,
        first_offset=batches[0].base_offset,
        last_offset=batches[-1].last_offset,
        max_timestamp=max_ts,
        offset_of_max_timestamp=offset_of_max,
        log_append_time=NO_TIMESTAMP,
        records_converted=0,
        path=ValidationPath.UNVALIDATED,
    )


def validate_and_assign(
    batches: Sequence[AnyBatch],
    *,
    config: TopicConfig,
    profile: Profile,
    now: int,
    next_offset: int,
    leader_epoch: int = -1,
    origin: AppendOrigin = AppendOrigin.CLIENT,
    topic_partition: str = DEFAULT_TOPIC_PARTITION,
) -> ValidatedAppend | AppendRejected:
    """A leader append of one partition's record set (VAL-1..15, CMP-1..8, CNV-4, CNV-6).

    `now` is the leader's one clock reading for the whole append (VAL-2): every range check and every
    LogAppendTime uses it. `next_offset` is the log end offset; `leader_epoch` goes into v2 batches.
    `topic_partition` only appears in error texts. REPLICATION appends must not come here (followers
    store the leader's bytes verbatim, VAL-1/REP-1): ValueError. An empty record set is accepted and
    writes nothing (first/last offset -1)."""
    if origin is AppendOrigin.REPLICATION:
        raise ValueError(
            "follower appends are stored verbatim without validation (VAL-1, REP-1): "
            "use the log's follower append instead of validate_and_assign"
        )
    record_set = tuple(batches)
    before, after = effective_bounds(config, profile)
    ctx = _Append(
        config=config,
        profile=profile,
        now=now,
        next_offset=next_offset,
        leader_epoch=leader_epoch,
        origin=origin,
        topic_partition=topic_partition,
        to_magic=target_magic(config, profile),
        before=before,
        after=after,
    )
    if not record_set:
        return ValidatedAppend(
            (), -1, -1, NO_TIMESTAMP, -1, NO_TIMESTAMP, 0, ValidationPath.IN_PLACE_UNCOMPRESSED
        )
    try:
        if origin is AppendOrigin.RAFT_LEADER:
            return _unvalidated(record_set, ctx)
        source_codec = _analyze(record_set, ctx)
        target_codec = config.target_codec(source_codec)
        if source_codec is Codec.NONE and target_codec is Codec.NONE:
            if all(b.magic == ctx.to_magic for b in record_set):
                return _assign_in_place_uncompressed(record_set, ctx)
            return _convert_uncompressed(record_set, ctx)
        return _validate_compressed(record_set, source_codec, target_codec, ctx)
    except _Abort as abort:
        return abort.rejected
    except BuildError as exc:
        # VAL-15: the builder's IllegalArgumentException surfaces as UNKNOWN_SERVER_ERROR, no message.
        return AppendRejected(ErrorCode.UNKNOWN_SERVER_ERROR, None, (), str(exc))


__all__ = [
    "DEFAULT_TOPIC_PARTITION",
    "MULTIPLE_BATCHES_TEXT",
    "RECORDS_REJECTED_TEXT_2_5",
    "TIMESTAMP_REJECTED_TEXT",
    "AppendOrigin",
    "AppendRejected",
    "RecordError",
    "ValidatedAppend",
    "ValidationPath",
    "check_produce_request",
    "log_append_time_flag_text",
    "out_of_range_text",
    "produce_magic_for_version",
    "timestamp_out_of_range",
    "validate_and_assign",
]
