"""Record errors of a rejected produce (docs/rules.md, VAL-7/9/11, KIP-467): which error wins when a batch has
several kinds, which failure each record reports, the top-level message, and the fields printed inside an
out-of-range message.

test_validation compares whole record-error texts under the VAL.error-text-* clause of the profile; here
each part that implementations get wrong on its own is compared under its own clause: the offset printed
(the request's, not the log's) and the printed bounds (64-bit wraparound). Record errors exist from
Produce v8 (RECORD_ERRORS); batches are magic 2 (Produce v3+ carries nothing else).

Record-error texts name the topic partition ("... in topic partition <topic>-0"); a broker over the wire
names its own (prefixed) topic, so texts are compared with that name replaced by <tp>.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.checks import check_equal
from conformance.judging.draws import Draws, draws
from conformance.judging.observables import Obs
from conformance.targets.implementation import Capability
from models.cluster import ProduceResponse
from models.config import TopicConfig
from models.constants import LONG_MAX, ErrorCode
from models.profiles import Profile, RangeRule
from models.records import RecordSpec, build_v2
from strategies.timestamps import around

from .helpers import (
    Suite,
    Twin,
    bounds,
    check_produce,
    suite_settings,
    unique_topic,
    v2_produce_version,
)

HOUR = 3_600_000
MARGIN_MS = 60_000  # generated values stay this far from a bound: a wall clock's `now` is known only roughly
_TOPIC_PARTITION = re.compile(r"in topic partition \S+")
_OUT_OF_RANGE = re.compile(
    r"^Timestamp (-?\d+) of message with offset (-?\d+) is out of range\. "
    r"The timestamp should be within \[(-?\d+), (-?\d+)\]$"
)


def _bounded_config(twin: Twin, profile: Profile, data: Draws, **kwargs: object) -> TopicConfig | None:
    """A CreateTime topic with a finite bound on at least one side, set through the configs the target
    has (KIP-937 before/after, or the difference); None where it has neither and its defaults bound
    nothing (a 4.0 default's 1 h after-bound still counts)."""
    bound = data.draw(st.sampled_from((HOUR, 2 * HOUR)), label="bound")
    if profile.has_before_after_configs and twin.has(Capability.KIP_937_CONFIGS):
        config = TopicConfig(before_max_ms=bound, after_max_ms=bound, **kwargs)  # type: ignore[arg-type]
    elif profile.has_difference_config and twin.has(Capability.DIFFERENCE_CONFIG):
        config = TopicConfig(difference_max_ms=bound, **kwargs)  # type: ignore[arg-type]
    else:
        config = TopicConfig(**kwargs)  # type: ignore[arg-type]
    before, after = bounds(config, profile)
    return None if before == after == LONG_MAX else config


def _out_of_range(now: int, before: int, after: int) -> st.SearchStrategy[int]:
    """Timestamps past a finite bound by at least the margin (either side where both are finite)."""
    sides = []
    if before != LONG_MAX:
        sides.append(around(now - before, -HOUR, -MARGIN_MS))
    if after != LONG_MAX:
        sides.append(around(now + after, MARGIN_MS, HOUR))
    return st.one_of(sides)


def _in_range(now: int, before: int, after: int) -> st.SearchStrategy[int]:
    return around(now, -min(before, HOUR) + MARGIN_MS, min(after, HOUR) - MARGIN_MS)


def _range_rule_decided(profile: Profile, observed: ProduceResponse, expected: ProduceResponse, context: str) -> bool:
    """Accepted where the model rejects for a timestamp: the range rule's failure (VAL-4/5), more specific than
    how the rejection is reported. False when that happened (a known failure lets the test go on: stop)."""
    if expected.error is not ErrorCode.INVALID_TIMESTAMP or observed.error is not ErrorCode.NONE:
        return True
    rule = "VAL.range-before-after" if profile.range_rule is RangeRule.BEFORE_AFTER else "VAL.range-symmetric"
    return check_equal(rule, Obs.PRODUCE_ACCEPTED, True, False, context)


def _kind(message: str | None) -> str:
    """What a record error is about: its text up to the first number or quote, topic names left out."""
    text = _TOPIC_PARTITION.sub("in topic partition <tp>", message or "")
    return re.split(r"[-\d'\[]", text, maxsplit=1)[0].strip()


def _texts(response: ProduceResponse) -> str | None:
    message = response.error_message
    return None if message is None else _TOPIC_PARTITION.sub("in topic partition <tp>", message)


# ------------------------------------------------------------------------------------ VAL-9 error kinds


@pytest.mark.clause("VAL.timestamp-error-wins", "VAL.first-failure-per-record", "VAL.invalid-record-summary-text")
@pytest.mark.requires(Capability.PRODUCE_V2, Capability.RECORD_ERRORS)
@given(data=draws())
@suite_settings(30)
def test_key_and_timestamp_errors(suite: Suite, data: Draws) -> None:
    """VAL-9/VAL-11 (TV-25): on a compacted topic a record without a key fails (INVALID_RECORD) before its
    timestamp is looked at, so a keyless out-of-range record reports only the key error. A batch with any
    timestamp error fails with 32 and "One or more records have been rejected due to invalid timestamp";
    a batch with key errors only fails with 87 and the summary of its record errors."""
    data, twin = suite.start(data)
    config = _bounded_config(twin, suite.profile, data, compacted=True)
    if config is None:
        pytest.skip("UNSUPPORTED: no timestamp bound can be set on this target (no KIP-937 or difference config)")
    topic = unique_topic("key-errors")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    before, after = bounds(config, suite.profile)
    good, bad = _in_range(now, before, after), _out_of_range(now, before, after)
    records = data.draw(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=6),
                        label="(has key, in range) per record")
    if all(has_key for has_key, _ in records):
        records[data.draw(st.integers(0, len(records) - 1), label="keyless record")] = (False, records[0][1])
    specs = [
        RecordSpec(data.draw(good if in_range else bad, label="timestamp"), b"k%d" % i if has_key else None, b"v")
        for i, (has_key, in_range) in enumerate(records)
    ]
    batch = build_v2(specs)
    observed, expected = twin.produce(topic, [batch], produce_version=v2_produce_version(suite.profile))
    context = f"now={now} bounds=({before}, {after}) records={[(s.key is not None, s.timestamp) for s in specs]}"
    if not _range_rule_decided(suite.profile, observed, expected, context):
        return
    timestamp_error = expected.error is ErrorCode.INVALID_TIMESTAMP
    wins = "VAL.timestamp-error-wins" if timestamp_error else "VAL.first-failure-per-record"
    check_equal(wins, Obs.PRODUCE_ERROR, observed.error, expected.error, context)
    check_equal(
        "VAL.first-failure-per-record",
        Obs.PRODUCE_RECORD_ERROR_MESSAGES,
        [(e.batch_index, _kind(e.message)) for e in observed.record_errors],
        [(e.batch_index, _kind(e.message)) for e in expected.record_errors],
        context,
    )
    if timestamp_error:
        check_equal("VAL.timestamp-error-wins", Obs.PRODUCE_ERROR_MESSAGE, _texts(observed), _texts(expected), context)
    elif suite.profile.invalid_record_text_3_2:
        check_equal("VAL.invalid-record-summary-text", Obs.PRODUCE_ERROR_MESSAGE, _texts(observed), _texts(expected),
                    context)
    check_produce(observed, expected, config=config, error_clause=wins, context=context)


