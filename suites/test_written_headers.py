"""Batch headers the broker itself writes (docs/rules.md, FMT-7 and FMT-11, as a writer): a v1 wrapper it
builds (for a topic stored in format v1 with a topic codec, or when it down-converts a v2 batch for an old
fetch) carries the largest inner timestamp (CreateTime) or the append time (LogAppendTime); a v2 batch it
rebuilds (the topic's codec differs from the producer's) starts its BaseTimestamp at the first record.

The producer never sends such a header here (uncompressed v0/v1 messages, or v2 batches), so every wrapper
and every rebuilt batch read back was written by the broker.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.checks import check_equal, check_true
from conformance.judging.draws import Draws, draws
from conformance.judging.observables import Obs
from conformance.targets.implementation import Capability
from models.cluster import FetchResponse
from models.config import TopicConfig
from models.constants import MAGIC_V1, MAGIC_V2, Codec, TimestampType
from models.records import DefaultBatch, LegacyBatch, RecordSpec, build_batches
from strategies.timestamps import around

from .helpers import (
    Suite,
    check_fetch,
    check_produce,
    lifted_after,
    newest_fetch,
    produce_version_for,
    producible_codecs,
    producible_magics,
    suite_settings,
    unique_topic,
)

HOUR = 3_600_000
WRAPPER = "FMT.v1-wrapper-timestamp-is-max"
BASE = "FMT.v2-base-is-first-record"


def _codec_name(codec: Codec) -> str:
    return "uncompressed" if codec is Codec.NONE else codec.name.lower()


def _check_wrappers(observed: FetchResponse, expected: FetchResponse, lat: bool, context: str) -> int:
    """FMT-7 on every compressed v1 wrapper served: CreateTime, its timestamp is its largest inner one;
    LogAppendTime, the append time the model stamped. Returns how many wrappers were checked."""
    checked = 0
    for got, want in zip(observed.batches, expected.batches, strict=False):
        if not (isinstance(got, LegacyBatch) and got.magic == MAGIC_V1 and got.is_compressed):
            continue
        where = f"{context} wrapper at offset {got.base_offset}"
        if lat:
            check_equal(WRAPPER, Obs.BATCH_MAX_TIMESTAMP, got.max_timestamp, want.max_timestamp, where)
        else:
            inner = [e.message.stored_timestamp for e in got.message.inner]
            check_true(WRAPPER, Obs.BATCH_MAX_TIMESTAMP, got.max_timestamp == max(inner, default=-1),
                       got.max_timestamp, where, expectation=f"the largest inner timestamp, {max(inner, default=-1)}")
        checked += 1
    return checked


@pytest.mark.clause(WRAPPER)
@pytest.mark.requires(Capability.COMPRESSION)
@given(data=draws())
@suite_settings(30)
def test_broker_built_v1_wrappers(suite: Suite, data: Draws) -> None:
    """FMT-7 (TV-26): every v1 wrapper the broker builds holds the largest inner timestamp (CreateTime) or
    the append time (LogAppendTime): when it stores uncompressed records in a topic of format v1 with a topic
    codec (before 3.0), or when it down-converts compressed v2 batches for Fetch v2/v3 (before 4.0)."""
    data, twin = suite.start(data)
    ways = []
    if suite.profile.honours_message_format_version and producible_magics(twin, suite.profile):
        ways.append("stored as v1")
    if suite.profile.down_conversion and twin.has(Capability.DOWN_CONVERSION, Capability.PRODUCE_V2):
        ways.append("down-converted")
    if not ways:
        pytest.skip("N/A: this suite.profile neither stores v1 wrappers nor down-converts (CNV-3, CNV-7)")
    way = data.draw(st.sampled_from(ways), label="how the broker comes to build wrappers")
    lat = twin.has(Capability.LOG_APPEND_TIME) and data.draw(st.booleans(), label="LogAppendTime topic")
    codecs = [c for c in producible_codecs(suite.impl.capabilities) if c not in (Codec.NONE, Codec.ZSTD)]
    codec = data.draw(st.sampled_from(codecs), label="codec")
    stored_v1 = way == "stored as v1"
    config = TopicConfig(
        timestamp_type=TimestampType.LOG_APPEND_TIME if lat else TimestampType.CREATE_TIME,
        after_max_ms=lifted_after(twin, suite.profile),
        message_format_magic=MAGIC_V1 if stored_v1 else MAGIC_V2,
        compression_type=_codec_name(codec) if stored_v1 else "producer",
    )
    topic = unique_topic("wrappers")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    magics = producible_magics(twin, suite.profile) if stored_v1 else (MAGIC_V2,)
    for index in range(data.draw(st.integers(1, 3), label="requests")):
        stamps = data.draw(st.lists(around(now, -HOUR, 0), min_size=1, max_size=4), label="timestamps")
        magic = data.draw(st.sampled_from(magics), label="magic")
        # Uncompressed when stored as v1 (the broker compresses); compressed v2 to be down-converted.
        request = build_batches([RecordSpec(t, b"w%d-%d" % (index, i), b"v") for i, t in enumerate(stamps)],
                                magic=magic, codec=Codec.NONE if stored_v1 else codec)
        observed, expected = twin.produce(topic, request, produce_version=produce_version_for(magic, suite.profile))
        check_produce(observed, expected, config=config, error_clause=WRAPPER)
    fetch_version = (
        newest_fetch(suite.profile) if stored_v1 else data.draw(st.sampled_from((2, 3)), label="fetch version")
    )
    got, want = twin.fetch(topic, fetch_version=fetch_version)
    context = f"{way}, {config.timestamp_type.name}, fetch v{fetch_version}"
    _check_wrappers(got, want, lat, context)
    check_fetch(
        got,
        want,
        config=config,
        profile=suite.profile,
        stored_clause=WRAPPER,
        header_clause=lambda b: WRAPPER,
        record_clause=lambda b: WRAPPER,
        context=context,
    )


@pytest.mark.clause(BASE)
@pytest.mark.requires(Capability.PRODUCE_V2, Capability.COMPRESSION)
@given(data=draws())
@suite_settings(20)
def test_rebuilt_batch_base_is_first_record(suite: Suite, data: Draws) -> None:
    """FMT-11 (TV-26): a v2 batch the broker rebuilds for the topic's codec sets BaseTimestamp to its first
    record's timestamp (not the smallest one) and MaxTimestamp to the largest; the records, sent out of order,
    still read their own timestamps."""
    data, twin = suite.start(data)
    codecs = list(producible_codecs(suite.impl.capabilities))
    producer, topic_codec = data.draw(
        st.permutations(codecs).map(lambda c: (c[0], c[1])), label="producer, topic codec"
    )
    config = TopicConfig(after_max_ms=lifted_after(twin, suite.profile), compression_type=_codec_name(topic_codec))
    topic = unique_topic("rebuilt-base")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    for index in range(data.draw(st.integers(1, 3), label="requests")):
        # Not in order: the first record is rarely the smallest.
        stamps = data.draw(st.lists(around(now, -HOUR, 0), min_size=2, max_size=5, unique=True), label="timestamps")
        request = build_batches(
            [RecordSpec(t, b"b%d-%d" % (index, i), b"v") for i, t in enumerate(stamps)], magic=MAGIC_V2, codec=producer
        )
        observed, expected = twin.produce(topic, request, produce_version=produce_version_for(MAGIC_V2, suite.profile))
        check_produce(observed, expected, config=config, error_clause=BASE)
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    context = f"producer {producer.name}, topic {topic_codec.name}"
    for obs, exp in zip(got.batches, want.batches, strict=False):
        if isinstance(obs, DefaultBatch) and isinstance(exp, DefaultBatch):
            check_equal(
                BASE,
                Obs.BATCH_BASE_TIMESTAMP,
                obs.base_timestamp,
                exp.base_timestamp,
                f"{context} batch at offset {exp.base_offset}",
            )
    check_fetch(got, want, config=config, profile=suite.profile, stored_clause=BASE, context=context)
