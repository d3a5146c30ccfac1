"""Up- and down-conversion (docs/rules.md, CNV-1..7): legacy produce stored in the topic's format, fetches
at old versions, and 4.0's removal of both.

Conversion clauses not covered here, and why:
- CNV.down-convert-drops-control: control batches come from transactions, which the protocol cannot
  produce (no transactional coordinator).
- CNV.down-conversion-disabled: covered through `message.downconversion.enable` drawn by the configs
  strategy only in test_down_conversion's topic config (compared, not asserted separately).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.capabilities import Capability
from conformance.judging.draws import Draws, draws
from conformance.plugin import require
from models.config import TopicConfig
from models.constants import MAGIC_V0, MAGIC_V1, MAGIC_V2, Codec, TimestampType
from models.conversion import fetch_magic_for_version
from models.records import AnyBatch

from .helpers import (
    LEGACY_PRODUCE_VERSION,
    Suite,
    accepted_timestamps,
    check_fetch,
    check_produce,
    lifted_after,
    newest_fetch,
    produce_version_for,
    producible_codecs,
    producible_magics,
    sent_batches,
    suite_settings,
    unique_topic,
    v2_produce_version,
)


@pytest.mark.clause(
    "CNV.stored-magic",
    "CNV.legacy-produce-any-magic",
    "CNV.up-convert-v0-createtime",
    "CNV.up-convert-v0-lat",
    "CNV.up-convert-v1-v2-preserves",
    "CMP.lat-every-record-reads-now",
)
@pytest.mark.requires(Capability.PRODUCE_LEGACY)
@given(data=draws())
@suite_settings(40)
def test_up_conversion(suite: Suite, data: Draws) -> None:
    """CNV-1/3/4 (TV-21, TV-22): v0/v1 batches sent with Produce v0-v2 are stored in the topic's format
    (where honoured, else v2); v0 records read -1/CreateTime or now/LogAppendTime, v1 records keep theirs."""
    data = suite.draws(data)
    lat = data.draw(st.booleans(), label='lat')
    produce_version = data.draw(st.integers(0, 2), label='produce_version')
    twin = suite.twin()
    lat = lat and twin.has(Capability.LOG_APPEND_TIME)
    # Newest format first: the simplest example (Hypothesis tries it first) sends v0 to a newer format, so the
    # up-conversion of a v0 record (CNV.up-convert-v0-createtime) is always checked, whatever else the budget reaches.
    fmt_choices = tuple(m for m in (MAGIC_V2, MAGIC_V1, MAGIC_V0) if m <= suite.profile.max_magic)
    fmt = data.draw(st.sampled_from(fmt_choices), label="format magic")
    config = TopicConfig(
        timestamp_type=TimestampType.LOG_APPEND_TIME if lat else TimestampType.CREATE_TIME,
        message_format_magic=fmt,
        after_max_ms=lifted_after(twin, suite.profile),
    )
    topic = unique_topic("up")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    legacy = tuple(m for m in producible_magics(twin, suite.profile) if m < MAGIC_V2)
    ts = accepted_timestamps(now, config, suite.profile, specials=False, mistakes=False)
    sent = data.draw(sent_batches(twin, ts, magics=legacy, codecs=producible_codecs(suite.impl.capabilities)))
    observed, expected = twin.produce(topic, sent, produce_version=produce_version)
    check_produce(observed, expected, config=config, error_clause="CNV.legacy-produce-any-magic")
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))

    def record_clause(stored: AnyBatch) -> str:
        source = sent[0].magic
        if stored.magic == source:
            return "CNV.stored-magic"
        if source == MAGIC_V0:
            return "CNV.up-convert-v0-lat" if lat else "CNV.up-convert-v0-createtime"
        return "CNV.up-convert-v1-v2-preserves"

    check_fetch(got, want, config=config, profile=suite.profile, stored_clause="CNV.stored-magic",
                record_clause=record_clause, context=f"format v{fmt}, sent v{sent[0].magic}")


@pytest.mark.clause(
    "CNV.fetch-version-caps-magic",
    "CNV.down-convert-keeps-type",
    "CNV.down-convert-createtime-keeps-timestamps",
    "CNV.down-convert-v0-drops",
    "CNV.down-convert-zstd-unsupported",
    "CNV.down-conversion-disabled",
)
@pytest.mark.requires(Capability.DOWN_CONVERSION)
@given(data=draws())
@suite_settings(40)
def test_down_conversion(suite: Suite, data: Draws) -> None:
    """CNV-2/5 (TV-27): batches of the profile's newest format (v2; v1 on 0.10) fetched at a version that reads an
    older one come back as v0 (timestamps dropped) or v1 (type kept; LogAppendTime messages carry the batch max;
    CreateTime keeps each timestamp); zstd cannot be converted."""
    data = suite.draws(data)
    newest = suite.profile.max_magic
    require(suite.impl, Capability.PRODUCE_V2 if newest == MAGIC_V2 else Capability.PRODUCE_LEGACY)
    # The richest case first (Hypothesis starts from and shrinks towards the first choice): conversion on,
    # to v1 (Fetch v2-v3), where the type and the timestamps must survive; a small budget then still meets it.
    lat = data.draw(st.sampled_from((True, False)), label='lat')
    older = tuple(v for v in (3, 2, 1, 0) if fetch_magic_for_version(v) < newest)
    fetch_version = data.draw(st.sampled_from(older), label='fetch_version')
    # message.downconversion.enable came in 2.0 (KIP-283): before, conversion is always on.
    enable = True
    if suite.profile.has_downconversion_config:
        enable = data.draw(st.sampled_from((True, False)), label='enable')
    twin = suite.twin()
    lat = lat and twin.has(Capability.LOG_APPEND_TIME)
    config = TopicConfig(
        timestamp_type=TimestampType.LOG_APPEND_TIME if lat else TimestampType.CREATE_TIME,
        after_max_ms=lifted_after(twin, suite.profile),
        downconversion_enable=enable,
    )
    topic = unique_topic("down")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    ts = accepted_timestamps(now, config, suite.profile, specials=False, mistakes=False)
    codecs = producible_codecs(suite.impl.capabilities)
    for _ in range(data.draw(st.integers(1, 3), label="requests")):
        sent = data.draw(sent_batches(twin, ts, magics=(newest,), codecs=codecs))
        observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(newest, suite.profile))
        check_produce(observed, expected, config=config, error_clause="CNV.stored-magic")
    # What was stored first, under the append clauses (CMP/VAL/CON), so that a fault in the stored batches
    # is not blamed on the conversion; then the converted view, whose headers the converter writes (CNV-5).
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    check_fetch(got, want, config=config, profile=suite.profile, context="as stored")
    got, want = twin.fetch(topic, fetch_version=fetch_version)
    if not enable:
        stored = "CNV.down-conversion-disabled"
    elif any(b.codec is Codec.ZSTD for b in twin.ref.cluster.leader_log(topic).batches()):  # type: ignore[attr-defined]
        stored = "CNV.down-convert-zstd-unsupported"
    else:
        stored = "CNV.fetch-version-caps-magic"

    def record_clause(served: AnyBatch) -> str:
        if served.magic == MAGIC_V0:
            return "CNV.down-convert-v0-drops"
        return "CNV.down-convert-keeps-type" if lat else "CNV.down-convert-createtime-keeps-timestamps"

    def header_clause(served: AnyBatch) -> str | None:
        return record_clause(served) if served.magic < newest else None

    check_fetch(got, want, config=config, profile=suite.profile, stored_clause=stored, record_clause=record_clause,
                header_clause=header_clause, context=f"fetch v{fetch_version}")


@pytest.mark.clause("CNV.no-conversion", "VAL.produce-v3-one-v2-batch", "VAL.rejection-response-fields")
@pytest.mark.requires(Capability.PRODUCE_V2)
@given(data=draws())
@suite_settings(20)
def test_legacy_requests_refused(suite: Suite, data: Draws) -> None:
    """CNV-1/CNV-7/VAL-14: legacy (v0/v1) batches in a Produce v3+ request are refused, and in 4.0 Produce
    v0-v2 and Fetch v0-v3 get no answer at all (the broker closes the connection: NETWORK_EXCEPTION), never
    converted."""
    data, twin = suite.start(data)
    config = TopicConfig(after_max_ms=lifted_after(twin, suite.profile))
    topic = unique_topic("refused")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    ts = accepted_timestamps(now, config, suite.profile, specials=False, mistakes=False)
    codecs = tuple(c for c in producible_codecs(suite.impl.capabilities) if c is not Codec.ZSTD)
    legacy = data.draw(sent_batches(twin, ts, magics=(MAGIC_V0, MAGIC_V1), codecs=codecs))
    observed, expected = twin.produce(topic, legacy, produce_version=v2_produce_version(suite.profile))
    check_produce(observed, expected, config=config, error_clause="VAL.produce-v3-one-v2-batch")
    if not suite.profile.down_conversion:
        observed, expected = twin.produce(topic, legacy, produce_version=LEGACY_PRODUCE_VERSION)
        check_produce(observed, expected, config=config, error_clause="CNV.no-conversion")
        good = data.draw(sent_batches(twin, ts, magics=(MAGIC_V2,), codecs=codecs))
        twin.produce(topic, good, produce_version=produce_version_for(MAGIC_V2, suite.profile))
        got, want = twin.fetch(topic, fetch_version=data.draw(st.integers(0, 3), label="fetch version"))
        check_fetch(got, want, config=config, profile=suite.profile, stored_clause="CNV.no-conversion")


@pytest.mark.clause("CNV.down-convert-zstd-unsupported")
@pytest.mark.requires(Capability.DOWN_CONVERSION, Capability.PRODUCE_V2, Capability.ZSTD)
@given(data=draws())
@suite_settings(10)
def test_zstd_not_down_converted(suite: Suite, data: Draws) -> None:
    """CNV-5 (TV-27): a fetch below v4 (magic 0/1) whose first batch to convert is zstd fails with
    UNSUPPORTED_COMPRESSION_TYPE (76), "Down-conversion of zstandard-compressed batches is not supported"; with
    batches before it, a consumer gets those, converted, and each response ends before the zstd one (Kafka's lazy
    down-conversion, KIP-283). (test_down_conversion meets zstd only now and then.)"""
    data, twin = suite.start(data)
    config = TopicConfig(after_max_ms=lifted_after(twin, suite.profile))
    topic = unique_topic("zstd-down")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    ts = accepted_timestamps(now, config, suite.profile, specials=False, mistakes=False)
    others = tuple(c for c in producible_codecs(suite.impl.capabilities) if c is not Codec.ZSTD)
    for _ in range(data.draw(st.integers(0, 2), label="batches before the zstd one")):
        sent = data.draw(sent_batches(twin, ts, magics=(MAGIC_V2,), codecs=others))
        observed, expected = twin.produce(topic, sent, produce_version=v2_produce_version(suite.profile))
        check_produce(observed, expected, config=config, error_clause="CNV.stored-magic")
    sent = data.draw(sent_batches(twin, ts, magics=(MAGIC_V2,), codecs=(Codec.ZSTD,)))
    observed, expected = twin.produce(topic, sent, produce_version=v2_produce_version(suite.profile))
    check_produce(observed, expected, config=config, error_clause="CNV.stored-magic")
    fetch_version = data.draw(st.sampled_from((3, 2, 1, 0)), label="fetch version")
    got, want = twin.fetch(topic, fetch_version=fetch_version)
    check_fetch(got, want, config=config, profile=suite.profile, stored_clause="CNV.down-convert-zstd-unsupported",
                context=f"fetch v{fetch_version}")
