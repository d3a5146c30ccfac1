"""Time-index, segment roll and retention faults (IDX-*)."""

from __future__ import annotations

from conformance.faults.mutant import MutantImplementation, _model_mutant
from models.config import TopicConfig
from models.constants import IsolationLevel
from models.list_offsets import ListOffsetsAnswer
from models.log import PartitionLog, Segment
from models.profiles import RollBase
from models.time_index import TimeIndex


class _NonStrictTimeIndex(TimeIndex):
    def _supersedes_last_entry(self, timestamp: int, offset: int) -> bool:
        # The fault: an equal timestamp at a later offset is appended too (>= instead of >, IDX-3).
        last_timestamp, last_offset = self.last_entry()
        tie = len(self) > 0 and timestamp == last_timestamp and offset > last_offset
        return tie or super()._supersedes_last_entry(timestamp, offset)


class _NonStrictSegment(Segment):
    def _raise_max(self, timestamp: int, offset: int) -> None:
        # The fault: ties move the segment max to the later batch (>= instead of >, IDX-5).
        if timestamp >= self.max_timestamp and timestamp >= 0:
            self.max_timestamp = timestamp
            self.offset_of_max_timestamp = offset


_model_mutant(
    "time-index-non-strict",
    "Time-index appends and the segment max use >= instead of >, so equal timestamps add entries "
    "pointing at later offsets and lookups skip the first record at that timestamp.",
    ("IDX.strictly-increasing", "IDX.segment-max-strictly-greater", "LO.first-ge-target"),
    segment=_NonStrictSegment,
    time_index=_NonStrictTimeIndex,
)


class _NextOffsetSegment(Segment):
    """KIP-33's wording (DIS-2): an entry points at "the next offset when the entry is inserted"."""

    def _time_index_entry_offset(self, next_offset: int) -> int:
        # The fault: the offset after what is stored (never below the last entry's) instead of the batch
        # holding the max (IDX-2).
        return max(next_offset, self.time_index.last_entry()[1])


_model_mutant(
    "time-index-entry-next-offset",
    "Time-index entries pair the segment max with the next offset (KIP-33's text, DIS-2) instead of the "
    "batch holding it, so a lookup for exactly that timestamp starts past its record.",
    ("IDX.entry-offset-batch-last", "LO.first-ge-target"),
    # Explicit: declared without kafka-4.1 since it was seeded (4.1 indexes each batch, KAFKA-806); the
    # reason was not re-examined when profiles became derived.
    ("kafka-0.10", "kafka-2.8", "kafka-3.9", "kafka-4.0"),
    segment=_NextOffsetSegment,
)


class _RetentionSmallestLog(PartitionLog):
    def _retention_reference(self, segment: Segment) -> int:
        # The fault: the segment's smallest record timestamp where IDX-10 takes its largest.
        stamps = [r.timestamp for r in segment.records() if r.timestamp >= 0]
        return min(stamps) if stamps else segment.largest_timestamp()


_model_mutant(
    "retention-by-smallest-timestamp",
    "Time retention measures a segment's age from its smallest record timestamp instead of its largest "
    "(IDX-10), deleting segments that still hold recent records.",
    ("IDX.retention-by-largest-timestamp",),
    log=_RetentionSmallestLog,
)


class _RetentionFirstBatchLog(PartitionLog):
    def _retention_reference(self, segment: Segment) -> int:
        # The fault: the first batch's timestamp (the roll base) where IDX-10 takes the largest.
        first = segment.batches[0].max_timestamp if segment.batches else -1
        return first if first >= 0 else segment.largest_timestamp()


_model_mutant(
    "retention-by-first-batch",
    "Time retention measures a segment's age from its first batch's timestamp (the roll base) instead "
    "of its largest timestamp.",
    ("IDX.retention-by-largest-timestamp",),
    log=_RetentionFirstBatchLog,
)


class _RetentionNoPrefixLog(PartitionLog):
    def _shields_later_segments(self, segment: Segment) -> bool:
        # The fault: the walk goes on past a segment retention keeps and deletes through the last breached
        # one (IDX-10 stops at the first).
        return False


_model_mutant(
    "retention-ignores-prefix",
    "Time retention does not stop at the first non-deletable segment: an old segment behind a "
    "future-stamped one is deleted along with everything before it (IDX-10 prefix rule).",
    ("IDX.retention-prefix-rule",),
    log=_RetentionNoPrefixLog,
)


