"""The report (reports.clauses, reports.known_issues, reports.allure): one Allure result per clause whose
description tells a reader the verdict, the clause, the known failure's reason and the evidence, with the tests'
attachments on the clause's own page; each test's verdict on allure-pytest's result (a KNOWN test is "skipped" with
Allure's known flag, never counted as failed); the quality gate (what fails the run, clauses counted, not tests);
the config that groups results by verdict; the environment block; every Allure page opens on its header."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.judging.harness import HARNESS_ERROR_PREFIX
from conformance.judging.results import SCHEMA_VERSION, RunResults
from conformance.judging.verdicts import ALLURE_STATUS, FAILS_RUN, MEANING, TRIAGE_ORDER, Verdict
from reports.allure import (
    ALLURE_VERSION,
    CATEGORIES,
    DEFAULT_CACHE,
    OPEN_ON_HEADER,
    QUALITY_GATE_FILE,
    ReportError,
    allure_config,
    allure_executable,
    build_html,
    open_on_header,
    quality_gate,
    target_logs,
    write_environment,
)
from reports.clauses import write_clause_results
from reports.known_issues import (
    HARNESS_ERROR_LABEL,
    KNOWN_ISSUE_LABEL,
    KNOWN_ISSUE_VERDICTS,
    TARGET_LOST_GLOBALS,
    TARGET_LOST_LABEL,
    allure_key,
    config_module,
    mark_test_results,
    verdict_group,
    verdict_line,
    verdict_of_test,
)


def test_a_known_clause_page_shows_the_reason_the_observation_and_the_replay(tmp_path: Path) -> None:
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text(json.dumps({
        "schema_version": SCHEMA_VERSION,
        "target": "tansu",
        "profile": "kafka-4.0",
        "clauses": {"LO.first-ge-target": "KNOWN", "LO.record-own-timestamp": "UNSUPPORTED"},
        "tests": [{
            "nodeid": "suites/test_list_offsets.py::test_timestamp_lookup",
            "outcome": "skipped",
            "clauses": ["LO.first-ge-target", "LO.record-own-timestamp"],
            "verdicts": {"LO.first-ge-target": "KNOWN", "LO.record-own-timestamp": "UNSUPPORTED"},
            "message": "LO.first-ge-target (MUST, LO-2): offset: observed 0, the reference model expects 2.",
            "replay": "pytest suites/test_list_offsets.py::test_timestamp_lookup --target tansu",
            "finished_at": 1.0,
        }],
    }))
    expectations = tmp_path / "known.toml"
    expectations.write_text('[[expected]]\nclause = "LO.first-ge-target"\nreason = "answers offset 0"\nlink = "none"\n')
    assert write_clause_results(verdicts, tmp_path / "results", expectations) == 2
    pages = _clause_pages(tmp_path / "results")
    known = pages["LO.first-ge-target"]
    assert known["name"].startswith("KNOWN  LO.first-ge-target: ")
    # "skipped" with Allure's known flag, not "failed": Allure's header counts every failed result as failed.
    assert known["status"] == "skipped" and known["statusDetails"]["known"] is True  # type: ignore[index]
    assert _labels(known)[KNOWN_ISSUE_LABEL] == "LO.first-ge-target"
    assert str(known["statusDetails"]["message"]).startswith(  # type: ignore[index]
        verdict_line(Verdict.KNOWN, "LO.first-ge-target")
    )
    assert "*Known failure*: answers offset 0" in known["description"]
    assert "observed 0, the reference model expects 2" in known["description"]
    replay = "pytest suites/test_list_offsets.py::test_timestamp_lookup --target tansu"
    assert f"*Replay*: `{replay}`" in known["description"]
    unsupported = pages["LO.record-own-timestamp"]
    assert unsupported["status"] == "skipped"
    assert MEANING[Verdict.UNSUPPORTED] in str(unsupported["description"])
    assert "Known failure" not in unsupported["description"]


def test_every_entry_of_a_known_clause_is_on_its_page(tmp_path: Path) -> None:
    """Expectations name an observable each: a clause with two departures has two entries, both shown."""
    verdicts, results = _run_dir(tmp_path, {"LO.latest-is-high-watermark": "KNOWN"}, "")
    expectations = tmp_path / "known.toml"
    expectations.write_text(
        '[[expected]]\nclause = "LO.latest-is-high-watermark"\nobservable = "list-offsets.leader-epoch"\n'
        'reason = "epoch -1"\nlink = "https://example.org/issues/1"\n'
        '[[expected]]\nclause = "LO.latest-is-high-watermark"\nobservable = "list-offsets.timestamp"\n'
        'reason = "a clock reading"\nlink = "none: not reported upstream yet"\n'
    )
    write_clause_results(verdicts, results, expectations)
    page = _clause_pages(results)["LO.latest-is-high-watermark"]
    assert "*Known failure* (list-offsets.leader-epoch): epoch -1" in str(page["description"])
    assert "*Known failure* (list-offsets.timestamp): a clock reading" in str(page["description"])
    assert [link["url"] for link in page["links"] if link["type"] == "issue"] == [  # type: ignore[attr-defined]
        "https://example.org/issues/1"
    ]


# --- clause results carry their evidence (reports.clauses) -------------------------------------------

_TEST = "suites/test_list_offsets.py::test_timestamp_lookup"


def _run_dir(tmp_path: Path, verdicts: dict[str, str], message: str) -> tuple[Path, Path]:
    """A verdicts JSON and a results directory as a run leaves them: allure-pytest's result for the test
    with two text attachments, and the session container holding the target's log."""
    results = tmp_path / "results"
    results.mkdir()
    (results / "c1-attachment.txt").write_text("CMP... observed 0, the reference model expects 2\n")
    (results / "w1-attachment.txt").write_text("api_key=2 v9 127.0.0.1:9092 0.2 ms\nrequest  00\nresponse 00\n")
    (results / "l1-attachment.txt").write_text("tansu broker 0.6.0\n")
    (results / "t1-result.json").write_text(json.dumps({
        "uuid": "t1", "name": "test_timestamp_lookup", "fullName": "suites.test_list_offsets#test_timestamp_lookup",
        "status": "failed", "testCaseId": "tc-lookup",
        "labels": [{"name": "parentSuite", "value": "suites"}, {"name": "framework", "value": "pytest"}],
        "attachments": [
            {"name": "counterexample", "source": "c1-attachment.txt", "type": "text/plain"},
            {"name": "last requests and responses (wire)", "source": "w1-attachment.txt", "type": "text/plain"},
        ],
    }))
    (results / "k1-container.json").write_text(json.dumps({
        "uuid": "k1", "children": ["t1"],
        "afters": [{"name": "target_factory::1", "attachments": [
            {"name": "tansu log", "source": "l1-attachment.txt", "type": "text/plain"}]}],
    }))
    path = tmp_path / "verdicts.json"
    path.write_text(json.dumps({
        "schema_version": SCHEMA_VERSION, "target": "tansu", "profile": "kafka-4.0", "clauses": verdicts,
        "tests": [{"nodeid": _TEST, "outcome": "failed", "clauses": list(verdicts), "verdicts": verdicts,
                   "message": message, "replay": f"pytest {_TEST} --target tansu", "finished_at": 10.0,
                   "duration": 0.5}],
    }))
    return path, results


