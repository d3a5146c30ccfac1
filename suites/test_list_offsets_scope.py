"""What a ListOffsets answer may reach (docs/rules.md, LO-2/3/4/7/8 with IDX-6/10): the visibility cap, the
isolation level, the log start offset, the segments a timestamp search looks at, the topic's message format
and the legacy v0 answer. test_list_offsets asks which record answers; this module asks where the search
stops.

Limits of what the suites can arrange (catalogue `checked_elsewhere` says where the rest is checked): every
produce is acks=all, so the high watermark equals the log end offset whenever a client asks, and a found
offset at or beyond it can only be an offset that holds no record. LO.visibility-cap and
LO.max-timestamp-capped are checked on what that leaves: no answer reaches the high watermark the
implementation itself reports. Without open transactions the last stable offset is the high watermark, so
LO.read-committed-lso is checked as "read_committed answers as read_uncommitted does".
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.capabilities import Capability
from conformance.judging.checks import check_equal, check_true
from conformance.judging.draws import Draws, draws
from conformance.judging.observables import Obs
from models.config import TopicConfig
from models.constants import MAGIC_V0, MAGIC_V1, IsolationLevel, SpecialTarget
from models.list_offsets import ListOffsetsAnswer
from models.log import PartitionLog
from models.profiles import Profile
from models.records import RecordSpec, build_batches
from strategies.timestamps import around

from .helpers import (
    Suite,
    Twin,
    check_list_offsets,
    check_list_offsets_under,
    lifted_after,
    list_offsets_versions,
    newest_fetch,
    producible_magics,
    segment_clause,
    suite_settings,
    timestampless_segments,
    unique_topic,
)

HOUR = 3_600_000
# A wall-clock broker dates its segment files itself: targets this close to the model's reading of that
# date are not asked there (the two readings differ by the request's round trip).
MTIME_TOLERANCE_MS = 10_000


def _leader_log(twin: Twin, topic: str) -> PartitionLog:
    return twin.ref.cluster.leader_log(topic)  # type: ignore[attr-defined, no-any-return]


def _produce_stamps(
    twin: Twin, topic: str, profile: Profile, stamps: list[int], magic: int, key: str, *, clause: str
) -> None:
    """One uncompressed batch of `magic` holding `stamps`, produced and compared (its error under `clause`)."""
    specs = [RecordSpec(t, f"{key}-{i}".encode(), b"v" * 16) for i, t in enumerate(stamps)]
    request = build_batches(specs, magic=magic)
    twin.produce_checked(topic, request, profile=profile, error_clause=clause)


def _small_log(twin: Twin, data: Draws, profile: Profile, prefix: str) -> tuple[str, list[int]]:
    """A CreateTime topic in small segments holding up to a dozen one-to-three-record batches (maybe none),
    timestamps within an hour of now, ties included; the sent timestamps."""
    config = TopicConfig(after_max_ms=lifted_after(twin, profile), segment_bytes=data.draw(
        st.sampled_from((256, 1024, 1 << 30)), label="segment.bytes"))
    topic, now = twin.new_topic(prefix, config)
    magic = data.draw(st.sampled_from(tuple(m for m in producible_magics(twin, profile) if m >= MAGIC_V1)),
                      label="magic")
    sent: list[int] = []
    for index in range(data.draw(st.integers(0, 12), label="requests")):
        stamps = data.draw(st.lists(around(now, -HOUR, HOUR // 2), min_size=1, max_size=3), label="timestamps")
        _produce_stamps(twin, topic, profile, stamps, magic, f"r{index}", clause="LO.first-ge-target")
        sent.extend(stamps)
    return topic, sent


def _targets(sent: list[int], now: int) -> list[int]:
    return sorted({max(t + d, 0) for t in sent for d in (-1, 0, 1)} | {0, now + HOUR})


# ------------------------------------------------------------------------------------ LO-3 visibility cap


def _check_below_high_watermark(
    clause: str, answer: ListOffsetsAnswer, high_watermark: int, context: str
) -> None:
    """LO-3: an answer to a capped target is -1 or an offset below the high watermark the implementation
    itself reports (whatever record it names; that is the lookup clauses' business)."""
    check_true(
        clause,
        Obs.LIST_OFFSETS_OFFSET,
        answer.offset == -1 or answer.offset < high_watermark,
        answer.offset,
        f"{context} high watermark {high_watermark}",
        expectation=f"-1, or an offset below the high watermark {high_watermark}",
    )


@pytest.mark.clause("LO.visibility-cap", "LO.max-timestamp-capped")
@pytest.mark.requires(Capability.LIST_OFFSETS, Capability.FETCH)
@given(data=draws())
@suite_settings(30)
def test_answers_stay_below_high_watermark(suite: Suite, data: Draws) -> None:
    """LO-3 (and LO-6 for MAX_TIMESTAMP): a timestamp lookup or MAX_TIMESTAMP answers an offset below the
    high watermark, or -1/-1: never the high watermark itself, e.g. for a target after every record or on
    an empty log (the pre-KIP-79 "log end offset" answer)."""
    data, twin = suite.start(data)
    topic, sent = _small_log(twin, data, suite.profile, "cap")
    now = twin.leader_clock(topic)
    high_watermark = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))[0].high_watermark
    max_versions = [] if not twin.has(Capability.MAX_TIMESTAMP_LOOKUP) else [
        v for v in list_offsets_versions(suite.profile) if v >= (suite.profile.min_version_for_target(-3) or 99)]
    for version in list_offsets_versions(suite.profile):
        for target in _targets(sent, now):
            observed, expected = twin.list_offsets(topic, target, version=version)
            _check_below_high_watermark("LO.visibility-cap", observed, high_watermark, f"target {target} v{version}")
            check_list_offsets(observed, expected, target=target, version=version, profile=suite.profile)
    for version in max_versions:
        observed, expected = twin.list_offsets(topic, SpecialTarget.MAX_TIMESTAMP, version=version)
        _check_below_high_watermark("LO.max-timestamp-capped", observed, high_watermark, f"MAX_TIMESTAMP v{version}")
        check_list_offsets(observed, expected, target=SpecialTarget.MAX_TIMESTAMP, version=version,
                           profile=suite.profile, facts=twin.list_offsets_facts(topic))


