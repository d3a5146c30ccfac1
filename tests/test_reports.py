"""The report (reports.clauses, reports.allure): one Allure result per clause whose description tells a
reader the verdict, the clause, the known failure's reason and the evidence, with the tests' attachments
on the clause's own page; the config that groups clauses by verdict; the environment block."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reports.allure import allure_config, build_html, target_logs, write_environment
from reports.clauses import allure_key, verdict_group, write_clause_results


def test_a_known_clause_page_shows_the_reason_the_observation_and_the_replay(tmp_path: Path) -> None:
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text(json.dumps({
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
    pages = {p["labels"][4]["value"]: p for p in map(json.loads, map(Path.read_text,
                                                                      (tmp_path / "results").glob("*.json")))}
    known = pages["LO.first-ge-target"]
    assert known["name"].startswith("KNOWN  LO.first-ge-target: ")
    assert known["status"] == "skipped"
    assert "*Known failure*: answers offset 0" in known["description"]
    assert "observed 0, the reference model expects 2" in known["description"]
    replay = "pytest suites/test_list_offsets.py::test_timestamp_lookup --target tansu"
    assert f"*Replay*: `{replay}`" in known["description"]
    unsupported = pages["LO.record-own-timestamp"]
    assert "without any check of it running" in unsupported["description"]
    assert "Known failure" not in unsupported["description"]


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
        "status": "failed", "labels": [{"name": "parentSuite", "value": "suites"}],
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
        "target": "tansu", "profile": "kafka-4.0", "clauses": verdicts,
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
    assert _labels(fail)["verdict"] == "1 FAIL"
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
    assert blocked["status"] == "unknown"
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
    assert _labels(unsupported)["verdict"] == "6 UNSUPPORTED"
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
    groups = sorted(verdict_group(v) for v in ("PASS", "KNOWN", "FAIL", "N/A", "BLOCKED", "UNEXPECTED-PASS"))
    assert [g.split(" ", 1)[1] for g in groups] == ["FAIL", "UNEXPECTED-PASS", "BLOCKED", "KNOWN", "N/A", "PASS"]


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
    seen = tmp_path / "seen.json"
    fake = tmp_path / "allure"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import json, sys, pathlib\n"
        "args = sys.argv[1:]\n"
        "config = json.loads(pathlib.Path(args[args.index('--config') + 1]).read_text())\n"
        "logs = [pathlib.Path(p).read_text() for p in config['globalAttachments']]\n"
        f"pathlib.Path({str(seen)!r}).write_text(json.dumps({{'args': args, 'config': config, 'logs': logs}}))\n"
        "out = pathlib.Path(args[args.index('--output') + 1]); out.mkdir(parents=True, exist_ok=True)\n"
        "(out / 'index.html').write_text('<html></html>')\n"
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
    assert recorded["logs"] == ["tansu broker 0.6.0\n"]
    assert [Path(p).name for p in recorded["config"]["globalAttachments"]] == ["tansu-log.txt"]
