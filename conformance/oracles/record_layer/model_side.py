"""The model's side of a differential case: what the model builds, how it reads bytes, how it down-converts.

Every method returns either a value or a `ModelRefused` (the model's refusal, as Kafka's code refuses with an
exception), never raises for a case: a refusal on one side only is itself a difference to report.

`Model` is the reference model itself (models/). `MODEL_FAULTS` are seeded faults, each overriding one named
seam of `Model` (as the mutants do for the implementations), so that a run can show the oracle catching a
model that is wrong (`kafka-conformance differential --seed-model-fault NAME`, and the project's tests). It is a
registry of the mutants' shape (conformance.faults.seeded): each fault's record under its class's `name`, kind
codec (the model's builders and reader are a record codec), the clauses it breaks and the class as what builds it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from conformance.faults.seeded import FaultRegistry, SeededFault, UnknownFault
from conformance.oracles.record_layer.cases import BUILT, IN_PLACE_LAT, OFFSET_ZERO_WRAPPER, V0_INNER
from conformance.targets.kinds.codec_library import BatchRequest
from conformance.targets.kinds.implementation import Kind
from conformance.targets.libraries.java.compact import JavaBatch
from conformance.targets.libraries.model.model_codec import check_request
from models.codec import decode_batches, encode_batches
from models.constants import Codec, TimestampType
from models.conversion import down_convert
from models.errors import ModelError
from models.records import AnyBatch, ConsumerRecord, DefaultBatch, LegacyBatch, LegacyMessage, build_batches


@dataclass(frozen=True)
class ModelRefused:
    detail: str


@dataclass(frozen=True)
class BatchView:
    """One batch as a reader reports it (FMT-14 getters, CON-1 records): what both sides are compared on."""

    magic: int
    codec: Codec
    timestamp_type: TimestampType
    base_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    records: tuple[ConsumerRecord, ...]

    @classmethod
    def of(
        cls, batch: AnyBatch | JavaBatch, offset_of_max_timestamp: int, records: tuple[ConsumerRecord, ...]
    ) -> BatchView:
        """The view of a batch either side read (the model's batch, Kafka's JavaBatch), with what each reader answers
        in its own way: the offset of the max timestamp and the records."""
        return cls(batch.magic, batch.codec, batch.timestamp_type, batch.base_offset, batch.last_offset,
                   batch.max_timestamp, offset_of_max_timestamp, records)  # fmt: skip


def _refusal(exc: Exception) -> ModelRefused:
    return ModelRefused(f"{type(exc).__name__}: {exc}")


class Model:
    """The reference model's builders, codec, reader and down-conversion, one seam per step."""

    name = "model"

    def build_refusal(self, request: BatchRequest) -> ModelRefused | None:
        """FMT-8/FMT-4: where the model says Kafka's builder refuses these records (check_request)."""
        try:
            check_request(request)
        except ModelError as exc:
            return _refusal(exc)
        return None

    def build(self, request: BatchRequest) -> tuple[AnyBatch, ...] | ModelRefused:
        """The model builder's batches for `request` (crafted even where Kafka's builder refuses, so that readers
        can be compared on them), or its refusal where it cannot build them at all."""
        try:
            return build_batches(
                request.records,
                magic=request.magic,
                base_offset=request.base_offset,
                codec=request.codec,
                timestamp_type=request.timestamp_type,
                log_append_time=request.log_append_time,
            )
        except (ModelError, ValueError) as exc:
            return _refusal(exc)

    def stored(self, request: BatchRequest, form: str) -> tuple[AnyBatch, ...] | ModelRefused:
        """The stored batches the readers and the down-conversion get (conformance.oracles.record_layer.cases: the
        builder's batches, a broker's in-place LogAppendTime wrapper, a librdkafka wrapper at offset 0, or a v1
        wrapper of v0 messages)."""
        if form == BUILT:
            return self.build(request)
        if form == IN_PLACE_LAT:
            produced = self.build(replace(request, timestamp_type=TimestampType.CREATE_TIME, log_append_time=None))
            if isinstance(produced, ModelRefused):
                return produced
            stamp = request.log_append_time
            # CMP-8/DIS-4: the in-place path rewrites the wrapper's timestamp and type bit only (FMT-13 analogue).
            return tuple(
                b.with_header(
                    timestamp_type=TimestampType.LOG_APPEND_TIME,
                    max_timestamp=b.max_timestamp if stamp is None else stamp,
                )
                for b in produced
            )
        if form == V0_INNER:
            built = self.build(request)
            if isinstance(built, ModelRefused):
                return built
            return tuple(_with_v0_inner(b) if isinstance(b, LegacyBatch) else b for b in built)
        if form == OFFSET_ZERO_WRAPPER:
            built = self.build(request)
            if isinstance(built, ModelRefused):
                return built
            return tuple(replace(b, offset=0) if isinstance(b, LegacyBatch) and b.is_compressed else b for b in built)
        raise ValueError(f"unknown stored form {form!r}")

    def encode(self, batches: Sequence[AnyBatch]) -> bytes | ModelRefused:
        try:
            return encode_batches(batches, cache=False)
        except (ModelError, ValueError) as exc:
            return _refusal(exc)

    def read(self, data: bytes) -> tuple[AnyBatch, ...] | ModelRefused:
        """The model's decoding of a record set, CRCs checked (as a consumer with check.crcs does)."""
        try:
            return decode_batches(data)
        except ModelError as exc:
            return _refusal(exc)

    def view(self, batches: Sequence[AnyBatch]) -> tuple[BatchView, ...]:
        """The model's reading of stored batches (FMT-14 getters, CON-1 records)."""
        return tuple(BatchView.of(b, b.offset_of_max_timestamp(), b.records()) for b in batches)

    def convert(
        self, batches: Sequence[AnyBatch], to_magic: int, first_offset: int
    ) -> tuple[AnyBatch, ...] | ModelRefused:
        """CNV-5: the model's down-conversion (models.conversion.down_convert)."""
        try:
            return down_convert(batches, to_magic=to_magic, fetch_offset=first_offset)
        except ModelError as exc:
            return _refusal(exc)