# ------------------------------------------------------------------------------------ LO-3/LO-4 isolation


@pytest.mark.clause("LO.read-committed-lso")
@pytest.mark.requires(Capability.LIST_OFFSETS)
@given(data=draws())
@suite_settings(20)
def test_read_committed(suite: Suite, data: Draws) -> None:
    """LO-3/LO-4 (KIP-98): with isolation read_committed (ListOffsets v2+) LATEST answers the last stable
    offset and lookups are capped there. Nothing here is transactional, so the last stable offset is the
    high watermark: every answer is the read_uncommitted one."""
    data, twin = suite.start(data)
    versions = [v for v in list_offsets_versions(suite.profile) if v >= 2]
    if not versions:
        pytest.skip("N/A: isolation levels need ListOffsets v2 (KIP-98)")
    topic, sent = _small_log(twin, data, suite.profile, "committed")
    now = twin.leader_clock(topic)
    targets = [SpecialTarget.LATEST, SpecialTarget.EARLIEST, *_targets(sent, now)]
    for version in versions:
        for target in targets:
            observed, expected = twin.list_offsets(
                topic, target, version=version, isolation=IsolationLevel.READ_COMMITTED
            )
            check_list_offsets(
                observed,
                expected,
                target=target,
                version=version,
                profile=suite.profile,
                clause="LO.read-committed-lso",
                context="read_committed",
            )


# ------------------------------------------------------------------------------------ LO-2 / IDX-6 segments


