"""Time index, segments and retention (docs/rules.md, IDX-1..14), observed through the protocol: timestamp
lookups over many small segments with unordered timestamps, and time-based retention ticks.

The index itself is internal; what a client can see of it is the answer of a timestamp lookup (IDX-7/8
through LO-2) and which offsets retention removed (the log start offset, IDX-10).

Where a lookup starts inside a segment (IDX-5, IDX-7) is test_time_index_lookups'; when segments roll
(IDX-1, IDX-9) is test_segment_rolls'. The time-index clauses no suite checks (index files and entry
placement, truncation) say where they are checked instead (`kafka-conformance clauses --coverage`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.checks import check_equal
from conformance.judging.draws import Draws, draws
from conformance.judging.observables import Obs
from conformance.targets.implementation import Capability
from models.config import TopicConfig
from models.constants import MAGIC_V0, MAGIC_V2, Codec, TimestampType
from models.log import Segment
from models.profiles import Profile, RetentionBasis
from models.records import RecordSpec, build_batches
from strategies.timestamps import around, timestamps

from .helpers import (
    Suite,
    Twin,
    check_list_offsets,
    check_produce,
    lifted_after,
    list_offsets_versions,
    newest_fetch,
    produce_version_for,
    producible_codecs,
    producible_magics,
    suite_settings,
    unique_topic,
)

HOUR = 3_600_000


def _config(twin: Twin, profile: Profile, **kwargs: int) -> TopicConfig:
    after = lifted_after(twin, profile)
    return TopicConfig(after_max_ms=after, **kwargs)  # type: ignore[arg-type]


@pytest.mark.clause(
    "IDX.segment-search-first-ge",
    "IDX.monotonic-per-segment-only",
    "IDX.strictly-increasing",
)
@pytest.mark.requires(Capability.LIST_OFFSETS)
@given(data=draws())
@suite_settings(30)
def test_lookup_across_segments(suite: Suite, data: Draws) -> None:
    """IDX-7/8/12: with one-record appends into segments of a few hundred bytes and an index entry on
    almost every append, later segments hold smaller timestamps than earlier ones; every lookup still
    answers the first offset at or after the target in the first qualifying segment."""
    data, twin = suite.start(data)
    config = _config(
        twin, suite.profile, segment_bytes=data.draw(st.sampled_from((200, 400, 1000))), index_interval_bytes=1
    )
    topic = unique_topic("idx")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    magics = tuple(m for m in producible_magics(twin, suite.profile) if m != MAGIC_V0)
    # The default margin keeps every value clear of the one-hour bounds: a wall-clock broker's `now` is known only
    # within a bracket (and the adapter's clock tolerance), and this test is about the index, not the bounds.
    ts = timestamps(now, before=HOUR, after=HOUR, specials=False, mistakes=False)
    # Half the logs use a coarse clock (three distinct values), so appends tie with the segment max (IDX-3/5).
    coarse = data.draw(st.booleans(), label="coarse clock")
    values = around(now, 0, 2) if coarse else ts
    sent = data.draw(st.lists(values, min_size=1, max_size=30), label="timestamps")
    magic = data.draw(st.sampled_from(magics), label="magic")
    for i, t in enumerate(sent):
        request = build_batches([RecordSpec(t, str(i).encode(), b"v" * 20)], magic=magic)
        observed, expected = twin.produce(topic, request, produce_version=produce_version_for(magic, suite.profile))
        check_produce(observed, expected, config=config, error_clause="IDX.segment-search-first-ge")
    log = twin.ref.cluster.leader_log(topic)  # type: ignore[attr-defined]
    segments = len(log.segments)
    unordered = any(b < a for a, b in itertools.pairwise(sent))
    general = "IDX.monotonic-per-segment-only" if segments > 1 and unordered else "IDX.segment-search-first-ge"
    tied = _tied_maxima(log.segments)
    version = list_offsets_versions(suite.profile)[-1]
    for target in sorted({t + d for t in sent for d in (-1, 0, 1)}):
        got, want = twin.list_offsets(topic, target, version=version)
        # A target that several appends of one segment reached as its max is where an index entry with an
        # equal timestamp (or a max moved to the later batch) would send the search past the first record.
        clause = "IDX.strictly-increasing" if target in tied else general
        check_list_offsets(
            got,
            want,
            target=target,
            version=version,
            profile=suite.profile,
            clause=clause,
            context=f"{segments} segments, sent {sent}",
        )


@pytest.mark.clause("CMP.append-max-timestamp")
@pytest.mark.requires(Capability.LIST_OFFSETS)
@given(data=draws())
@suite_settings(20)
def test_append_max_feeds_segment_search(suite: Suite, data: Draws) -> None:
    """CMP-6 through IDX-8: an append's max timestamp (the largest record timestamp on a CreateTime topic, now on
    a LogAppendTime one) is what its segment's largest timestamp becomes, and a timestamp lookup searches the
    first segment whose largest timestamp reaches the target. Appends of several records whose largest
    timestamp is never the last one go into segments of a few hundred bytes, and lookups at each append's max
    (and one either side) answer as the model does: an implementation that feeds the segment another value (the
    last record's, the first's) skips that segment. Where MAX_TIMESTAMP (-3) is served, test_max_timestamp
    checks the same clause through it; this is how it is seen where it is not (before 3.0)."""
    data, twin = suite.start(data)
    types = [TimestampType.CREATE_TIME]
    if twin.has(Capability.LOG_APPEND_TIME):
        types.append(TimestampType.LOG_APPEND_TIME)
    timestamp_type = data.draw(st.sampled_from(types), label="topic type")
    segment_bytes = data.draw(st.sampled_from((300, 600)), label="segment.bytes")
    config = _config(twin, suite.profile, segment_bytes=segment_bytes, index_interval_bytes=1)
    config = replace(config, timestamp_type=timestamp_type)
    topic = unique_topic("append-max")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    magic = data.draw(st.sampled_from(tuple(m for m in producible_magics(twin, suite.profile) if m != MAGIC_V0)),
                      label="magic")  # fmt: skip
    codecs = tuple(c for c in producible_codecs(suite.impl.capabilities) if magic == MAGIC_V2 or c is not Codec.ZSTD)
    maxima: list[int] = []
    for i in range(data.draw(st.integers(2, 6), label="appends")):
        stamps = data.draw(st.lists(around(now, -HOUR // 2, HOUR // 2), min_size=2, max_size=5), label="timestamps")
        if stamps[-1] == max(stamps) and stamps.count(stamps[-1]) == 1:
            stamps[0], stamps[-1] = stamps[-1], stamps[0]  # the max never last: its offset is not the batch's end
        codec = data.draw(st.sampled_from(codecs), label="codec")
        request = build_batches([RecordSpec(t, b"%d-%d" % (i, j), b"v" * 20) for j, t in enumerate(stamps)],
                                magic=magic, codec=codec)  # fmt: skip
        observed, expected = twin.produce(topic, request, produce_version=produce_version_for(magic, suite.profile))
        check_produce(observed, expected, config=config, error_clause="CMP.append-max-timestamp")
        lat = timestamp_type is TimestampType.LOG_APPEND_TIME
        maxima.append(expected.log_append_time if lat else max(stamps))
        if twin.clock_control:
            leader = twin.leader(topic)
            twin.set_clock(leader, twin.clock(leader) + data.draw(st.integers(1, 60_000), label="clock step"))
    version = list_offsets_versions(suite.profile)[-1]
    segments = len(twin.ref.cluster.leader_log(topic).segments)  # type: ignore[attr-defined]
    for target in sorted({m + d for m in maxima for d in (-1, 0, 1)}):
        got, want = twin.list_offsets(topic, target, version=version)
        check_list_offsets(got, want, target=target, version=version, profile=suite.profile,
                           clause="CMP.append-max-timestamp",
                           context=f"{segments} segments, appends' maxima {maxima}")  # fmt: skip


def _tied_maxima(segments: Sequence[Segment]) -> set[int]:
    """The timestamps that a later append of a segment reached again as the segment's running max (IDX-3:
    no second index entry; IDX-5: the max keeps the earlier offset)."""
    tied: set[int] = set()
    for segment in segments:
        running = -1
        for batch in segment.batches:
            top = max((r.timestamp for r in batch.records()), default=-1)
            if top >= 0 and top == running:
                tied.add(top)
            running = max(running, top)
    return tied


def _shielded_ends(twin: Twin, topic: str, retention: int) -> set[int]:
    """IDX-10 on the model's log before a tick: the end offsets of the segments old enough to delete
    (largest timestamp older than retention.ms) that a younger segment before them shields."""
    log = twin.ref.cluster.leader_log(topic)  # type: ignore[attr-defined]
    now = twin.leader_clock(topic)
    ends: set[int] = set()
    shield = False
    for i, segment in enumerate(log.segments):
        upper = log.segments[i + 1].base_offset if i + 1 < len(log.segments) else log.log_end_offset
        old = now - segment.largest_timestamp() > retention
        if shield and old:
            ends.add(upper)
        shield = shield or not old
    return ends


def _log_range(twin: Twin, topic: str, profile: Profile) -> tuple[tuple[int, int], tuple[int, int]]:
    got, want = twin.fetch(topic, fetch_version=newest_fetch(profile))
    return (got.log_start_offset, got.high_watermark), (want.log_start_offset, want.high_watermark)


@pytest.mark.clause(
    "IDX.retention-by-largest-timestamp",
    "IDX.retention-prefix-rule",
    "IDX.retention-by-mtime",
    "LO.earliest-is-log-start",
)
@pytest.mark.requires(Capability.RETENTION, Capability.CLOCK_CONTROL)
@given(data=draws())
@suite_settings(50)
def test_retention(suite: Suite, data: Draws) -> None:
    """IDX-10 (TV-12): segments whose largest timestamp is older than retention.ms are deleted oldest
    first, and the first non-deletable segment (e.g. one with a future timestamp) shields later ones."""
    data, twin = suite.start(data)
    retention = data.draw(st.sampled_from((60_000, HOUR, 2 * HOUR)), label="retention.ms")
    # Two to ten one-record batches per segment: the more a segment holds, the likelier a retention frontier
    # falls inside it (old first batch, recent last one; IDX-10).
    segment_bytes = data.draw(st.sampled_from((300, 600, 1000)), label="segment.bytes")
    config = _config(twin, suite.profile, segment_bytes=segment_bytes, retention_ms=retention)
    topic = unique_topic("retention")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    magic = producible_magics(twin, suite.profile)[-1]
    ages = data.draw(st.lists(st.integers(-3 * HOUR, HOUR), min_size=1, max_size=20), label="ages")
    if data.draw(st.booleans(), label="backfill in order"):
        # A backfill sent oldest first: the retention frontier then falls inside a segment whose first batch
        # is old and whose last is not, which only the segment's largest timestamp decides (IDX-10).
        ages.sort()
    for i, age in enumerate(ages):
        request = build_batches([RecordSpec(now + age, str(i).encode(), b"v" * 40)], magic=magic)
        observed, expected = twin.produce(topic, request, produce_version=produce_version_for(magic, suite.profile))
        check_produce(observed, expected, config=config, error_clause="IDX.retention-by-largest-timestamp")
    # Time passes by about the retention period: exactly at it and one past (the test is strict, IDX-10),
    # by hours, or anything in between; every broker's clock moves together.
    advances = st.one_of(st.sampled_from((retention, retention + 1, 2 * HOUR, 3 * HOUR)), st.integers(0, 3 * HOUR))
    for _ in range(data.draw(st.integers(1, 3), label="ticks")):
        advance = data.draw(advances, label="advance")
        for broker in twin.brokers():
            twin.set_clock(broker, twin.clock(broker) + advance)
        shielded = _shielded_ends(twin, topic, retention)
        twin.retention_tick()
        observed_range, expected_range = _log_range(twin, topic, suite.profile)
        if suite.profile.retention_basis is RetentionBasis.MTIME:
            clause = "IDX.retention-by-mtime"
        elif observed_range[0] in shielded:
            # Deleted through a segment that is old enough but sits behind one that is not.
            clause = "IDX.retention-prefix-rule"
        else:
            clause = "IDX.retention-by-largest-timestamp"
        check_equal(clause, Obs.LOG_RANGE, observed_range, expected_range, f"retention.ms={retention} ages={ages}")
    if twin.has(Capability.LIST_OFFSETS):
        version = list_offsets_versions(suite.profile)[-1]
        observed_answer, expected_answer = twin.list_offsets(topic, -2, version=version)
        # The log range was compared above under the retention clause; EARLIEST must now answer its start.
        check_list_offsets(observed_answer, expected_answer, target=-2, version=version, profile=suite.profile)
    assert TimestampType.CREATE_TIME is config.timestamp_type


@pytest.mark.clause("IDX.retention-by-largest-timestamp")
@pytest.mark.requires(Capability.RETENTION, Capability.CLOCK_CONTROL)
@given(data=draws())
@suite_settings(20)
def test_retention_frontier_inside_a_segment(suite: Suite, data: Draws) -> None:
    """IDX-10 (TV-12) where the basis shows: a backfill sent oldest first fills several segments, then the
    clocks move so that the retention frontier falls inside one of them, past its first batch but not past
    its largest timestamp. That segment and every later one stay; only the segments before it go. Measuring
    a segment's age from its first batch (the roll base) or its smallest timestamp deletes it too."""
    data, twin = suite.start(data)
    retention = data.draw(st.sampled_from((60_000, HOUR)), label="retention.ms")
    config = _config(
        twin,
        suite.profile,
        segment_bytes=data.draw(st.sampled_from((300, 600)), label="segment.bytes"),
        retention_ms=retention,
    )
    topic = unique_topic("frontier")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    magic = producible_magics(twin, suite.profile)[-1]
    count = data.draw(st.integers(6, 16), label="records")
    gaps = data.draw(st.lists(st.integers(1, retention // 4), min_size=count, max_size=count), label="gaps")
    stamp = now - retention - sum(gaps)
    for i, gap in enumerate(gaps):
        stamp += gap
        request = build_batches([RecordSpec(stamp, str(i).encode(), b"v" * 40)], magic=magic)
        observed, expected = twin.produce(topic, request, produce_version=produce_version_for(magic, suite.profile))
        check_produce(observed, expected, config=config, error_clause="IDX.retention-by-largest-timestamp")
    log = twin.ref.cluster.leader_log(topic)  # type: ignore[attr-defined]
    spanning = [s for s in log.segments if len(s.batches) >= 2 and s.batches[0].max_timestamp < s.largest_timestamp()]
    segment = data.draw(st.sampled_from(spanning), label="segment the frontier falls in")
    # now - first > retention.ms >= now - largest: the first batch is expired, the segment is not (IDX-10).
    frontier_now = data.draw(
        st.integers(segment.batches[0].max_timestamp + retention + 1, segment.largest_timestamp() + retention),
        label="clock at the retention tick",
    )
    for broker in twin.brokers():
        twin.set_clock(broker, max(twin.clock(broker), frontier_now))
    twin.retention_tick()
    observed_range, expected_range = _log_range(twin, topic, suite.profile)
    check_equal(
        "IDX.retention-by-largest-timestamp",
        Obs.LOG_RANGE,
        observed_range,
        expected_range,
        f"retention.ms={retention} frontier in segment {segment.base_offset}",
    )


@pytest.mark.clause("IDX.retention-prefix-rule")
@pytest.mark.requires(Capability.RETENTION, Capability.CLOCK_CONTROL)
@given(data=draws())
@suite_settings(20)
def test_retention_stops_at_the_first_young_segment(suite: Suite, data: Draws) -> None:
    """IDX-10 (TV-12): retention deletes a prefix of the log. Young records come first, then a backfill
    older than retention.ms fills the later segments: the first segment is not old enough, so nothing
    behind it goes either, however old."""
    data, twin = suite.start(data)
    retention = data.draw(st.sampled_from((60_000, HOUR)), label="retention.ms")
    config = _config(
        twin,
        suite.profile,
        segment_bytes=data.draw(st.sampled_from((300, 600)), label="segment.bytes"),
        retention_ms=retention,
    )
    topic = unique_topic("prefix")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    magic = producible_magics(twin, suite.profile)[-1]
    young = data.draw(st.integers(2, 6), label="young records")
    old = data.draw(st.integers(4, 12), label="old records")
    stamps = [now] * young + [now - 3 * retention - i for i in range(old)]
    for i, stamp in enumerate(stamps):
        request = build_batches([RecordSpec(stamp, str(i).encode(), b"v" * 40)], magic=magic)
        observed, expected = twin.produce(topic, request, produce_version=produce_version_for(magic, suite.profile))
        check_produce(observed, expected, config=config, error_clause="IDX.retention-prefix-rule")
    advance = data.draw(st.integers(1, retention), label="clock advance")
    for broker in twin.brokers():
        twin.set_clock(broker, twin.clock(broker) + advance)
    twin.retention_tick()
    observed_range, expected_range = _log_range(twin, topic, suite.profile)
    check_equal(
        "IDX.retention-prefix-rule",
        Obs.LOG_RANGE,
        observed_range,
        expected_range,
        f"retention.ms={retention} young={young} old={old}",
    )
