"""A client library's lookups (LO-9, KIP-79, KIP-734): offsetsForTimes for targets the broker finds and does not
find, a negative target, the EARLIEST / LATEST / MAX_TIMESTAMP specs where the library offers them, and seek by time.

The suites' own wire client writes v2 batches of several records each (so a found offset often lies inside a
batch); the library's answers are judged against the ListOffsets answers the broker gave it (the wire tap) and, for
seek by time, against the stored record at the found offset (suites/client_helpers.py). The broker's answers are
then compared with the model's at the same version, under the LO.* broker clauses.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.capabilities import Capability, ClientCapability
from conformance.judging.draws import Draws, draws
from conformance.targets.kinds.client_library import SPEC_CAPABILITY, ClientFailed, ClientRefused, OffsetAndTimestamp
from models.config import TopicConfig
from models.constants import LONG_MIN, SpecialTarget, TimestampType
from models.records import RecordSpec, build_v2
from strategies.timestamps import around

from .client_helpers import (
    BrokerChecks,
    check_broker_lookup,
    check_failed_seek,
    check_lookup,
    check_refusal,
    check_seek,
    check_special,
    client_twin,
    client_under_test,
    compare_stored,
    raw_fetch,
)
from .helpers import Suite, Twin, check_produce, producible_codecs, suite_settings, v2_produce_version

HOUR = 3_600_000
DAY = 24 * HOUR


def _stored_topic(
    suite: Suite, twin: Twin, data: Draws, prefix: str, broker: BrokerChecks, *, ascending: bool = False,
    min_records: int = 1,
) -> tuple[str, TopicConfig, list[int]]:
    """A topic of either type holding 1-3 v2 batches of 1-5 records each, written by the suites' own client; the
    record timestamps written (each a time of this machine's day, so every lookup target is non-negative). The
    broker's answers to the writes are compared with the model's by `broker`, after the client's checks.
    `ascending`: each batch's records in time order, as one producer's clock stamps them, so that a lookup of a
    record's own timestamp finds that record, often inside its batch."""
    types = [TimestampType.CREATE_TIME]
    if twin.has(Capability.LOG_APPEND_TIME):
        types.append(TimestampType.LOG_APPEND_TIME)
    config = TopicConfig(timestamp_type=data.draw(st.sampled_from(types), label="topic type"))
    topic, now = twin.new_topic(prefix, config)
    codecs = producible_codecs(suite.impl.capabilities)
    written: list[int] = []
    for index in range(data.draw(st.integers(1, 3), label="batches")):
        stamps = data.draw(st.lists(around(now, -DAY, HOUR // 2), min_size=min_records, max_size=5,
                                    unique=min_records > 1), label="stamps")  # fmt: skip
        if ascending:
            stamps.sort()
        codec = data.draw(st.sampled_from(codecs), label="codec")
        batch = build_v2([RecordSpec(t, b"r%d-%d" % (index, i), b"v") for i, t in enumerate(stamps)], codec=codec)
        observed, expected = twin.produce(topic, (batch,), produce_version=v2_produce_version(suite.profile))
        broker.later(check_produce, observed, expected, config=config, error_clause="LO.first-ge-target")
        written.extend(stamps)
    return topic, config, written


def _targets(written: list[int]) -> st.SearchStrategy[int]:
    """A written timestamp (found), one near it (found or not), or one past them all (not found, LO-2)."""
    return st.one_of(
        st.sampled_from(written),
        st.sampled_from(written).flatmap(lambda t: around(t, -2, 2)).filter(lambda t: t >= 0),
        around(max(written), 1, HOUR),
    )


@pytest.mark.kind("client")
@pytest.mark.clause("LO.client-offsets-for-times-answer", "LO.client-null-when-not-found", "LO.client-min-version")
@given(data=draws())
@suite_settings(10)
def test_offsets_for_times(suite: Suite, data: Draws) -> None:
    """LO-9: offsetsForTimes asks ListOffsets v1+ and reports the broker's answer: its offset and timestamp where it
    found a record, null where it answered offset -1."""
    data = suite.draws(data)
    client = client_under_test(suite.impl, ClientCapability.OFFSETS_FOR_TIMES)
    twin = client_twin(suite)
    broker = BrokerChecks()
    topic, config, written = _stored_topic(suite, twin, data, "client-lookup", broker)
    name = client.topic_name(topic)
    found = data.draw(st.sampled_from(written), label="found target")
    past = data.draw(around(max(written), 1, HOUR), label="not-found target")
    # Every kind of target in every example (found, then not found, then any), so that a broker departure ending the
    # example after the client's checks leaves every client clause decided.
    for target in [found, past, *data.draw(st.lists(_targets(written), max_size=2), label="targets")]:
        mark = client.tap.mark()
        answer = client.library.offsets_for_times(name, 0, target)
        context = f"{client.library.name} offsetsForTimes on a {config.timestamp_type.name} topic"
        tapped = check_lookup(answer, client.tap.lookups(name, since=mark), target, context)
        if tapped is not None:
            broker.later(check_broker_lookup, twin, topic, tapped, suite.profile, context)
    broker.run()
    raw, model = raw_fetch(twin, topic, suite.profile)
    compare_stored(raw, model, config=config, profile=suite.profile, context=f"topic {config}")


@pytest.mark.kind("client")
@pytest.mark.clause("LO.client-rejects-negative-target")
@given(data=draws())
@suite_settings(10)
def test_negative_target_refused(suite: Suite, data: Draws) -> None:
    """LO-9: a negative offsetsForTimes target is refused before any request, with Java's text; -1, -2 and -3 must not
    become the LATEST, EARLIEST and MAX_TIMESTAMP specs."""
    data = suite.draws(data)
    client = client_under_test(suite.impl, ClientCapability.OFFSETS_FOR_TIMES)
    twin = client_twin(suite)
    broker = BrokerChecks()
    topic, _, _ = _stored_topic(suite, twin, data, "client-negative", broker)
    name = client.topic_name(topic)
    target = data.draw(st.sampled_from((-1, -2, -3)) | st.integers(LONG_MIN, -4), label="target")
    mark = client.tap.mark()
    outcome: OffsetAndTimestamp | ClientRefused | ClientFailed | None
    try:
        outcome = client.library.offsets_for_times(name, 0, target)
    except (ClientRefused, ClientFailed) as raised:
        outcome = raised  # a library that sends the target and fails on the broker's answer did not refuse it
    context = f"{client.library.name} offsetsForTimes"
    tapped = client.tap.lookups(name, since=mark)
    check_refusal(outcome, tapped, topic=name, target=target, context=context)
    broker.run()
    for answer in tapped:
        check_broker_lookup(twin, topic, answer, suite.profile, context)


@pytest.mark.kind("client")
@pytest.mark.clause("LO.client-special-target-answer")
@given(data=draws())
@suite_settings(10)
def test_special_targets(suite: Suite, data: Draws) -> None:
    """LO-9 with LO-4/5/6: beginningOffsets, endOffsets and an Admin listOffsets with an OffsetSpec report the broker's
    answer to EARLIEST, LATEST and MAX_TIMESTAMP (the last where both the library and the broker offer it)."""
    data = suite.draws(data)
    client = client_under_test(suite.impl)
    # MAX_TIMESTAMP is asked only of a broker that serves it (ListOffsets v7+, KIP-734).
    max_served = Capability.MAX_TIMESTAMP_LOOKUP in suite.impl.capabilities
    served = [s for s in SPEC_CAPABILITY if s is not SpecialTarget.MAX_TIMESTAMP or max_served]
    offered = [spec for spec in served if client.has(SPEC_CAPABILITY[spec])]
    if not offered:
        pytest.skip("UNSUPPORTED: client " + ", ".join(SPEC_CAPABILITY[s].value for s in served))
    twin = client_twin(suite)
    broker = BrokerChecks()
    topic, config, _ = _stored_topic(suite, twin, data, "client-spec", broker)
    name = client.topic_name(topic)
    for spec in data.draw(st.lists(st.sampled_from(offered), min_size=1, max_size=3, unique=True), label="specs"):
        mark = client.tap.mark()
        answer = client.library.list_offsets(name, 0, spec)
        context = f"{client.library.name} {spec.name} on a {config.timestamp_type.name} topic"
        tapped = check_special(answer, client.tap.lookups(name, since=mark), int(spec), context)
        if tapped is not None:
            broker.later(check_broker_lookup, twin, topic, tapped, suite.profile, context)
    broker.run()


@pytest.mark.kind("client")
@pytest.mark.clause("LO.client-seek-by-time")
@given(data=draws())
@suite_settings(10)
def test_seek_by_time(suite: Suite, data: Draws) -> None:
    """LO-9 with CON-1: after offsetsForTimes and a seek to its answer, the first record delivered is the stored record
    at that offset, even inside a batch whose earlier records the fetch also returns."""
    data = suite.draws(data)
    client = client_under_test(suite.impl, ClientCapability.SEEK_BY_TIME)
    twin = client_twin(suite)
    broker = BrokerChecks()
    # Two or more distinct stamps per batch, and the first target tried is the newest written: the simplest example
    # already seeks into the middle of a batch, where the records before the position must be dropped.
    topic, config, written = _stored_topic(suite, twin, data, "client-seek", broker, ascending=True, min_records=2)
    name = client.topic_name(topic)
    raw, model = raw_fetch(twin, topic, suite.profile)
    target = data.draw(st.one_of(st.sampled_from(sorted(written, reverse=True)), _targets(written)), label="target")
    mark = client.tap.mark()
    context = f"{client.library.name} seek by time on a {config.timestamp_type.name} topic"
    try:
        found, first = client.library.seek_by_time(name, 0, target, until=raw.high_watermark)
    except ClientFailed as exc:
        # A library that fails the seek (a batch its consumer cannot read) is judged on the record the broker's
        # answer points at, as a failed consume is (CON-1): the failure is what it delivered.
        check_failed_seek(str(exc), client.tap.lookups(name, since=mark), target, raw.batches, context,
                          typed=client.typed)
        broker.run()
        return
    # The lookup first: a wrong answer is the lookup's (LO.client-*), and the seek is judged from the answer given.
    tapped = check_lookup(found, client.tap.lookups(name, since=mark), target, context)
    check_seek(found, first, raw.batches, context, typed=client.typed)
    broker.run()
    if tapped is not None:
        check_broker_lookup(twin, topic, tapped, suite.profile, context)
    compare_stored(raw, model, config=config, profile=suite.profile, context=f"topic {config}")
