"""Timestamps at the edges of their fields (FMT-3, FMT-8, FMT-11): -1, 0, Long.MAX_VALUE, huge and negative v2
deltas, and, on the reading side, values below -1 down to Long.MIN_VALUE, which readers take without a sign check
(FMT-8: only writers refuse them). A builder's delta is the int64 difference as Java computes it (wrapping: -1 then
Long.MAX_VALUE gives Long.MIN_VALUE, which reads back as Long.MAX_VALUE); crafted batches keep each delta and
BaseTimestamp + delta inside an int64.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.capabilities import CodecCapability
from conformance.judging.draws import Draws, draws
from conformance.targets.kinds.codec_library import BatchRequest
from models.constants import INT_MAX, LONG_MAX, LONG_MIN, MAGIC_V1, MAGIC_V2, Codec
from models.records import DefaultBatch, LegacyBatch, LegacyMessage, Record, RecordSpec
from strategies.records import payloads, record_specs

from .codec_helpers import check_build, check_read, codec_twin, forms, producer_timestamps
from .helpers import Suite, suite_settings

EDGES = (-1, 0, 1, LONG_MAX, LONG_MAX - 1, 1 << 62, INT_MAX, INT_MAX + 1, 1 << 40)
# What a reader may meet (readers do not check the sign, FMT-8): the writable edges and values below -1.
READABLE_EDGES = (*EDGES, -2, LONG_MIN, LONG_MIN + 1, -(1 << 40))


@pytest.mark.kind("codec")
@pytest.mark.clause("FMT.builder-keeps-record-timestamps", "FMT.builder-v2-base-first", "FMT.builder-v2-max")
@given(data=draws())
@suite_settings(40)
def test_edge_timestamps_build(suite: Suite, data: Draws) -> None:
    """FMT-11 at the edges, written: -1 (no timestamp), 0, Long.MAX_VALUE and huge or negative deltas (records in
    descending order, -1 after a large value) are written so that each record reads what it was given; a delta
    beyond an int64 (-1 then Long.MAX_VALUE) wraps as Java's long arithmetic does, and reads back (FMT-11)."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, CodecCapability.BUILD)
    magic, codec = data.draw(
        st.sampled_from(forms(twin, (MAGIC_V2, MAGIC_V1), (Codec.NONE,), building=True)
                        + forms(twin, (MAGIC_V2,), (Codec.GZIP,), building=True)),
        label="form",
    )
    descending = data.draw(st.booleans(), label="descending")
    specs = record_specs(st.one_of(st.sampled_from(EDGES), producer_timestamps()), min_size=2, max_size=5,
                         with_headers=False)
    if descending:
        specs = specs.map(lambda rs: sorted(rs, key=lambda r: -r.timestamp))
    records = data.draw(specs, label="records")
    if data.draw(st.booleans(), label="led by no timestamp"):
        records = [RecordSpec(-1, b"first", None), *records]  # -1 first: a builder's "unset" sentinel must not eat it
    check_build(twin, BatchRequest(magic, tuple(records), codec), f"magic {magic} {codec.name.lower()} edges")


@st.composite
def _edge_v2_batch(draw: st.DrawFn, codec: Codec) -> DefaultBatch:
    """A v2 CreateTime batch whose BaseTimestamp and record timestamps are drawn at the int64 edges, each delta
    (timestamp - base) an int64."""
    values = st.one_of(st.sampled_from(READABLE_EDGES), st.integers(LONG_MIN, LONG_MAX))
    base = draw(values)
    stamps = draw(st.lists(values.filter(lambda t: LONG_MIN <= t - base <= LONG_MAX), min_size=1, max_size=5))
    records = tuple(
        Record(offset_delta=i, timestamp_delta=t - base, key=draw(payloads()), value=draw(payloads()))
        for i, t in enumerate(stamps)
    )
    return DefaultBatch(attributes=int(codec), last_offset_delta=len(records) - 1, base_timestamp=base,
                        max_timestamp=max(stamps), records_=records)


@pytest.mark.kind("codec")
@pytest.mark.clause("FMT.v2-record-delta", "CON.v2-createtime-base-plus-delta", "FMT.writer-rejects-below-minus-one")
@given(data=draws())
@suite_settings(40)
def test_edge_deltas_read(suite: Suite, data: Draws) -> None:
    """FMT-11 at the edges, read: any BaseTimestamp (Long.MIN_VALUE to Long.MAX_VALUE) with zig-zag deltas up to
    the int64 range, positive or negative, reads BaseTimestamp + delta; a value below -1 is read as it is
    (FMT-8: readers do not check the sign)."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, CodecCapability.READ)
    _, codec = data.draw(st.sampled_from(forms(twin, (MAGIC_V2,), (Codec.NONE, Codec.GZIP), building=False)),
                         label="form")
    batch = data.draw(_edge_v2_batch(codec), label="batch")
    check_read(twin, (batch,), f"v2 {codec.name.lower()} base {batch.base_timestamp}")


@pytest.mark.kind("codec")
@pytest.mark.clause("CON.v1-uncompressed-own", "FMT.v1-uncompressed-own-timestamp",
                    "FMT.writer-rejects-below-minus-one")
@given(data=draws())
@suite_settings(30)
def test_edge_v1_timestamps_read(suite: Suite, data: Draws) -> None:
    """FMT-3/FMT-6 at the edges: a v1 message's int64 timestamp reads as stored, Long.MIN_VALUE and values below -1
    included (FMT-8)."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, CodecCapability.READ)
    forms(twin, (MAGIC_V1,), (Codec.NONE,), building=False)
    stamps = data.draw(st.lists(st.one_of(st.sampled_from(READABLE_EDGES), st.integers(LONG_MIN, LONG_MAX)),
                                min_size=1, max_size=4), label="timestamps")
    entries = tuple(
        LegacyBatch(offset=i, message=LegacyMessage(magic=MAGIC_V1, timestamp=t, key=b"k%d" % i, value=b"v"))
        for i, t in enumerate(stamps)
    )
    check_read(twin, entries, "v1 uncompressed edges")
