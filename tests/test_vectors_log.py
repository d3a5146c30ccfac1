"""The partition log and ListOffsets against Kafka's own test vectors TV-01..TV-16 (docs/rules.md).

Each test restates one vector with the facts of Kafka's test, plus the rule IDs
(IDX-*, LO-*) that explain the expected values. Segment-level vectors (LogSegmentTest) drive a
`Segment` directly; log-level ones (UnifiedLogTest, ListOffsets*Test) drive a `PartitionLog`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from models.codec import encoded_size
from models.config import TopicConfig
from models.constants import (
    INT_MAX,
    LONG_MAX,
    NO_TIMESTAMP,
    Codec,
    ErrorCode,
    TimestampType,
)
from models.errors import IndexFullError, IndexTimestampOrderError, InvalidOffsetError
from models.list_offsets import ListOffsetsAnswer, list_offsets
from models.log import PartitionLog, Segment
from models.profiles import KAFKA_3_9, KAFKA_4_0, KAFKA_4_1, Profile
from models.records import AnyBatch, DefaultBatch, RecordSpec, build_legacy, build_v2
from models.time_index import TimeIndex

T0 = 1_700_000_000_000  # a broker clock reading, like MockTime's start


# ----------------------------------------------------------------------------------------------
# helpers


def v2(
    timestamps: Sequence[int], base_offset: int, *, epoch: int = 0, codec: Codec = Codec.NONE
) -> DefaultBatch:
    return build_v2(
        [RecordSpec(ts, value=b"v%d" % i) for i, ts in enumerate(timestamps)],
        base_offset=base_offset,
        partition_leader_epoch=epoch,
        codec=codec,
    )


def v2_log_append_time(count: int, base_offset: int, now: int, *, epoch: int = 0) -> DefaultBatch:
    return build_v2(
        [RecordSpec(1234, value=b"v%d" % i) for i in range(count)],
        base_offset=base_offset,
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        log_append_time=now,
        partition_leader_epoch=epoch,
    )


def leader_append(log: PartitionLog, batches: Sequence[AnyBatch], now: int) -> None:
    """Append as the validator hands batches over: max = greatest batch max, its offset = the last
    offset of the earliest batch holding it (CMP-7, 3.8+ "shallow" offset)."""
    max_ts, offset_of_max = NO_TIMESTAMP, -1
    for b in batches:
        if b.max_timestamp > max_ts:
            max_ts, offset_of_max = b.max_timestamp, b.last_offset
    log.append(batches, now=now, max_timestamp=max_ts, offset_of_max_timestamp=offset_of_max)


def answer(error: ErrorCode, offset: int, timestamp: int, epoch: int) -> ListOffsetsAnswer:
    return ListOffsetsAnswer(error, offset, timestamp, epoch)


OK = ErrorCode.NONE
NOT_FOUND = answer(OK, -1, -1, -1)
UNSUPPORTED = answer(ErrorCode.UNSUPPORTED_VERSION, -1, -1, -1)


# ----------------------------------------------------------------------------------------------
# TV-01..TV-03: TimeIndex (IDX-1, IDX-3, IDX-7, IDX-14)


def filled_index() -> TimeIndex:
    index = TimeIndex(45, 30)
    for i in range(1, 30):
        index.maybe_append(10 * i, 45 + 10 * i)
    return index


@pytest.mark.vector("TV-01")
def test_tv01_empty_index_lookup_and_last_entry() -> None:
    """TV-01 / IDX-3, IDX-7: an empty index behaves as the entry (-1, base offset)."""
    index = TimeIndex(45, 30)
    assert index.lookup(100) == (-1, 45)
    assert index.last_entry() == (-1, 45)
    assert index.entries == ()


@pytest.mark.vector("TV-02")
def test_tv02_lookup_entry_and_full() -> None:
    """TV-02 / IDX-7, IDX-1: lookups take the largest timestamp <= target; 29 of 30 entries is full."""
    index = filled_index()
    assert index.entry(0) == (10, 55)
    assert index.entry(1) == (20, 65)
    assert index.entry(3) == (40, 85)
    assert index.lookup(9) == (-1, 45)
    assert index.lookup(25) == (20, 65)
    assert index.lookup(30) == (30, 75)
    assert len(index) == 29
    assert index.is_full()


@pytest.mark.vector("TV-03")
def test_tv03_full_index_append_and_truncate() -> None:
    """TV-03 / IDX-1, IDX-3, IDX-14: the full check comes first; with it skipped an offset below the
    last one is refused; the reserved slot takes the roll entry; truncateTo(55) empties the index."""
    index = filled_index()
    with pytest.raises(IndexFullError):
        index.maybe_append(10000, 1000)
    with pytest.raises(InvalidOffsetError):
        index.maybe_append(10000, 280, skip_full_check=True)  # 280 < 335
    assert index.maybe_append(10000, 1000, skip_full_check=True)
    assert index.last_entry() == (10000, 1000)
    assert len(index) == 30

    truncated = filled_index()
    truncated.truncate_to(55)
    assert truncated.entries == ()
    assert truncated.last_entry() == (-1, 45)


@pytest.mark.vector("TV-03")
def test_tv03_append_rule_details() -> None:
    """TV-03 / IDX-3 details: strictly greater timestamps only, equal offsets allowed (DIS-10), a
    smaller timestamp is an ordering error, -1 is never indexed and 0 is."""
    index = TimeIndex(0, 10)
    assert not index.maybe_append(-1, 0)
    assert index.maybe_append(0, 0)
    assert not index.maybe_append(0, 3)  # equal timestamp: no entry
    assert index.maybe_append(5, 3)
    assert index.maybe_append(6, 3)  # equal offset, greater timestamp: entry (DIS-10)
    with pytest.raises(IndexTimestampOrderError):
        index.maybe_append(4, 9)
    assert index.entries == ((0, 0), (5, 3), (6, 3))


# ----------------------------------------------------------------------------------------------
# TV-04..TV-08: LogSegment (IDX-4..9, IDX-14)


def v1_message(offset: int) -> AnyBatch:
    (entry,) = build_legacy([RecordSpec(10 * offset, value=b"hello")], magic=1, base_offset=offset)
    return entry


def segment_of_v1_messages(last_offset: int, profile: Profile = KAFKA_4_0) -> Segment:
    """Segment base 40, one v1 message per append at offsets 40..last_offset with ts = 10 * offset,
    index interval 2 * size - 1 (so every second append indexes, IDX-4)."""
    size = encoded_size(v1_message(40))
    config = TopicConfig(index_interval_bytes=2 * size - 1)
    segment = Segment.create(40, now=T0, config=config, profile=profile)
    for offset in range(40, last_offset + 1):
        segment.append(
            [v1_message(offset)],
            max_timestamp=10 * offset,
            offset_of_max_timestamp=offset,
            now=T0,
            config=config,
            profile=profile,
        )
    return segment


@pytest.mark.vector("TV-04")
def test_tv04_find_offset_by_timestamp() -> None:
    """TV-04 / IDX-6, IDX-8: the first offset whose record timestamp is >= target."""
    segment = segment_of_v1_messages(49)
    assert segment.time_index.entries == ((420, 42), (440, 44), (460, 46), (480, 48))
    assert segment.largest_timestamp() == 490

    def search(target: int) -> int | None:
        found = segment.find_offset_by_timestamp(target, 40)
        return None if found is None else found[1]

    assert search(420) == 42
    assert search(421) == 43
    assert search(430) == 43
    assert search(431) == 44
    assert search(491) is None
    assert search(401) == 41
    assert search(399) == 40
    # The answer carries the record's own timestamp; legacy batches have no leader epoch.
    assert segment.find_offset_by_timestamp(421, 40) == (430, 43, -1)


@pytest.mark.vector("TV-05")
def test_tv05_truncation_reloads_largest_timestamp() -> None:
    """TV-05 / IDX-14, IDX-5: 30 appends give 14 entries; truncateTo(41) drops them all and the max is
    re-read from the remaining batch headers (400), next offset 41."""
    segment = segment_of_v1_messages(69)
    assert len(segment.time_index) == 14
    segment.truncate_to(41, now=T0 + 1)
    assert segment.time_index.entries == ()
    assert segment.largest_timestamp() == 400
    assert segment.max_timestamp == 400
    assert segment.next_offset() == 41


@pytest.mark.vector("TV-06")
def test_tv06_truncate_full_resets_creation_time() -> None:
    """TV-06 / IDX-9, IDX-14: without timestamps the wait is wall-clock (now - created); truncating
    everything resets the creation time."""
    config = TopicConfig()
    segment = Segment.create(40, now=T0, config=config, profile=KAFKA_4_0)
    batch = v2([NO_TIMESTAMP, NO_TIMESTAMP], 40)
    segment.append(
        [batch], max_timestamp=-1, offset_of_max_timestamp=-1, now=T0, config=config, profile=KAFKA_4_0
    )
    assert segment.time_waited_for_roll(T0 + 500, NO_TIMESTAMP) == 500
    segment.truncate_to(0, now=T0 + 500)
    assert segment.is_empty()
    assert segment.time_waited_for_roll(T0 + 500, NO_TIMESTAMP) == 0


@pytest.mark.vector("TV-06")
def test_tv06_empty_segment_rolls_only_on_offset_overflow() -> None:
    """TV-06 / IDX-9: an empty segment never time-rolls however long it waited; it rolls only when the
    incoming last offset does not fit the int32 relative range."""
    config = TopicConfig(segment_ms=3600)
    segment = Segment.create(40, now=T0, config=config, profile=KAFKA_4_0)
    segment.truncate_to(0, now=T0)
    assert segment.time_waited_for_roll(T0, NO_TIMESTAMP) == 0
    later = T0 + config.segment_ms + 1
    assert segment.time_waited_for_roll(later, NO_TIMESTAMP) == config.segment_ms + 1
    size = encoded_size(v2([NO_TIMESTAMP], 40))
    assert not segment.should_roll(NO_TIMESTAMP, size, 41, later, config, KAFKA_4_0)
    assert not segment.should_roll(NO_TIMESTAMP, size, 40 + INT_MAX, later, config, KAFKA_4_0)
    assert segment.should_roll(NO_TIMESTAMP, size, 40 + INT_MAX + 1, later, config, KAFKA_4_0)


@pytest.mark.vector("TV-07")
def test_tv07_first_batch_timestamp_k40() -> None:
    """TV-07 (K40, RollBase.FIRST_APPEND): Long.MAX_VALUE when empty; then the append's max argument
    (1000), even though the record itself has no timestamp."""
    config = TopicConfig()
    segment = Segment.create(0, now=T0, config=config, profile=KAFKA_4_0)
    assert segment.first_batch_timestamp() == LONG_MAX
    segment.append(
        [v2([NO_TIMESTAMP], 0)],
        max_timestamp=1000,
        offset_of_max_timestamp=0,
        now=T0,
        config=config,
        profile=KAFKA_4_0,
    )
    assert segment.first_batch_timestamp() == 1000


@pytest.mark.vector("TV-07")
def test_tv07_first_batch_timestamp_trunk() -> None:
    """TV-07 (TRUNK, 4.1+ RollBase.FIRST_BATCH): the value comes from the first batch header, so a
    record stamped 1000 gives 1000, and the append's argument no longer matters [DERIVED: a batch
    without timestamp leaves the roll base unknown, read as Long.MAX_VALUE]."""
    config = TopicConfig()
    stamped = Segment.create(0, now=T0, config=config, profile=KAFKA_4_1)
    assert stamped.first_batch_timestamp() == LONG_MAX
    stamped.append(
        [v2([1000], 0)],
        max_timestamp=1000,
        offset_of_max_timestamp=0,
        now=T0,
        config=config,
        profile=KAFKA_4_1,
    )
    assert stamped.first_batch_timestamp() == 1000

    unstamped = Segment.create(0, now=T0, config=config, profile=KAFKA_4_1)
    unstamped.append(
        [v2([NO_TIMESTAMP], 0)],
        max_timestamp=1000,
        offset_of_max_timestamp=0,
        now=T0,
        config=config,
        profile=KAFKA_4_1,
    )
    assert unstamped.first_batch_timestamp() == LONG_MAX


def one_record_batches(timestamps: Sequence[int], first_offset: int = 0) -> list[AnyBatch]:
    return [v2([ts], first_offset + i) for i, ts in enumerate(timestamps)]


def append_groups(profile: Profile, groups: Sequence[Sequence[AnyBatch]]) -> Segment:
    config = TopicConfig(index_interval_bytes=1)
    segment = Segment.create(0, now=T0, config=config, profile=profile)
    for group in groups:
        max_ts, offset_of_max = NO_TIMESTAMP, -1
        for b in group:
            if b.max_timestamp > max_ts:
                max_ts, offset_of_max = b.max_timestamp, b.last_offset
        segment.append(
            group,
            max_timestamp=max_ts,
            offset_of_max_timestamp=offset_of_max,
            now=T0,
            config=config,
            profile=profile,
        )
    return segment


@pytest.mark.vector("TV-08")
def test_tv08_per_batch_index_entries_4_1() -> None:
    """TV-08 (4.1+, KAFKA-806, IDX-4 per batch): one append of three batches ts 1, 0, 2 indexes the
    second and third batch; the time entries carry the running segment max and its batch (IDX-2)."""
    segment = append_groups(KAFKA_4_1, [one_record_batches([1, 0, 2])])
    assert [offset for offset, _ in segment.offset_index.entries] == [1, 2]
    assert segment.time_index.entries == ((1, 0), (2, 2))

    split = append_groups(KAFKA_4_1, [one_record_batches([0, 1]), one_record_batches([2], 2)])
    assert split.time_index.entries == ((1, 1), (2, 2))


@pytest.mark.vector("TV-08")
def test_tv08_contrast_per_append_index_4_0() -> None:
    """TV-08 contrast (<= 4.0, IDX-4 per append): the first append into a segment never indexes and an
    append makes at most one entry, so the same appends give fewer entries."""
    segment = append_groups(KAFKA_4_0, [one_record_batches([1, 0, 2])])
    assert segment.offset_index.entries == ()
    assert segment.time_index.entries == ()

    split = append_groups(KAFKA_4_0, [one_record_batches([0, 1]), one_record_batches([2], 2)])
    assert split.time_index.entries == ((2, 2),)


# ----------------------------------------------------------------------------------------------
# TV-09..TV-12: UnifiedLog (IDX-9, IDX-10, IDX-13)


@pytest.mark.vector("TV-09")
@pytest.mark.parametrize("profile", [KAFKA_4_0, KAFKA_4_1], ids=lambda p: p.name)
def test_tv09_follower_builds_time_index_from_headers(profile: Profile) -> None:
    """TV-09 / IDX-13, REP-1: 100 follower appends of one record each (ts T + i), index interval 1:
    every append but the first indexes, 99 entries, the last at T + 99."""
    log = PartitionLog(TopicConfig(index_interval_bytes=1), profile, now=T0)
    for i in range(100):
        log.append_as_follower([v2([T0 + i], i)], now=T0 + i)
    entries = log.active_segment.time_index.entries
    assert len(log.segments) == 1
    assert len(entries) == 99
    assert entries[-1] == (T0 + 99, 99)


@pytest.mark.vector("TV-10")
def test_tv10_time_based_roll_during_append() -> None:
    """TV-10 / IDX-9 (K40): without timestamps the wall clock since creation governs; once the first
    append of a segment carries a timestamp, the incoming record's timestamp minus it governs; an empty
    segment and an empty append never roll."""
    config = TopicConfig(segment_ms=60 * 60)
    log = PartitionLog(config, KAFKA_4_0, now=T0)
    clock = T0

    def append_ts(ts: int) -> None:
        leader_append(log, [v2([ts], log.log_end_offset)], now=clock)

    clock += config.segment_ms + 1
    append_ts(NO_TIMESTAMP)
    assert len(log.segments) == 1, "rolling now would leave an empty segment"
    append_ts(NO_TIMESTAMP)
    assert len(log.segments) == 2, "time has expired since the segment was created"
    for expected in (3, 4):
        clock += config.segment_ms + 1
        append_ts(NO_TIMESTAMP)
        assert len(log.segments) == expected

    future = clock + config.segment_ms + 1
    append_ts(future)
    assert len(log.segments) == 4, "first record had no timestamp: the wall clock governs, not the record"
    clock += config.segment_ms + 1
    append_ts(future)
    assert len(log.segments) == 5, "wall clock passed segment.ms"
    first_of_segment = future
    clock += config.segment_ms + 1
    append_ts(future)
    assert len(log.segments) == 5, "the first append's timestamp governs now, and the record equals it"
    assert clock >= first_of_segment + config.segment_ms + 1
    append_ts(clock)
    assert len(log.segments) == 6
    log.append([], now=clock + 10 * config.segment_ms, max_timestamp=-1, offset_of_max_timestamp=-1)
    assert len(log.segments) == 6, "an empty append never rolls"


@pytest.mark.vector("TV-11")
@pytest.mark.parametrize("jitter", [0, 1, 600, 1199])
def test_tv11_time_based_roll_jitter(jitter: int) -> None:
    """TV-11 / IDX-9: segment.ms 3600, jitter drawn below 1200: no roll at t0 + segment.ms - 1200; a
    record stamped now rolls after a further 1200 - jitter + 1 ms, and not one millisecond earlier."""
    max_jitter = 1200
    config = TopicConfig(segment_ms=3600, segment_jitter_ms=max_jitter)
    log = PartitionLog(config, KAFKA_4_0, now=T0, jitter=jitter)
    clock = T0
    leader_append(log, [v2([clock], 0)], now=clock)
    clock += config.segment_ms - max_jitter
    leader_append(log, [v2([clock], 1)], now=clock)
    assert len(log.segments) == 1
    clock += max_jitter - log.active_segment.jitter + 1
    size = encoded_size(v2([clock], 2))
    assert not log.active_segment.should_roll(clock - 1, size, 2, clock - 1, config, KAFKA_4_0)
    leader_append(log, [v2([clock], 2)], now=clock)
    assert len(log.segments) == 2
    assert log.active_segment.jitter == jitter


def test_jitter_out_of_range_is_refused() -> None:
    """IDX-9: jitter lies in [0, min(segment.jitter.ms, segment.ms))."""
    config = TopicConfig(segment_ms=3600, segment_jitter_ms=1200)
    with pytest.raises(ValueError, match="jitter"):
        PartitionLog(config, KAFKA_4_0, now=T0, jitter=1200)


def fifteen_records_in_five_record_segments(ts: int, retention_ms: int, now: int) -> PartitionLog:
    size = encoded_size(v2([ts], 0))
    config = TopicConfig(segment_bytes=5 * size, retention_ms=retention_ms)
    log = PartitionLog(config, KAFKA_4_0, now=now, hw_follows_leo=True)
    for offset in range(15):
        leader_append(log, [v2([ts], offset)], now=now)
    assert len(log.segments) == 3
    return log


@pytest.mark.vector("TV-12")
def test_tv12_retention_deletes_old_segments() -> None:
    """TV-12 / IDX-10: 15 records at ts 10 in 5-record segments, retention 10 000 ms, HW = LEO: every
    segment is breached; a log keeps one (new, empty) segment, so one remains."""
    log = fifteen_records_in_five_record_segments(10, 10_000, T0)
    assert log.delete_retention_breached_segments(T0) == 3
    assert len(log.segments) == 1
    assert log.active_segment.is_empty()
    assert log.log_start_offset == log.log_end_offset == 15


@pytest.mark.vector("TV-12")
def test_tv12_retention_keeps_recent_segments() -> None:
    """TV-12 / IDX-10: the same log with ts = now and retention 10 000 000 ms keeps all 3 segments."""
    log = fifteen_records_in_five_record_segments(T0, 10_000_000, T0)
    assert log.delete_retention_breached_segments(T0) == 0
    assert len(log.segments) == 3
    assert log.log_start_offset == 0


# ----------------------------------------------------------------------------------------------
# TV-13..TV-16: ListOffsets (LO-1..6)


def lookup(
    log: PartitionLog, target: int, *, version: int | None = None, profile: Profile = KAFKA_4_0
) -> ListOffsetsAnswer:
    """A consumer's ListOffsets at `version` (default: the profile's newest)."""
    if version is None:
        version = profile.list_offsets_versions[1]
    return list_offsets(log, target, version=version, profile=profile)


@pytest.mark.vector("TV-13")
def test_tv13_lookups_include_leader_epoch() -> None:
    """TV-13 / LO-2, LO-4, LO-5: timestamp lookups carry the record's batch epoch; EARLIEST and
    EARLIEST_LOCAL the earliest epoch; LATEST the current leader epoch."""
    t = T0
    log = PartitionLog(TopicConfig(), KAFKA_4_0, now=t, hw_follows_leo=True)
    assert lookup(log, 0) == NOT_FOUND
    leader_append(log, [v2([t], 0, epoch=0)], now=t)
    leader_append(log, [v2([t + 1], 1, epoch=1)], now=t)
    assert lookup(log, t) == answer(OK, 0, t, 0)
    assert lookup(log, t + 1) == answer(OK, 1, t + 1, 1)
    assert lookup(log, -2) == answer(OK, 0, -1, 0)
    assert lookup(log, -4) == answer(OK, 0, -1, 0)
    assert lookup(log, -1) == answer(OK, 2, -1, 1)
    log.assign_epoch(2, 2)
    assert lookup(log, -1) == answer(OK, 2, -1, 2)


@pytest.mark.vector("TV-14")
@pytest.mark.parametrize("profile", [KAFKA_3_9, KAFKA_4_0, KAFKA_4_1], ids=lambda p: p.name)
def test_tv14_max_timestamp_includes_timestamp(profile: Profile) -> None:
    """TV-14 / LO-6 (3.8+): records T, T+1, T -> MAX_TIMESTAMP answers (T+1, offset 1, epoch 0)."""
    log = PartitionLog(TopicConfig(), profile, now=T0, hw_follows_leo=True)
    for offset, ts in enumerate((T0, T0 + 1, T0)):
        leader_append(log, [v2([ts], offset)], now=T0)
    assert lookup(log, -3, profile=profile) == answer(OK, 1, T0 + 1, 0)


def tv15_answers(log: PartitionLog, profile: Profile) -> tuple[ListOffsetsAnswer, ...]:
    return tuple(lookup(log, target, profile=profile) for target in (-2, -1, -3))


def follower_copy(leader: PartitionLog, now: int) -> PartitionLog:
    follower = PartitionLog(leader.config, leader.profile, now=now, hw_follows_leo=True)
    follower.append_as_follower(leader.fetch(0), now=now)
    return follower


@pytest.mark.vector("TV-15")
@pytest.mark.parametrize("profile", [KAFKA_4_0, KAFKA_4_1], ids=lambda p: p.name)
@pytest.mark.parametrize("batch_count", [1, 3])
def test_tv15_create_time_max_timestamp_survives_failover_and_recovery(
    profile: Profile, batch_count: int
) -> None:
    """TV-15 / LO-4..6, REP-1, IDX-13: ts 100, 999, 200 stored lz4 (topic codec, whatever the producer
    codec was) as one or three batches: earliest 0, latest 3, MAX_TIMESTAMP offset 1 epoch 0; the
    same from a follower that copied the batches and after rebuilding the indexes (restart)."""
    timestamps = (100, 999, 200)
    if batch_count == 1:
        batches: list[AnyBatch] = [v2(timestamps, 0, codec=Codec.LZ4)]
    else:
        batches = [v2([ts], i, codec=Codec.LZ4) for i, ts in enumerate(timestamps)]
    leader = PartitionLog(TopicConfig(compression_type="lz4"), profile, now=T0, hw_follows_leo=True)
    leader_append(leader, batches, now=T0)
    expected = (answer(OK, 0, -1, 0), answer(OK, 3, -1, 0), answer(OK, 1, 999, 0))
    assert tv15_answers(leader, profile) == expected

    follower = follower_copy(leader, T0 + 5)
    assert follower.records() == leader.records()
    assert tv15_answers(follower, profile) == expected

    leader.recover(now=T0 + 10)
    assert tv15_answers(leader, profile) == expected


@pytest.mark.vector("TV-15")
@pytest.mark.parametrize("profile", [KAFKA_4_0, KAFKA_4_1], ids=lambda p: p.name)
def test_tv15_log_append_time_max_timestamp(profile: Profile) -> None:
    """TV-15 / LO-6: LogAppendTime topic: one batch -> every record reads the append time, the first
    record answers (offset 0); three batches at increasing broker time -> the last one (offset 2).
    Same from a follower copy and after recovery."""
    config = TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME)
    one = PartitionLog(config, profile, now=T0, hw_follows_leo=True)
    leader_append(one, [v2_log_append_time(3, 0, T0)], now=T0)
    assert lookup(one, -3, profile=profile) == answer(OK, 0, T0, 0)

    three = PartitionLog(config, profile, now=T0, hw_follows_leo=True)
    for i in range(3):
        leader_append(three, [v2_log_append_time(1, i, T0 + i)], now=T0 + i)
    assert lookup(three, -3, profile=profile) == answer(OK, 2, T0 + 2, 0)
    assert lookup(follower_copy(three, T0 + 9), -3, profile=profile) == answer(OK, 2, T0 + 2, 0)
    three.recover(now=T0 + 10)
    assert lookup(three, -3, profile=profile) == answer(OK, 2, T0 + 2, 0)


@pytest.mark.vector("TV-15")
def test_tv15_empty_log() -> None:
    """TV-15 / LO-6: an empty log answers MAX_TIMESTAMP with offset -1, timestamp -1."""
    log = PartitionLog(TopicConfig(), KAFKA_4_0, now=T0, hw_follows_leo=True)
    assert lookup(log, -3) == NOT_FOUND


def tv16_log(profile: Profile) -> PartitionLog:
    """9 messages stamped now, then one stamped now + 10; offsets 0..9, leader epoch 0."""
    log = PartitionLog(TopicConfig(), profile, now=T0, hw_follows_leo=True)
    log.assign_epoch(0, 0)
    for offset in range(10):
        ts = T0 + 10 if offset == 9 else T0
        leader_append(log, [v2([ts], offset)], now=T0)
    return log


def tv16_expected(version: int, target: int) -> ListOffsetsAnswer:
    """TV-16 restated: by version, for the K40 broker."""
    epoch = 0 if version >= 4 else -1
    if target == -3:
        return answer(OK, 9, T0 + 10, epoch) if version >= 7 else UNSUPPORTED
    if target == -4:
        return answer(OK, 0, -1, epoch) if version >= 8 else UNSUPPORTED
    if target == -1:
        return answer(OK, 10, -1, epoch)
    if target == -2:
        return answer(OK, 0, -1, epoch)
    return answer(OK, 0, T0, epoch)  # target 0: the first record, with its own timestamp


@pytest.mark.vector("TV-16")
@pytest.mark.parametrize("version", range(1, 11))
@pytest.mark.parametrize("target", [0, -2, -1, -3, -4])
def test_tv16_answers_by_version(version: int, target: int) -> None:
    """TV-16 / LO-1, LO-9: special targets below their minimum version get UNSUPPORTED_VERSION (3.9+,
    KAFKA-17331); v1-v3 answers carry no leader epoch (-1), v4+ carry epoch 0."""
    log = tv16_log(KAFKA_4_0)
    assert lookup(log, target, version=version) == tv16_expected(version, target)


@pytest.mark.vector("TV-16")
def test_tv16_v0_legacy_answers() -> None:
    """TV-16 / LO-7: v0 (3.8/3.9 brokers) answers from segment mtimes and the log end offset dated now:
    target 0 -> -1 (nothing dated <= 0), -2 -> 0, -1 -> 10. 4.0 removed v0 (KIP-896): no answer, the connection
    is closed (NETWORK_EXCEPTION as a client reads it; Processor.parseRequestHeader)."""
    log = tv16_log(KAFKA_3_9)
    now = T0 + 100

    def v0(target: int) -> int:
        return list_offsets(log, target, version=0, profile=KAFKA_3_9, now=now).offset

    assert (v0(0), v0(-2), v0(-1)) == (-1, 0, 10)
    assert list_offsets(log, -3, version=0, profile=KAFKA_3_9, now=now) == UNSUPPORTED
    closed = answer(ErrorCode.NETWORK_EXCEPTION, -1, -1, -1)
    assert list_offsets(tv16_log(KAFKA_4_0), -1, version=0, profile=KAFKA_4_0, now=now) == closed
