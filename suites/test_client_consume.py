"""A client library's consumer (CON-1): the timestamp and type of each ConsumerRecord, for every stored form a broker
serves: v2 batches of either type everywhere and, on profiles that store them (a topic's message.format.version
honoured, before 3.0), v0 messages, uncompressed v1 messages and compressed v1 wrappers.

The suites' own wire client writes the batches (any magic and codec the broker takes, the topic's format set), the
library consumes them with assign + seek (no group), and each delivered record is compared with the stored batch that
holds it, read by the model's codec as CON-1 says, under the CON clause of that stored form. So a broker that
stores something else changes what the library must read, never the client's verdict; the broker's stored batches
are then compared with the model's under broker clauses (suites/client_helpers.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.draws import Draws, draws
from conformance.targets.clients.client_library import ClientCapability
from conformance.targets.implementation import Capability
from models.config import TopicConfig
from models.constants import MAGIC_V1, Codec, TimestampType
from models.records import RecordSpec, build_legacy
from strategies.records import codecs_for_magic
from strategies.timestamps import around

from .client_helpers import (
    BrokerChecks,
    check_consumed,
    client_twin,
    client_under_test,
    compare_stored,
    consume,
    raw_fetch,
)
from .helpers import (
    Suite,
    Twin,
    accepted_timestamps,
    check_produce,
    consumer_view_clause,
    lifted_after,
    produce_version_for,
    producible_codecs,
    producible_magics,
    sent_batches,
    suite_settings,
    unique_topic,
)

CON_CLAUSES = (
    "CON.v0-no-timestamp",
    "CON.v1-uncompressed-own",
    "CON.v1-wrapper-createtime-inner",
    "CON.v1-wrapper-lat-wrapper-value",
    "CON.v2-createtime-base-plus-delta",
    "CON.v2-lat-max-timestamp",
)


def _write_clause(config: TopicConfig) -> str:
    """The broker clause of the suite's own writes (the client is not involved in them)."""
    lat = config.timestamp_type is TimestampType.LOG_APPEND_TIME
    return "CMP.lat-every-record-reads-now" if lat else "CMP.inplace-createtime-untouched"


def _consume_and_compare(
    suite: Suite, topic: str, config: TopicConfig, twin: Twin, broker: BrokerChecks, context: str
) -> None:
    """The library consumes the whole topic; its records against the stored batches, then the broker's answers to the
    suite's writes and its stored batches against the model's."""
    client = client_under_test(suite.impl, ClientCapability.CONSUME)
    raw, model = raw_fetch(twin, topic, suite.profile)
    records, failure = consume(client, topic, start=0, until=raw.high_watermark)
    check_consumed(records, raw.batches, start=0, until=raw.high_watermark, clause_of=consumer_view_clause,
                   context=f"{client.library.name} consumed {context}", typed=client.typed, failure=failure)
    broker.run()
    compare_stored(raw, model, config=config, profile=suite.profile, context=context)


@pytest.mark.kind("client")
@pytest.mark.clause(*CON_CLAUSES)
@given(data=draws())
@suite_settings(5)
def test_consumer_records(suite: Suite, data: Draws) -> None:
    """CON-1: every record the library delivers reads as §8's table says for its stored form. Each example writes
    every form the profile stores, a topic each: CreateTime and LogAppendTime, in each magic the profile honours as
    a topic format, so that every CON clause that applies is checked in every example."""
    data = suite.draws(data)
    client_under_test(suite.impl, ClientCapability.CONSUME)
    twin = client_twin(suite)
    types = [TimestampType.CREATE_TIME]
    if twin.has(Capability.LOG_APPEND_TIME):
        types.append(TimestampType.LOG_APPEND_TIME)
    magics = producible_magics(twin, suite.profile)
    formats = magics if suite.profile.honours_message_format_version else (suite.profile.max_magic,)
    stored = sorted(set(formats) | {suite.profile.max_magic}, key=lambda m: (m != MAGIC_V1, m))
    for timestamp_type in types:
        for fmt in stored:
            config = TopicConfig(timestamp_type=timestamp_type, message_format_magic=fmt,
                                 after_max_ms=lifted_after(twin, suite.profile))
            topic = unique_topic("client-con")
            twin.create_topic(topic, config)
            now = twin.leader_clock(topic)
            ts = accepted_timestamps(now, config, suite.profile, mistakes=False)
            broker = BrokerChecks()
            for _ in range(data.draw(st.integers(1, 3), label="requests")):
                sent = data.draw(sent_batches(twin, ts, magics=magics,
                                              codecs=producible_codecs(suite.impl.capabilities)))
                version = produce_version_for(sent[0].magic, suite.profile)
                observed, expected = twin.produce(topic, sent, produce_version=version)
                broker.later(check_produce, observed, expected, config=config, error_clause=_write_clause(config))
            _consume_and_compare(suite, topic, config, twin, broker, f"a topic {config}")


