"""Validation on append (docs/rules.md, VAL-1..15): the range check, LogAppendTime topics, producer-set
LogAppendTime flags, record errors and the produce response.

Each example produces to a fresh topic of the shared implementation and to the reference model, with the
same broker clocks (CLOCK_CONTROL: exact bound probing needs the broker's `now`), and compares the
answers, then what a fetch shows (nothing written on rejection: VAL-9).

Record-error kinds and message fields are test_record_errors'; Long.MIN_VALUE, timestamps below -1 and
corrupt batches test_produce_edges'; idempotent retries test_idempotence's. The validation clauses no suite
checks (client-side behaviour, fields older responses lack) say where they are checked instead
(`kafka-conformance clauses --coverage`).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.capabilities import Capability
from conformance.judging.checks import check_equal
from conformance.judging.draws import Draws, draws
from conformance.judging.observables import Obs
from conformance.targets.kinds.implementation import Implementation, ImplementationFactory
from models.config import TopicConfig
from models.constants import LONG_MAX, MAGIC_V1, MAGIC_V2, ErrorCode, TimestampType
from models.profiles import ErrorTextStyle, LogAppendTimeFlagCheck, Profile, RangeRule
from models.records import RecordSpec, build_batches
from strategies.configs import topic_configs
from strategies.records import Invalidity, invalid_batches
from strategies.timestamps import bound_probe_values, timestamps

from .helpers import (
    Suite,
    Twin,
    accepted_timestamps,
    bounds,
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
)

RANGE_CLAUSES = (
    "VAL.range-before-after",
    "VAL.range-inclusive-bounds",
    "VAL.range-symmetric",
    "VAL.bounds-fallback-to-difference",
    "VAL.out-of-range-error-code",
    "VAL.record-errors-batch-index",
    "VAL.rejection-response-fields",
    "VAL.whole-batch-rejected",
    "VAL.createtime-response-minus-one",
    "VAL.error-text-before-after",
    "VAL.error-text-difference",
)


def _fallback_used(config: TopicConfig, profile: Profile) -> bool:
    """VAL-6 (3.6-3.9): a side whose KIP-937 config is unset or Long.MAX_VALUE uses the difference."""
    if not (profile.has_difference_config and profile.has_before_after_configs):
        return False
    if config.difference_max_ms is None:
        return False
    return config.before_max_ms in (None, LONG_MAX) or config.after_max_ms in (None, LONG_MAX)


def _range_clause(config: TopicConfig, profile: Profile, sent: list[int], now: int) -> str:
    """The most specific clause that explains an accept/reject difference for these timestamps."""
    before, after = bounds(config, profile)
    if profile.range_rule is RangeRule.SYMMETRIC:
        return "VAL.range-symmetric"
    if set(sent) & set(bound_probe_values(now, before, after)):
        return "VAL.range-inclusive-bounds"
    if _fallback_used(config, profile):
        return "VAL.bounds-fallback-to-difference"
    return "VAL.range-before-after"


def _text_clause(profile: Profile) -> str:
    return {
        ErrorTextStyle.V3_6: "VAL.error-text-before-after",
        ErrorTextStyle.V0_11: "VAL.error-text-difference",
        ErrorTextStyle.V0_10: "VAL.error-text-legacy",
    }[profile.error_text]


def _sent_timestamps(sent: tuple[object, ...]) -> list[int]:
    out: list[int] = []
    for batch in sent:
        out.extend(r.timestamp for r in batch.records())  # type: ignore[attr-defined]
    return out


@pytest.mark.clause(*RANGE_CLAUSES)
@given(data=draws())
@suite_settings(40)
def test_range_check(suite: Suite, data: Draws) -> None:
    """VAL-4/5/6/7/9/11: a CreateTime topic with finite bounds, timestamps in range, at and one past each
    bound, and in the wrong unit; accepted and rejected exactly as the model says, with record errors."""
    data, twin = suite.start(data)
    magics = tuple(m for m in producible_magics(twin, suite.profile) if m >= MAGIC_V1)
    config = data.draw(topic_configs(suite.profile, timestamp_types=(TimestampType.CREATE_TIME,), bounded=True))
    topic = unique_topic("range")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    before, after = bounds(config, suite.profile)
    # Exact bound probes need the broker's `now` exactly: only where the suite sets the clock.
    ts = timestamps(now, before=before, after=after, boundary=twin.clock_control, specials=False)
    codecs = producible_codecs(suite.impl.capabilities)
    sent = data.draw(sent_batches(twin, ts, magics=magics, codecs=codecs), label="batches")
    observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(sent[0].magic, suite.profile))
    context = f"now={now} bounds=({before}, {after}) sent={_sent_timestamps(sent)}"
    clause = _range_clause(config, suite.profile, _sent_timestamps(sent), now)
    if expected.error is ErrorCode.INVALID_TIMESTAMP:
        if observed.error is ErrorCode.NONE:
            # Accepted what the model rejects. Storing only part of the sent records is VAL-9's fault
            # (whole-batch rejection), more specific than the range rule; the verdict is a FAIL either way.
            got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
            stored = sum(len(list(b.records())) for b in got.batches)
            if 0 < stored < len(_sent_timestamps(sent)):
                check_equal("VAL.whole-batch-rejected", Obs.RECORD_PAYLOADS, stored,
                            sum(len(list(b.records())) for b in want.batches), context)
        # The rule decides (clause); that the code is 32 and not another is VAL-7's own clause.
        check_equal(clause, Obs.PRODUCE_ACCEPTED, observed.error is ErrorCode.NONE, False, context)
        if observed.record_errors:
            # How many records are out of range is the rule's decision too (a bound probe flagged or not);
            # where they are reported (batch_index) is KIP-467's, compared next by check_produce.
            check_equal(clause, Obs.PRODUCE_RECORD_ERROR_COUNT, len(observed.record_errors),
                        len(expected.record_errors), context)
        check_produce(observed, expected, config=config, error_clause="VAL.out-of-range-error-code", context=context)
        if observed.error is expected.error:  # the text of a rejection, judged where both sides rejected
            check_equal(
                _text_clause(suite.profile),
                Obs.PRODUCE_RECORD_ERROR_MESSAGES,
                [e.message for e in observed.record_errors],
                [e.message for e in expected.record_errors],
                context,
            )
    else:
        check_produce(observed, expected, config=config, error_clause=clause, context=context)
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    stored = "VAL.whole-batch-rejected" if expected.error is not ErrorCode.NONE else clause
    check_fetch(got, want, config=config, profile=suite.profile, stored_clause=stored, context=context)


@pytest.mark.clause("VAL.no-timestamp-exempt", "VAL.no-timestamp-range-checked")
@given(data=draws())
@suite_settings(15)
def test_no_timestamp(suite: Suite, data: Draws) -> None:
    """VAL-3: records with timestamp -1 on a bounded CreateTime topic (exempt from 0.11; checked before)."""
    data, twin = suite.start(data)
    magics = tuple(m for m in producible_magics(twin, suite.profile) if m >= MAGIC_V1)
    config = data.draw(topic_configs(suite.profile, timestamp_types=(TimestampType.CREATE_TIME,), bounded=True))
    topic = unique_topic("no-ts")
    twin.create_topic(topic, config)
    sent = data.draw(sent_batches(twin, st.just(-1), magics=magics, codecs=producible_codecs(suite.impl.capabilities)))
    observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(sent[0].magic, suite.profile))
    clause = "VAL.no-timestamp-exempt" if suite.profile.exempt_no_timestamp else "VAL.no-timestamp-range-checked"
    check_produce(
        observed, expected, config=config, error_clause=clause, context=f"bounds={bounds(config, suite.profile)}"
    )


@pytest.mark.clause("VAL.lat-topic-skips-range-check", "VAL.lat-response-time", "CMP.lat-every-record-reads-now")
@pytest.mark.requires(Capability.LOG_APPEND_TIME)
@given(data=draws())
@suite_settings(30)
def test_lat_topic_accepts_any_timestamp(suite: Suite, data: Draws) -> None:
    """VAL-3/VAL-6: a LogAppendTime topic with tight bounds accepts any producer timestamp and answers
    log_append_time = the leader's now (VAL-12); every stored record reads it (CMP-3/4)."""
    data, twin = suite.start(data)
    config = data.draw(topic_configs(suite.profile, timestamp_types=(TimestampType.LOG_APPEND_TIME,), bounded=True))
    topic = unique_topic("lat")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    before, after = bounds(config, suite.profile)
    ts = timestamps(now, before=before, after=after, boundary=True)
    magics, codecs = producible_magics(twin, suite.profile), producible_codecs(suite.impl.capabilities)
    sent = data.draw(sent_batches(twin, ts, magics=magics, codecs=codecs))
    observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(sent[0].magic, suite.profile))
    context = f"now={now} sent={_sent_timestamps(sent)}"
    check_produce(observed, expected, config=config, error_clause="VAL.lat-topic-skips-range-check", context=context)
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    check_fetch(got, want, config=config, profile=suite.profile, sent=twin.sent.get(topic), context=context)