MODEL_FAULTS: FaultRegistry[SeededFault[type[Model]]] = FaultRegistry("model fault")

_M = TypeVar("_M", bound=type[Model])


def _model_fault(description: str, clauses: Sequence[str]) -> Callable[[_M], _M]:
    """Register a seeded model fault under its class's `name` (the id a run and a reproducer name it by)."""

    def register(cls: _M) -> _M:
        MODEL_FAULTS.register(SeededFault(cls.name, Kind.CODEC, tuple(clauses), description, cls))
        return cls

    return register


def _with_v0_inner(batch: LegacyBatch) -> LegacyBatch:
    """The same wrapper holding magic-0 messages (no timestamp field) with the same keys and values."""
    inner = tuple(
        replace(e, message=LegacyMessage(magic=0, key=e.message.key, value=e.message.value))
        for e in batch.message.inner
    )
    return replace(batch, message=replace(batch.message, inner=inner, crc=None))


@_model_fault(
    "A v1 compressed LogAppendTime wrapper is read with its inner messages' own timestamps instead of the "
    "wrapper's (FMT-7; the Sarama #885 / KafkaJS #838 kind of bug).",
    ("CON.v1-wrapper-lat-wrapper-value",),
)
class InnerTimestampsUnderLogAppendTime(Model):
    """Seeded fault: the reader's `view` of a LogAppendTime v1 wrapper."""

    name = "lat-inner-timestamps"

    def view(self, batches: Sequence[AnyBatch]) -> tuple[BatchView, ...]:
        out = []
        for b, seen in zip(batches, super().view(batches), strict=True):
            if isinstance(b, LegacyBatch) and b.is_compressed and seen.timestamp_type is TimestampType.LOG_APPEND_TIME:
                own = tuple(e.message.stored_timestamp for e in b.message.inner)
                records = tuple(replace(r, timestamp=t) for r, t in zip(seen.records, own, strict=True))
                seen = replace(seen, records=records)
            out.append(seen)
        return tuple(out)


@_model_fault(
    "A v2 CreateTime builder writes the last record's timestamp as MaxTimestamp instead of the largest (FMT-11).",
    ("FMT.builder-v2-max",),
)
class MaxTimestampOfLastRecord(Model):
    """Seeded fault: the builder's `build` of v2 CreateTime batches."""

    name = "v2-max-is-last"

    def build(self, request: BatchRequest) -> tuple[AnyBatch, ...] | ModelRefused:
        built = super().build(request)
        if isinstance(built, ModelRefused):
            return built
        return tuple(
            replace(b, max_timestamp=request.records[-1].timestamp)
            if isinstance(b, DefaultBatch) and b.timestamp_type is TimestampType.CREATE_TIME and request.records
            else b
            for b in built
        )


def model_named(fault: str | None) -> Model:
    """The reference model, or the model with seeded fault `fault` (MODEL_FAULTS)."""
    if fault is None:
        return Model()
    try:
        return MODEL_FAULTS[fault].build()
    except UnknownFault as exc:
        raise ValueError(str(exc)) from None
