"""verdicts.json as typed results (conformance.judging.results): what the plugin writes reads back the same, the
file keeps the keys and words its readers have always used, and a file of another schema or of another kind is
refused with the cause; the status vocabularies are str-valued, so JSON and Parquet hold the same words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.judging.results import (
    SCHEMA_VERSION,
    UNKNOWN_VERSION,
    ExpectationOutcome,
    ResultsError,
    RunResults,
    TestResult,
    ViolationRecord,
    one_version,
    read_results,
    write_results,
)
from conformance.judging.verdicts import ALLURE_SEVERITY, EntryStatus, KillStatus, TaskStatus, Verdict
from models.clauses import Level

FIRST = "LO.first-ge-target"
LATEST = "LO.latest-is-high-watermark"


def _run() -> RunResults:
    failed = TestResult(
        nodeid="suites/test_list_offsets.py::test_lookup",
        outcome="failed",
        clauses=(FIRST, LATEST),
        verdicts={FIRST: Verdict.FAIL, LATEST: Verdict.BLOCKED},
        duration=0.25,
        finished_at=1700000000.5,
        message="LO.first-ge-target (MUST, LO-2): observed 1, the reference model expects 0.",
        replay="pytest suites/test_list_offsets.py::test_lookup --target mutant:lookup-last-match",
        examples=12,
        checked=((FIRST, "list-offsets.offset"),),
        violations=(ViolationRecord(FIRST, "list-offsets.offset", "1", "0", "target 7", None),),
    )
    lost = TestResult(
        nodeid="suites/test_list_offsets.py::test_latest",
        outcome="failed",
        clauses=(LATEST,),
        verdicts={LATEST: Verdict.BLOCKED},
        matched=(0,),
        target_lost="tansu exited with signal 9",
    )
    entry = ExpectationOutcome(1, LATEST, ("list-offsets.leader-epoch",), None, EntryStatus.STALE, "entry 1: ...")
    return RunResults(
        target="mutant:lookup-last-match",
        implementation_version="0.1.0",
        profile="kafka-4.0",
        hypothesis_profile="ci",
        seed=None,
        exit_status=1,
        target_lost=("tansu exited with signal 9",),
        clauses={LATEST: Verdict.BLOCKED, FIRST: Verdict.FAIL},
        expectations=(entry,),
        tests=(failed, lost),
    )


def test_what_is_written_reads_back_the_same(tmp_path: Path) -> None:
    path = tmp_path / "out" / "verdicts.json"
    write_results(path, _run())
    again = read_results(path)
    assert again == _run()
    assert again.tests_of(FIRST) == (_run().tests[0],)


def test_the_file_keeps_the_keys_and_words_its_readers_use(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.json"
    write_results(path, _run())
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["schema_version"] == SCHEMA_VERSION
    assert list(data) == [
        "schema_version", "target", "implementation_version", "profile", "hypothesis_profile", "seed", "exit_status",
        "target_lost", "clauses", "expectations", "tests",
    ]  # fmt: skip
    assert data["implementation_version"] == "0.1.0"
    assert data["clauses"] == {FIRST: "FAIL", LATEST: "BLOCKED"}  # sorted by clause, verdict words
    assert data["target_lost"] == ["tansu exited with signal 9"]
    assert data["expectations"] == [
        {"entry": 1, "clause": LATEST, "observables": ["list-offsets.leader-epoch"], "test": None,
         "status": "STALE", "covers": "entry 1: ..."},
    ]  # fmt: skip
    failed, lost = data["tests"]
    assert set(failed) == {
        "nodeid", "outcome", "clauses", "verdicts", "duration", "finished_at", "message", "replay", "examples",
        "checked", "matched", "unexpected", "violations",
    }  # fmt: skip
    assert failed["verdicts"] == {FIRST: "FAIL", LATEST: "BLOCKED"}
    assert failed["checked"] == [[FIRST, "list-offsets.offset"]]
    assert failed["violations"] == [
        {"clause": FIRST, "observable": "list-offsets.offset", "observed": "1", "expected": "0",
         "context": "target 7", "entry": None},
    ]  # fmt: skip
    # Only a test the target was lost in says so.
    assert "target_lost" not in failed and lost["target_lost"] == "tansu exited with signal 9"


def test_a_file_written_before_runs_recorded_the_version_reads_and_writes_back_without_it(tmp_path: Path) -> None:
    """implementation_version is a key a reader may ignore: the schema stays, an older file reads (None: not
    recorded, which is not UNKNOWN_VERSION: recorded, and the implementation said none)."""
    data = _run().to_json()
    del data["implementation_version"]
    path = tmp_path / "verdicts.json"
    path.write_text(json.dumps(data))
    older = read_results(path)
    assert older.implementation_version is None
    assert older.to_json() == data


@pytest.mark.parametrize(
    ("said", "version"),
    [
        (["3.0.12", "3.0.12"], "3.0.12"),  # each xdist worker, or each task of a column, says the same
        (["v1.22.3", "v1.22.4-0.20250101"], "v1.22.3 / v1.22.4-0.20250101"),  # a checkout rebuilt between tasks
        ([UNKNOWN_VERSION, "4.4.0", None], "4.4.0"),  # one that did not know, one row from before rows said it
        ([], UNKNOWN_VERSION),
        ([None, UNKNOWN_VERSION], UNKNOWN_VERSION),
    ],
)
def test_one_version_is_what_they_agree_on_or_each_in_order(said: list[str | None], version: str) -> None:
    assert one_version(said) == version


def test_a_file_of_another_schema_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.json"
    data = _run().to_json()
    data["schema_version"] = SCHEMA_VERSION + 1
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=f"schema {SCHEMA_VERSION + 1}.*reads schema {SCHEMA_VERSION}: run"):
        read_results(path)
    del data["schema_version"]
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match="no schema_version"):
        read_results(path)


@pytest.mark.parametrize(
    "text", ["not json", "[1, 2]", json.dumps({"summary": {}, "results": []}), json.dumps({"clauses": {}})]
)
def test_a_file_that_is_not_a_verdicts_file_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "mutants.json"
    path.write_text(text)
    with pytest.raises(ResultsError, match="is not a verdicts file"):
        read_results(path)


def test_a_missing_file_and_an_unknown_verdict_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="cannot read verdicts file"):
        read_results(tmp_path / "absent.json")
    data = _run().to_json()
    data["clauses"][FIRST] = "BROKEN"
    (tmp_path / "v.json").write_text(json.dumps(data))
    with pytest.raises(ResultsError, match="malformed verdicts file"):
        read_results(tmp_path / "v.json")


def test_statuses_are_their_words_in_json() -> None:
    assert json.dumps([EntryStatus.NOT_EXERCISED, KillStatus.WRONG_CLAUSE, TaskStatus.TIMEOUT]) == (
        '["NOT-EXERCISED", "WRONG-CLAUSE", "timeout"]'
    )
    assert f"{KillStatus.NOT_SERVED}" == "NOT-SERVED" and KillStatus("KILLED") is KillStatus.KILLED
    # A campaign's unfinished kill reads as the verdict of the task that did not finish.
    assert Verdict.TIMEOUT.value == KillStatus.TIMEOUT and Verdict.CRASHED.value == KillStatus.CRASHED


def test_every_level_has_one_allure_severity() -> None:
    assert ALLURE_SEVERITY == {Level.MUST: "critical", Level.SHOULD: "normal", Level.MAY: "minor"}
