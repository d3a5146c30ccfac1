"""The run's verdict in one line, the same wherever it is shown (the terminal, the report's first page, the
report's title): what the exit code says, with the counts that make it so.

A run fails (exit 1) on a new failure: a clause FAIL or UNEXPECTED-PASS no expectation covers, a test the
harness broke in, a target lost, and under --fail-on-stale a STALE expectation. KNOWN and NON-STRICT departures
and UNSUPPORTED clauses do not fail it; the line names them after the failures, so "no new failure" is not read
as "no departure". Pure: the callers pass what they know.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from conformance.judging.harness import HARNESS_ERROR_PREFIX
from conformance.judging.results import RunResults
from conformance.judging.verdicts import TRIAGE_ORDER, EntryStatus, Verdict

NEW_FAILURES: tuple[Verdict, ...] = (Verdict.FAIL, Verdict.UNEXPECTED_PASS)
# Named after the failures when present: departures that do not fail the run, then what was not decided.
_ALSO: tuple[Verdict, ...] = tuple(v for v in TRIAGE_ORDER if v not in NEW_FAILURES and v is not Verdict.PASS)
# Expectations entries worth a word in the line (MATCHED is what KNOWN already says).
_ENTRIES: tuple[EntryStatus, ...] = (EntryStatus.STALE, EntryStatus.NOT_EXERCISED)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class Headline:
    """The verdict line and whether it says the run failed."""

    failed: bool
    line: str
    incomplete: str | None = None

    def with_exit(self, code: int) -> str:
        """The line as the report's first page shows it: "exit 0: no new failure: 0 FAIL, ..."."""
        return f"exit {code}: {self.line}"


def headline(
    clauses: Mapping[str, Verdict],
    *,
    exit_status: int,
    entries: Iterable[EntryStatus] = (),
    harness_broke: int = 0,
    target_lost: bool = False,
    incomplete: str | None = None,
    fail_on_stale: bool = False,
) -> Headline:
    """The line for a run whose pytest exit status is `exit_status`: "no new failure: 0 FAIL, 0 UNEXPECTED-PASS;
    35 KNOWN, 8 NON-STRICT, 24 UNSUPPORTED; 4 expectations NOT-EXERCISED" or "3 new failures: 2 FAIL, 1
    UNEXPECTED-PASS; ...". `incomplete` (a run stopped early) leads the line: its verdicts cover what finished.
    With `fail_on_stale` a STALE entry is a new failure, named among them."""
    counts = Counter(clauses.values())
    failures = sum(counts[v] for v in NEW_FAILURES)
    parts = [", ".join(f"{counts[v]} {v.value}" for v in NEW_FAILURES)]
    if harness_broke:
        parts[0] += f", the harness broke in {_plural(harness_broke, 'test')}"
    if target_lost:
        parts[0] += ", the target was lost"
    statuses = Counter(entries)
    stale = statuses[EntryStatus.STALE] if fail_on_stale else 0
    if stale:
        parts[0] += f", {_plural(stale, 'expectation')} STALE (--fail-on-stale)"
    also = [f"{counts[v]} {v.value}" for v in _ALSO if counts[v]]
    if counts[Verdict.PASS]:
        also.append(f"{counts[Verdict.PASS]} PASS")
    if also:
        parts.append(", ".join(also))
    noted = [
        f"{_plural(statuses[s], 'expectation')} {s.value}"
        for s in _ENTRIES
        if statuses[s] and not (s is EntryStatus.STALE and stale)
    ]
    if noted:
        parts.append(", ".join(noted))
    body = "; ".join(parts)
    count = failures + harness_broke + int(target_lost) + stale
    if incomplete:  # pytest says "interrupted" (2) whatever finished: the counts speak for what did
        line = f"{_plural(count, 'new failure')}" if count else "no new failure in what finished"
        return Headline(bool(count), f"INCOMPLETE ({incomplete}): {line}: {body}", incomplete)
    # pytest's own word decides: a test error outside any clause (a fixture, a collection error) fails it too.
    if exit_status == 0:
        return Headline(False, f"no new failure: {body}")
    if count:
        return Headline(True, f"{_plural(count, 'new failure')}: {body}")
    return Headline(True, f"the run failed (pytest exit {exit_status}) outside any clause verdict: {body}")


def headline_of(results: RunResults) -> Headline:
    """The line of a run's verdicts.json."""
    return headline(
        results.clauses,
        exit_status=results.exit_status,
        entries=(e.status for e in results.expectations),
        harness_broke=sum(1 for t in results.tests if t.message.startswith(HARNESS_ERROR_PREFIX)),
        target_lost=bool(results.target_lost),
        incomplete=results.incomplete,
        fail_on_stale=results.fail_on_stale,
    )
