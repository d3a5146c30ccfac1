"""ListOffsets faults (LO-*): the timestamp search, special targets, caps and epochs."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace

from conformance.faults.mutant import MutantImplementation, OffsetsFault, _impl, _model_mutant, _mutant
from conformance.targets.kinds.implementation import Implementation
from models.constants import (
    NO_PARTITION_LEADER_EPOCH,
    NO_TIMESTAMP,
    ErrorCode,
    IsolationLevel,
    SpecialTarget,
)
from models.list_offsets import NOT_FOUND, ListOffsetsAnswer
from models.log import PartitionLog, Segment
from models.profiles import Profile, UnknownSpecialTarget
from models.records import AnyBatch, ConsumerRecord


def _visible_records(log: PartitionLog) -> list[tuple[ConsumerRecord, AnyBatch]]:
    return [
        (r, b)
        for b in log.batches()
        for r in b.records()
        if log.log_start_offset <= r.offset < log.high_watermark
    ]


def _found(answer: ListOffsetsAnswer) -> bool:
    return answer.error is ErrorCode.NONE and answer.offset >= 0


def _moved_in_batch(
    log: PartitionLog, answer: ListOffsetsAnswer, offset: Callable[[AnyBatch], int]
) -> ListOffsetsAnswer:
    """`answer` with the offset `offset` picks in the first of the log's batches whose offsets span the one it
    found (a batch-granular answer); as it is where no batch does."""
    batch = next((b for b in log.batches() if b.base_offset <= answer.offset <= b.last_offset), None)
    return answer if batch is None else replace(answer, offset=offset(batch))


def _epoch_of(batch: AnyBatch, version: int) -> int:
    """The leader epoch an answer found in `batch` carries at ListOffsets `version` (-1 below v4)."""
    epoch = batch.partition_leader_epoch if version >= 4 else NO_PARTITION_LEADER_EPOCH
    return max(epoch, NO_PARTITION_LEADER_EPOCH)


def _timestamp_search(target: int) -> bool:
    return target >= 0


def _max_timestamp(target: int) -> bool:
    return target == SpecialTarget.MAX_TIMESTAMP


def _earliest(target: int) -> bool:
    return target in (SpecialTarget.EARLIEST, SpecialTarget.EARLIEST_LOCAL)


def _of_found(targets: Callable[[int], bool]) -> Callable[[OffsetsFault], OffsetsFault]:
    """The fault applied to the answers that found a record for a target `targets` picks; any other answer is
    sent as it is. The guarded fault keeps the function's name, so a mutant still pickles by reference."""

    def guard(fault: OffsetsFault) -> OffsetsFault:
        @functools.wraps(fault)
        def guarded(log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
            if not targets(target) or not _found(answer):
                return answer
            return fault(log, target, version, answer)

        return guarded

    return guard


@_of_found(_timestamp_search)
def _last_match(log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
    ties = [r.offset for r, _ in _visible_records(log) if r.timestamp == answer.timestamp]
    return replace(answer, offset=max(ties, default=answer.offset))


_model_mutant(
    "lookup-last-match",
    "A timestamp lookup answers the last of several records sharing the first matching timestamp "
    "instead of the first (an upper-bound instead of lower-bound binary search).",
    ("LO.first-ge-target",),
    offsets=_last_match,
)


@_of_found(_timestamp_search)
def _closest_timestamp(log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
    candidates = [(r.timestamp, r.offset, b) for r, b in _visible_records(log) if r.timestamp >= target]
    if not candidates:
        return answer
    ts, offset, batch = min(candidates, key=lambda c: (c[0], c[1]))
    return replace(answer, offset=offset, timestamp=ts, leader_epoch=_epoch_of(batch, version))


_model_mutant(
    "lookup-closest-timestamp",
    "A timestamp lookup answers the record with the timestamp closest above the target (smallest "
    "timestamp >= target) instead of the smallest offset with timestamp >= target.",
    ("LO.first-ge-target",),
    offsets=_closest_timestamp,
)


@_of_found(_timestamp_search)
def _batch_first_offset(log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
    return _moved_in_batch(log, answer, lambda batch: max(batch.base_offset, log.log_start_offset))


_model_mutant(
    "lookup-batch-first-offset",
    "A timestamp lookup answers the first offset of the batch holding the match instead of the "
    "matching record's own offset (a batch-granular search).",
    ("LO.first-ge-target", "IDX.segment-search-first-ge"),
    offsets=_batch_first_offset,
)


def _not_found_leo(log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
    if target >= 0 and answer.error is ErrorCode.NONE and answer.offset == -1:
        return replace(answer, offset=log.high_watermark)
    return answer


_model_mutant(
    "not-found-answers-leo",
    "A timestamp lookup with no record at or after the target answers the log end offset instead of -1 "
    "(the pre-KIP-79 'latest' convention).",
    ("LO.not-found-minus-one",),
    offsets=_not_found_leo,
)


@_of_found(_max_timestamp)
def _max_ts_batch_last(log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
    return _moved_in_batch(log, answer, lambda batch: batch.last_offset)


_model_mutant(
    "max-timestamp-batch-last-offset",
    "MAX_TIMESTAMP answers the last offset of the batch holding the max (Kafka 3.0-3.7, KAFKA-16310) "
    "instead of the record's. On a LogAppendTime topic that is also not the batch's first record "
    "(LO.max-timestamp-lat-batch-first-record).",
    ("LO.max-timestamp-first-record", "LO.max-timestamp-lat-batch-first-record"),
    offsets=_max_ts_batch_last,
)


@_of_found(_max_timestamp)
def _max_ts_last_record(log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
    return _moved_in_batch(
        log, answer, lambda batch: max(r.offset for r in batch.records() if r.timestamp == answer.timestamp)
    )


_model_mutant(
    "max-timestamp-last-record",
    "MAX_TIMESTAMP answers the last record of the batch holding the max timestamp instead of the first "
    "(a `>=` scan). Every record of a LogAppendTime batch holds the max, so there it answers the batch's "
    "last record (LO.max-timestamp-lat-batch-first-record).",
    ("LO.max-timestamp-first-record", "LO.max-timestamp-lat-batch-first-record"),
    offsets=_max_ts_last_record,
)


@_of_found(_earliest)
def _earliest_zero(log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
    return replace(answer, offset=0)


def _tiered_as_earliest(
    log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer
) -> ListOffsetsAnswer:
    if target not in (SpecialTarget.LATEST_TIERED, SpecialTarget.EARLIEST_PENDING_UPLOAD) or answer.error:
        return answer
    return replace(answer, offset=log.log_start_offset, leader_epoch=log.latest_epoch)


_model_mutant(
    "tiered-targets-as-earliest",
    "LATEST_TIERED (-5) and EARLIEST_PENDING_UPLOAD (-6) answer the log start offset, as EARLIEST_LOCAL does, "
    "instead of offset -1 and epoch -1 on a log without tiered storage.",
    ("LO.latest-tiered-none", "LO.earliest-pending-upload-none"),
    offsets=_tiered_as_earliest,
)


_model_mutant(
    "earliest-returns-zero",
    "EARLIEST (-2) answers offset 0 instead of the log start offset once retention has deleted segments.",
    ("LO.earliest-is-log-start",),
    offsets=_earliest_zero,
)


def _epoch_missing(log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
    return replace(answer, leader_epoch=NO_PARTITION_LEADER_EPOCH)


_model_mutant(
    "epoch-missing",
    "ListOffsets v4+ answers carry leader epoch -1 (KIP-320 field never filled).",
    ("LO.epoch-of-found-batch", "LO.latest-is-high-watermark"),
    offsets=_epoch_missing,
)


def _with_target_min_version(profile: Profile, target: int, version: int) -> Profile:
    versions = tuple((t, version if t == target else v) for t, v in profile.special_target_min_versions)
    return replace(profile, special_target_min_versions=versions)


@_mutant(
    "max-timestamp-below-v7",
    "MAX_TIMESTAMP (-3) is served at any ListOffsets version instead of UNSUPPORTED_VERSION below v7 "
    "(KIP-734, KAFKA-17331).",
    ("LO.special-target-min-version",),
)
def build_max_ts_below_v7(profile: Profile) -> Implementation:
    return _impl(profile, cluster_profile=_with_target_min_version(profile, SpecialTarget.MAX_TIMESTAMP, 0))


_model_mutant(
    "unknown-target-searched",
    "An unknown negative target (e.g. -7) falls through to the timestamp search (pre-3.9 behaviour) "
    "instead of UNSUPPORTED_VERSION. Below its minimum version a special target is unknown too, so "
    "EARLIEST_LOCAL/LATEST_TIERED asked too early are searched as well (LO.special-target-min-version).",
    ("LO.unknown-target-unsupported", "LO.special-target-min-version"),
    profile_changes={"unknown_special_target": UnknownSpecialTarget.SEARCH},
)


class _NoStableOffsetImpl(MutantImplementation):
    def lookup(
        self, topic: str, partition: int, target: int, version: int, isolation: IsolationLevel
    ) -> ListOffsetsAnswer:
        answer = super().lookup(topic, partition, target, version, isolation)
        capped = target >= 0 or target in (SpecialTarget.LATEST, SpecialTarget.MAX_TIMESTAMP)
        if isolation is IsolationLevel.READ_COMMITTED and capped and answer.error is ErrorCode.NONE:
            return NOT_FOUND
        return answer


_model_mutant(
    "read-committed-no-stable-offset",
    "The last stable offset is unknown (-1) outside transactions, so every read_committed LATEST or timestamp "
    "lookup is capped away and answers -1 (a broker that tracks the LSO only for transactional producers).",
    ("LO.read-committed-lso",),
    answers=_NoStableOffsetImpl,
)


def _max_ts_log_end(log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
    if target == SpecialTarget.MAX_TIMESTAMP and answer.error is ErrorCode.NONE and answer.offset == -1:
        return replace(answer, offset=log.log_end_offset)
    return answer


_model_mutant(
    "max-timestamp-empty-answers-log-end",
    "MAX_TIMESTAMP on a log without a timestamped record answers the log end offset (= the high watermark) "
    "with timestamp -1 instead of -1/-1: an offset no consumer can read (LO-3, LO-6).",
    ("LO.max-timestamp-capped", "LO.max-timestamp-empty"),
    offsets=_max_ts_log_end,
)


class _EverySegmentLog(PartitionLog):
    def segments_searched_for(self, target: int) -> tuple[Segment, ...]:
        # The fault: when the first segment dated at or after the target holds no match, the search goes on
        # into later segments (LO-2 searches only that one).
        first = super().segments_searched_for(target)
        return tuple(self.segments[self.segments.index(first[0]):]) if first else ()


_model_mutant(
    "lookup-searches-every-segment",
    "A timestamp lookup that finds nothing in the first segment whose largest timestamp reaches the target "
    "(e.g. a segment without timestamps, dated by its mtime) goes on searching the later segments.",
    ("LO.first-qualifying-segment",),
    log=_EverySegmentLog,
)


class _KeepsDeletedLog(PartitionLog):
    """Segments retention deleted stay searchable until their files go (file.delete.delay.ms)."""

    pending_deletion: tuple[Segment, ...] = ()

    def delete_retention_breached_segments(self, now: int) -> int:
        doomed = tuple(self.segments[: self.deletable_segments(now)])
        deleted = super().delete_retention_breached_segments(now)
        self.pending_deletion = (*self.pending_deletion, *doomed[:deleted])
        return deleted

    def segments_searched_for(self, target: int) -> tuple[Segment, ...]:
        # The fault: the deleted segments come first in the search (LO-2: only live segments) ...
        for segment in (*self.pending_deletion, *self.segments):
            if segment.largest_timestamp() >= target:
                return (segment,)
        return ()

    def timestamp_search_start(self) -> int:
        # ... and the search starts at offset 0, not the log start offset (LO-2).
        return 0


_model_mutant(
    "lookup-searches-deleted-segments",
    "Segments deleted by retention stay searchable until their files are removed (file.delete.delay.ms), "
    "and the search does not start at the log start offset, so a lookup may answer a deleted offset.",
    ("LO.search-from-log-start",),
    log=_KeepsDeletedLog,
)


def _old_format_searched(log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
    if answer.error is ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT:
        return NOT_FOUND
    return answer


_model_mutant(
    "old-format-searched",
    "A timestamp lookup on a topic stored in format v0 searches (and finds nothing) instead of failing with "
    "UNSUPPORTED_FOR_MESSAGE_FORMAT (43), so a consumer cannot tell 'no timestamps' from 'no match'.",
    ("LO.unsupported-for-message-format",),
    offsets=_old_format_searched,
)


class _V0SearchImpl(MutantImplementation):
    def lookup(
        self, topic: str, partition: int, target: int, version: int, isolation: IsolationLevel
    ) -> ListOffsetsAnswer:
        if version != 0:
            return super().lookup(topic, partition, target, version, isolation)
        # The fault: v0 is answered by the v1 handler (a record-timestamp search, LO-2) instead of segment
        # base offsets dated by file mtime (LO-7).
        answer = self.cluster.list_offsets(topic, partition, target, version=1, isolation=isolation)
        return replace(answer, timestamp=NO_TIMESTAMP, leader_epoch=NO_PARTITION_LEADER_EPOCH)


_model_mutant(
    "list-offsets-v0-searches-timestamps",
    "ListOffsets v0 is answered by the v1 handler: a time target searches record timestamps instead of "
    "answering segment base offsets dated by their files' mtime (LO-7).",
    ("LO.v0-segment-offsets",),
    answers=_V0SearchImpl,
)


@_of_found(_earliest)
def _earliest_capped(log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
    # The fault: EARLIEST goes through the consumer cap like a lookup (offset < high watermark, LO-3).
    return NOT_FOUND if answer.offset >= log.high_watermark else answer


_model_mutant(
    "earliest-capped-at-high-watermark",
    "EARLIEST (and EARLIEST_LOCAL) are capped like a timestamp lookup, so when the log start offset equals "
    "the high watermark (an empty log, or retention deleted every record) they answer -1 instead of it.",
    ("LO.cap-exempts-earliest",),
    offsets=_earliest_capped,
)


@_of_found(_max_timestamp)
def _max_ts_last_tie(log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
    # The fault: of several batches reaching the max, the latest answers (a `>=` scan, LO-6).
    holding = [b for b in log.batches() if b.last_offset < log.high_watermark
               and any(r.timestamp == answer.timestamp for r in b.records())]
    batch = holding[-1]
    offset = next(r.offset for r in batch.records() if r.timestamp == answer.timestamp)
    return replace(answer, offset=offset, leader_epoch=_epoch_of(batch, version))


_model_mutant(
    "max-timestamp-latest-tie",
    "When several batches reach the log's max timestamp, MAX_TIMESTAMP answers the first record of the latest "
    "of them instead of the earliest (LO-6).",
    ("LO.max-timestamp-earliest-on-ties",),
    offsets=_max_ts_last_tie,
)
