"""A verdict on an Allure result, and what Allure 3 makes of it: the verdict label the report's tree groups by,
each test's verdict put on the result allure-pytest wrote for it, a departure that does not fail the run (KNOWN,
NON-STRICT) shown as "skipped" with Allure's `known` flag and a label naming the clause it is a known departure of
(Allure 3 counts every "failed" result as failed in a report's header, however it is resolved: docs/report-counts.md),
and the quality gate that counts the clause verdicts failing the run and the run's own errors. Verdict words and
their Allure status come from conformance.judging.verdicts; nothing here runs Allure (reports.allure does).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conformance.judging.harness import HARNESS_ERROR_PREFIX
from conformance.judging.results import RunResults
from conformance.judging.verdicts import ALLURE_STATUS, DEPARTS, FAILS_RUN, MEANING, TRIAGE_ORDER, Verdict

CLAUSES_SUITE = "clauses"  # the parentSuite of the clause results (reports.clauses)

# The label the report's tree groups results by ("01 FAIL"), and the label naming the clause a known departure is of.
VERDICT_LABEL = "verdict"
KNOWN_ISSUE_LABEL = "known_issue"
# The label of the test during which the target was lost: its clauses are BLOCKED, and yet the run fails.
TARGET_LOST_LABEL = "target_lost"
# The label of a test the harness broke in (a bug of the suite): its clauses are BLOCKED, and yet the run fails.
HARNESS_ERROR_LABEL = "harness_error"
# The run's errors outside any test (the target lost), shown as Allure's global errors on the first page.
TARGET_LOST_GLOBALS = "target-lost-globals.json"
_VERDICT_WORDS = frozenset(v.value for v in Verdict)
# Departures that do not fail the run (KNOWN, NON-STRICT): "skipped" with Allure's `known` flag (ALLURE_STATUS), so
# that a report's header does not count them as failed.
KNOWN_ISSUE_VERDICTS = DEPARTS - FAILS_RUN
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
    """The first line of a result's message: the verdict and what it means; a known departure names its clause, so
    that the report's categories tell it from a new failure of the same test by its message alone."""
    if verdict in KNOWN_ISSUE_VERDICTS and issue:
        return f"{verdict.value} ({issue}): {MEANING[verdict]}"
    return f"{verdict.value}: {MEANING[verdict]}"


def verdict_of_test(verdicts: Iterable[Verdict]) -> Verdict | None:
    """The verdict a test's result shows, of its clauses' verdicts (None for none)."""
    seen = set(verdicts)
    return next((v for v in _TEST_ORDER if v in seen), None)


