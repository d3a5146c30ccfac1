"""What a record library reads (docs/rules.md: CON-1, and the reading rules FMT-4..7, FMT-10..12): the model
writes the bytes (batches as a broker stores them, and crafted ones: a LogAppendTime wrapper stamped in place over
producer timestamps, inner type bits that disagree with the wrapper, a v1 wrapper holding v0 messages, a cleared
LogAppendTime bit, the delete-horizon flag), the library reads them, and every batch and record is compared with
the model's reading of the same bytes, under the clause of the stored form.

A reader that takes inner timestamps under a LogAppendTime wrapper, or a v2 LogAppendTime record's own delta, is
FAIL (MUST): that is the bug class at least six clients shipped (Sarama #885 and KafkaJS #838 among them).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.capabilities import CodecCapability
from conformance.judging.draws import Draws, draws
from models.constants import (
    DELETE_HORIZON_MASK,
    MAGIC_V0,
    MAGIC_V1,
    MAGIC_V2,
    NO_TIMESTAMP,
    TIMESTAMP_TYPE_MASK,
    Codec,
)
from models.records import AnyBatch, LegacyBatch, LegacyMessage, RecordSpec, build_legacy, build_v2
from strategies.records import ALL_CODECS, LEGACY_CODECS
from strategies.timestamps import REALISTIC_NOW_MS, around

from .codec_helpers import (
    CREATE_TIME,
    LAT,
    check_read,
    codec_twin,
    forms,
    producer_records,
    reader_clauses,
)
from .helpers import Suite, suite_settings

READ = CodecCapability.READ
DAY = 24 * 3_600_000
COMPRESSED_LEGACY = tuple(c for c in LEGACY_CODECS if c is not Codec.NONE)


def _append_time() -> st.SearchStrategy[int]:
    """A broker's LogAppendTime: a realistic clock reading, after the producer timestamps around it."""
    return around(REALISTIC_NOW_MS, DAY, 2 * DAY)


def _base_offset() -> st.SearchStrategy[int]:
    return st.integers(0, 10_000)


@pytest.mark.kind("codec")
@pytest.mark.clause("CON.v0-no-timestamp", "FMT.v0-no-timestamp", "CON.v1-uncompressed-own",
                    "FMT.v1-uncompressed-own-timestamp", "FMT.legacy-type-bit", "CON.v1-wrapper-createtime-inner",
                    "CON.v1-wrapper-lat-wrapper-value", "FMT.v1-wrapper-relative-offsets")
