"""ListOffsets faults (LO-*): the timestamp search, special targets, caps and epochs."""

from __future__ import annotations

from dataclasses import replace

from conformance.faults.mutant import MutantCluster, MutantImplementation, _impl, _mutant
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


class _ListOffsetsImpl(MutantImplementation):
    """Post-processes ListOffsets answers with `mutate`; the leader log is at hand for the fault."""

    def list_offsets(
        self,
        topic: str,
        partition: int,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> ListOffsetsAnswer:
        answer = super().list_offsets(topic, partition, target, version=version, isolation=isolation)
        return self.mutate(self.cluster.leader_log(topic, partition), target, version, answer)

    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        return answer


def _visible_records(log: PartitionLog) -> list[tuple[ConsumerRecord, AnyBatch]]:
    return [
        (r, b)
        for b in log.batches()
        for r in b.records()
        if log.log_start_offset <= r.offset < log.high_watermark
    ]


def _found(answer: ListOffsetsAnswer) -> bool:
    return answer.error is ErrorCode.NONE and answer.offset >= 0


class _LastMatchImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target < 0 or not _found(answer):
            return answer
        ties = [r.offset for r, _ in _visible_records(log) if r.timestamp == answer.timestamp]
        return replace(answer, offset=max(ties, default=answer.offset))


@_mutant(
    "lookup-last-match",
    "A timestamp lookup answers the last of several records sharing the first matching timestamp "
    "instead of the first (an upper-bound instead of lower-bound binary search).",
    ("LO.first-ge-target",),
)
def build_lookup_last_match(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_LastMatchImpl)


class _ClosestImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target < 0 or not _found(answer):
            return answer
        candidates = [(r.timestamp, r.offset, b) for r, b in _visible_records(log) if r.timestamp >= target]
        if not candidates:
            return answer
        ts, offset, batch = min(candidates, key=lambda c: (c[0], c[1]))
        epoch = batch.partition_leader_epoch if version >= 4 else NO_PARTITION_LEADER_EPOCH
        return replace(answer, offset=offset, timestamp=ts, leader_epoch=max(epoch, NO_PARTITION_LEADER_EPOCH))


@_mutant(
    "lookup-closest-timestamp",
    "A timestamp lookup answers the record with the timestamp closest above the target (smallest "
    "timestamp >= target) instead of the smallest offset with timestamp >= target.",
    ("LO.first-ge-target",),
)
def build_lookup_closest(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_ClosestImpl)


class _BatchFirstOffsetImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target < 0 or not _found(answer):
            return answer
        for batch in log.batches():
            if batch.base_offset <= answer.offset <= batch.last_offset:
                return replace(answer, offset=max(batch.base_offset, log.log_start_offset))
        return answer


@_mutant(
    "lookup-batch-first-offset",
    "A timestamp lookup answers the first offset of the batch holding the match instead of the "
    "matching record's own offset (a batch-granular search).",
    ("LO.first-ge-target", "IDX.segment-search-first-ge"),
)
def build_lookup_batch_first_offset(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_BatchFirstOffsetImpl)


class _NotFoundLeoImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target >= 0 and answer.error is ErrorCode.NONE and answer.offset == -1:
            return replace(answer, offset=log.high_watermark)
        return answer


@_mutant(
    "not-found-answers-leo",
    "A timestamp lookup with no record at or after the target answers the log end offset instead of -1 "
    "(the pre-KIP-79 'latest' convention).",
    ("LO.not-found-minus-one",),
)
def build_not_found_leo(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_NotFoundLeoImpl)


class _MaxTsBatchLastImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target != SpecialTarget.MAX_TIMESTAMP or not _found(answer):
            return answer
        for batch in log.batches():
            if batch.base_offset <= answer.offset <= batch.last_offset:
                return replace(answer, offset=batch.last_offset)
        return answer


@_mutant(
    "max-timestamp-batch-last-offset",
    "MAX_TIMESTAMP answers the last offset of the batch holding the max (Kafka 3.0-3.7, KAFKA-16310) "
    "instead of the record's. On a LogAppendTime topic that is also not the batch's first record "
    "(LO.max-timestamp-lat-batch-first-record).",
    ("LO.max-timestamp-first-record", "LO.max-timestamp-lat-batch-first-record"),
)
def build_max_ts_batch_last(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_MaxTsBatchLastImpl)


class _MaxTsLastRecordImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target != SpecialTarget.MAX_TIMESTAMP or not _found(answer):
            return answer
        for batch in log.batches():
            if batch.base_offset <= answer.offset <= batch.last_offset:
                ties = [r.offset for r in batch.records() if r.timestamp == answer.timestamp]
                return replace(answer, offset=max(ties))
        return answer


@_mutant(
    "max-timestamp-last-record",
    "MAX_TIMESTAMP answers the last record of the batch holding the max timestamp instead of the first "
    "(a `>=` scan). Every record of a LogAppendTime batch holds the max, so there it answers the batch's "
    "last record (LO.max-timestamp-lat-batch-first-record).",
    ("LO.max-timestamp-first-record", "LO.max-timestamp-lat-batch-first-record"),
)
def build_max_ts_last_record(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_MaxTsLastRecordImpl)


class _EarliestZeroImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target in (SpecialTarget.EARLIEST, SpecialTarget.EARLIEST_LOCAL) and _found(answer):
            return replace(answer, offset=0)
        return answer


@_mutant(
    "earliest-returns-zero",
    "EARLIEST (-2) answers offset 0 instead of the log start offset once retention has deleted segments.",
    ("LO.earliest-is-log-start",),
)
def build_earliest_zero(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_EarliestZeroImpl)


class _EpochMissingImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        return replace(answer, leader_epoch=NO_PARTITION_LEADER_EPOCH)


@_mutant(
    "epoch-missing",
    "ListOffsets v4+ answers carry leader epoch -1 (KIP-320 field never filled).",
    ("LO.epoch-of-found-batch", "LO.latest-is-high-watermark"),
)
def build_epoch_missing(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_EpochMissingImpl)


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


@_mutant(
    "unknown-target-searched",
    "An unknown negative target (e.g. -7) falls through to the timestamp search (pre-3.9 behaviour) "
    "instead of UNSUPPORTED_VERSION. Below its minimum version a special target is unknown too, so "
    "EARLIEST_LOCAL/LATEST_TIERED asked too early are searched as well (LO.special-target-min-version).",
    ("LO.unknown-target-unsupported", "LO.special-target-min-version"),
)
def build_unknown_target_searched(profile: Profile) -> Implementation:
    return _impl(profile, cluster_profile=replace(profile, unknown_special_target=UnknownSpecialTarget.SEARCH))


class _NoStableOffsetImpl(MutantImplementation):
    def list_offsets(
        self,
        topic: str,
        partition: int,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> ListOffsetsAnswer:
        answer = super().list_offsets(topic, partition, target, version=version, isolation=isolation)
        capped = target >= 0 or target in (SpecialTarget.LATEST, SpecialTarget.MAX_TIMESTAMP)
        if isolation is IsolationLevel.READ_COMMITTED and capped and answer.error is ErrorCode.NONE:
            return NOT_FOUND
        return answer


@_mutant(
    "read-committed-no-stable-offset",
    "The last stable offset is unknown (-1) outside transactions, so every read_committed LATEST or timestamp "
    "lookup is capped away and answers -1 (a broker that tracks the LSO only for transactional producers).",
    ("LO.read-committed-lso",),
)
def build_read_committed_no_stable_offset(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_NoStableOffsetImpl)


class _MaxTsLogEndImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target == SpecialTarget.MAX_TIMESTAMP and answer.error is ErrorCode.NONE and answer.offset == -1:
            return replace(answer, offset=log.log_end_offset)
        return answer


@_mutant(
    "max-timestamp-empty-answers-log-end",
    "MAX_TIMESTAMP on a log without a timestamped record answers the log end offset (= the high watermark) "
    "with timestamp -1 instead of -1/-1: an offset no consumer can read (LO-3, LO-6).",
    ("LO.max-timestamp-capped", "LO.max-timestamp-empty"),
)
def build_max_ts_empty_log_end(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_MaxTsLogEndImpl)


class _EverySegmentLog(PartitionLog):
    def segments_searched_for(self, target: int) -> tuple[Segment, ...]:
        # The fault: when the first segment dated at or after the target holds no match, the search goes on
        # into later segments (LO-2 searches only that one).
        first = super().segments_searched_for(target)
        return tuple(self.segments[self.segments.index(first[0]):]) if first else ()


class _EverySegmentCluster(MutantCluster):
    log_class = _EverySegmentLog


@_mutant(
    "lookup-searches-every-segment",
    "A timestamp lookup that finds nothing in the first segment whose largest timestamp reaches the target "
    "(e.g. a segment without timestamps, dated by its mtime) goes on searching the later segments.",
    ("LO.first-qualifying-segment",),
)
def build_lookup_searches_every_segment(profile: Profile) -> Implementation:
    return _impl(profile, _EverySegmentCluster)


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


class _KeepsDeletedCluster(MutantCluster):
    log_class = _KeepsDeletedLog


@_mutant(
    "lookup-searches-deleted-segments",
    "Segments deleted by retention stay searchable until their files are removed (file.delete.delay.ms), "
    "and the search does not start at the log start offset, so a lookup may answer a deleted offset.",
    ("LO.search-from-log-start",),
)
def build_lookup_searches_deleted_segments(profile: Profile) -> Implementation:
    return _impl(profile, _KeepsDeletedCluster)


class _OldFormatSearchedImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if answer.error is ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT:
            return NOT_FOUND
        return answer


@_mutant(
    "old-format-searched",
    "A timestamp lookup on a topic stored in format v0 searches (and finds nothing) instead of failing with "
    "UNSUPPORTED_FOR_MESSAGE_FORMAT (43), so a consumer cannot tell 'no timestamps' from 'no match'.",
    ("LO.unsupported-for-message-format",),
)
def build_old_format_searched(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_OldFormatSearchedImpl)


class _V0SearchImpl(MutantImplementation):
    def list_offsets(
        self,
        topic: str,
        partition: int,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> ListOffsetsAnswer:
        if version != 0:
            return super().list_offsets(topic, partition, target, version=version, isolation=isolation)
        # The fault: v0 is answered by the v1 handler (a record-timestamp search, LO-2) instead of segment
        # base offsets dated by file mtime (LO-7).
        answer = self.cluster.list_offsets(topic, partition, target, version=1, isolation=isolation)
        return replace(answer, timestamp=NO_TIMESTAMP, leader_epoch=NO_PARTITION_LEADER_EPOCH)


@_mutant(
    "list-offsets-v0-searches-timestamps",
    "ListOffsets v0 is answered by the v1 handler: a time target searches record timestamps instead of "
    "answering segment base offsets dated by their files' mtime (LO-7).",
    ("LO.v0-segment-offsets",),
)
def build_list_offsets_v0_searches(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_V0SearchImpl)


class _EarliestCappedImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        # The fault: EARLIEST goes through the consumer cap like a lookup (offset < high watermark, LO-3).
        earliest = target in (SpecialTarget.EARLIEST, SpecialTarget.EARLIEST_LOCAL)
        if earliest and _found(answer) and answer.offset >= log.high_watermark:
            return NOT_FOUND
        return answer


@_mutant(
    "earliest-capped-at-high-watermark",
    "EARLIEST (and EARLIEST_LOCAL) are capped like a timestamp lookup, so when the log start offset equals "
    "the high watermark (an empty log, or retention deleted every record) they answer -1 instead of it.",
    ("LO.cap-exempts-earliest",),
)
def build_earliest_capped(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_EarliestCappedImpl)


class _MaxTsLastTieImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target != SpecialTarget.MAX_TIMESTAMP or not _found(answer):
            return answer
        # The fault: of several batches reaching the max, the latest answers (a `>=` scan, LO-6).
        holding = [b for b in log.batches() if b.last_offset < log.high_watermark
                   and any(r.timestamp == answer.timestamp for r in b.records())]
        batch = holding[-1]
        offset = next(r.offset for r in batch.records() if r.timestamp == answer.timestamp)
        epoch = batch.partition_leader_epoch if version >= 4 else NO_PARTITION_LEADER_EPOCH
        return replace(answer, offset=offset, leader_epoch=max(epoch, NO_PARTITION_LEADER_EPOCH))


@_mutant(
    "max-timestamp-latest-tie",
    "When several batches reach the log's max timestamp, MAX_TIMESTAMP answers the first record of the latest "
    "of them instead of the earliest (LO-6).",
    ("LO.max-timestamp-earliest-on-ties",),
)
def build_max_ts_latest_tie(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_MaxTsLastTieImpl)