# ------------------------------------------------------------------------------------ VAL-7 message fields


@pytest.mark.clause("VAL.error-offset-from-request", "VAL.error-bounds-wraparound")
@pytest.mark.requires(Capability.PRODUCE_V2, Capability.RECORD_ERRORS)
@given(data=draws())
@suite_settings(30)
def test_out_of_range_message_fields(suite: Suite, data: Draws) -> None:
    """VAL-7 (TV-25): in "Timestamp <ts> of message with offset <offset> is out of range. The timestamp
    should be within [<now-before>, <now+after>]" the offset is the record's position as sent (the log
    already holds records, so the offset it would get differs), and a bound of Long.MAX_VALUE prints
    with 64-bit wraparound (now + Long.MAX_VALUE as a negative number). The printed bounds are compared
    where the suite sets the broker clock (they are `now` plus or minus a bound)."""
    data, twin = suite.start(data)
    unbounded = data.draw(st.sampled_from(("after", "before", "neither")), label="side left at Long.MAX_VALUE")
    bound = data.draw(st.sampled_from((HOUR, 2 * HOUR)), label="bound")
    if suite.profile.has_before_after_configs and twin.has(Capability.KIP_937_CONFIGS):
        config = TopicConfig(before_max_ms=LONG_MAX if unbounded == "before" else bound,
                             after_max_ms=LONG_MAX if unbounded == "after" else bound)
    elif suite.profile.has_difference_config and twin.has(Capability.DIFFERENCE_CONFIG):
        config = TopicConfig(difference_max_ms=bound)  # one symmetric bound: nothing wraps (VAL-5)
    else:
        pytest.skip("UNSUPPORTED: no timestamp bound can be set on this target (no KIP-937 or difference config)")
    topic = unique_topic("error-fields")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    before, after = bounds(config, suite.profile)
    good, bad = _in_range(now, before, after), _out_of_range(now, before, after)
    for index in range(data.draw(st.integers(1, 3), label="accepted batches first")):
        stamps = data.draw(st.lists(good, min_size=1, max_size=3), label="accepted timestamps")
        accepted = build_v2([RecordSpec(t, b"a%d" % index, b"v") for t in stamps])
        observed, expected = twin.produce(topic, [accepted], produce_version=v2_produce_version(suite.profile))
        check_produce(observed, expected, config=config, error_clause="VAL.error-offset-from-request")
    flags = data.draw(st.lists(st.booleans(), min_size=1, max_size=6), label="in range per record")
    if all(flags):
        flags[-1] = False
    specs = [RecordSpec(data.draw(good if ok else bad, label="timestamp"), b"k", b"v") for ok in flags]
    observed, expected = twin.produce(topic, [build_v2(specs)], produce_version=v2_produce_version(suite.profile))
    context = f"now={now} bounds=({before}, {after}) sent={[s.timestamp for s in specs]}"
    if not _range_rule_decided(suite.profile, observed, expected, context):
        return
    if not check_equal("VAL.error-offset-from-request", Obs.PRODUCE_ERROR, observed.error, expected.error, context):
        return
    fields = [_OUT_OF_RANGE.match(e.message or "") for e in observed.record_errors]
    wanted = [_OUT_OF_RANGE.match(e.message or "") for e in expected.record_errors]
    check_equal("VAL.error-offset-from-request", Obs.PRODUCE_RECORD_ERROR_MESSAGES,
                [m.group(2) if m else None for m in fields], [m.group(2) if m else None for m in wanted], context)
    wrapped = LONG_MAX in (before, after)
    if twin.clock_control and wrapped:
        check_equal("VAL.error-bounds-wraparound", Obs.PRODUCE_RECORD_ERROR_MESSAGES,
                    [(m.group(3), m.group(4)) if m else None for m in fields],
                    [(m.group(3), m.group(4)) if m else None for m in wanted], context)
    check_produce(observed, expected, config=config, error_clause="VAL.error-offset-from-request", context=context)

