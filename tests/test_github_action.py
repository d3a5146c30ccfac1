"""The GitHub Action (action.yml) and its step (conformance/ci/github.py), run with a fake runner: temporary
GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, GITHUB_WORKSPACE and RUNNER_TEMP, the inputs as action.yml passes them. The
cluster is the reference broker in this process on loopback, with its control plane (so that its clock is the
suite's to set); the slow test, which runs the suites over the wire, is e2e."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conformance.ci import github
from conformance.control.control_plane import ControlPlane
from conformance.judging.results import RunResults, write_results
from conformance.judging.verdicts import Verdict
from conformance.reference.kafka_server import KafkaServer
from conformance.reference.served import ServedCluster
from conformance.targets.libraries.model.model_broker import ModelFactory

REPO = Path(__file__).resolve().parents[1]
LOOKUP = "LO.first-ge-target"


def _runner(tmp_path: Path, **inputs: str) -> dict[str, str]:
    """The environment of the action's step on a fake runner: the runner's files in `tmp_path`, the inputs as
    INPUT_<NAME>, this checkout importable by the run it starts."""
    (tmp_path / "workspace").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "RUNNER_"))}
    env.update(
        PYTHONPATH=str(REPO),
        GITHUB_WORKSPACE=str(tmp_path / "workspace"),
        RUNNER_TEMP=str(tmp_path / "temp"),
        GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
        GITHUB_OUTPUT=str(tmp_path / "output"),
    )
    env.update({f"INPUT_{name.upper()}": value for name, value in inputs.items()})
    return env


def _outputs(tmp_path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT read as the runner reads it (name<<DELIMITER ... DELIMITER)."""
    text = (tmp_path / "output").read_text(encoding="utf-8")
    found = re.findall(r"^([\w-]+)<<(\S+)\n(.*?)\n\2$", text, re.M | re.S)
    assert "".join(f"{name}<<{d}\n{value}\n{d}\n" for name, d, value in found) == text  # nothing else in it
    return {name: value for name, _, value in found}


@contextlib.contextmanager
def _cluster() -> Iterator[tuple[str, str]]:
    """The reference broker (one broker, the model) and its control plane, on loopback in this process."""
    served = ServedCluster(ModelFactory(brokers=1))
    with KafkaServer(served) as server, ControlPlane(served) as plane:
        yield server.bootstrap, plane.url


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# --- action.yml and the step agree --------------------------------------------------------------------------------


def _action() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_action_yml_passes_every_input_and_reads_every_output_of_the_step() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    step = next(s for s in steps if s.get("id") == "run")
    assert step["run"] == "python -m conformance.ci.github"
    # Each input the step reads reaches it, from the input of the same name.
    read = {f"INPUT_{name.upper()}" for name in github.Inputs.__dataclass_fields__}
    assert set(step["env"]) == read
    for variable, value in step["env"].items():
        name = variable.removeprefix("INPUT_").lower().replace("_", "-")
        assert value == "${{ inputs." + name + " }}" and name in action["inputs"]
    assert action["inputs"]["bootstrap-servers"]["required"] is True
    assert action["inputs"]["html"]["default"] == "false"
    # Each output is one the step sets.
    for name, output in action["outputs"].items():
        assert output["value"] == "${{ steps.run.outputs." + name + " }}"
    install = next(s for s in steps if s.get("name") == "Install kafka-conformance")
    assert "GITHUB_ACTION_PATH" in install["run"]
    upload = next(s for s in steps if "upload-artifact" in s.get("uses", ""))
    assert upload["if"].startswith("always()") and upload["with"]["path"] == "${{ steps.run.outputs.report-dir }}"


def test_the_command_tests_the_cluster_given_and_nothing_else(tmp_path: Path) -> None:
    paths = github.Paths.of(_runner(tmp_path))
    argv = github.command(github.Inputs("k:9092", profile="kafka-3.9", baseline="b", args="--clauses X"), paths)
    assert argv[1:] == ["-m", "conformance", "run", "--target", "broker", "--bootstrap-servers", "k:9092", "--out",
                        str(tmp_path / "temp" / github.REPORT_FOLDER), "--junit-xml", str(paths.junit),
                        "--profile", "kafka-3.9", "--baseline", "b", "--no-html", "--clauses", "X"]  # fmt: skip
    assert "--no-html" not in github.command(github.Inputs("k:9092", html=True), paths)
    for args in ("--target model", "--target=kafka:4.0", "--tar model", "-- --target model", "--out /tmp/x",
                 "--bootstrap-servers other:9092", "--junit-xml j.xml"):  # fmt: skip
        message = github.check(github.Inputs("k:9092", args=args))
        assert message is not None and "which the action sets itself" in message, args
    assert github.check(github.Inputs("k:9092", args="--clauses 'a")) is not None
    assert github.check(github.Inputs("k:9092", args="--clauses LO.first-ge-target -- -x")) is None