@pytest.mark.clause(
    "VAL.lat-flag-rejected-on-lat-topic",
    "VAL.lat-flag-rejected-always",
    "VAL.lat-flag-accepted-on-createtime",
    "VAL.lat-flag-stored-as-createtime",
    "VAL.lat-flag-error-text",
)
@given(data=draws())
@suite_settings(30)
def test_producer_set_lat_flag(suite: Suite, data: Draws) -> None:
    """VAL-8: a producer batch flagged LogAppendTime. Rejected on LogAppendTime topics (every version),
    on CreateTime topics before 3.6; accepted there from 3.6 when in range, and stored as CreateTime."""
    data = suite.draws(data)
    lat_topic = data.draw(st.booleans(), label="lat_topic")
    twin = suite.twin()
    if lat_topic and not twin.has(Capability.LOG_APPEND_TIME):
        lat_topic = False
    kind = TimestampType.LOG_APPEND_TIME if lat_topic else TimestampType.CREATE_TIME
    config = data.draw(topic_configs(suite.profile, timestamp_types=(kind,), bounded=True))
    topic = unique_topic("lat-flag")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    before, after = bounds(config, suite.profile)
    magics = tuple(m for m in producible_magics(twin, suite.profile) if m >= MAGIC_V1)
    ts = timestamps(now, before=before, after=after, specials=False, mistakes=False)
    sent = data.draw(
        invalid_batches(
            ts,
            magics=magics,
            codecs=producible_codecs(suite.impl.capabilities),
            kinds=(Invalidity.PRODUCER_LOG_APPEND_TIME,),
        )
    )
    observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(sent[0].magic, suite.profile))
    if lat_topic:
        clause = "VAL.lat-flag-rejected-on-lat-topic"
    elif suite.profile.lat_flag_check is LogAppendTimeFlagCheck.ALWAYS:
        clause = "VAL.lat-flag-rejected-always"
    else:
        clause = "VAL.lat-flag-accepted-on-createtime"
    context = f"now={now} sent={_sent_timestamps(sent)}"
    check_produce(observed, expected, config=config, error_clause=clause, context=context)
    if expected.record_errors:
        text = "VAL.lat-flag-error-text"
        check_equal(
            text,
            Obs.PRODUCE_RECORD_ERROR_MESSAGES,
            [(e.message or "")[:39] for e in observed.record_errors],
            [(e.message or "")[:39] for e in expected.record_errors],
            context,
        )
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    check_fetch(
        got,
        want,
        config=config,
        profile=suite.profile,
        stored_clause=clause,
        record_clause=lambda b: "VAL.lat-flag-stored-as-createtime" if b.magic == MAGIC_V2 else clause,
        context=context,
    )


