"""A verdict on an Allure result, and what Allure 3 makes of it: the verdict label the report's tree groups by,
each test's verdict put on the result allure-pytest wrote for it (allure-pytest shows a KNOWN test as an xfail,
"skipped"), a known failure (KNOWN, NON-STRICT) shown as a failure marked as a known issue of its clause (Allure 3
resolutions: rules matched by test case ID and message, listed in the known-issues file Allure writes), and the
quality gate that fails on new failures only (ARCHITECTURE.md "Reports"). Verdict words and their Allure status
come from conformance.judging.verdicts; nothing here runs Allure (reports.allure does).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conformance.judging.results import RunResults
from conformance.judging.verdicts import ALLURE_STATUS, FAILS_RUN, MEANING, TRIAGE_ORDER, Verdict
from models.clauses import get_clause, kip_url

CLAUSES_SUITE = "clauses"  # the parentSuite of the clause results (reports.clauses)

# The label the report's tree groups results by ("01 FAIL"), and the label naming the clause a known failure is a
# known issue of.
VERDICT_LABEL = "verdict"
KNOWN_ISSUE_LABEL = "known_issue"
# The label of the test during which the target was lost: its clauses are BLOCKED, and yet the run fails.
TARGET_LOST_LABEL = "target_lost"
# The run's errors outside any test (the target lost), shown as Allure's global errors on the first page.
TARGET_LOST_GLOBALS = "target-lost-globals.json"
_VERDICT_WORDS = frozenset(v.value for v in Verdict)
# Failures that do not fail the run (KNOWN, NON-STRICT): "failed" in Allure and marked as a known issue, so the
# first page counts them as failures, known ones, and the quality gate leaves them out.
KNOWN_ISSUE_VERDICTS = frozenset(v for v, status in ALLURE_STATUS.items() if status == "failed" and v not in FAILS_RUN)
# Failed or broken in Allure without failing the run (the known issues and BLOCKED, whose blocking test fails on its
# own account): the quality gate does not count them.
_NOT_NEW = frozenset(v for v, status in ALLURE_STATUS.items() if status in ("failed", "broken") and v not in FAILS_RUN)
# How a known failure's message starts (verdict_line), up to the clause: "KNOWN (" or "NON-STRICT (", as a regex.
KNOWN_HEAD = "(" + "|".join(re.escape(v.value) for v in TRIAGE_ORDER if v in KNOWN_ISSUE_VERDICTS) + r") \("
# A test's own verdict among its clauses': anything new first, then a known failure (the clauses it stopped are
# BLOCKED behind it), then the rest in triage order.
_TEST_ORDER = (
    *(v for v in TRIAGE_ORDER if v in FAILS_RUN),
    *(v for v in TRIAGE_ORDER if v in KNOWN_ISSUE_VERDICTS),
    *(v for v in TRIAGE_ORDER if v not in FAILS_RUN and v not in KNOWN_ISSUE_VERDICTS),
)


def verdict_group(verdict: Verdict | str) -> str:
    """The tree group of a verdict, e.g. "01 FAIL": numbered (zero-padded: the report sorts groups by name, as
    text) so that groups sort in triage order."""
    verdict = verdict if isinstance(verdict, Verdict) else Verdict.parse(verdict)
    return f"{TRIAGE_ORDER.index(verdict) + 1:0{len(str(len(TRIAGE_ORDER)))}d} {verdict.value}"


def verdict_line(verdict: Verdict, issue: str | None = None) -> str:
    """The first line of a result's message: the verdict and what it means; a known failure names its clause, which
    is how the report's known-issue rules tell it from a new failure of the same test (known_issue_rules)."""
    if verdict in KNOWN_ISSUE_VERDICTS and issue:
        return f"{verdict.value} ({issue}): {MEANING[verdict]}"
    return f"{verdict.value}: {MEANING[verdict]}"


def verdict_of_test(verdicts: Iterable[Verdict]) -> Verdict | None:
    """The verdict a test's result shows, of its clauses' verdicts (None for none)."""
    seen = set(verdicts)
    return next((v for v in _TEST_ORDER if v in seen), None)


