"""Two campaigns' conformance matrices compared cell by cell (`campaign --baseline`): each (clause, column) with
the change conformance.judging.changes gives it, a column being a target under a profile, matched by name. Written
as Markdown (matrix-diff.md beside matrix.md): one line per column with its counts, then one row per clause that
changed somewhere, every column's cell as `OLD → NEW` where it changed and the verdict where it did not. Pure:
built from the aggregate's views, so tests build it from synthetic cells.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from conformance.campaign.aggregate import Column, ImplementationMatrix
from conformance.judging.changes import REGRESSIONS, Change, ClauseChange, classify
from conformance.judging.verdicts import Verdict

DIFF_FILE = "matrix-diff.md"
_NOT_CHECKED = "—"


def _verdict(matrix: ImplementationMatrix, clause: str, column: Column) -> Verdict | None:
    cell = matrix.cell(clause, column)
    if cell is None:
        return None
    try:
        return Verdict.parse(cell.verdict)
    except ValueError:  # a word this version does not know (a newer campaign's): no verdict to compare
        return None


@dataclass(frozen=True)
class MatrixDiff:
    columns: tuple[Column, ...]  # the new campaign's columns, then those only the old one has
    clauses: tuple[str, ...]  # every clause either campaign has a cell for, in the new matrix's order
    changes: dict[tuple[str, Column], ClauseChange]  # (clause, column) -> its change; absent: no cell either side
    old_versions: dict[Column, str]
    new_versions: dict[Column, str]

    @property
    def regressed(self) -> bool:
        return any(c.change in REGRESSIONS for c in self.changes.values())

    def counts(self, column: Column) -> dict[Change, int]:
        tally = Counter(c.change for (_, col), c in self.changes.items() if col == column)
        return {change: tally[change] for change in Change if tally[change]}

    def changed_clauses(self) -> tuple[str, ...]:
        """The clauses with a change other than UNCHANGED in some column."""
        return tuple(
            clause
            for clause in self.clauses
            if any((c := self.changes.get((clause, col))) and c.change is not Change.UNCHANGED for col in self.columns)
        )

    def summary(self) -> str:
        """`2 regressed, 1 fixed, 300 unchanged: exit 1` over every cell."""
        tally = Counter(c.change for c in self.changes.values())
        line = ", ".join(f"{tally[change]} {change.value}" for change in Change if tally[change]) or "no cell"
        return f"{line if self.regressed else 'no regression: ' + line}: exit {int(self.regressed)}"


def matrix_diff(old: ImplementationMatrix, new: ImplementationMatrix) -> MatrixDiff:
    columns = (*new.columns, *(c for c in old.columns if c not in new.columns))
    clauses = (*new.clauses, *sorted(c for c in old.clauses if c not in new.clauses))
    changes: dict[tuple[str, Column], ClauseChange] = {}
    for column in columns:
        for clause in clauses:
            before, now = _verdict(old, clause, column), _verdict(new, clause, column)
            if before is not None or now is not None:
                changes[(clause, column)] = ClauseChange(clause, before, now, classify(before, now))
    return MatrixDiff(columns, clauses, changes, dict(old.versions), dict(new.versions))


def _label(column: Column) -> str:
    return f"{column[0]} ({column[1]})"


def _cell(change: ClauseChange | None) -> str:
    if change is None:
        return _NOT_CHECKED
    if change.change is Change.UNCHANGED:
        return change.new.value if change.new is not None else _NOT_CHECKED
    old = change.old.value if change.old is not None else _NOT_CHECKED
    new = change.new.value if change.new is not None else _NOT_CHECKED
    return f"**{old} → {new}** ({change.change.value})"


def to_markdown(diff: MatrixDiff, title: str) -> str:
    lines = [f"# {title}", "", f"**{diff.summary()}**", "", "| Column | Old version | New version | Changes |"]
    lines.append("|---|---|---|---|")
    for column in diff.columns:
        counts = ", ".join(f"{n} {change.value}" for change, n in diff.counts(column).items()) or "no cell"
        old, new = diff.old_versions.get(column, _NOT_CHECKED), diff.new_versions.get(column, _NOT_CHECKED)
        lines.append(f"| {_label(column)} | {old} | {new} | {counts} |")
    changed = diff.changed_clauses()
    lines += [""]
    if not changed:
        return "\n".join([*lines, "No cell changed."]) + "\n"
    lines += [
        f"Clauses with a change in some column ({len(changed)}); `OLD → NEW` where a cell changed, "
        f"`{_NOT_CHECKED}` where a campaign has no cell.",
        "",
        "| Clause | " + " | ".join(_label(c) for c in diff.columns) + " |",
        "|---|" + "---|" * len(diff.columns),
    ]
    for clause in changed:
        cells = " | ".join(_cell(diff.changes.get((clause, column))) for column in diff.columns)
        lines.append(f"| `{clause}` | {cells} |")
    return "\n".join(lines) + "\n"
