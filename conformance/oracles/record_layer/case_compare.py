"""Comparing the model with Apache Kafka's record layer on one case, field by field, both ways. Pure.

The checks (each difference names one; explained differences match on it):

- `build.refusal`: one side refuses to build the batch, the other does not (FMT-4, FMT-8).
- `build.batch`: what Kafka's builder wrote, decoded by the model, against the model builder's batch, every
  field of the header and of each record (v2 base/max timestamp and deltas, the v1 wrapper timestamp, the
  type bit of wrapper and inner messages, offsets: FMT-6/7/11).
- `read.kafka-bytes`: the model's reading of Kafka's bytes against Kafka's reading of them (FMT-14, CON-1).
- `read.model-bytes`: Kafka's reading of the model's stored batch (the builder's, or a crafted stored form:
  cases.Case.stored) against the model's reading of it.
- `convert.refusal`, `convert.batch`, `convert.records`: Kafka's down-conversion of the stored batch's bytes
  (RecordsUtil.downConvert) against the model's (models.conversion.down_convert) of the same batch: refusal,
  structure (decoded by the model), and what a consumer reads (CNV-5).
- `convert.read-kafka-bytes`, `convert.read-model-bytes`: the readers on the converted bytes of each side.

A `Difference` has the check, the path of the field (`batch[0].records_[3].timestamp_delta`), both values and
the conversion's target magic where there is one.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from conformance.oracles.record_layer.cases import Case
from conformance.oracles.record_layer.model_side import BatchView, Model, ModelRefused
from conformance.targets.libraries.java.compact import ConversionAnswer, JavaBatch, OracleAnswer, Refused
from models.records import AnyBatch

MAX_DIFFERENCES_PER_CHECK = 8
_REPR_LIMIT = 160
_INDEX = re.compile(r"\[\d+\]")


@dataclass(frozen=True)
class Difference:
    check: str
    path: str
    model: str
    kafka: str
    to_magic: int | None = None

    @property
    def field(self) -> str:
        """The path without indices (`batch.records_.timestamp_delta`): what an explanation names."""
        return _INDEX.sub("", self.path)

    def line(self) -> str:
        where = f" (to magic {self.to_magic})" if self.to_magic is not None else ""
        return f"{self.check}{where} {self.path}: model {self.model}, Kafka {self.kafka}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _REPR_LIMIT else text[: _REPR_LIMIT - 3] + "..."


class _Collector:
    def __init__(self, check: str, to_magic: int | None) -> None:
        self.check = check
        self.to_magic = to_magic
        self.found: list[Difference] = []

    def add(self, path: str, model: Any, kafka: Any) -> None:
        if len(self.found) < MAX_DIFFERENCES_PER_CHECK:
            self.found.append(Difference(self.check, path, _short(model), _short(kafka), self.to_magic))

    def diff(self, model: Any, kafka: Any, path: str) -> None:
        """Field by field: dataclasses by field, sequences by index (and length), anything else by equality."""
        if len(self.found) >= MAX_DIFFERENCES_PER_CHECK or model == kafka:
            return
        if dataclasses.is_dataclass(model) and type(model) is type(kafka):
            for f in dataclasses.fields(model):
                self.diff(getattr(model, f.name), getattr(kafka, f.name), f"{path}.{f.name}")
        elif isinstance(model, tuple) and isinstance(kafka, tuple):
            if len(model) != len(kafka):
                self.add(f"{path}.length", len(model), len(kafka))
            for i, (m, k) in enumerate(zip(model, kafka, strict=False)):
                self.diff(m, k, f"{path}[{i}]")
        else:
            self.add(path, model, kafka)


def java_view(batches: Sequence[JavaBatch]) -> tuple[BatchView, ...]:
    return tuple(BatchView.of(b, b.offset_of_max_timestamp, b.records) for b in batches)


def _compare_reading(
    model: Model,
    out: _Collector,
    seen: tuple[AnyBatch, ...] | ModelRefused,
    kafka: tuple[JavaBatch, ...] | Refused | None,
) -> None:
    """The model's reading (or refusal) of some bytes against Kafka's reading (or refusal) of the same bytes."""
    both = _both_accepted(out, "a reading", seen, kafka)
    if both is None:
        return
    seen, kafka_read = both
    for i, batch in enumerate(kafka_read):
        if not batch.crc_valid:
            out.add(f"batch[{i}].crc_valid", True, False)
    out.diff(model.view(seen), java_view(kafka_read), "batch")


_Ours = TypeVar("_Ours")
_Theirs = TypeVar("_Theirs")


def _both_accepted(
    out: _Collector, what: str, ours: _Ours | ModelRefused, theirs: _Theirs | Refused | None
) -> tuple[_Ours, _Theirs] | None:
    """Both sides' results where neither refused (and the bridge answered), to be compared further; else None, with
    the difference recorded in `out`: no answer from the bridge (`what` names the answer missing), or one side
    refusing where the other did not (both refusing agree)."""
    if theirs is None:
        out.add("answer", what, "no answer from the bridge")
        return None
    if isinstance(ours, ModelRefused) or isinstance(theirs, Refused):
        if isinstance(ours, ModelRefused) != isinstance(theirs, Refused):
            out.add("refused", _detail(ours), _detail(theirs))
        return None
    return ours, theirs


def _detail(value: object) -> str:
    if isinstance(value, ModelRefused | Refused):
        return value.detail
    return "accepted"


def compare_case(case: Case, answer: OracleAnswer, model: Model, ran: list[str] | None = None) -> list[Difference]:
    """Every difference between `model` and Kafka on `case` (empty: they agree). `ran`, when given, receives the
    name of every check made (so a report can show that each check ran, not only that nothing differed)."""
    request = case.request
    collectors: list[_Collector] = []

    def collector(check: str, to_magic: int | None = None) -> _Collector:
        c = _Collector(check, to_magic)
        collectors.append(c)
        return c

    # Kafka builds: does it refuse where the model says it does (FMT-4, FMT-8), and write what the model writes?
    refusal = model.build_refusal(request)
    built = model.build(request)
    encoded = model.encode(built) if not isinstance(built, ModelRefused) else built
    model_refuses = refusal or (encoded if isinstance(encoded, ModelRefused) else None)
    refusals = collector("build.refusal")
    if (model_refuses is None) == isinstance(answer.built, Refused):
        refusals.add("refused", _detail(model_refuses), _detail(answer.built))
    if isinstance(answer.built, bytes):
        kafka_decoded = model.read(answer.built)
        if refusal is None and not isinstance(built, ModelRefused) and not isinstance(kafka_decoded, ModelRefused):
            collector("build.batch").diff(built, kafka_decoded, "batch")
        _compare_reading(model, collector("read.kafka-bytes"), kafka_decoded, answer.read_built)

    # The model's stored batch: both read it, both down-convert it.
    stored = model.stored(request, case.stored)
    if isinstance(stored, ModelRefused):
        return _found(collectors, ran)
    if answer.read_model is None:
        collector("read.model-bytes").add("model-encode", "cannot encode its stored batch", "-")
        return _found(collectors, ran)
    _compare_reading(model, collector("read.model-bytes"), stored, answer.read_model)
    for (to_magic, first_offset), conv in zip(case.conversions, answer.conversions, strict=True):
        converted = model.convert(stored, to_magic, first_offset)
        _compare_conversion(model, collector, converted, to_magic, conv)
        if isinstance(converted, ModelRefused):
            continue
        if conv.read_model_converted is None:
            # The request carried no bytes: the model could not encode its own conversion.
            collector("convert.read-model-bytes", to_magic).add("model-encode", "cannot encode its conversion", "-")
        else:
            reader = collector("convert.read-model-bytes", to_magic)
            _compare_reading(model, reader, converted, conv.read_model_converted)
    return _found(collectors, ran)


def _found(collectors: list[_Collector], ran: list[str] | None) -> list[Difference]:
    if ran is not None:
        ran.extend(dict.fromkeys(c.check for c in collectors))
    return [d for c in collectors for d in c.found]


def _compare_conversion(
    model: Model,
    collector: Callable[[str, int | None], _Collector],
    converted: tuple[AnyBatch, ...] | ModelRefused,
    to_magic: int,
    conv: ConversionAnswer,
) -> None:
    """The model's down-conversion of the stored batch against Kafka's (RecordsUtil.downConvert) of its bytes."""
    both = _both_accepted(collector("convert.refusal", to_magic), "a conversion", converted, conv.converted)
    if both is None:
        return
    converted, kafka = both
    kafka_decoded = model.read(kafka)
    if isinstance(kafka_decoded, ModelRefused):
        collector("convert.read-kafka-bytes", to_magic).add("refused", kafka_decoded.detail, "accepted")
        return
    collector("convert.batch", to_magic).diff(converted, kafka_decoded, "batch")
    if conv.read_converted is None or isinstance(conv.read_converted, Refused):
        collector("convert.records", to_magic).add("refused", "accepted", _detail(conv.read_converted))
        return
    collector("convert.records", to_magic).diff(model.view(converted), java_view(conv.read_converted), "batch")
    _compare_reading(model, collector("convert.read-kafka-bytes", to_magic), kafka_decoded, conv.read_converted)