@pytest.mark.kind("client")
@pytest.mark.clause(*CON_CLAUSES)
@pytest.mark.requires(Capability.COMPRESSION)
@given(data=draws())
@suite_settings(1, at_least=1)  # each example writes every codec: one is the whole test (ten under thorough)
def test_consumer_codecs(suite: Suite, data: Draws) -> None:
    """CON-1 codec by codec: for every stored form the profile keeps (as test_consumer_records) and every codec the
    suite can write in it, a topic of its own in each timestamp type, holding an uncompressed batch, then one of that
    codec. A library that cannot decode a codec fails the fetch that brings it: where a topic mixes codecs (as in
    test_consumer_records) the first such batch hides the others, so which codec's failure shows would depend on the
    draws; here every codec shows its own in every example, with the uncompressed records read in the same fetch.
    Timestamps are a producer's ordinary ones (the last hour): the edge values are test_consumer_records' concern."""
    data = suite.draws(data)
    client_under_test(suite.impl, ClientCapability.CONSUME)
    twin = client_twin(suite)
    types = [TimestampType.CREATE_TIME]
    if twin.has(Capability.LOG_APPEND_TIME):
        types.append(TimestampType.LOG_APPEND_TIME)
    magics = producible_magics(twin, suite.profile)
    formats = magics if suite.profile.honours_message_format_version else (suite.profile.max_magic,)
    stored = sorted(set(formats) | {suite.profile.max_magic}, key=lambda m: (m != MAGIC_V1, m))
    producible = producible_codecs(suite.impl.capabilities)
    for timestamp_type in types:
        for fmt in stored:
            for codec in (c for c in codecs_for_magic(fmt) if c in producible and c is not Codec.NONE):
                config = TopicConfig(timestamp_type=timestamp_type, message_format_magic=fmt,
                                     after_max_ms=lifted_after(twin, suite.profile))
                topic = unique_topic("client-codec")
                twin.create_topic(topic, config)
                now = twin.leader_clock(topic)
                ts = around(now, -3_600_000, -1)
                broker = BrokerChecks()
                for label, written in (("uncompressed", Codec.NONE), ("compressed", codec)):
                    sent = data.draw(sent_batches(twin, ts, magics=(fmt,), codecs=(written,), max_records=4),
                                     label=label)
                    observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(fmt,
                                                                                                  suite.profile))
                    broker.later(check_produce, observed, expected, config=config,
                                 error_clause=_write_clause(config))
                _consume_and_compare(suite, topic, config, twin, broker, f"a {codec.name} batch on a topic {config}")


@pytest.mark.kind("client")
@pytest.mark.clause("CON.v1-wrapper-lat-wrapper-value", "CON.v1-wrapper-createtime-inner")
@pytest.mark.requires(Capability.PRODUCE_LEGACY, Capability.COMPRESSION)
@given(data=draws())
@suite_settings(10)
def test_v1_wrappers(suite: Suite, data: Draws) -> None:
    """CON-1 for compressed v1 wrappers kept as v1: the inner records carry their own timestamps, all before the
    leader's clock, so a reader that takes an inner record's own value on a LogAppendTime wrapper, or the wrapper's on
    a CreateTime one, delivers a different timestamp than the §8 table says."""
    data = suite.draws(data)
    if not (suite.profile.honours_message_format_version or suite.profile.max_magic == MAGIC_V1):
        pytest.skip("N/A: this profile stores no v1 wrappers (message.format.version is ignored from 3.0, CNV-3)")
    client_under_test(suite.impl, ClientCapability.CONSUME)
    twin = client_twin(suite)
    types = [TimestampType.CREATE_TIME]
    if twin.has(Capability.LOG_APPEND_TIME):
        types.append(TimestampType.LOG_APPEND_TIME)
    config = TopicConfig(timestamp_type=data.draw(st.sampled_from(types), label="topic type"),
                         message_format_magic=MAGIC_V1)
    topic = unique_topic("client-wrapper")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    codecs = [c for c in codecs_for_magic(MAGIC_V1) if c in producible_codecs(suite.impl.capabilities)
              and c is not Codec.NONE]
    broker = BrokerChecks()
    for index in range(data.draw(st.integers(1, 3), label="wrappers")):
        # Distinct stamps: a reader giving every inner record the wrapper's (max) timestamp shows from the first
        # example on.
        stamps = data.draw(st.lists(around(now, -3_600_000, -1), min_size=2, max_size=4, unique=True), label="stamps")
        codec = data.draw(st.sampled_from(codecs), label="codec")
        specs = [RecordSpec(t, b"w%d-%d" % (index, i), b"v") for i, t in enumerate(stamps)]
        sent = build_legacy(specs, magic=MAGIC_V1, codec=codec)
        observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(MAGIC_V1, suite.profile))
        broker.later(check_produce, observed, expected, config=config, error_clause=_write_clause(config))
    _consume_and_compare(suite, topic, config, twin, broker, f"v1 wrappers on a topic {config}")
