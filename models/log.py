"""The partition log: segments, segment max, time-based roll and retention, truncation, recovery
and the leader-epoch cache (docs/rules.md: IDX-1..14, REP-1).

This module is the one place of mutable state in `models`. Every time-related state transition
(roll base, segment max, index entries, roll, retention, truncation) lives here and cites its rule.
Time is always a parameter (`now`); nothing reads a clock.

Batches arrive with their final absolute offsets (the validator assigned them, or the leader did for
a follower). Byte sizes, which drive `segment.bytes` and `index.interval.bytes`, come from the codec.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import islice

from .codec import encoded_size
from .config import TopicConfig, target_magic
from .constants import INT_MAX, LONG_MAX, MAGIC_V2, NO_PARTITION_LEADER_EPOCH, NO_TIMESTAMP
from .profiles import IndexGranularity, Profile, RetentionBasis, RollBase
from .records import AnyBatch, ConsumerRecord, all_records
from .time_index import OFFSET_INDEX_ENTRY_BYTES, TIME_INDEX_ENTRY_BYTES, OffsetIndex, TimeIndex

APPEND_ORIGINS = ("leader", "coordinator", "raft_leader", "replication")


def _wrap64(value: int) -> int:
    """Java `long` arithmetic: the roll and retention differences wrap around at 64 bits (like the
    VAL-4 overflow note), e.g. a far-negative incoming timestamp minus a roll base."""
    return ((value + (1 << 63)) % (1 << 64)) - (1 << 63)


def max_segment_ms(config: TopicConfig) -> int:
    """IDX-9: segment.ms, or min(max.compaction.lag.ms, segment.ms) on compacted topics with a
    positive max lag."""
    if config.compacted and config.max_compaction_lag_ms > 0:
        return min(config.max_compaction_lag_ms, config.segment_ms)
    return config.segment_ms


def jitter_bound(config: TopicConfig) -> int:
    """IDX-9: a segment's jitter is drawn from [0, min(segment.jitter.ms, segment.ms))."""
    return max(0, min(config.segment_jitter_ms, max_segment_ms(config)))