def _clause_pages(results: Path) -> dict[str, dict[str, object]]:
    pages = [json.loads(p.read_text()) for p in results.glob("*-result.json")]
    return {str(p["fullName"]).removeprefix("clauses."): p for p in pages if str(p["fullName"]).startswith("clauses.")}


def _labels(page: dict[str, object]) -> dict[str, str]:
    return {str(label["name"]): str(label["value"]) for label in page["labels"]}  # type: ignore[attr-defined]


def test_a_failed_clause_holds_its_own_copies_of_the_tests_attachments(tmp_path: Path) -> None:
    verdicts, results = _run_dir(
        tmp_path,
        {"LO.not-found-minus-one": "FAIL", "LO.record-own-timestamp": "BLOCKED"},
        "LO.not-found-minus-one (MUST, LO-2): offset: observed 0, the reference model expects -1.\nFalsifying ...",
    )
    assert write_clause_results(verdicts, results) == 2
    pages = _clause_pages(results)
    fail = pages["LO.not-found-minus-one"]
    assert fail["status"] == "failed"
    assert _labels(fail)["verdict"] == "01 FAIL"
    assert "known" not in fail["statusDetails"]  # type: ignore[operator]
    assert "observed 0, the reference model expects -1" in str(fail["statusDetails"])  # first lines a reader sees
    (step,) = fail["steps"]  # type: ignore[misc]
    assert step["name"] == f"FAIL  {_TEST}"
    # Only the clause's own lines and the replay: the full message is the counterexample attachment.
    assert "Falsifying" not in step["statusDetails"]["message"]
    assert f"replay: pytest {_TEST}" in step["statusDetails"]["message"]
    names = [a["name"] for a in step["attachments"]]
    assert names == ["counterexample", "last requests and responses (wire)"]
    # Allure shows one attachment file in one place only: the clause result needs its own copy.
    for attachment in step["attachments"]:
        assert attachment["source"] not in ("c1-attachment.txt", "w1-attachment.txt")
        assert attachment["type"] == "text/plain"
        assert (results / attachment["source"]).read_text() == (results / {
            "counterexample": "c1-attachment.txt", "last requests and responses (wire)": "w1-attachment.txt",
        }[attachment["name"]]).read_text()
    assert "Global Attachments" in str(fail["description"])
    blocked = pages["LO.record-own-timestamp"]
    assert blocked["status"] == ALLURE_STATUS[Verdict.BLOCKED] == "broken"
    (step,) = blocked["steps"]  # type: ignore[misc]
    assert step["attachments"] == []  # the test's attachments are about the clause that failed
    assert step["statusDetails"]["message"].startswith("not reached: the test stopped at LO.not-found-minus-one")


