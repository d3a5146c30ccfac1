"""A client library's producer (VAL-11, VAL-12): the RecordMetadata it reports for each record, and the failure of
each record of a batch the broker rejects (KIP-467).

The library sends records (with a timestamp, or none so that the producer stamps its own clock) to CreateTime and
LogAppendTime topics of the reference broker; the wire tap shows what the producer wrote and what the broker
answered, and the library's reports are judged against those (suites/client_helpers.py). The broker's answers are
then compared with the model's under broker clauses.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.draws import Draws, draws
from conformance.targets.clients.client_library import ClientCapability, Outgoing
from conformance.targets.implementation import Capability
from models.config import TopicConfig
from models.constants import LONG_MAX, TimestampType
from strategies.timestamps import around

from .client_helpers import (
    check_broker_produced,
    check_sent,
    client_twin,
    client_under_test,
    compare_stored,
    raw_fetch,
)
from .helpers import Suite, bounds, producible_codecs, suite_settings, unique_topic

HOUR = 3_600_000
DAY = 24 * HOUR
MARGIN_MS = 60_000  # a generated timestamp stays this far from a validation bound


@pytest.mark.kind("client")
@pytest.mark.clause("VAL.record-metadata-timestamp")
@given(data=draws())
@suite_settings(10)
def test_record_metadata(suite: Suite, data: Draws) -> None:
    """VAL-12: RecordMetadata.timestamp() is the broker's log_append_time on a LogAppendTime topic and the record's
    create time on a CreateTime one (the given timestamp, or the producer's clock), its offset the broker's base
    offset plus the record's position."""
    data = suite.draws(data)
    client = client_under_test(suite.impl, ClientCapability.SEND)
    twin = client_twin(suite)
    types = [TimestampType.CREATE_TIME]
    if twin.has(Capability.LOG_APPEND_TIME):
        types.append(TimestampType.LOG_APPEND_TIME)
    config = TopicConfig(timestamp_type=data.draw(st.sampled_from(types), label="topic type"))
    topic = unique_topic("client-metadata")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    codecs = [c for c in producible_codecs(suite.impl.capabilities) if c in client.library.codecs]
    codec = data.draw(st.sampled_from(codecs), label="codec")
    stamps = data.draw(st.lists(st.none() | around(now, -DAY, HOUR // 2), min_size=1, max_size=4), label="timestamps")
    records = [Outgoing(b"k%d" % i, b"v%d" % i, stamp) for i, stamp in enumerate(stamps)]
    name = client.topic_name(topic)
    mark = client.tap.mark()
    outcomes = client.library.send(name, 0, records, codec=codec)
    produced = client.tap.produced(name, since=mark)
    context = f"{client.library.name} sent {len(records)} records ({codec.name}), {config.timestamp_type.name} topic"
    check_sent(records, outcomes, produced, context)
    lat = config.timestamp_type is TimestampType.LOG_APPEND_TIME
    check_broker_produced(twin, topic, produced, config=config, context=context,
                          error_clause="VAL.lat-response-time" if lat else "VAL.createtime-response-minus-one")
    raw, model = raw_fetch(twin, topic, suite.profile)
    compare_stored(raw, model, config=config, profile=suite.profile, context=context)


@pytest.mark.kind("client")
@pytest.mark.clause("VAL.producer-future-exceptions")
@pytest.mark.requires(Capability.RECORD_ERRORS)
@given(data=draws())
@suite_settings(10)
def test_rejected_batch_failures(suite: Suite, data: Draws) -> None:
    """VAL-11: a batch with records out of the topic's timestamp bounds is rejected with record_errors; the producer
    fails a single listed record with the partition's error (InvalidTimestampException), several listed ones with
    INVALID_RECORD each, and the batch's other records with the generic failure."""
    data = suite.draws(data)
    client = client_under_test(suite.impl, ClientCapability.SEND, ClientCapability.RECORD_ERRORS)
    twin = client_twin(suite)
    bound = data.draw(st.sampled_from((HOUR, 2 * HOUR)), label="bound")
    if suite.profile.has_before_after_configs and twin.has(Capability.KIP_937_CONFIGS):
        config = TopicConfig(before_max_ms=bound, after_max_ms=bound)
    elif suite.profile.has_difference_config and twin.has(Capability.DIFFERENCE_CONFIG):
        config = TopicConfig(difference_max_ms=bound)
    else:
        pytest.skip("UNSUPPORTED: the broker sets no timestamp bound on a topic (KIP-937 or difference config)")
    before, after = bounds(config, suite.profile)
    assert LONG_MAX not in (before, after)
    topic = unique_topic("client-failures")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    inside = around(now, -before + MARGIN_MS, min(after, HOUR // 2) - MARGIN_MS)
    outside = around(now - before, -DAY, -MARGIN_MS) | around(now + after, MARGIN_MS, HOUR)
    stamps = data.draw(st.lists(st.tuples(st.booleans(), inside, outside), min_size=1, max_size=4), label="records")
    if not any(out for out, _, _ in stamps):
        stamps[0] = (True, *stamps[0][1:])  # at least one record out of range: the batch is rejected
    records = [Outgoing(b"k%d" % i, b"v", far if out else near) for i, (out, near, far) in enumerate(stamps)]
    name = client.topic_name(topic)
    mark = client.tap.mark()
    outcomes = client.library.send(name, 0, records, codec=data.draw(st.sampled_from(
        [c for c in producible_codecs(suite.impl.capabilities) if c in client.library.codecs]), label="codec"))
    produced = client.tap.produced(name, since=mark)
    context = f"{client.library.name} sent {len(records)} records, {sum(o for o, _, _ in stamps)} out of range"
    check_sent(records, outcomes, produced, context)
    check_broker_produced(twin, topic, produced, config=config, context=context,
                          error_clause="VAL.out-of-range-error-code")
