"""What a record library writes (docs/rules.md, as a writer: FMT-1..11, VAL-8, TV-26): the library builds a batch as
its producer would (or, where it has one, as a broker-side builder with a LogAppendTime), the model's decoder reads
the bytes, and every field is compared with what the model's builder writes for the same records.

Graded by level: what a consumer reads (the record timestamps, the type bit a broker checks) is MUST; the header
timestamps a broker recomputes on append (a CreateTime v1 wrapper's, a v2 MaxTimestamp: VAL-13) and the v2
BaseTimestamp are SHOULD, so a producer writing 0 there is NON-STRICT; layout is MUST.

The written codec is not compared: CMP-1 is about what the broker stores, and a builder that sends a batch
uncompressed when compression would not shrink it (kafka-python, aiokafka) still writes readable records with the
same timestamps. Compressed examples use values compression shrinks, so the compressed paths are exercised.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.capabilities import CodecCapability
from conformance.judging.draws import Draws, draws
from conformance.targets.kinds.codec_library import BatchRequest
from models.constants import MAGIC_V0, MAGIC_V1, MAGIC_V2, Codec
from models.records import RecordSpec
from strategies.records import LEGACY_CODECS
from strategies.timestamps import below_minus_one

from .codec_helpers import (
    LAT,
    check_build,
    check_refusal,
    codec_twin,
    compressible,
    forms,
    producer_records,
    producer_timestamps,
)
from .helpers import Suite, suite_settings

BUILD = CodecCapability.BUILD
COMPRESSED = (Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD)


@pytest.mark.kind("codec")
@pytest.mark.clause("FMT.legacy-entry-framing", "FMT.v0-no-timestamp", "FMT.builder-createtime-type",
                    "FMT.builder-keeps-record-timestamps")
@given(data=draws())
@suite_settings(40)
def test_legacy_entries(suite: Suite, data: Draws) -> None:
    """FMT-1..5: uncompressed v1 (first: the simplest example) and v0 entries, and v0 wrappers, one 12-byte log
    entry header per message, v0 without a timestamp field, bit 3 clear, each record reading what it was given
    (v1 wrappers: test_v1_wrapper)."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, BUILD)
    plain = forms(twin, (MAGIC_V1, MAGIC_V0), (Codec.NONE,), building=True)
    v0_wrappers = tuple(f for f in forms(twin, (MAGIC_V0,), LEGACY_CODECS, building=True) if f[1] is not Codec.NONE)
    magic, codec = data.draw(st.sampled_from(plain + v0_wrappers), label="form")
    records = tuple(data.draw(producer_records(magic), label="records"))
    if codec is not Codec.NONE:
        # As for v1 and v2: values compression shrinks, so that a builder which skips a useless compression (as
        # Kafka's clients may) is not read as writing the wrong form.
        records = compressible(records)
    check_build(twin, BatchRequest(magic, tuple(records), codec), f"magic {magic} {codec.name.lower()}")


@pytest.mark.kind("codec")
@pytest.mark.clause("FMT.v1-wrapper-relative-offsets", "FMT.builder-v1-wrapper-max", "FMT.builder-createtime-type",
                    "FMT.builder-keeps-record-timestamps", "FMT.legacy-entry-framing")
@given(data=draws())
@suite_settings(40)
def test_v1_wrapper(suite: Suite, data: Draws) -> None:
    """FMT-7: a compressed v1 producer set is one wrapper whose inner messages carry relative offsets 0..n-1 under
    the absolute offset of the last (MUST: KIP-31) and whose timestamp is the largest inner one (SHOULD: the
    broker recomputes it)."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, BUILD)
    magic, codec = data.draw(st.sampled_from(forms(twin, (MAGIC_V1,), COMPRESSED, building=True)), label="form")
    records = compressible(data.draw(producer_records(magic), label="records"))
    check_build(twin, BatchRequest(magic, records, codec), f"v1 {codec.name.lower()} wrapper")


@pytest.mark.kind("codec")
@pytest.mark.clause("FMT.v2-header-layout", "FMT.builder-v2-base-first", "FMT.builder-v2-max",
                    "FMT.builder-createtime-type", "FMT.builder-keeps-record-timestamps")
@given(data=draws())
@suite_settings(50)
def test_v2_batch(suite: Suite, data: Draws) -> None:
    """FMT-9/FMT-11: a v2 producer batch has the 61-byte header, BaseTimestamp = the first record's timestamp (not
    the minimum) and MaxTimestamp = the largest (SHOULD: the broker recomputes the max), bit 3 clear (MUST), and
    every record reads BaseTimestamp + delta = what it was given (MUST)."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, BUILD)
    magic, codec = data.draw(st.sampled_from(forms(twin, (MAGIC_V2,), (Codec.NONE, *COMPRESSED), building=True)),
                             label="form")
    records = tuple(data.draw(producer_records(magic), label="records"))
    if codec is not Codec.NONE:
        records = compressible(records)
    check_build(twin, BatchRequest(magic, records, codec), f"v2 {codec.name.lower()}")


@pytest.mark.kind("codec")
@pytest.mark.clause("FMT.writer-rejects-below-minus-one")
@given(data=draws())
@suite_settings(30)
def test_writer_refuses_below_minus_one(suite: Suite, data: Draws) -> None:
    """FMT-8: Kafka's builders refuse any timestamp below -1 ("Invalid negative timestamp"), whatever the magic
    and codec; a producer library should too (a broker range-checks such a value like any other, VAL-15)."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, BUILD)
    magic, codec = data.draw(
        st.sampled_from(forms(twin, (MAGIC_V2, MAGIC_V1, MAGIC_V0), (Codec.NONE, *COMPRESSED), building=True)),
        label="form",
    )
    records = data.draw(producer_records(magic), label="records")
    bad = data.draw(below_minus_one(), label="below -1")
    at = data.draw(st.integers(0, len(records) - 1), label="position")
    records[at] = RecordSpec(bad, records[at].key, records[at].value, records[at].headers)
    where = f"magic {magic} {codec.name.lower()}, {bad} at {at}"
    check_refusal(twin, BatchRequest(magic, tuple(records), codec), where)


@pytest.mark.kind("codec")
@pytest.mark.clause("FMT.builder-log-append-time", "FMT.v2-lat-deltas-kept", "FMT.builder-v2-base-first",
                    "FMT.v1-wrapper-relative-offsets")
@given(data=draws())
@suite_settings(40)
def test_log_append_time_build(suite: Suite, data: Draws) -> None:
    """TV-26 (FMT-7, FMT-12): a broker-side builder given LogAppendTime L sets bit 3 and writes L as the v2
    MaxTimestamp and as every v1 message's and wrapper's timestamp, so v1/v2 records read L; a v2 batch keeps
    BaseTimestamp = the first record's and the producer deltas (bit 3 cleared, they read again)."""
    data = suite.draws(data)
    twin = codec_twin(suite.impl, suite.profile, BUILD, CodecCapability.BUILD_LOG_APPEND_TIME)
    magic, codec = data.draw(
        st.sampled_from(forms(twin, (MAGIC_V2, MAGIC_V1, MAGIC_V0), (Codec.NONE, *COMPRESSED), building=True)),
        label="form",
    )
    records = tuple(data.draw(producer_records(magic), label="records"))
    append_time = data.draw(producer_timestamps().filter(lambda t: t >= 0), label="log append time")
    request = BatchRequest(magic, records, codec, LAT, log_append_time=append_time)
    check_build(twin, request, f"magic {magic} {codec.name.lower()} LogAppendTime {append_time}")