@pytest.mark.clause("VAL.after-default-one-hour")
@pytest.mark.requires(Capability.CLOCK_CONTROL, Capability.PRODUCE_V2)
# Parametrized, not drawn: each of these is decisive (the limit, one past it, well past it) and a small
# budget must not skip any of them.
@pytest.mark.parametrize("offset", (-10 * 24 * 3_600_000, 0, 3_600_000, 3_600_001, 3_600_000 + 60_000, 24 * 3_600_000))
def test_after_default_one_hour(
    impl: Implementation, reference_factory: ImplementationFactory, profile: Profile, offset: int
) -> None:
    """VAL-6/KIP-1030: with default configs a record more than 1 h ahead is rejected, any past one accepted."""
    twin = Twin(impl, reference_factory)
    config = TopicConfig()
    topic, now = twin.new_topic("after-default", config)
    sent = build_batches([RecordSpec(now + offset, b"k", b"v")], magic=MAGIC_V2)
    twin.produce_checked(topic, sent, profile=profile, error_clause="VAL.after-default-one-hour",
                         context=f"now={now} ts=now{offset:+d}")


@pytest.mark.clause("VAL.header-max-recomputed", "VAL.createtime-response-minus-one")
@given(data=draws())
@suite_settings(20)
def test_header_max_recomputed(suite: Suite, data: Draws) -> None:
    """VAL-13: a v2 header MaxTimestamp or a v1 wrapper timestamp that is not the max is rewritten to the
    max of the record timestamps on a CreateTime topic without bounds."""
    data, twin = suite.start(data)
    config = TopicConfig(after_max_ms=lifted_after(twin, suite.profile))
    topic = unique_topic("header-max")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    magics = tuple(m for m in producible_magics(twin, suite.profile) if m >= MAGIC_V1)
    codecs = producible_codecs(suite.impl.capabilities)
    kinds = tuple(
        k
        for k in (Invalidity.HEADER_MAX_NOT_MAX, Invalidity.WRAPPER_NOT_MAX)
        if (k is Invalidity.HEADER_MAX_NOT_MAX and MAGIC_V2 in magics)
        or (k is Invalidity.WRAPPER_NOT_MAX and MAGIC_V1 in magics and len(codecs) > 1)
    )
    if not kinds:
        pytest.skip("UNSUPPORTED: no way to send a wrong header max (needs magic 2, or v1 with compression)")
    ts = accepted_timestamps(now, config, suite.profile, specials=False, mistakes=False)
    sent = data.draw(invalid_batches(ts, magics=magics, codecs=codecs, kinds=kinds))
    observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(sent[0].magic, suite.profile))
    check_produce(observed, expected, config=config, error_clause="VAL.header-max-recomputed")
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    check_fetch(
        got,
        want,
        config=config,
        profile=suite.profile,
        stored_clause="VAL.header-max-recomputed",
        record_clause=lambda b: "VAL.header-max-recomputed",
        sent=twin.sent.get(topic),
    )
