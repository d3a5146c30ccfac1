"""The verdict vocabulary: every verdict word, its precedence and what it means for a run, a campaign row,
a mutant kill and an Allure result. Defined here once; every other module imports it (README.md,
"Reading the verdict"). Nothing here imports the harness, so reports/ may import it freely.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum, StrEnum

from models.clauses import Level


class Verdict(Enum):
    """A clause's result for one implementation and profile (or one test, or one campaign row)."""

    PASS = "PASS"  # a check of the clause ran and held
    FAIL = "FAIL"  # a check failed and no expectation covers what was observed
    UNSUPPORTED = "UNSUPPORTED"  # a capability or API version the implementation lacks
    NOT_APPLICABLE = "N/A"  # the clause does not apply to the chosen profile (catalogue data)
    KNOWN = "KNOWN"  # a failure an expectation entry covers (clause, observable, matcher, scope), reproduced
    UNEXPECTED_PASS = "UNEXPECTED-PASS"  # a pinned expectation whose example no longer fails: stale
    NON_STRICT = "NON-STRICT"  # a SHOULD/MAY clause not met
    # Not checked: every test of the clause stopped at another clause's failure first (a test stops at its
    # first failing check), or the target was lost during the run, so nothing is known about it yet.
    BLOCKED = "BLOCKED"
    # Campaign rows only: the task ran past its budget, or its process died.
    TIMEOUT = "TIMEOUT"
    CRASHED = "CRASHED"

    @classmethod
    def parse(cls, word: str) -> Verdict:
        """The verdict of a word as written in verdicts.json, a Parquet row or a report."""
        return cls(word)


V = Verdict

# A clause's verdict over several tests (or seeds): the first of these that occurs wins. A failure outranks a
# pass; UNSUPPORTED and N/A only when nothing ran.
PRECEDENCE: tuple[Verdict, ...] = (
    V.FAIL, V.UNEXPECTED_PASS, V.CRASHED, V.TIMEOUT, V.KNOWN, V.NON_STRICT, V.PASS, V.BLOCKED, V.UNSUPPORTED,
    V.NOT_APPLICABLE,
)  # fmt: skip

# The order a person triages in (reports): what needs action first, what holds last.
TRIAGE_ORDER: tuple[Verdict, ...] = (
    V.FAIL, V.UNEXPECTED_PASS, V.CRASHED, V.TIMEOUT, V.BLOCKED, V.KNOWN, V.NON_STRICT, V.UNSUPPORTED,
    V.NOT_APPLICABLE, V.PASS,
)  # fmt: skip

# What makes a user's CI job red: something new (an uncovered failure, a stale pinned expectation) or a run
# that did not finish. KNOWN, NON-STRICT, UNSUPPORTED, N/A and BLOCKED do not (a BLOCKED clause's blocking
# test fails on its own account).
FAILS_RUN: frozenset[Verdict] = frozenset({V.FAIL, V.UNEXPECTED_PASS, V.CRASHED, V.TIMEOUT})

# The implementation was shown to depart from the clause (known or not): a campaign row's "failing" and the
# time to its first failure.
DEPARTS: frozenset[Verdict] = frozenset({V.FAIL, V.KNOWN, V.NON_STRICT, V.UNEXPECTED_PASS})

# A seeded mutant is killed when a clause it declares gets one of these (mutants run without expectations,
# so a departure is a FAIL, or NON-STRICT for a SHOULD clause).
KILLS: frozenset[Verdict] = frozenset({V.FAIL, V.NON_STRICT})

# Allure result status per verdict. Allure 3 counts every "failed" result as failed in a report's header, a known
# issue's or a muted one's too (its resolutions only take them out of the success rate and the quality gate), so a
# departure that does not fail the run (KNOWN, NON-STRICT) is "skipped" with Allure's `known` flag, as pytest's
# xfail and JUnit's skipped: the header then counts as failed what fails the run (docs/report-counts.md).
# UNSUPPORTED and N/A were not checked: skipped. BLOCKED and the campaign's TIMEOUT/CRASHED did not decide the
# clause: broken.
ALLURE_STATUS: dict[Verdict, str] = {
    V.PASS: "passed",
    V.FAIL: "failed",
    V.UNEXPECTED_PASS: "failed",
    V.KNOWN: "skipped",
    V.NON_STRICT: "skipped",
    V.BLOCKED: "broken",
    V.TIMEOUT: "broken",
    V.CRASHED: "broken",
    V.UNSUPPORTED: "skipped",
    V.NOT_APPLICABLE: "skipped",
}