@dataclass(eq=False)
class Segment:
    """One log segment. `batches[i]` starts at byte `positions[i]` and is `sizes[i]` bytes long.

    `last_modified` is the segment file's mtime: the `now` of the last append or truncation.
    `roll_base` is the IDX-9 roll base held in memory (None = unknown: after a restart, an empty
    segment, or under the 0.10.0 wall-clock rule). `max_timestamp`/`offset_of_max_timestamp` are the
    IDX-5 segment max; before any batch raises it the pair reads as the empty time index's last entry
    (-1, base_offset)."""

    base_offset: int
    created: int
    last_modified: int
    time_index: TimeIndex
    offset_index: OffsetIndex
    jitter: int = 0
    roll_base: int | None = None
    max_timestamp: int = NO_TIMESTAMP
    offset_of_max_timestamp: int = -1
    bytes_since_last_index_entry: int = 0
    size: int = 0
    time_indexed: bool = True  # False for the 0.10.0 profile: no .timeindex (IndexGranularity.NONE)
    batches: list[AnyBatch] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)

    @classmethod
    def create(
        cls, base_offset: int, *, now: int, config: TopicConfig, profile: Profile, jitter: int = 0
    ) -> Segment:
        # IDX-1: capacities from segment.index.bytes (12-byte time entries, 8-byte offset entries).
        return cls(
            base_offset=base_offset,
            created=now,
            last_modified=now,
            time_index=TimeIndex(base_offset, max(1, config.segment_index_bytes // TIME_INDEX_ENTRY_BYTES)),
            offset_index=OffsetIndex(
                base_offset, max(1, config.segment_index_bytes // OFFSET_INDEX_ENTRY_BYTES)
            ),
            jitter=jitter,
            offset_of_max_timestamp=base_offset,
            time_indexed=profile.index_granularity is not IndexGranularity.NONE,
        )

    # ------------------------------------------------------------------ reading

    def __repr__(self) -> str:
        return (
            f"Segment(base_offset={self.base_offset}, batches={len(self.batches)}, size={self.size}, "
            f"max_timestamp={self.max_timestamp}@{self.offset_of_max_timestamp}, created={self.created}, "
            f"last_modified={self.last_modified}, roll_base={self.roll_base}, "
            f"time_index={list(self.time_index.entries)})"
        )

    def is_empty(self) -> bool:
        return self.size == 0

    def next_offset(self) -> int:
        return self.batches[-1].last_offset + 1 if self.batches else self.base_offset

    def records(self) -> tuple[ConsumerRecord, ...]:
        return all_records(self.batches)

    def largest_timestamp(self) -> int:
        """IDX-6: the segment max if >= 0, else the file mtime (DIS-3: no index entry is written for
        timestamp-less segments; the mtime is substituted at read time)."""
        if self.max_timestamp >= 0:
            return self.max_timestamp
        return self.last_modified

    def _loaded_roll_base(self) -> int | None:
        # IDX-9: the roll base held in memory, else (after a restart) the first stored batch's
        # MaxTimestamp; None for an empty segment.
        if self.roll_base is not None:
            return self.roll_base
        if self.batches:
            return self.batches[0].max_timestamp
        return None

    def first_batch_timestamp(self) -> int:
        """IDX-9 / IDX-11 / TV-07: the roll base when it is a timestamp (>= 0), else Long.MAX_VALUE
        (an empty segment, or one whose first append/batch had no timestamp) [DERIVED for the latter]."""
        base = self._loaded_roll_base()
        return base if base is not None and base >= 0 else LONG_MAX

    def can_convert_to_relative_offset(self, offset: int) -> bool:
        # IDX-1/IDX-9: index entries store offsets as int32 relative to the base offset.
        return 0 <= offset - self.base_offset <= INT_MAX

    def time_waited_for_roll(
        self, now: int, incoming_max_timestamp: int, roll_rule: RollBase = RollBase.FIRST_APPEND
    ) -> int:
        """IDX-9: incoming max - roll base when the roll base is >= 0, else now - created.
        0.10.0 (RollBase.WALL_CLOCK) always measures now - created (pre-KIP-33)."""
        if roll_rule is not RollBase.WALL_CLOCK:
            base = self._loaded_roll_base()
            if base is not None and base >= 0:
                return _wrap64(incoming_max_timestamp - base)
        return self._age_without_roll_base(now)

    def _age_without_roll_base(self, now: int) -> int:
        """IDX-9: a segment without a timestamp roll base (records without timestamps, or 0.10.0's
        wall-clock rule) ages by the broker clock since its creation."""
        return _wrap64(now - self.created)

    def _roll_ms(self, config: TopicConfig) -> int:
        """IDX-9: how long a segment may wait before a time roll: segment.ms, or on a compacted topic
        min(max.compaction.lag.ms, segment.ms) (KIP-354)."""
        return max_segment_ms(config)

    def should_roll(
        self,
        incoming_max_timestamp: int,
        incoming_size: int,
        incoming_last_offset: int,
        now: int,
        config: TopicConfig,
        profile: Profile,
    ) -> bool:
        """IDX-9: roll before appending when the bytes would not fit, when the segment is non-empty and
        has waited longer than max segment ms - jitter (DIS-1: measured from the roll base with the
        *incoming* max, not from the largest timestamp or the wall clock), when an index is full
        (IDX-1), or when the incoming last offset does not fit the int32 relative range."""
        reached_roll_ms = (
            self.time_waited_for_roll(now, incoming_max_timestamp, profile.roll_base)
            > self._roll_ms(config) - self.jitter
        )
        return (
            self.size > config.segment_bytes - incoming_size
            or (self.size > 0 and reached_roll_ms)
            or self.offset_index.is_full()
            or (self.time_indexed and self.time_index.is_full())
            or not self.can_convert_to_relative_offset(incoming_last_offset)
        )

    def _first_batch_at_or_after_position(self, position: int) -> int:
        return bisect_right(self.positions, position - 1)

    def _translate_offset(self, offset: int, position: int = 0) -> int:
        """Index of the first batch at or after byte `position` whose last offset is >= `offset`
        (len(batches) if none)."""
        i = self._first_batch_at_or_after_position(position)
        while i < len(self.batches) and self.batches[i].last_offset < offset:
            i += 1
        return i

    def find_offset_by_timestamp(self, target: int, starting_offset: int) -> tuple[int, int, int] | None:
        """IDX-8: (timestamp, offset, leader epoch or -1) of the first record with ts >= target and
        offset >= starting_offset, searching from the time-index entry for `target` (IDX-7) raised to
        `starting_offset`. Batches whose MaxTimestamp < target are skipped. The answer is the record
        itself, not "base offset with NoTimestamp" as the stale javadoc says (DIS-9)."""
        _, indexed_offset = self.time_index.lookup(target)
        start_offset = max(indexed_offset, starting_offset)
        _, position = self.offset_index.lookup(start_offset)
        i = self._translate_offset(start_offset, position)
        for batch in islice(self.batches, i, None):
            if batch.max_timestamp < target:
                continue
            for record in batch.records():
                if record.timestamp >= target and record.offset >= starting_offset:
                    epoch = batch.partition_leader_epoch
                    return record.timestamp, record.offset, epoch if epoch >= 0 else NO_PARTITION_LEADER_EPOCH
        return None

    # ------------------------------------------------------------------ state transitions

    def _store(self, batch: AnyBatch, size: int) -> None:
        self.positions.append(self.size)
        self.batches.append(batch)
        self.sizes.append(size)
        self.size += size

    def _maybe_index(self, last_offset: int, position: int, index_interval_bytes: int) -> None:
        # IDX-4: strictly more than index.interval.bytes since the last entry -> one offset entry
        # (last offset -> start position) and one time-index attempt with the segment max (IDX-2/3).
        if self.bytes_since_last_index_entry > index_interval_bytes:
            self.offset_index.append(last_offset, position)
            if self.time_indexed:
                self.time_index.maybe_append(self.max_timestamp, self._time_index_entry_offset(last_offset + 1))
            self.bytes_since_last_index_entry = 0

    def _time_index_entry_offset(self, next_offset: int) -> int:
        """IDX-2: a time-index entry written on append (IDX-4) or roll pairs the segment max with the offset
        of the batch holding it (`offset_of_max_timestamp`), not with `next_offset`, the offset after
        what is stored (KIP-33's wording, DIS-2)."""
        return self.offset_of_max_timestamp

    def _raise_max(self, timestamp: int, offset: int) -> None:
        # IDX-5: strictly greater only, so ties keep the earliest batch (IDX-2).
        if timestamp > self.max_timestamp:
            self.max_timestamp = timestamp
            self.offset_of_max_timestamp = offset

    def append(
        self,
        batches: Sequence[AnyBatch],
        *,
        max_timestamp: int,
        offset_of_max_timestamp: int,
        now: int,
        config: TopicConfig,
        profile: Profile,
        sizes: Sequence[int] | None = None,
    ) -> None:
        """§12 step 5: store one append's batches, set the roll base if the segment was empty (IDX-9),
        raise the segment max (IDX-5) and run the index-interval test (IDX-4) at the profile's
        granularity. `max_timestamp`/`offset_of_max_timestamp` are the append's values (validator or
        follower headers); under PER_BATCH (4.1+, KAFKA-806) each batch header is used instead."""
        if not batches:
            return
        if sizes is None:
            sizes = [encoded_size(b) for b in batches]
        last_offset = batches[-1].last_offset
        if not self.can_convert_to_relative_offset(last_offset):
            raise ValueError(
                f"offset {last_offset} cannot be stored in the segment at base offset {self.base_offset}: "
                "the relative offset must fit an int32 (IDX-9 should have rolled)"
            )
        if self.size == 0:
            # IDX-9 roll base: <=4.0 the max of the first append into the segment; 4.1+ the first batch's
            # MaxTimestamp ("consistent between the leader and the follower", KAFKA-806).
            if profile.roll_base is RollBase.FIRST_APPEND:
                self.roll_base = max_timestamp
            elif profile.roll_base is RollBase.FIRST_BATCH:
                self.roll_base = batches[0].max_timestamp
        if profile.index_granularity is IndexGranularity.PER_BATCH:
            for batch, size in zip(batches, sizes, strict=True):
                self._raise_max(batch.max_timestamp, batch.last_offset)
                self._maybe_index(batch.last_offset, self.size, config.index_interval_bytes)
                self.bytes_since_last_index_entry += size
                self._store(batch, size)
        else:
            # <=4.0: one index attempt per append call, so the first append into a segment never
            # indexes and an append never creates more than one entry (IDX-4).
            self._raise_max(max_timestamp, offset_of_max_timestamp)
            self._maybe_index(last_offset, self.size, config.index_interval_bytes)
            for batch, size in zip(batches, sizes, strict=True):
                self.bytes_since_last_index_entry += size
                self._store(batch, size)
        self.last_modified = now

    def on_become_inactive(self) -> None:
        """IDX-4: on roll (and close) one last time-index attempt with the segment max, skipping the
        full check: this is what the reserved slot of IDX-1 is for."""
        if self.time_indexed:
            self.time_index.maybe_append(
                self.max_timestamp, self._time_index_entry_offset(self.next_offset()), skip_full_check=True
            )

    def truncate_to(self, offset: int, now: int) -> int:
        """IDX-14: drop batches from the one holding `offset` on and index entries with offset >= it.
        An emptied segment resets its creation time to `now` and forgets its roll base. IDX-5: the
        max is then re-read from the last remaining time-index entry plus the batch headers after
        it. Returns the number of bytes removed."""
        i = self._translate_offset(offset)
        self.time_index.truncate_to(offset)
        self.offset_index.truncate_to(offset)
        removed = 0
        if i < len(self.batches):
            removed = self.size - self.positions[i]
            self.size = self.positions[i]
            del self.batches[i:]
            del self.positions[i:]
            del self.sizes[i:]
            self.last_modified = now  # the file changed
        if self.size == 0:
            self.created = now
            self.roll_base = None
        self.bytes_since_last_index_entry = 0
        if self.max_timestamp >= 0:
            self._reload_max_from_index()
        return removed

    def _reload_max_from_index(self) -> None:
        # IDX-5: start from the last time-index entry ((-1, base) if empty) and scan the batch headers
        # from the offset-index position of that entry's offset.
        self.max_timestamp, self.offset_of_max_timestamp = self.time_index.last_entry()
        _, position = self.offset_index.lookup(self.offset_of_max_timestamp)
        for batch in islice(self.batches, self._first_batch_at_or_after_position(position), None):
            self._raise_max(batch.max_timestamp, batch.last_offset)

    def recover(self, now: int, config: TopicConfig) -> None:
        """IDX-13 / IDX-4: rebuild both indexes and the max from batch headers alone (MaxTimestamp,
        LastOffset), with the interval test per batch, then a final attempt skipping the full check.
        In-memory state is lost: the roll base is re-read from the first batch (IDX-9) and the
        creation time is the load time `now`. The byte counter restarts at 0 (model choice)."""
        self.time_index.clear()
        self.offset_index.clear()
        self.max_timestamp, self.offset_of_max_timestamp = NO_TIMESTAMP, self.base_offset
        last_index_position = 0
        for batch, position in zip(self.batches, self.positions, strict=True):
            self._raise_max(batch.max_timestamp, batch.last_offset)
            if position - last_index_position > config.index_interval_bytes:
                self.offset_index.append(batch.last_offset, position)
                if self.time_indexed:
                    self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
                last_index_position = position
        if self.time_indexed:
            self.time_index.maybe_append(
                self.max_timestamp, self.offset_of_max_timestamp, skip_full_check=True
            )
        self.roll_base = None
        self.created = now
        self.bytes_since_last_index_entry = 0


class PartitionLog:
    """One replica's log of one partition: the one place of mutable state in `models`.

    `high_watermark` is set by the caller (the cluster advances it from follower progress); with
    `hw_follows_leo=True` every append moves it to the log end offset, as for a single-replica leader.
    `jitter` is the IDX-9 roll jitter of every segment unless `jitter_for_segment(base_offset)` is given
    (a caller that wants Kafka's random draw passes one; the model itself has no randomness)."""

    def __init__(
        self,
        config: TopicConfig,
        profile: Profile,
        *,
        now: int,
        jitter: int = 0,
        jitter_for_segment: Callable[[int], int] | None = None,
        log_start_offset: int = 0,
        hw_follows_leo: bool = False,
    ) -> None:
        self.profile = profile
        self._epochs: list[tuple[int, int]] = []  # leader-epoch cache: (epoch, start offset), ascending
        self._led: list[tuple[int, int]] = []  # the epochs the partition knows (see "leader epochs" below)
        self.config = config
        self._jitter = jitter
        self._jitter_for_segment = jitter_for_segment
        self.hw_follows_leo = hw_follows_leo
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_start_offset
        self.high_watermark = log_start_offset
        self.segments: list[Segment] = [self._new_segment(log_start_offset, now)]

    def __repr__(self) -> str:
        return (
            f"PartitionLog(profile={self.profile.name}, log_start_offset={self.log_start_offset}, "
            f"log_end_offset={self.log_end_offset}, high_watermark={self.high_watermark}, "
            f"epochs={self._epochs}, segments={self.segments})"
        )

    def _new_segment(self, base_offset: int, now: int) -> Segment:
        jitter = self._jitter_for_segment(base_offset) if self._jitter_for_segment else self._jitter
        bound = jitter_bound(self.config)
        if jitter != 0 and not 0 <= jitter < bound:
            raise ValueError(
                f"segment jitter {jitter} is outside [0, {bound}) = [0, min(segment.jitter.ms, segment.ms)) "
                "(IDX-9)"
            )
        return Segment.create(base_offset, now=now, config=self.config, profile=self.profile, jitter=jitter)

    # ------------------------------------------------------------------ reading

    @property
    def active_segment(self) -> Segment:
        return self.segments[-1]

    @property
    def next_offset(self) -> int:
        return self.log_end_offset

    def batches(self) -> tuple[AnyBatch, ...]:
        return tuple(b for s in self.segments for b in s.batches)

    def records(self) -> tuple[ConsumerRecord, ...]:
        """CON-1: the consumer's view of every stored record."""
        return all_records(self.batches())

    def fetch(self, offset: int) -> tuple[AnyBatch, ...]:
        """The stored batches holding an offset >= `offset` (the first may start below it)."""
        found: list[AnyBatch] = []
        for segment in self.segments:
            if segment.next_offset() <= offset:
                continue
            # Batches are in offset order: skip the ones ending below `offset` by bisection, not a scan (a
            # follower fetches after every append, so a scan made long logs quadratic).
            start = bisect_left(segment.batches, offset, key=lambda b: b.last_offset)
            found.extend(segment.batches[start:])
        return tuple(found)

    # ------------------------------------------------------------------ configuration

    @property
    def config(self) -> TopicConfig:
        return self._config

    @config.setter
    def config(self, config: TopicConfig) -> None:
        """A topic's configuration, at creation or altered. LO-5: a log whose record format precedes v2 keeps no
        leader-epoch cache (Kafka 2.8 Log.initializeLeaderEpochCache: `if (recordVersion.precedes(RecordVersion.V2))
        ... leaderEpochCache = None`), and a change of format across v2 starts it afresh (Log.updateConfig re-runs
        that initialisation): dropped going to v0/v1, empty coming back to v2."""
        before = self.keeps_epoch_cache if hasattr(self, "_config") else None
        self._config = config
        if before is not None and before != self.keeps_epoch_cache:
            self._epochs = []

    @property
    def keeps_epoch_cache(self) -> bool:
        """Whether this log keeps a leader-epoch cache: only where it stores format v2 (CNV-3, LO-5)."""
        return target_magic(self._config, self.profile) >= MAGIC_V2

    # ------------------------------------------------------------------ leader epochs
    #
    # Two records of (epoch, start offset), ascending in both: the log's leader-epoch cache (`_epochs`, KIP-101),
    # which a v0/v1 log does not keep, and the epochs this replica has led or been told of (`_led`), which the
    # partition knows whatever the format (Kafka's Partition.leaderEpoch and leaderEpochStartOffsetOpt). Both take
    # the same changes, so on a v2 log they are equal; LATEST and the fresh-leader check read the second (LO-3,
    # LO-4: Partition.fetchOffsetForTimestamp answers LATEST with `Optional.of(leaderEpoch)`, Kafka 2.8 on a v0
    # topic too), EARLIEST and OffsetsForLeaderEpoch the cache (LO-5).

    @property
    def leader_epochs(self) -> tuple[tuple[int, int], ...]:
        """The leader-epoch cache (empty on a v0/v1 log)."""
        return tuple(self._epochs)

    @property
    def latest_epoch(self) -> int:
        """The current leader epoch as this replica knows it (LO-4), -1 if none."""
        return self._led[-1][0] if self._led else NO_PARTITION_LEADER_EPOCH

    def earliest_epoch_entry(self) -> tuple[int, int] | None:
        return self._epochs[0] if self._epochs else None

    def latest_epoch_start_offset(self) -> int | None:
        """Where the current leader epoch starts (LO-3's fresh-leader check), None if no epoch is known."""
        return self._led[-1][1] if self._led else None

    def epoch_for_offset(self, offset: int) -> int:
        """The epoch of the last cache entry starting at or before `offset`, -1 if none."""
        epoch = NO_PARTITION_LEADER_EPOCH
        for e, start in self._epochs:
            if start > offset:
                break
            epoch = e
        return epoch

    def assign_epoch(self, epoch: int, start_offset: int) -> None:
        """Record that `epoch` starts at `start_offset` (on becoming leader, or from an appended batch's
        PartitionLeaderEpoch), in the cache where the log keeps one. Entries that the new one contradicts (epoch
        >= it or start >= its start) are dropped, so the records stay increasing in both (KIP-101 cache; not a
        rule of docs/rules.md)."""
        if epoch < 0 or start_offset < 0:
            raise ValueError(f"leader epoch {epoch} / start offset {start_offset} must be >= 0")
        self._led = _assigned(self._led, epoch, start_offset)
        if self.keeps_epoch_cache:  # LO-5: a v0/v1 log has no cache to record it in (Kafka: cache.foreach)
            self._epochs = _assigned(self._epochs, epoch, start_offset)

    def _truncate_epochs_from_end(self, offset: int) -> None:
        self._epochs = [(e, s) for e, s in self._epochs if s < offset]
        self._led = [(e, s) for e, s in self._led if s < offset]

    def _truncate_epochs_from_start(self, offset: int) -> None:
        self._epochs = _from_start(self._epochs, offset)
        self._led = _from_start(self._led, offset)

    # ------------------------------------------------------------------ appends (§12 steps 4-5)

    def append(
        self,
        batches: Sequence[AnyBatch],
        *,
        now: int,
        max_timestamp: int,
        offset_of_max_timestamp: int,
        origin: str = "leader",
    ) -> None:
        """Append batches that already carry their final offsets. §12 step 4: IDX-9 roll check with
        this append's max and `now` (a roll closes the old segment with a final index attempt, IDX-4);
        step 5: store, roll base, segment max, index interval (`Segment.append`). An empty append
        never rolls (TV-10). The epoch cache learns every batch's PartitionLeaderEpoch >= 0.
        `origin` names who appends (VAL-1); the log behaves the same for all origins (validation
        happens before, REP-1)."""
        if origin not in APPEND_ORIGINS:
            raise ValueError(f"unknown append origin {origin!r}: expected one of {', '.join(APPEND_ORIGINS)}")
        if not batches:
            return
        self._check_offsets(batches)
        sizes = [encoded_size(b) for b in batches]
        incoming_size = sum(sizes)
        first_offset = batches[0].base_offset
        last_offset = batches[-1].last_offset
        segment = self.active_segment
        if segment.should_roll(max_timestamp, incoming_size, last_offset, now, self.config, self.profile):
            segment = self.roll(now, expected_next_offset=first_offset)
        segment.append(
            batches,
            max_timestamp=max_timestamp,
            offset_of_max_timestamp=offset_of_max_timestamp,
            now=now,
            config=self.config,
            profile=self.profile,
            sizes=sizes,
        )
        self.log_end_offset = last_offset + 1
        for batch in batches:
            if batch.partition_leader_epoch >= 0:
                self.assign_epoch(batch.partition_leader_epoch, batch.base_offset)
        if self.hw_follows_leo:
            self.high_watermark = self.log_end_offset

    def append_as_follower(self, batches: Sequence[AnyBatch], *, now: int) -> None:
        """REP-1 / IDX-13: store the leader's batches verbatim (no validation, no re-stamping). The
        append's max and its offset come from the batch headers: the greatest MaxTimestamp (strictly
        greater wins, from -1) and the last offset of the earliest batch holding it. `now` is only
        this replica's clock (segment creation, mtime, wall-clock roll)."""
        max_timestamp, offset_of_max = NO_TIMESTAMP, -1
        for batch in batches:
            if batch.max_timestamp > max_timestamp:
                max_timestamp, offset_of_max = batch.max_timestamp, batch.last_offset
        self.append(
            batches,
            now=now,
            max_timestamp=max_timestamp,
            offset_of_max_timestamp=offset_of_max,
            origin="replication",
        )

    def _check_offsets(self, batches: Sequence[AnyBatch]) -> None:
        expected = self.log_end_offset
        for batch in batches:
            if batch.base_offset < expected or batch.last_offset < batch.base_offset:
                raise ValueError(
                    f"batch at offsets {batch.base_offset}..{batch.last_offset} cannot follow offset "
                    f"{expected - 1}: appended batches must carry increasing offsets >= the log end offset"
                )
            expected = batch.last_offset + 1

    def roll(self, now: int, expected_next_offset: int | None = None) -> Segment:
        """IDX-9/IDX-4: start a new active segment at max(expected next offset, log end offset), created
        at `now`. The old segment gets its final time-index attempt. An empty active segment at the
        same base offset is replaced rather than kept."""
        base = max(expected_next_offset if expected_next_offset is not None else 0, self.log_end_offset)
        active = self.active_segment
        new = self._new_segment(base, now)
        if active.is_empty() and active.base_offset == base:
            self.segments[-1] = new
            return new
        active.on_become_inactive()
        self.segments.append(new)
        return new

    # ------------------------------------------------------------------ timestamp search (LO-2)

    def segments_searched_for(self, target: int) -> tuple[Segment, ...]:
        """LO-2: the segments a timestamp lookup for `target` searches: only the first (offset order) whose
        largestTimestamp (IDX-6) is >= target, or none. A later segment is not searched even when that one
        holds no match (a segment without timestamps, dated by its mtime)."""
        for segment in self.segments:
            if segment.largest_timestamp() >= target:
                return (segment,)
        return ()

    def timestamp_search_start(self) -> int:
        """LO-2: a timestamp lookup searches from the log start offset (IDX-8's starting offset)."""
        return self.log_start_offset

    # ------------------------------------------------------------------ retention (IDX-10)

    def _retention_reference(self, segment: Segment) -> int:
        """IDX-10: the time a segment's age is measured from: its largest timestamp (0.10.1+, IDX-6),
        or its file's mtime (0.10.0)."""
        if self.profile.retention_basis is RetentionBasis.MTIME:
            return segment.last_modified
        return segment.largest_timestamp()

    def _retention_breached(self, segment: Segment, now: int) -> bool:
        # IDX-10: strict `now - reference > retention.ms`.
        return _wrap64(now - self._retention_reference(segment)) > self.config.retention_ms

    def _shields_later_segments(self, segment: Segment) -> bool:
        """IDX-10 prefix rule: a segment retention keeps (not breached) ends the walk, so it shields every
        later segment, breached or not."""
        return True

    def deletable_segments(self, now: int) -> int:
        """IDX-10: how many of the oldest segments time-based retention would delete: the prefix of
        breached segments whose upper offset (next base offset, or LEO for the last) is <= the high
        watermark. The walk stops at the first segment failing a condition, so one segment with a
        future timestamp shields every later one; an empty last segment is never deleted."""
        if self.config.retention_ms < 0 or not self.config.deletes_by_retention:
            # retention.ms = -1 disables; a compact-only cleanup.policy never deletes by time.
            return 0
        count = 0
        for i, segment in enumerate(self.segments):
            is_last = i == len(self.segments) - 1
            if is_last and segment.is_empty():
                break
            upper = self.log_end_offset if is_last else self.segments[i + 1].base_offset
            if self.high_watermark < upper:
                break
            if self._retention_breached(segment, now):
                count = i + 1
            elif self._shields_later_segments(segment):
                break
        return count

    def delete_retention_breached_segments(self, now: int) -> int:
        """IDX-10: delete the breached prefix; returns how many segments were deleted. A log always keeps
        one segment: deleting all of them first rolls an empty one at the log end offset (TV-12). The
        log start offset moves to the first remaining base offset."""
        count = self.deletable_segments(now)
        if count == 0:
            return 0
        if count == len(self.segments):
            self.roll(now)
        del self.segments[:count]
        self.log_start_offset = max(self.log_start_offset, self.segments[0].base_offset)
        self._truncate_epochs_from_start(self.log_start_offset)
        return count

    # ------------------------------------------------------------------ truncation and recovery

    def truncate_to(self, offset: int, now: int) -> None:
        """IDX-14: remove every offset >= `offset` (segments based above it go entirely; the segment
        holding it is truncated, re-reading its max, IDX-5). The high watermark and the epoch cache
        follow. A target at or beyond the log end is a no-op; one below the log start empties the log
        and restarts it there."""
        if offset >= self.log_end_offset:
            return
        if offset < self.log_start_offset:
            self.truncate_fully_and_start_at(offset, now)
            return
        self.segments = [s for s in self.segments if s.base_offset <= offset]
        self.active_segment.truncate_to(offset, now)
        self.log_end_offset = offset
        self.high_watermark = min(self.high_watermark, offset)
        self._truncate_epochs_from_end(offset)

    def truncate_fully_and_start_at(self, offset: int, now: int) -> None:
        self.segments = [self._new_segment(offset, now)]
        self.log_start_offset = self.log_end_offset = self.high_watermark = offset
        self._epochs = []
        self._led = []

    def recover(self, now: int) -> None:
        """IDX-13: a restart after the index files were lost: every segment rebuilds its indexes and
        max from batch headers (`Segment.recover`); roll bases are re-read from disk (IDX-9)."""
        for segment in self.segments:
            segment.recover(now, self.config)


__all__ = ["APPEND_ORIGINS", "PartitionLog", "Segment", "jitter_bound", "max_segment_ms"]


def _assigned(epochs: list[tuple[int, int]], epoch: int, start_offset: int) -> list[tuple[int, int]]:
    """`epochs` after `epoch` starting at `start_offset` is assigned (PartitionLog.assign_epoch)."""
    if epochs:
        last_epoch, last_start = epochs[-1]
        if last_epoch == epoch and last_start <= start_offset:
            return epochs
    return [(e, s) for e, s in epochs if e < epoch and s < start_offset] + [(epoch, start_offset)]


def _from_start(epochs: list[tuple[int, int]], offset: int) -> list[tuple[int, int]]:
    """`epochs` after the log start moved to `offset`: the entry covering it starts there, earlier ones go."""
    covering = [(e, s) for e, s in epochs if s <= offset]
    later = [(e, s) for e, s in epochs if s > offset]
    return ([(covering[-1][0], offset)] if covering else []) + later
