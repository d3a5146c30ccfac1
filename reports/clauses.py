"""Clause-centric Allure results: one result per catalogue clause with its verdict, beside the per-test
results allure-pytest writes, so the report reads clause by clause (PASS, FAIL, KNOWN, UNSUPPORTED, ...)
and not only test by test (a test checks several clauses; a KNOWN test is an xfail to pytest).

Reads the plugin's verdicts JSON (`--verdicts-json`) and the allure-pytest results already in the
results directory; writes `<uuid>-result.json` files in Allure's result format beside them. Each clause
result carries its evidence where a reader looks first: one step per test that checked the clause,
holding copies of that test's attachments (counterexample, pin, replay, wire requests and responses)
where the test showed this clause's failure. The target's log is a global attachment (reports.allure).
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

from conformance.judging.results import RunResults, TestResult, read_results
from conformance.judging.verdicts import (
    ALLURE_SEVERITY,
    ALLURE_STATUS,
    DEPARTS,
    MEANING,
    NOT_APPLICABLE_PREFIX,
    UNSUPPORTED_PREFIX,
    Verdict,
)
from models.clauses import get_clause, kip_url
from reports.known_issues import (
    CLAUSES_SUITE,
    KNOWN_ISSUE_VERDICTS,
    allure_key,
    mark_test_results,
    mark_verdict,
    read_result,
    verdict_line,
)

# Verdicts a test's attachments (counterexample, pin, replay, wire exchanges) are evidence of: the departures.
_WITH_EVIDENCE = DEPARTS


def _expectations(path: Path | None) -> dict[str, list[dict[str, str]]]:
    """clause -> its expectations entries (reason, link, observable(s), test), for the KNOWN clauses' pages."""
    if path is None or not Path(path).is_file():
        return {}
    import tomllib

    found: dict[str, list[dict[str, str]]] = {}
    for entry in tomllib.loads(Path(path).read_text(encoding="utf-8")).get("expected", []):
        if isinstance(entry, dict):
            found.setdefault(str(entry.get("clause")), []).append({k: str(v) for k, v in entry.items()})
    return found


