"""A run's verdicts as JUnit XML, the format CI test views read (GitLab, Jenkins, GitHub's test reporters).

One test case per clause verdict (classname the clause's area, name the clause id): PASS passes; FAIL and
UNEXPECTED-PASS are failures with the evidence (observed against expected, the test, the replay command); KNOWN,
NON-STRICT, UNSUPPORTED and N/A are skipped with their reason, as they do not fail a run; BLOCKED is an error when
the harness broke or the target was lost, else skipped (another clause's failure stopped its tests, and that
failure is the red case); a campaign's TIMEOUT and CRASHED are errors. A second suite has one case per
expectations entry (MATCHED passes, STALE and NOT-EXERCISED are skipped with the advice, UNEXPECTED-PASS fails),
and a third one case, the run's verdict line, which fails exactly when the run's exit code is not 0: whatever made
the run red (a test that broke outside any clause included), the test view is red too.

Written with the standard library's ElementTree: the format is a handful of elements, and its serializer does the
escaping; characters XML 1.0 cannot hold (ANSI escapes in a message) are dropped first.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from conformance.judging.expectations import Expectation
from conformance.judging.harness import HARNESS_ERROR_PREFIX
from conformance.judging.headline import headline_of
from conformance.judging.results import UNKNOWN_VERSION, RunResults
from conformance.judging.verdicts import (
    MEANING,
    NOT_APPLICABLE_PREFIX,
    UNSUPPORTED_PREFIX,
    EntryStatus,
    Verdict,
)
from models.clauses import get_clause

V = Verdict
PASSED, FAILURE, ERROR, SKIPPED = "passed", "failure", "error", "skipped"

# A clause verdict's JUnit outcome; BLOCKED is decided by why (`clause_outcome`).
OUTCOME: dict[Verdict, str] = {
    V.PASS: PASSED,
    V.FAIL: FAILURE,
    V.UNEXPECTED_PASS: FAILURE,
    V.KNOWN: SKIPPED,
    V.NON_STRICT: SKIPPED,
    V.UNSUPPORTED: SKIPPED,
    V.NOT_APPLICABLE: SKIPPED,
    V.BLOCKED: SKIPPED,
    V.TIMEOUT: ERROR,
    V.CRASHED: ERROR,
}
ENTRY_OUTCOME: dict[EntryStatus, str] = {
    EntryStatus.MATCHED: PASSED,
    EntryStatus.STALE: SKIPPED,
    EntryStatus.NOT_EXERCISED: SKIPPED,
    EntryStatus.UNEXPECTED_PASS: FAILURE,
}
# The verdicts at which a test stops, so that its other clauses are BLOCKED.
_STOPS = frozenset({V.FAIL, V.KNOWN, V.UNEXPECTED_PASS})
# XML 1.0 holds tab, newline, carriage return and the printable planes; nothing else, not even escaped.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_MESSAGE_MAX, _TEXT_MAX = 1000, 20000


class JunitError(ValueError):
    """The JUnit file cannot be written: the message names the path, the cause and the fix."""


def _clean(text: str, most: int) -> str:
    text = _NOT_XML.sub("", text)
    return text if len(text) <= most else text[: most - 3] + "..."


def _area(clause: str) -> str:
    try:
        return get_clause(clause).area.value
    except KeyError:
        return "other"


def _lines_naming(message: str, marker: str, most: int = 5) -> list[str]:
    return [line.strip() for line in message.splitlines() if marker in line][:most]


def _entry_name(entry: int, covers: str) -> str:
    """`entry 3: LO.first-ge-target list-offsets.offset ...` (Expectation.describe names its entry already)."""
    return covers if covers.startswith(f"entry {entry}") else f"entry {entry}: {covers}"


def clause_outcome(results: RunResults, clause: str, verdict: Verdict) -> str:
    """The JUnit outcome of one clause's verdict in `results`."""
    if verdict is V.BLOCKED and (results.target_lost or _harness_broke(results, clause)):
        return ERROR
    return OUTCOME[verdict]