@pytest.mark.clause("LO.first-qualifying-segment", "IDX.largest-timestamp-mtime")
@pytest.mark.requires(Capability.LIST_OFFSETS, Capability.FILE_TIMES)
@given(data=draws())
@suite_settings(30)
def test_segment_without_timestamps(suite: Suite, data: Draws) -> None:
    """LO-2 / IDX-6: records sent with timestamp -1 fill the first segments; later segments hold records
    stamped before and after that time. A segment without timestamps is dated by its file's mtime, and a
    search looks only in the first segment dated at or after the target: a target at or before that date
    stops there and finds nothing, although later segments hold matching records; a later target passes it."""
    data, twin = suite.start(data)
    config = TopicConfig(
        after_max_ms=lifted_after(twin, suite.profile),
        segment_bytes=data.draw(st.sampled_from((200, 400)), label="segment.bytes"),
    )
    topic = unique_topic("untimed")
    twin.create_topic(topic, config)
    magic = data.draw(
        st.sampled_from(tuple(m for m in producible_magics(twin, suite.profile) if m >= MAGIC_V1)), label="magic"
    )
    for index in range(data.draw(st.integers(2, 5), label="untimed requests")):
        count = data.draw(st.integers(1, 4), label="records")
        _produce_stamps(
            twin, topic, suite.profile, [-1] * count, magic, f"u{index}", clause="LO.first-qualifying-segment"
        )
    if twin.clock_control:
        leader = twin.leader(topic)
        twin.set_clock(leader, twin.clock(leader) + data.draw(st.integers(1, HOUR), label="clock step"))
    now = twin.leader_clock(topic)
    margin = 0 if twin.clock_control else MTIME_TOLERANCE_MS
    # An hour either side of now; 4.0's default after-bound (1 h) where the target cannot lift it.
    stamps = around(now, -2 * HOUR, HOUR // 2).filter(lambda t: abs(t - now) > margin)
    sent: list[int] = []
    for index in range(data.draw(st.integers(1, 5), label="timed requests")):
        request = data.draw(st.lists(stamps, min_size=1, max_size=4), label="timestamps")
        _produce_stamps(twin, topic, suite.profile, request, magic, f"t{index}", clause="LO.first-ge-target")
        sent.extend(request)
    if twin.clock_control and data.draw(st.booleans(), label="clock moves on before the lookups"):
        # A broker that dates a segment without timestamps by its current clock instead of the file's mtime
        # now stops there for targets between the two.
        leader = twin.leader(topic)
        twin.set_clock(leader, twin.clock(leader) + 2 * HOUR)
    log = _leader_log(twin, topic)
    dates = [log.segments[i].last_modified for i in timestampless_segments(log)]
    targets = sorted({t + d for t in sent for d in (-1, 0, 1)} | {d + e for d in dates for e in (0, 1)})
    targets = [t for t in targets if t >= 0 and all(abs(t - d) > margin for d in dates)]
    for version in list_offsets_versions(suite.profile):
        for target in targets:
            observed, expected = twin.list_offsets(topic, target, version=version)
            check_list_offsets_under(
                observed,
                expected,
                target=target,
                version=version,
                profile=suite.profile,
                clause=segment_clause(log, target),
                context=f"segment dates {dates}",
            )


# ------------------------------------------------------------------------------------ LO-2 log start


@pytest.mark.clause("LO.search-from-log-start")
@pytest.mark.requires(Capability.LIST_OFFSETS, Capability.RETENTION, Capability.CLOCK_CONTROL)
@given(data=draws())
@suite_settings(30)
def test_lookup_after_retention(suite: Suite, data: Draws) -> None:
    """LO-2: after retention deleted the oldest segments (IDX-10) a timestamp lookup searches from the new
    log start offset: a target that only deleted records matched before now answers the first retained
    record at or after it, never an offset below the log start."""
    data, twin = suite.start(data)
    retention = data.draw(st.sampled_from((60_000, HOUR)), label="retention.ms")
    config = TopicConfig(
        after_max_ms=lifted_after(twin, suite.profile),
        retention_ms=retention,
        segment_bytes=data.draw(st.sampled_from((300, 600)), label="segment.bytes"),
    )
    topic = unique_topic("from-start")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    magic = producible_magics(twin, suite.profile)[-1]
    # Old records first (some of them deleted by the tick below), then records young enough to stay; the
    # young ones repeat old timestamps now and then, so a target matches on both sides of the log start.
    old = data.draw(st.lists(around(now, -4 * retention, -2 * retention), min_size=2, max_size=12), label="old")
    young = data.draw(
        st.lists(st.one_of(st.sampled_from(old), around(now, -retention // 2, 0)), min_size=1, max_size=6),
        label="young",
    )
    for index, stamp in enumerate([*old, *young]):
        _produce_stamps(twin, topic, suite.profile, [stamp], magic, f"s{index}", clause="LO.search-from-log-start")
    advance = data.draw(st.integers(retention // 2, retention), label="clock advance")
    for broker in twin.brokers():
        twin.set_clock(broker, twin.clock(broker) + advance)
    log = _leader_log(twin, topic)
    before = [r.timestamp for s in log.segments for r in s.records()]
    twin.retention_tick()
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    check_equal(
        "LO.search-from-log-start",
        Obs.LOG_RANGE,
        (got.log_start_offset, got.high_watermark),
        (want.log_start_offset, want.high_watermark),
        "after a retention tick",
    )
    deleted = before[: len(before) - len([r for s in log.segments for r in s.records()])]
    reach = max(deleted, default=-1)
    for version in list_offsets_versions(suite.profile):
        for target in sorted({max(t + d, 0) for t in [*old, *young] for d in (-1, 0, 1)}):
            observed, expected = twin.list_offsets(topic, target, version=version)
            # A target some deleted record matched is where a search from offset 0 answers below the start.
            clause = "LO.search-from-log-start" if target <= reach else None
            check_list_offsets(
                observed,
                expected,
                target=target,
                version=version,
                profile=suite.profile,
                clause=clause,
                context=f"log start {want.log_start_offset}",
            )


# ------------------------------------------------------------------------------------ LO-8 old formats


@pytest.mark.clause("LO.unsupported-for-message-format")
@pytest.mark.requires(Capability.LIST_OFFSETS, Capability.PRODUCE_LEGACY)
@given(data=draws())
@suite_settings(15)
def test_lookup_on_v0_format(suite: Suite, data: Draws) -> None:
    """LO-8: on a topic whose message.format.version is below 0.10.0 (stored as v0, no timestamps) a
    timestamp lookup fails with UNSUPPORTED_FOR_MESSAGE_FORMAT (43); LATEST and EARLIEST still answer."""
    data = suite.draws(data)
    if not suite.profile.honours_message_format_version:
        pytest.skip("N/A: message.format.version is ignored from 3.0 (KIP-724): every topic stores v2")
    twin = suite.twin()
    topic = unique_topic("v0-format")
    twin.create_topic(topic, TopicConfig(message_format_magic=MAGIC_V0))
    now = twin.leader_clock(topic)
    sent: list[int] = []
    for index in range(data.draw(st.integers(0, 3), label="requests")):
        stamps = data.draw(st.lists(around(now, -HOUR, 0), min_size=1, max_size=3), label="timestamps")
        magic = data.draw(st.sampled_from((MAGIC_V0, MAGIC_V1)), label="magic")
        _produce_stamps(
            twin, topic, suite.profile, stamps, magic, f"r{index}", clause="LO.unsupported-for-message-format"
        )
        sent.extend(stamps)
    for version in list_offsets_versions(suite.profile):
        for target in [SpecialTarget.LATEST, SpecialTarget.EARLIEST, *_targets(sent, now)]:
            observed, expected = twin.list_offsets(topic, target, version=version)
            clause = "LO.unsupported-for-message-format" if target >= 0 else None
            check_list_offsets_under(
                observed, expected, target=target, version=version, profile=suite.profile, clause=clause
            )


# ------------------------------------------------------------------------------------ LO-7 ListOffsets v0


@pytest.mark.clause("LO.v0-segment-offsets")
@pytest.mark.requires(Capability.CLOCK_CONTROL, Capability.FILE_TIMES)  # v0 chooses segments by their file times
@given(data=draws())
@suite_settings(20)
def test_list_offsets_v0(suite: Suite, data: Draws) -> None:
    """LO-7: ListOffsets v0 answers segment base offsets dated by their files' mtimes, never an offset
    inside a segment: LATEST the log end offset, EARLIEST the log start, a time the newest segment (or the
    log end, dated now) last written at or before it. The segments are written at distinct broker times."""
    data = suite.draws(data)
    if suite.profile.list_offsets_versions[0] != 0:
        pytest.skip("N/A: ListOffsets v0 is not served (removed in 4.0)")
    twin = suite.twin()
    config = TopicConfig(
        after_max_ms=lifted_after(twin, suite.profile),
        segment_bytes=data.draw(st.sampled_from((200, 400)), label="segment.bytes"),
    )
    topic = unique_topic("v0-lookup")
    twin.create_topic(topic, config)
    magic = producible_magics(twin, suite.profile)[-1]
    leader = twin.leader(topic)
    for index in range(data.draw(st.integers(0, 8), label="requests")):
        twin.set_clock(leader, twin.clock(leader) + data.draw(st.integers(1, 60_000), label="clock step"))
        now = twin.leader_clock(topic)
        _produce_stamps(
            twin,
            topic,
            suite.profile,
            [now] * data.draw(st.integers(1, 3), label="records"),
            magic,
            f"r{index}",
            clause="LO.v0-segment-offsets",
        )
    twin.set_clock(leader, twin.clock(leader) + data.draw(st.integers(0, 60_000), label="clock step"))
    log = _leader_log(twin, topic)
    dates = sorted({s.last_modified for s in log.segments} | {twin.clock(leader)})
    moments = sorted({max(d + e, 0) for d in dates for e in (-1, 0, 1)})
    targets = [SpecialTarget.LATEST, SpecialTarget.EARLIEST, *moments]
    for target in targets:
        observed, expected = twin.list_offsets(topic, target, version=0)
        check_equal("LO.v0-segment-offsets", Obs.LIST_OFFSETS_ERROR, observed.error, expected.error, f"target {target}")
        check_equal(
            "LO.v0-segment-offsets",
            Obs.LIST_OFFSETS_OFFSET,
            observed.offset,
            expected.offset,
            f"target {target}, segments {[(s.base_offset, s.last_modified) for s in log.segments]}",
        )