def mark_verdict(result: dict[str, Any], verdict: Verdict, issue: str | None = None) -> dict[str, Any]:
    """Put `verdict` on an Allure result, in place: the verdict label the tree groups by and a tag; a departure that
    does not fail the run (KNOWN, NON-STRICT) becomes "skipped" with the result format's `known` flag (Allure shows
    it on the result's page) and a label naming `issue`, the clause it is a known departure of. The message's first
    line is the caller's (verdict_line)."""
    labels = [
        label
        for label in result.get("labels", [])
        if label.get("name") not in (VERDICT_LABEL, KNOWN_ISSUE_LABEL)
        and not (label.get("name") == "tag" and label.get("value") in _VERDICT_WORDS)
    ]
    labels += [{"name": VERDICT_LABEL, "value": verdict_group(verdict)}, {"name": "tag", "value": verdict.value}]
    if verdict in KNOWN_ISSUE_VERDICTS:
        result["status"] = ALLURE_STATUS[verdict]
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
    `results`; returns how many results changed. A KNOWN test (an xfail to pytest) stays "skipped" with Allure's
    `known` flag and its known departures' lines as its message (as does a test whose only departure is NON-STRICT,
    which pytest passed), a BLOCKED one is "broken"; the other statuses are pytest's own. A target lost during the
    run is a global error of the report; the test it was lost in, and a test the harness broke in, are labelled so
    that the quality gate counts them (the run fails on them, though their clauses are only BLOCKED)."""
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
            lost = (test.target_lost.strip().splitlines() or ["the target was lost"])[0] if test.target_lost else ""
            broke = test.message.splitlines()[0] if test.message.startswith(HARNESS_ERROR_PREFIX) else ""
            run_errors = {TARGET_LOST_LABEL: lost, HARNESS_ERROR_LABEL: broke}
            if lost or broke:
                # The test ended in an error of the run, whatever its clauses say: broken, and without the known flag,
                # which Allure would take as an accepted failure and leave out of the quality gate.
                result["status"] = "broken"
                result.get("statusDetails", {}).pop("known", None)
            result["labels"] = [
                *(label for label in result["labels"] if label.get("name") not in run_errors),
                *({"name": name, "value": value[:200]} for name, value in run_errors.items() if value),
            ]
            path.write_text(json.dumps(result), encoding="utf-8")
            changed += 1
    if run.target_lost:
        errors = [{"message": f"TARGET LOST: {lost}"} for lost in run.target_lost]
        (Path(results) / TARGET_LOST_GLOBALS).write_text(json.dumps({"errors": errors}), encoding="utf-8")
    return changed


# --- the quality gate -------------------------------------------------------------------------------


# The quality gate (`allure quality-gate`) counts what fails the run, as the exit code does, in two rules of its own
# (Allure's maxFailures says "failed tests" of whatever it counts): the clause verdicts that fail the run (a failed or
# broken result whose verdict label is not one of `notNew`, or that has none: an error outside any verdict), and the
# run's own errors, which leave their clauses BLOCKED: a pytest test (allure-pytest labels it framework=pytest) the
# target was lost in or the harness broke in, or one that failed without any verdict. A pytest test's own FAIL is
# not counted again beside its clauses' (a gate over both said "160 failed tests" for 103 clauses and 57 tests).
_QUALITY_GATE = """\
const notNew = new Set(%(not_new)s);
const label = (tr, name) => (tr.labels ?? []).find((l) => l.name === name)?.value;
const verdictOf = (tr) => (label(tr, "%(verdict)s") ?? "").replace(/^\\d+ /, "");
const isTest = (tr) => label(tr, "framework") === "pytest";
const failsRun = (tr) => !isTest(tr) && !notNew.has(verdictOf(tr));
const runErrorLabels = %(errors)s;
const runError = (tr) => isTest(tr) && (verdictOf(tr) === "" || runErrorLabels.some((n) => label(tr, n) !== undefined));
const counted = (name, what) => ({
  rule: name,
  message: ({ actual, expected }) => `${actual} ${what}; allowed: ${expected}`,
  successMessage: ({ actual }) => `${actual} ${what}`,
  validate: async ({ trs, expected, state }) => {
    const failed = trs.filter((tr) => tr.status === "failed" || tr.status === "broken").map((tr) => tr.id);
    const actual = (Number(state.getResult()) || 0) + failed.length;
    state.setResult(actual, failed);
    return { success: actual <= expected, actual, testResults: failed };
  },
});
config.qualityGate = {
  use: [
    counted("clauseFailures", "clause verdicts fail the run (%(fails)s)"),
    counted("runErrors", "pytest tests ended in an error of the run itself (%(run_errors)s)"),
  ],
  rules: [
    { id: "clauses", clauseFailures: 0, filter: failsRun },
    { id: "run", runErrors: 0, filter: runError },
  ],
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
    gate = {
        "not_new": json.dumps([v.value for v in TRIAGE_ORDER if v not in FAILS_RUN]),
        "verdict": VERDICT_LABEL,
        "errors": json.dumps([TARGET_LOST_LABEL, HARNESS_ERROR_LABEL]),
        "fails": ", ".join(v.value for v in TRIAGE_ORDER if v in FAILS_RUN),
        "run_errors": "the target lost, a harness error, an error outside any verdict",
    }
    return (
        "// The Allure 3 config of a kafka-timestamp-conformance report (reports/allure.py).\n"
        f"const config = {json.dumps(config, indent=2)};\n"
        + _QUALITY_GATE % gate
        + _SPLIT % CLAUSES_SUITE
        + "export default config;\n"
    )
