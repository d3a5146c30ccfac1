"""The JUnit XML of a run (reports/junit.py, `kafka-conformance junit`): one case per clause verdict with the
outcome CI views read, the expectations and the run's verdict as cases, a red picture exactly when the exit code is
not 0, and a well-formed file whatever the messages hold. Read back with junitparser, a JUnit consumer of its own."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from junitparser import JUnitXml

from conformance.cli import main
from conformance.judging.expectations import Expectation
from conformance.judging.harness import HARNESS_ERROR_PREFIX
from conformance.judging.results import ExpectationOutcome, RunResults, TestResult, ViolationRecord, write_results
from conformance.judging.verdicts import EntryStatus, Verdict
from reports.junit import ENTRY_OUTCOME, OUTCOME, junit_tree, write_junit

V = Verdict
CLAUSES = {
    "LO.first-ge-target": V.FAIL,
    "VAL.range-before-after": V.KNOWN,
    "IDX.strictly-increasing": V.UNEXPECTED_PASS,
    "LO.max-timestamp-first-record": V.PASS,
    "VAL.lat-response-time": V.NON_STRICT,
    "CNV.stored-magic": V.UNSUPPORTED,
    "CON.v1-uncompressed-own": V.NOT_APPLICABLE,
    "LO.earliest-is-log-start": V.BLOCKED,
}
EXPECTATIONS = (
    ExpectationOutcome(1, "VAL.range-before-after", ("produce.error",), None, EntryStatus.MATCHED,
                       "entry 1: VAL.range-before-after produce.error"),
    ExpectationOutcome(2, "IDX.strictly-increasing", ("list-offsets.offset",), "suites/test_a.py::test_index",
                       EntryStatus.UNEXPECTED_PASS, "entry 2: IDX.strictly-increasing list-offsets.offset"),
    ExpectationOutcome(3, "LO.first-ge-target", ("list-offsets.timestamp",), None, EntryStatus.STALE,
                       "entry 3: LO.first-ge-target list-offsets.timestamp"),
)  # fmt: skip
ENTRIES = (Expectation("VAL.range-before-after", (), "tansu accepts any timestamp", "https://example.org/1", index=1),)


def _tests() -> tuple[TestResult, ...]:
    return (
        TestResult(
            nodeid="suites/test_a.py::test_lookup",
            outcome="failed",
            clauses=("LO.first-ge-target", "LO.earliest-is-log-start", "LO.max-timestamp-first-record"),
            verdicts={
                "LO.first-ge-target": V.FAIL,
                "LO.earliest-is-log-start": V.BLOCKED,
                "LO.max-timestamp-first-record": V.PASS,
            },
            message="ClauseViolation: LO.first-ge-target ... \x1b[31mred\x1b[0m <&> \x00",
            replay="pytest suites/test_a.py::test_lookup --target tansu",
            violations=(ViolationRecord("LO.first-ge-target", "list-offsets.offset", "6", "4", "target 17 <v10>"),),
        ),
        TestResult(
            nodeid="suites/test_a.py::test_range",
            outcome="skipped",
            clauses=("VAL.range-before-after",),
            verdicts={"VAL.range-before-after": V.KNOWN},
            violations=(ViolationRecord("VAL.range-before-after", "produce.error", "0", "32", "", entry=1),),
        ),
        TestResult(
            nodeid="suites/test_a.py::test_index",
            clauses=("IDX.strictly-increasing",),
            verdicts={"IDX.strictly-increasing": V.UNEXPECTED_PASS},
            replay="pytest suites/test_a.py::test_index",
        ),
        TestResult(
            nodeid="suites/test_a.py::test_lat",
            clauses=("VAL.lat-response-time",),
            verdicts={"VAL.lat-response-time": V.NON_STRICT},
            violations=(ViolationRecord("VAL.lat-response-time", "produce.log-append-time", "-1", "17", ""),),
        ),
        TestResult(
            nodeid="suites/test_a.py::test_magic",
            outcome="skipped",
            clauses=("CNV.stored-magic",),
            verdicts={"CNV.stored-magic": V.UNSUPPORTED},
            message="UNSUPPORTED: the target cannot set message.format.version",
        ),
        TestResult(
            nodeid="suites/test_a.py::test_v1",
            outcome="skipped",
            clauses=("CON.v1-uncompressed-own",),
            verdicts={"CON.v1-uncompressed-own": V.NOT_APPLICABLE},
            message="N/A: kafka-4.0 stores no v1",
        ),
    )


def _run(clauses: dict[str, Verdict] = CLAUSES, **kwargs: object) -> RunResults:
    fields: dict[str, object] = {
        "target": "tansu",
        "implementation_version": "0.6.0",
        "profile": "kafka-4.0",
        "exit_status": 1,
        "clauses": clauses,
        "tests": _tests(),
        "expectations": EXPECTATIONS,
    }
    fields.update(kwargs)
    return RunResults(**fields)  # type: ignore[arg-type]


def _cases(root: ET.Element, suite: str) -> dict[str, ET.Element]:
    found = next(s for s in root.iter("testsuite") if s.get("name", "").startswith(suite))
    return {c.get("name", ""): c for c in found.iter("testcase")}


def _outcome(case: ET.Element) -> str:
    return next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")


def test_one_case_per_clause_with_the_outcome_of_its_verdict() -> None:
    root = junit_tree(_run(), expectations=ENTRIES).getroot()
    cases = _cases(root, "clauses")
    assert set(cases) == set(CLAUSES)
    for clause, verdict in CLAUSES.items():
        assert _outcome(cases[clause]) == OUTCOME[verdict], clause
    assert cases["LO.first-ge-target"].get("classname") == "list-offsets"
    assert cases["VAL.range-before-after"].get("classname") == "validation"
    assert set(OUTCOME) == set(Verdict)


def test_each_case_says_why() -> None:
    cases = _cases(junit_tree(_run(), expectations=ENTRIES).getroot(), "clauses")
    failure = cases["LO.first-ge-target"].find("failure")
    assert failure is not None
    assert failure.get("message") == "FAIL: list-offsets.offset: observed 6, expected 4"
    assert "where: target 17 <v10>" in (failure.text or "")
    assert "replay: pytest suites/test_a.py::test_lookup --target tansu" in (failure.text or "")
    known = cases["VAL.range-before-after"].find("skipped")
    assert known is not None and known.get("message", "").startswith("KNOWN: covered by expectations entry 1: ")
    assert "tansu accepts any timestamp (https://example.org/1)" in known.get("message", "")
    stale = cases["IDX.strictly-increasing"].find("failure")
    assert stale is not None and "entry 2: IDX.strictly-increasing" in (stale.text or "")
    unsupported = cases["CNV.stored-magic"].find("skipped")
    assert unsupported is not None
    assert unsupported.get("message") == "UNSUPPORTED: the target cannot set message.format.version"
    blocked = cases["LO.earliest-is-log-start"].find("skipped")
    assert blocked is not None and "stopped first at: LO.first-ge-target" in (blocked.text or "")
    strict = cases["VAL.lat-response-time"].find("skipped")
    assert strict is not None and "observed -1, expected 17" in strict.get("message", "")
    assert "checked by: suites/test_a.py::test_lookup" in (cases["LO.max-timestamp-first-record"].findtext("system-out")
                                                          or "")  # fmt: skip


def test_the_expectations_entries_and_the_run_are_cases_too() -> None:
    root = junit_tree(_run(), exit_code=1).getroot()
    entries = _cases(root, "expectations")
    assert [_outcome(c) for c in entries.values()] == [ENTRY_OUTCOME[e.status] for e in EXPECTATIONS]
    stale = entries["entry 3: LO.first-ge-target list-offsets.timestamp"].find("skipped")
    assert stale is not None and "does not fail the run" in stale.get("message", "")
    run = _cases(root, "run")["verdict"]
    assert _outcome(run) == "failure" and run.find("failure").get("message", "").startswith("exit 1: 2 new failures")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("run", "red"),
    [
        (
            _run({"LO.first-ge-target": V.PASS, "CNV.stored-magic": V.UNSUPPORTED}, exit_status=0, expectations=()),
            False,
        ),
        (
            _run(
                {"VAL.range-before-after": V.KNOWN, "LO.earliest-is-log-start": V.BLOCKED},
                exit_status=0,
                expectations=(EXPECTATIONS[0], EXPECTATIONS[2]),
            ),
            False,
        ),  # a STALE entry does not fail a run
        (_run({"LO.first-ge-target": V.FAIL}), True),
        # pytest failed outside any clause verdict (a fixture error): every clause passes, the run is red.
        (_run({"LO.max-timestamp-first-record": V.PASS}, exit_status=1, expectations=()), True),
        (_run({"LO.earliest-is-log-start": V.BLOCKED}, exit_status=1, target_lost=("the broker died",)), True),
    ],
    ids=["pass", "known-and-blocked", "fail", "outside-any-clause", "target-lost"],
)
def test_the_picture_is_red_exactly_when_the_exit_code_is_not_zero(run: RunResults, red: bool) -> None:
    root = junit_tree(run).getroot()
    bad = int(root.get("failures", "0")) + int(root.get("errors", "0"))
    assert (bad > 0) is red
    for code in (0, 1, 2, 130):  # the caller's exit code wins (a regression against a baseline, a stop)
        root = junit_tree(run, exit_code=code).getroot()
        assert _outcome(_cases(root, "run")["verdict"]) == ("failure" if code else "passed")


def test_blocked_is_an_error_when_the_harness_broke_or_the_target_was_lost() -> None:
    lost = _cases(junit_tree(_run(target_lost=("connection refused",))).getroot(), "clauses")
    assert lost["LO.earliest-is-log-start"].find("error") is not None
    error = lost["LO.earliest-is-log-start"].find("error")
    assert error is not None and "the target was lost: connection refused" in error.get("message", "")
    broke = TestResult(
        nodeid="suites/test_a.py::test_b",
        clauses=("LO.earliest-is-log-start",),
        verdicts={"LO.earliest-is-log-start": V.BLOCKED},
        message=f"{HARNESS_ERROR_PREFIX}KeyError",
    )
    cases = _cases(junit_tree(_run(tests=(broke,))).getroot(), "clauses")
    assert "harness broke" in cases["LO.earliest-is-log-start"].find("error").get("message", "")  # type: ignore[union-attr]
    assert _outcome(_cases(junit_tree(_run()).getroot(), "clauses")["LO.earliest-is-log-start"]) == "skipped"


def test_the_file_is_well_formed_and_a_junit_reader_agrees(tmp_path: Path) -> None:
    """Control characters (an ANSI escape, NUL) cannot be in XML 1.0 at all: they are dropped, the rest escaped."""
    path = tmp_path / "out" / "junit.xml"
    cases = write_junit(path, _run(), expectations=ENTRIES)
    root = ET.parse(path).getroot()  # well-formed, or this raises
    assert cases == len(CLAUSES) + len(EXPECTATIONS) + 1
    assert "\x1b" not in path.read_text(encoding="utf-8") and "&lt;&amp;&gt;" in path.read_text(encoding="utf-8")
    read = JUnitXml.fromfile(str(path))
    assert (read.tests, read.failures, read.errors, read.skipped) == tuple(
        int(root.get(a, "-1")) for a in ("tests", "failures", "errors", "skipped")
    )
    assert read.tests == cases
    # FAIL, UNEXPECTED-PASS; the UNEXPECTED-PASS entry; the run's verdict.
    assert read.failures == 4 and read.errors == 0
    suites = {s.name.split(":")[0]: s for s in read}
    assert {c.name for c in suites["clauses"]} == set(CLAUSES)
    props = {p.name: p.value for p in suites["clauses"].properties()}
    assert props["target"] == "tansu" and props["implementation_version"] == "0.6.0"


def test_the_junit_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_results(tmp_path / "run" / "verdicts.json", _run())
    assert main(["junit", str(tmp_path / "run"), str(tmp_path / "j.xml")]) == 0
    assert f"junit: {len(CLAUSES) + len(EXPECTATIONS) + 1} test cases in " in capsys.readouterr().out
    assert JUnitXml.fromfile(str(tmp_path / "j.xml")).failures == 4
    assert main(["junit", str(tmp_path / "nope"), str(tmp_path / "j.xml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not exist" in err[0]
    (tmp_path / "file").write_text("", encoding="utf-8")
    assert main(["junit", str(tmp_path / "run"), str(tmp_path / "file" / "j.xml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pass a path you can write" in err[0], err
