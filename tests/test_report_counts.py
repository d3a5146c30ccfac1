"""What the two Allure reports' headers count, rendered by the real Allure 3 from a small crafted run
(docs/report-counts.md): a KNOWN or NON-STRICT clause is not counted as failed, a FAIL is; the pytest tests are
counted in their own report; the quality gate counts the clause verdicts that fail the run, not the tests beside
them; both pages open on their header. Slow (Node starts three times): e2e."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conformance.judging.results import SCHEMA_VERSION
from conformance.judging.verdicts import FAILS_RUN, Verdict
from reports.allure import (
    ALLURE_VERSION,
    DEFAULT_CACHE,
    OPEN_ON_HEADER,
    QUALITY_GATE_FILE,
    ReportError,
    allure_executable,
    build_html,
)
from reports.clauses import write_clause_results
from reports.known_issues import allure_key

pytestmark = pytest.mark.e2e

_VIOLATION = "{clause} (MUST, LO-2): offset: observed 0, the reference model expects 2."


def _allure() -> None:
    """The allure CLI (installed into the cache by npm on first use, as `kafka-conformance run` does); skipped
    only when Node.js is missing, which the report needs."""
    cached = (DEFAULT_CACHE / f"allure-{ALLURE_VERSION}" / "node_modules" / ".bin" / "allure").is_file()
    if shutil.which("node") is None or not (cached or shutil.which("npm")):
        pytest.skip("Node.js and npm are not on PATH: the Allure report needs them (install Node.js 18+)")
    try:
        allure_executable()
    except ReportError as exc:
        pytest.fail(f"allure could not be installed: {exc}")


def _pytest_result(results: Path, nodeid: str, status: str, message: str) -> None:
    """A result as allure-pytest writes it (the framework label included: the quality gate tells tests by it)."""
    full_name, name = allure_key(nodeid)
    result: dict[str, Any] = {
        "uuid": name, "name": name, "fullName": full_name, "status": status, "testCaseId": f"tc-{full_name}",
        "historyId": f"h-{name}", "start": 1_000, "stop": 2_000,
        "labels": [{"name": "parentSuite", "value": "suites"}, {"name": "framework", "value": "pytest"}],
        "statusDetails": {"message": message},
    }  # fmt: skip
    (results / f"{name}-result.json").write_text(json.dumps(result))


def _run(tmp_path: Path, tests: dict[str, tuple[str, dict[str, str]]]) -> Path:
    """A results directory as a run leaves it: allure-pytest's result per test (nodeid -> (pytest status, its
    clauses' verdicts)), the verdicts JSON, then the clause results written from it."""
    results = tmp_path / "results"
    results.mkdir()
    clauses: dict[str, str] = {}
    entries = []
    for i, (test, (status, verdicts)) in enumerate(tests.items()):
        nodeid = f"suites/test_list_offsets.py::{test}"
        message = "\n".join(_VIOLATION.format(clause=c) for c, v in verdicts.items() if v in ("FAIL", "KNOWN"))
        _pytest_result(results, nodeid, status, message)
        entries.append({"nodeid": nodeid, "outcome": status, "clauses": list(verdicts), "verdicts": verdicts,
                        "message": message, "finished_at": 2.0 + i, "duration": 1.0})  # fmt: skip
        for clause, verdict in verdicts.items():  # a clause's verdict over its tests: the most severe here
            clauses[clause] = verdict if clause not in clauses or verdict == "FAIL" else clauses[clause]
    verdicts_json = tmp_path / "verdicts.json"
    verdicts_json.write_text(json.dumps({"schema_version": SCHEMA_VERSION, "target": "tansu", "profile": "kafka-4.0",
                                         "clauses": clauses, "tests": entries}))  # fmt: skip
    write_clause_results(verdicts_json, results)
    return results


def _headers(report: Path) -> tuple[dict[str, int], dict[str, int]]:
    """The counts each report's header shows (Allure writes them to its summary.json): clauses, tests."""
    clauses, tests = (json.loads((report / p / "summary.json").read_text())["stats"] for p in ("clauses", "tests"))
    return clauses, tests


# A green run (exit 0): a known departure, a SHOULD departure (NON-STRICT), an unsupported clause, a pass.
_GREEN = {
    "test_timestamp_lookup": ("skipped", {"LO.first-ge-target": "KNOWN", "LO.not-found-minus-one": "PASS"}),
    "test_max_timestamp": ("passed", {"LO.max-timestamp-empty": "NON-STRICT"}),
    "test_tiered": ("skipped", {"LO.latest-tiered-none": "UNSUPPORTED"}),
}
# A red run: one FAIL clause, failed by two tests, beside a KNOWN one.
_RED = {
    **_GREEN,
    "test_record_own_timestamp": ("failed", {"LO.record-own-timestamp": "FAIL"}),
    "test_record_own_timestamp_again": ("failed", {"LO.record-own-timestamp": "FAIL"}),
}


def test_a_green_runs_headers_count_no_failure_and_its_gate_passes(tmp_path: Path) -> None:
    _allure()
    report = tmp_path / "report"
    build_html(_run(tmp_path, _GREEN), report, name="green", split=True)
    clauses, tests = _headers(report)
    # KNOWN, NON-STRICT and UNSUPPORTED are skipped, never failed; the pass is passed.
    counted = (clauses["total"], clauses.get("skipped"), clauses.get("passed"), clauses.get("failed", 0))
    assert counted == (4, 3, 1, 0) and clauses.get("broken", 0) == 0, clauses
    assert tests["total"] == 3 and tests.get("failed", 0) == tests.get("broken", 0) == 0, tests
    gate = (report / QUALITY_GATE_FILE).read_text()
    assert gate.startswith("passed\n"), gate
    for page in ("clauses", "tests"):
        assert OPEN_ON_HEADER in (report / page / "index.html").read_text()


def test_a_red_runs_header_counts_its_fail_and_the_gate_counts_clauses_not_tests(tmp_path: Path) -> None:
    _allure()
    report = tmp_path / "report"
    results = _run(tmp_path, _RED)
    build_html(results, report, name="red", split=True)
    clauses, tests = _headers(report)
    verdicts = json.loads((tmp_path / "verdicts.json").read_text())["clauses"]
    failing = sum(1 for v in verdicts.values() if Verdict(v) in FAILS_RUN)
    assert failing == 1
    # The FAIL clause is the one failed result of the clauses report; its two tests are the tests report's.
    assert (clauses["total"], clauses.get("failed", 0), clauses["skipped"]) == (5, failing, 3), clauses
    assert (tests["total"], tests.get("failed", 0)) == (5, 2), tests
    gate = (report / QUALITY_GATE_FILE).read_text()
    # One clause, not one clause and its two tests (3), nor the KNOWN clause.
    assert gate.startswith("failed\n") and f"{failing} clause verdicts fail the run" in gate, gate
    assert "ended in an error of the run itself" not in gate, gate  # Allure words only the rules that failed
