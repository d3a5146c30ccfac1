"""Idempotent producers and timestamps (docs/rules.md, VAL-12 and VAL-14): what a retried duplicate batch is
answered, that validation comes before de-duplication, and that an idempotent batch needs a topic stored in
format v2.

A retry is the same v2 batch (producer id, epoch, sequence range) sent again after it was stored. Producer
ids are drawn well away from those a broker allocates; a new producer starts at sequence 0 (a broker accepts
an unknown producer id there).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.checks import check_equal
from conformance.judging.draws import Draws, draws
from conformance.judging.observables import Obs
from conformance.targets.implementation import Capability
from models.cluster import ProduceResponse
from models.config import TopicConfig
from models.constants import MAGIC_V0, MAGIC_V1, TimestampType
from models.records import DefaultBatch, RecordSpec, build_v2
from strategies.timestamps import around

from .helpers import (
    Suite,
    bounds,
    check_fetch,
    check_produce,
    lifted_after,
    newest_fetch,
    suite_settings,
    unique_topic,
    v2_produce_version,
)

HOUR = 3_600_000
MARGIN_MS = 60_000


def _idempotent(data: Draws, stamps: list[int], key: str) -> DefaultBatch:
    producer_id = data.draw(st.integers(1 << 20, 1 << 40), label="producer id")
    batch = build_v2([RecordSpec(t, f"{key}-{i}".encode(), b"v") for i, t in enumerate(stamps)])
    return replace(batch, producer_id=producer_id, producer_epoch=0, base_sequence=0, crc=None)


def _check_answer(clause: str, observed: ProduceResponse, expected: ProduceResponse, context: str) -> bool:
    """The whole produce answer under `clause`: error, base offset and log_append_time (VAL-12)."""
    return (
        check_equal(clause, Obs.PRODUCE_ERROR, observed.error, expected.error, context)
        and check_equal(clause, Obs.PRODUCE_BASE_OFFSET, observed.base_offset, expected.base_offset, context)
        and check_equal(clause, Obs.PRODUCE_LOG_APPEND_TIME, observed.log_append_time, expected.log_append_time,
                        context)
    )


@pytest.mark.clause("VAL.duplicate-returns-cached-max")
@pytest.mark.requires(Capability.PRODUCE_V2, Capability.IDEMPOTENCE)
@given(data=draws())
@suite_settings(20)
def test_duplicate_answers_cached_max(suite: Suite, data: Draws) -> None:
    """VAL-12: a retried idempotent batch is not written again; it is answered with the offset it was stored
    at and, as log_append_time, the cached batch's MaxTimestamp, even on a CreateTime topic (where a new
    append answers -1)."""
    data, twin = suite.start(data)
    types = [TimestampType.CREATE_TIME] + ([TimestampType.LOG_APPEND_TIME] if twin.has(Capability.LOG_APPEND_TIME)
                                           else [])
    config = TopicConfig(timestamp_type=data.draw(st.sampled_from(types), label="topic type"),
                         after_max_ms=lifted_after(twin, suite.profile))
    topic = unique_topic("duplicate")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    stamps = data.draw(st.lists(around(now, -HOUR, 0), min_size=1, max_size=4), label="timestamps")
    batch = _idempotent(data, stamps, "dup")
    observed, expected = twin.produce(topic, [batch], produce_version=v2_produce_version(suite.profile), as_drawn=True)
    check_produce(observed, expected, config=config, error_clause="VAL.duplicate-returns-cached-max")
    for index in range(data.draw(st.integers(0, 2), label="other batches in between")):
        other = build_v2([RecordSpec(data.draw(around(now, -HOUR, 0), label="timestamp"), b"o%d" % index, b"v")])
        observed, expected = twin.produce(topic, [other], produce_version=v2_produce_version(suite.profile))
        check_produce(observed, expected, config=config, error_clause="VAL.duplicate-returns-cached-max")
    if twin.clock_control:
        leader = twin.leader(topic)
        twin.set_clock(leader, twin.clock(leader) + data.draw(st.integers(1, 60_000), label="clock step"))
    observed, expected = twin.produce(topic, [batch], produce_version=v2_produce_version(suite.profile), as_drawn=True)
    _check_answer("VAL.duplicate-returns-cached-max", observed, expected, f"retry of {stamps}, {config.timestamp_type}")
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    check_fetch(got, want, config=config, profile=suite.profile, stored_clause="VAL.duplicate-returns-cached-max",
                context="after the retry")


@pytest.mark.clause("VAL.validation-before-dedup")
@pytest.mark.requires(Capability.PRODUCE_V2, Capability.IDEMPOTENCE, Capability.CLOCK_CONTROL)
@given(data=draws())
@suite_settings(20)
def test_retry_validated_before_dedup(suite: Suite, data: Draws) -> None:
    """VAL-12: validation runs before duplicate detection. A batch accepted near the past bound is retried
    after the broker's clock moved on past it: the retry is rejected with INVALID_TIMESTAMP (32) instead of
    being answered as a duplicate."""
    data, twin = suite.start(data)
    bound = data.draw(st.sampled_from((HOUR, 2 * HOUR)), label="bound")
    if suite.profile.has_before_after_configs and twin.has(Capability.KIP_937_CONFIGS):
        config = TopicConfig(before_max_ms=bound)
    elif suite.profile.has_difference_config and twin.has(Capability.DIFFERENCE_CONFIG):
        config = TopicConfig(difference_max_ms=bound)
    else:
        pytest.skip("UNSUPPORTED: no past bound can be set on this target (no KIP-937 or difference config)")
    topic = unique_topic("dedup")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    before, _ = bounds(config, suite.profile)
    stamps = data.draw(st.lists(around(now - before, MARGIN_MS, 2 * MARGIN_MS), min_size=1, max_size=3),
                       label="timestamps near the past bound")
    batch = _idempotent(data, stamps, "retry")
    observed, expected = twin.produce(topic, [batch], produce_version=v2_produce_version(suite.profile), as_drawn=True)
    check_produce(observed, expected, config=config, error_clause="VAL.validation-before-dedup")
    leader = twin.leader(topic)
    # Far enough that the first record is out of range, or not: both answers are compared.
    twin.set_clock(leader, twin.clock(leader) + data.draw(st.sampled_from((3 * MARGIN_MS, MARGIN_MS // 2)),
                                                          label="clock step before the retry"))
    observed, expected = twin.produce(topic, [batch], produce_version=v2_produce_version(suite.profile), as_drawn=True)
    _check_answer("VAL.validation-before-dedup", observed, expected, f"retry of {stamps}, now {twin.clock(leader)}")
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    check_fetch(got, want, config=config, profile=suite.profile, stored_clause="VAL.validation-before-dedup",
                context="after the retry")


@pytest.mark.clause("VAL.idempotent-needs-v2")
@pytest.mark.requires(Capability.PRODUCE_V2, Capability.IDEMPOTENCE)
@given(data=draws())
@suite_settings(10)
def test_idempotent_needs_format_v2(suite: Suite, data: Draws) -> None:
    """VAL-14 / CNV-6: an idempotent batch for a topic whose message format is below v2 (honoured before
    3.0) is refused with UNSUPPORTED_FOR_MESSAGE_FORMAT (43): the producer state lives in v2 headers."""
    data = suite.draws(data)
    if not suite.profile.honours_message_format_version:
        pytest.skip("N/A: message.format.version is ignored from 3.0 (KIP-724): every topic stores v2")
    twin = suite.twin()
    config = TopicConfig(message_format_magic=data.draw(st.sampled_from((MAGIC_V1, MAGIC_V0)), label="format"))
    topic = unique_topic("idempotent-old-format")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    batch = _idempotent(data, data.draw(st.lists(around(now, -HOUR, 0), min_size=1, max_size=3), label="ts"), "old")
    observed, expected = twin.produce(topic, [batch], produce_version=v2_produce_version(suite.profile), as_drawn=True)
    check_produce(observed, expected, config=config, error_clause="VAL.idempotent-needs-v2",
                  context=f"format v{config.message_format_magic}")
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    check_fetch(got, want, config=config, profile=suite.profile, stored_clause="VAL.idempotent-needs-v2")

