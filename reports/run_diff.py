"""Two runs compared, clause by clause (conformance.judging.changes classifies), as text for a terminal, Markdown
for a pull-request comment or a CI job summary, and JSON for a program. Also reads either side: a verdicts.json
file or a run's report folder holding one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.judging.changes import (
    CHANGE_MEANING,
    Change,
    ClauseChange,
    clause_changes,
    counts,
    regressed,
)
from conformance.judging.headline import headline_of
from conformance.judging.results import UNKNOWN_VERSION, ResultsError, RunResults, read_results
from conformance.judging.verdicts import FAILS_RUN, Verdict
from models.clauses import get_clause

VERDICTS_FILE = "verdicts.json"
FORMATS = ("text", "markdown", "json")
# The changes a report lists clause by clause; the unchanged ones are a count.
_LISTED = tuple(c for c in Change if c is not Change.UNCHANGED)
# Changes a reader rarely needs clause by clause (a run of other clauses, another profile): folded in Markdown, the
# first few in text.
_FOLDED = frozenset({Change.APPEARED, Change.DISAPPEARED, Change.CHANGED, Change.NEWLY_UNSUPPORTED})
_TEXT_MOST = 10


def verdicts_path(path: Path) -> Path:
    """The verdicts file `path` names: the file itself, or `verdicts.json` in a report folder. ResultsError (the
    cause and the fix) when there is none."""
    if path.is_dir():
        inside = path / VERDICTS_FILE
        if not inside.is_file() and (path / "campaign.json").is_file():
            raise ResultsError(
                f"{path} is a campaign's folder, not a run's: compare two campaigns with "
                f"`kafka-conformance campaign ... --baseline {path}`"
            )
        if not inside.is_file() and (path / "latest" / VERDICTS_FILE).is_file():
            raise ResultsError(
                f"{path} holds runs' folders, not a run: pass one of them, e.g. {path / 'latest'} (the last run)"
            )
        if not inside.is_file():
            raise ResultsError(
                f"{path} holds no {VERDICTS_FILE}: pass a run's report folder (the --out of kafka-conformance run) "
                f"or its {VERDICTS_FILE}"
            )
        return inside
    if not path.exists():
        raise ResultsError(
            f"{path} does not exist: pass a {VERDICTS_FILE} file or the report folder of a run that wrote one"
        )
    return path


def read_run(path: Path) -> RunResults:
    """The results of the run at `path` (a verdicts file or a report folder); ResultsError naming the fix."""
    return read_results(verdicts_path(path))


@dataclass(frozen=True)
class Side:
    """One run of the two: what the reports call it, where it was read from, its results."""

    label: str  # "old", "new", "baseline", "this run"
    source: str
    results: RunResults

    @property
    def version(self) -> str:
        return self.results.implementation_version or UNKNOWN_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "source": self.source,
            "target": self.results.target,
            "implementation_version": self.version,
            "profile": self.results.profile,
            "hypothesis_profile": self.results.hypothesis_profile,
            "seed": self.results.seed,
            "verdict": headline_of(self.results).line,
        }


@dataclass(frozen=True)
class RunDiff:
    old: Side
    new: Side
    changes: tuple[ClauseChange, ...]

    @property
    def regressed(self) -> bool:
        return regressed(self.changes)

    @property
    def exit_code(self) -> int:
        """1 when a clause regressed, else 0 (`kafka-conformance diff`)."""
        return int(self.regressed)

    def of(self, change: Change) -> tuple[ClauseChange, ...]:
        return tuple(c for c in self.changes if c.change is change)

    def summary(self) -> str:
        """`2 regressed, 1 fixed, 110 unchanged` (or `no change: 114 unchanged`)."""
        tally = counts(self.changes)
        line = ", ".join(f"{n} {change.value}" for change, n in tally.items())
        if not any(change is not Change.UNCHANGED for change in tally):
            return f"no change: {line or 'no clause on either side'}"
        return line

    def verdict_line(self) -> str:
        """The diff's last line, what its exit code says."""
        said = self.summary()
        return f"{said if self.regressed else 'no regression: ' + said}: exit {self.exit_code}"


def diff_runs(old: Side, new: Side) -> RunDiff:
    return RunDiff(old, new, clause_changes(old.results.clauses, new.results.clauses))


def _word(verdict: Verdict | None) -> str:
    return verdict.value if verdict is not None else "-"


def _area(clause: str) -> str:
    try:
        return get_clause(clause).area.value
    except KeyError:
        return "other"


@dataclass(frozen=True)
class Evidence:
    """Why a clause fails in a run: the first departure recorded for it, the test, the replay command."""

    what: str  # "list-offsets.offset: observed 6, expected 4", or the test's message line naming the clause
    test: str
    replay: str | None


def find_evidence(run: RunResults, clause: str) -> Evidence | None:
    """The evidence of `clause`'s failure in `run`; None when the run recorded none."""
    for test in run.tests_of(clause):
        if test.verdicts.get(clause) not in FAILS_RUN:
            continue
        found = next((v for v in test.violations if v.clause == clause), None)
        if found is not None:
            what = f"{found.observable}: observed {found.observed}, expected {found.expected}"
        else:
            what = next((ln.strip() for ln in test.message.splitlines() if clause in ln), "")
        return Evidence(what, test.nodeid, test.replay)
    return None