def test_an_unsupported_clause_names_the_missing_capability_and_a_pass_shows_no_error(tmp_path: Path) -> None:
    verdicts, results = _run_dir(
        tmp_path,
        {"IDX.retention-prefix-rule": "UNSUPPORTED", "VAL.createtime-response-minus-one": "PASS"},
        "Skipped: UNSUPPORTED: retention, clock-control",
    )
    write_clause_results(verdicts, results)
    pages = _clause_pages(results)
    unsupported = pages["IDX.retention-prefix-rule"]
    assert unsupported["status"] == "skipped"
    assert _labels(unsupported)["verdict"] == "08 UNSUPPORTED"
    assert "UNSUPPORTED: retention, clock-control" in str(unsupported["statusDetails"])
    assert unsupported["steps"][0]["attachments"] == []  # type: ignore[index]
    passed = pages["VAL.createtime-response-minus-one"]
    assert passed["status"] == "passed"
    assert "statusDetails" not in passed  # Allure would show the verdict's meaning as an "Error" block


def test_a_second_call_does_not_take_clause_results_for_test_results(tmp_path: Path) -> None:
    verdicts, results = _run_dir(tmp_path, {"LO.not-found-minus-one": "FAIL"}, "LO.not-found-minus-one: observed 0")
    write_clause_results(verdicts, results)
    write_clause_results(verdicts, results)
    fails = [p for p in map(json.loads, map(Path.read_text, results.glob("*-result.json")))
             if p["fullName"] == "clauses.LO.not-found-minus-one"]
    assert len(fails) == 2 and all(len(p["steps"]) == 1 for p in fails)


@pytest.mark.parametrize(
    ("nodeid", "key"),
    [
        (_TEST, ("suites.test_list_offsets#test_timestamp_lookup", "test_timestamp_lookup")),
        ("suites/test_v.py::test_after[3600000]", ("suites.test_v#test_after", "test_after[3600000]")),
        ("suites/test_s.py::TestMachine::runTest", ("suites.test_s.TestMachine#runTest", "runTest")),
    ],
)
def test_allure_key_matches_allure_pytest_names(nodeid: str, key: tuple[str, str]) -> None:
    assert allure_key(nodeid) == key