class _DatedNowImpl(MutantImplementation):
    def lookup(
        self, topic: str, partition: int, target: int, version: int, isolation: IsolationLevel
    ) -> ListOffsetsAnswer:
        # The fault: a segment without timestamps is dated by the broker's clock at the lookup, not by its
        # file's mtime (IDX-6).
        log = self.cluster.leader_log(topic, partition)
        now = self.cluster.clock(self.cluster.partition(topic, partition).leader)
        untimed = [(s, s.last_modified) for s in log.segments if not s.is_empty() and s.max_timestamp < 0]
        for segment, _ in untimed:
            segment.last_modified = now
        try:
            return super().lookup(topic, partition, target, version, isolation)
        finally:
            for segment, mtime in untimed:
                segment.last_modified = mtime


_model_mutant(
    "untimed-segment-dated-now",
    "A segment holding only records without timestamps is dated by the broker's current clock instead of its "
    "file's mtime (IDX-6), so a lookup for a target between the two stops there and finds nothing.",
    ("IDX.largest-timestamp-mtime",),
    answers=_DatedNowImpl,
)


class _RoundsUpTimeIndex(TimeIndex):
    def lookup(self, target: int) -> tuple[int, int]:
        # The fault: the first entry at or above the target (a lower-bound search) where IDX-7 takes the
        # largest entry at or below it.
        at_or_above = [(t, o) for t, o in self.entries if t >= target]
        return at_or_above[0] if at_or_above else super().lookup(target)


_model_mutant(
    "time-index-lookup-rounds-up",
    "A time-index lookup returns the first entry at or above the target instead of the last at or below it, "
    "so the scan can start past the batch holding the answer (IDX-7).",
    ("IDX.lookup-largest-le-target",),
    time_index=_RoundsUpTimeIndex,
)


_model_mutant(
    "roll-by-wall-clock",
    "Segments roll when the broker clock says they are older than segment.ms (the 0.10.0 rule) instead of "
    "when the incoming max timestamp is that far past the first batch's (IDX-9, KIP-33).",
    ("IDX.roll-by-first-batch",),
    profile_changes={"roll_base": RollBase.WALL_CLOCK},
)


class _AbsoluteAgeSegment(Segment):
    def time_waited_for_roll(
        self, now: int, incoming_max_timestamp: int, roll_rule: RollBase = RollBase.FIRST_APPEND
    ) -> int:
        # The fault: the age is the distance |incoming max - roll base|, so an incoming max of -1, or one below
        # a far-future first timestamp, rolls the segment (IDX-9: the negative age blocks the roll).
        return abs(super().time_waited_for_roll(now, incoming_max_timestamp, roll_rule))


_model_mutant(
    "roll-age-absolute",
    "A segment's age for a time roll is |incoming max - roll base|, so records without timestamps (incoming "
    "max -1) roll a timestamped segment, as do records older than a far-future first timestamp; a negative "
    "age never rolls (IDX-9).",
    ("IDX.future-first-timestamp-blocks-roll",),
    segment=_AbsoluteAgeSegment,
)


class _NoAgeRollSegment(Segment):
    def _age_without_roll_base(self, now: int) -> int:
        # The fault: without a roll base the segment never ages (IDX-9: now - creation time).
        return 0


_model_mutant(
    "untimed-segment-never-ages",
    "A segment without a roll base (records without timestamps; always in 0.10.0) never rolls on time, "
    "instead of once the broker clock says it is older than segment.ms (IDX-9).",
    ("IDX.roll-by-age-without-timestamps",),
    segment=_NoAgeRollSegment,
)


class _LateFullTimeIndex(TimeIndex):
    def is_full(self) -> bool:
        # The fault: full at capacity, not capacity - 1 (IDX-1 keeps the last slot for the roll entry).
        return len(self) >= self.max_entries


_model_mutant(
    "time-index-full-one-late",
    "A time index counts as full only at capacity (segment.index.bytes / 12 entries) instead of capacity - 1, "
    "so a segment rolls one indexed append later (IDX-1).",
    ("IDX.full-index-forces-roll",),
    time_index=_LateFullTimeIndex,
)


class _LagIgnoredSegment(Segment):
    def _roll_ms(self, config: TopicConfig) -> int:
        # The fault: the roll threshold is segment.ms on compacted topics too (IDX-9: min with
        # max.compaction.lag.ms).
        return config.segment_ms


_model_mutant(
    "compaction-lag-ignored-for-roll",
    "On a compacted topic the time-roll threshold is segment.ms, ignoring a smaller max.compaction.lag.ms "
    "(IDX-9, KIP-354).",
    ("IDX.compacted-roll-max-lag",),
    segment=_LagIgnoredSegment,
)
