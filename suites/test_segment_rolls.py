"""When a segment rolls (docs/rules.md, IDX-1 and IDX-9), seen through time-based retention (IDX-10).

Segment boundaries are internal, but retention deletes whole segments: after a tick the log start offset is
the base offset of the first segment holding a record young enough to keep. So a log whose records are
spread in time, ticked with the retention frontier falling among them, shows where its segments begin.
Each example picks what makes the segments roll and compares the log range after the tick under that
rule's clause:

- record timestamps (IDX.roll-by-first-batch): the age is the incoming max minus the first batch's max;
- records without timestamps after a timestamped first one (IDX.future-first-timestamp-blocks-roll): an
  incoming max of -1 minus the roll base is negative, so they never time-roll the segment, however long the
  broker clock runs (the far-future half of that clause shields every later segment from retention and
  answers every lookup with itself, so it shows nothing here);
- records without timestamps (IDX.roll-by-age-without-timestamps): the broker clock's age of the segment;
- a tiny time index (IDX.full-index-forces-roll): full at capacity - 1 entries, which forces a roll;
- a compacted topic (IDX.compacted-roll-max-lag): the threshold is min(max.compaction.lag.ms, segment.ms).

Retention needs the suite to set broker clocks (RETENTION, CLOCK_CONTROL).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.checks import check_equal
from conformance.judging.draws import Draws, draws
from conformance.judging.observables import Obs
from conformance.judging.verdicts import UNSUPPORTED_PREFIX
from conformance.targets.implementation import Capability
from models.config import TopicConfig
from models.constants import MAGIC_V1, MAGIC_V2
from models.records import RecordSpec, build_batches

from .helpers import (
    Suite,
    check_produce,
    lifted_after,
    newest_fetch,
    produce_version_for,
    producible_magics,
    suite_settings,
    unique_topic,
)

MINUTE = 60_000
HOUR = 60 * MINUTE
TIME_INDEX_ENTRY_BYTES = 12  # IDX-1

SCENARIOS = {
    "timestamps": "IDX.roll-by-first-batch",
    "untimed after a timestamp": "IDX.future-first-timestamp-blocks-roll",
    "no timestamps": "IDX.roll-by-age-without-timestamps",
    "full time index": "IDX.full-index-forces-roll",
    "compaction lag": "IDX.compacted-roll-max-lag",
}


@pytest.mark.parametrize(
    "scenario",
    # One test per roll rule, each tagged with its own clause: every rule gets its share of the examples (a
    # drawn rule left the compaction lag undrawn at a small budget), and a profile without it reads N/A.
    [pytest.param(scenario, marks=pytest.mark.clause(clause), id=clause) for scenario, clause in SCENARIOS.items()],
)
@pytest.mark.requires(Capability.RETENTION, Capability.CLOCK_CONTROL)
@given(data=draws())
@suite_settings(40)
def test_segment_boundaries_through_retention(suite: Suite, data: Draws, scenario: str) -> None:
    """IDX-9/IDX-1: one-record batches spread over several segment.ms, rolled by the drawn rule; then the
    clocks move so that retention's frontier falls among the records, and the log start offset after the tick
    (the first kept segment's base offset) must be the model's."""
    data, twin = suite.start(data)
    clause = SCENARIOS[scenario]
    if scenario == "no timestamps" and not twin.has(Capability.FILE_TIMES):
        # Retention dates a segment without timestamps by its file's time (IDX-6), which this target's
        # controlled clock does not set.
        pytest.skip(f"{UNSUPPORTED_PREFIX}{Capability.FILE_TIMES.value} (segments without timestamps are dated by "
                    "their file's time, which the controlled clock does not set)")
    segment_ms = data.draw(st.sampled_from((10 * MINUTE, HOUR)), label="segment.ms")
    retention = data.draw(st.sampled_from((30 * MINUTE, 2 * HOUR)), label="retention.ms")
    extra: dict[str, object] = {}
    if scenario == "full time index":
        extra = {"segment_index_bytes": TIME_INDEX_ENTRY_BYTES * data.draw(st.integers(2, 4), label="index entries"),
                 "index_interval_bytes": 1, "segment_ms": 1000 * HOUR}
    elif scenario == "compaction lag":
        extra = {"compacted": True, "retention_deletes": True,
                 "max_compaction_lag_ms": data.draw(st.integers(MINUTE, segment_ms - 1), label="max.compaction.lag.ms")}
    config = TopicConfig(after_max_ms=lifted_after(twin, suite.profile), retention_ms=retention,
                         **{"segment_ms": segment_ms, **extra})  # type: ignore[arg-type]
    topic = unique_topic("rolls")
    twin.create_topic(topic, config)
    leader = twin.leader(topic)
    start = twin.clock(leader)
    magic = data.draw(
        st.sampled_from(tuple(m for m in producible_magics(twin, suite.profile) if m in (MAGIC_V1, MAGIC_V2))),
        label="magic",
    )
    # A third of segment.ms or more between records: a segment rolls every few records.
    steps = data.draw(
        st.lists(st.integers(segment_ms // 3, segment_ms), min_size=3, max_size=16), label="time between records"
    )
    # Each record's moment. Where the broker clock decides (records without timestamps) it moves forward to
    # each moment before the record is sent; where timestamps decide, it stays at the start and each record
    # is stamped with its moment, in the past (a roll by the broker clock then never happens).
    clock_driven = scenario in ("no timestamps", "untimed after a timestamp")
    moments, moment = [], (start if clock_driven else start - sum(steps) - HOUR)
    for step in steps:
        moment += step
        moments.append(moment)
    for index, moment in enumerate(moments):
        if clock_driven:
            twin.set_clock(leader, moment)
        untimed = scenario == "no timestamps" or (scenario == "untimed after a timestamp" and index > 0)
        stamp = -1 if untimed else moment
        request = build_batches([RecordSpec(stamp, b"k%d" % index, b"v" * 10)], magic=magic)
        observed, expected = twin.produce(topic, request, produce_version=produce_version_for(magic, suite.profile))
        check_produce(observed, expected, config=config, error_clause=clause)
    # The frontier falls just after one record's moment (or exactly at it): that record and every one before
    # it are old enough; the segment holding the next one is kept, and every segment after it. A segment
    # without timestamps is dated by its file's mtime, the clock at its last append (IDX-6): the same moments.
    frontier = data.draw(st.sampled_from(moments), label="frontier record") + data.draw(
        st.integers(0, 1), label="past it"
    )
    for broker in twin.brokers():
        twin.set_clock(broker, frontier + retention)
    twin.retention_tick()
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    log = twin.ref.cluster.leader_log(topic)  # type: ignore[attr-defined]
    check_equal(
        clause,
        Obs.LOG_RANGE,
        (got.log_start_offset, got.high_watermark),
        (want.log_start_offset, want.high_watermark),
        f"{scenario}: segments at {[s.base_offset for s in log.segments]}, moments {moments}",
    )