@given(data=draws())
@suite_settings(60)
def test_legacy_reads(suite: Suite, data: Draws) -> None:
    """CON-1 for v0 and v1, as stored: v0 reads -1/NoTimestampType whatever bit 3 holds (FMT-4/5); an uncompressed
    v1 message its own field and bit (FMT-6); a CreateTime wrapper's inner messages their own values; a wrapper
    stamped LogAppendTime in place (inner messages keep the producer's values, CMP-3/CMP-8) the wrapper's value
    for every inner message (FMT-7); inner offsets relative to the wrapper's (KIP-31)."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, READ)
    magic, codec = data.draw(st.sampled_from(forms(twin, (MAGIC_V1, MAGIC_V0), LEGACY_CODECS, building=False)),
                             label="form")
    records = data.draw(producer_records(magic), label="records")
    batches: tuple[AnyBatch, ...] = build_legacy(records, magic=magic, codec=codec,
                                                 base_offset=data.draw(_base_offset(), label="base offset"))
    # LogAppendTime first: Hypothesis' first example is then a stamped plain v1 message (bit 3 read, FMT-4).
    stamped = data.draw(st.sampled_from((LAT, CREATE_TIME)), label="stored type") is LAT
    if magic == MAGIC_V1 and stamped:
        # CMP-3: the broker's in-place stamp (TV-19/20): each plain message, or only the wrapper.
        append_time = data.draw(_append_time(), label="log append time")
        batches = tuple(b.with_header(timestamp_type=LAT, max_timestamp=append_time) for b in batches)
    if magic == MAGIC_V0 and data.draw(st.booleans(), label="v0 bit 3 set"):
        batches = tuple(_with_type_bit(b) for b in batches)  # FMT-4: ignored for magic 0
    check_read(twin, batches, f"magic {magic} {codec.name.lower()}")


def _with_type_bit(batch: AnyBatch) -> AnyBatch:
    assert isinstance(batch, LegacyBatch)
    return replace(batch, message=replace(batch.message, attributes=batch.message.attributes | TIMESTAMP_TYPE_MASK,
                                          crc=None))


def _inner_bits(batch: LegacyBatch, set_bit: bool) -> LegacyBatch:
    """Inner v1 messages whose own bit 3 is set (or cleared) whatever the wrapper says (FMT-7, DIS-6)."""
    inner = tuple(
        replace(e, message=replace(
            e.message,
            attributes=(e.message.attributes | TIMESTAMP_TYPE_MASK) if set_bit
            else (e.message.attributes & ~TIMESTAMP_TYPE_MASK),
            crc=None,
        ))
        for e in batch.message.inner
    )
    return replace(batch, message=replace(batch.message, inner=inner, crc=None))


@pytest.mark.kind("codec")
@pytest.mark.clause("FMT.v1-inner-type-bit-ignored", "CON.v1-wrapper-createtime-inner",
                    "CON.v1-wrapper-lat-wrapper-value")
@given(data=draws())
@suite_settings(40)
def test_wrapper_type_wins(suite: Suite, data: Draws) -> None:
    """FMT-7 (DIS-6): an inner v1 message's own bit 3 is ignored: inner LogAppendTime bits under a CreateTime
    wrapper read CreateTime with their own timestamps; inner CreateTime bits under a LogAppendTime wrapper read
    the wrapper's time and type."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, READ)
    _, codec = data.draw(st.sampled_from(forms(twin, (MAGIC_V1,), COMPRESSED_LEGACY, building=False)), label="form")
    records = data.draw(producer_records(MAGIC_V1), label="records")
    (wrapper,) = build_legacy(records, magic=MAGIC_V1, codec=codec,
                              base_offset=data.draw(_base_offset(), label="base offset"))
    if data.draw(st.booleans(), label="wrapper LogAppendTime"):
        stamped = wrapper.with_header(timestamp_type=LAT, max_timestamp=data.draw(_append_time(), label="time"))
        crafted = _inner_bits(stamped, set_bit=False)
    else:
        crafted = _inner_bits(wrapper, set_bit=True)
    check_read(twin, (crafted,), f"v1 {codec.name.lower()} wrapper, inner bits against the wrapper's")


@pytest.mark.kind("codec")
@pytest.mark.clause("CON.v1-wrapper-v0-inner")
@given(data=draws())
@suite_settings(30)
def test_v1_wrapper_holding_v0(suite: Suite, data: Draws) -> None:
    """FMT-7: a v0 message inside a v1 wrapper (old data written before a format upgrade) reads -1 with the
    wrapper's type, even under a LogAppendTime wrapper."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, READ)
    _, codec = data.draw(st.sampled_from(forms(twin, (MAGIC_V1,), COMPRESSED_LEGACY, building=False)), label="form")
    records = data.draw(producer_records(MAGIC_V0), label="records")
    inner = build_legacy(records, magic=MAGIC_V0)  # offsets 0..n-1: relative inside a v1 wrapper (KIP-31)
    lat = data.draw(st.booleans(), label="wrapper LogAppendTime")
    stamp = data.draw(_append_time(), label="wrapper timestamp")
    base = data.draw(_base_offset(), label="base offset")
    wrapper = LegacyBatch(
        offset=base + len(inner) - 1,
        message=LegacyMessage(magic=MAGIC_V1, attributes=int(codec) | (TIMESTAMP_TYPE_MASK if lat else 0),
                              timestamp=stamp, inner=inner),
    )
    check_read(twin, (wrapper,), f"v1 {codec.name.lower()} {'LogAppendTime' if lat else 'CreateTime'} wrapper of v0")


@pytest.mark.kind("codec")
@pytest.mark.clause("CON.v2-createtime-base-plus-delta", "FMT.v2-record-delta", "CON.v2-lat-max-timestamp",
                    "FMT.v2-lat-reads-max", "FMT.v2-type-never-none")
@given(data=draws())
@suite_settings(60)
def test_v2_reads(suite: Suite, data: Draws) -> None:
    """CON-1 for v2: CreateTime records read BaseTimestamp + delta, negative deltas included (FMT-11); a batch
    stamped LogAppendTime in place (BaseTimestamp and deltas kept, CMP-3) reads MaxTimestamp for every record
    (FMT-12); the batch type is CreateTime or LogAppendTime, never NoTimestampType, even when every record is -1
    (FMT-10)."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, READ)
    _, codec = data.draw(st.sampled_from(forms(twin, (MAGIC_V2,), ALL_CODECS, building=False)), label="form")
    records = data.draw(producer_records(MAGIC_V2), label="records")
    if data.draw(st.booleans(), label="no timestamps"):
        records = [RecordSpec(NO_TIMESTAMP, r.key, r.value, r.headers) for r in records]
    batch = build_v2(records, codec=codec, base_offset=data.draw(_base_offset(), label="base offset"))
    if data.draw(st.booleans(), label="stamped LogAppendTime"):
        batch = batch.with_header(timestamp_type=LAT, max_timestamp=data.draw(_append_time(), label="time"))
    check_read(twin, (batch,), f"v2 {codec.name.lower()} {batch.timestamp_type.name}")