def _harness_broke(results: RunResults, clause: str) -> bool:
    return any(t.message.startswith(HARNESS_ERROR_PREFIX) for t in results.tests_of(clause))


def _reason(results: RunResults, clause: str, verdict: Verdict, entries: dict[int, Expectation]) -> tuple[str, str]:
    """(message, text) of a clause's case that is not a pass: the first line a CI view shows, and the evidence."""
    tests = results.tests_of(clause)
    text: list[str] = []
    message = f"{verdict.value}: {MEANING[verdict]}"
    if verdict in (V.FAIL, V.UNEXPECTED_PASS, V.NON_STRICT, V.KNOWN):
        for test in tests:
            if test.verdicts.get(clause) is not verdict:
                continue
            records = [v for v in test.violations if v.clause == clause]
            text.append(f"test {test.nodeid}: {test.verdicts[clause].value}")
            for record in records:
                text.append(f"  {record.observable}: observed {record.observed}, expected {record.expected}")
                if record.context:
                    text.append(f"    where: {record.context}")
            if not records:
                text += [f"  {line}" for line in _lines_naming(test.message, clause)]
            if test.replay:
                text.append(f"  replay: {test.replay}")
        first = next((v for t in tests for v in t.violations if v.clause == clause), None)
        if verdict in (V.FAIL, V.NON_STRICT) and first is not None:
            message = f"{verdict.value}: {first.observable}: observed {first.observed}, expected {first.expected}"
    if verdict in (V.KNOWN, V.UNEXPECTED_PASS):
        wanted = EntryStatus.MATCHED if verdict is V.KNOWN else EntryStatus.UNEXPECTED_PASS
        for outcome in results.expectations:
            if outcome.clause == clause and outcome.status is wanted:
                entry = entries.get(outcome.entry)
                why = f": {entry.reason}" if entry is not None and entry.reason else ""
                link = f" ({entry.link})" if entry is not None and entry.link else ""
                said = f"expectations {_entry_name(outcome.entry, outcome.covers)}{why}{link}"
                text.insert(0, said)
                if verdict is V.KNOWN and message.startswith("KNOWN: a known"):
                    message = f"KNOWN: covered by {said}"
    elif verdict in (V.UNSUPPORTED, V.NOT_APPLICABLE):
        marker = UNSUPPORTED_PREFIX if verdict is V.UNSUPPORTED else NOT_APPLICABLE_PREFIX
        said = next((line for t in tests for line in _lines_naming(t.message, marker, 1)), "")
        if said:
            message = said
    elif verdict is V.BLOCKED:
        if results.target_lost:
            message = f"BLOCKED: the target was lost: {results.target_lost[0]}"
        elif _harness_broke(results, clause):
            message = "BLOCKED: the harness broke in a test of this clause (a bug of the suite: report it)"
        stopped = sorted({c for t in tests for c, v in t.verdicts.items() if v in _STOPS and c != clause})
        if stopped:
            text.append("its tests stopped first at: " + ", ".join(stopped))
        text += [f"test {t.nodeid}: {t.message.splitlines()[0]}" for t in tests if t.message][:5]
    return message, "\n".join(text)


def _case(parent: ET.Element, classname: str, name: str, outcome: str, message: str = "", text: str = "",
          kind: str = "") -> None:  # fmt: skip
    case = ET.SubElement(parent, "testcase", classname=classname, name=name)
    if outcome == PASSED:
        if text:
            ET.SubElement(case, "system-out").text = _clean(text, _TEXT_MAX)
        return
    child = ET.SubElement(case, outcome, message=_clean(message, _MESSAGE_MAX))
    if outcome != SKIPPED:
        child.set("type", kind)
    if text:
        child.text = _clean(text, _TEXT_MAX)


def _suite(root: ET.Element, name: str) -> ET.Element:
    return ET.SubElement(root, "testsuite", name=name)