def mark_verdict(result: dict[str, Any], verdict: Verdict, issue: str | None = None) -> dict[str, Any]:
    """Put `verdict` on an Allure result, in place: the verdict label the tree groups by and a tag; a failure that
    does not fail the run (KNOWN, NON-STRICT) becomes "failed" with the result format's `known` flag and a label
    naming `issue`, the clause it is a known issue of (known_issue_rules makes Allure 3 show it as one). The
    message's first line is the caller's (verdict_line)."""
    labels = [
        label
        for label in result.get("labels", [])
        if label.get("name") not in (VERDICT_LABEL, KNOWN_ISSUE_LABEL)
        and not (label.get("name") == "tag" and label.get("value") in _VERDICT_WORDS)
    ]
    labels += [{"name": VERDICT_LABEL, "value": verdict_group(verdict)}, {"name": "tag", "value": verdict.value}]
    if verdict in KNOWN_ISSUE_VERDICTS:
        result["status"] = ALLURE_STATUS[verdict]
        # Allure 3 without this report's rules shows a `known` failure as an accepted one, never as skipped.
        result["statusDetails"] = {**result.get("statusDetails", {}), "known": True}
        if issue:
            labels.append({"name": KNOWN_ISSUE_LABEL, "value": issue})
    result["labels"] = labels
    return result


def allure_key(nodeid: str) -> tuple[str, str]:
    """(fullName, name) as allure-pytest writes them for a pytest node ID, e.g.
    "suites/test_v.py::test_x[3]" -> ("suites.test_v#test_x", "test_x[3]")."""
    path, *scopes = nodeid.split("::")
    name = scopes[-1] if scopes else path
    module = path[:-3] if path.endswith(".py") else path
    dotted = ".".join([module.replace("/", "."), *scopes[:-1]])
    return f"{dotted}#{name.split('[', 1)[0]}", name


