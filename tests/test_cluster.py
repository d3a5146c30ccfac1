"""The cluster model: replication, leader failover and broker clocks (REP-1..4)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from models.cluster import Cluster, ClusterError
from models.codec import encode_batches
from models.config import TopicConfig
from models.constants import NOT_SERVED, Codec, ErrorCode, SpecialTarget, TimestampType
from models.profiles import PROFILES, get_profile
from models.records import AnyBatch, RecordSpec, build_batches, build_v2

T0 = 1_700_000_000_000


def _cluster(profile: str = "kafka-4.0", ts_type: TimestampType = TimestampType.CREATE_TIME) -> Cluster:
    c = Cluster(profile=get_profile(profile), start_time=T0)
    c.create_topic("t", TopicConfig(timestamp_type=ts_type, retention_ms=-1))
    return c


def _batch(
    *timestamps: int, magic: int = 2, codec: Codec = Codec.NONE, key: bytes | None = None
) -> tuple[AnyBatch, ...]:
    return build_batches([RecordSpec(ts, key, b"v") for ts in timestamps], magic=magic, codec=codec)


def test_followers_store_the_leaders_batches_verbatim() -> None:
    """REP-1: the leader's stored batches and every follower's are byte-identical."""
    c = _cluster(ts_type=TimestampType.LOG_APPEND_TIME)
    c.set_clock(1, T0 + 50_000)  # a follower whose clock is far ahead must not re-stamp
    assert c.produce("t", 0, _batch(T0 - 5, T0 - 1)).error is ErrorCode.NONE
    part = c.partition("t")
    leader_bytes = encode_batches(part.replicas[part.leader].batches())
    for log in part.replicas.values():
        assert encode_batches(log.batches()) == leader_bytes


def test_log_append_time_comes_from_the_current_leaders_clock_without_clamp() -> None:
    """REP-2: after failover to a broker whose clock is behind, LogAppendTime goes backwards."""
    c = _cluster(ts_type=TimestampType.LOG_APPEND_TIME)
    c.set_clock(0, T0 + 10_000)
    c.set_clock(1, T0)
    first = c.produce("t", 0, _batch(T0))
    assert first.log_append_time == T0 + 10_000
    c.elect_leader("t", 0, 1)
    second = c.produce("t", 0, _batch(T0))
    assert second.log_append_time == T0
    records = c.fetch("t", 0, 0).records()
    assert [r.timestamp for r in records] == [T0 + 10_000, T0]
    assert all(r.timestamp_type is TimestampType.LOG_APPEND_TIME for r in records)


def test_clock_stepped_backwards_is_not_clamped() -> None:
    """REP-2/REP-3: a backward step on the leader gives a smaller LogAppendTime; the max stays."""
    c = _cluster(ts_type=TimestampType.LOG_APPEND_TIME)
    c.produce("t", 0, _batch(1))
    c.set_clock(0, T0 - 60_000)
    resp = c.produce("t", 0, _batch(1))
    assert resp.log_append_time == T0 - 60_000
    max_ts = c.list_offsets("t", 0, SpecialTarget.MAX_TIMESTAMP, version=9)
    assert (max_ts.offset, max_ts.timestamp) == (0, T0)


@given(
    clocks=st.lists(st.integers(T0 - 10**6, T0 + 10**6), min_size=3, max_size=3),
    steps=st.lists(st.tuples(st.sampled_from(["produce", "elect", "clock"]), st.integers(0, 2)), max_size=12),
    lat=st.booleans(),
)
def test_failover_never_restamps_replicated_records(
    clocks: list[int], steps: list[tuple[str, int]], lat: bool
) -> None:
    """REP-1/REP-2: a record's timestamp, once replicated, is the same on every replica and after
    every later leader change."""
    c = Cluster(profile=get_profile("kafka-4.0"), start_time=T0)
    ts_type = TimestampType.LOG_APPEND_TIME if lat else TimestampType.CREATE_TIME
    c.create_topic("t", TopicConfig(timestamp_type=ts_type, retention_ms=-1, after_max_ms=10**9))
    for b, clock in enumerate(clocks):
        c.set_clock(b, clock)
    seen: dict[int, int] = {}
    for op, arg in steps:
        if op == "produce":
            c.produce("t", 0, _batch(T0 + arg, T0 - arg))
        elif op == "elect":
            c.elect_leader("t", 0, arg)
        else:
            c.advance_clock(arg, -7_000)
        for log in c.partition("t").replicas.values():
            for r in log.records():
                assert seen.setdefault(r.offset, r.timestamp) == r.timestamp


def test_failover_to_a_lagging_follower_truncates_the_others() -> None:
    """IDX-14/REP-4: unreplicated records on the old leader are truncated after failover."""
    c = Cluster(profile=get_profile("kafka-4.0"), start_time=T0, auto_replicate=False)
    c.create_topic("t", TopicConfig(retention_ms=-1))
    c.produce("t", 0, _batch(T0))
    c.replicate("t", 0)
    c.produce("t", 0, _batch(T0 + 1))  # only on the leader
    assert c.partition("t").replicas[0].log_end_offset == 2
    # Not replicated: invisible to consumers (LO-3 cap below the high watermark).
    assert c.list_offsets("t", 0, T0 + 1).offset == -1
    c.elect_leader("t", 0, 1)
    assert all(log.log_end_offset == 1 for log in c.partition("t").replicas.values())


def test_corrupt_bytes_are_corrupt_message() -> None:
    c = _cluster()
    assert c.produce_bytes("t", 0, b"\x00" * 5).error is ErrorCode.CORRUPT_MESSAGE


def test_unknown_topic_and_broker_are_clear_errors() -> None:
    c = _cluster()
    for call in (lambda: c.partition("nope"), lambda: c.set_clock(9, 0), lambda: c.elect_leader("t", 0, 7)):
        try:
            call()
        except ClusterError as exc:
            assert str(exc)
        else:  # pragma: no cover - the assertion message is the point
            raise AssertionError("expected ClusterError")


def test_every_profile_can_run_a_produce_and_lookup() -> None:
    for name, profile in PROFILES.items():
        c = Cluster(profile=profile, start_time=T0)
        c.create_topic("t", TopicConfig(retention_ms=-1))
        magic = min(2, profile.max_magic)
        resp = c.produce("t", 0, _batch(T0 - 2, T0 - 1, magic=magic))
        assert resp.error is ErrorCode.NONE, (name, resp)
        if profile.list_offsets_versions[1] >= 1:
            answer = c.list_offsets("t", 0, T0 - 1, version=1)
            assert answer.offset == (1 if magic >= 1 else -1), (name, answer)


def test_compact_only_topics_are_not_deleted_by_time_retention() -> None:
    """IDX-10: time-based retention applies only when cleanup.policy contains delete."""
    for compacted, deletes, expect_deleted in ((True, None, False), (True, True, True), (False, None, True)):
        c = Cluster(profile=get_profile("kafka-4.0"), broker_ids=(0,), start_time=T0)
        config = TopicConfig(
            retention_ms=1000, segment_ms=10, compacted=compacted, retention_deletes=deletes
        )
        c.create_topic("t", config)
        c.produce("t", 0, _batch(T0 - 10, key=b"k"))
        c.produce("t", 0, _batch(T0 + 100, key=b"k"))  # rolls: waited > segment.ms
        c.set_clock(0, T0 + 5000)
        assert (c.tick() > 0) is expect_deleted, (compacted, deletes)


def test_fresh_leader_refusal_arrives_with_kip_207() -> None:
    """LO-3: before 2.2 (KIP-207) a fresh leader answers from its log; from 2.2 it refuses until its
    high watermark reaches the start of its epoch."""
    answers = {}
    for name in ("kafka-0.10", "kafka-2.8"):
        c = Cluster(profile=get_profile(name), start_time=T0, auto_replicate=False)
        c.create_topic("t", TopicConfig(retention_ms=-1))
        c.produce("t", 0, _batch(T0, magic=1))
        c.replicate("t", 0)  # followers copy offset 0; the response carried HW 0
        c.elect_leader("t", 0, 1)
        answers[name] = c.list_offsets("t", 0, SpecialTarget.LATEST, version=1).error
    assert answers == {"kafka-0.10": ErrorCode.NONE, "kafka-2.8": ErrorCode.LEADER_NOT_AVAILABLE}


def _idempotent(ts: int, seq: int = 0) -> tuple[AnyBatch, ...]:
    return (build_v2([RecordSpec(ts, None, b"v")], producer_id=7, producer_epoch=0, base_sequence=seq),)


def test_idempotent_retry_returns_the_cached_batch_max_as_log_append_time() -> None:
    """VAL-12: a retried duplicate is not appended again; its response carries the stored batch's
    offset and MaxTimestamp as log_append_time, even on a CreateTime topic."""
    c = _cluster()
    first = c.produce("t", 0, _idempotent(T0 - 5))
    assert (first.base_offset, first.log_append_time) == (0, -1)
    retry = c.produce("t", 0, _idempotent(T0 - 5))
    assert (retry.error, retry.base_offset, retry.log_append_time) == (ErrorCode.NONE, 0, T0 - 5)
    assert c.leader_log("t").log_end_offset == 1
    nxt = c.produce("t", 0, _idempotent(T0 - 4, seq=1))
    assert (nxt.base_offset, nxt.log_append_time) == (1, -1)


def test_validation_runs_before_duplicate_detection() -> None:
    """VAL-12: a retry whose timestamp has fallen out of the window is rejected, not de-duplicated."""
    c = _cluster()  # kafka-4.0: after.max.ms = 1 h; before unbounded, so use a tight before bound
    c.alter_config("t", TopicConfig(retention_ms=-1, before_max_ms=1000))
    assert c.produce("t", 0, _idempotent(T0)).error is ErrorCode.NONE
    c.advance_clock(0, 5000)
    assert c.produce("t", 0, _idempotent(T0)).error is ErrorCode.INVALID_TIMESTAMP


def test_produce_response_carries_only_the_fields_of_its_version() -> None:
    """VAL-11: record_errors and error_message from v8 (KIP-467); below, only the error code."""
    c = _cluster()
    c.alter_config("t", TopicConfig(retention_ms=-1, before_max_ms=1000))
    old = c.produce("t", 0, _batch(T0 - 5000), produce_version=7)
    new = c.produce("t", 0, _batch(T0 - 5000), produce_version=8)
    assert old.error is new.error is ErrorCode.INVALID_TIMESTAMP
    assert (old.error_message, old.record_errors) == (None, ())
    assert new.error_message and [e.batch_index for e in new.record_errors] == [0]


# Found by the broker-level differential (kafka-conformance broker-differential) on Apache Kafka.


def test_a_removed_fetch_version_is_refused_before_the_offset_is_looked_at() -> None:
    """CNV-7 (found by the differential on 4.0.2): Fetch v3 at an offset past the log end gets no answer (the
    header is refused), not OFFSET_OUT_OF_RANGE."""
    cluster = Cluster(profile=get_profile("kafka-4.0"), broker_ids=(0,))
    cluster.create_topic("t", TopicConfig())
    assert cluster.fetch("t", 0, 99, fetch_version=3).error is NOT_SERVED
    assert cluster.fetch("t", 0, 99, fetch_version=4).error is ErrorCode.OFFSET_OUT_OF_RANGE
    assert cluster.list_offsets("t", 0, -1, version=0).error is NOT_SERVED


def test_a_fetch_below_v5_carries_no_log_start_offset() -> None:
    cluster = Cluster(profile=get_profile("kafka-3.9"), broker_ids=(0,))
    cluster.create_topic("t", TopicConfig())
    assert cluster.fetch("t", 0, 0, fetch_version=4).log_start_offset == -1  # FetchResponse.json: v5+
    assert cluster.fetch("t", 0, 0, fetch_version=5).log_start_offset == 0


def test_a_refusal_of_the_conversion_path_comes_before_the_offset_and_carries_no_offsets() -> None:
    """CNV-5 (found by the differential on 3.9.1): KafkaApis.maybeConvertFetchedData runs on every partition's
    answer, so a zstd topic below Fetch v10 and a disabled down-conversion at v0-v3 refuse an out-of-range fetch
    too, and a refusal has high watermark and log start offset -1 (FetchResponse.partitionResponse)."""
    cluster = Cluster(profile=get_profile("kafka-3.9"), broker_ids=(0,))
    cluster.create_topic("z", TopicConfig(compression_type="zstd"))
    cluster.create_topic("d", TopicConfig(downconversion_enable=False))
    for topic in ("z", "d"):
        cluster.produce(topic, 0, [build_v2([RecordSpec(T0)])], produce_version=9)
    zstd = cluster.fetch("z", 0, 99, fetch_version=9)
    assert (zstd.error, zstd.high_watermark, zstd.log_start_offset) == (ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, -1, -1)
    assert cluster.fetch("z", 0, 0, fetch_version=9).high_watermark == -1
    disabled = cluster.fetch("d", 0, 99, fetch_version=3)
    assert (disabled.error, disabled.high_watermark) == (ErrorCode.UNSUPPORTED_VERSION, -1)
    assert cluster.fetch("d", 0, 99, fetch_version=4).error is ErrorCode.OFFSET_OUT_OF_RANGE
    assert cluster.fetch("d", 0, 0, fetch_version=4).high_watermark == 1
