"""ListOffsets / offsetsForTimes (SEMANTICS §5, LO-1..9): timestamp search, special targets and
MAX_TIMESTAMP, at every ListOffsets version the profile serves (v1+).

A short log (a few batches with unordered timestamps, small segments) is built on both sides; every
target around every produced timestamp is then asked at every version.

ListOffsets clauses not covered here, and why:
- LO.visibility-cap, LO.visibility-cap-le-hw, LO.read-committed-lso, LO.fresh-leader-not-available,
  LO.max-timestamp-capped: need a high watermark below the log end (a lagging follower or open
  transactions), which the Implementation protocol cannot arrange (acks=all replication).
- LO.replica-capped-at-leo: replica/debug requests are not in the protocol.
- LO.search-from-log-start, LO.max-timestamp-ignores-log-start: need DeleteRecords; retention moves the
  log start in test_time_index, which compares lookups after it under the IDX clauses.
- LO.first-qualifying-segment: needs v0-only segments mixed with timestamped ones (pre-0.11 format
  changes); covered where the state machine alters the format of a 0.10/2.8 topic.
- LO.v0-segment-offsets, LO.unsupported-for-message-format: ListOffsets v0 and old formats; v0 answers
  depend on file mtimes the protocol does not expose.
- LO.client-*: client-side (offsetsForTimes) behaviour.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.implementation import Capability, Implementation, ImplementationFactory
from models.config import TopicConfig
from models.constants import LONG_MAX, TimestampType
from models.profiles import Profile
from strategies.records import batches
from strategies.timestamps import timestamps

from .helpers import (
    Twin,
    check_list_offsets,
    check_produce,
    list_offsets_versions,
    produce_version_for,
    producible_codecs,
    producible_magics,
    suite_settings,
    unique_topic,
)


def _build_log(
    twin: Twin, data: st.DataObject, profile: Profile, timestamp_type: TimestampType
) -> tuple[str, list[int]]:
    """A topic with 1-5 produce requests of unordered timestamps in small segments; the sent timestamps."""
    after = LONG_MAX if profile.has_before_after_configs and profile.default_after_ms != LONG_MAX else None
    config = TopicConfig(
        timestamp_type=timestamp_type,
        after_max_ms=after,
        segment_bytes=data.draw(st.sampled_from((256, 1024, 1 << 30)), label="segment.bytes"),
        index_interval_bytes=data.draw(st.sampled_from((1, 128, 4096)), label="index.interval.bytes"),
    )
    topic = unique_topic("lo")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    ts = timestamps(now, before=3_600_000, after=3_600_000, specials=False, mistakes=False, margin=0)
    sent: list[int] = []
    for _ in range(data.draw(st.integers(0, 5), label="requests")):
        request = data.draw(batches(ts, magics=producible_magics(twin, profile),
                                    codecs=producible_codecs(twin.impl.capabilities), max_records=4))
        version = produce_version_for(request[0].magic, profile)
        observed, expected = twin.produce(topic, request, produce_version=version)
        check_produce(observed, expected, config=config, error_clause="LO.first-ge-target")
        sent.extend(r.timestamp for b in request for r in b.records())
        if timestamp_type is TimestampType.LOG_APPEND_TIME and data.draw(st.booleans(), label="advance"):
            leader = twin.leader(topic)
            twin.set_clock(leader, twin.clock(leader) + data.draw(st.integers(-5, 5), label="clock step"))
    return topic, sent


@pytest.mark.clause(
    "LO.first-ge-target",
    "LO.not-found-minus-one",
    "LO.record-own-timestamp",
    "LO.epoch-of-found-batch",
    "LO.no-epoch-before-v4",
    "IDX.segment-search-first-ge",
)
@pytest.mark.requires(Capability.LIST_OFFSETS, Capability.CLOCK_CONTROL)
@given(data=st.data())
@suite_settings(30)
def test_timestamp_lookup(
    impl: Implementation, reference_factory: ImplementationFactory, profile: Profile, data: st.DataObject
) -> None:
    """LO-2 (TV-04, TV-13): for every target at, just below and just above each produced timestamp, the
    smallest offset whose timestamp is >= target, with that record's timestamp and batch epoch."""
    twin = Twin(impl, reference_factory)
    types = [TimestampType.CREATE_TIME] + ([TimestampType.LOG_APPEND_TIME] if twin.has(Capability.LOG_APPEND_TIME)
                                           else [])
    topic, sent = _build_log(twin, data, profile, data.draw(st.sampled_from(types), label="topic type"))
    targets = sorted({max(t + d, 0) for t in sent for d in (-1, 0, 1)} | {0, twin.leader_clock(topic) + 10**6})
    for version in list_offsets_versions(profile):
        for target in targets:
            observed, expected = twin.list_offsets(topic, target, version=version)
            check_list_offsets(observed, expected, target=target, version=version, profile=profile)