def _count(root: ET.Element) -> None:
    """The tests / failures / errors / skipped attributes of each suite and of the whole, from its cases."""
    total: Counter[str] = Counter()
    for suite in root.iter("testsuite"):
        tally: Counter[str] = Counter()
        for case in suite.iter("testcase"):
            tally["tests"] += 1
            for outcome in (FAILURE, ERROR, SKIPPED):
                if case.find(outcome) is not None:
                    tally[outcome] += 1
        for key, attribute in (("tests", "tests"), (FAILURE, "failures"), (ERROR, "errors"), (SKIPPED, "skipped")):
            suite.set(attribute, str(tally[key]))
        total += tally
    for key, attribute in (("tests", "tests"), (FAILURE, "failures"), (ERROR, "errors"), (SKIPPED, "skipped")):
        root.set(attribute, str(total[key]))


def junit_tree(
    results: RunResults, *, exit_code: int | None = None, expectations: Iterable[Expectation] = (), note: str = ""
) -> ET.ElementTree:
    """The JUnit XML of a run. `exit_code`: the run's (None: what its verdict line says, 1 or 0);
    `expectations`: the entries of its expectations file, whose reasons and links the KNOWN cases quote; `note`:
    what the run's verdict line adds (a regression against a baseline)."""
    headline = headline_of(results)
    code = exit_code if exit_code is not None else int(headline.failed)
    entries = {e.index: e for e in expectations}
    root = ET.Element("testsuites", name="kafka-conformance")
    name = f"{results.target} ({results.profile})"
    clauses = _suite(root, f"clauses: {name}")
    properties = ET.SubElement(clauses, "properties")
    settings = {
        "target": results.target,
        "implementation_version": results.implementation_version or UNKNOWN_VERSION,
        "profile": results.profile,
        "hypothesis_profile": results.hypothesis_profile,
        "seed": "" if results.seed is None else str(results.seed),
        "verdict": headline.with_exit(code) + note,
    }
    for key, value in settings.items():
        ET.SubElement(properties, "property", name=key, value=_clean(value, _MESSAGE_MAX))
    clauses.set("time", f"{sum(t.duration for t in results.tests):.3f}")
    for clause, verdict in sorted(results.clauses.items()):
        outcome = clause_outcome(results, clause, verdict)
        if outcome == PASSED:
            checked = [t.nodeid for t in results.tests_of(clause)]
            _case(clauses, _area(clause), clause, PASSED, text="checked by: " + ", ".join(checked) if checked else "")
            continue
        message, text = _reason(results, clause, verdict, entries)
        _case(clauses, _area(clause), clause, outcome, message, text, verdict.value)
    if results.expectations:
        suite = _suite(root, f"expectations: {name}")
        for outcome in results.expectations:
            advice = {
                EntryStatus.STALE: "STALE: its clause and observable were checked and nothing it describes was "
                "observed; this does not fail the run: check whether the target was fixed, then remove the entry",
                EntryStatus.NOT_EXERCISED: "NOT-EXERCISED: no check of its clause and observable ran in this run",
                EntryStatus.UNEXPECTED_PASS: "UNEXPECTED-PASS: its pinned example ran without the failure it "
                "describes: the expectation is stale",
            }.get(outcome.status, "")
            entry = entries.get(outcome.entry)
            text = f"{outcome.covers}" + (f"\nreason: {entry.reason}" if entry is not None and entry.reason else "")
            _case(suite, "expectations", _entry_name(outcome.entry, outcome.covers), ENTRY_OUTCOME[outcome.status],
                  advice, text, outcome.status.value)  # fmt: skip
    run = _suite(root, f"run: {name}")
    line = headline.with_exit(code) + note
    _case(run, "run", "verdict", PASSED if code == 0 else FAILURE, line, line, "exit code")
    _count(root)
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(
    path: Path,
    results: RunResults,
    *,
    exit_code: int | None = None,
    expectations: Iterable[Expectation] = (),
    note: str = "",
) -> int:
    """Write the JUnit XML of `results` to `path` (its folder made if need be); returns how many test cases."""
    tree = junit_tree(results, exit_code=exit_code, expectations=expectations, note=note)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tree.write(path, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        cause = exc.strerror or exc
        raise JunitError(f"cannot write the JUnit file {path} ({cause}): pass a path you can write") from None
    return len(tree.getroot().findall("./testsuite/testcase"))
