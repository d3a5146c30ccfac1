"""ListOffsets / offsetsForTimes (docs/rules.md, LO-1..9): timestamp search, special targets and
MAX_TIMESTAMP, at every ListOffsets version the profile serves (v1+).

A short log in small segments is built on both sides: unordered requests, then a steady producer clock,
then coarse tied timestamps (and, for the special targets, a retention tick that moves the log start);
every target around every produced timestamp is then asked at every version.

Where the search stops (visibility cap, read_committed, log start, segments without timestamps, old
formats, ListOffsets v0) is test_list_offsets_scope's. The ListOffsets clauses no suite checks say where they
are checked instead (`kafka-conformance clauses --coverage`, models/clauses.py `checked_elsewhere`).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.capabilities import Capability
from conformance.judging.checks import check_true
from conformance.judging.draws import Draws, draws
from conformance.judging.observables import Obs
from models.config import TopicConfig
from models.constants import MAGIC_V0, MAGIC_V1, MAGIC_V2, Codec, ErrorCode, TimestampType
from models.profiles import Profile
from models.profiles import UnknownSpecialTarget as _Unknown
from models.records import RecordSpec, build_batches
from strategies.records import combinations
from strategies.timestamps import around, timestamps

from .helpers import (
    Suite,
    Twin,
    bounds,
    check_list_offsets,
    check_produce,
    lifted_after,
    list_offsets_versions,
    produce_version_for,
    producible_codecs,
    producible_magics,
    sent_batches,
    suite_settings,
)

HOUR = 3_600_000


def _request_timestamps(data: Draws, now: int, spread: int = HOUR) -> list[list[int] | None]:
    """The timestamps of each produce request, in three phases, each above everything before it so that a
    lookup aimed at one phase answers inside it (LO-2):
    - unordered: a producer's clock jitter within `spread` (an hour) of now (None: the request comes from
      the records strategy, with its headers and producer fields);
    - ascending: a steady producer clock, one record per request or several, so that every record is the
      log's new max (a batch-granular answer or an index entry past its record shows, IDX-2/LO-2);
    - ties: a coarse clock with few distinct values, so that several records and batches share a
      timestamp, the max included (IDX-3, IDX-5, LO-6's first record and earliest batch)."""
    requests: list[list[int] | None] = [None] * data.draw(st.integers(0, 2), label="unordered requests")
    clock = now + 2 * spread
    single = data.draw(st.booleans(), label="one record per ascending request")
    for _ in range(data.draw(st.integers(0, 3), label="ascending requests")):
        request = []
        for _ in range(1 if single else data.draw(st.integers(1, 4), label="records")):
            clock += data.draw(st.integers(1, 1_000), label="tick")
            request.append(clock)
        requests.append(request)
    coarse = around(clock, 1, 3)
    for _ in range(data.draw(st.integers(0, 3), label="tied requests")):
        requests.append(data.draw(st.lists(coarse, min_size=1, max_size=4), label="tied timestamps"))
    return requests


def _build_log(
    twin: Twin, data: Draws, profile: Profile, timestamp_type: TimestampType, *, retention: bool = False
) -> tuple[str, list[int], list[list[int]]]:
    """A topic in small segments filled by `_request_timestamps`; the sent timestamps, flat and per request.
    With `retention` (where the target has it) the clocks then move on by up to six hours and a retention
    tick deletes the segments older than an hour, so the log start offset moves (IDX-10, LO-5)."""
    after = lifted_after(twin, profile)
    retained = retention and twin.has(Capability.RETENTION)
    config = TopicConfig(
        timestamp_type=timestamp_type,
        after_max_ms=after,
        segment_bytes=data.draw(st.sampled_from((256, 1024, 1 << 30)), label="segment.bytes"),
        # An entry on every append half of the time: where entries point shows in lookups (IDX-2, IDX-3).
        index_interval_bytes=data.draw(st.one_of(st.just(1), st.sampled_from((128, 4096))),
                                       label="index.interval.bytes"),
    )
    if retained:
        config = replace(config, retention_ms=HOUR)
    topic, now = twin.new_topic("lo", config)
    # Within an hour of now, phases two hours out; a quarter of the after-bound where the topic keeps a
    # finite one (4.0's 1 h default on a target that cannot lift it), so every request is accepted.
    _, after_bound = bounds(config, profile)
    spread = HOUR if after_bound >= 3 * HOUR else after_bound // 4
    ts = timestamps(now, before=spread, after=spread, specials=False, mistakes=False, margin=0)
    magics = producible_magics(twin, profile)
    if retained and not twin.has(Capability.FILE_TIMES):
        # Retention dates a segment without timestamps (magic 0) by its file's time (IDX-6), which this target's
        # controlled clock does not set.
        magics = tuple(m for m in magics if m != MAGIC_V0)
    codecs = producible_codecs(twin.impl.capabilities)
    sent: list[int] = []
    per_request: list[list[int]] = []
    for index, stamps in enumerate(_request_timestamps(data, now, spread)):
        if stamps is None:
            request = data.draw(sent_batches(twin, ts, magics=magics, codecs=codecs, max_records=4))
        else:
            magic, codec = data.draw(st.sampled_from(combinations(magics, codecs)), label="magic, codec")
            specs = [RecordSpec(t, b"k%d-%d" % (index, i), b"v" * 8) for i, t in enumerate(stamps)]
            request = build_batches(specs, magic=magic, codec=codec)
        twin.produce_checked(topic, request, profile=profile, error_clause="LO.first-ge-target")
        per_request.append([r.timestamp for b in request for r in b.records()])
        sent.extend(per_request[-1])
        if twin.clock_control and timestamp_type is TimestampType.LOG_APPEND_TIME and data.draw(
            st.booleans(), label="advance"
        ):
            leader = twin.leader(topic)
            twin.set_clock(leader, twin.clock(leader) + data.draw(st.integers(-5, 5), label="clock step"))
    if retained:
        advance = data.draw(st.one_of(st.sampled_from((HOUR + 1, 3 * HOUR, 6 * HOUR)), st.integers(0, 6 * HOUR)),
                            label="clock advance before retention")
        for broker in twin.brokers():
            twin.set_clock(broker, twin.clock(broker) + advance)
        twin.retention_tick()
    return topic, sent, per_request


@pytest.mark.clause(
    "LO.first-ge-target",
    "LO.not-found-minus-one",
    "LO.record-own-timestamp",
    "LO.epoch-of-found-batch",
    "LO.no-epoch-before-v4",
)
@pytest.mark.requires(Capability.LIST_OFFSETS)
@given(data=draws())
@suite_settings(50)
def test_timestamp_lookup(suite: Suite, data: Draws) -> None:
    """LO-2 (TV-04, TV-13): for every target at, just below and just above each produced timestamp, the
    smallest offset whose timestamp is >= target, with that record's timestamp and batch epoch."""
    data, twin = suite.start(data)
    types = [TimestampType.CREATE_TIME] + ([TimestampType.LOG_APPEND_TIME] if twin.has(Capability.LOG_APPEND_TIME)
                                           else [])
    topic, sent, _ = _build_log(twin, data, suite.profile, data.draw(st.sampled_from(types), label="topic type"))
    targets = sorted({max(t + d, 0) for t in sent for d in (-1, 0, 1)} | {0, twin.leader_clock(topic) + 10**6})
    for version in list_offsets_versions(suite.profile):
        for target in targets:
            observed, expected = twin.list_offsets(topic, target, version=version)
            check_list_offsets(observed, expected, target=target, version=version, profile=suite.profile)


@pytest.mark.clause(
    "LO.latest-is-high-watermark",
    "LO.earliest-is-log-start",
    "LO.earliest-local-equals-earliest",
    "LO.latest-tiered-none",
    "LO.earliest-pending-upload-none",
    "LO.special-target-min-version",
    "LO.unknown-target-unsupported",
    "LO.unknown-target-searched",
    "LO.cap-exempts-earliest",
)
@pytest.mark.requires(Capability.LIST_OFFSETS)
@given(data=draws())
@suite_settings(30)
def test_special_targets(suite: Suite, data: Draws) -> None:
    """LO-1/4/5 (TV-13, TV-16): -1, -2, -4, -5, -6 (4.2+; unknown before) and an unknown negative (-7) at every
    version: their answers, and UNSUPPORTED_VERSION below a target's minimum version (3.9+) or a search before
    3.9."""
    data, twin = suite.start(data)
    topic, _, _ = _build_log(twin, data, suite.profile, TimestampType.CREATE_TIME, retention=data.draw(st.booleans()))
    log = twin.ref.cluster.leader_log(topic)  # type: ignore[attr-defined]
    for version in list_offsets_versions(suite.profile):
        for target in (-1, -2, -4, -5, -6, -7):
            observed, expected = twin.list_offsets(topic, target, version=version)
            if target in (-2, -4) and expected.error is ErrorCode.NONE and expected.offset == log.high_watermark:
                # The log start offset is the high watermark (an empty log, or retention deleted every record):
                # a lookup capped at the high watermark would answer -1 here; EARLIEST is exempt (LO-3, LO-5).
                check_true("LO.cap-exempts-earliest", Obs.LIST_OFFSETS_OFFSET, observed.offset != -1, observed.offset,
                           f"target {target} v{version}, log start = high watermark = {log.high_watermark}",
                           expectation="an offset (EARLIEST is not capped at the high watermark), not -1")
            check_list_offsets(observed, expected, target=target, version=version, profile=suite.profile,
                               facts=twin.list_offsets_facts(topic))


@pytest.mark.clause(
    "LO.max-timestamp-first-record",
    "LO.max-timestamp-earliest-on-ties",
    "LO.max-timestamp-lat-batch-first-record",
    "LO.max-timestamp-empty",
    "LO.special-target-min-version",
    "CMP.append-max-timestamp",
)
@pytest.mark.requires(Capability.LIST_OFFSETS, Capability.MAX_TIMESTAMP_LOOKUP)
@given(data=draws())
@suite_settings(30)
def test_max_timestamp(suite: Suite, data: Draws) -> None:
    """LO-6 (TV-14, TV-15): MAX_TIMESTAMP (-3) answers the largest timestamp with the first record holding
    it (the earliest on ties; a LogAppendTime batch's first record), -1/-1 on an empty log, and
    UNSUPPORTED_VERSION below v7."""
    data, twin = suite.start(data)
    types = [TimestampType.CREATE_TIME] + ([TimestampType.LOG_APPEND_TIME] if twin.has(Capability.LOG_APPEND_TIME)
                                           else [])
    timestamp_type = data.draw(st.sampled_from(types), label="topic type")
    topic, _, _ = _build_log(twin, data, suite.profile, timestamp_type)
    _check_max_timestamp(twin, topic, suite.profile, timestamp_type)


@pytest.mark.clause(
    "LO.max-timestamp-first-record",
    "LO.max-timestamp-earliest-on-ties",
    "LO.max-timestamp-lat-batch-first-record",
    "CMP.append-max-timestamp",
)
@pytest.mark.requires(Capability.LIST_OFFSETS, Capability.MAX_TIMESTAMP_LOOKUP)
@given(data=draws())
@suite_settings(20)
def test_max_timestamp_inside_batch(suite: Suite, data: Draws) -> None:
    """LO-6 (TV-14, TV-15) where it is easy to get wrong: after a short log, one batch (v2, or a compressed
    v1 wrapper) of three or more records takes the max. On a CreateTime topic the max is held by two or
    more of its records, the first of them never the batch's last record, so an answer at the batch's last
    offset or at the last record holding the max differs from the first one (KAFKA-16310). On a
    LogAppendTime topic every record of the batch holds it and the answer is its first record. Sometimes a
    later batch ties the max, and the earlier batch still answers."""
    data, twin = suite.start(data)
    types = [TimestampType.CREATE_TIME] + ([TimestampType.LOG_APPEND_TIME] if twin.has(Capability.LOG_APPEND_TIME)
                                           else [])
    timestamp_type = data.draw(st.sampled_from(types), label="topic type")
    topic, sent, _ = _build_log(twin, data, suite.profile, timestamp_type)
    shapes = [(magic, codec) for magic, codec in combinations(producible_magics(twin, suite.profile),
                                                              producible_codecs(suite.impl.capabilities))
              if magic == MAGIC_V2 or (magic == MAGIC_V1 and codec is not Codec.NONE)]
    if not shapes:
        pytest.skip("UNSUPPORTED: no one-batch shape (magic 2, or magic 1 with compression) can be produced")
    magic, codec = data.draw(st.sampled_from(shapes), label="magic, codec of the batch holding the max")
    # Above everything logged so far, whatever the topic's type (LogAppendTime stamps the leader's clock,
    # which a wall clock moves on by itself).
    base = max([twin.leader_clock(topic), *sent])
    if twin.clock_control:
        twin.set_clock(twin.leader(topic), base + 1_000)
    top = base + 2_000
    size = data.draw(st.integers(3, 6), label="records in the batch")
    first = data.draw(st.integers(0, size - 2), label="first record holding the max")
    again = data.draw(st.integers(first + 1, size - 1), label="a later record holding the max")
    stamps = [data.draw(around(top, -20, 0), label="timestamp") for _ in range(size)]
    stamps[:first] = [min(t, top - 1) for t in stamps[:first]]
    stamps[first] = stamps[again] = top
    requests = [stamps]
    if data.draw(st.booleans(), label="a later batch ties the max"):
        requests.append([top, *data.draw(st.lists(around(top, -20, 0), max_size=2), label="tie batch")])
    for index, request_stamps in enumerate(requests):
        specs = [RecordSpec(t, b"max%d-%d" % (index, i), b"v") for i, t in enumerate(request_stamps)]
        request = build_batches(specs, magic=magic, codec=codec)
        observed, expected = twin.produce(topic, request, produce_version=produce_version_for(magic, suite.profile))
        check_produce(observed, expected, config=twin.configs[topic], error_clause="CMP.append-max-timestamp")
    _check_max_timestamp(twin, topic, suite.profile, timestamp_type)


def _check_max_timestamp(twin: Twin, topic: str, profile: Profile, timestamp_type: TimestampType) -> None:
    """Ask MAX_TIMESTAMP (-3) at every version and compare, naming the most specific LO-6 clause."""
    log = twin.ref.cluster.leader_log(topic)  # type: ignore[attr-defined]
    for version in list_offsets_versions(profile):
        observed, expected = twin.list_offsets(topic, -3, version=version)
        clause = None
        minimum = profile.min_version_for_target(-3)
        # Special from its minimum version, or at any version before 3.9, where no target's version is checked.
        special = minimum is not None and (version >= minimum or profile.unknown_special_target is _Unknown.SEARCH)
        if special and expected.offset >= 0:
            # The most specific explanation of a difference first (LO-6's three cases): an answer outside
            # the batch of the expected record, when several batches reach the max, picked the wrong one of
            # the ties; otherwise the wrong record of the right batch (a LogAppendTime batch's first record,
            # or the first record holding the max).
            holding = [b for b in log.batches() if any(r.timestamp == expected.timestamp for r in b.records())]
            first = next(b for b in holding if b.base_offset <= expected.offset <= b.last_offset)
            # Checked on every tie, so that the clause passes where it holds, not only named where it fails.
            if len(holding) > 1 and not check_true(
                "LO.max-timestamp-earliest-on-ties",
                Obs.LIST_OFFSETS_OFFSET,
                first.base_offset <= observed.offset <= first.last_offset,
                observed.offset,
                f"MAX_TIMESTAMP v{version}, {len(holding)} batches hold the max {expected.timestamp}",
                expectation=f"an offset of the earliest batch with the max, {first.base_offset}..{first.last_offset}",
            ):
                continue
            if timestamp_type is TimestampType.LOG_APPEND_TIME:
                clause = "LO.max-timestamp-lat-batch-first-record"
        check_list_offsets(observed, expected, target=-3, version=version, profile=profile, clause=clause,
                           facts=twin.list_offsets_facts(topic))
