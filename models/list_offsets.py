"""ListOffsets / offsetsForTimes against one partition log (docs/rules.md, LO-1..9).

`list_offsets` answers one partition of a ListOffsets request the way the partition leader does:
special targets and their minimum versions (LO-1), the timestamp search (LO-2 with IDX-7/8), the
visibility cap (LO-3), LATEST / EARLIEST (LO-4, LO-5), MAX_TIMESTAMP (LO-6), the v0 legacy answer
(LO-7) and the old-format error (LO-8). `check_client_target` and `client_result` restate what the
Java consumer does with targets and answers (LO-9).
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import target_magic
from .constants import (
    CONSUMER_REPLICA_ID,
    MAGIC_V1,
    NO_PARTITION_LEADER_EPOCH,
    NO_TIMESTAMP,
    NOT_SERVED,
    ErrorCode,
    IsolationLevel,
    SpecialTarget,
)
from .log import PartitionLog, Segment
from .profiles import MaxTimestampLookup, Profile, UnknownSpecialTarget, VisibilityCap

FIRST_VERSION_WITH_LEADER_EPOCH = 4  # KIP-320: v4 responses carry the leader epoch (TV-16)
FIRST_VERSION_WITH_OFFSET_NOT_AVAILABLE = 5  # KIP-207: older versions get LEADER_NOT_AVAILABLE (LO-3)


@dataclass(frozen=True)
class ListOffsetsAnswer:
    """One partition of a ListOffsets response. `leader_epoch` is -1 when absent (and always for
    versions < 4, which have no such field). For v0, `offset` is the first (largest) offset of the
    legacy list (LO-7), -1 when the list is empty."""

    error: ErrorCode
    offset: int
    timestamp: int
    leader_epoch: int


NOT_FOUND = ListOffsetsAnswer(ErrorCode.NONE, -1, NO_TIMESTAMP, NO_PARTITION_LEADER_EPOCH)


def _error(code: ErrorCode) -> ListOffsetsAnswer:
    return ListOffsetsAnswer(code, -1, NO_TIMESTAMP, NO_PARTITION_LEADER_EPOCH)


# ---------------------------------------------------------------------------------------------
# The log-level lookups (what `UnifiedLog.fetchOffsetByTimestamp` answers before any cap)


def search_by_timestamp(log: PartitionLog, target: int) -> tuple[int, int, int] | None:
    """LO-2: pick the first segment (offset order) whose largestTimestamp (IDX-6) is >= target and
    search only it (IDX-8) from the log start offset. Returns (timestamp, offset, epoch) or None.
    Edge [DERIVED]: a first such segment whose largestTimestamp is its mtime (no timestamps) yields
    None even if a later segment holds a match."""
    for segment in log.segments_searched_for(target):
        found = segment.find_offset_by_timestamp(target, log.timestamp_search_start())
        if found is not None:
            return found
    return None


def _segment_with_greatest_max(log: PartitionLog) -> Segment:
    # LO-6: the segment with the greatest max; the earliest one on ties.
    best = log.segments[0]
    for segment in log.segments[1:]:
        if segment.max_timestamp > best.max_timestamp:
            best = segment
    return best


def max_timestamp_lookup(log: PartitionLog, rule: MaxTimestampLookup) -> tuple[int, int, int] | None:
    """LO-6 MAX_TIMESTAMP (-3) before any cap. EXACT (3.8+): within the segment with the greatest max,
    the earliest batch whose MaxTimestamp equals it, and in that batch the first record with that
    timestamp (FMT-14; a LogAppendTime batch's first record), with the batch's epoch if >= 0; None if
    that batch has no such record (v0). CACHED (3.0-3.7, KAFKA-16310): the segment's cached
    (max, offset) with the log's latest epoch (DIS-7)."""
    segment = _segment_with_greatest_max(log)
    if rule is MaxTimestampLookup.CACHED:
        return segment.max_timestamp, segment.offset_of_max_timestamp, log.latest_epoch
    _, position = segment.offset_index.lookup(segment.offset_of_max_timestamp)
    for batch, batch_position in zip(segment.batches, segment.positions, strict=True):
        if batch_position < position or batch.max_timestamp != segment.max_timestamp:
            continue
        offset = batch.offset_of_max_timestamp()
        if offset < 0:
            return None
        epoch = batch.partition_leader_epoch
        return batch.max_timestamp, offset, epoch if epoch >= 0 else NO_PARTITION_LEADER_EPOCH
    return None


def earliest(log: PartitionLog) -> tuple[int, int, int]:
    """LO-5 EARLIEST (-2): the log start offset, with the earliest cached epoch if it starts at or
    before the log start offset."""
    entry = log.earliest_epoch_entry()
    epoch = entry[0] if entry is not None and entry[1] <= log.log_start_offset else NO_PARTITION_LEADER_EPOCH
    return NO_TIMESTAMP, log.log_start_offset, epoch


def earliest_local(log: PartitionLog) -> tuple[int, int, int]:
    """LO-5 EARLIEST_LOCAL (-4): without tiered storage the local log start is the log start offset;
    the epoch is the cached epoch of that offset."""
    return NO_TIMESTAMP, log.log_start_offset, log.epoch_for_offset(log.log_start_offset)


def legacy_offsets_before(
    log: PartitionLog, target: int, *, now: int, max_num_offsets: int = 1
) -> tuple[int, ...]:
    """LO-7 (v0): segment base offsets dated by their file mtime, plus the log end offset dated `now`
    when the active segment holds data; the newest at most `max_num_offsets` entries dated <= target
    (all of them for -2 counted from the oldest, from the newest for -1), in descending order."""
    dated: list[tuple[int, int]] = [
        (max(s.base_offset, log.log_start_offset), s.last_modified) for s in log.segments
    ]
    if not log.active_segment.is_empty():
        dated.append((log.log_end_offset, now))
    if target == SpecialTarget.LATEST:
        start = len(dated) - 1
    elif target == SpecialTarget.EARLIEST:
        start = 0
    else:
        start = len(dated) - 1
        while start >= 0 and dated[start][1] > target:
            start -= 1
    chosen = [dated[i][0] for i in range(start, max(start - max_num_offsets, -1), -1)]
    return tuple(sorted(chosen, reverse=True))


# ---------------------------------------------------------------------------------------------
# The broker's answer


def _last_fetchable_offset(
    log: PartitionLog, isolation: IsolationLevel, is_consumer: bool, last_stable_offset: int | None
) -> int:
    # LO-3 / LO-4: consumers read up to the high watermark (READ_UNCOMMITTED) or the last stable
    # offset (READ_COMMITTED); replica and debug requests up to the log end offset.
    if not is_consumer:
        return log.log_end_offset
    if isolation is IsolationLevel.READ_COMMITTED:
        return log.high_watermark if last_stable_offset is None else last_stable_offset
    return log.high_watermark


def _not_available(version: int) -> ErrorCode:
    if version >= FIRST_VERSION_WITH_OFFSET_NOT_AVAILABLE:
        return ErrorCode.OFFSET_NOT_AVAILABLE
    return ErrorCode.LEADER_NOT_AVAILABLE


def _is_special(target: int, version: int, profile: Profile) -> ErrorCode | bool:
    """LO-1: whether a negative target is special here, or UNSUPPORTED_VERSION (3.9+, KAFKA-17331).
    Before 3.9 the broker did not check versions: a target it knows is special at any version and
    an unknown one falls through to the timestamp search [DERIVED]."""
    if target >= 0:
        return False
    minimum = profile.min_version_for_target(target)
    if profile.unknown_special_target is UnknownSpecialTarget.UNSUPPORTED_VERSION:
        if minimum is None or version < minimum:
            return ErrorCode.UNSUPPORTED_VERSION
        return True
    if target == SpecialTarget.MAX_TIMESTAMP and profile.max_timestamp_lookup is MaxTimestampLookup.ABSENT:
        return False
    return minimum is not None


def list_offsets(
    log: PartitionLog,
    target: int,
    *,
    version: int,
    profile: Profile,
    isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    replica_id: int = CONSUMER_REPLICA_ID,
    last_stable_offset: int | None = None,
    current_leader_epoch: int | None = None,
    now: int | None = None,
) -> ListOffsetsAnswer:
    """The leader's answer for one partition (LO-1..8). `replica_id` -1 is a consumer (capped, LO-3);
    any other id (a follower, or -2 debug) reads up to the log end offset. `last_stable_offset`
    defaults to the high watermark (no open transactions). `now` is needed only by v0 (LO-7), which
    dates the log end offset with it. `current_leader_epoch` is accepted for the request's shape;
    epoch fencing (FENCED/UNKNOWN_LEADER_EPOCH) is not part of the timestamp contract and is not
    modelled."""
    del current_leader_epoch
    if not profile.supports_list_offsets_version(version):
        return _error(NOT_SERVED)  # no answer: the connection is closed (4.0 removed v0)
    special = _is_special(target, version, profile)
    if isinstance(special, ErrorCode):
        return _error(special)
    is_consumer = replica_id == CONSUMER_REPLICA_ID
    cap = _last_fetchable_offset(log, isolation, is_consumer, last_stable_offset)
    # LO-3: a fresh leader whose current epoch starts above the high watermark cannot answer
    # consumers' LATEST or capped lookups yet.
    epoch_start = log.latest_epoch_start_offset()
    fresh_leader = (
        profile.fresh_leader_check
        and is_consumer
        and epoch_start is not None
        and epoch_start > log.high_watermark
    )

    if version == 0:
        return _legacy_answer(log, target, now=now, is_consumer=is_consumer)

    if target_magic(log.config, profile) < MAGIC_V1 and target not in (
        SpecialTarget.LATEST,
        SpecialTarget.EARLIEST,
        SpecialTarget.EARLIEST_LOCAL,
    ):
        # LO-8: a topic stored in format v0 has no timestamps to search (pre-4.0 only).
        return _error(ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT)

    if special and target == SpecialTarget.LATEST and fresh_leader:
        return _error(_not_available(version))  # LO-3, LO-4
    found, capped = _find(log, target, special=special, cap=cap, profile=profile)

    if found is None:
        # LO-3: on a fresh leader an empty capped answer is refused as well (the broker raises the
        # pending OFFSET_NOT_AVAILABLE for "no offset" just as for "offset beyond the last fetchable
        # one": `...filter(offset < lastFetchable).orElse(maybeOffsetsError.map(throw))`, K40 "empty
        # offset response scenario"). Before this fix the model answered NONE -1/-1 here.
        if capped and fresh_leader:
            return _error(_not_available(version))
        return _with_version(NOT_FOUND, version)
    timestamp, offset, epoch = found
    if capped and not _visible(offset, cap, profile):
        if fresh_leader:
            return _error(_not_available(version))
        return _with_version(NOT_FOUND, version)
    return _with_version(ListOffsetsAnswer(ErrorCode.NONE, offset, timestamp, epoch), version)


def _find(
    log: PartitionLog, target: int, *, special: bool, cap: int, profile: Profile
) -> tuple[tuple[int, int, int] | None, bool]:
    """(timestamp, offset, epoch) of what `target` finds, or None, and whether the answer is capped at the last
    fetchable offset (LO-3: timestamp and MAX_TIMESTAMP lookups are; LATEST and EARLIEST are not)."""
    if special and target == SpecialTarget.LATEST:
        # LO-4: the last fetchable offset with the current leader epoch.
        return (NO_TIMESTAMP, cap, log.latest_epoch), False
    if special and target == SpecialTarget.EARLIEST:
        return earliest(log), False
    if special and target == SpecialTarget.EARLIEST_LOCAL:
        return earliest_local(log), False
    if special and target in (SpecialTarget.LATEST_TIERED, SpecialTarget.EARLIEST_PENDING_UPLOAD):
        # LO-5: no tiered storage in the model, so nothing tiered and nothing waiting to be uploaded (KIP-1005,
        # KIP-1023: 4.4.0 answers -6 at v11 with offset -1, epoch -1 on a log without remote storage).
        return (NO_TIMESTAMP, -1, NO_PARTITION_LEADER_EPOCH), False
    if special and target == SpecialTarget.MAX_TIMESTAMP:
        return max_timestamp_lookup(log, profile.max_timestamp_lookup), True
    return search_by_timestamp(log, target), True


def _visible(offset: int, cap: int, profile: Profile) -> bool:
    # LO-3 history: 0.10.1-0.11 allowed offset <= HW; 1.0+ requires offset < last fetchable offset.
    if profile.visibility_cap is VisibilityCap.LE_HIGH_WATERMARK:
        return offset <= cap
    return offset < cap


def _with_version(answer: ListOffsetsAnswer, version: int) -> ListOffsetsAnswer:
    # LO-9 / TV-16: v1-v3 responses have no leader epoch field; they read as -1.
    if version < FIRST_VERSION_WITH_LEADER_EPOCH and answer.leader_epoch != NO_PARTITION_LEADER_EPOCH:
        return ListOffsetsAnswer(answer.error, answer.offset, answer.timestamp, NO_PARTITION_LEADER_EPOCH)
    return answer


def _legacy_answer(
    log: PartitionLog, target: int, *, now: int | None, is_consumer: bool
) -> ListOffsetsAnswer:
    """LO-7, simplified to MaxNumOffsets = 1: the first offset of the legacy list. A consumer never sees
    an offset above the high watermark: the list is cut there and the high watermark put first
    (pre-4.0 v0 handler; not spelled out in docs/rules.md)."""
    if now is None and target >= 0 and not log.active_segment.is_empty():
        raise ValueError(
            "ListOffsets v0 with a timestamp target dates the log end offset with the broker clock: "
            "pass now=<broker clock in ms>"
        )
    offsets = list(legacy_offsets_before(log, target, now=now if now is not None else 0, max_num_offsets=1))
    if is_consumer and any(o > log.high_watermark for o in offsets):
        offsets = [log.high_watermark] + [o for o in offsets if o <= log.high_watermark]
    if not offsets:
        return ListOffsetsAnswer(ErrorCode.NONE, -1, NO_TIMESTAMP, NO_PARTITION_LEADER_EPOCH)
    return ListOffsetsAnswer(ErrorCode.NONE, offsets[0], NO_TIMESTAMP, NO_PARTITION_LEADER_EPOCH)


# ---------------------------------------------------------------------------------------------
# LO-9: the Java consumer's side of offsetsForTimes


def check_client_target(topic_partition: str, target: int) -> None:
    """LO-9: `offsetsForTimes` refuses negative targets before sending anything."""
    if target < 0:
        raise ValueError(
            f"The target time for partition {topic_partition} is {target}. "
            "The target time cannot be negative."
        )


def min_consumer_version(isolation: IsolationLevel) -> int:
    """LO-9: the lowest ListOffsets version the consumer's offsetsForTimes sends."""
    return 2 if isolation is IsolationLevel.READ_COMMITTED else 1


def client_result(answer: ListOffsetsAnswer) -> tuple[int, int, int] | None:
    """LO-9 / LO-8: what `offsetsForTimes` returns for one partition: None (Java null) when the
    offset is -1 or the error is UNSUPPORTED_FOR_MESSAGE_FORMAT, else (offset, timestamp, epoch).
    Other errors are the caller's to raise or retry."""
    if answer.error is ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT:
        return None
    if answer.error is not ErrorCode.NONE:
        raise ValueError(f"ListOffsets answered {answer.error.name}: the consumer retries or raises it")
    if answer.offset == -1:
        return None
    return answer.offset, answer.timestamp, answer.leader_epoch


__all__ = [
    "NOT_FOUND",
    "ListOffsetsAnswer",
    "check_client_target",
    "client_result",
    "earliest",
    "earliest_local",
    "legacy_offsets_before",
    "list_offsets",
    "max_timestamp_lookup",
    "min_consumer_version",
    "search_by_timestamp",
]
