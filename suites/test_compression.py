"""Compression and rewriting on append (docs/rules.md, CMP-1..8): which codec the stored batch has, and
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

from conformance.judging.capabilities import Capability
from conformance.judging.checks import check_equal
from conformance.judging.draws import Draws, draws
from conformance.judging.observables import Obs
from conformance.judging.verdicts import NOT_APPLICABLE_PREFIX
from conformance.plugin import require
from models.clauses import get_clause
from models.config import TopicConfig, target_magic
from models.constants import MAGIC_V0, MAGIC_V1, MAGIC_V2, Codec, TimestampType
from models.profiles import Profile
from models.records import AnyBatch, DefaultBatch, LegacyBatch
from strategies.configs import compression_types
from strategies.records import codecs_for_magic
from strategies.timestamps import around

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
    "CMP.lat-inplace-v2-keeps-base",
    "CMP.lat-rebuild-v2-base-first-source",
)
@pytest.mark.requires(Capability.LOG_APPEND_TIME)
@given(data=draws())
@suite_settings(40)
def test_log_append_time_storage(suite: Suite, data: Draws) -> None:
    """CMP-3/4/6: on a LogAppendTime topic every stored record reads the append's now; below the consumer view,
    in place keeps v2 BaseTimestamp, a rebuild writes the first source timestamp into it (TV-19, TV-20, TV-21).
    Topics stored as v1 are test_log_append_time_v1_storage's."""
    data, twin = suite.start(data)
    compression = data.draw(
        st.sampled_from(_topic_compression(suite.impl.capabilities, suite.profile)), label="compression"
    )
    config = _unbounded(twin, TimestampType.LOG_APPEND_TIME, compression, suite.profile)
    # v2 first: the simplest example keeps a v2 batch in place (CMP.lat-inplace-v2-keeps-base), whatever else the
    # budget reaches (v0/v1 sets are up-converted here, a rebuild).
    magics = tuple(sorted(producible_magics(twin, suite.profile), reverse=True))
    codecs = producible_codecs(suite.impl.capabilities)
    topic = unique_topic("cmp-lat")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    ts = accepted_timestamps(now, config, suite.profile)
    sent = data.draw(sent_batches(twin, ts, magics=magics, codecs=codecs))
    observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(sent[0].magic, suite.profile))
    context = f"compression.type={compression} sent magic {sent[0].magic} codec {sent[0].codec!r}"
    check_produce(observed, expected, config=config, error_clause="VAL.lat-topic-skips-range-check", context=context)
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    check_fetch(
        got,
        want,
        config=config,
        profile=suite.profile,
        stored_clause="CMP.topic-codec-recompresses",
        record_clause=lambda b: "CMP.lat-every-record-reads-now",
        sent=twin.sent.get(topic),
        context=context,
    )
    # Below the consumer view: what the broker kept of the producer's values (SHOULD clauses), where the
    # same batches were served (a KNOWN difference above lets the test go on with other ones).
    if [batch_header(b) for b in got.batches] != [batch_header(b) for b in want.batches]:
        return
    for obs, exp in zip(got.batches, want.batches, strict=True):
        if isinstance(exp, DefaultBatch) and isinstance(obs, DefaultBatch):
            in_place = _in_place(sent, exp, config, suite.profile)
            clause = "CMP.lat-inplace-v2-keeps-base" if in_place else "CMP.lat-rebuild-v2-base-first-source"
            check_equal(clause, Obs.BATCH_BASE_TIMESTAMP, obs.base_timestamp, exp.base_timestamp, context)


def _v1_message_clause(stored: AnyBatch) -> str | None:
    # FMT-6: an uncompressed v1 message is its own batch, so its header max is the one timestamp it stores.
    if isinstance(stored, LegacyBatch) and stored.magic == MAGIC_V1 and not stored.is_compressed:
        return "CMP.lat-v1-uncompressed-overwrites"
    return None


