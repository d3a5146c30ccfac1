"""Explained differences between the model and Apache Kafka's record layer (profile data, like the
DIS-* rules of docs/rules.md).

A JSON file (default: the installed suites' `expectations/differential.json`):

    {
      "kafka_clients": "3.9.1",
      "explained": [
        {
          "id": "short-stable-name",
          "check": "build.batch",                  # a check of conformance.oracles.record_layer.case_compare
          "fields": ["batch.records_.attributes"], # the field paths without indices (Difference.field)
          "when": {"magic": [1], "codec": ["gzip", "lz4"], "timestamp_type": ["log-append-time"],
                   "to_magic": [0], "records": [0], "stored": ["built"]},  # optional scope, every key optional
          "model": "1", "kafka": "0",             # optional: the values (Difference.model/.kafka) exactly
          "kafka_contains": "no inner records",   # optional: ... or a part of them (also model_contains)
          "profile": "kafka-3.9",                 # the profile whose behaviour the difference is
          "reason": "one or two sentences: what differs and why it is not a model bug",
          "evidence": "Kafka source file and method (and the model's rule ID)",
          "example": "the minimal case: a BatchRequest a reader can paste"
        }
      ]
    }

A difference is explained when an entry has its check, lists its field, the case is inside the entry's
scope and the values match the entry's value matchers (a refusal's Kafka side is the exception's text). A case
is `explained` when every one of its differences is, `unexplained` otherwise. An entry that
explains nothing in a run is reported (as the expectations files' STALE entries are), never silently kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.oracles.record_layer.case_compare import Difference
from conformance.oracles.record_layer.cases import Case

CHECKS = frozenset(
    {
        "build.refusal",
        "build.batch",
        "read.kafka-bytes",
        "read.model-bytes",
        "convert.refusal",
        "convert.batch",
        "convert.records",
        "convert.read-kafka-bytes",
        "convert.read-model-bytes",
    }
)
_SCOPE_KEYS = frozenset({"magic", "codec", "timestamp_type", "to_magic", "records", "stored"})
_VALUE_KEYS = frozenset({"model", "kafka", "model_contains", "kafka_contains"})
_KEYS = frozenset({"id", "check", "fields", "when", "profile", "reason", "evidence", "example"}) | _VALUE_KEYS
_REQUIRED = ("id", "check", "fields", "profile", "reason", "evidence", "example")


class ExplainedError(ValueError):
    """An explained-differences file that does not parse; the message names the file, the entry and the fix."""


@dataclass(frozen=True)
class Explanation:
    id: str
    check: str
    fields: frozenset[str]
    when: Mapping[str, frozenset[Any]]
    profile: str
    reason: str
    evidence: str
    example: str

    values: Mapping[str, str]  # "model"/"kafka": exact; "model_contains"/"kafka_contains": a part

    def explains(self, case: Case, difference: Difference) -> bool:
        if difference.check != self.check or difference.field not in self.fields:
            return False
        facts: dict[str, Any] = {
            "magic": case.magic,
            "codec": case.request.codec.name.lower(),
            "timestamp_type": case.request.timestamp_type.name.lower().replace("_", "-"),
            "to_magic": difference.to_magic,
            "records": len(case.request.records),
            "stored": case.stored,
        }
        if not all(facts[key] in allowed for key, allowed in self.when.items()):
            return False
        return values_match(self.values, difference)


def values_match(values: Mapping[str, str], difference: Difference) -> bool:
    """An entry's value matchers against a difference: "model"/"kafka" exactly, "model_contains"/"kafka_contains" a
    part (the broker differential's entries use the same keys)."""
    for key, wanted in values.items():
        seen = difference.model if key.startswith("model") else difference.kafka
        if (wanted not in seen) if key.endswith("_contains") else (seen != wanted):
            return False
    return True


def _entry(where: str, raw: Any) -> Explanation:
    if not isinstance(raw, dict):
        raise ExplainedError(f"{where}: an entry must be an object with {', '.join(_REQUIRED)}")
    unknown = set(raw) - _KEYS
    if unknown:
        raise ExplainedError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(_KEYS)}")
    missing = [k for k in _REQUIRED if not raw.get(k)]
    if missing:
        raise ExplainedError(f"{where}: missing {', '.join(missing)} (every entry carries its evidence and example)")
    if raw["check"] not in CHECKS:
        raise ExplainedError(f"{where}: unknown check {raw['check']!r}; choose one of {', '.join(sorted(CHECKS))}")
    fields = raw["fields"]
    if not isinstance(fields, list) or not all(isinstance(f, str) and f for f in fields):
        raise ExplainedError(f"{where}: 'fields' must be a list of field paths such as 'batch.max_timestamp'")
    when = raw.get("when", {})
    if not isinstance(when, dict) or set(when) - _SCOPE_KEYS or not all(isinstance(v, list) for v in when.values()):
        raise ExplainedError(f"{where}: 'when' must map some of {sorted(_SCOPE_KEYS)} to lists of values")
    values = {k: raw[k] for k in _VALUE_KEYS if k in raw}
    if not all(isinstance(v, str) for v in values.values()):
        raise ExplainedError(f"{where}: {', '.join(sorted(values))} must be strings (a difference's values as shown)")
    return Explanation(
        id=str(raw["id"]),
        check=raw["check"],
        fields=frozenset(fields),
        when={k: frozenset(v) for k, v in when.items()},
        profile=str(raw["profile"]),
        reason=str(raw["reason"]),
        evidence=str(raw["evidence"]),
        example=str(raw["example"]),
        values=values,
    )


def load_explained(path: str | Path) -> tuple[Explanation, ...]:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExplainedError(f"explained-differences file {p} not found: pass --explained FILE") from None
    except json.JSONDecodeError as exc:
        raise ExplainedError(f"{p}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("explained"), list):
        raise ExplainedError(f'{p}: expected {{"explained": [...]}} at the top level')
    entries = tuple(_entry(f"{p}: explained[{i}]", raw) for i, raw in enumerate(data["explained"]))
    seen: set[str] = set()
    for e in entries:
        if e.id in seen:
            raise ExplainedError(f"{p}: two entries are called {e.id!r}: ids must be unique")
        seen.add(e.id)
    return entries


def classify(
    case: Case, differences: Sequence[Difference], explanations: Iterable[Explanation]
) -> tuple[str, tuple[str, ...], tuple[Difference, ...]]:
    """(outcome, ids of the entries used, the differences no entry explains). Outcome: agree, explained or
    unexplained."""
    if not differences:
        return AGREE, (), ()
    entries = tuple(explanations)
    used: dict[str, None] = {}
    left: list[Difference] = []
    for difference in differences:
        match = next((e for e in entries if e.explains(case, difference)), None)
        if match is None:
            left.append(difference)
        else:
            used[match.id] = None
    return (UNEXPLAINED if left else EXPLAINED), tuple(used), tuple(left)


AGREE, EXPLAINED, UNEXPLAINED = "agree", "explained", "unexplained"
OUTCOMES = (AGREE, EXPLAINED, UNEXPLAINED)