@pytest.mark.kind("codec")
@pytest.mark.clause("FMT.v2-lat-deltas-kept", "CON.v2-createtime-base-plus-delta", "FMT.v2-record-delta")
@given(data=draws())
@suite_settings(30)
def test_lat_bit_cleared_reads_deltas(suite: Suite, data: Draws) -> None:
    """FMT-12: the deltas of a LogAppendTime v2 batch stay in its bytes; with bit 3 cleared again (as a 3.6+
    broker does in place, VAL-8) its records read BaseTimestamp + delta, not the MaxTimestamp they read before."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, READ)
    _, codec = data.draw(st.sampled_from(forms(twin, (MAGIC_V2,), ALL_CODECS, building=False)), label="form")
    records = data.draw(producer_records(MAGIC_V2), label="records")
    stamped = build_v2(records, codec=codec).with_header(timestamp_type=LAT,
                                                          max_timestamp=data.draw(_append_time(), label="time"))
    cleared = stamped.with_header(timestamp_type=CREATE_TIME, max_timestamp=stamped.max_timestamp)
    check_read(twin, (cleared,), f"v2 {codec.name.lower()} LogAppendTime bit cleared",
               clauses_of=lambda b: ("FMT.v2-lat-deltas-kept", *reader_clauses(b)))


@pytest.mark.kind("codec")
@pytest.mark.clause("FMT.v2-delete-horizon-base", "CON.v2-createtime-base-plus-delta")
@given(data=draws())
@suite_settings(30)
def test_delete_horizon_base(suite: Suite, data: Draws) -> None:
    """FMT-10/11 (KIP-534): a batch the log cleaner rewrote with the delete-horizon flag (bit 6) holds the horizon
    in BaseTimestamp, its deltas rebased to it; its records still read BaseTimestamp + delta."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, READ)
    _, codec = data.draw(st.sampled_from(forms(twin, (MAGIC_V2,), ALL_CODECS, building=False)), label="form")
    records = data.draw(producer_records(MAGIC_V2, around(REALISTIC_NOW_MS, -DAY, DAY)), label="records")
    horizon = data.draw(around(REALISTIC_NOW_MS, DAY, 2 * DAY), label="delete horizon")
    batch = build_v2(records, codec=codec)
    rebased = tuple(replace(r, timestamp_delta=s.timestamp - horizon) for r, s in zip(batch.records_, records,
                                                                                       strict=True))
    flagged = replace(batch, attributes=batch.attributes | DELETE_HORIZON_MASK, base_timestamp=horizon,
                      records_=rebased)
    check_read(twin, (flagged,), f"v2 {codec.name.lower()} with the delete horizon {horizon}")