def test_verdict_groups_sort_in_triage_order() -> None:
    # The report sorts groups by name, as text: "10 PASS" must not come before "2 ...".
    groups = sorted(verdict_group(v) for v in ("PASS", "KNOWN", "FAIL", "N/A", "BLOCKED", "UNEXPECTED-PASS"))
    assert [g.split(" ", 1)[1] for g in groups] == ["FAIL", "UNEXPECTED-PASS", "BLOCKED", "KNOWN", "N/A", "PASS"]
    assert sorted(verdict_group(v) for v in Verdict) == [verdict_group(v) for v in TRIAGE_ORDER]


# --- the report's config and environment (reports.allure) --------------------------------------------


def test_the_environment_lists_versions_after_the_runs_values(tmp_path: Path) -> None:
    write_environment(tmp_path, {"target": "tansu", "profile": "kafka-4.0", "note": "two\nlines"})
    lines = (tmp_path / "environment.properties").read_text().splitlines()
    assert lines[:2] == ["target=tansu", "profile=kafka-4.0"]
    assert "note=two lines" in lines  # a newline would end the property
    keys = [line.split("=", 1)[0] for line in lines]
    assert {"python", "hypothesis", "allure (report)"} <= set(keys)


def test_the_config_groups_clauses_by_verdict_and_puts_the_target_log_on_the_first_page(tmp_path: Path) -> None:
    _, results = _run_dir(tmp_path, {"LO.not-found-minus-one": "FAIL"}, "")
    assert target_logs(results) == {"tansu log": results / "l1-attachment.txt"}
    config = allure_config("r", tmp_path / "out", ["/x/tansu-log.txt"])
    options = config["plugins"]["awesome"]["options"]
    assert options["singleFile"] is True
    assert options["groupBy"] == ["parentSuite", "verdict", "feature"]
    assert config["globalAttachments"] == ["/x/tansu-log.txt"]
    for category in config["categories"]:
        # Allure 3 refuses a rule that mixes its `matchers` with Allure 2's keys.
        assert "matchers" in category and not {"matchedStatuses", "messageRegex"} & set(category)
    names = [c["name"] for c in config["categories"]]
    assert names[-1].startswith("Broken")  # the catch-all comes last: the first match wins


