"""Clause coverage: for every catalogue clause, which suite tests declare it, or where it is
checked instead (`Clause.checked_elsewhere`, with the reason), or that nothing checks it.

The declared clauses are read from the suites themselves: every `suites/test_*.py` module is imported and the
`@pytest.mark.clause(...)` marks of its test functions are collected, exactly what the pytest plugin reads at
collection (so `--clauses ID` selects the tests listed here).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from types import ModuleType

from models.clauses import CLAUSES, Clause, get_clause

SUITES_PACKAGE = "suites"


class CoverageStatus(Enum):
    """How a clause is checked (not a verdict: nothing ran)."""

    SUITES = "suites"  # declared by suite tests that check it against implementations
    ELSEWHERE = "elsewhere"  # the catalogue says where it is checked instead, and why
    UNCHECKED = "unchecked"  # neither: a gap
    CONFLICT = "conflict"  # declared by suite tests and also marked as checked elsewhere: one of them is wrong


@dataclass(frozen=True)
class ClauseCoverage:
    clause: Clause
    declared_by: tuple[str, ...]  # "suites/test_x.py::test_y", sorted

    @property
    def status(self) -> CoverageStatus:
        if self.declared_by and self.clause.checked_elsewhere:
            return CoverageStatus.CONFLICT
        if self.declared_by:
            return CoverageStatus.SUITES
        if self.clause.checked_elsewhere:
            return CoverageStatus.ELSEWHERE
        return CoverageStatus.UNCHECKED


def _suite_modules(package: str) -> list[ModuleType]:
    root = importlib.import_module(package)
    return [
        importlib.import_module(f"{package}.{info.name}")
        for info in sorted(pkgutil.iter_modules(root.__path__), key=lambda i: i.name)
        if info.name.startswith("test_")
    ]


def _clause_marks(function: object) -> list[str]:
    """The clause marks of a test function, and of its `pytest.param(..., marks=...)` parameter sets (a test
    parametrized by scenario tags each case with its own clause)."""
    ids: list[str] = []
    marks = list(getattr(function, "pytestmark", []))
    for mark in list(marks):
        if getattr(mark, "name", None) == "parametrize" and len(mark.args) > 1:
            for case in mark.args[1]:
                marks.extend(getattr(case, "marks", ()))
    for mark in marks:
        if getattr(mark, "name", None) == "clause":
            ids.extend(str(a) for a in mark.args)
    return ids


def declared_clauses(package: str = SUITES_PACKAGE) -> dict[str, tuple[str, ...]]:
    """Clause ID -> the suite tests that declare it ("suites/test_x.py::test_y"). An unknown ID is a KeyError
    naming it (the plugin fails collection on it too)."""
    declared: dict[str, set[str]] = {}
    for module in _suite_modules(package):
        path = module.__name__.replace(".", "/") + ".py"
        for name, function in vars(module).items():
            if not (name.startswith("test_") and callable(function)):
                continue
            for clause_id in _clause_marks(function):
                get_clause(clause_id)
                declared.setdefault(clause_id, set()).add(f"{path}::{name}")
    return {cid: tuple(sorted(tests)) for cid, tests in declared.items()}


def clause_coverage(
    declared: Mapping[str, Iterable[str]] | None = None, clauses: Iterable[Clause] = CLAUSES
) -> list[ClauseCoverage]:
    """One row per clause, in catalogue order; `declared` defaults to what the suites declare."""
    found = declared_clauses() if declared is None else declared
    return [ClauseCoverage(c, tuple(sorted(found.get(c.id, ())))) for c in clauses]


def with_status(rows: Iterable[ClauseCoverage], status: CoverageStatus) -> list[ClauseCoverage]:
    return [r for r in rows if r.status is status]


def format_coverage(rows: list[ClauseCoverage]) -> str:
    """The clause coverage as text: the gaps and conflicts first, then the suites' clauses with their tests,
    then the clauses checked elsewhere with where and why."""
    lines: list[str] = []
    counts = {s: len(with_status(rows, s)) for s in CoverageStatus}
    lines.append(
        f"Clause coverage: {len(rows)} clauses; {counts[CoverageStatus.SUITES]} checked by suite tests, "
        f"{counts[CoverageStatus.ELSEWHERE]} checked elsewhere, {counts[CoverageStatus.UNCHECKED]} left "
        f"unchecked, {counts[CoverageStatus.CONFLICT]} in conflict."
    )
    for status, title in (
        (CoverageStatus.UNCHECKED, "Left unchecked (no suite test declares it; the catalogue names no other place)"),
        (CoverageStatus.CONFLICT, "In conflict (declared by suite tests, yet marked as checked elsewhere)"),
    ):
        chosen = with_status(rows, status)
        if chosen:
            lines += ["", f"{title}:"]
            lines += [f"  {r.clause.id:<48} {', '.join(r.declared_by) or '-'}" for r in chosen]
    suites = with_status(rows, CoverageStatus.SUITES)
    lines += ["", "Checked by suite tests:"]
    lines += [f"  {r.clause.id:<48} {', '.join(r.declared_by)}" for r in suites]
    elsewhere = with_status(rows, CoverageStatus.ELSEWHERE)
    lines += ["", "Checked elsewhere:"]
    for r in elsewhere:
        lines.append(f"  {r.clause.id:<48} {r.clause.checked_elsewhere}: {r.clause.elsewhere_reason}")
    return "\n".join(lines) + "\n"


def coverage_json(rows: list[ClauseCoverage]) -> list[dict[str, object]]:
    return [
        {
            "clause": r.clause.id,
            "status": r.status.value,
            "declared_by": list(r.declared_by),
            "checked_elsewhere": r.clause.checked_elsewhere,
            "reason": r.clause.elsewhere_reason,
        }
        for r in rows
    ]


__all__ = [
    "ClauseCoverage",
    "CoverageStatus",
    "clause_coverage",
    "coverage_json",
    "declared_clauses",
    "format_coverage",
    "with_status",
]
