"""The codec adapters (conformance/codecs) and the reference codec: round trips, TV-26 and TV-27 on ModelCodec, the
kafka-python and aiokafka record layers through the protocol, and a meta test of the codec mutants: each fails one of
its declared clauses on a fixed set of scenarios run through the codec suites' own comparisons
(suites/codec_helpers.py), which the reference codec passes. In process and deterministic: about a second.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable
from dataclasses import replace

import pytest

from conformance.errors import TargetError
from conformance.faults import MUTANTS
from conformance.judging.capabilities import Capability, CodecCapability
from conformance.judging.checks import CheckRecord, ClauseViolation, recording
from conformance.targets.kinds.codec_library import (
    BatchRequest,
    CodecRefused,
    CodecUnavailable,
    RecordCodecLibrary,
    read_records,
)
from conformance.targets.kinds.codec_target import CodecFactory, CodecImplementation, open_library
from conformance.targets.kinds.implementation import Kind
from conformance.targets.libraries import LIBRARIES
from conformance.targets.libraries.model.model_codec import ModelCodec
from conformance.targets.registry import resolve_target, target_kind
from models.codec import decode_batches, encode_batches
from models.constants import (
    CONTROL_MASK,
    DELETE_HORIZON_MASK,
    MAGICS,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    Codec,
    TimestampType,
)
from models.profiles import get_profile
from models.records import AnyBatch, DefaultBatch, LegacyBatch, LegacyMessage, RecordSpec, build_legacy, build_v2
from suites.codec_helpers import CodecTwin, check_build, check_conversion, check_read, check_refusal

CT, LAT = TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME
CODEC_MUTANTS = sorted(m for m, mutant in MUTANTS.items() if mutant.kind is Kind.CODEC)


def _specs(*timestamps: int) -> tuple[RecordSpec, ...]:
    return tuple(RecordSpec(ts, b"k%d" % i, b"v%d" % i) for i, ts in enumerate(timestamps))


def _timestamps(library: RecordCodecLibrary, data: bytes) -> list[tuple[int, TimestampType]]:
    return [(r.timestamp, r.timestamp_type) for r in read_records(library.read(data))]


# ------------------------------------------------------------------------------------ the reference codec


@pytest.mark.parametrize("magic", MAGICS)
@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_model_round_trip(magic: int, codec: Codec) -> None:
    model = ModelCodec()
    if codec is Codec.ZSTD and magic < 2:
        with pytest.raises(CodecRefused, match="ZStandard"):
            model.build(BatchRequest(magic, _specs(5, 3, 9), codec))
        return
    data = model.build(BatchRequest(magic, _specs(5, 3, 9), codec))
    want = [(-1, TimestampType.NO_TIMESTAMP_TYPE)] * 3 if magic == 0 else [(5, CT), (3, CT), (9, CT)]
    assert _timestamps(model, data) == want
    assert [r.key for r in read_records(model.read(data))] == [b"k0", b"k1", b"k2"]


def test_model_has_every_capability_and_refuses_what_java_refuses() -> None:
    model = ModelCodec()
    assert model.capabilities == frozenset(CodecCapability)
    assert isinstance(model, RecordCodecLibrary)
    with pytest.raises(CodecRefused, match="Invalid negative timestamp -2"):
        model.build(BatchRequest(2, _specs(5, -2)))
    with pytest.raises(CodecRefused, match="log_append_time"):
        model.build(BatchRequest(2, _specs(5), timestamp_type=LAT))


@pytest.mark.vector("TV-26")
@pytest.mark.parametrize("magic", MAGICS)
@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP])
def test_model_builds_tv26(magic: int, codec: Codec) -> None:
    """TV-26: LogAppendTime L over three appends: v1/v2 records read L and the batch max is L (v0 reads -1);
    CreateTime 0, 2, 1: max 2 (v0: -1)."""
    model = ModelCodec()
    lat = model.read(model.build(BatchRequest(magic, _specs(0, 2, 1), codec, LAT, log_append_time=1_000)))
    created = model.read(model.build(BatchRequest(magic, _specs(0, 2, 1), codec)))
    if magic == 0:
        assert {r.timestamp for r in read_records(lat)} == {-1}
        assert {b.max_timestamp for b in created} == {-1}
        return
    assert [r.timestamp for r in read_records(lat)] == [1_000] * 3
    assert {b.max_timestamp for b in lat} == {1_000} and {b.timestamp_type for b in lat} == {LAT}
    assert max(b.max_timestamp or -1 for b in created) == 2
    if magic == 2:
        (batch,) = decode_batches(model.build(BatchRequest(2, _specs(0, 2, 1), codec, LAT, log_append_time=1_000)))
        assert isinstance(batch, DefaultBatch) and batch.base_timestamp == 0  # TV-19/20: BaseTimestamp kept


def _marker(offset: int, commit: bool) -> DefaultBatch:
    built = build_v2([RecordSpec(11, struct.pack(">hh", 0, int(commit)), b"")], base_offset=offset, producer_id=1,
                     producer_epoch=0, transactional=True)
    return replace(built, attributes=built.attributes | CONTROL_MASK | TRANSACTIONAL_MASK)


@pytest.mark.vector("TV-27")
@pytest.mark.parametrize(("codec", "batches"), [(Codec.GZIP, 2), (Codec.NONE, 3)])
def test_model_down_converts_tv27(codec: Codec, batches: int) -> None:
    """TV-27: [v2 LAT {10}, abort marker, v2 CreateTime {12, 13}, commit marker] to v1: markers dropped; compressed
    gives 2 batches, uncompressed 3; keys kept; zstd is refused."""
    stored = [
        build_v2(_specs(10), codec=codec).with_header(timestamp_type=LAT, max_timestamp=10),
        _marker(1, commit=False),
        build_v2(_specs(12, 13), codec=codec, base_offset=2),
        _marker(4, commit=True),
    ]
    model = ModelCodec()
    converted = decode_batches(model.convert(encode_batches(stored), to_magic=1))
    assert len(converted) == batches
    assert [b.timestamp_type for b in converted][:2] == [LAT, CT]
    assert [r.key for b in converted for r in b.records()] == [b"k0", b"k0", b"k1"]
    zstd = [build_v2(_specs(10), codec=Codec.ZSTD)]
    with pytest.raises(CodecRefused, match="Down-conversion of zstandard-compressed batches is not supported"):
        model.convert(encode_batches(zstd), to_magic=1)


# ------------------------------------------------------------------------------------ the adapters


@pytest.mark.parametrize("library", ["kafka-python", "aiokafka", "aiokafka-pure"])
def test_python_libraries_round_trip(library: str) -> None:
    codec = open_library(library)
    assert codec.name == library and codec.version
    assert CodecCapability.BUILD_LOG_APPEND_TIME not in codec.capabilities
    for magic in MAGICS:
        data = codec.build(BatchRequest(magic, _specs(5, 3, 9), Codec.GZIP))
        want = [(-1, TimestampType.NO_TIMESTAMP_TYPE)] * 3 if magic == 0 else [(5, CT), (3, CT), (9, CT)]
        assert _timestamps(codec, data) == want
        assert _timestamps(ModelCodec(), data) == want  # what the library wrote, as Kafka's reader reads it
    with pytest.raises(CodecRefused, match="no LogAppendTime builder"):
        codec.build(BatchRequest(2, _specs(5), timestamp_type=LAT, log_append_time=7))


def test_aiokafka_missing_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "aiokafka", None)
    for library in ("aiokafka", "aiokafka-pure"):
        with pytest.raises(TargetError, match=r"pip install aiokafka==0\.14\.0"):
            open_library(library)


def test_codec_targets_are_of_kind_codec() -> None:
    in_process = {name for name, row in LIBRARIES.items() if row.adapter("codec") is not None}
    assert in_process >= {"model", "kafka-python", "aiokafka", "aiokafka-pure"}
    assert target_kind("codec:kafka-python") is Kind.CODEC
    assert all(target_kind(f"mutant:{m}") is Kind.CODEC for m in CODEC_MUTANTS)
    factory = resolve_target("codec:model", "kafka-2.8")
    assert isinstance(factory, CodecFactory)
    impl = factory.build()
    assert isinstance(impl, CodecImplementation) and impl.capabilities == frozenset({Capability.CODEC})
    with pytest.raises(CodecUnavailable):
        raise CodecUnavailable("x")


# ------------------------------------------------------------------------------------ the codec mutants


def _crafted_reads() -> list[tuple[AnyBatch, ...]]:
    """Stored forms and crafted batches, one of each kind the reader suites draw."""
    (ct_wrapper,) = build_legacy(_specs(5, 3, 9), magic=1, codec=Codec.GZIP, base_offset=10)
    lat_wrapper = ct_wrapper.with_header(timestamp_type=LAT, max_timestamp=100)
    flipped = LegacyBatch(offset=ct_wrapper.offset, message=LegacyMessage(
        magic=1, attributes=int(Codec.GZIP), timestamp=9,
        inner=tuple(LegacyBatch(offset=e.offset, message=LegacyMessage(
            magic=1, attributes=TIMESTAMP_TYPE_MASK, timestamp=e.message.timestamp, key=e.message.key, value=b"v"))
            for e in ct_wrapper.message.inner)))
    v0_inner = LegacyBatch(offset=2, message=LegacyMessage(
        magic=1, attributes=int(Codec.GZIP) | TIMESTAMP_TYPE_MASK, timestamp=100,
        inner=build_legacy(_specs(5, 3, 9), magic=0)))
    v0_bit = tuple(LegacyBatch(offset=b.offset, message=LegacyMessage(
        magic=0, attributes=TIMESTAMP_TYPE_MASK, key=b.message.key, value=b.message.value))
        for b in build_legacy(_specs(5), magic=0))
    v2 = build_v2(_specs(5, 3, 9), base_offset=20)
    stamped = v2.with_header(timestamp_type=LAT, max_timestamp=100)
    no_timestamps = build_v2(_specs(-1, -1))
    horizon_ms = 50  # the delete horizon in BaseTimestamp, deltas rebased to it (KIP-534)
    rebased = tuple(replace(r, timestamp_delta=v2.base_timestamp + r.timestamp_delta - horizon_ms) for r in v2.records_)
    horizon = replace(v2, attributes=DELETE_HORIZON_MASK, base_timestamp=horizon_ms, records_=rebased)
    return [
        build_legacy(_specs(5, 3), magic=0), v0_bit, build_legacy(_specs(5, 3), magic=0, codec=Codec.GZIP),
        tuple(b.with_header(timestamp_type=LAT, max_timestamp=100) for b in build_legacy(_specs(5, 3), magic=1)),
        (ct_wrapper,), (lat_wrapper,), (flipped,), (v0_inner,),
        (v2,), (stamped,), (no_timestamps,), (horizon,),
    ]


def _scenarios() -> list[Callable[[CodecTwin], None]]:
    out: list[Callable[[CodecTwin], None]] = []
    for magic in MAGICS:
        for codec in (Codec.NONE, Codec.GZIP):
            # 5, 9, 3: the first is neither the smallest nor the largest, the last not the largest (FMT-11).
            out.append(lambda t, m=magic, c=codec: check_build(t, BatchRequest(m, _specs(5, 9, 3), c)))
            out.append(lambda t, m=magic, c=codec: check_build(
                t, BatchRequest(m, _specs(5, 9, 3), c, LAT, log_append_time=100)))
        out.append(lambda t, m=magic: check_refusal(t, BatchRequest(m, _specs(5, -2))))
    for batches in _crafted_reads():
        out.append(lambda t, b=batches: check_read(t, b))
    stored_lat = build_v2(_specs(10), codec=Codec.GZIP).with_header(timestamp_type=LAT, max_timestamp=10)
    for codec in (Codec.NONE, Codec.GZIP):
        stored = [build_v2(_specs(10), codec=codec).with_header(timestamp_type=LAT, max_timestamp=10),
                  _marker(1, commit=False), build_v2(_specs(13, 12), codec=codec, base_offset=2)]
        for to_magic in (1, 0):
            out.append(lambda t, s=stored, m=to_magic: check_conversion(t, s, m))
    out.append(lambda t: check_conversion(t, [stored_lat, build_v2(_specs(1), codec=Codec.ZSTD, base_offset=1)], 1))
    return out


def _violations(codec: RecordCodecLibrary, profile: str) -> list[ClauseViolation]:
    twin = CodecTwin(codec, ModelCodec(), get_profile(profile))
    found: list[ClauseViolation] = []
    for scenario in _scenarios():
        record = CheckRecord()
        try:
            with recording(record):
                scenario(twin)
        except ClauseViolation as raised:
            found.append(raised)
        found.extend(record.lenient)
    return found


@pytest.mark.parametrize("mutant_id", CODEC_MUTANTS)
def test_each_codec_mutant_fails_a_declared_clause(mutant_id: str) -> None:
    mutant = MUTANTS[mutant_id]
    impl = mutant.build(get_profile(mutant.profile))
    assert isinstance(impl, CodecImplementation)
    caught = {v.clause_id for v in _violations(impl.codec, mutant.profile)}
    assert caught & set(mutant.clauses), f"{mutant_id} declares {mutant.clauses}; the scenarios caught {caught}"


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-3.9", "kafka-4.0"])
def test_the_reference_codec_passes_every_scenario(profile: str) -> None:
    assert _violations(ModelCodec(), profile) == []
