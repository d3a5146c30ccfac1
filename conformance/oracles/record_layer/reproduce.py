"""One case at a time, in this process: replay, check a hand-written request, shrink to a minimal reproducer.

The bridge runs through py4j in the driver's JVM (conformance.jvm), so this needs the same Java and jar as
the job but no Spark job. A reproducer is a snippet a reader can paste:

    from conformance.oracles.record_layer import check
    ...
    print(check(BatchRequest(...), stored="built", conversions=((1, 0),)))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from conformance.oracles.record_layer.case_compare import Difference, compare_case
from conformance.oracles.record_layer.cases import BUILT, Case
from conformance.oracles.record_layer.explained import UNEXPLAINED, Explanation, classify
from conformance.oracles.record_layer.job import inline_answer
from conformance.oracles.record_layer.model_side import Model, model_named
from conformance.targets.kinds.codec_library import BatchRequest
from conformance.targets.libraries.java.compact import decode_oracle_response
from models.records import RecordSpec

SHRINK_BUDGET = 150  # oracle calls per case


def differences(case: Case, model: Model) -> list[Difference]:
    return compare_case(case, decode_oracle_response(inline_answer(case, model), len(case.conversions)), model)


def check(
    request: BatchRequest,
    *,
    stored: str = BUILT,
    conversions: Sequence[tuple[int, int]] = (),
    model_fault: str | None = None,
) -> list[Difference]:
    """Every difference between the model and Kafka's record layer on `request` (empty: they agree).
    `conversions`: (to_magic, first_offset) down-conversions of the stored batch to compare as well."""
    case = Case(0, request.magic, 0, request, tuple(conversions), "hand-written", stored)
    return differences(case, model_named(model_fault))


def _unexplained_keys(case: Case, model: Model, explanations: Sequence[Explanation]) -> set[str]:
    outcome, _, left = classify(case, differences(case, model), explanations)
    return {f"{d.check} {d.field}" for d in left} if outcome == UNEXPLAINED else set()


def shrink(case: Case, model: Model, explanations: Sequence[Explanation], budget: int = SHRINK_BUDGET) -> Case:
    """A smaller case with the same first unexplained difference (check and field): fewer conversions, fewer
    records, then simpler records and base offset. Greedy, bounded by `budget` oracle calls."""
    keys = _unexplained_keys(case, model, explanations)
    if not keys:
        return case
    target = min(keys)
    calls = 0

    def fails(candidate: Case) -> bool:
        nonlocal calls
        calls += 1
        return target in _unexplained_keys(candidate, model, explanations)

    def attempt(current: Case, candidates: Callable[[Case], list[Case]]) -> Case:
        improved = True
        while improved and calls < budget:
            improved = False
            for candidate in candidates(current):
                if calls >= budget:
                    break
                if fails(candidate):
                    current, improved = candidate, True
                    break
        return current

    current = attempt(case, _fewer_conversions)
    current = attempt(current, _fewer_records)
    current = attempt(current, _simpler_records)
    return attempt(current, _simpler_offsets)


def _with_records(case: Case, records: tuple[RecordSpec, ...]) -> Case:
    return replace(case, request=replace(case.request, records=records))


def _fewer_conversions(case: Case) -> list[Case]:
    kept = case.conversions
    return [replace(case, conversions=kept[:i] + kept[i + 1 :]) for i in range(len(kept))]


def _fewer_records(case: Case) -> list[Case]:
    records = case.request.records
    n = len(records)
    out: list[Case] = []
    size = n // 2
    while size >= 1:
        for start in range(0, n, size):
            kept = records[:start] + records[start + size :]
            if kept:
                out.append(_with_records(case, kept))
        size //= 2
    return out


def _simpler_records(case: Case) -> list[Case]:
    out: list[Case] = []
    records = case.request.records
    for i, r in enumerate(records):
        for simpler in (replace(r, headers=()), replace(r, key=None), replace(r, value=None)):
            if simpler != r:
                out.append(_with_records(case, (*records[:i], simpler, *records[i + 1 :])))
    return out


def _simpler_offsets(case: Case) -> list[Case]:
    request = case.request
    if request.base_offset == 0:
        return []
    shift = request.base_offset
    conversions = tuple((m, max(0, first - shift)) for m, first in case.conversions)
    return [replace(case, request=replace(request, base_offset=0), conversions=conversions)]


def reproducer(case: Case, found: Sequence[Difference], model: Model) -> str:
    """The paste-able snippet for `case` and the differences it shows (against `model`, a seeded fault or not)."""
    fault = "" if type(model) is Model else f", model_fault={model.name!r}"
    lines = [
        "from conformance.oracles.record_layer import check",
        "from conformance.targets.kinds.codec_library import BatchRequest",
        "from models.constants import Codec, TimestampType",
        "from models.records import Header, RecordSpec",
        "",
        f"request = {case.request!r}",
        f"print(check(request, stored={case.stored!r}, conversions={case.conversions!r}{fault}))",
    ]
    lines += ["# differences:"] + [f"#   {d.line()}" for d in found]
    return "\n".join(lines)