@pytest.mark.clause(
    "LO.latest-is-high-watermark",
    "LO.earliest-is-log-start",
    "LO.earliest-local-equals-earliest",
    "LO.latest-tiered-none",
    "LO.special-target-min-version",
    "LO.unknown-target-unsupported",
    "LO.unknown-target-searched",
    "LO.cap-exempts-earliest",
)
@pytest.mark.requires(Capability.LIST_OFFSETS, Capability.CLOCK_CONTROL)
@given(data=st.data())
@suite_settings(15)
def test_special_targets(
    impl: Implementation, reference_factory: ImplementationFactory, profile: Profile, data: st.DataObject
) -> None:
    """LO-1/4/5 (TV-13, TV-16): -1, -2, -4, -5 and unknown negatives (-6, -7) at every version: their
    answers, and UNSUPPORTED_VERSION below a target's minimum version (3.9+) or a search before 3.9."""
    twin = Twin(impl, reference_factory)
    topic, _ = _build_log(twin, data, profile, TimestampType.CREATE_TIME)
    for version in list_offsets_versions(profile):
        for target in (-1, -2, -4, -5, -6, -7):
            observed, expected = twin.list_offsets(topic, target, version=version)
            check_list_offsets(observed, expected, target=target, version=version, profile=profile)


@pytest.mark.clause(
    "LO.max-timestamp-first-record",
    "LO.max-timestamp-earliest-on-ties",
    "LO.max-timestamp-lat-batch-first-record",
    "LO.max-timestamp-empty",
    "LO.special-target-min-version",
    "CMP.append-max-timestamp",
)
@pytest.mark.requires(Capability.LIST_OFFSETS, Capability.MAX_TIMESTAMP_LOOKUP, Capability.CLOCK_CONTROL)
@given(data=st.data())
@suite_settings(30)
def test_max_timestamp(
    impl: Implementation, reference_factory: ImplementationFactory, profile: Profile, data: st.DataObject
) -> None:
    """LO-6 (TV-14, TV-15): MAX_TIMESTAMP (-3) answers the largest timestamp with the first record holding
    it (the earliest on ties; a LogAppendTime batch's first record), -1/-1 on an empty log, and
    UNSUPPORTED_VERSION below v7."""
    twin = Twin(impl, reference_factory)
    types = [TimestampType.CREATE_TIME] + ([TimestampType.LOG_APPEND_TIME] if twin.has(Capability.LOG_APPEND_TIME)
                                           else [])
    timestamp_type = data.draw(st.sampled_from(types), label="topic type")
    topic, sent = _build_log(twin, data, profile, timestamp_type)
    for version in list_offsets_versions(profile):
        observed, expected = twin.list_offsets(topic, -3, version=version)
        clause = None
        minimum = profile.min_version_for_target(-3)
        if minimum is not None and version >= minimum and expected.offset >= 0:
            # The most specific explanation of a difference first (LO-6's three cases).
            if timestamp_type is TimestampType.LOG_APPEND_TIME:
                clause = "LO.max-timestamp-lat-batch-first-record"
            elif sent.count(expected.timestamp) > 1:
                clause = "LO.max-timestamp-earliest-on-ties"
        check_list_offsets(observed, expected, target=-3, version=version, profile=profile, clause=clause)
