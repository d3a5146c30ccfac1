"""Produce requests at the edges of the format and the range rule (docs/rules.md: FMT-3/4/9, VAL-4/5/9/15):
timestamps no Java producer sends (Long.MIN_VALUE, values below -1), and batches whose CRC no longer covers
what they hold, or whose codec their magic does not allow.

The broker is the decoder here: what a record's CRC covers (FMT-3 for v1, FMT-9 for v2) shows as a produce
refused with CORRUPT_MESSAGE (2) when a covered field changed after the CRC was computed, and accepted when
only an uncovered one did (the v2 partition leader epoch, which brokers re-stamp).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.capabilities import Capability
from conformance.judging.draws import Draws, draws
from models.codec import legacy_crc, v2_crc
from models.config import TopicConfig
from models.constants import (
    CODEC_MASK,
    LONG_MAX,
    LONG_MIN,
    MAGIC_V0,
    MAGIC_V1,
    MAGIC_V2,
    TIMESTAMP_TYPE_MASK,
    Codec,
    ErrorCode,
    TimestampType,
)
from models.profiles import Profile, RangeRule
from models.records import AnyBatch, LegacyBatch, RecordSpec, build_legacy, build_v2
from strategies.timestamps import around

from .helpers import (
    LEGACY_PRODUCE_VERSION,
    Suite,
    Twin,
    bounds,
    check_produce,
    lifted_after,
    producible_codecs,
    producible_magics,
    suite_settings,
    unique_topic,
)

HOUR = 3_600_000


def _produce(twin: Twin, topic: str, profile: Profile, sent: Sequence[AnyBatch], clause: str, context: str) -> None:
    _, expected = twin.produce_checked(topic, sent, profile=profile, error_clause=clause, context=context)
    if expected.error is ErrorCode.NONE:
        twin.read_back(topic, profile=profile, stored_clause=clause, record_clause=lambda b: clause, context=context)


# ------------------------------------------------------------------------------------ VAL-4/5 Long.MIN_VALUE


@pytest.mark.clause("VAL.range-long-min-is-future", "VAL.symmetric-long-min-accepted")
@given(data=draws())
@suite_settings(15)
def test_long_min_timestamp(suite: Suite, data: Draws) -> None:
    """VAL-4/VAL-5 [DERIVED]: 64-bit wraparound in the range rule. From 3.6 a record stamped Long.MIN_VALUE
    has now - ts overflow, so it counts as ~2^63 ms in the future and is rejected whenever the after-bound is
    finite. Under the symmetric rule a record stamped now + Long.MIN_VALUE has ts - now = Long.MIN_VALUE,
    whose Java abs() stays negative: it is never rejected, whatever the difference bound (that needs the
    broker's exact `now`: the suite must set the clock)."""
    data, twin = suite.start(data)
    bound = data.draw(st.sampled_from((HOUR, 24 * HOUR)), label="bound")
    if suite.profile.range_rule is RangeRule.BEFORE_AFTER:
        clause = "VAL.range-long-min-is-future"
        config = TopicConfig(after_max_ms=bound) if twin.has(Capability.KIP_937_CONFIGS) else TopicConfig()
        if bounds(config, suite.profile)[1] == LONG_MAX:
            pytest.skip("UNSUPPORTED: the after-bound cannot be made finite on this target (no KIP-937 configs)")
    else:
        clause = "VAL.symmetric-long-min-accepted"
        if not twin.clock_control:
            pytest.skip("UNSUPPORTED: ts = now + Long.MIN_VALUE needs the broker's exact clock (clock-control)")
        config = TopicConfig(difference_max_ms=bound) if twin.has(Capability.DIFFERENCE_CONFIG) else TopicConfig()
    topic = unique_topic("long-min")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    magic = data.draw(st.sampled_from(tuple(m for m in producible_magics(twin, suite.profile) if m >= MAGIC_V1)),
                      label="magic")
    # One record per batch: in a v2 batch the delta between such a timestamp and any other overflows.
    spec = RecordSpec(LONG_MIN if clause == "VAL.range-long-min-is-future" else now + LONG_MIN, b"k", b"v")
    sent = (build_v2([spec]),) if magic == MAGIC_V2 else build_legacy([spec], magic=magic)
    _produce(twin, topic, suite.profile, sent, clause, f"bounds={bounds(config, suite.profile)}")


# ------------------------------------------------------------------------------------ VAL-15 below -1


@pytest.mark.clause("VAL.below-minus-one-range-checked", "VAL.below-minus-one-rebuild-fails")
@pytest.mark.requires(Capability.PRODUCE_V2)
@given(data=draws())
@suite_settings(20)
def test_timestamp_below_minus_one(suite: Suite, data: Draws) -> None:
    """VAL-15 (FMT-8): a v2 record stamped below -1 (a non-Java client) is range-checked like any value and,
    with no past bound, accepted and stored as sent; but when the batch is rebuilt (the topic's codec differs
    from the producer's) Kafka's record builder refuses it and the produce fails with UNKNOWN_SERVER_ERROR."""
    data, twin = suite.start(data)
    codecs = tuple(
        c for c in producible_codecs(suite.impl.capabilities) if c is not Codec.ZSTD or twin.has(Capability.ZSTD)
    )
    codec = data.draw(st.sampled_from(codecs), label="producer codec")
    others = [c for c in codecs if c is not codec]
    rebuild = bool(others) and data.draw(st.booleans(), label="topic codec differs")
    compression = (others[0].name.lower() if others[0] is not Codec.NONE else "uncompressed") if rebuild else "producer"
    config = TopicConfig(after_max_ms=lifted_after(twin, suite.profile), compression_type=compression)
    topic = unique_topic("below-minus-one")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    # Bounds that do not move with a wall clock's `now` (Hypothesis replays an example with the same draws); down to
    # -2^41 ms (about 70 years before 1970) the deltas to the other records fit in a varlong (Long.MIN_VALUE is
    # test_long_min_timestamp's).
    negative = st.one_of(st.just(-2), st.integers(-(2**41), -2))
    stamps = data.draw(st.lists(st.one_of(negative, around(now, -HOUR, 0)), min_size=1, max_size=4), label="timestamps")
    if all(t >= -1 for t in stamps):
        stamps[0] = data.draw(negative, label="a timestamp below -1")
    clause = "VAL.below-minus-one-rebuild-fails" if rebuild else "VAL.below-minus-one-range-checked"
    sent = build_v2([RecordSpec(t, b"k%d" % i, b"v") for i, t in enumerate(stamps)], codec=codec)
    _produce(twin, topic, suite.profile, (sent,), clause, f"topic {compression}, producer {codec.name}, sent {stamps}")


# ------------------------------------------------------------------------------------ FMT-3/4/9, VAL-9 CRC


def _v1_message(now: int, data: Draws) -> LegacyBatch:
    stamp = data.draw(around(now, -HOUR, 0), label="timestamp")
    return build_legacy([RecordSpec(stamp, b"k", b"v")], magic=MAGIC_V1)[0]


@pytest.mark.clause("FMT.v2-crc-coverage", "VAL.rejection-response-fields")
@pytest.mark.requires(Capability.PRODUCE_V2)
@given(data=draws())
@suite_settings(20)
def test_v2_crc_coverage(suite: Suite, data: Draws) -> None:
    """FMT-9: the v2 CRC-32C covers the attributes through the end of the batch (both timestamps and the
    type bit), so a batch where one of them changed after the CRC was computed is refused with
    CORRUPT_MESSAGE; it does not cover the partition leader epoch, so a changed epoch is accepted."""
    data, twin = suite.start(data)
    config = TopicConfig(after_max_ms=lifted_after(twin, suite.profile))
    topic = unique_topic("v2-crc")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    stamps = data.draw(st.lists(around(now, -HOUR, 0), min_size=1, max_size=3), label="timestamps")
    batch = build_v2([RecordSpec(t, b"k%d" % i, b"v") for i, t in enumerate(stamps)])
    crc = v2_crc(batch)
    field = data.draw(
        st.sampled_from(("max timestamp", "base timestamp", "type bit", "leader epoch")),
        label="field changed after the CRC",
    )
    step = data.draw(st.integers(1, 1_000), label="change")
    changed = {
        "max timestamp": lambda: replace(batch, max_timestamp=batch.max_timestamp + step),
        "base timestamp": lambda: replace(batch, base_timestamp=batch.base_timestamp - step),
        "type bit": lambda: replace(batch, attributes=batch.attributes ^ TIMESTAMP_TYPE_MASK),
        "leader epoch": lambda: replace(batch, partition_leader_epoch=step),
    }[field]()
    _produce(
        twin, topic, suite.profile, (replace(changed, crc=crc),), "FMT.v2-crc-coverage", f"{field} changed by {step}"
    )


@pytest.mark.clause("VAL.records-count-matches")
@pytest.mark.requires(Capability.PRODUCE_V2)
@given(data=draws())
@suite_settings(15)
def test_v2_records_count_disagrees_with_records(suite: Suite, data: Draws) -> None:
    """VAL-14 (KAFKA-5031): a v2 batch whose RecordsCount agrees with its LastOffsetDelta (so the batch-level checks
    pass) but not with the records it holds is refused whole with INVALID_RECORD (87): Kafka's record iterator
    throws "Incorrect declared batch size, premature EOF reached" when fewer records follow, "..., records still
    remaining in file" when more do (DefaultRecordBatch.RecordIterator.next). The CRC covers the lying count."""
    data, twin = suite.start(data)
    config = TopicConfig(after_max_ms=lifted_after(twin, suite.profile))
    topic = unique_topic("records-count")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    codecs = tuple(
        c for c in producible_codecs(suite.impl.capabilities) if c is not Codec.ZSTD or twin.has(Capability.ZSTD)
    )
    codec = data.draw(st.sampled_from(codecs), label="codec")
    held = data.draw(st.integers(1, 5), label="records held")
    declared = data.draw(st.sampled_from([n for n in range(1, 7) if n != held]), label="RecordsCount")
    stamps = data.draw(st.lists(around(now, -HOUR, 0), min_size=held, max_size=held), label="timestamps")
    batch = build_v2([RecordSpec(t, b"k%d" % i, b"v") for i, t in enumerate(stamps)], codec=codec)
    sent = replace(batch, records_count=declared, last_offset_delta=declared - 1)
    _produce(twin, topic, suite.profile, (sent,), "VAL.records-count-matches",
             f"{codec.name}: RecordsCount {declared}, {held} records held")


@pytest.mark.clause("FMT.v1-timestamp-field")
@pytest.mark.requires(Capability.PRODUCE_LEGACY)
@given(data=draws())
@suite_settings(15)
def test_v1_crc_covers_timestamp(suite: Suite, data: Draws) -> None:
    """FMT-3: a v1 message's timestamp (byte 6) and type bit lie inside its CRC32: a message whose timestamp
    or type changed after the CRC was computed is refused with CORRUPT_MESSAGE."""
    data, twin = suite.start(data)
    config = TopicConfig(after_max_ms=lifted_after(twin, suite.profile))
    topic = unique_topic("v1-crc")
    twin.create_topic(topic, config)
    entry = _v1_message(twin.leader_clock(topic), data)
    crc = legacy_crc(entry.message)
    if data.draw(st.booleans(), label="change the timestamp (else the type bit)"):
        message = replace(entry.message, timestamp=(entry.message.timestamp or 0) - data.draw(st.integers(1, 1_000)))
    else:
        message = replace(entry.message, attributes=entry.message.attributes ^ TIMESTAMP_TYPE_MASK)
    _produce(
        twin,
        topic,
        suite.profile,
        (replace(entry, message=replace(message, crc=crc)),),
        "FMT.v1-timestamp-field",
        "v1 message changed after its CRC",
    )


@pytest.mark.clause("VAL.corrupt-inner-crc")
@pytest.mark.requires(Capability.PRODUCE_LEGACY, Capability.COMPRESSION)
@given(data=draws())
@suite_settings(15)
def test_corrupt_inner_message(suite: Suite, data: Draws) -> None:
    """VAL-9: in a compressed v1 set each inner message's CRC is checked; one that does not match rejects the
    whole set with CORRUPT_MESSAGE (2) at once, without record_errors."""
    data, twin = suite.start(data)
    config = TopicConfig(after_max_ms=lifted_after(twin, suite.profile))
    topic = unique_topic("inner-crc")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    stamps = data.draw(st.lists(around(now, -HOUR, 0), min_size=1, max_size=4), label="timestamps")
    codec = data.draw(
        st.sampled_from([c for c in producible_codecs(suite.impl.capabilities) if c not in (Codec.NONE, Codec.ZSTD)]),
        label="codec",
    )
    (wrapper,) = build_legacy(
        [RecordSpec(t, b"k%d" % i, b"v") for i, t in enumerate(stamps)], magic=MAGIC_V1, codec=codec
    )
    inner = list(wrapper.message.inner)
    bad = data.draw(st.integers(0, len(inner) - 1), label="corrupt inner message")
    message = inner[bad].message
    inner[bad] = replace(inner[bad], message=replace(message, crc=legacy_crc(message) ^ 0x5A5A))
    sent = replace(wrapper, message=replace(wrapper.message, inner=tuple(inner)))
    _produce(twin, topic, suite.profile, (sent,), "VAL.corrupt-inner-crc", f"inner message {bad} of {len(inner)}")


@pytest.mark.clause("FMT.zstd-requires-v2")
@pytest.mark.requires(Capability.PRODUCE_LEGACY, Capability.PRODUCE_V2, Capability.ZSTD)
@given(data=draws())
@suite_settings(10)
def test_zstd_below_v2(suite: Suite, data: Draws) -> None:
    """FMT-4 (KIP-110): zstd (codec 4) exists for v2 batches only. Produce v0-v2 do not look at the codec, so a
    v0/v1 wrapper compressed with zstd reaches the log, whose legacy deep iterator refuses it (Kafka 2.1+:
    INVALID_RECORD, "Invalid wrapper compressionType found in legacy deep record iterator <magic>"), on
    CreateTime and LogAppendTime topics alike."""
    data, twin = suite.start(data)
    ts_type = data.draw(st.sampled_from([TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME]), label="topic type")
    config = TopicConfig(timestamp_type=ts_type, after_max_ms=lifted_after(twin, suite.profile))
    topic = unique_topic("zstd-legacy")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    magic = data.draw(st.sampled_from([MAGIC_V0, MAGIC_V1]), label="magic")
    stamps = data.draw(st.lists(around(now, -HOUR, 0), min_size=1, max_size=3), label="timestamps")
    (wrapper,) = build_legacy(
        [RecordSpec(t, b"k%d" % i, b"v") for i, t in enumerate(stamps)], magic=magic, codec=Codec.GZIP
    )
    zstd = (wrapper.message.attributes & ~CODEC_MASK) | Codec.ZSTD.value
    sent = replace(wrapper, message=replace(wrapper.message, attributes=zstd))
    observed, expected = twin.produce(topic, (sent,), produce_version=LEGACY_PRODUCE_VERSION)
    check_produce(observed, expected, config=config, error_clause="FMT.zstd-requires-v2", context=f"magic {magic}")
