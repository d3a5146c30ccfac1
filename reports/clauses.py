"""Clause-centric Allure results: one result per catalogue clause with its verdict, beside the per-test
results allure-pytest writes, so the report reads clause by clause (PASS, FAIL, KNOWN, UNSUPPORTED, ...)
and not only test by test (a test checks several clauses; a KNOWN test is an xfail to pytest).

Reads the plugin's verdicts JSON (`--verdicts-json`); writes `<uuid>-result.json` files in Allure's
result format into the results directory.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from models.clauses import Level, get_clause

# Allure has five statuses; the verdict itself is the result's first words and a tag.
_STATUS = {
    "PASS": "passed",
    "FAIL": "failed",
    "UNEXPECTED-PASS": "failed",
    "KNOWN": "skipped",
    "NON-STRICT": "skipped",
    "UNSUPPORTED": "skipped",
    "N/A": "skipped",
    "BLOCKED": "unknown",
}
_SEVERITY = {Level.MUST: "critical", Level.SHOULD: "normal", Level.MAY: "minor"}
_MEANING = {
    "PASS": "the implementation agrees with the reference model on every example",
    "FAIL": "the implementation departs from the reference model (counterexample below)",
    "UNEXPECTED-PASS": "expected to fail (expectations file) but passed: the expectation is stale",
    "KNOWN": "a known failure, listed in the expectations file, reproduced",
    "NON-STRICT": "a SHOULD clause not met",
    "UNSUPPORTED": "the implementation lacks a capability or API version the clause needs",
    "N/A": "the clause does not apply to this profile",
    "BLOCKED": "not checked: every test of the clause stopped at another clause's failure first",
}


def write_clause_results(verdicts_json: Path, results: Path) -> int:
    """One Allure result per clause of `verdicts_json`; returns how many were written."""
    data = json.loads(verdicts_json.read_text(encoding="utf-8"))
    tests: list[dict[str, Any]] = data.get("tests", [])
    results.mkdir(parents=True, exist_ok=True)
    written = 0
    for clause_id, verdict in data.get("clauses", {}).items():
        clause = get_clause(clause_id)
        evidence = [t for t in tests if t.get("verdicts", {}).get(clause_id) == verdict and t.get("message")]
        trace = "\n\n".join(
            f"{t['nodeid']}\n{t['message']}" + (f"\nreplay: {t['replay']}" if t.get("replay") else "")
            for t in evidence[:3]
        )
        finished = [t.get("finished_at", 0) for t in tests if clause_id in t.get("clauses", [])]
        stop = int(max(finished, default=0) * 1000)
        result = {
            "uuid": str(uuid.uuid4()),
            "historyId": f"clause:{clause_id}",
            "fullName": f"clauses.{clause_id}",
            "name": f"{verdict}  {clause_id}: {clause.summary}",
            "status": _STATUS.get(verdict, "unknown"),
            "statusDetails": {"message": f"{verdict}: {_MEANING.get(verdict, verdict)}", "trace": trace},
            "description": f"{clause.summary}\n\nRules: {', '.join(clause.rules)} ({clause.kip}), "
            f"level {clause.level.value}.",
            "labels": [
                {"name": "parentSuite", "value": "clauses"},
                {"name": "suite", "value": clause.area.value},
                {"name": "epic", "value": clause.kip},
                {"name": "feature", "value": clause.area.value},
                {"name": "story", "value": clause_id},
                {"name": "severity", "value": _SEVERITY[clause.level]},
                {"name": "tag", "value": verdict},
                {"name": "target", "value": str(data.get("target"))},
                {"name": "profile", "value": str(data.get("profile"))},
            ],
            "start": stop,
            "stop": stop,
        }
        (results / f"{result['uuid']}-result.json").write_text(json.dumps(result), encoding="utf-8")
        written += 1
    return written
