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

from conformance.checks import UNSUPPORTED_PREFIX
from models.clauses import Level, get_clause, kip_url

# Allure has five statuses; the verdict itself is the result's first word, the `verdict` label (the
# report's tree groups by it) and a tag.
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
# The order a reader triages in: what needs action first, what passed last. Group labels carry it as a
# number because the report sorts groups by name.
VERDICT_ORDER = ("FAIL", "UNEXPECTED-PASS", "BLOCKED", "KNOWN", "NON-STRICT", "UNSUPPORTED", "N/A", "PASS")
# Verdicts a test's attachments (counterexample, pin, replay, wire exchanges) are evidence of.
_WITH_EVIDENCE = {"FAIL", "UNEXPECTED-PASS", "KNOWN", "NON-STRICT"}
CLAUSES_SUITE = "clauses"


def verdict_group(verdict: str) -> str:
    """The tree group of a verdict, e.g. "1 FAIL": numbered so that groups sort in triage order."""
    rank = VERDICT_ORDER.index(verdict) + 1 if verdict in VERDICT_ORDER else len(VERDICT_ORDER) + 1
    return f"{rank} {verdict}"


def allure_key(nodeid: str) -> tuple[str, str]:
    """(fullName, name) as allure-pytest writes them for a pytest node ID, e.g.
    "suites/test_v.py::test_x[3]" -> ("suites.test_v#test_x", "test_x[3]")."""
    path, *scopes = nodeid.split("::")
    name = scopes[-1] if scopes else path
    module = path[:-3] if path.endswith(".py") else path
    dotted = ".".join([module.replace("/", "."), *scopes[:-1]])
    return f"{dotted}#{name.split('[', 1)[0]}", name


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # a half-written or foreign file is not evidence; skip it
        return None
    return data if isinstance(data, dict) else None


def _expectations(path: Path | None) -> dict[str, dict[str, str]]:
    """clause -> its expectations entry (reason, link, test), for the KNOWN clauses' pages."""
    if path is None or not Path(path).is_file():
        return {}
    import tomllib

    entries = tomllib.loads(Path(path).read_text(encoding="utf-8")).get("expected", [])
    return {str(e.get("clause")): {k: str(v) for k, v in e.items()} for e in entries if isinstance(e, dict)}


