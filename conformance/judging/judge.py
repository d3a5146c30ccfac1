"""The judgement of one test, and of a run's expectations: pure functions from what the checks recorded and
what the expectations file says to verdicts (the pytest plugin only collects the evidence and hands it
over; docs/architecture.md, the wings of conformance/).

Rules, per declared clause of a test (and every clause a violation names):
- FAIL where a violation no expectation covers was raised; KNOWN where a covered one was recorded;
  NON-STRICT where a SHOULD/MAY one was; PASS where a check of it ran and held, and nothing departed;
- in a test that failed before any check of it held: BLOCKED (not decided; another test may decide it);
- in a test that passed without any check of it: N/A where the profile has no such clause, else
  UNSUPPORTED (the target never showed what the check needs), never PASS;
- a failure that is not a clause violation (an exception) is FAIL for every declared clause not KNOWN, unless
  it is the harness's own error (conformance.judging.harness): then the clauses no check decided are BLOCKED,
  never FAIL, and the test still fails (a broken harness is no green run);
- a pinned entry that covered nothing in its own test is UNEXPECTED-PASS for its clause, the test fails,
  and the test's other clauses keep their verdicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from conformance.judging.checks import ClauseViolation
from conformance.judging.expectations import Expectation
from conformance.judging.verdicts import NOT_APPLICABLE_PREFIX, EntryStatus, Verdict, most_severe


@dataclass(frozen=True)
class Evidence:
    """What one test's call showed (the plugin gathers it from pytest and conformance.judging.checks)."""

    nodeid: str
    clauses: tuple[str, ...]  # declared with @pytest.mark.clause
    in_profile: frozenset[str]  # the declared clauses that apply to the run's profile
    skipped: str | None = None  # the skip reason when the test was skipped (UNSUPPORTED / N/A prefixes)
    held: frozenset[str] = frozenset()  # clauses with at least one check that held
    covered: tuple[tuple[ClauseViolation, int], ...] = ()  # violations an entry covered (its index)
    lenient: tuple[ClauseViolation, ...] = ()  # SHOULD/MAY violations let through
    raised: tuple[ClauseViolation, ...] = ()  # uncovered violations that failed the test
    error: str | None = None  # a failure that is not a clause violation
    harness_error: bool = False  # ... raised by the harness's own code (conformance.judging.harness), not the target
    unsupported: str | None = None  # an operation the target lacks ended the test
    pinned: tuple[int, ...] = ()  # indexes of the entries pinned on this test


@dataclass(frozen=True)
class Judgement:
    verdicts: dict[str, Verdict]
    failed: bool  # the pytest outcome: failed
    skipped: bool  # ... skipped (UNSUPPORTED / N/A), without a failure
    known: bool  # passed apart from KNOWN / NON-STRICT departures (shown as an expected failure)
    summary: str  # what pytest shows: the xfail reason, the UNEXPECTED-PASS text
    unexpected: tuple[int, ...] = ()  # pinned entries (indexes) that covered nothing here
    matched: tuple[int, ...] = field(default=())  # entries (indexes) that covered something here


def judge(evidence: Evidence, entries: tuple[Expectation, ...]) -> Judgement:
    """The verdicts of one test (see the module doc)."""
    ev = evidence
    if ev.skipped is not None:
        # A clause the profile does not have is N/A whatever stopped the test (catalogue data, never a
        # missing capability); the others are what the skip says.
        verdict = Verdict.NOT_APPLICABLE if ev.skipped.startswith(NOT_APPLICABLE_PREFIX) else Verdict.UNSUPPORTED
        verdicts = {cid: verdict if cid in ev.in_profile else Verdict.NOT_APPLICABLE for cid in ev.clauses}
        return Judgement(verdicts, failed=False, skipped=True, known=False, summary=ev.skipped)
    raised = {v.clause_id for v in ev.raised}
    covered = {v.clause_id for v, _ in ev.covered}
    lenient = {v.clause_id for v in ev.lenient}
    broke = bool(ev.raised) or (ev.error is not None and ev.unsupported is None)
    verdicts: dict[str, Verdict] = {}
    for cid in dict.fromkeys((*ev.clauses, *sorted(raised | covered | lenient))):
        found = [
            v
            for v, hit in (
                (Verdict.FAIL, cid in raised),
                (Verdict.KNOWN, cid in covered),
                (Verdict.NON_STRICT, cid in lenient),
                (Verdict.PASS, cid in ev.held),
            )
            if hit
        ]
        if found:
            verdicts[cid] = found[0]
        elif cid not in ev.in_profile:
            verdicts[cid] = Verdict.NOT_APPLICABLE
        elif ev.unsupported is not None and not broke:
            verdicts[cid] = Verdict.UNSUPPORTED
        elif broke:
            verdicts[cid] = Verdict.BLOCKED
        else:
            verdicts[cid] = Verdict.NOT_APPLICABLE if cid not in ev.in_profile else Verdict.UNSUPPORTED
    if ev.error is not None and ev.unsupported is None and not ev.raised and not ev.harness_error:
        # The test failed outside any clause check: nothing says which clause, so each declared one that is
        # not already a known departure fails (a person reads the error). A harness error says nothing about
        # the implementation: its clauses stay BLOCKED.
        verdicts.update({cid: Verdict.FAIL for cid in ev.clauses if verdicts[cid] is not Verdict.KNOWN})
    matched = tuple(sorted({i for _, i in ev.covered}))
    # A pin whose test the harness broke was not replayed to its end: nothing says it no longer fails.
    unexpected = () if ev.harness_error else tuple(i for i in ev.pinned if i not in matched)
    for i in unexpected:
        clause = entries[i].clause
        if verdicts.get(clause) is not Verdict.FAIL:
            verdicts[clause] = Verdict.UNEXPECTED_PASS
    failed = broke or bool(unexpected)
    skipped = not failed and ev.unsupported is not None
    known = not failed and not skipped and bool(ev.covered or ev.lenient)
    if unexpected:
        summary = unexpected_pass_text([entries[i] for i in unexpected], ev)
    elif known:
        summary = known_text(ev, entries)
    elif skipped:
        summary = str(ev.unsupported)
    else:
        summary = ""
    return Judgement(verdicts, failed=failed, skipped=skipped, known=known, summary=summary,
                     unexpected=unexpected, matched=matched)  # fmt: skip