# One sentence a report shows beside each verdict.
MEANING: dict[Verdict, str] = {
    V.PASS: "a check of the clause ran and held on every example",
    V.FAIL: "the implementation departs from the reference model, and no expectation covers what was observed",
    V.UNEXPECTED_PASS: "a pinned known failure no longer fails with its example: the expectation is stale",
    V.KNOWN: "a known failure, covered by an entry of the expectations file (clause, observable, matcher), "
    "reproduced",
    V.NON_STRICT: "a SHOULD or MAY clause is not met; this does not fail the run",
    V.BLOCKED: "not decided: every test of the clause stopped at another failure first, or the target was lost",
    V.UNSUPPORTED: "not checked: the target lacks a capability or API version the check needs",
    V.NOT_APPLICABLE: "the clause does not apply to this profile",
    V.TIMEOUT: "the campaign task ran past its budget before deciding the clause",
    V.CRASHED: "the campaign task's process died before deciding the clause",
}

# The skip reasons that mark a test UNSUPPORTED or N/A (the plugin writes them; reports read them back).
UNSUPPORTED_PREFIX = "UNSUPPORTED: "
NOT_APPLICABLE_PREFIX = "N/A: "


def most_severe(verdicts: Iterable[Verdict | str]) -> Verdict | None:
    """The verdict that wins among `verdicts` (Verdicts or their words), None for none."""
    seen = {v if isinstance(v, Verdict) else Verdict.parse(v) for v in verdicts}
    for verdict in PRECEDENCE:
        if verdict in seen:
            return verdict
    return None


def words(verdicts: frozenset[Verdict] | tuple[Verdict, ...]) -> tuple[str, ...]:
    """The words of `verdicts`, in PRECEDENCE order (for string-keyed data such as Parquet rows, SQL)."""
    return tuple(v.value for v in PRECEDENCE if v in verdicts)


# Allure's severity of a clause's level (the plugin's labels on each test, reports.clauses on each clause).
ALLURE_SEVERITY: dict[Level, str] = {Level.MUST: "critical", Level.SHOULD: "normal", Level.MAY: "minor"}


# The statuses below are str-valued: they are written as their words into verdicts.json, mutants.json and the
# campaign's Parquet rows, and compare equal to the words read back.


class EntryStatus(StrEnum):
    """What became of one expectations entry in a run (verdicts.json "expectations", the terminal summary)."""

    MATCHED = "MATCHED"  # it covered at least one violation
    STALE = "STALE"  # its clause and observable were checked, and nothing it describes was observed
    UNEXPECTED_PASS = "UNEXPECTED-PASS"  # pinned, and its pinned example ran without the failure it describes
    # No check of its clause and observable ran (a partial run), or its departure shows only by chance and did not:
    # nothing known.
    NOT_EXERCISED = "NOT-EXERCISED"


class KillStatus(StrEnum):
    """A seeded mutant's result (`kafka-conformance mutants`, the campaign's kill table)."""

    KILLED = "KILLED"  # a clause the mutant declares got a verdict in KILLS
    WRONG_CLAUSE = "WRONG-CLAUSE"  # only clauses it does not declare failed
    SURVIVED = "SURVIVED"  # its declared clauses were checked and nothing failed
    TIMEOUT = Verdict.TIMEOUT.value  # campaign: nothing killed it and a task of it ran past its budget
    CRASHED = Verdict.CRASHED.value  # its pytest run died (or, in `mutants`, ran past its time limit)
    NOT_SERVED = "NOT-SERVED"  # over the wire: a fault a served broker cannot show (a reader's, a library's)
    NOT_RUN = "NOT-RUN"  # campaign: no task checked any clause it declares


class TaskStatus(StrEnum):
    """How a campaign task's pytest process ended (the rows' "status")."""

    OK = "ok"  # pytest ran to the end (its verdicts say what failed)
    TIMEOUT = "timeout"  # killed at the task's budget
    CRASHED = "crashed"  # interrupted, an internal or usage error, or the process died