# --- the step on a fake runner ------------------------------------------------------------------------------------


def test_an_empty_bootstrap_input_is_one_line_and_the_summary_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert github.main(_runner(tmp_path, bootstrap_servers=" ")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["::error::the bootstrap-servers input is empty: set it to HOST:PORT of the cluster to test"]
    assert "**not run**: the bootstrap-servers input is empty" in (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert _outputs(tmp_path)["exit-code"] == "2"


def test_a_cluster_that_does_not_answer_is_not_run_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run refuses an address where nothing listens (exit 2, one line); the step passes the line on."""
    env = _runner(tmp_path, bootstrap_servers=f"127.0.0.1:{_closed_port()}", args="--wire-timeout 1")
    assert github.main(env) == 2
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## Kafka timestamp conformance\n\n**not run: exit 2: kafka-conformance: error: ")
    outputs = _outputs(tmp_path)
    assert outputs["exit-code"] == "2" and outputs["verdict"].startswith("not run: exit 2: ")
    assert "Traceback" not in capsys.readouterr().err


def test_the_summary_names_the_verdict_the_failures_and_the_diff() -> None:
    results = RunResults(target="broker", implementation_version=None, profile="kafka-4.0", hypothesis_profile="ci",
                         clauses={LOOKUP: Verdict.FAIL, "VAL.range-before-after": Verdict.PASS})  # fmt: skip
    text = github.summary(results, "exit 1: 1 new failure: ...", github.Inputs("k:9092"), "### runs compared\n")
    assert text.startswith("## Kafka timestamp conformance\n\n**exit 1: 1 new failure: ...**\n")
    assert "| `k:9092` | `broker` | unknown | kafka-4.0 | ci |" in text
    assert "Clauses: 1 FAIL, 1 PASS" in text and f"Failing: `{LOOKUP}` (FAIL)" in text
    assert text.rstrip().endswith("### runs compared")


@pytest.mark.e2e
def test_the_step_runs_the_suites_against_the_cluster_and_reports(tmp_path: Path) -> None:
    """The whole step against the reference broker: a run of one clause's tests, the verdict and the diff against
    a baseline (where the clause failed: fixed) in the summary, the outputs, the JUnit file, the report folder."""
    baseline = tmp_path / "workspace" / "last" / "verdicts.json"
    (tmp_path / "workspace").mkdir()
    write_results(baseline, RunResults(target="broker", profile="kafka-4.0", exit_status=1,
                                       clauses={LOOKUP: Verdict.FAIL}))  # fmt: skip
    with _cluster() as (bootstrap, control):
        env = _runner(tmp_path, bootstrap_servers=bootstrap, baseline="last",
                      args=f"--control-url {control} --clauses {LOOKUP} --hypothesis-profile fast")  # fmt: skip
        code = github.main(env)
    outputs = _outputs(tmp_path)
    assert code == 0, outputs
    assert outputs["exit-code"] == "0" and outputs["regressed"] == "0"
    assert outputs["verdict"].startswith("exit 0: no new failure: 0 FAIL, 0 UNEXPECTED-PASS")
    report = tmp_path / "temp" / github.REPORT_FOLDER
    assert outputs["report-dir"] == str(report) and outputs["verdicts-json"] == str(report / "verdicts.json")
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert f"**{outputs['verdict']}**" in summary
    assert f"| `{bootstrap}` | `broker` |" in summary
    assert "#### Fixed (1)" in summary and f"| `{LOOKUP}` | list-offsets | FAIL | **PASS** |" in summary
    junit = ET.parse(outputs["junit-xml"]).getroot()
    assert junit.get("failures") == "0" and junit.get("errors") == "0"
    assert any(case.get("name") == LOOKUP for case in junit.iter("testcase"))
    assert (report / "diff.md").is_file() and not (report / "allure-report").exists()  # no HTML unless asked