def read_result(path: Path) -> dict[str, Any] | None:
    """An Allure result (or container) file, None when it is half-written or not ours: no evidence, skipped."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def mark_test_results(results: Path, run: RunResults, most: int = 5) -> int:
    """Put each test's verdict (from a run's verdicts JSON, `run`) on the result allure-pytest wrote for it in
    `results`; returns how many results changed. allure-pytest shows a KNOWN test as an xfail, "skipped", which
    reads as "not checked": it becomes a failure marked as a known issue (as does a test whose only departure is
    NON-STRICT, which pytest passed), a BLOCKED one "broken"; the other statuses are pytest's own. A target lost
    during the run is a global error of the report, and the test it was lost in counts for the quality gate."""
    by_key: dict[tuple[str, str], list[tuple[Path, dict[str, Any]]]] = {}
    for path in sorted(Path(results).glob("*-result.json")):
        result = read_result(path)
        if result is not None:
            by_key.setdefault((str(result.get("fullName", "")), str(result.get("name", ""))), []).append((path, result))
    changed = 0
    for test in run.tests:
        clause_verdicts = test.verdicts
        verdict = verdict_of_test(clause_verdicts.values())
        if verdict is None:
            continue
        known = [c for c, v in clause_verdicts.items() if v in KNOWN_ISSUE_VERDICTS]
        order = list(test.clauses)
        known.sort(key=lambda c: order.index(c) if c in order else len(order))
        issue = next((c for c in known if clause_verdicts[c] is verdict), None)
        for path, result in by_key.get(allure_key(test.nodeid), []):
            if verdict is Verdict.BLOCKED:
                result["status"] = ALLURE_STATUS[verdict]
            if verdict in KNOWN_ISSUE_VERDICTS:
                head = verdict_line(verdict, issue)
                details = result.get("statusDetails", {})
                if not str(details.get("message", "")).startswith(head):
                    # The violations of the known clauses; the whole message is the counterexample attachment.
                    lines = [ln for ln in test.message.splitlines() if any(c in ln for c in known)]
                    if len(lines) > most:
                        lines = [*lines[:most], f"... {len(lines) - most} more: see the counterexample attachment"]
                    result["statusDetails"] = {**details, "message": "\n".join([head, *lines])}
            mark_verdict(result, verdict, issue)
            if test.target_lost:
                lost = test.target_lost.strip().splitlines() or ["the target was lost"]
                result["labels"] = [
                    *(label for label in result["labels"] if label.get("name") != TARGET_LOST_LABEL),
                    {"name": TARGET_LOST_LABEL, "value": lost[0][:200]},
                ]
            path.write_text(json.dumps(result), encoding="utf-8")
            changed += 1
    if run.target_lost:
        errors = [{"message": f"TARGET LOST: {lost}"} for lost in run.target_lost]
        (Path(results) / TARGET_LOST_GLOBALS).write_text(json.dumps({"errors": errors}), encoding="utf-8")
    return changed


# --- known issues and the quality gate (Allure 3 "resolutions") ----------------------------------------


def known_issue_rules(results: Path, known_issues: Path | None = None) -> dict[str, Any]:
    """The `resolutions` of the report's Allure 3 config: one "issue" rule per clause that failed results in
    `results` name as their known issue (mark_verdict), matching them by test case ID and by their first line (a
    parametrized test's cases share one test case ID, and a new failure among them must stay new). Allure writes
    the known issues it matched, each with its results, to `known_issues` (the known-issues file)."""
    found: dict[str, set[str]] = {}
    verdicts: dict[str, set[str]] = {}
    for path in sorted(Path(results).glob("*-result.json")):
        result = read_result(path)
        if result is None or result.get("status") not in ("failed", "broken") or not result.get("testCaseId"):
            continue
        labels = {str(label.get("name")): str(label.get("value")) for label in result.get("labels", [])}
        issue = labels.get(KNOWN_ISSUE_LABEL)
        if issue:
            found.setdefault(issue, set()).add(str(result["testCaseId"]))
            verdicts.setdefault(issue, set()).add(labels.get(VERDICT_LABEL, "").partition(" ")[2])
    links: dict[str, dict[str, str]] = {}
    rules: list[dict[str, Any]] = []
    for issue in sorted(found):
        try:
            kip = get_clause(issue).kip
        except KeyError:  # a clause renamed since the run: its issue still needs a link type
            kip = issue
        # Allure wants an issue tracker URL per issue type: the KIP's page, the clause as its anchor.
        links[kip] = {"urlTemplate": kip_url(kip) + "#%s"}
        known = Verdict.KNOWN if Verdict.KNOWN.value in verdicts[issue] else Verdict.NON_STRICT
        rules.append({
            "resolution": "issue",
            "issue": {"id": issue, "type": kip},
            "testCaseId": sorted(found[issue]),
            "messageRegexp": f"^{KNOWN_HEAD}{re.escape(issue)}\\): ",
            "comment": MEANING[known],
        })  # fmt: skip
    resolutions: dict[str, Any] = {"links": links, "rules": rules}
    if known_issues is not None:
        resolutions["knownIssuesPath"] = str(known_issues)
    return resolutions


# The quality gate (`allure quality-gate`): fails on new failures only. A failed or broken result counts unless
# its verdict label says it does not fail the run; one without a verdict (an error outside any verdict) counts,
# and so does the test the target was lost in (its clauses are BLOCKED, the run fails).
_QUALITY_GATE = """\
const notNew = new Set(%s);
const label = (tr, name) => (tr.labels ?? []).find((l) => l.name === name)?.value;
const isNew = (tr) => !notNew.has((label(tr, "%s") ?? "").replace(/^\\d+ /, "")) || label(tr, "%s") !== undefined;
config.qualityGate = {
  rules: [{ id: "new-failures", maxFailures: 0, filter: isNew }],
};
"""
# A split report (reports.allure, split=True): the clause results in one report, the pytest tests in the other.
_SPLIT = """\
const isClause = (tr) => label(tr, "parentSuite") === "%s";
if (config.plugins.clauses) config.plugins.clauses.options.filter = isClause;
if (config.plugins.tests) config.plugins.tests.options.filter = (tr) => !isClause(tr);
"""


def config_module(config: dict[str, Any]) -> str:
    """The report's Allure 3 config file (allurerc.mjs): `config` plus the quality gate, whose filter is a
    function, so the file is JavaScript."""
    not_new = json.dumps([v.value for v in TRIAGE_ORDER if v in _NOT_NEW])
    return (
        "// The Allure 3 config of a kafka-timestamp-conformance report (reports/allure.py).\n"
        f"const config = {json.dumps(config, indent=2)};\n"
        + _QUALITY_GATE % (not_new, VERDICT_LABEL, TARGET_LOST_LABEL)
        + _SPLIT % CLAUSES_SUITE
        + "export default config;\n"
    )
