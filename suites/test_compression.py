"""Compression and rewriting on append (SEMANTICS §3, CMP-1..8): which codec the stored batch has, and
what happens to timestamps on the in-place and rebuild paths, for CreateTime and LogAppendTime topics.

The stored form is observed through a Fetch at the newest version (no conversion). Headers are compared
before records (what the broker wrote before how a reader reads it).

Compression clauses not covered here, and why:
- CMP.same-codec-in-place, CMP.level-does-not-recompress: "in place" shows as an unchanged byte size and
  the protocol here exposes decoded batches, not their sizes; compression levels are not in the protocol.
- CMP.append-max-timestamp: the append's max is what the segment and the time index receive; it is
  observed through ListOffsets in test_list_offsets and the state machine (MAX_TIMESTAMP, lookups).
- CMP.offset-of-max-batch-last, CMP.offset-of-max-exact-record: the offset paired with the max in the
  time index is internal; it changes no ListOffsets answer of a 3.8+ broker (LO-6 searches the batch).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.checks import check_equal
from conformance.draws import Draws, draws
from conformance.implementation import Capability
from conformance.observables import Obs
from models.config import TopicConfig, target_magic
from models.constants import MAGIC_V0, MAGIC_V1, MAGIC_V2, Codec, TimestampType
from models.profiles import Profile
from models.records import AnyBatch, DefaultBatch, LegacyBatch
from strategies.configs import compression_types

from .helpers import (
    Suite,
    Twin,
    accepted_timestamps,
    batch_header,
    check_fetch,
    check_list_offsets,
    check_produce,
    lifted_after,
    list_offsets_versions,
    newest_fetch,
    produce_version_for,
    producible_codecs,
    producible_magics,
    sent_batches,
    suite_settings,
    unique_topic,
)


def _topic_compression(caps: frozenset[Capability], profile: Profile) -> tuple[str, ...]:
    allowed = {"producer", "uncompressed"}
    if Capability.COMPRESSION in caps:
        allowed |= {"gzip", "snappy", "lz4"}
    if Capability.ZSTD in caps:
        allowed.add("zstd")
    return tuple(c for c in compression_types(profile) if c in allowed)


def _in_place(sent: tuple[AnyBatch, ...], stored: AnyBatch, config: TopicConfig, profile: Profile) -> bool:
    """CMP-1: the same codec and magic (and not v0) means the batch was validated in place."""
    first = sent[0]
    return (
        first.codec == config.target_codec(first.codec)
        and first.magic == target_magic(config, profile)
        and stored.magic == first.magic
    )


def _unbounded(twin: Twin, config_type: TimestampType, compression: str, profile: Profile) -> TopicConfig:
    after = lifted_after(twin, profile)
    return TopicConfig(timestamp_type=config_type, compression_type=compression, after_max_ms=after)


@pytest.mark.clause(
    "CMP.topic-codec-recompresses",
    "CMP.inplace-createtime-untouched",
    "CMP.rebuild-createtime-copies",
    "VAL.header-max-recomputed",
)
@given(data=draws())
@suite_settings(40)
def test_createtime_storage(suite: Suite, data: Draws) -> None:
    """CMP-1/2/5: on a CreateTime topic the stored codec is the topic's (or the producer's), and every record
    keeps its timestamp whether the batch stayed in place or was rebuilt (TV-17, TV-18, TV-22)."""
    data, twin = suite.start(data)
    compression = data.draw(
        st.sampled_from(_topic_compression(suite.impl.capabilities, suite.profile)), label="compression"
    )
    config = _unbounded(twin, TimestampType.CREATE_TIME, compression, suite.profile)
    topic = unique_topic("cmp-ct")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    ts = accepted_timestamps(now, config, suite.profile, mistakes=False)
    magics, codecs = producible_magics(twin, suite.profile), producible_codecs(suite.impl.capabilities)
    sent = data.draw(sent_batches(twin, ts, magics=magics, codecs=codecs))
    observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(sent[0].magic, suite.profile))
    context = f"compression.type={compression} sent magic {sent[0].magic} codec {sent[0].codec!r}"
    check_produce(observed, expected, config=config, error_clause="CMP.rebuild-createtime-copies", context=context)
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))

    def record_clause(stored: AnyBatch) -> str:
        if stored.magic == MAGIC_V0:
            return "CON.v0-no-timestamp"
        if _in_place(sent, stored, config, suite.profile):
            return "CMP.inplace-createtime-untouched"
        return "CMP.rebuild-createtime-copies"

    check_fetch(
        got,
        want,
        config=config,
        profile=suite.profile,
        stored_clause="CMP.topic-codec-recompresses",
        record_clause=record_clause,
        context=context,
    )


@pytest.mark.clause(
    "CMP.lat-every-record-reads-now",
    "CMP.lat-v1-uncompressed-overwrites",
    "CMP.lat-v1-compressed-wrapper-only",
    "CMP.lat-rebuild-v1-inner-now",
    "CMP.lat-inplace-v2-keeps-base",
    "CMP.lat-rebuild-v2-base-first-source",
    "LO.record-own-timestamp",
)
@pytest.mark.requires(Capability.LOG_APPEND_TIME)
@given(data=draws())
@suite_settings(40)
def test_log_append_time_storage(suite: Suite, data: Draws) -> None:
    """CMP-3/4/6: on a LogAppendTime topic every stored v1/v2 record reads the append's now; below the
    consumer view, in place keeps v2 BaseTimestamp and v1 inner values, a rebuild writes now into v1 inner
    messages and the first source timestamp into v2 BaseTimestamp (TV-19, TV-20, TV-21)."""
    data, twin = suite.start(data)
    compression = data.draw(
        st.sampled_from(_topic_compression(suite.impl.capabilities, suite.profile)), label="compression"
    )
    config = _unbounded(twin, TimestampType.LOG_APPEND_TIME, compression, suite.profile)
    magics, codecs = producible_magics(twin, suite.profile), producible_codecs(suite.impl.capabilities)
    # CNV-3: below IBP 3.0 a topic stored as v1 is where the v1 stamping paths run (CMP-3/4): a third of the topics,
    # v1 sets sent there, half of them validated in place (the producer's codec kept).
    v1_storable = suite.profile.honours_message_format_version and suite.profile.max_magic == MAGIC_V2
    if v1_storable and MAGIC_V1 in magics and data.draw(st.integers(0, 2), label="topic stored as v1 (0)") == 0:
        if data.draw(st.booleans(), label="producer's codec kept"):
            compression = "producer"
        config = replace(_unbounded(twin, TimestampType.LOG_APPEND_TIME, compression, suite.profile),
                         message_format_magic=MAGIC_V1)  # fmt: skip
        magics, codecs = (MAGIC_V1,), tuple(c for c in codecs if c is not Codec.ZSTD)
    topic = unique_topic("cmp-lat")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    ts = accepted_timestamps(now, config, suite.profile)
    sent = data.draw(sent_batches(twin, ts, magics=magics, codecs=codecs))
    observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(sent[0].magic, suite.profile))
    context = f"compression.type={compression} sent magic {sent[0].magic} codec {sent[0].codec!r}"
    check_produce(observed, expected, config=config, error_clause="VAL.lat-topic-skips-range-check", context=context)
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))

    def record_clause(stored: AnyBatch) -> str:
        if isinstance(stored, LegacyBatch) and stored.magic == MAGIC_V1 and not stored.is_compressed:
            return "CMP.lat-v1-uncompressed-overwrites"
        return "CMP.lat-every-record-reads-now"

    check_fetch(
        got,
        want,
        config=config,
        profile=suite.profile,
        stored_clause="CMP.topic-codec-recompresses",
        record_clause=record_clause,
        context=context,
    )
    if any(isinstance(b, LegacyBatch) for b in want.batches) and twin.has(Capability.LIST_OFFSETS):
        # LO-2 with CON-1: a broker answering a lookup reads its stored v1 records as a consumer does, so on a
        # LogAppendTime topic stored as v1 the record found at the append's now carries the wrapper's timestamp.
        version, target = list_offsets_versions(suite.profile)[-1], want.records()[0].timestamp
        found, wanted = twin.list_offsets(topic, target, version=version)
        check_list_offsets(found, wanted, target=target, version=version, profile=suite.profile,
                           clause="LO.record-own-timestamp", context=context)  # fmt: skip
    # Below the consumer view: what the broker kept of the producer's values (SHOULD clauses), where the
    # same batches were served (a KNOWN difference above lets the test go on with other ones).
    if [batch_header(b) for b in got.batches] != [batch_header(b) for b in want.batches]:
        return
    for obs, exp in zip(got.batches, want.batches, strict=True):
        in_place = _in_place(sent, exp, config, suite.profile)
        if isinstance(exp, DefaultBatch) and isinstance(obs, DefaultBatch):
            clause = "CMP.lat-inplace-v2-keeps-base" if in_place else "CMP.lat-rebuild-v2-base-first-source"
            check_equal(clause, Obs.BATCH_BASE_TIMESTAMP, obs.base_timestamp, exp.base_timestamp, context)
        elif isinstance(exp, LegacyBatch) and isinstance(obs, LegacyBatch) and exp.is_compressed:
            clause = "CMP.lat-v1-compressed-wrapper-only" if in_place else "CMP.lat-rebuild-v1-inner-now"
            check_equal(
                clause,
                Obs.INNER_TIMESTAMPS,
                [e.message.stored_timestamp for e in obs.message.inner],
                [e.message.stored_timestamp for e in exp.message.inner],
                context,
            )


@pytest.mark.clause("CMP.topic-codec-recompresses", "CMP.rebuild-createtime-copies")
@pytest.mark.requires(Capability.COMPRESSION)
@given(data=draws())
@suite_settings(15)
def test_uncompressed_into_compressed_topic(suite: Suite, data: Draws) -> None:
    """CMP-1/5 (TV-18): an uncompressed batch sent to a topic with a compression.type is stored with the
    topic's codec, one batch, timestamps kept and header max = the largest."""
    data = suite.draws(data)
    codec = data.draw(st.sampled_from((Codec.GZIP, Codec.SNAPPY, Codec.LZ4)), label="codec")
    twin = suite.twin()
    config = _unbounded(twin, TimestampType.CREATE_TIME, codec.name.lower(), suite.profile)
    topic = unique_topic("cmp-recompress")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    magics = tuple(m for m in producible_magics(twin, suite.profile) if m in (MAGIC_V1, MAGIC_V2))
    ts = accepted_timestamps(now, config, suite.profile, specials=False, mistakes=False)
    sent = data.draw(sent_batches(twin, ts, magics=magics, codecs=(Codec.NONE,), min_records=2))
    observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(sent[0].magic, suite.profile))
    check_produce(observed, expected, config=config, error_clause="CMP.rebuild-createtime-copies")
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    check_fetch(
        got,
        want,
        config=config,
        profile=suite.profile,
        stored_clause="CMP.topic-codec-recompresses",
        record_clause=lambda b: "CMP.rebuild-createtime-copies",
    )
