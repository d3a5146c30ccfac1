"""Properties of the partition log and ListOffsets model (IDX-2..5, IDX-10, IDX-14, LO-2, LO-6).

Each property is checked against a brute-force reading of the stored records (CON-1), never
against the model's own indexes, over random sequences of appends (leader and follower, one or
several batches per append), rolls, truncations and recoveries, on small segments and indexes so
that rolls, full indexes and many segments happen within a few operations.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.codec import encoded_size
from models.config import TopicConfig
from models.constants import NO_TIMESTAMP, ErrorCode, IsolationLevel, TimestampType
from models.list_offsets import (
    ListOffsetsAnswer,
    check_client_target,
    client_result,
    list_offsets,
    min_consumer_version,
)
from models.log import PartitionLog, Segment
from models.profiles import (
    KAFKA_0_10,
    KAFKA_0_10_0,
    KAFKA_2_8,
    KAFKA_3_9,
    KAFKA_4_0,
    KAFKA_4_1,
    IndexGranularity,
    MaxTimestampLookup,
    Profile,
    ShallowOffsetOfMax,
)
from models.records import AnyBatch, RecordSpec, build_v2

INDEXED_PROFILES = (KAFKA_0_10, KAFKA_2_8, KAFKA_3_9, KAFKA_4_0, KAFKA_4_1)


# ----------------------------------------------------------------------------------------------
# programs: what happens to a log


@dataclass(frozen=True)
class Append:
    """One append call: batches given as lists of record timestamps; LogAppendTime batches read `now`."""

    batches: tuple[tuple[int, ...], ...]
    log_append_time: bool
    follower: bool
    advance_ms: int
    epoch: int


@dataclass(frozen=True)
class Roll:
    advance_ms: int


@dataclass(frozen=True)
class Truncate:
    fraction: float  # picks a batch boundary: 0 = the first batch's base offset, 1 = the log end


@dataclass(frozen=True)
class Recover:
    pass


Op = Append | Roll | Truncate | Recover


def appends(timestamps: st.SearchStrategy[int]) -> st.SearchStrategy[Append]:
    return st.builds(
        Append,
        batches=st.lists(st.lists(timestamps, min_size=1, max_size=3).map(tuple), min_size=1, max_size=3).map(
            tuple
        ),
        log_append_time=st.booleans(),
        follower=st.booleans(),
        advance_ms=st.integers(0, 50),
        epoch=st.integers(0, 2),
    )


RECORD_TIMESTAMPS = st.one_of(st.just(NO_TIMESTAMP), st.integers(0, 300))
POSITIVE_TIMESTAMPS = st.one_of(st.just(NO_TIMESTAMP), st.integers(1, 300))


def small_configs(*, tiny_index: bool) -> st.SearchStrategy[TopicConfig]:
    """Small segments (a few batches each) so that rolls happen every few appends. A tiny index (2..8
    time entries) also rolls on IDX-1 "full"; it is only safe where Kafka itself could not overflow
    it: one index attempt per append (<= 4.0) and no per-batch rebuild (recovery). Otherwise the
    index has 16 time entries, more than a 600-byte segment of >= 70-byte batches can need."""
    return st.builds(
        TopicConfig,
        segment_bytes=st.integers(150, 600),
        index_interval_bytes=st.integers(0, 150),
        segment_index_bytes=st.integers(24, 96) if tiny_index else st.just(12 * 16),
        segment_ms=st.integers(20, 400),
        retention_ms=st.just(-1),
    )


def operations(
    timestamps: st.SearchStrategy[int], *, truncation: bool, recovery: bool
) -> st.SearchStrategy[list[Op]]:
    ops: list[st.SearchStrategy[Op]] = [
        appends(timestamps),
        appends(timestamps),
        appends(timestamps),
        st.builds(Roll, advance_ms=st.integers(0, 50)),
    ]
    if truncation:
        ops.append(st.builds(Truncate, fraction=st.floats(0, 1)))
    if recovery:
        ops.append(st.builds(Recover))
    return st.lists(st.one_of(ops), max_size=25)


@st.composite
def scenarios(
    draw: st.DrawFn,
    profiles: tuple[Profile, ...],
    timestamps: st.SearchStrategy[int],
    *,
    truncation: bool = True,
    recovery: bool = True,
) -> tuple[Profile, TopicConfig, list[Op]]:
    profile = draw(st.sampled_from(profiles))
    tiny_index = profile.index_granularity is not IndexGranularity.PER_BATCH and draw(st.booleans())
    config = draw(small_configs(tiny_index=tiny_index))
    ops = draw(operations(timestamps, truncation=truncation, recovery=recovery and not tiny_index))
    return profile, config, ops


def _shallow_offset(profile: Profile, batches: list[AnyBatch]) -> tuple[int, int]:
    """What the validator hands the log (CMP-7): the max, and the offset of the earliest batch holding
    it (its exact record for the 0.10.1-3.7 leader, else that batch's last offset)."""
    max_ts, holder = NO_TIMESTAMP, None
    for b in batches:
        if b.max_timestamp > max_ts:
            max_ts, holder = b.max_timestamp, b
    if holder is None:
        return NO_TIMESTAMP, -1
    if profile.shallow_offset_of_max is ShallowOffsetOfMax.EXACT_RECORD:
        return max_ts, holder.offset_of_max_timestamp()
    return max_ts, holder.last_offset


@dataclass
class Run:
    log: PartitionLog
    clock: int
    mtimes: dict[int, int]  # last offset of each appended batch -> `now` of its append


def run(profile: Profile, config: TopicConfig, ops: list[Op], *, clock: int = 0) -> Run:
    log = PartitionLog(config, profile, now=clock, hw_follows_leo=True)
    mtimes: dict[int, int] = {}
    for op in ops:
        if isinstance(op, Append):
            clock += op.advance_ms
            batches: list[AnyBatch] = []
            offset = log.log_end_offset
            for timestamps in op.batches:
                specs = [RecordSpec(ts, value=b"x") for ts in timestamps]
                if op.log_append_time:
                    batch = build_v2(
                        specs,
                        base_offset=offset,
                        timestamp_type=TimestampType.LOG_APPEND_TIME,
                        log_append_time=clock,
                        partition_leader_epoch=op.epoch,
                    )
                else:
                    batch = build_v2(specs, base_offset=offset, partition_leader_epoch=op.epoch)
                batches.append(batch)
                offset = batch.last_offset + 1
            if op.follower:
                log.append_as_follower(batches, now=clock)
            else:
                max_ts, offset_of_max = _shallow_offset(profile, batches)
                log.append(batches, now=clock, max_timestamp=max_ts, offset_of_max_timestamp=offset_of_max)
            for b in batches:
                mtimes[b.last_offset] = clock
        elif isinstance(op, Roll):
            clock += op.advance_ms
            log.roll(clock)
        elif isinstance(op, Truncate):
            # Replicas truncate at batch boundaries (identical batches, REP-1); a target inside a batch
            # drops the whole batch while keeping index entries below the target, as Kafka does.
            boundaries = [b.base_offset for b in log.batches()] + [log.log_end_offset]
            log.truncate_to(boundaries[int(op.fraction * (len(boundaries) - 1))], now=clock)
        else:
            log.recover(now=clock)
    return Run(log, clock, mtimes)


# ----------------------------------------------------------------------------------------------
# brute-force readings


def batch_of(log: PartitionLog, offset: int) -> AnyBatch:
    return next(b for b in log.batches() if b.base_offset <= offset <= b.last_offset)


def expected_answer(log: PartitionLog, offset: int, timestamp: int, version: int) -> ListOffsetsAnswer:
    epoch = batch_of(log, offset).partition_leader_epoch if version >= 4 else -1
    return ListOffsetsAnswer(ErrorCode.NONE, offset, timestamp, epoch)


NOT_FOUND = ListOffsetsAnswer(ErrorCode.NONE, -1, -1, -1)


def segment_record_max(segment: Segment) -> int:
    return max((r.timestamp for r in segment.records()), default=NO_TIMESTAMP)


# ----------------------------------------------------------------------------------------------
# properties


@given(scenario=scenarios(INDEXED_PROFILES, RECORD_TIMESTAMPS))
def test_time_index_is_ordered_and_segment_max_is_the_batch_max(
    scenario: tuple[Profile, TopicConfig, list[Op]],
) -> None:
    """IDX-3, IDX-12, IDX-5, IDX-14: after any appends, rolls, truncations and recoveries, every segment's
    time index is strictly increasing in timestamp and non-decreasing in offset, holds no -1, points
    only at offsets stored in that segment, never exceeds the segment max; and the segment max
    equals the greatest stored batch MaxTimestamp (also after a truncation re-read it)."""
    profile, config, ops = scenario
    log = run(profile, config, ops).log
    for segment in log.segments:
        entries = segment.time_index.entries
        timestamps = [ts for ts, _ in entries]
        offsets = [o for _, o in entries]
        assert all(a < b for a, b in itertools.pairwise(timestamps)), entries
        assert all(a <= b for a, b in itertools.pairwise(offsets)), entries
        assert all(ts >= 0 and ts <= segment.max_timestamp for ts in timestamps), (entries, segment)
        assert all(segment.base_offset <= o < segment.next_offset() for o in offsets), (entries, segment)
        batch_max = max((b.max_timestamp for b in segment.batches), default=NO_TIMESTAMP)
        assert segment.max_timestamp == batch_max, segment
        assert segment_record_max(segment) == batch_max, segment  # builders' batches: header = records
        assert len(entries) <= segment.time_index.max_entries


@given(scenario=scenarios(INDEXED_PROFILES, POSITIVE_TIMESTAMPS), data=st.data())
def test_timestamp_lookup_is_first_offset_at_or_after_target(
    scenario: tuple[Profile, TopicConfig, list[Op]], data: st.DataObject
) -> None:
    """LO-2 + IDX-7/8: with HW = LEO, no retention and every segment file dated 0, for any target
    T >= 1 the answer is the smallest offset whose record timestamp is >= T, with that record's
    timestamp and its batch's epoch (v4+), or -1/-1 when no record qualifies.

    Why this is exactly what LO-2 says: LO-2 searches only the first segment whose largestTimestamp
    (IDX-6) is >= T. A segment with a record timestamp >= 0 has largestTimestamp = its max, which is
    a record's timestamp (builders' batches); one without has its mtime, 0 here, < T. So earlier
    segments hold no record >= T and the chosen one holds one. (T = 0 and segments dated later than
    T are the LO-2 mtime edge, tested separately.)"""
    profile, config, ops = scenario
    log = run(profile, config, ops, clock=0).log
    for segment in log.segments:
        segment.last_modified = 0  # the file dates do not matter for T >= 1 (see docstring)
    records = log.records()
    near = [r.timestamp + d for r in records for d in (-1, 0, 1)]
    target = data.draw(st.one_of(st.sampled_from(near), st.integers(1, 320)) if near else st.integers(1, 320))
    target = max(target, 1)
    version = profile.list_offsets_versions[1]
    got = list_offsets(log, target, version=version, profile=profile)
    hits = [r for r in records if r.timestamp >= target]
    if not hits:
        assert got == NOT_FOUND
    else:
        first = min(hits, key=lambda r: r.offset)
        assert got == expected_answer(log, first.offset, first.timestamp, version)


def test_timestamp_lookup_mtime_edge() -> None:
    """LO-2 edge [DERIVED]: a first segment without timestamps whose mtime is >= T is the one searched,
    so nothing is found although a later segment holds a match."""
    log = PartitionLog(TopicConfig(), KAFKA_4_0, now=1000, hw_follows_leo=True)
    log.append(
        [build_v2([RecordSpec(NO_TIMESTAMP)], base_offset=0)],
        now=1000,
        max_timestamp=-1,
        offset_of_max_timestamp=-1,
    )
    log.roll(1000)
    log.append(
        [build_v2([RecordSpec(50)], base_offset=1)], now=1000, max_timestamp=50, offset_of_max_timestamp=1
    )
    assert list_offsets(log, 10, version=10, profile=KAFKA_4_0) == NOT_FOUND
    log.segments[0].last_modified = 5  # the file is older than the target: LO-2 moves on
    assert list_offsets(log, 10, version=10, profile=KAFKA_4_0).offset == 1


@given(scenario=scenarios((KAFKA_3_9, KAFKA_4_0, KAFKA_4_1), RECORD_TIMESTAMPS))
def test_max_timestamp_is_first_record_holding_the_global_max(
    scenario: tuple[Profile, TopicConfig, list[Op]],
) -> None:
    """LO-6 (3.8+ EXACT): MAX_TIMESTAMP answers the first record (lowest offset) holding the greatest
    record timestamp of the log, with that timestamp and its batch's epoch; -1/-1 on an empty log.
    (All timestamps -1 gives the first record with -1, LO-6 edge.)"""
    profile, config, ops = scenario
    log = run(profile, config, ops).log
    version = profile.list_offsets_versions[1]
    got = list_offsets(log, -3, version=version, profile=profile)
    records = log.records()
    if not records:
        assert got == NOT_FOUND
        return
    greatest = max(r.timestamp for r in records)
    first = min((r for r in records if r.timestamp == greatest), key=lambda r: r.offset)
    assert got == expected_answer(log, first.offset, greatest, version)


@given(
    scenario=scenarios(
        (KAFKA_0_10_0, KAFKA_2_8, KAFKA_4_0, KAFKA_4_1), RECORD_TIMESTAMPS, truncation=False, recovery=False
    ),
    retention_ms=st.integers(0, 300),
    later=st.integers(0, 400),
)
def test_retention_deletes_exactly_the_breached_prefix(
    scenario: tuple[Profile, TopicConfig, list[Op]], retention_ms: int, later: int
) -> None:
    """IDX-10: with HW = LEO, time-based retention deletes exactly the longest prefix of segments whose
    largestTimestamp (greatest record timestamp if >= 0, else the file mtime: the `now` of the last
    append into it, or its creation; 0.10.0: always the mtime) is < now - retention.ms, never an empty
    last segment; a log that loses every segment restarts with one empty segment at its end."""
    profile, config, ops = scenario
    result = run(profile, config, ops)
    log, now = result.log, result.clock + later
    log.config = TopicConfig(
        segment_bytes=config.segment_bytes,
        index_interval_bytes=config.index_interval_bytes,
        segment_index_bytes=config.segment_index_bytes,
        segment_ms=config.segment_ms,
        retention_ms=retention_ms,
    )
    before = [(s.base_offset, s) for s in log.segments]

    def largest(segment: Segment) -> int:
        mtime = result.mtimes[segment.batches[-1].last_offset] if segment.batches else segment.created
        if profile is KAFKA_0_10_0:
            return mtime
        record_max = segment_record_max(segment)
        return record_max if record_max >= 0 else mtime

    prefix = 0
    for i, (_, segment) in enumerate(before):
        if i == len(before) - 1 and not segment.batches:
            break
        if not largest(segment) < now - retention_ms:
            break
        prefix += 1
    end = log.log_end_offset
    deleted = log.delete_retention_breached_segments(now)
    assert deleted == prefix
    remaining = [base for base, _ in before[prefix:]]
    if prefix == len(before):
        remaining = [end]
    assert [s.base_offset for s in log.segments] == remaining
    assert log.log_start_offset == remaining[0]
    assert log.log_end_offset == end


# ----------------------------------------------------------------------------------------------
# rule examples: small deterministic cases for clauses no vector pins down


def _v2(ts: int, offset: int, epoch: int = 0) -> AnyBatch:
    return build_v2([RecordSpec(ts, value=b"x")], base_offset=offset, partition_leader_epoch=epoch)


def _append(log: PartitionLog, ts: int, now: int, epoch: int = 0) -> None:
    batch = _v2(ts, log.log_end_offset, epoch)
    log.append([batch], now=now, max_timestamp=ts, offset_of_max_timestamp=batch.last_offset)


def test_index_interval_is_strict() -> None:
    """IDX-4: an entry needs strictly more than index.interval.bytes since the last one. With the
    interval equal to one append's size, the second append does not index and the third does."""
    size = encoded_size(_v2(10, 0))
    log = PartitionLog(TopicConfig(index_interval_bytes=size), KAFKA_4_0, now=0)
    _append(log, 10, 0)
    _append(log, 20, 0)
    assert log.active_segment.time_index.entries == ()
    _append(log, 30, 0)
    assert log.active_segment.time_index.entries == ((30, 2),)
    assert log.active_segment.offset_index.entries == ((2, 2 * size),)


def test_roll_closes_segment_with_final_index_entry() -> None:
    """IDX-4 / IDX-1: rolling makes one last attempt with the segment max, skipping the full check."""
    log = PartitionLog(TopicConfig(), KAFKA_4_0, now=0)
    _append(log, 10, 0)
    _append(log, 20, 0)
    assert log.active_segment.time_index.entries == ()
    log.roll(5)
    assert log.segments[0].time_index.entries == ((20, 1),)
    assert log.active_segment.base_offset == 2
    assert log.active_segment.created == 5


def test_compacted_topic_rolls_on_max_compaction_lag() -> None:
    """IDX-9: on compacted topics the roll interval is min(max.compaction.lag.ms, segment.ms)."""
    config = TopicConfig(segment_ms=1000, compacted=True, max_compaction_lag_ms=100)
    log = PartitionLog(config, KAFKA_4_0, now=0)
    _append(log, 0, 0)
    _append(log, 100, 0)
    assert len(log.segments) == 1
    _append(log, 101, 0)
    assert len(log.segments) == 2


def test_wall_clock_roll_and_mtime_retention_0_10_0() -> None:
    """IDX-9 / IDX-10 (0.10.0, pre-KIP-33): rolls measure now - created whatever the records say, and
    retention compares the file mtime; no time index is kept."""
    config = TopicConfig(segment_ms=100, retention_ms=50)
    log = PartitionLog(config, KAFKA_0_10_0, now=0, hw_follows_leo=True)
    _append(log, 10**9, 0)
    _append(log, 10**9 + 10**6, 100)
    assert len(log.segments) == 1  # 100 - 0 is not > 100
    _append(log, 0, 101)
    assert len(log.segments) == 2
    assert all(s.time_index.entries == () for s in log.segments)
    # Records stamped 1e9 would never be breached by largestTimestamp; the mtime (100) is.
    assert log.delete_retention_breached_segments(151) == 1
    assert log.log_start_offset == 2


def test_retention_waits_for_the_high_watermark() -> None:
    """IDX-10: a breached segment is deleted only once the high watermark reaches the next segment's
    base offset (LEO for the last segment)."""
    log = PartitionLog(TopicConfig(retention_ms=10), KAFKA_4_0, now=0)
    _append(log, 0, 0)
    log.roll(0)
    _append(log, 0, 0)
    assert log.delete_retention_breached_segments(100) == 0  # HW 0
    log.high_watermark = 1
    assert log.delete_retention_breached_segments(100) == 1
    assert [s.base_offset for s in log.segments] == [1]


def test_future_timestamp_segment_shields_later_ones() -> None:
    """IDX-10: deletion stops at the first segment that is not breached."""
    log = PartitionLog(TopicConfig(retention_ms=10), KAFKA_4_0, now=0, hw_follows_leo=True)
    for ts in (0, 10**6, 0):
        _append(log, ts, 0)
        log.roll(0)
    assert log.delete_retention_breached_segments(100) == 1
    assert [s.base_offset for s in log.segments] == [1, 2, 3]


def _capped_log(profile: Profile) -> PartitionLog:
    log = PartitionLog(TopicConfig(), profile, now=0)
    for i in range(4):
        _append(log, 100 + i, 0)
    log.high_watermark = 2
    return log


def test_visibility_cap_consumer_below_high_watermark() -> None:
    """LO-3 / LO-4 (1.0+): a consumer sees offsets < HW (READ_UNCOMMITTED) or < LSO (READ_COMMITTED);
    LATEST is that bound; a replica reads to the log end; EARLIEST is never capped."""
    log = _capped_log(KAFKA_4_0)

    def ask(target: int, **kw: Any) -> ListOffsetsAnswer:
        return list_offsets(log, target, version=10, profile=KAFKA_4_0, **kw)

    assert ask(101).offset == 1
    assert ask(102) == NOT_FOUND
    assert ask(-1).offset == 2
    assert ask(102, replica_id=1).offset == 2
    assert ask(-1, replica_id=1).offset == 4
    assert ask(101, isolation=IsolationLevel.READ_COMMITTED, last_stable_offset=1) == NOT_FOUND
    assert ask(-1, isolation=IsolationLevel.READ_COMMITTED, last_stable_offset=1).offset == 1
    assert ask(-3) == NOT_FOUND  # the max (103 at offset 3) is above the HW
    assert ask(-2).offset == 0


def test_visibility_cap_le_high_watermark_before_1_0() -> None:
    """LO-3 history: 0.10.1-0.11 let a consumer see the offset equal to the high watermark."""
    log = _capped_log(KAFKA_0_10)
    assert list_offsets(log, 102, version=1, profile=KAFKA_0_10).offset == 2
    assert list_offsets(log, 103, version=1, profile=KAFKA_0_10) == NOT_FOUND


def test_fresh_leader_lookups_not_available() -> None:
    """LO-3: while the leader's epoch starts above the HW, consumers' LATEST and capped lookups fail
    with OFFSET_NOT_AVAILABLE (v5+) or LEADER_NOT_AVAILABLE (< v5); EARLIEST and replicas are served."""
    log = _capped_log(KAFKA_4_0)
    log.assign_epoch(1, 4)
    not_available = ListOffsetsAnswer(ErrorCode.OFFSET_NOT_AVAILABLE, -1, -1, -1)
    assert list_offsets(log, -1, version=5, profile=KAFKA_4_0) == not_available
    assert list_offsets(log, 103, version=5, profile=KAFKA_4_0) == not_available
    assert list_offsets(log, -1, version=4, profile=KAFKA_4_0).error is ErrorCode.LEADER_NOT_AVAILABLE
    assert list_offsets(log, 100, version=5, profile=KAFKA_4_0).offset == 0  # below the cap: served
    assert list_offsets(log, -2, version=5, profile=KAFKA_4_0).offset == 0
    assert list_offsets(log, -1, version=5, profile=KAFKA_4_0, replica_id=1).offset == 4


def test_unknown_negative_target_searches_before_3_9() -> None:
    """LO-1 [DERIVED]: before 3.9 (and before MAX_TIMESTAMP existed) -3 is an ordinary timestamp and
    matches the first record; 3.9+ answers UNSUPPORTED_VERSION for unknown negatives."""
    log = _capped_log(KAFKA_2_8)
    log.high_watermark = 4
    assert list_offsets(log, -3, version=6, profile=KAFKA_2_8) == ListOffsetsAnswer(ErrorCode.NONE, 0, 100, 0)
    log_4_0 = _capped_log(KAFKA_4_0)
    assert list_offsets(log_4_0, -6, version=10, profile=KAFKA_4_0).error is ErrorCode.UNSUPPORTED_VERSION
    assert list_offsets(log_4_0, -5, version=10, profile=KAFKA_4_0) == NOT_FOUND  # LATEST_TIERED, LO-5


def test_message_format_v0_topic_refuses_timestamp_lookups() -> None:
    """LO-8: pre-4.0, a topic stored as v0 answers 43 to timestamp targets and -3, not to -1/-2/-4."""
    log = PartitionLog(TopicConfig(message_format_magic=0), KAFKA_2_8, now=0, hw_follows_leo=True)
    assert (
        list_offsets(log, 5, version=6, profile=KAFKA_2_8).error is ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT
    )
    assert list_offsets(log, -1, version=6, profile=KAFKA_2_8).error is ErrorCode.NONE


def test_a_v0_or_v1_log_keeps_no_epoch_cache_but_knows_its_leader_epoch() -> None:
    """LO-5 (Kafka 2.8 Log.initializeLeaderEpochCache: no cache for a record version before v2): EARLIEST answers
    epoch -1 on a topic stored as v0 or v1, and OffsetsForLeaderEpoch finds nothing; LATEST keeps the partition's
    leader epoch (LO-4, Partition.fetchOffsetForTimestamp). Both measured on Apache Kafka 2.8.2: EARLIEST -1, LATEST
    0 at ListOffsets v4 on a topic with message.format.version=0.9.0. Going back to v2 starts an empty cache."""
    from conformance.reference.handlers import end_offset_for_epoch

    for magic in (0, 1):
        log = PartitionLog(TopicConfig(message_format_magic=magic), KAFKA_2_8, now=0, hw_follows_leo=True)
        log.assign_epoch(0, 0)  # becomes leader at epoch 0
        assert not log.keeps_epoch_cache and log.leader_epochs == ()
        assert list_offsets(log, -2, version=6, profile=KAFKA_2_8).leader_epoch == -1
        assert list_offsets(log, -1, version=6, profile=KAFKA_2_8).leader_epoch == 0
        assert end_offset_for_epoch(log, 0) == (-1, -1)
    log = PartitionLog(TopicConfig(), KAFKA_2_8, now=0, hw_follows_leo=True)
    log.assign_epoch(0, 0)
    assert list_offsets(log, -2, version=6, profile=KAFKA_2_8).leader_epoch == 0
    log.config = TopicConfig(message_format_magic=1)
    assert log.leader_epochs == () and list_offsets(log, -2, version=6, profile=KAFKA_2_8).leader_epoch == -1
    log.config = TopicConfig()
    assert log.leader_epochs == () and log.latest_epoch == 0
    # From 3.0 the format version is ignored (CNV-3): every log is v2 and keeps its cache.
    v0_asked = PartitionLog(TopicConfig(message_format_magic=0), KAFKA_3_9, now=0, hw_follows_leo=True)
    v0_asked.assign_epoch(0, 0)
    assert list_offsets(v0_asked, -2, version=6, profile=KAFKA_3_9).leader_epoch == 0


def test_cached_max_timestamp_3_0_to_3_7() -> None:
    """LO-6 / DIS-7 (3.0-3.7, KAFKA-16310): MAX_TIMESTAMP answered the segment's cached offset (the
    batch's last offset) with the latest epoch, not the record's."""
    profile = replace(KAFKA_3_9, name="kafka-3.7-like", max_timestamp_lookup=MaxTimestampLookup.CACHED)
    log = PartitionLog(TopicConfig(), profile, now=0, hw_follows_leo=True)
    batch = build_v2([RecordSpec(ts) for ts in (5, 9, 7)], partition_leader_epoch=0)
    log.append([batch], now=0, max_timestamp=9, offset_of_max_timestamp=2)
    log.assign_epoch(3, 3)
    assert list_offsets(log, -3, version=9, profile=profile) == ListOffsetsAnswer(ErrorCode.NONE, 2, 9, 3)
    exact = list_offsets(log, -3, version=9, profile=KAFKA_3_9)
    assert exact == ListOffsetsAnswer(ErrorCode.NONE, 1, 9, 0)


def test_client_semantics() -> None:
    """LO-9: offsetsForTimes refuses negative targets with Kafka's text; -1 answers and error 43 read
    as null; v1-v3 carry no epoch."""
    with pytest.raises(
        ValueError, match=r"^The target time for partition t-0 is -1\. The target time cannot be "
    ):
        check_client_target("t-0", -1)
    assert client_result(NOT_FOUND) is None
    assert client_result(ListOffsetsAnswer(ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, -1, -1, -1)) is None
    assert client_result(ListOffsetsAnswer(ErrorCode.NONE, 3, 7, 0)) == (3, 7, 0)
    assert min_consumer_version(IsolationLevel.READ_COMMITTED) == 2


def test_truncation_resets_epochs_and_high_watermark() -> None:
    """IDX-14: truncation removes index entries at or above the point, the epochs starting there, and
    lowers the high watermark; an emptied segment restarts its clock."""
    log = PartitionLog(TopicConfig(index_interval_bytes=0), KAFKA_4_0, now=0, hw_follows_leo=True)
    _append(log, 10, 0, epoch=0)
    _append(log, 20, 0, epoch=1)
    _append(log, 30, 0, epoch=2)
    # IDX-4: the max is raised before the interval test, so each later append indexes its own max.
    assert log.active_segment.time_index.entries == ((20, 1), (30, 2))
    log.truncate_to(2, now=50)
    assert log.active_segment.time_index.entries == ((20, 1),)
    assert (log.log_end_offset, log.high_watermark, log.leader_epochs) == (2, 2, ((0, 0), (1, 1)))
    assert log.active_segment.max_timestamp == 20
    log.truncate_to(1, now=55)
    assert log.active_segment.time_index.entries == ()
    assert log.active_segment.max_timestamp == 10  # IDX-5: re-read from the remaining batch header
    assert log.active_segment.created == 0
    log.truncate_to(0, now=60)
    assert log.active_segment.created == 60
    assert log.active_segment.roll_base is None