def _test_results(results: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """allure-pytest's results by (fullName, name), this module's own clause results left out."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(results.glob("*-result.json")):
        data = _read_json(path)
        if data is None or str(data.get("fullName", "")).startswith(f"{CLAUSES_SUITE}."):
            continue
        found[(str(data.get("fullName", "")), str(data.get("name", "")))] = data
    return found


def _evidence_step(
    test: dict[str, Any], clause_id: str, allure_result: dict[str, Any] | None, results: Path, *, attach: bool
) -> dict[str, Any]:
    """One test's word on one clause: its verdict, the message lines about the clause and, with `attach`,
    copies of the attachments allure-pytest kept for the test (Allure shows an attachment file under one
    result only, so the clause result needs its own copy)."""
    verdict = test.get("verdicts", {}).get(clause_id, "BLOCKED")
    message = _reason_lines(clause_id, verdict, str(test.get("message") or ""))
    if verdict == "BLOCKED":
        stopped = sorted(c for c, v in test.get("verdicts", {}).items() if v in ("FAIL", "KNOWN", "UNEXPECTED-PASS"))
        message = "not reached: the test stopped at " + (", ".join(stopped) or "another failure") + " first"
    if message and test.get("replay"):
        message += f"\nreplay: {test['replay']}"
    finished = float(test.get("finished_at", 0))
    step: dict[str, Any] = {
        "name": f"{verdict}  {test['nodeid']}",
        "status": _STATUS.get(verdict, "unknown"),
        "start": int((finished - float(test.get("duration", 0))) * 1000),
        "stop": int(finished * 1000),
        "attachments": [_copy_attachment(a, results) for a in (allure_result or {}).get("attachments", [])]
        if attach
        else [],
    }
    if message:
        step["statusDetails"] = {"message": message}
    return step


def _copy_attachment(attachment: dict[str, str], results: Path) -> dict[str, str]:
    source = results / attachment["source"]
    copy = f"{uuid.uuid4()}-attachment{source.suffix or '.txt'}"
    if source.is_file():
        shutil.copyfile(source, results / copy)
    return {**attachment, "source": copy}


def _reason_lines(clause_id: str, verdict: str, message: str, most: int = 5) -> str:
    """The lines of a test's message that explain its verdict on one clause: the clause's violations, or
    for UNSUPPORTED and N/A the capability missing. Short, so that a step's attachments stay in view; the
    whole message is the "counterexample" attachment."""
    marker = UNSUPPORTED_PREFIX if verdict in ("UNSUPPORTED", "N/A") else clause_id
    lines = [line for line in message.splitlines() if marker in line]
    if len(lines) > most:
        lines = [*lines[:most], f"... {len(lines) - most} more: see the counterexample attachment"]
    return "\n".join(lines)


def _description(
    clause_id: str,
    verdict: str,
    tests: list[dict[str, Any]],
    evidence: list[dict[str, Any]],
    known: dict[str, str] | None,
) -> str:
    """The clause page a person reads first (Markdown): what the clause says, the verdict and why, the
    evidence (the expectation's reason, what was observed against what the model expects, where, and the
    command that replays it) and which tests checked it; each test is a step below with its attachments."""
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
        # Only a line that names the clause: another clause's violation quoted here would mislead.
        observed = _reason_lines(clause_id, verdict, str(test.get("message", "")), most=1).split("\n", 1)[0]
        observed = observed or "(the message names other clauses only: the counterexample in its step below)"
        # A quote, not a code block: the line wraps instead of scrolling sideways.
        lines += ["", f"*Test* `{test['nodeid']}` ({test.get('outcome')}):", "", "> " + observed[:2000]]
        if test.get("replay"):
            lines += ["", f"*Replay*: `{test['replay']}`"]
    if tests:
        lines += ["", "*Checked by* (one step each below; a failure's step holds its attachments):", ""]
        lines += [f"- `{t['nodeid']}`: {t.get('verdicts', {}).get(clause_id, '?')}" for t in tests]
    else:
        lines += ["", "No test of this run checks this clause."]
    if verdict in _WITH_EVIDENCE:
        lines += ["", "*Target log*: Global Attachments, on the report's first page."]
    return "\n".join(lines)


def _message(clause_id: str, verdict: str, evidence: list[dict[str, Any]]) -> str:
    """The first lines a reader sees: the verdict, and for a failure the first counterexample line."""
    head = f"{verdict}: {_MEANING.get(verdict, verdict)}"
    for test in evidence:
        first = _reason_lines(clause_id, verdict, str(test.get("message", "")), most=1).split("\n", 1)[0]
        if first:
            return f"{head}\n{first}"
    return head


def clause_result(
    clause_id: str,
    verdict: str,
    data: dict[str, Any],
    test_results: dict[tuple[str, str], dict[str, Any]],
    results: Path,
    known: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The Allure result of one clause (see the module doc); attachment copies go into `results`; `known`
    is the clause's expectations entry when the verdict is KNOWN."""
    clause = get_clause(clause_id)
    tests: list[dict[str, Any]] = [t for t in data.get("tests", []) if clause_id in t.get("clauses", [])]
    evidence = [t for t in tests if t.get("verdicts", {}).get(clause_id) == verdict and t.get("message")]
    # The tests that decided the verdict first, so the counterexample is the first step a reader opens.
    ordered = sorted(tests, key=lambda t: t.get("verdicts", {}).get(clause_id) != verdict)
    # Attachments only where the test's verdict on this clause is this clause's failure: a BLOCKED or
    # passing test's attachments are about other clauses.
    steps = [
        _evidence_step(
            t,
            clause_id,
            test_results.get(allure_key(t["nodeid"])),
            results,
            attach=verdict in _WITH_EVIDENCE and t.get("verdicts", {}).get(clause_id) == verdict,
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
        "name": f"{verdict}  {clause_id}: {clause.summary}",
        "status": _STATUS.get(verdict, "unknown"),
        "description": _description(clause_id, verdict, tests, evidence, known),
        "steps": steps,
        "labels": [
            {"name": "parentSuite", "value": CLAUSES_SUITE},
            {"name": "verdict", "value": verdict_group(verdict)},
            {"name": "suite", "value": clause.area.value},
            {"name": "epic", "value": clause.kip},
            {"name": "story", "value": clause_id},
            {"name": "severity", "value": _SEVERITY[clause.level]},
            {"name": "tag", "value": verdict},
            {"name": "target", "value": str(data.get("target"))},
            {"name": "profile", "value": str(data.get("profile"))},
        ],
        "links": [{"type": "link", "name": clause.kip, "url": kip_url(clause.kip)}],
        # The span of the tests that checked the clause; a clause no test checked has no time.
        "start": min(starts, default=0),
        "stop": max(stops, default=0),
    }
    if known is not None and known.get("link", "").startswith(("http://", "https://")):
        result["links"].append({"type": "issue", "name": "known failure upstream", "url": known["link"]})
    if verdict != "PASS":  # a passed result shows its message as an error block: the description says it
        # No trace: Allure shows it as one more step, repeating the evidence steps above it in full.
        result["statusDetails"] = {"message": _message(clause_id, verdict, evidence)}
    return result


def write_clause_results(verdicts_json: Path, results: Path, expectations: Path | None = None) -> int:
    """One Allure result per clause of `verdicts_json`; returns how many were written. With the run's
    `expectations` file a KNOWN clause's page shows the entry's reason and link."""
    data = json.loads(verdicts_json.read_text(encoding="utf-8"))
    expected = _expectations(expectations)
    results.mkdir(parents=True, exist_ok=True)
    test_results = _test_results(results)
    written = 0
    for clause_id, verdict in data.get("clauses", {}).items():
        known = expected.get(clause_id) if verdict == "KNOWN" else None
        result = clause_result(clause_id, verdict, data, test_results, results, known)
        (results / f"{result['uuid']}-result.json").write_text(json.dumps(result), encoding="utf-8")
        written += 1
    return written
