"""What changed between two runs, clause by clause: the pure classification behind `kafka-conformance diff`,
`run --baseline` and `campaign --baseline`.

Each verdict has a standing (what it says about the clause for a CI job), and a change is read from the
standings of the old and the new verdict:

- failing: FAIL, UNEXPECTED-PASS, TIMEOUT, CRASHED (conformance.judging.verdicts.FAILS_RUN: what makes a run red)
- undecided: BLOCKED (every test of the clause stopped at another failure first, or the target was lost)
- known: KNOWN, NON-STRICT (departures that do not fail a run)
- holds: PASS
- not checked: UNSUPPORTED, N/A

Only REGRESSED makes `diff` exit 1: a clause that did not fail and now does. A clause newly KNOWN is not a
regression (an expectations entry covers it, and whether a randomised run meets a known departure depends on its
draws: a PASS/KNOWN flip between two runs is not news). A clause newly BLOCKED is not one either: nothing was
learnt about it, and the failure that blocked it, or the lost target, is a change of its own (and fails the run).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

from conformance.judging.verdicts import DEPARTS, FAILS_RUN, Verdict


class Standing(Enum):
    """What a verdict says about its clause, for comparing two runs."""

    FAILING = "failing"
    UNDECIDED = "undecided"
    KNOWN = "known"
    HOLDS = "holds"
    NOT_CHECKED = "not checked"


def standing(verdict: Verdict) -> Standing:
    if verdict in FAILS_RUN:
        return Standing.FAILING
    if verdict is Verdict.BLOCKED:
        return Standing.UNDECIDED
    if verdict in DEPARTS:
        return Standing.KNOWN
    if verdict is Verdict.PASS:
        return Standing.HOLDS
    return Standing.NOT_CHECKED


class Change(Enum):
    """What became of one clause between an old run and a new one (in the order a report lists them)."""

    REGRESSED = "regressed"
    FIXED = "fixed"
    NEWLY_KNOWN = "newly known"
    NO_LONGER_KNOWN = "no longer known"
    NEWLY_BLOCKED = "newly blocked"
    UNBLOCKED = "unblocked"
    NEWLY_UNSUPPORTED = "newly unsupported"
    NEWLY_SUPPORTED = "newly supported"
    CHANGED = "changed"
    APPEARED = "appeared"
    DISAPPEARED = "disappeared"
    UNCHANGED = "unchanged"


# One sentence per change, for the reports and the docs (docs/comparing-runs.md has the table).
CHANGE_MEANING: dict[Change, str] = {
    Change.REGRESSED: "it did not fail before and fails now (FAIL, UNEXPECTED-PASS, TIMEOUT or CRASHED)",
    Change.FIXED: "it failed before and holds now (PASS)",
    Change.NEWLY_KNOWN: "it is a known departure now (KNOWN, NON-STRICT), and was not one before",
    Change.NO_LONGER_KNOWN: "a known departure before, it holds now (fixed, or not met by this run's draws)",
    Change.NEWLY_BLOCKED: "it is not decided now (BLOCKED): its tests stopped at another failure, or the target was "
    "lost",
    Change.UNBLOCKED: "not decided before (BLOCKED), it holds now",
    Change.NEWLY_UNSUPPORTED: "it was checked before and is not now (UNSUPPORTED, N/A)",
    Change.NEWLY_SUPPORTED: "it was not checked before (UNSUPPORTED, N/A) and holds now",
    Change.CHANGED: "another verdict of the same standing (FAIL and UNEXPECTED-PASS, KNOWN and NON-STRICT, "
    "UNSUPPORTED and N/A)",
    Change.APPEARED: "only the new run has a verdict for it (a new clause, or a run of other clauses)",
    Change.DISAPPEARED: "only the old run has a verdict for it",
    Change.UNCHANGED: "the same verdict in both runs",
}

# The changes that make `diff` (and `run --baseline`, `campaign --baseline`) exit 1.
REGRESSIONS: frozenset[Change] = frozenset({Change.REGRESSED})


def classify(old: Verdict | None, new: Verdict | None) -> Change:
    """The change from `old` to `new` (None: the run has no verdict for the clause). Total over every pair; the
    first rule that applies decides: a verdict missing on one side, the same verdict, the same standing, then by
    the new verdict's standing (failing: regressed; undecided: newly blocked; not checked: newly unsupported;
    known: newly known), and a clause that holds now by what it was before."""
    if old is None and new is None:
        raise ValueError("classify needs a verdict on at least one side")
    if old is None:
        return Change.APPEARED
    if new is None:
        return Change.DISAPPEARED
    if old is new:
        return Change.UNCHANGED
    before, now = standing(old), standing(new)
    if before is now:
        return Change.CHANGED
    by_new = {
        Standing.FAILING: Change.REGRESSED,
        Standing.UNDECIDED: Change.NEWLY_BLOCKED,
        Standing.NOT_CHECKED: Change.NEWLY_UNSUPPORTED,
        Standing.KNOWN: Change.NEWLY_KNOWN,
    }
    if now in by_new:
        return by_new[now]
    # It holds now.
    return {
        Standing.FAILING: Change.FIXED,
        Standing.KNOWN: Change.NO_LONGER_KNOWN,
        Standing.UNDECIDED: Change.UNBLOCKED,
        Standing.NOT_CHECKED: Change.NEWLY_SUPPORTED,
    }[before]


@dataclass(frozen=True)
class ClauseChange:
    clause: str
    old: Verdict | None
    new: Verdict | None
    change: Change


def clause_changes(old: Mapping[str, Verdict], new: Mapping[str, Verdict]) -> tuple[ClauseChange, ...]:
    """Every clause of either side with its change, in the order of Change, then by clause id."""
    clauses = sorted(set(old) | set(new))
    found = [ClauseChange(c, old.get(c), new.get(c), classify(old.get(c), new.get(c))) for c in clauses]
    order = {change: i for i, change in enumerate(Change)}
    return tuple(sorted(found, key=lambda c: (order[c.change], c.clause)))


def counts(changes: Iterable[ClauseChange]) -> dict[Change, int]:
    """How many clauses had each change, in the order of Change (only those present)."""
    tally = Counter(c.change for c in changes)
    return {change: tally[change] for change in Change if tally[change]}


def regressed(changes: Iterable[ClauseChange]) -> bool:
    return any(c.change in REGRESSIONS for c in changes)