def test_build_html_runs_allure_generate_with_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in `allure` records its arguments and the config it was given, and writes index.html."""
    _, results = _run_dir(tmp_path, {"LO.not-found-minus-one": "FAIL"}, "")
    seen, gate_env = tmp_path / "seen.json", tmp_path / "gate-node-options.txt"
    fake = tmp_path / "allure"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys, pathlib\n"
        "args = sys.argv[1:]\n"
        "module = pathlib.Path(args[args.index('--config') + 1]).read_text()\n"
        "config = json.loads(module.split('const config = ', 1)[1].split(';\\n', 1)[0])\n"
        "if args[0] == 'quality-gate':\n"
        f"    pathlib.Path({str(gate_env)!r}).write_text(os.environ.get('NODE_OPTIONS', ''))\n"
        "    print('The number of failed tests 1 exceeds the allowed threshold value 0'); sys.exit(1)\n"
        "logs = [pathlib.Path(p).read_text() for p in config['globalAttachments']]\n"
        f"pathlib.Path({str(seen)!r}).write_text(json.dumps({{'args': args, 'config': config, 'logs': logs,\n"
        "    'gate': 'qualityGate' in module}))\n"
        "out = pathlib.Path(args[args.index('--output') + 1]); out.mkdir(parents=True, exist_ok=True)\n"
        "(out / 'index.html').write_text('<html><head></head><body></body></html>')\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("KTS_ALLURE", str(fake))
    # Relative paths, as `kafka-conformance run --out reports/out` passes them: allure runs elsewhere.
    monkeypatch.chdir(tmp_path)
    index = build_html(results.relative_to(tmp_path), Path("report"), name="Kafka timestamp conformance: tansu")
    assert index == tmp_path / "report" / "index.html"
    recorded = json.loads(seen.read_text())
    assert recorded["args"][0] == "generate" and recorded["args"][-1] == str(results)
    assert recorded["config"]["name"] == "Kafka timestamp conformance: tansu"
    assert recorded["gate"], "the config module sets the quality gate"
    assert "--import=file:" in gate_env.read_text()  # the quality gate's Node 20 shim
    # The quality gate's outcome first, then the target's log, on the report's first page.
    assert recorded["logs"][0].startswith("failed\nThe number of failed tests 1")
    assert recorded["logs"][1:] == ["tansu broker 0.6.0\n"]
    assert [Path(p).name for p in recorded["config"]["globalAttachments"]] == [QUALITY_GATE_FILE, "tansu-log.txt"]
    assert (tmp_path / "report" / QUALITY_GATE_FILE).read_text().startswith("failed\n")
    assert OPEN_ON_HEADER in index.read_text()  # first in its <head>: the page opens on Allure's header


def test_a_page_opens_on_its_header_once(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text("<!DOCTYPE html>\n<html><head>\n<title>t</title></head><body></body></html>")
    open_on_header(page)
    open_on_header(page)  # a second report build does not add it again
    text = page.read_text()
    assert text.count(OPEN_ON_HEADER) == 1 and text.index(OPEN_ON_HEADER) < text.index("<title>")
    (tmp_path / "other.html").write_text("<html><body></body></html>")
    with pytest.raises(ReportError, match="has no <head>"):
        open_on_header(tmp_path / "other.html")


# --- each test's verdict on allure-pytest's result (reports.allure.mark_test_results) -----------------


def _pytest_result(results: Path, uuid: str, nodeid: str, status: str, message: str = "") -> Path:
    """A result as allure-pytest writes it (a parametrized test's cases share one testCaseId)."""
    full_name, name = allure_key(nodeid)
    result: dict[str, Any] = {
        "uuid": uuid, "name": name, "fullName": full_name, "status": status, "testCaseId": f"tc-{full_name}",
        "labels": [{"name": "parentSuite", "value": "suites"}, {"name": "framework", "value": "pytest"},
                   {"name": "tag", "value": "LO-2"}],
    }  # fmt: skip
    if message:
        result["statusDetails"] = {"message": message, "trace": "..."}
    path = results / f"{uuid}-result.json"
    path.write_text(json.dumps(result))
    return path


def _test(nodeid: str, verdicts: dict[str, str], message: str = "") -> dict[str, Any]:
    return {"nodeid": nodeid, "clauses": list(verdicts), "verdicts": verdicts, "message": message}


_KNOWN_VIOLATION = "LO.first-ge-target (MUST, LO-2): offset: observed 0, the reference model expects 2."


@pytest.fixture
def marked(tmp_path: Path) -> dict[str, dict[str, Any]]:
    """allure-pytest's results of one run, after mark_test_results: by result name."""
    results = tmp_path / "results"
    results.mkdir()
    lookup = "suites/test_list_offsets.py::test_timestamp_lookup"
    _pytest_result(results, "k", lookup, "skipped", "XFAIL known failure")
    _pytest_result(results, "s", "suites/test_validation.py::test_producer_set_lat_flag", "passed")
    _pytest_result(results, "f0", "suites/test_v.py::test_after[0]", "failed", "ClauseViolation: VAL.range (MUST)")
    _pytest_result(results, "f1", "suites/test_v.py::test_after[1]", "skipped", "XFAIL")
    _pytest_result(results, "u", "suites/test_v.py::test_bounds", "skipped", "Skipped: UNSUPPORTED: clock-control")
    _pytest_result(results, "b", "suites/test_v.py::test_lost", "failed", "TARGET LOST")
    _pytest_result(results, "p", "suites/test_v.py::test_ok", "passed")
    run = RunResults.from_json({"clauses": {}, "tests": [
        _test(lookup, {"LO.not-found-minus-one": "BLOCKED", "LO.first-ge-target": "KNOWN"},
              f"Falsifying example: ...\n{_KNOWN_VIOLATION}\nreplay: ..."),
        _test("suites/test_validation.py::test_producer_set_lat_flag",
              {"VAL.lat-flag-error-text": "NON-STRICT", "VAL.lat-flag-accepted-on-createtime": "PASS"}),
        _test("suites/test_v.py::test_after[0]", {"VAL.range-before-after": "FAIL"}, "VAL.range-before-after: x"),
        _test("suites/test_v.py::test_after[1]", {"VAL.range-before-after": "KNOWN"}, "VAL.range-before-after: y"),
        _test("suites/test_v.py::test_bounds", {"VAL.range-before-after": "UNSUPPORTED"}),
        _test("suites/test_v.py::test_lost", {"VAL.range-before-after": "BLOCKED"}, "TARGET LOST"),
        _test("suites/test_v.py::test_ok", {"VAL.range-before-after": "PASS"}),
    ]})  # fmt: skip
    assert mark_test_results(results, run) == 7
    assert mark_test_results(results, run) == 7  # idempotent: a second report build changes nothing more
    return {r["name"]: r for r in map(json.loads, map(Path.read_text, results.glob("*-result.json")))}


def test_a_known_test_is_skipped_with_allures_known_flag_never_counted_failed(marked: dict[str, Any]) -> None:
    known = marked["test_timestamp_lookup"]
    assert known["status"] == "skipped"
    assert known["statusDetails"]["known"] is True
    # The verdict first (naming the clause it is a known issue of), then the clause's violation, once.
    assert known["statusDetails"]["message"].splitlines() == [
        verdict_line(Verdict.KNOWN, "LO.first-ge-target"),
        _KNOWN_VIOLATION,
    ]
    labels = _labels(known)
    assert (labels["verdict"], labels[KNOWN_ISSUE_LABEL]) == (verdict_group(Verdict.KNOWN), "LO.first-ge-target")
    assert {(x["name"], x["value"]) for x in known["labels"]} >= {("tag", "LO-2"), ("tag", "KNOWN")}


def test_a_non_strict_test_that_pytest_passed_is_a_known_departure_too(marked: dict[str, Any]) -> None:
    non_strict = marked["test_producer_set_lat_flag"]
    assert (non_strict["status"], non_strict["statusDetails"]["known"]) == ("skipped", True)
    assert non_strict["statusDetails"]["message"] == verdict_line(Verdict.NON_STRICT, "VAL.lat-flag-error-text")


def test_new_failures_and_the_other_verdicts_keep_pytests_status(marked: dict[str, Any]) -> None:
    new = marked["test_after[0]"]
    assert new["status"] == "failed" and "known" not in new["statusDetails"]
    assert _labels(new)["verdict"] == verdict_group(Verdict.FAIL) and KNOWN_ISSUE_LABEL not in _labels(new)
    assert marked["test_after[1]"]["status"] == "skipped"  # the KNOWN case of the same parametrized test
    assert (marked["test_bounds"]["status"], _labels(marked["test_bounds"])["verdict"]) == (
        "skipped",
        verdict_group(Verdict.UNSUPPORTED),
    )
    assert marked["test_lost"]["status"] == "broken"  # BLOCKED: not decided
    assert marked["test_ok"]["status"] == "passed" and "statusDetails" not in marked["test_ok"]


@pytest.mark.parametrize(
    ("verdicts", "shown"),
    [
        ({Verdict.KNOWN, Verdict.FAIL}, Verdict.FAIL),  # something new is never hidden behind a known failure
        ({Verdict.KNOWN, Verdict.UNEXPECTED_PASS}, Verdict.UNEXPECTED_PASS),
        ({Verdict.KNOWN, Verdict.BLOCKED, Verdict.PASS}, Verdict.KNOWN),  # what it blocked came after it
        ({Verdict.NON_STRICT, Verdict.PASS}, Verdict.NON_STRICT),
        ({Verdict.UNSUPPORTED, Verdict.PASS}, Verdict.UNSUPPORTED),
        ({Verdict.NOT_APPLICABLE, Verdict.PASS}, Verdict.NOT_APPLICABLE),
        (set(), None),
    ],
)
def test_a_tests_verdict_is_its_most_urgent_clause_verdict(verdicts: set[Verdict], shown: Verdict | None) -> None:
    assert verdict_of_test(verdicts) is shown


# --- the categories and the quality gate (reports.allure) -----------------------------------------------


def test_a_known_failures_message_is_not_taken_for_a_violation_by_the_categories(marked: dict[str, Any]) -> None:
    (fail,) = [c for c in CATEGORIES if c["name"].startswith(f"{Verdict.FAIL.value}: ")]
    by_message = [m["message"] for m in fail["matchers"] if "message" in m]
    assert by_message, "a failed result without a verdict label is classified by its message"
    assert re.search(by_message[0], "ClauseViolation: LO.first-ge-target (MUST, LO-2): observed 0")
    assert not re.search(by_message[0], marked["test_timestamp_lookup"]["statusDetails"]["message"])


def test_the_quality_gate_counts_the_clauses_that_fail_the_run_and_the_runs_own_errors() -> None:
    module = config_module(allure_config("r", Path("/out")))
    not_new = set(json.loads(module.split("const notNew = new Set(", 1)[1].split(");", 1)[0]))
    assert not_new == {v.value for v in Verdict} - {v.value for v in FAILS_RUN}
    # What Allure counts as failed or broken is what fails the run, and BLOCKED (the run's errors count instead).
    failing = {v.value for v, status in ALLURE_STATUS.items() if status in ("failed", "broken")}
    assert failing - not_new == {v.value for v in FAILS_RUN} and failing & not_new == {"BLOCKED"}
    assert {v.value for v in KNOWN_ISSUE_VERDICTS} == {"KNOWN", "NON-STRICT"}
    assert {ALLURE_STATUS[v] for v in KNOWN_ISSUE_VERDICTS} == {"skipped"}
    # Two rules: the clause verdicts (no pytest test among them), and the run's own errors (pytest tests only).
    assert "{ id: \"clauses\", clauseFailures: 0, filter: failsRun }" in module
    assert "{ id: \"run\", runErrors: 0, filter: runError }" in module
    assert 'const failsRun = (tr) => !isTest(tr) &&' in module and 'const runError = (tr) => isTest(tr) &&' in module
    assert f"const runErrorLabels = {json.dumps([TARGET_LOST_LABEL, HARNESS_ERROR_LABEL])};" in module
    assert module.rstrip().endswith("export default config;")


def test_a_test_the_harness_broke_in_is_labelled_for_the_gate(tmp_path: Path) -> None:
    broke = f"{HARNESS_ERROR_PREFIX}the suite's own code raised IndexError: tuple index out of range"
    verdicts, results = _run_dir(tmp_path, {"LO.not-found-minus-one": "BLOCKED"}, broke + "\ntraceback ...")
    write_clause_results(verdicts, results)
    test = json.loads((results / "t1-result.json").read_text())
    assert test["status"] == "broken" and _labels(test)[HARNESS_ERROR_LABEL] == broke
    assert TARGET_LOST_LABEL not in _labels(test)


def _cached_allure(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only an allure already installed (KTS_ALLURE or the cache): with npm hidden, allure_executable cannot
    reach the registry, so a test never downloads anything."""
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    try:
        allure_executable()
    except ReportError:
        cached = DEFAULT_CACHE / f"allure-{ALLURE_VERSION}"
        pytest.skip(f"no allure without the network: neither KTS_ALLURE nor {cached} holds one")


def test_a_lost_target_is_a_global_error_and_counts_for_the_gate(tmp_path: Path) -> None:
    verdicts, results = _run_dir(tmp_path, {"LO.not-found-minus-one": "BLOCKED"}, "TARGET LOST: tansu exited")
    data = json.loads(verdicts.read_text())
    data["target_lost"] = ["tansu (pid 7, 127.0.0.1:9092) exited with signal 9"]
    data["tests"][0]["target_lost"] = "tansu (pid 7, 127.0.0.1:9092) exited with signal 9\nlog tail ..."
    verdicts.write_text(json.dumps(data))
    write_clause_results(verdicts, results)
    test = json.loads((results / "t1-result.json").read_text())
    assert test["status"] == "broken"
    assert _labels(test)[TARGET_LOST_LABEL] == "tansu (pid 7, 127.0.0.1:9092) exited with signal 9"
    errors = json.loads((results / TARGET_LOST_GLOBALS).read_text())["errors"]
    assert errors == [{"message": "TARGET LOST: tansu (pid 7, 127.0.0.1:9092) exited with signal 9"}]
    assert HARNESS_ERROR_LABEL not in _labels(test)


def _run_of(tmp_path: Path, case: str) -> Path:
    """The results directory of a run with a KNOWN clause and, per `case`, a new failure or a target lost."""
    other = {"known only": "PASS", "a new failure": "FAIL", "target lost": "BLOCKED"}[case]
    verdicts, results = _run_dir(tmp_path, {"LO.first-ge-target": "KNOWN", "LO.not-found-minus-one": other},
                                 _KNOWN_VIOLATION)  # fmt: skip
    if case == "target lost":
        data = json.loads(verdicts.read_text())
        data["target_lost"] = ["tansu exited with signal 9"]
        data["tests"][0]["target_lost"] = "tansu exited with signal 9"
        verdicts.write_text(json.dumps(data))
    write_clause_results(verdicts, results)
    return results


def test_allure_counts_a_known_clause_as_skipped_and_its_gate_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real Allure 3 over a run with a known failure only: neither report's header counts it as failed, the
    quality gate passes, and both pages open on their header."""
    _cached_allure(monkeypatch)
    results = _run_of(tmp_path, "known only")
    report = tmp_path / "report"
    build_html(results, report, name="r", split=True)
    assert (report / QUALITY_GATE_FILE).read_text().startswith("passed\n")
    clauses = json.loads((report / "clauses" / "summary.json").read_text())["stats"]
    tests = json.loads((report / "tests" / "summary.json").read_text())["stats"]
    assert (clauses["total"], clauses.get("failed", 0), clauses["skipped"], clauses["passed"]) == (2, 0, 1, 1)
    assert (tests["total"], tests.get("failed", 0), tests["skipped"]) == (1, 0, 1)
    for page in ("clauses", "tests"):
        assert OPEN_ON_HEADER in (report / page / "index.html").read_text()


@pytest.mark.parametrize("case", ["a new failure", "target lost"])
def test_allures_quality_gate_fails_on_a_new_failure_or_a_lost_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Allure's own quality gate with the report's config, beside a known failure that it does not count: a new
    failure counts its clause and not the pytest test beside it; a lost target counts the test it was lost in."""
    _cached_allure(monkeypatch)
    results = _run_of(tmp_path, case)
    config = tmp_path / "allurerc.mjs"
    config.write_text(config_module(allure_config("r", tmp_path / "report")))
    passed, words = quality_gate(config, results)
    expected = "1 clause verdicts fail the run" if case == "a new failure" else "1 pytest tests ended in an error"
    assert not passed and expected in words, words
    assert words.count("allowed: 0") == 1, words  # the other rule holds


def _summary(clause_id: str) -> str:
    from models.clauses import get_clause

    return get_clause(clause_id).summary


def test_a_split_report_counts_clauses_and_tests_in_reports_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real Allure 3 with split=True: clauses/index.html holds the clause results only and tests/index.html
    the pytest tests only (each report's summary.json counts its own), and the gate still judges both."""
    _cached_allure(monkeypatch)
    results = _run_of(tmp_path, "a new failure")
    report = tmp_path / "report"
    build_html(results, report, name="r", split=True)
    clauses = json.loads((report / "clauses" / "summary.json").read_text())
    tests = json.loads((report / "tests" / "summary.json").read_text())
    assert (report / "clauses" / "index.html").is_file() and (report / "tests" / "index.html").is_file()
    assert clauses["stats"]["total"] == 2, clauses  # LO.first-ge-target KNOWN, LO.not-found-minus-one FAIL
    assert tests["stats"]["total"] == 1, tests  # test_timestamp_lookup
    assert (report / QUALITY_GATE_FILE).read_text().startswith("failed\n")
