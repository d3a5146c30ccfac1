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
    "UNSUPPORTED": "not checked on this target: it lacks a capability or API version the clause needs, or the "
    "tests of the clause passed without any check of it running",
    "N/A": "the clause does not apply to this profile",
    "BLOCKED": "not checked: every test of the clause stopped at another clause's failure first, or the target "
    "was lost during the run",
}


def _expectations(path: Path | None) -> dict[str, dict[str, str]]:
    """clause -> its expectations entry (reason, link, test), for the KNOWN clauses' pages."""
    if path is None or not Path(path).is_file():
        return {}
    import tomllib

    entries = tomllib.loads(Path(path).read_text(encoding="utf-8")).get("expected", [])
    return {str(e.get("clause")): {k: str(v) for k, v in e.items()} for e in entries if isinstance(e, dict)}


def _description(clause_id: str, verdict: str, evidence: list[dict[str, Any]], known: dict[str, str] | None) -> str:
    """The clause page a person reads first (Markdown): what the clause says, the verdict and why, and the
    evidence: the expectation's reason, what was observed against what the model expects, where, and the
    command that replays it. Per-test pages hold the pin, the wire bytes and the broker log."""
    clause = get_clause(clause_id)
    lines = [
        f"**{verdict}**: {_MEANING.get(verdict, verdict)}.",
        "",
        f"*Clause*: {clause.summary}",
        "",
        f"*Rules*: {', '.join(clause.rules)} ({clause.kip}), level {clause.level.value}.",
    ]
    if known is not None:
        lines += ["", f"*Known failure*: {known.get('reason', '')}", "", f"*Upstream*: {known.get('link', '')}"]
    for test in evidence[:3]:
        message = str(test.get("message", ""))
        observed = next((line for line in message.splitlines() if clause_id in line), message.splitlines()[0])
        # A quote, not a code block: the line wraps instead of scrolling sideways.
        lines += ["", f"*Test* `{test['nodeid']}` ({test.get('outcome')}):", "", "> " + observed[:2000]]
        if test.get("replay"):
            lines += ["", f"*Replay*: `{test['replay']}`"]
    return "\n".join(lines)


def write_clause_results(verdicts_json: Path, results: Path, expectations: Path | None = None) -> int:
    """One Allure result per clause of `verdicts_json`; returns how many were written. With the run's
    `expectations` file a KNOWN clause's page shows the entry's reason and link."""
    data = json.loads(verdicts_json.read_text(encoding="utf-8"))
    expected = _expectations(expectations)
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
            "description": _description(
                clause_id, verdict, evidence, expected.get(clause_id) if verdict == "KNOWN" else None
            ),
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
