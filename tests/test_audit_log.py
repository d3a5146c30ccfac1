"""Adversarial audit of the log side of the reference model against docs/rules.md: IDX-*, LO-*
and REP-*. Each test pins one rule (its ID is in the name and docstring) with a small,
deterministic scenario whose expected values are derived from the rule text, not from the model.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from models.cluster import Cluster
from models.codec import encoded_size
from models.config import TopicConfig
from models.constants import NO_TIMESTAMP, Codec, ErrorCode, TimestampType
from models.errors import IndexFullError, IndexTimestampOrderError, InvalidOffsetError
from models.list_offsets import ListOffsetsAnswer, check_client_target, client_result, list_offsets
from models.log import PartitionLog
from models.profiles import KAFKA_0_10_0, KAFKA_2_8, KAFKA_3_9, KAFKA_4_0, KAFKA_4_1, Profile
from models.records import AnyBatch, DefaultBatch, RecordSpec, build_batches, build_legacy, build_v2
from models.time_index import TimeIndex

T0 = 1_700_000_000_000
OK = ErrorCode.NONE
NOT_FOUND = ListOffsetsAnswer(OK, -1, -1, -1)


def v2(timestamps: Sequence[int], base: int, *, epoch: int = 0) -> DefaultBatch:
    return build_v2(
        [RecordSpec(ts, value=b"v") for ts in timestamps], base_offset=base, partition_leader_epoch=epoch
    )


def shallow_max(batches: Sequence[AnyBatch]) -> tuple[int, int]:
    """CMP-7 (3.8+): the greatest batch max and the last offset of the earliest batch holding it."""
    max_ts, offset = NO_TIMESTAMP, -1
    for b in batches:
        if b.max_timestamp > max_ts:
            max_ts, offset = b.max_timestamp, b.last_offset
    return max_ts, offset


def append(log: PartitionLog, batches: Sequence[AnyBatch], now: int) -> None:
    max_ts, offset = shallow_max(batches)
    log.append(batches, now=now, max_timestamp=max_ts, offset_of_max_timestamp=offset)


def new_log(profile: Profile = KAFKA_4_0, now: int = T0, **config: int) -> PartitionLog:
    return PartitionLog(TopicConfig(**config), profile, now=now, hw_follows_leo=True)  # type: ignore[arg-type]


SIZE = encoded_size(v2([0], 0))  # one single-record v2 batch


# ---------------------------------------------------------------------------------------------
# IDX-2 / IDX-4 / IDX-5 / CMP-7: when entries are written and what they say


def test_idx4_first_append_into_segment_never_indexes() -> None:
    """IDX-4 (<= 4.0): the counter starts at 0 and is tested before it grows, so even with
    index.interval.bytes = 0 the first append writes no entry; the second append writes exactly one
    (offset entry = last offset of the whole append -> start position of that append)."""
    log = new_log(index_interval_bytes=0)
    append(log, [v2([10], 0), v2([20], 1)], T0)
    seg = log.active_segment
    assert (len(seg.time_index), len(seg.offset_index)) == (0, 0)
    append(log, [v2([30], 2), v2([40], 3), v2([50], 4)], T0)
    assert seg.offset_index.entries == ((4, 2 * SIZE),)
    assert seg.time_index.entries == ((50, 4),)


def test_idx4_per_batch_in_4_1() -> None:
    """IDX-4 (4.1+, KAFKA-806): the interval test runs per batch inside one append; the first batch of
    a fresh segment still never indexes. Offset entry = batch last offset -> batch position."""
    log = new_log(KAFKA_4_1, index_interval_bytes=0)
    append(log, [v2([10], 0), v2([30], 1), v2([20], 2)], T0)
    seg = log.active_segment
    assert seg.offset_index.entries == ((1, SIZE), (2, 2 * SIZE))
    # batch 2 (ts 20) does not raise the max: the second attempt repeats 30 and is skipped (IDX-3).
    assert seg.time_index.entries == ((30, 1),)


def test_idx2_offset_is_last_offset_of_earliest_batch_reaching_the_max() -> None:
    """IDX-2 / IDX-5: a follower append whose batches have maxima 5, 9, 9 records the max 9 at the
    last offset of the *earliest* batch holding it (offset 3, not 5); ties keep the earliest."""
    log = new_log(index_interval_bytes=0)
    append(log, [v2([1], 0)], T0)  # so that the next append is tested against the interval
    log.append_as_follower([v2([5], 1), v2([9, 2], 2), v2([9], 4), v2([9], 5)], now=T0)
    seg = log.active_segment
    assert (seg.max_timestamp, seg.offset_of_max_timestamp) == (9, 3)
    assert seg.time_index.entries == ((9, 3),)
    log.append_as_follower([v2([9], 6)], now=T0)
    assert (seg.max_timestamp, seg.offset_of_max_timestamp) == (9, 3)


def test_cmp7_per_append_records_the_offset_the_leader_passes() -> None:
    """CMP-7 / IDX-4 (<= 4.0): the segment stores the (max, offset) the validator hands over, e.g. the
    *first* offset of a v1 uncompressed LogAppendTime append, not a batch last offset."""
    log = new_log(index_interval_bytes=0)
    append(log, [v2([1], 0)], T0)
    batches = build_legacy(
        [RecordSpec(7, value=b"x")] * 3,
        magic=1,
        base_offset=1,
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        log_append_time=500,
    )
    log.append(batches, now=T0, max_timestamp=500, offset_of_max_timestamp=1)
    assert log.active_segment.time_index.entries == ((500, 1),)
    # 4.1 ignores the passed offset and derives it per batch header (CMP-7 4.1+).
    log41 = new_log(KAFKA_4_1, index_interval_bytes=0)
    append(log41, [v2([1], 0)], T0)
    log41.append(batches, now=T0, max_timestamp=500, offset_of_max_timestamp=1)
    assert log41.active_segment.time_index.entries == ((500, 1),)
    assert (log41.active_segment.max_timestamp, log41.active_segment.offset_of_max_timestamp) == (500, 1)


def test_idx3_append_rule_and_exceptions() -> None:
    """IDX-3: empty index = (-1, base): -1 is never indexed, 0 is; equal timestamps are skipped; an
    equal offset is allowed (DIS-10); smaller offset -> InvalidOffsetException, smaller timestamp ->
    IllegalStateException, full without skip -> IllegalArgumentException (checked first)."""
    index = TimeIndex(100, 4)
    assert index.maybe_append(-1, 100) is False
    assert index.maybe_append(0, 100) is True
    assert index.maybe_append(0, 101) is False
    assert index.maybe_append(5, 100) is True  # same offset, greater timestamp
    with pytest.raises(InvalidOffsetError):
        index.maybe_append(9, 99)
    with pytest.raises(IndexTimestampOrderError):
        index.maybe_append(4, 101)
    assert index.maybe_append(6, 102) is True
    assert index.is_full()  # IDX-1: 3 of 4 entries
    with pytest.raises(IndexFullError):
        index.maybe_append(-5, 0)  # the full check comes before the order checks
    assert index.maybe_append(7, 103, skip_full_check=True) is True


def test_idx6_largest_timestamp_falls_back_to_mtime() -> None:
    """IDX-6 / DIS-3: a segment whose max is -1 reports its file mtime (the last append's `now`) as
    largestTimestamp and has no time-index entry; once a timestamp >= 0 arrives it reports that."""
    log = new_log(index_interval_bytes=0)
    append(log, [v2([NO_TIMESTAMP], 0)], T0 + 5)
    append(log, [v2([NO_TIMESTAMP], 1)], T0 + 9)
    seg = log.active_segment
    assert seg.largest_timestamp() == T0 + 9
    assert len(seg.time_index) == 0
    append(log, [v2([3], 2)], T0 + 11)
    assert seg.largest_timestamp() == 3


# ---------------------------------------------------------------------------------------------
# IDX-7 / IDX-8: segment search


def _search_segment() -> PartitionLog:
    # offsets 0..5 in three v2 batches: [10, 40] [20, 50] [30, 60]
    log = new_log(index_interval_bytes=0)
    append(log, [v2([10, 40], 0)], T0)
    append(log, [v2([20, 50], 2)], T0)
    append(log, [v2([30, 60], 4)], T0)
    return log


def test_idx8_first_record_at_or_above_target_not_closest() -> None:
    """IDX-8 / LO-2: inside the first batch whose max >= target, the first record with ts >= target
    (offset 1, ts 40), not the record whose timestamp is closest (offset 4, ts 30). Its own
    timestamp is returned."""
    seg = _search_segment().active_segment
    assert seg.find_offset_by_timestamp(25, 0) == (40, 1, 0)


def test_idx8_starting_offset_raise_and_continue_to_later_batches() -> None:
    """IDX-8: records below startingOffset never match; when the first qualifying batch holds no
    record >= target at or after startingOffset, the scan continues into later batches."""
    seg = _search_segment().active_segment
    # batch [10,40]@0 qualifies for 35 but offset 1 < 2: continue to [20,50]@2 -> offset 3 (ts 50).
    assert seg.find_offset_by_timestamp(35, 2) == (50, 3, 0)
    # starting offset inside a batch: [20,50]@2, start 3 -> offset 3.
    assert seg.find_offset_by_timestamp(15, 3) == (50, 3, 0)
    assert seg.find_offset_by_timestamp(61, 0) is None


def test_idx8_index_entry_then_scan() -> None:
    """IDX-7/IDX-8: the lookup starts at the index entry with the largest ts <= target; the result is
    still the smallest offset with ts >= target (TV-04 shape, one record per append)."""
    log = new_log(index_interval_bytes=0)
    for off in range(10):
        append(log, [v2([10 * off], off)], T0)
    seg = log.active_segment
    # first append never indexes (IDX-4); ts 0 is indexable (IDX-3): entries (10,1)..(90,9)
    assert seg.time_index.entries == tuple((10 * o, o) for o in range(1, 10))
    assert seg.find_offset_by_timestamp(42, 0) == (50, 5, 0)
    assert seg.find_offset_by_timestamp(50, 0) == (50, 5, 0)


# ---------------------------------------------------------------------------------------------
# IDX-9: roll


def test_idx9_size_condition_boundary() -> None:
    """IDX-9: roll iff size > segment.bytes - incomingSize (equality fits)."""
    log = new_log(segment_bytes=3 * SIZE)
    append(log, [v2([1], 0), v2([2], 1)], T0)
    append(log, [v2([3], 2)], T0)  # size 2S > 3S - S? no
    assert len(log.segments) == 1
    append(log, [v2([4], 3)], T0)  # 3S > 2S -> roll
    assert [s.base_offset for s in log.segments] == [0, 3]


def test_idx9_time_condition_boundary_with_jitter() -> None:
    """IDX-9: time roll iff waited > maxSegmentMs - jitter (strict), waited = incoming max - rollBase."""
    log = PartitionLog(TopicConfig(segment_ms=1000, segment_jitter_ms=300), KAFKA_4_0, now=T0, jitter=200)
    append(log, [v2([T0], 0)], T0)
    append(log, [v2([T0 + 800], 1)], T0)  # waited 800 = 1000 - 200: no roll
    assert len(log.segments) == 1
    append(log, [v2([T0 + 801], 2)], T0)  # 801 > 800: roll
    assert len(log.segments) == 2


def test_idx9_negative_wait_never_rolls_and_empty_segment_never_time_rolls() -> None:
    """IDX-9 [DERIVED]: an incoming max -1 (or far below the roll base) gives a negative wait and never
    time-rolls, however much wall time passed; an empty segment never time-rolls."""
    log = new_log(segment_ms=10)
    append(log, [v2([T0], 0)], T0)
    append(log, [v2([NO_TIMESTAMP], 1)], T0 + 10**9)
    append(log, [v2([5], 2)], T0 + 10**9)
    assert len(log.segments) == 1
    empty = new_log(segment_ms=10)
    assert not empty.active_segment.should_roll(T0 + 10**9, SIZE, 0, T0 + 10**9, empty.config, KAFKA_4_0)


def test_idx9_roll_base_first_append_vs_first_batch() -> None:
    """IDX-9: <= 4.0 the roll base is the max of the first *append* (a follower fetch spanning batches
    with maxima 100 and 900 -> 900); 4.1 uses the first batch's MaxTimestamp (100). An incoming max of
    1050 with segment.ms 500 rolls under 4.1 (950 > 500) but not under 4.0 (150)."""
    rolled = {}
    for profile in (KAFKA_4_0, KAFKA_4_1):
        log = new_log(profile, segment_ms=500)
        log.append_as_follower([v2([100], 0), v2([900], 1)], now=T0)
        assert log.active_segment.first_batch_timestamp() == (900 if profile is KAFKA_4_0 else 100)
        log.append_as_follower([v2([1050], 2)], now=T0)
        rolled[profile.name] = len(log.segments)
    assert rolled == {"kafka-4.0": 1, "kafka-4.1": 2}


def test_idx9_roll_base_without_timestamp_uses_wall_clock() -> None:
    """IDX-9: rollBase < 0 (first append had max -1) -> waited = now - created, even for a
    timestamped incoming batch (TV-10 shape)."""
    log = new_log(segment_ms=1000)
    append(log, [v2([NO_TIMESTAMP], 0)], T0)
    append(log, [v2([T0 + 10**6], 1)], T0 + 1000)  # now - created = 1000, not > 1000
    assert len(log.segments) == 1
    append(log, [v2([T0], 2)], T0 + 1001)
    assert len(log.segments) == 2


def test_idx9_0_10_0_rolls_on_wall_clock_only() -> None:
    """IDX-9: 0.10.0 (pre-KIP-33) rolls on now - created; record timestamps do not matter."""
    log = new_log(KAFKA_0_10_0, segment_ms=1000)
    batches = build_legacy([RecordSpec(T0 + 10**6, value=b"v")], magic=1, base_offset=0)
    log.append(batches, now=T0, max_timestamp=T0 + 10**6, offset_of_max_timestamp=0)
    later = build_legacy([RecordSpec(T0 + 10**7, value=b"v")], magic=1, base_offset=1)
    log.append(later, now=T0 + 1000, max_timestamp=T0 + 10**7, offset_of_max_timestamp=1)
    assert len(log.segments) == 1
    last = build_legacy([RecordSpec(0, value=b"v")], magic=1, base_offset=2)
    log.append(last, now=T0 + 1001, max_timestamp=0, offset_of_max_timestamp=2)
    assert len(log.segments) == 2


# ---------------------------------------------------------------------------------------------
# IDX-10 / IDX-12 / IDX-14


def _three_segments(retention_ms: int, timestamps: Sequence[int]) -> PartitionLog:
    log = new_log(retention_ms=retention_ms)
    for i, ts in enumerate(timestamps):
        if i:
            log.roll(T0)
        append(log, [v2([ts], i)], T0)
    return log


def test_idx10_strict_inequality_and_disable() -> None:
    """IDX-10: deletable iff now - largestTimestamp > retention.ms (strict); -1 disables."""
    log = _three_segments(100, [0, 0, 10**12])
    assert log.deletable_segments(100) == 0
    assert log.deletable_segments(101) == 2
    assert _three_segments(-1, [0, 0, 0]).deletable_segments(10**15) == 0


def test_idx10_prefix_stops_at_first_non_deletable_and_hw() -> None:
    """IDX-10: the walk stops at the first non-deletable segment (a future timestamp shields later
    ones), and each deleted segment's upper bound (next base, or LEO) must be <= the HW."""
    log = _three_segments(100, [0, 10**12, 0])
    assert log.deletable_segments(10**6) == 1
    log = _three_segments(100, [0, 0, 0])
    log.high_watermark = 1
    assert log.deletable_segments(10**6) == 1
    log.high_watermark = 3
    assert log.deletable_segments(10**6) == 3
    assert log.delete_retention_breached_segments(10**6) == 3
    # everything deleted: one empty segment at the LEO remains; it is never deleted.
    assert [(s.base_offset, s.is_empty()) for s in log.segments] == [(3, True)]
    assert log.log_start_offset == 3
    assert log.deletable_segments(10**15) == 0


def test_idx12_later_segment_may_hold_smaller_timestamps() -> None:
    """IDX-12 / LO-2: monotonicity is per segment; the lookup picks the first segment whose
    largestTimestamp >= target, so a smaller timestamp in a later segment is not found first."""
    log = _three_segments(-1, [500, 100, 600])
    assert list_offsets(log, 100, version=10, profile=KAFKA_4_0) == ListOffsetsAnswer(OK, 0, 500, 0)


def test_idx14_truncation_to_empty_resets_creation_and_roll_base() -> None:
    """IDX-14: truncating a segment to empty sets created = now and forgets rollBase; the entries at
    or above the point go."""
    log = new_log(segment_ms=1000, index_interval_bytes=0)
    append(log, [v2([T0], 0)], T0)
    append(log, [v2([T0 + 5], 1)], T0)
    seg = log.active_segment
    assert seg.time_index.entries == ((T0 + 5, 1),)
    log.truncate_to(1, now=T0 + 50)
    assert seg.time_index.entries == ()
    assert (seg.max_timestamp, seg.offset_of_max_timestamp) == (T0, 0)
    log.truncate_to(0, now=T0 + 70)
    assert (seg.created, seg.roll_base, seg.first_batch_timestamp()) == (T0 + 70, None, 2**63 - 1)


# ---------------------------------------------------------------------------------------------
# LO-1..LO-6, LO-9


def test_lo1_v0_accepts_only_latest_and_earliest_3_9() -> None:
    """LO-1 (3.9+, KAFKA-17331): v0 knows only -1/-2; -3/-4/-5 and unknown negatives at v0 get
    UNSUPPORTED_VERSION with -1/-1."""
    log = new_log(KAFKA_3_9)
    append(log, [v2([5], 0)], T0)
    for target in (-3, -4, -5, -7):
        got = list_offsets(log, target, version=0, profile=KAFKA_3_9, now=T0)
        assert got == ListOffsetsAnswer(ErrorCode.UNSUPPORTED_VERSION, -1, -1, -1)
    assert list_offsets(log, -1, version=0, profile=KAFKA_3_9, now=T0).offset == 1


def test_lo1_unknown_negative_searched_before_3_9() -> None:
    """LO-1 [DERIVED]: before 3.9 an unknown negative target (here -3 on 2.8, which has no
    MAX_TIMESTAMP) falls through to the timestamp search and matches the first record."""
    log = new_log(KAFKA_2_8)
    append(log, [v2([NO_TIMESTAMP, 7], 0)], T0)
    got = list_offsets(log, -3, version=6, profile=KAFKA_2_8)
    assert got == ListOffsetsAnswer(OK, 0, NO_TIMESTAMP, 0)


def test_lo2_searched_from_log_start_offset() -> None:
    """LO-2: the search starts at logStartOffset (after DeleteRecords the first segment may still hold
    older offsets): offset 0 matches but lies below the log start, so offset 2 is answered."""
    log = new_log()
    append(log, [v2([50, 10, 60], 0)], T0)
    log.log_start_offset = 2  # DeleteRecords (the model has no operation for it)
    assert list_offsets(log, 20, version=10, profile=KAFKA_4_0) == ListOffsetsAnswer(OK, 2, 60, 0)
    assert list_offsets(log, 61, version=10, profile=KAFKA_4_0) == NOT_FOUND


def test_lo3_cap_and_replica_requests() -> None:
    """LO-3: consumers see only offsets < HW (1.0+); replicas (id >= 0) up to the LEO; EARLIEST is not
    capped."""
    log = PartitionLog(TopicConfig(), KAFKA_4_0, now=T0)
    append(log, [v2([10], 0), v2([20], 1)], T0)
    log.high_watermark = 1
    assert list_offsets(log, 15, version=10, profile=KAFKA_4_0) == NOT_FOUND
    assert list_offsets(log, 15, version=10, profile=KAFKA_4_0, replica_id=1).offset == 1
    assert list_offsets(log, -3, version=10, profile=KAFKA_4_0) == NOT_FOUND
    assert list_offsets(log, -2, version=10, profile=KAFKA_4_0).offset == 0


@pytest.mark.parametrize(
    ("version", "error"), [(4, ErrorCode.LEADER_NOT_AVAILABLE), (7, ErrorCode.OFFSET_NOT_AVAILABLE)]
)
def test_lo3_fresh_leader_also_refuses_empty_answers(version: int, error: ErrorCode) -> None:
    """LO-3: with the current epoch starting above the HW, LATEST and capped lookups give
    OFFSET_NOT_AVAILABLE (v5+) / LEADER_NOT_AVAILABLE (< v5). Decision (ambiguous in the rules, taken
    from Kafka's Partition/ReplicaManager: `filter(offset < lastFetchable).orElse(throw)` and the 4.x
    "empty offset response scenario"): a lookup that finds *nothing* is refused too. EARLIEST never."""
    log = PartitionLog(TopicConfig(), KAFKA_4_0, now=T0)
    append(log, [v2([10], 0), v2([20], 1)], T0)
    log.high_watermark = 1
    log.assign_epoch(1, 2)  # became leader at LEO 2 with HW 1
    for target in (-1, 15, 99) + ((-3,) if version >= 7 else ()):
        assert list_offsets(log, target, version=version, profile=KAFKA_4_0).error is error
    assert list_offsets(log, 5, version=version, profile=KAFKA_4_0).offset == 0  # visible: answered
    assert list_offsets(log, -2, version=version, profile=KAFKA_4_0).error is OK
    assert list_offsets(log, 99, version=version, profile=KAFKA_4_0, replica_id=1) == NOT_FOUND


def test_lo3_fresh_leader_reachable_in_cluster() -> None:
    """LO-3 / REP-*: followers learn the HW from the fetch response (one round behind), so a follower
    elected right after copying new records is a fresh leader (epoch start = LEO > its HW) until
    its followers fetch again."""
    c = Cluster(profile=KAFKA_4_0, start_time=T0, auto_replicate=False)
    c.create_topic("t", TopicConfig(retention_ms=-1))
    c.produce("t", 0, build_batches([RecordSpec(T0, value=b"v")], magic=2))
    c.replicate("t", 0)  # followers copy offset 0; the response carried HW 0
    assert c.partition("t").replicas[1].high_watermark == 0
    c.elect_leader("t", 0, 1)
    assert c.list_offsets("t", 0, -1).error is ErrorCode.OFFSET_NOT_AVAILABLE
    assert c.list_offsets("t", 0, -1, version=4).error is ErrorCode.LEADER_NOT_AVAILABLE
    assert c.list_offsets("t", 0, T0).error is ErrorCode.OFFSET_NOT_AVAILABLE
    c.replicate("t", 0)  # the followers fetch from the new leader: HW reaches the epoch start
    assert c.list_offsets("t", 0, -1) == ListOffsetsAnswer(OK, 1, -1, 1)
    assert c.list_offsets("t", 0, T0) == ListOffsetsAnswer(OK, 0, T0, 0)


def test_lo4_lo5_epochs_tv13() -> None:
    """LO-4/LO-5 (TV-13): LATEST carries the current epoch, EARLIEST the earliest cached epoch only if
    it starts at or before the log start offset, EARLIEST_LOCAL the epoch of the log start offset,
    LATEST_TIERED -1/-1 without tiered storage."""
    log = new_log()
    log.assign_epoch(0, 0)
    append(log, [v2([T0], 0, epoch=0)], T0)
    append(log, [v2([T0 + 1], 1, epoch=1)], T0)
    assert list_offsets(log, -1, version=10, profile=KAFKA_4_0) == ListOffsetsAnswer(OK, 2, -1, 1)
    assert list_offsets(log, -2, version=10, profile=KAFKA_4_0) == ListOffsetsAnswer(OK, 0, -1, 0)
    assert list_offsets(log, -4, version=10, profile=KAFKA_4_0) == ListOffsetsAnswer(OK, 0, -1, 0)
    assert list_offsets(log, -5, version=10, profile=KAFKA_4_0) == ListOffsetsAnswer(OK, -1, -1, -1)
    assert list_offsets(log, T0 + 1, version=3, profile=KAFKA_4_0) == ListOffsetsAnswer(OK, 1, T0 + 1, -1)
    log.assign_epoch(2, 2)
    assert list_offsets(log, -1, version=10, profile=KAFKA_4_0) == ListOffsetsAnswer(OK, 2, -1, 2)
    fresh = new_log()
    append(fresh, [v2([1], 0, epoch=3)], T0)
    fresh.log_start_offset = 0
    fresh.assign_epoch(4, 0)  # cache's earliest entry starts at 0 <= log start
    assert list_offsets(fresh, -2, version=10, profile=KAFKA_4_0).leader_epoch == 4


def test_lo6_max_timestamp_edges() -> None:
    """LO-6 [DERIVED] edges: all v2 records with ts -1 -> (-1, first offset); v0-only -> -1/-1; after
    DeleteRecords the branch ignores logStartOffset and can answer an offset below it."""
    log = new_log()
    append(log, [v2([NO_TIMESTAMP, NO_TIMESTAMP], 0)], T0)
    assert list_offsets(log, -3, version=10, profile=KAFKA_4_0) == ListOffsetsAnswer(OK, 0, -1, 0)
    v0log = new_log(KAFKA_3_9)
    v0log.append(
        build_legacy([RecordSpec(0, value=b"v")] * 2, magic=0, base_offset=0),
        now=T0,
        max_timestamp=NO_TIMESTAMP,
        offset_of_max_timestamp=-1,
    )
    assert list_offsets(v0log, -3, version=9, profile=KAFKA_3_9) == NOT_FOUND
    deleted = new_log()
    append(deleted, [v2([90, 10, 20], 0)], T0)
    deleted.log_start_offset = 2
    assert list_offsets(deleted, -3, version=10, profile=KAFKA_4_0) == ListOffsetsAnswer(OK, 0, 90, 0)


def test_lo6_earliest_segment_and_batch_on_ties() -> None:
    """LO-6: the segment with the greatest max (earliest on ties), the earliest batch with that max,
    its first record with it."""
    log = new_log()
    append(log, [v2([5, 70], 0)], T0)
    log.roll(T0)
    append(log, [v2([70], 2), v2([3, 70], 3)], T0)
    assert list_offsets(log, -3, version=10, profile=KAFKA_4_0) == ListOffsetsAnswer(OK, 1, 70, 0)


def test_lo9_client_semantics() -> None:
    """LO-9: negative targets are refused client-side with the exact text; -1 offsets read as null."""
    text = r"^The target time for partition t-0 is -1\. The target time cannot be negative\.$"
    with pytest.raises(ValueError, match=text):
        check_client_target("t-0", -1)
    assert client_result(NOT_FOUND) is None
    assert client_result(ListOffsetsAnswer(OK, 3, 9, -1)) == (3, 9, -1)


# ---------------------------------------------------------------------------------------------
# REP-1..REP-4 through the cluster


def _lat_cluster() -> Cluster:
    c = Cluster(profile=KAFKA_4_0, start_time=T0)
    c.create_topic("t", TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME, retention_ms=-1))
    return c


