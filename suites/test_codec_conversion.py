"""Down-conversion by a record library (docs/rules.md, CNV-5, TV-27): stored v2 batches (CreateTime, LogAppendTime
stamped by the broker, compressed or not, zstd, transaction markers) converted for a client that reads at most
magic 1 or 0, compared batch by batch with the model's conversion (models.conversion.down_convert: Kafka
0.10-3.9's RecordsUtil.downConvert). Only a library with a down-converter (DOWN_CONVERT: Apache Kafka's record
layer) is checked; the others are UNSUPPORTED. The clauses apply where brokers down-convert (up to 3.9).
"""

from __future__ import annotations

import struct
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.capabilities import CodecCapability
from conformance.judging.draws import Draws, draws
from models.constants import CONTROL_MASK, MAGIC_V0, MAGIC_V1, MAGIC_V2, TRANSACTIONAL_MASK
from models.records import AnyBatch, DefaultBatch, RecordSpec, build_v2, with_base_offset
from strategies.records import ALL_CODECS
from strategies.timestamps import REALISTIC_NOW_MS, around

from .codec_helpers import LAT, check_conversion, codec_twin, forms, producer_records
from .helpers import Suite, suite_settings

DAY = 24 * 3_600_000
PRODUCER_ID, PRODUCER_EPOCH = 7, 0


def _commit_marker(base_offset: int, timestamp: int) -> DefaultBatch:
    """A transaction marker (a control batch: bit 5, one record whose key is version 0, type 1 = commit)."""
    marker = build_v2([RecordSpec(timestamp, struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 0))],
                      base_offset=base_offset, producer_id=PRODUCER_ID, producer_epoch=PRODUCER_EPOCH,
                      transactional=True)
    return replace(marker, attributes=marker.attributes | CONTROL_MASK | TRANSACTIONAL_MASK)


@pytest.mark.kind("codec")
@pytest.mark.clause("CNV.down-convert-keeps-type", "CNV.down-convert-createtime-keeps-timestamps",
                    "CNV.down-convert-v0-drops", "CNV.down-convert-drops-control", "CNV.down-convert-zstd-unsupported")
@given(data=draws())
@suite_settings(50)
def test_down_conversion(suite: Suite, data: Draws) -> None:
    """CNV-5 (TV-27): per batch, the type is kept (a LogAppendTime batch becomes v1 LogAppendTime with every message
    and the wrapper carrying its MaxTimestamp), CreateTime records keep their timestamps (wrapper = max), v0 drops
    timestamps and type, control batches are dropped, and a zstd batch is refused."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, CodecCapability.DOWN_CONVERT, CodecCapability.READ)
    to_magic = data.draw(st.sampled_from((MAGIC_V1, MAGIC_V0)), label="to magic")
    stored: list[AnyBatch] = []
    offset = 0
    for index in range(data.draw(st.integers(1, 3), label="batches")):
        _, codec = data.draw(st.sampled_from(forms(twin, (MAGIC_V2,), ALL_CODECS, building=False)),
                             label=f"codec {index}")
        records = data.draw(producer_records(MAGIC_V2, around(REALISTIC_NOW_MS, -DAY, DAY)), label=f"records {index}")
        batch: AnyBatch = build_v2(records, codec=codec, base_offset=offset)
        if data.draw(st.booleans(), label=f"LogAppendTime {index}"):
            batch = batch.with_header(timestamp_type=LAT,
                                      max_timestamp=data.draw(around(REALISTIC_NOW_MS, DAY, 2 * DAY), label="time"))
        stored.append(with_base_offset(batch, offset))
        offset = batch.last_offset + 1
        if data.draw(st.booleans(), label=f"marker after {index}"):
            stored.append(_commit_marker(offset, REALISTIC_NOW_MS))
            offset += 1
    check_conversion(twin, stored, to_magic, f"to magic {to_magic}")