def known_text(ev: Evidence, entries: tuple[Expectation, ...]) -> str:
    """The xfail reason of a test whose only departures are known or not MUSTs: one line per entry/clause."""
    lines: list[str] = []
    for i in dict.fromkeys(i for _, i in ev.covered):
        e = entries[i]
        lines.append(f"KNOWN: {e.clause} on {'/'.join(o.id for o in e.observables)}: {e.reason} ({e.link})")
    for v in {v.clause_id: v for v in ev.lenient}.values():
        lines.append(f"NON-STRICT: {v.clause_id} ({v.clause.level.value}) on {v.observable.id}")
    return "; ".join(lines)


def unexpected_pass_text(stale: list[Expectation], ev: Evidence) -> str:
    """Why a pinned entry is reported: removal advice only where nothing else in the test failed."""
    others = sorted({v.clause_id for v in ev.raised})
    if ev.error is not None and not others:
        others = ["an error outside the clause checks"]
    parts = []
    for e in stale:
        head = (
            f"UNEXPECTED-PASS: {e.describe()} was expected to fail ({e.reason}, {e.link}), but its pinned "
            "example ran without that departure: "
        )
        if others:
            parts.append(
                head + f"this test also failed on {', '.join(others)}, which may have changed the scenario the pin "
                "replays; judge that failure first, then run again before removing the entry"
            )
        else:
            parts.append(head + "the expectation is stale: remove the entry from the expectations file")
    return "\n".join(parts)


def clause_verdicts(by_clause: Mapping[str, Iterable[Verdict | str]]) -> dict[str, Verdict]:
    """One verdict per clause over all its tests: the most severe wins (conformance.judging.verdicts.PRECEDENCE)."""
    out: dict[str, Verdict] = {}
    for cid, verdicts in by_clause.items():
        winner = most_severe(verdicts)
        if winner is not None:
            out[cid] = winner
    return out


@dataclass(frozen=True)
class RunRecord:
    """What the run-level judgement needs from one test: its node id, the (clause, observable ID) pairs its
    checks ran for, and the entries it matched or reported UNEXPECTED-PASS."""

    nodeid: str
    checked: frozenset[tuple[str, str]]
    matched: frozenset[int]
    unexpected: frozenset[int]


def entry_statuses(
    entries: tuple[Expectation, ...], tests: Iterable[RunRecord], *, complete: bool = True
) -> list[EntryStatus]:
    """What became of each entry in a run: MATCHED, UNEXPECTED-PASS (pinned, and its test ran without the
    departure), STALE (its clause and observable were checked where it applies, and it covered nothing) or
    NOT-EXERCISED (no such check ran: a partial run says nothing; or the entry's departure shows only by `chance`,
    so a run that did not meet it says nothing either). In a run stopped early (`complete` false) an entry for
    the whole run is never STALE: the test that would have matched it may be one that never ran."""
    tests = list(tests)
    out: list[EntryStatus] = []
    for i, entry in enumerate(entries):
        if any(i in t.unexpected for t in tests):
            out.append(EntryStatus.UNEXPECTED_PASS)
        elif any(i in t.matched for t in tests):
            out.append(EntryStatus.MATCHED)
        elif entry.audit_only or entry.chance is not None:  # never checked here, or not known to have occurred
            out.append(EntryStatus.NOT_EXERCISED)
        elif (complete or (entry.test is not None and not entry.whole_run)) and any(
            (entry.clause, obs.id) in t.checked
            for t in tests
            if entry.test is None or entry.whole_run or t.nodeid == entry.test
            for obs in entry.observables
        ):
            out.append(EntryStatus.STALE)
        else:
            out.append(EntryStatus.NOT_EXERCISED)
    return out
