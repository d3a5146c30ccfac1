"""Tests of `kafka-conformance clauses` (conformance/cli.py), run in-process through main()."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from models.clauses import CLAUSES, clauses_for_profile
from models.rules import UNTESTABLE

REPO = Path(__file__).resolve().parents[1]
SEMANTICS = REPO.parent / "shared/spec/SEMANTICS.md"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _assert_usage_error(code: int, out: str, err: str, *needles: str) -> None:
    """Bad input: exit 2, nothing on stdout, one line on stderr naming the problem, no traceback."""
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("kafka-conformance: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_table_lists_every_clause(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "clauses")
    assert code == 0 and err == ""
    for clause in CLAUSES:
        assert clause.id in out
    assert "LO.first-ge-target" in out and "KIP-79" in out
    assert f"{len(CLAUSES)} clauses" in out
    assert max(len(line) for line in out.splitlines()) <= 120


def test_json_has_every_clause_with_all_fields(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "clauses", "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data) >= 70
    assert [d["id"] for d in data] == [c.id for c in CLAUSES]
    first, clause = data[0], CLAUSES[0]
    assert set(first) == {"id", "area", "level", "rules", "kip", "profiles", "summary", "vectors"}
    assert first["area"] == clause.area.value and first["level"] == clause.level.value
    assert first["rules"] == list(clause.rules) and first["profiles"] == list(clause.profiles)


def test_profile_filter(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "clauses", "--json", "--profile", "kafka-0.10.0")
    assert code == 0
    ids = [d["id"] for d in json.loads(out)]
    assert ids == [c.id for c in clauses_for_profile("kafka-0.10.0")]
    assert "VAL.range-symmetric" in ids
    assert "IDX.strictly-increasing" not in ids  # no time index before KIP-33


@pytest.mark.parametrize("spelling", ["list-offsets", "LIST_OFFSETS", "LO"])
def test_area_filter(capsys: pytest.CaptureFixture[str], spelling: str) -> None:
    code, out, _ = _run(capsys, "clauses", "--json", "--area", spelling, "--profile", "kafka-4.0")
    assert code == 0
    data = json.loads(out)
    assert data and all(d["area"] == "list-offsets" and "kafka-4.0" in d["profiles"] for d in data)


def test_coverage_passes_and_lists_untested(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "clauses", "--coverage")
    assert code == 0
    assert "uncovered: none" in out
    for rule_id in UNTESTABLE:
        assert rule_id in out
    assert "not modelled" in out


def test_coverage_against_the_digest(capsys: pytest.CaptureFixture[str]) -> None:
    if not SEMANTICS.is_file():
        pytest.skip(f"{SEMANTICS} not found (CI checks it out beside the repository)")
    code, out, _ = _run(capsys, "clauses", "--coverage", "--semantics", str(SEMANTICS))
    assert code == 0, out
    assert "uncovered: none" in out


def test_coverage_fails_on_a_newer_digest(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    digest = tmp_path / "SEMANTICS.md"
    digest.write_text(
        "**VAL-4 Range rule.** ...\n**VAL-16 A rule added later.** ...\n| DIS-11 | KIP | code |\n",
        encoding="utf-8",
    )
    code, out, _ = _run(capsys, "clauses", "--semantics", str(digest))
    assert code == 1
    assert "VAL-16" in out and "DIS-11" in out
    assert "SEMANTICS rules: 3" in out


def test_missing_semantics_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.md"
    _assert_usage_error(*_run(capsys, "clauses", "--coverage", "--semantics", str(missing)), str(missing))


def test_semantics_without_rules(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.md"
    empty.write_text("# nothing here\n", encoding="utf-8")
    _assert_usage_error(*_run(capsys, "clauses", "--semantics", str(empty)), "no rule IDs")


def test_semantics_is_a_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _assert_usage_error(*_run(capsys, "clauses", "--semantics", str(tmp_path)), "--semantics PATH")


def test_unknown_profile(capsys: pytest.CaptureFixture[str]) -> None:
    _assert_usage_error(*_run(capsys, "clauses", "--profile", "kafka-9.9"), "kafka-9.9", "kafka-4.0")


def test_unknown_area(capsys: pytest.CaptureFixture[str]) -> None:
    _assert_usage_error(*_run(capsys, "clauses", "--area", "storage"), "storage", "list-offsets")


def test_coverage_with_filters_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    _assert_usage_error(*_run(capsys, "clauses", "--coverage", "--profile", "kafka-4.0"), "--profile")


def test_missing_command(capsys: pytest.CaptureFixture[str]) -> None:
    _assert_usage_error(*_run(capsys), "clauses")


@pytest.mark.parametrize("argv", [["frobnicate"], ["clauses", "--bogus"]])
def test_bad_arguments(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    _assert_usage_error(*_run(capsys, *argv), "--help")


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "clauses", "--help")
    assert code == 0
    assert "--coverage" in out


def test_python_dash_m_conformance() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "conformance", "clauses", "--json", "--area", "consumer-view"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert {d["area"] for d in json.loads(result.stdout)} == {"consumer-view"}
