"""Where a timestamp lookup starts inside a segment (docs/rules.md, IDX-5 and IDX-7), seen through the
answers of timestamp lookups: the time index is internal, but an index lookup that starts past the answer,
or a segment max that moved to a later tied batch, makes the search miss the first matching record.

Each test builds segments whose index entries are sparse (a few per segment, or only the one written when a
segment rolls), then asks every produced timestamp and its neighbours. A target is compared under the IDX
clause only where that clause decides the answer (an entry above the target that points past the answer's
batch; a tied segment max whose roll entry is the one the lookup starts from); elsewhere under the LO
clauses as in test_list_offsets.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.capabilities import Capability
from conformance.judging.draws import Draws, draws
from models.config import TopicConfig
from models.constants import MAGIC_V1
from models.list_offsets import ListOffsetsAnswer
from models.log import PartitionLog, Segment
from models.profiles import Profile
from models.records import RecordSpec, build_batches
from strategies.timestamps import around

from .helpers import (
    Suite,
    Twin,
    check_list_offsets,
    lifted_after,
    list_offsets_versions,
    producible_magics,
    suite_settings,
)

HOUR = 3_600_000
NEVER_BY_INTERVAL = 1 << 30  # index.interval.bytes no segment reaches: entries only when a segment rolls (IDX-4)


def _searched(log: PartitionLog, target: int) -> Segment | None:
    """LO-2: the first segment whose largest timestamp reaches `target` (the only one searched)."""
    return next((s for s in log.segments if s.largest_timestamp() >= target), None)


def _fill(twin: Twin, data: Draws, profile: Profile, config: TopicConfig, lo: int, hi: int,
          prefix: str) -> tuple[str, list[int]]:
    """A topic of `config` and 4..30 small uncompressed batches (one to three records each) stamped within
    [now + lo, now + hi]."""
    topic, now = twin.new_topic(prefix, config)
    stamps = around(now, lo, hi)
    magic = data.draw(st.sampled_from(tuple(m for m in producible_magics(twin, profile) if m >= MAGIC_V1)),
                      label="magic")
    sent: list[int] = []
    for index in range(data.draw(st.integers(4, 30), label="batches")):
        request = data.draw(st.lists(stamps, min_size=1, max_size=3), label="timestamps")
        specs = [RecordSpec(t, f"{index}-{i}".encode(), b"v" * 20) for i, t in enumerate(request)]
        twin.produce_checked(topic, build_batches(specs, magic=magic), profile=profile,
                             error_clause="IDX.segment-search-first-ge")
        sent.extend(request)
    return topic, sent


def _compare(twin: Twin, topic: str, profile: Profile, targets: list[int], clause_for: dict[int, str]) -> None:
    """Each target's answer, under its IDX clause where a scan that started too late would explain a
    difference (an answer past the expected record, or none); an answer before the expected record is no late
    start, so it is compared under the LO clauses."""
    version = list_offsets_versions(profile)[-1]
    for target in targets:
        observed, expected = twin.list_offsets(topic, target, version=version)
        early = 0 <= observed.offset < expected.offset
        check_list_offsets(observed, expected, target=target, version=version, profile=profile,
                           clause=None if early else clause_for.get(target))


def _answer_batch_end(segment: Segment, expected: ListOffsetsAnswer) -> int:
    return next(b.last_offset for b in segment.batches if b.base_offset <= expected.offset <= b.last_offset)


@pytest.mark.clause("IDX.lookup-largest-le-target")
@pytest.mark.requires(Capability.LIST_OFFSETS)
@given(data=draws())
@suite_settings(30)
def test_lookup_starts_below_target(suite: Suite, data: Draws) -> None:
    """IDX-7 (TV-01, TV-02): a lookup starts its scan at the index entry with the largest timestamp at or
    below the target. With entries only every few hundred bytes, the first entry at or above a target often
    points past the batch holding the answer: a lookup starting there answers a later record or nothing."""
    data, twin = suite.start(data)
    config = TopicConfig(
        after_max_ms=lifted_after(twin, suite.profile),
        segment_bytes=data.draw(st.sampled_from((800, 1600, 1 << 30)), label="segment.bytes"),
        index_interval_bytes=data.draw(st.sampled_from((64, 128, 256)), label="index.interval.bytes"),
    )
    topic, sent = _fill(twin, data, suite.profile, config, -HOUR // 2, HOUR // 2, "idx-lookup")
    log = twin.ref.cluster.leader_log(topic)  # type: ignore[attr-defined]
    version = list_offsets_versions(suite.profile)[-1]
    targets = sorted({max(t + d, 0) for t in sent for d in (-1, 0, 1)})
    clause_for: dict[int, str] = {}
    for target in targets:
        segment = _searched(log, target)
        expected = twin.ref.list_offsets(topic, 0, target, version=version)
        if segment is None or expected.offset < 0:
            continue
        above = [offset for timestamp, offset in segment.time_index.entries if timestamp >= target]
        if above and above[0] > _answer_batch_end(segment, expected):
            clause_for[target] = "IDX.lookup-largest-le-target"
    _compare(twin, topic, suite.profile, targets, clause_for)


def _tied_roll_maxima(log: PartitionLog) -> set[int]:
    """IDX-5: the maxima of rolled segments that a later batch of the same segment reached again. The roll
    entry pairs such a max with the earliest batch's offset; a lookup for exactly it starts there."""
    tied: set[int] = set()
    for segment in log.segments[:-1]:
        reached = [b.max_timestamp for b in segment.batches if b.max_timestamp == segment.max_timestamp]
        if segment.max_timestamp >= 0 and len(reached) > 1:
            tied.add(segment.max_timestamp)
    return tied


@pytest.mark.clause("IDX.segment-max-strictly-greater")
@pytest.mark.requires(Capability.LIST_OFFSETS)
@given(data=draws())
@suite_settings(30)
def test_tied_segment_max_keeps_earliest_batch(suite: Suite, data: Draws) -> None:
    """IDX-5 (with IDX-4's entry on roll): a segment's max changes only when a batch brings a strictly
    greater timestamp, so when several batches tie at the max it stays paired with the earliest of them.
    With no index entries but the one written on roll, a lookup for exactly that max starts at the offset it
    is paired with: paired with a later tied batch, it skips the first record holding the max."""
    data, twin = suite.start(data)
    config = TopicConfig(
        after_max_ms=lifted_after(twin, suite.profile),
        segment_bytes=data.draw(st.sampled_from((300, 600)), label="segment.bytes"),
        index_interval_bytes=NEVER_BY_INTERVAL,
    )
    # A coarse clock (four values): batches tie at their segment's max.
    topic, sent = _fill(twin, data, suite.profile, config, 0, 3, "idx-tied")
    log = twin.ref.cluster.leader_log(topic)  # type: ignore[attr-defined]
    tied = _tied_roll_maxima(log)
    targets = sorted({max(t + d, 0) for t in sent for d in (-1, 0, 1)})
    clause_for = {t: "IDX.segment-max-strictly-greater" for t in targets
                  if t in tied and (segment := _searched(log, t)) is not None and segment.max_timestamp == t}
    _compare(twin, topic, suite.profile, targets, clause_for)
