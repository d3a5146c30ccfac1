"""Explained differences between the model and a broker in the broker-level differential.

A JSON file (default: the installed suites' `expectations/broker-differential.json`):

    {
      "explained": [
        {
          "id": "short-stable-name",
          "check": "lookup",                    # produce, fetch, lookup, alter (brokerdiff.answer_diff)
          "fields": ["offset", "timestamp"],    # field paths without indices (Difference.field)
          "when": {"facts": ["untimed-segment"], "versions": [1, 2], "targets": ["kafka:4.0"]},  # optional scope
          "model": "-1", "kafka": "0",          # optional: the values exactly (or model_contains/kafka_contains)
          "reason": "what differs and why it is not a model bug",
          "evidence": "the Kafka source (file and method) or JIRA that shows it",
          "example": "the shrunk program's reproducer file, or how to make one"
        }
      ]
    }

A difference is explained when an entry has its check and field, the operation is in the entry's scope (every
fact it names holds, the version and target are among those listed) and the values match. An operation is
`explained` when every difference is, `unexplained` otherwise. An entry that explains nothing in a run is listed in
the summary (as the expectations files' STALE entries are), never silently kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.oracles.record_layer.case_compare import Difference
from conformance.oracles.record_layer.explained import AGREE, EXPLAINED, UNEXPLAINED, ExplainedError, values_match

CHECKS = frozenset({"produce", "fetch", "lookup", "alter"})
UNSUPPORTED = "unsupported"  # the implementation could not do the operation: nothing compared
_SCOPE_KEYS = frozenset({"facts", "versions", "targets"})
_VALUE_KEYS = frozenset({"model", "kafka", "model_contains", "kafka_contains"})
_REQUIRED = ("id", "check", "fields", "reason", "evidence", "example")
_KEYS = frozenset(_REQUIRED) | {"when"} | _VALUE_KEYS


@dataclass(frozen=True)
class Explanation:
    id: str
    check: str
    fields: frozenset[str]
    when: Mapping[str, tuple[Any, ...]]
    values: Mapping[str, str]

    def explains(self, difference: Difference, *, facts: frozenset[str], version: int, target: str) -> bool:
        if difference.check != self.check or difference.field not in self.fields:
            return False
        if not set(self.when.get("facts", ())) <= facts:
            return False
        if "versions" in self.when and version not in self.when["versions"]:
            return False
        if "targets" in self.when and target not in self.when["targets"]:
            return False
        return values_match(self.values, difference)


def load_explained(path: Path) -> tuple[Explanation, ...]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ExplainedError(f"explained-differences file {path} not found: pass --explained FILE") from None
    except json.JSONDecodeError as exc:
        raise ExplainedError(f"{path}: not JSON ({exc}); fix the file or pass another with --explained") from None
    entries = data.get("explained") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ExplainedError(f"{path}: expected an object with an \"explained\" list (see the format in {__name__})")
    return tuple(_entry(path, i, e) for i, e in enumerate(entries))


def _entry(path: Path, index: int, entry: Any) -> Explanation:
    where = f"{path}: entry {index}"
    if not isinstance(entry, dict):
        raise ExplainedError(f"{where}: expected an object")
    where = f"{path}: entry {entry.get('id', index)!r}"
    missing = [k for k in _REQUIRED if not entry.get(k)]
    if missing:
        raise ExplainedError(f"{where}: missing {', '.join(missing)}; every entry needs {', '.join(_REQUIRED)}")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise ExplainedError(f"{where}: unknown key(s) {', '.join(unknown)}; the keys are {', '.join(sorted(_KEYS))}")
    if entry["check"] not in CHECKS:
        raise ExplainedError(f"{where}: check {entry['check']!r} is not one of {', '.join(sorted(CHECKS))}")
    when = entry.get("when", {})
    bad = sorted(set(when) - _SCOPE_KEYS) if isinstance(when, dict) else ["(not an object)"]
    if bad:
        raise ExplainedError(f"{where}: unknown scope key(s) {', '.join(bad)}; use {', '.join(sorted(_SCOPE_KEYS))}")
    return Explanation(
        id=entry["id"],
        check=entry["check"],
        fields=frozenset(entry["fields"]),
        when={k: tuple(v) for k, v in when.items()},
        values={k: str(entry[k]) for k in _VALUE_KEYS if k in entry},
    )


def classify(
    differences: Sequence[Difference],
    explanations: Sequence[Explanation],
    *,
    facts: frozenset[str],
    version: int,
    target: str,
) -> tuple[str, tuple[str, ...], tuple[Difference, ...]]:
    """(outcome, ids of the entries used, the differences no entry explains)."""
    if not differences:
        return AGREE, (), ()
    used: list[str] = []
    left: list[Difference] = []
    for difference in differences:
        entry = next(
            (e for e in explanations if e.explains(difference, facts=facts, version=version, target=target)), None
        )
        if entry is None:
            left.append(difference)
        elif entry.id not in used:
            used.append(entry.id)
    return (UNEXPLAINED if left else EXPLAINED), tuple(used), tuple(left)