def evidence(run: RunResults, clause: str) -> str:
    """One line on why `clause` fails in `run` (find_evidence); "" when the run recorded none."""
    found = find_evidence(run, clause)
    if found is None:
        return ""
    line = f"{found.what} in {found.test}" if found.what else found.test
    return line + (f"; replay: {found.replay}" if found.replay else "")


def _md_evidence(found: Evidence) -> str:
    line = f"{_md(found.what)} in {_code(found.test)}" if found.what else _code(found.test)
    return line + (f"; replay: {_code(found.replay)}" if found.replay else "")


# --- text ----------------------------------------------------------------------------------------------------


def _side_line(side: Side) -> str:
    r = side.results
    return f"{side.label}: {side.source}: {r.target} {side.version} ({r.profile}): {headline_of(r).line}"


def to_text(diff: RunDiff) -> str:
    lines = [_side_line(diff.old), _side_line(diff.new)]
    width = max((len(c.clause) for c in diff.changes if c.change is not Change.UNCHANGED), default=0)
    for change in _LISTED:
        found = diff.of(change)
        if not found:
            continue
        lines.append(f"{change.value} ({len(found)}): {CHANGE_MEANING[change]}")
        if change in _FOLDED and len(found) > _TEXT_MOST:
            found, more = found[:_TEXT_MOST], len(found) - _TEXT_MOST
            lines.append(f"  ... the first {_TEXT_MOST}; {more} more with --format json")
        for c in found:
            lines.append(f"  {c.clause:<{width}}  {_word(c.old)} -> {_word(c.new)}")
            if change is Change.REGRESSED and (why := evidence(diff.new.results, c.clause)):
                lines.append(f"  {'':<{width}}  {why}")
    unchanged = len(diff.of(Change.UNCHANGED))
    if unchanged:
        lines.append(f"unchanged: {unchanged} clause{'s' if unchanged != 1 else ''}")
    lines.append(f"diff: {diff.verdict_line()}")
    return "\n".join(lines) + "\n"


# --- Markdown ------------------------------------------------------------------------------------------------


def _md(text: str) -> str:
    """Text for a Markdown table cell: no pipe or line break breaks the row."""
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text.replace('`', '')}`" if text else ""


def to_markdown(diff: RunDiff, *, title: str = "Kafka timestamp conformance: runs compared") -> str:
    """The diff as a pull-request comment or a CI job summary: who is compared, then one table per change that
    happened (regressions first, with the evidence of each), the unchanged clauses as a count."""
    old, new = diff.old, diff.new
    lines = [
        f"### {title}",
        "",
        f"**{_md(diff.verdict_line())}**",
        "",
        f"| | {_md(old.label)} | {_md(new.label)} |",
        "|---|---|---|",
        f"| run | {_code(old.source)} | {_code(new.source)} |",
        f"| target | {_code(old.results.target)} | {_code(new.results.target)} |",
        f"| version | {_md(old.version)} | {_md(new.version)} |",
        f"| profile | {_md(old.results.profile)} | {_md(new.results.profile)} |",
        f"| verdict | {_md(headline_of(old.results).line)} | {_md(headline_of(new.results).line)} |",
    ]
    for change in _LISTED:
        found = diff.of(change)
        if not found:
            continue
        heading = f"{change.value.capitalize()} ({len(found)})"
        table = [f"| Clause | Area | {_md(old.label)} | {_md(new.label)} |", "|---|---|---|---|"]
        table += [f"| {_code(c.clause)} | {_area(c.clause)} | {_word(c.old)} | **{_word(c.new)}** |" for c in found]
        if change in _FOLDED:
            summary = f"{heading}: {CHANGE_MEANING[change]}"
            lines += ["", f"<details><summary>{_md(summary)}</summary>", "", *table, "", "</details>"]
            continue
        lines += ["", f"#### {heading}", "", f"_{CHANGE_MEANING[change]}_", "", *table]
        if change is Change.REGRESSED:
            why = [(c.clause, find_evidence(new.results, c.clause)) for c in found]
            shown = [f"- {_code(clause)}: {_md_evidence(e)}" for clause, e in why if e is not None]
            if shown:
                lines += ["", "<details><summary>Evidence</summary>", "", *shown, "", "</details>"]
    unchanged = len(diff.of(Change.UNCHANGED))
    if unchanged:
        lines += ["", f"Unchanged: {unchanged} clause{'s' if unchanged != 1 else ''}."]
    return "\n".join(lines) + "\n"


# --- JSON ----------------------------------------------------------------------------------------------------


def to_json(diff: RunDiff) -> dict[str, Any]:
    return {
        "old": diff.old.to_json(),
        "new": diff.new.to_json(),
        "regressed": diff.regressed,
        "exit_code": diff.exit_code,
        "counts": {change.value: n for change, n in counts(diff.changes).items()},
        "changes": [
            {
                "clause": c.clause,
                "old": c.old.value if c.old is not None else None,
                "new": c.new.value if c.new is not None else None,
                "change": c.change.value,
            }
            for c in diff.changes
        ],
    }


def render(diff: RunDiff, form: str) -> str:
    """The diff in `form` (one of FORMATS)."""
    if form == "markdown":
        return to_markdown(diff)
    if form == "json":
        return json.dumps(to_json(diff), indent=2) + "\n"
    return to_text(diff)