@pytest.mark.clause(
    "CMP.lat-every-record-reads-now",
    "CMP.lat-v1-uncompressed-overwrites",
    "CMP.lat-v1-compressed-wrapper-only",
    "CMP.lat-rebuild-v1-inner-now",
    "LO.record-own-timestamp",
)
@pytest.mark.requires(Capability.LOG_APPEND_TIME)
@given(data=draws())
@suite_settings(20)
def test_log_append_time_v1_storage(suite: Suite, data: Draws) -> None:
    """CMP-3/4 on topics stored as v1 (message.format.version honoured, before IBP 3.0, CNV-3), every path in
    every example: on a topic that keeps the producer's codec an uncompressed v1 set is stamped message by
    message (now and bit 3, TV-19) and a compressed one only on its wrapper, inner values kept (TV-20); on a
    topic with a codec of its own an uncompressed v1 set is rebuilt with now in every inner message and in the
    wrapper (TV-21). Producer stamps lie before the leader's now, so a value kept instead of stamped shows."""
    data = suite.draws(data)
    if suite.profile.name not in get_clause("CMP.lat-v1-uncompressed-overwrites").profiles:
        pytest.skip(f"{NOT_APPLICABLE_PREFIX}{suite.profile.name} stores no v1 (message.format.version is ignored "
                    "from 3.0, CNV-3)")  # fmt: skip
    require(suite.impl, Capability.PRODUCE_LEGACY, Capability.COMPRESSION)
    twin = suite.twin()
    codecs = [c for c in codecs_for_magic(MAGIC_V1) if c in producible_codecs(suite.impl.capabilities)]
    compressed = data.draw(st.sampled_from([c for c in codecs if c is not Codec.NONE]), label="producer codec")
    others = [c for c in codecs if c not in (Codec.NONE, compressed)] or [compressed]
    own = data.draw(st.sampled_from(others), label="topic codec")
    v1 = TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME, message_format_magic=MAGIC_V1,
                     after_max_ms=lifted_after(twin, suite.profile))  # fmt: skip
    for compression, sends in (("producer", (Codec.NONE, compressed)), (own.name.lower(), (Codec.NONE,))):
        config = replace(v1, compression_type=compression)
        topic = unique_topic("cmp-lat-v1")
        twin.create_topic(topic, config)
        now = twin.leader_clock(topic)
        sent: dict[int, tuple[AnyBatch, ...]] = {}
        for codec in sends:
            batch = data.draw(sent_batches(twin, around(now, -3_600_000, -1), magics=(MAGIC_V1,), codecs=(codec,)))
            version = produce_version_for(MAGIC_V1, suite.profile)
            observed, expected = twin.produce(topic, batch, produce_version=version)
            context = f"compression.type={compression}, v1 format, sent codec {codec!r}"
            check_produce(observed, expected, config=config, error_clause="VAL.lat-topic-skips-range-check",
                          context=context)  # fmt: skip
            sent[expected.base_offset] = batch
        got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
        context = f"compression.type={compression}, v1 format"
        check_fetch(got, want, config=config, profile=suite.profile, stored_clause="CMP.topic-codec-recompresses",
                    record_clause=lambda b: _v1_message_clause(b) or "CMP.lat-every-record-reads-now",
                    header_clause=_v1_message_clause, context=context)  # fmt: skip
        if twin.has(Capability.LIST_OFFSETS) and want.batches:
            # LO-2 with CON-1: a broker answering a lookup reads its stored v1 records as a consumer does, so the
            # record found at the first stamp carries the stamp, not the producer's time.
            version, target = list_offsets_versions(suite.profile)[-1], want.records()[0].timestamp
            found, wanted = twin.list_offsets(topic, target, version=version)
            check_list_offsets(found, wanted, target=target, version=version, profile=suite.profile,
                               clause="LO.record-own-timestamp", context=context)  # fmt: skip
        # Below the consumer view (SHOULD clauses): the inner values a wrapper keeps, where the same batches were
        # served (a KNOWN difference above lets the test go on with other ones).
        if [batch_header(b) for b in got.batches] != [batch_header(b) for b in want.batches]:
            continue
        for obs, exp in zip(got.batches, want.batches, strict=True):
            if isinstance(exp, LegacyBatch) and isinstance(obs, LegacyBatch) and exp.is_compressed:
                in_place = compression == "producer"
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