def _test_results(results: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """allure-pytest's results by (fullName, name), this module's own clause results left out."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(results.glob("*-result.json")):
        data = read_result(path)
        if data is None or str(data.get("fullName", "")).startswith(f"{CLAUSES_SUITE}."):
            continue
        found[(str(data.get("fullName", "")), str(data.get("name", "")))] = data
    return found


def _evidence_step(
    test: TestResult, clause_id: str, allure_result: dict[str, Any] | None, results: Path, *, attach: bool
) -> dict[str, Any]:
    """One test's word on one clause: its verdict, the message lines about the clause and, with `attach`,
    copies of the attachments allure-pytest kept for the test (Allure shows an attachment file under one
    result only, so the clause result needs its own copy)."""
    verdict = test.verdicts.get(clause_id, Verdict.BLOCKED)
    message = _reason_lines(clause_id, verdict, test.message)
    if verdict is Verdict.BLOCKED:
        stopped = sorted(c for c, v in test.verdicts.items() if v in _STOPS)
        message = "not reached: the test stopped at " + (", ".join(stopped) or "another failure") + " first"
    if message and test.replay:
        message += f"\nreplay: {test.replay}"
    step: dict[str, Any] = {
        "name": f"{verdict.value}  {test.nodeid}",
        "status": ALLURE_STATUS[verdict],
        "start": int((test.finished_at - test.duration) * 1000),
        "stop": int(test.finished_at * 1000),
        "attachments": [_copy_attachment(a, results) for a in (allure_result or {}).get("attachments", [])]
        if attach
        else [],
    }
    if message:
        step["statusDetails"] = {"message": message}
    return step


# The verdicts at which a test stops (its other clauses are then BLOCKED): a failing check, known or not, and a
# pinned known failure that passed. NON-STRICT does not stop it.
_STOPS = frozenset({Verdict.FAIL, Verdict.KNOWN, Verdict.UNEXPECTED_PASS})


def _copy_attachment(attachment: dict[str, str], results: Path) -> dict[str, str]:
    source = results / attachment["source"]
    copy = f"{uuid.uuid4()}-attachment{source.suffix or '.txt'}"
    if source.is_file():
        shutil.copyfile(source, results / copy)
    return {**attachment, "source": copy}


def _reason_lines(clause_id: str, verdict: Verdict, message: str, most: int = 5) -> str:
    """The lines of a test's message that explain its verdict on one clause: the clause's violations, or
    for UNSUPPORTED and N/A the capability missing. Short, so that a step's attachments stay in view; the
    whole message is the "counterexample" attachment."""
    if verdict is Verdict.UNSUPPORTED:
        marker = UNSUPPORTED_PREFIX
    elif verdict is Verdict.NOT_APPLICABLE:
        marker = NOT_APPLICABLE_PREFIX
    else:
        marker = clause_id
    lines = [line for line in message.splitlines() if marker in line]
    if len(lines) > most:
        lines = [*lines[:most], f"... {len(lines) - most} more: see the counterexample attachment"]
    return "\n".join(lines)


def _description(
    clause_id: str,
    verdict: Verdict,
    tests: list[TestResult],
    evidence: list[TestResult],
    known: list[dict[str, str]],
) -> str:
    """The clause page a person reads first (Markdown): what the clause says, the verdict and why, the
    evidence (the expectations' reasons, what was observed against what the model expects, where, and the
    command that replays it) and which tests checked it; each test is a step below with its attachments."""
    clause = get_clause(clause_id)
    lines = [
        f"**{verdict.value}**: {MEANING[verdict]}.",
        "",
        f"*Clause*: {clause.summary}",
        "",
        f"*Rules*: {', '.join(clause.rules)} ({clause.kip}), level {clause.level.value}.",
    ]
    for entry in known:
        observables = entry.get("observable") or entry.get("observables")
        what = f" ({observables})" if observables else ""
        lines += ["", f"*Known failure*{what}: {entry.get('reason', '')}", "", f"*Upstream*: {entry.get('link', '')}"]
    for test in evidence[:3]:
        # Only a line that names the clause: another clause's violation quoted here would mislead.
        observed = _reason_lines(clause_id, verdict, test.message, most=1).split("\n", 1)[0]
        observed = observed or "(the message names other clauses only: the counterexample in its step below)"
        # A quote, not a code block: the line wraps instead of scrolling sideways.
        # The test's verdict on this clause, not pytest's outcome (a KNOWN test is an xfail, "skipped", to pytest).
        said = test.verdicts.get(clause_id, verdict).value
        lines += ["", f"*Test* `{test.nodeid}` ({said}):", "", "> " + observed[:2000]]
        if test.replay:
            lines += ["", f"*Replay*: `{test.replay}`"]
    if tests:
        lines += ["", "*Checked by* (one step each below; a failure's step holds its attachments):", ""]
        lines += [f"- `{t.nodeid}`: {v.value if (v := t.verdicts.get(clause_id)) else '?'}" for t in tests]
    else:
        lines += ["", "No test of this run checks this clause."]
    if verdict in _WITH_EVIDENCE:
        lines += ["", "*Target log*: Global Attachments, on this Allure report's overview page."]
    return "\n".join(lines)


def _message(clause_id: str, verdict: Verdict, evidence: list[TestResult]) -> str:
    """The first lines a reader sees: the verdict, and for a failure the first counterexample line."""
    head = verdict_line(verdict, clause_id)
    for test in evidence:
        first = _reason_lines(clause_id, verdict, test.message, most=1).split("\n", 1)[0]
        if first:
            return f"{head}\n{first}"
    return head


def clause_result(
    clause_id: str,
    verdict: Verdict,
    run: RunResults,
    test_results: dict[tuple[str, str], dict[str, Any]],
    results: Path,
    known: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """The Allure result of one clause (see the module doc); attachment copies go into `results`; `known`
    is the clause's expectations entries when the verdict is KNOWN."""
    clause = get_clause(clause_id)
    word = verdict.value
    tests = [t for t in run.tests if clause_id in t.clauses]
    evidence = [t for t in tests if t.verdicts.get(clause_id) is verdict and t.message]
    # The tests that decided the verdict first, so the counterexample is the first step a reader opens.
    ordered = sorted(tests, key=lambda t: t.verdicts.get(clause_id) is not verdict)
    # Attachments only where the test's verdict on this clause is this clause's failure: a BLOCKED or
    # passing test's attachments are about other clauses.
    steps = [
        _evidence_step(
            t,
            clause_id,
            test_results.get(allure_key(t.nodeid)),
            results,
            attach=verdict in _WITH_EVIDENCE and t.verdicts.get(clause_id) is verdict,
        )
        for t in ordered
    ]
    starts = [s["start"] for s in steps]
    stops = [s["stop"] for s in steps]
    result: dict[str, Any] = {
        "uuid": str(uuid.uuid4()),
        "historyId": f"clause:{clause_id}",
        "testCaseId": f"clause:{clause_id}",
        "fullName": f"{CLAUSES_SUITE}.{clause_id}",
        "name": f"{word}  {clause_id}: {clause.summary}",
        "status": ALLURE_STATUS[verdict],
        "description": _description(clause_id, verdict, tests, evidence, known or []),
        "steps": steps,
        "labels": [
            {"name": "parentSuite", "value": CLAUSES_SUITE},
            {"name": "suite", "value": clause.area.value},
            {"name": "epic", "value": clause.kip},
            {"name": "story", "value": clause_id},
            {"name": "severity", "value": ALLURE_SEVERITY[clause.level]},
            {"name": "target", "value": run.target},
            {"name": "profile", "value": run.profile},
        ],
        "links": [{"type": "link", "name": clause.kip, "url": kip_url(clause.kip)}],
        # The span of the tests that checked the clause; a clause no test checked has no time.
        "start": min(starts, default=0),
        "stop": max(stops, default=0),
    }
    for entry in known or []:
        if entry.get("link", "").startswith(("http://", "https://")):
            result["links"].append({"type": "issue", "name": "known failure upstream", "url": entry["link"]})
    if verdict is not Verdict.PASS:  # a passed result shows its message as an error block: the description says it
        # No trace: Allure shows it as one more step, repeating the evidence steps above it in full.
        result["statusDetails"] = {"message": _message(clause_id, verdict, evidence)}
    return mark_verdict(result, verdict, clause_id if verdict in KNOWN_ISSUE_VERDICTS else None)


def write_clause_results(verdicts_json: Path, results: Path, expectations: Path | None = None) -> int:
    """One Allure result per clause of `verdicts_json`; returns how many were written. First puts each test's
    verdict on allure-pytest's result for it (reports.known_issues.mark_test_results: a KNOWN test is skipped with
    Allure's known flag and its known departures as its message). With the run's `expectations` file a KNOWN
    clause's page shows its entries' reasons and links."""
    run = read_results(verdicts_json)
    expected = _expectations(expectations)
    results.mkdir(parents=True, exist_ok=True)
    mark_test_results(results, run)
    test_results = _test_results(results)
    written = 0
    for clause_id, verdict in run.clauses.items():
        known = expected.get(clause_id) if verdict is Verdict.KNOWN else None
        result = clause_result(clause_id, verdict, run, test_results, results, known)
        (results / f"{result['uuid']}-result.json").write_text(json.dumps(result), encoding="utf-8")
        written += 1
    return written