def _one(ts: int = 1) -> tuple[AnyBatch, ...]:
    return build_batches([RecordSpec(ts, value=b"v")], magic=2, codec=Codec.NONE)


def test_rep2_log_append_time_from_current_leader_clock() -> None:
    """REP-2: LogAppendTime = the current leader's clock, no clamp; followers store it verbatim
    (REP-1) whatever their own clocks say."""
    c = _lat_cluster()
    c.set_clock(0, T0 + 500)
    c.set_clock(1, T0 - 10**6)
    c.produce("t", 0, _one())
    c.elect_leader("t", 0, 1)
    c.produce("t", 0, _one())
    for log in c.partition("t").replicas.values():
        assert [r.timestamp for r in log.records()] == [T0 + 500, T0 - 10**6]


def test_rep3_backward_step_effects() -> None:
    """REP-3 [DERIVED]: after a backward clock step the segment max and time index ignore the lower
    stamps; a lookup for a target between the two returns the smallest offset with ts >= target,
    which is the record appended *before* the step; MAX_TIMESTAMP answers the pre-step record."""
    c = _lat_cluster()
    config = TopicConfig(
        timestamp_type=TimestampType.LOG_APPEND_TIME, retention_ms=-1, index_interval_bytes=0
    )
    c.alter_config("t", config)
    c.produce("t", 0, _one())  # @T0
    c.set_clock(0, T0 + 1000)
    c.produce("t", 0, _one())  # @T0+1000
    c.set_clock(0, T0 + 100)
    c.produce("t", 0, _one())  # @T0+100 (step back)
    c.produce("t", 0, _one())  # @T0+100
    c.replicate("t", 0)
    seg = c.leader_log("t").active_segment
    assert (seg.max_timestamp, seg.offset_of_max_timestamp) == (T0 + 1000, 1)
    assert seg.time_index.entries == ((T0 + 1000, 1),)
    assert c.list_offsets("t", 0, T0 + 50) == ListOffsetsAnswer(OK, 1, T0 + 1000, 0)
    assert c.list_offsets("t", 0, -3) == ListOffsetsAnswer(OK, 1, T0 + 1000, 0)
    for log in c.partition("t").replicas.values():  # REP-1: same on every replica
        seg = log.active_segment
        assert (seg.max_timestamp, seg.offset_of_max_timestamp) == (T0 + 1000, 1)
