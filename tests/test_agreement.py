"""`kafka-conformance compare` (conformance/commands/compare.py): what it compares and when it fails, without running
the suites (the run itself is `tox -e reference`), and the kill table over the wire (`mutants --served`)."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.commands import compare as agreement
from conformance.commands.compare import (
    DEFAULT_PROFILES,
    CompareError,
    Comparison,
    RunVerdicts,
    baseline_of,
    parse_inputs,
)
from conformance.commands.kill_table import KillTable


def _args(**overrides: str | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    agreement.add_arguments(parser)
    args = parser.parse_args([])
    for key, value in overrides.items():
        setattr(args, key, value)
    return args


def _run(target: str, clauses: dict[str, str]) -> RunVerdicts:
    return RunVerdicts(target, "kafka-4.0", clauses, 0, Path("/dev/null"), ())


def test_a_served_mutant_is_compared_with_the_mutant_in_process() -> None:
    assert baseline_of("reference") == "model"
    assert baseline_of("reference:mutant:lookup-last-match") == "mutant:lookup-last-match"
    assert baseline_of("broker") == "model"


def test_defaults_are_the_three_profiles_and_pass_or_na() -> None:
    profiles, allowed, clauses = parse_inputs(_args())
    assert profiles == ["kafka-4.0", "kafka-3.9", "kafka-2.8"]
    assert allowed == ("PASS", "N/A")
    assert clauses == ()
    assert "FAIL" in parse_inputs(_args(require="any"))[1]


@pytest.mark.parametrize(("target", "profiles"), [("kafka", ["kafka-4.2"]), ("kafka:4.0", ["kafka-4.0"]),
                                                  ("kafka:3.9", ["kafka-3.9"]), ("tansu", list(DEFAULT_PROFILES))])
def test_a_kafka_line_is_compared_under_its_own_profile_by_default(target: str, profiles: list[str]) -> None:
    assert parse_inputs(_args(target=target))[0] == profiles


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"profiles": "kafka-9.9"}, "kafka-9.9"),
        ({"profiles": " , "}, "--profiles"),
        ({"target": "kafka:9.9"}, "Apache Kafka 9.9 is not a supported target: choose a line"),
        ({"require": "PASS,GREEN"}, "GREEN"),
    ],
)
def test_bad_input_names_the_problem(overrides: dict[str, str], named: str) -> None:
    with pytest.raises(CompareError, match=named):
        parse_inputs(_args(**overrides))


def test_differences_and_verdicts_outside_the_allowed_ones() -> None:
    comparison = Comparison(
        "kafka-4.0",
        _run("reference", {"A": "PASS", "B": "UNSUPPORTED", "C": "N/A"}),
        _run("model", {"A": "PASS", "B": "PASS", "D": "PASS"}),
    )
    assert comparison.differences() == [("B", "UNSUPPORTED", "PASS"), ("C", "N/A", "-"), ("D", "-", "PASS")]
    assert comparison.outside(("PASS", "N/A")) == [("B", "UNSUPPORTED")]
    same = Comparison("kafka-4.0", _run("reference", {"A": "PASS"}), _run("model", {"A": "PASS"}))
    assert same.differences() == [] and same.outside(("PASS",)) == []


def test_report_fails_on_a_difference_only_where_there_is_one() -> None:
    out = io.StringIO()
    failed = agreement._report(
        Comparison("kafka-3.9", _run("reference", {"A": "FAIL"}), _run("model", {"A": "PASS"})), ("PASS",), out
    )
    assert failed
    assert "DIFFERS A: reference FAIL, model PASS" in out.getvalue()
    assert "NOT ALLOWED A: FAIL" in out.getvalue()
    out = io.StringIO()
    assert not agreement._report(
        Comparison("kafka-3.9", _run("reference", {"A": "PASS"}), _run("model", {"A": "PASS"})), ("PASS",), out
    )
    assert "the same verdicts" in out.getvalue()


def test_compare_cli_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--profiles", "kafka-9.9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "kafka-9.9" in err[0]
    assert main(["compare", "--target", "nothing-like-it"]) == 2
    assert "nothing-like-it" in capsys.readouterr().err


def test_a_run_whose_target_cannot_be_had_is_its_one_line_not_a_comparison(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A side whose pytest stopped before any test (a target it could not obtain or start: pytest's usage error)
    has no verdicts to compare: compare says the run's own line, not a difference on every clause."""
    from conformance.plugin.launcher import SuitesRun

    said = "ERROR: target 'tansu' did not start: tansu on 127.0.0.1:1 exited with code 1 during start-up"
    child = f"import sys; print('23 deselected in 0.70s'); print({said!r}); sys.exit(4)"
    monkeypatch.setattr(agreement, "pytest_command", lambda run: [sys.executable, "-c", child])
    run = SuitesRun("tansu", "kafka-4.0", "ci", verdicts_json=tmp_path / "tansu" / "verdicts.json")
    with pytest.raises(CompareError, match=r"^the run of tansu under kafka-4.0: target 'tansu' did not start: .*"
                                           r"\(see .*pytest\.log\)$"):  # fmt: skip
        agreement._execute(run)


def test_a_kill_table_over_the_wire_says_so_and_does_not_resume_an_in_process_one(tmp_path: Path) -> None:
    served = KillTable(tmp_path, profile="kafka-4.0", hypothesis_profile="ci", served=True)
    served.write()
    assert json.loads((tmp_path / "mutants.json").read_text())["summary"]["served"] is True
    assert "over the wire" in (tmp_path / "mutants.md").read_text()
    in_process = KillTable(tmp_path, profile="kafka-4.0", hypothesis_profile="ci")
    with pytest.raises(ValueError, match="not a kill table in process"):
        in_process.load()
