"""Validation faults on the produce path (VAL-*): range bounds, LogAppendTime handling, record errors,
the produce response, duplicates."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from conformance.faults.mutant import (
    V2_PROFILES,
    MutantCluster,
    MutantImplementation,
    _is_lat_topic,
    _is_lat_v2,
    _is_v2,
    _model_mutant,
    _restamped,
    _rewritten,
    _specs,
)
from models.cluster import Cluster, Partition, ProduceResponse, find_duplicate
from models.config import TopicConfig, effective_bounds
from models.constants import (
    LONG_MAX,
    NO_TIMESTAMP,
    ErrorCode,
    TimestampType,
)
from models.profiles import Profile, RangeRule
from models.records import AnyBatch, DefaultBatch, build_v2
from models.validator import (
    RECORDS_REJECTED_TEXT_2_5,
    TIMESTAMP_REJECTED_TEXT,
    AppendRejected,
    RecordError,
    ValidatedAppend,
    out_of_range_text,
    timestamp_out_of_range,
)


def _lat_ignored(cluster: Cluster, part: Partition) -> tuple[TopicConfig, Profile]:
    return replace(part.config, timestamp_type=TimestampType.CREATE_TIME), cluster.profile


_model_mutant(
    "lat-ignored",
    "message.timestamp.type=LogAppendTime is ignored and the topic is treated as CreateTime (producer "
    "timestamps kept, like brokers that accept the config but never implement it).",
    ("CMP.lat-every-record-reads-now", "VAL.lat-response-time", "CON.v2-lat-max-timestamp"),
    inputs=_lat_ignored,
)


def _symmetric_bound(cluster: Cluster, part: Partition) -> tuple[TopicConfig, Profile]:
    before, after = effective_bounds(part.config, cluster.profile)
    return (
        replace(part.config, difference_max_ms=max(before, after)),
        replace(cluster.profile, range_rule=RangeRule.SYMMETRIC),
    )


_model_mutant(
    "symmetric-range",
    "KIP-937 before/after are collapsed into one symmetric bound max(before, after) (the pre-3.6 "
    "difference rule kept after adding the new configs).",
    ("VAL.range-before-after",),
    inputs=_symmetric_bound,
)


def _before_exclusive(cluster: Cluster, part: Partition) -> tuple[TopicConfig, Profile]:
    before, after = effective_bounds(part.config, cluster.profile)
    return replace(part.config, before_max_ms=before - 1, after_max_ms=after), cluster.profile


_model_mutant(
    "before-bound-exclusive",
    "The past bound is exclusive: now - ts >= before rejects, so ts = now - before is refused (an "
    "off-by-one `>=` in the range check).",
    ("VAL.range-inclusive-bounds",),
    inputs=_before_exclusive,
)


def _after_exclusive(cluster: Cluster, part: Partition) -> tuple[TopicConfig, Profile]:
    before, after = effective_bounds(part.config, cluster.profile)
    return replace(part.config, before_max_ms=before, after_max_ms=after - 1), cluster.profile


_model_mutant(
    "after-bound-exclusive",
    "The future bound is exclusive: ts - now >= after rejects, so ts = now + after is refused.",
    ("VAL.range-inclusive-bounds",),
    inputs=_after_exclusive,
)


_model_mutant(
    "no-timestamp-not-exempt",
    "Timestamp -1 is range-checked like any value (the 0.10.x behaviour, VAL-3) on a profile where it "
    "must be exempt.",
    ("VAL.no-timestamp-exempt",),
    profile_changes={"exempt_no_timestamp": False},
)


_model_mutant(
    "difference-honoured-in-4-0",
    "message.timestamp.difference.max.ms is still accepted and used as the fallback bound after its "
    "removal in 4.0 (KIP-724), as in 3.6-3.9.",
    ("VAL.difference-config-removed",),
    profile_changes={"has_difference_config": True},
)


def _no_fallback(cluster: Cluster, part: Partition) -> tuple[TopicConfig, Profile]:
    return replace(part.config, difference_max_ms=None), cluster.profile


_model_mutant(
    "no-fallback-to-difference",
    "In 3.6-3.9 an unset before/after bound does not fall back to message.timestamp.difference.max.ms, "
    "so topics configured with the deprecated config lose their bound.",
    ("VAL.bounds-fallback-to-difference",),
    inputs=_no_fallback,
)


_model_mutant(
    "after-default-unlimited",
    "The 4.0 default message.timestamp.after.max.ms of 1 h (KIP-1030) is not applied: far-future "
    "timestamps are accepted with default configs.",
    ("VAL.after-default-one-hour",),
    profile_changes={"default_after_ms": LONG_MAX},
)


def _lat_range_checked(
    cluster: Cluster, part: Partition, batches: Sequence[AnyBatch], now: int
) -> Sequence[AnyBatch] | AppendRejected:
    """VAL-3 fault: the range check runs on LogAppendTime topics too (on the producer's timestamps)."""
    profile = cluster.profile
    before, after = effective_bounds(replace(part.config, timestamp_type=TimestampType.CREATE_TIME), profile)
    errors: list[RecordError] = []
    for batch in batches:
        for i, record in enumerate(batch.records()):
            ts = record.timestamp
            if ts != NO_TIMESTAMP and timestamp_out_of_range(
                ts, now=now, before=before, after=after, rule=profile.range_rule
            ):
                text = out_of_range_text(
                    ts, record.offset, now=now, before=before, after=after, style=profile.error_text
                )
                errors.append(RecordError(i, text))
    if errors:
        return AppendRejected(ErrorCode.INVALID_TIMESTAMP, TIMESTAMP_REJECTED_TEXT, tuple(errors))
    return batches


_model_mutant(
    "lat-topic-range-checked",
    "Producer timestamps are range-checked on LogAppendTime topics although they are about to be "
    "overwritten (the bounds only apply to CreateTime, VAL-3).",
    ("VAL.lat-topic-skips-range-check",),
    sent=_lat_range_checked,
    topics=TimestampType.LOG_APPEND_TIME,
)


def _lat_flag_cleared(cluster: Cluster, part: Partition, batches: Sequence[AnyBatch], now: int) -> Sequence[AnyBatch]:
    # The fault: a producer-set LogAppendTime flag is silently cleared instead of rejected (VAL-8).
    return _rewritten(
        batches,
        _is_lat_v2,
        lambda b: b.with_header(timestamp_type=TimestampType.CREATE_TIME, max_timestamp=b.max_timestamp),
    )


_model_mutant(
    "lat-flag-accepted-on-lat-topic",
    "A producer batch flagged LogAppendTime is accepted on a LogAppendTime topic (the flag cleared and "
    "the batch stamped) instead of rejected with INVALID_TIMESTAMP (VAL-8).",
    ("VAL.lat-flag-rejected-on-lat-topic",),
    V2_PROFILES,
    sent=_lat_flag_cleared,
    topics=TimestampType.LOG_APPEND_TIME,
)


def _valid_records_kept(cluster: Cluster, part: Partition, batches: Sequence[AnyBatch], now: int) -> Sequence[AnyBatch]:
    """VAL-9 fault: out-of-range records are dropped and the valid rest of the v2 batch is appended."""
    if len(batches) != 1 or not isinstance(batches[0], DefaultBatch):
        return batches
    batch = batches[0]
    if batch.producer_id >= 0 or batch.timestamp_type is TimestampType.LOG_APPEND_TIME:
        return batches
    profile = cluster.profile
    before, after = effective_bounds(part.config, profile)
    specs = _specs(batch)
    keep = [
        s
        for s in specs
        if (s.timestamp == NO_TIMESTAMP and profile.exempt_no_timestamp)
        or not timestamp_out_of_range(s.timestamp, now=now, before=before, after=after, rule=profile.range_rule)
    ]
    if not keep or len(keep) == len(specs):
        return batches
    return [build_v2(keep, codec=batch.codec)]


_model_mutant(
    "partial-batch-append",
    "A batch with some out-of-range records is partly appended (the valid records kept) instead of "
    "rejected as a whole (VAL-9).",
    ("VAL.whole-batch-rejected",),
    V2_PROFILES,
    sent=_valid_records_kept,
    topics=TimestampType.CREATE_TIME,
)


def _records_recounted(cluster: Cluster, part: Partition, batches: Sequence[AnyBatch], now: int) -> Sequence[AnyBatch]:
    """VAL-14 fault: the v2 header's RecordsCount is never compared with the records held; the records read are
    counted instead (the model's behaviour before it followed Kafka's DefaultRecordBatch.RecordIterator)."""
    return _rewritten(
        batches,
        lambda b: _is_v2(b) and b.records_count is not None and bool(b.records_),
        lambda b: replace(b, records_count=None, last_offset_delta=max(len(b.records_) - 1, 0), crc=None),
    )


_model_mutant(
    "records-count-unchecked",
    "A v2 batch whose RecordsCount (and LastOffsetDelta) disagrees with the records it holds is stored with the "
    "records counted instead of refused with INVALID_RECORD (\"Incorrect declared batch size\", VAL-14).",
    ("VAL.records-count-matches",),
    sent=_records_recounted,
)


def _rejection_keeps_log_start(
    impl: MutantImplementation, topic: str, index: int, sent: Sequence[AnyBatch], version: int, answer: ProduceResponse
) -> ProduceResponse:
    if answer.error is ErrorCode.NONE or answer.log_start_offset != -1 or version < 5:
        return answer
    return replace(answer, log_start_offset=impl.cluster.leader_log(topic, index).log_start_offset)


_model_mutant(
    "rejection-keeps-log-start",
    "A Produce refused before the log validates it (Produce v3+ carrying magic 0/1, a batch whose CRC does not "
    "match) answers the partition's log_start_offset where Kafka answers -1 (UNKNOWN_LOG_APPEND_INFO, VAL-11).",
    ("VAL.rejection-response-fields",),
    produced=_rejection_keeps_log_start,
)


def _record_errors_dropped(
    impl: MutantImplementation, topic: str, index: int, sent: Sequence[AnyBatch], version: int, answer: ProduceResponse
) -> ProduceResponse:
    return replace(answer, record_errors=())


_model_mutant(
    "record-errors-missing",
    "A rejected produce carries no record_errors at v8+ (KIP-467 not implemented, as in pre-2.4 brokers "
    "and some proxies).",
    ("VAL.record-errors-batch-index",),
    produced=_record_errors_dropped,
)


def _record_errors_one_based(
    impl: MutantImplementation, topic: str, index: int, sent: Sequence[AnyBatch], version: int, answer: ProduceResponse
) -> ProduceResponse:
    shifted = tuple(replace(e, batch_index=e.batch_index + 1) for e in answer.record_errors)
    return replace(answer, record_errors=shifted)


_model_mutant(
    "record-errors-index-off-by-one",
    "record_errors report a 1-based batch_index instead of the record's 0-based position (VAL-11).",
    ("VAL.record-errors-batch-index",),
    produced=_record_errors_one_based,
)


def _append_time_minus_one(
    impl: MutantImplementation, topic: str, index: int, sent: Sequence[AnyBatch], version: int, answer: ProduceResponse
) -> ProduceResponse:
    return replace(answer, log_append_time=-1)


_model_mutant(
    "lat-response-minus-one",
    "A successful produce to a LogAppendTime topic answers log_append_time -1 (the field left at its "
    "default), so clients report their own create time.",
    ("VAL.lat-response-time",),
    produced=_append_time_minus_one,
)


def _append_time_from_producer(
    impl: MutantImplementation, topic: str, index: int, sent: Sequence[AnyBatch], version: int, answer: ProduceResponse
) -> ProduceResponse:
    if answer.log_append_time == -1 or not sent:
        return answer
    # The fault: the producer's (create) timestamp of the batch is echoed instead of `now`.
    return replace(answer, log_append_time=sent[0].max_timestamp)


_model_mutant(
    "lat-response-create-time",
    "A successful produce to a LogAppendTime topic answers the batch's producer timestamp instead of "
    "the broker's append time.",
    ("VAL.lat-response-time",),
    produced=_append_time_from_producer,
)


def _createtime_answers_now(
    impl: MutantImplementation, topic: str, index: int, sent: Sequence[AnyBatch], version: int, answer: ProduceResponse
) -> ProduceResponse:
    config = impl.topic_config(topic, index)
    created = config.timestamp_type is TimestampType.CREATE_TIME
    if answer.error is ErrorCode.NONE and created and version >= 2:
        return replace(answer, log_append_time=impl.clock(impl.leader(topic, index)))
    return answer


_model_mutant(
    "createtime-response-now",
    "A successful produce to a CreateTime topic answers log_append_time = the broker clock instead of -1.",
    ("VAL.createtime-response-minus-one",),
    produced=_createtime_answers_now,
)


def _header_max_kept(
    cluster: Cluster, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
) -> ValidatedAppend:
    if len(sent) != len(outcome.batches):
        return outcome
    stored = tuple(
        replace(b, max_timestamp=s.max_timestamp, crc=None)
        if isinstance(b, DefaultBatch) and isinstance(s, DefaultBatch)
        else b
        for b, s in zip(outcome.batches, sent, strict=True)
    )
    return replace(outcome, batches=stored, max_timestamp=max(b.max_timestamp for b in stored))


_model_mutant(
    "header-max-not-recomputed",
    "On a CreateTime topic the producer's batch MaxTimestamp is trusted and stored instead of the max of "
    "the record timestamps (VAL-13).",
    ("VAL.header-max-recomputed",),
    V2_PROFILES,
    stored=_header_max_kept,
    topics=TimestampType.CREATE_TIME,
)


def _is_key_error(error: RecordError) -> bool:
    return (error.message or "").startswith("Compacted topic cannot accept message without key")


def _first_record_error_decides(
    impl: MutantImplementation, topic: str, index: int, sent: Sequence[AnyBatch], version: int, answer: ProduceResponse
) -> ProduceResponse:
    # The fault: the first record error's kind decides the partition error, not "any timestamp error".
    errors = answer.record_errors
    if answer.error is ErrorCode.INVALID_TIMESTAMP and errors and _is_key_error(errors[0]):
        return replace(answer, error=ErrorCode.INVALID_RECORD, error_message=RECORDS_REJECTED_TEXT_2_5)
    return answer


_model_mutant(
    "first-record-error-decides",
    "A batch with both key errors (compacted topic) and timestamp errors fails with the first record's error "
    "(INVALID_RECORD, 87) instead of INVALID_TIMESTAMP (VAL-9: any timestamp error wins).",
    ("VAL.timestamp-error-wins",),
    produced=_first_record_error_decides,
)


def _every_failure_listed(
    impl: MutantImplementation, topic: str, index: int, sent: Sequence[AnyBatch], version: int, answer: ProduceResponse
) -> ProduceResponse:
    config = impl.topic_config(topic, index)
    if not (config.compacted and answer.record_errors) or len(sent) != 1:
        return answer
    # The fault: a keyless record is checked on to its timestamp, and both failures are listed (VAL-9
    # reports only a record's first failure); any timestamp error then fails the batch with 32.
    now = impl.cluster.clock(impl.cluster.partition(topic, index).leader)
    before, after = effective_bounds(config, impl.profile)
    extra = [
        RecordError(
            i, out_of_range_text(r.timestamp, i, now=now, before=before, after=after, style=impl.profile.error_text)
        )
        for i, r in enumerate(sent[0].records())
        if r.key is None
        and timestamp_out_of_range(r.timestamp, now=now, before=before, after=after, rule=impl.profile.range_rule)
    ]
    if not extra:
        return answer
    errors = tuple(sorted([*answer.record_errors, *extra], key=lambda e: e.batch_index))
    return replace(
        answer, error=ErrorCode.INVALID_TIMESTAMP, error_message=TIMESTAMP_REJECTED_TEXT, record_errors=errors
    )


_model_mutant(
    "every-failure-per-record",
    "A keyless record on a compacted topic is also checked for its timestamp, and both failures are listed "
    "in record_errors (VAL-9 reports only each record's first failure, the key).",
    ("VAL.first-failure-per-record",),
    produced=_every_failure_listed,
)


def _plain_summary(
    impl: MutantImplementation, topic: str, index: int, sent: Sequence[AnyBatch], version: int, answer: ProduceResponse
) -> ProduceResponse:
    # The fault: the 2.5-3.1 top-level text, without the count and the first three record errors.
    if answer.error is ErrorCode.INVALID_RECORD and answer.error_message:
        return replace(answer, error_message=RECORDS_REJECTED_TEXT_2_5)
    return answer


_model_mutant(
    "invalid-record-summary-plain",
    "A batch rejected for non-timestamp record errors carries the pre-3.2 error_message \"One or more records "
    "have been rejected\" instead of the count and the first three errors (VAL-9).",
    ("VAL.invalid-record-summary-text",),
    produced=_plain_summary,
)


_OUT_OF_RANGE_TEXT = re.compile(
    r"^(Timestamp -?\d+ of message with offset )(-?\d+)( is out of range\. "
    r"The timestamp should be within \[)(-?\d+), (-?\d+)\]$"
)


def _log_offset_in_text(
    impl: MutantImplementation, topic: str, index: int, sent: Sequence[AnyBatch], version: int, answer: ProduceResponse
) -> ProduceResponse:
    # The fault: the message prints the offset the record would have had in the log (VAL-7 prints the
    # request's own, relative offset).
    end = impl.cluster.leader_log(topic, index).log_end_offset

    def absolute(error: RecordError) -> RecordError:
        match = _OUT_OF_RANGE_TEXT.match(error.message or "")
        if match is None:
            return error
        head, offset, middle, low, high = match.groups()
        return replace(error, message=f"{head}{end + int(offset)}{middle}{low}, {high}]")

    return replace(answer, record_errors=tuple(absolute(e) for e in answer.record_errors))


_model_mutant(
    "error-text-log-offset",
    "An out-of-range record's message prints the offset the record would have had in the log instead of its "
    "offset in the request (VAL-7).",
    ("VAL.error-offset-from-request",),
    produced=_log_offset_in_text,
)


def _saturated_bounds(
    impl: MutantImplementation, topic: str, index: int, sent: Sequence[AnyBatch], version: int, answer: ProduceResponse
) -> ProduceResponse:
    # The fault: the printed bounds saturate at Long.MAX_VALUE instead of wrapping (VAL-7).
    def saturated(error: RecordError) -> RecordError:
        match = _OUT_OF_RANGE_TEXT.match(error.message or "")
        if match is None:
            return error
        head, offset, middle, low, high = match.groups()
        upper = LONG_MAX if int(high) < int(low) else int(high)
        return replace(error, message=f"{head}{offset}{middle}{low}, {upper}]")

    return replace(answer, record_errors=tuple(saturated(e) for e in answer.record_errors))


_model_mutant(
    "error-bounds-saturated",
    "The bounds printed in an out-of-range message saturate at Long.MAX_VALUE where Kafka's 64-bit sum "
    "wraps to a negative number (after = Long.MAX_VALUE, VAL-7).",
    ("VAL.error-bounds-wraparound",),
    produced=_saturated_bounds,
)


def _timestamp_rejection(rejected: list[tuple[int, int]], text: Callable[[int, int], str]) -> AppendRejected:
    errors = tuple(RecordError(index, text(index, ts)) for index, ts in rejected)
    return AppendRejected(ErrorCode.INVALID_TIMESTAMP, TIMESTAMP_REJECTED_TEXT, errors, "seeded fault")


def _negatives_exempt(cluster: Cluster, part: Partition, batches: Sequence[AnyBatch], now: int) -> Sequence[AnyBatch]:
    # The fault: the range check skips every negative timestamp, as if each were "no timestamp" (VAL-3
    # exempts only -1).
    return [_restamped(b, lambda t: -1 if t < -1 else t) for b in batches]


_model_mutant(
    "negative-timestamps-exempt",
    "Every negative timestamp is exempt from the range check like -1, so Long.MIN_VALUE is accepted where "
    "the 3.6+ rule's 64-bit difference makes it ~2^63 ms in the future (VAL-4).",
    ("VAL.range-long-min-is-future",),
    sent=_negatives_exempt,
)


def _exact_distance(
    cluster: Cluster, part: Partition, batches: Sequence[AnyBatch], now: int
) -> Sequence[AnyBatch] | AppendRejected:
    profile = cluster.profile
    if profile.range_rule is not RangeRule.SYMMETRIC:
        return batches
    difference, _ = effective_bounds(part.config, profile)
    # The fault: |ts - now| computed without 64-bit overflow, so Long.MIN_VALUE is "out of range" (VAL-5:
    # Java's abs of the overflowed distance stays negative and never rejects).
    flat = [r.timestamp for b in batches for r in b.records()]
    rejected = [(i, t) for i, t in enumerate(flat) if t != -1 and abs(t - now) > difference]
    if not rejected:
        return batches
    return _timestamp_rejection(
        rejected,
        lambda i, t: out_of_range_text(t, i, now=now, before=difference, after=difference, style=profile.error_text),
    )


_model_mutant(
    "symmetric-distance-exact",
    "The symmetric range rule computes |ts - now| exactly (no 64-bit overflow), so it rejects ts = now + "
    "Long.MIN_VALUE, which Kafka's overflowing Math.abs never does (VAL-5).",
    ("VAL.symmetric-long-min-accepted",),
    sent=_exact_distance,
    topics=TimestampType.CREATE_TIME,
)


def _negatives_rejected(
    cluster: Cluster, part: Partition, batches: Sequence[AnyBatch], now: int
) -> Sequence[AnyBatch] | AppendRejected:
    # The fault: the broker applies the Java writer's sign check (FMT-8) to what it receives (VAL-15
    # range-checks such values like any other).
    flat = [r.timestamp for b in batches for r in b.records()]
    rejected = [(i, t) for i, t in enumerate(flat) if t < -1]
    if not rejected:
        return batches
    return _timestamp_rejection(rejected, lambda i, t: f"Invalid negative timestamp {t}")


_model_mutant(
    "negative-timestamps-rejected",
    "A record stamped below -1 is refused with INVALID_TIMESTAMP for its sign (the Java writer's check) "
    "instead of being range-checked like any value (VAL-15).",
    ("VAL.below-minus-one-range-checked",),
    sent=_negatives_rejected,
    topics=TimestampType.CREATE_TIME,
)


class _DuplicateAnsweredAsNewCluster(MutantCluster):
    def duplicate_answer(self, part: Partition, batches: Sequence[AnyBatch], now: int) -> ProduceResponse | None:
        answer = super().duplicate_answer(part, batches, now)
        if answer is None:
            return None
        # The fault: a duplicate is answered like a new append: -1 on a CreateTime topic, the current clock on
        # a LogAppendTime one (VAL-12: the cached batch's MaxTimestamp either way).
        return replace(answer, log_append_time=now if _is_lat_topic(part) else NO_TIMESTAMP)


_model_mutant(
    "duplicate-answered-as-new",
    "A retried idempotent batch is answered with the log_append_time of a new append (-1 on CreateTime topics, "
    "now on LogAppendTime ones) instead of the cached batch's MaxTimestamp (VAL-12).",
    ("VAL.duplicate-returns-cached-max",),
    cluster=_DuplicateAnsweredAsNewCluster,
)


class _DedupFirstImpl(MutantImplementation):
    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        log = self.cluster.leader_log(topic, partition)
        duplicate = find_duplicate(log.batches(), batches)
        if duplicate is None:
            return super().produce(topic, partition, batches, produce_version=produce_version)
        # The fault: duplicate detection before validation, so a retry whose timestamps fell out of the window
        # is still answered as a duplicate (VAL-12: Kafka validates first and rejects it with 32).
        return ProduceResponse(
            ErrorCode.NONE,
            base_offset=duplicate.base_offset,
            log_append_time=duplicate.max_timestamp,
            log_start_offset=log.log_start_offset,
        ).as_of_version(produce_version)


_model_mutant(
    "dedup-before-validation",
    "Duplicate detection runs before validation: an idempotent retry whose timestamps are now out of range is "
    "answered as a duplicate instead of rejected with INVALID_TIMESTAMP (VAL-12).",
    ("VAL.validation-before-dedup",),
    answers=_DedupFirstImpl,
)


def _idempotence_dropped(
    cluster: Cluster, part: Partition, batches: Sequence[AnyBatch], now: int
) -> Sequence[AnyBatch]:
    if part.config.message_format_magic >= 2 or not cluster.profile.honours_message_format_version:
        return batches
    # The fault: for a topic stored below v2 the producer id and sequence are dropped in the conversion
    # instead of refusing the batch (VAL-14: UNSUPPORTED_FOR_MESSAGE_FORMAT).
    return _rewritten(
        batches, _is_v2, lambda b: replace(b, producer_id=-1, producer_epoch=-1, base_sequence=-1, crc=None)
    )


_model_mutant(
    "idempotence-dropped-on-old-format",
    "An idempotent batch for a topic stored in format v0/v1 is accepted, its producer id and sequence dropped "
    "in the conversion, instead of refused with UNSUPPORTED_FOR_MESSAGE_FORMAT (VAL-14).",
    ("VAL.idempotent-needs-v2",),
    sent=_idempotence_dropped,
)
