"""Two campaigns' matrices compared (reports/matrix_diff.py, `campaign --baseline`), from synthetic cells: each
cell's change, columns and clauses only one campaign has, the Markdown, and the campaign command's wiring with the
aggregation replaced (no Spark here; tests/test_campaign.py runs real campaigns, e2e)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from conformance.campaign import aggregate
from conformance.campaign.aggregate import Cell, ImplementationMatrix, Matrix, implementation_matrix
from conformance.campaign.tasks import CampaignError
from conformance.commands import campaign
from conformance.judging.changes import Change
from conformance.judging.verdicts import Verdict
from reports.matrix_diff import DIFF_FILE, matrix_diff, to_markdown

P = "kafka-4.0"
V = Verdict
LOOKUP, RANGE, INDEX = "LO.first-ge-target", "VAL.range-before-after", "IDX.strictly-increasing"


def _matrix(cells: dict[tuple[str, str], Verdict], versions: dict[str, str] | None = None) -> Matrix:
    """(clause, target) -> verdict, every target under profile P."""
    table = {(clause, (target, P)): Cell(v.value, 1, None) for (clause, target), v in cells.items()}
    columns = sorted({col for _, col in table})
    found = {(t, P): version for t, version in (versions or {}).items()}
    return Matrix(sorted({c for c, _ in table}), columns, table, [], found)


OLD = _matrix(
    {(LOOKUP, "tansu"): V.PASS, (RANGE, "tansu"): V.FAIL, (INDEX, "tansu"): V.PASS,
     (LOOKUP, "kfake"): V.PASS, (LOOKUP, "noida"): V.KNOWN, (LOOKUP, "mutant:lookup-last-match"): V.FAIL},
    {"tansu": "0.5.0", "kfake": "v1.0"},
)  # fmt: skip
NEW = _matrix(
    {(LOOKUP, "tansu"): V.FAIL, (RANGE, "tansu"): V.PASS, (INDEX, "tansu"): V.PASS,
     (LOOKUP, "kfake"): V.TIMEOUT, (LOOKUP, "reference"): V.PASS, (LOOKUP, "mutant:lookup-last-match"): V.PASS},
    {"tansu": "0.6.0", "kfake": "v1.1"},
)  # fmt: skip


def _implementations(matrix: Matrix) -> ImplementationMatrix:
    return implementation_matrix(matrix)


def test_each_cell_has_its_change() -> None:
    diff = matrix_diff(_implementations(OLD), _implementations(NEW))
    change = {(clause, col[0]): c.change for (clause, col), c in diff.changes.items()}
    assert change == {
        (LOOKUP, "tansu"): Change.REGRESSED,
        (RANGE, "tansu"): Change.FIXED,
        (INDEX, "tansu"): Change.UNCHANGED,
        (LOOKUP, "kfake"): Change.REGRESSED,  # a task that timed out fails a campaign
        (LOOKUP, "reference"): Change.APPEARED,
        (LOOKUP, "noida"): Change.DISAPPEARED,
    }  # the mutant is not a column of the matrix: its row of the kill table is graded on its own
    assert diff.regressed
    assert [c[0] for c in diff.columns] == ["reference", "kfake", "tansu", "noida"]
    assert diff.counts(("tansu", P)) == {Change.REGRESSED: 1, Change.FIXED: 1, Change.UNCHANGED: 1}
    assert set(diff.changed_clauses()) == {LOOKUP, RANGE}  # INDEX is unchanged everywhere


def test_no_regression_when_nothing_got_worse() -> None:
    diff = matrix_diff(_implementations(NEW), _implementations(NEW))
    assert not diff.regressed and diff.changed_clauses() == ()
    assert diff.summary() == f"no regression: {len(diff.changes)} unchanged: exit 0"
    assert "No cell changed." in to_markdown(diff, "t")


def test_markdown_has_a_line_per_column_and_a_row_per_changed_clause() -> None:
    md = to_markdown(matrix_diff(_implementations(OLD), _implementations(NEW)), "Campaign b against a")
    summary = "**2 regressed, 1 fixed, 1 appeared, 1 disappeared, 1 unchanged: exit 1**"
    assert md.startswith(f"# Campaign b against a\n\n{summary}")
    assert f"| tansu ({P}) | 0.5.0 | 0.6.0 | 1 regressed, 1 fixed, 1 unchanged |" in md
    assert f"| noida ({P}) | — | — | 1 disappeared |" in md
    row = next(line for line in md.splitlines() if line.startswith(f"| `{LOOKUP}` |"))
    assert row == (f"| `{LOOKUP}` | **— → PASS** (appeared) | **PASS → TIMEOUT** (regressed) | "
                   "**PASS → FAIL** (regressed) | **KNOWN → —** (disappeared) |")  # fmt: skip
    assert f"| `{INDEX}` |" not in md  # unchanged everywhere: not a row
    assert f"| `{RANGE}` | — | — | **FAIL → PASS** (fixed) | — |" in md


def test_the_campaign_writes_the_diff_against_its_baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """campaign --baseline: both campaigns' rows aggregated (here: replaced by the synthetic matrices), the diff
    written to matrix-diff.md, the counts per column logged, a regression returned."""
    old_dir, new_dir = tmp_path / "old", tmp_path / "new"
    read: list[Path] = []

    def fake_aggregate(spark: object, rows: Path) -> Matrix:
        read.append(rows)
        return OLD if rows.parent == old_dir else NEW

    monkeypatch.setattr(aggregate, "aggregate", fake_aggregate)
    new_dir.mkdir()
    log = io.StringIO()
    assert campaign.write_baseline_diff(None, new_dir, old_dir, "c0ffee", log) is True
    assert read == [old_dir / "rows", new_dir / "rows"]
    text = (new_dir / DIFF_FILE).read_text(encoding="utf-8")
    assert text.startswith(f"# Conformance matrix of campaign c0ffee against {old_dir}")
    assert f"against the baseline {old_dir}: 2 regressed" in log.getvalue()
    assert f"  tansu ({P}): 1 regressed, 1 fixed, 1 unchanged\n" in log.getvalue()


def test_a_baseline_that_is_not_a_campaign_is_refused(tmp_path: Path) -> None:
    assert campaign.check_baseline(None) is None
    for path in (tmp_path / "nope", tmp_path):
        with pytest.raises(CampaignError, match=r"not the folder of a campaign .* pass the --out of an earlier"):
            campaign.check_baseline(str(path))
    (tmp_path / "rows").mkdir()
    (tmp_path / "rows" / "t1.parquet").write_bytes(b"")
    assert campaign.check_baseline(str(tmp_path)) == tmp_path
