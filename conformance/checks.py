"""Clause-tagged assertions: the comparison of what an implementation shows with what the model says.

Every check names the clause it enforces. A failed check raises `ClauseViolation`, an
`AssertionError` whose message tells a stranger which clause failed, what was observed, what the
reference model expected and where (array-api-tests' `ph.assert_*` helpers).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from models.clauses import Clause, Level, get_clause

# The skip reason that marks a test UNSUPPORTED (the plugin writes it; the report reads it back).
UNSUPPORTED_PREFIX = "UNSUPPORTED: "


class Verdict(Enum):
    """Graded verdicts (ARCHITECTURE.md): a clause's result for one implementation and profile."""

    PASS = "PASS"
    FAIL = "FAIL"
    UNSUPPORTED = "UNSUPPORTED"  # a capability or API version the implementation lacks
    NOT_APPLICABLE = "N/A"  # the clause does not apply to the chosen profile
    KNOWN = "KNOWN"  # an expected failure, reproduced
    UNEXPECTED_PASS = "UNEXPECTED-PASS"  # expected to fail, but passed: the expectation is stale
    NON_STRICT = "NON-STRICT"  # a SHOULD clause not met
    # Not checked: every test of the clause stopped at another clause's failure first (a test stops at
    # its first failing check), or the target was lost during the run, so nothing is known about it yet.
    BLOCKED = "BLOCKED"


@dataclass(frozen=True)
class Observation:
    """One observed value and the model's expectation for it."""

    what: str
    observed: object
    expected: object


class ClauseViolation(AssertionError):
    """An implementation departed from the reference model on one clause."""

    def __init__(self, clause_id: str, what: str, observed: object, expected: object, context: str = "") -> None:
        self.clause: Clause = get_clause(clause_id)
        self.clause_id = clause_id
        self.observation = Observation(what, observed, expected)
        where = f" [{context}]" if context else ""
        super().__init__(
            f"{clause_id} ({self.clause.level.value}, {', '.join(self.clause.rules)}): {what}{where}: "
            f"observed {observed!r}, the reference model expects {expected!r}. "
            f"Clause: {self.clause.summary}"
        )


# Clauses the target is expected to fail (its expectations file). A violation of one is recorded and the
# test goes on, so that the clauses checked after it in the same test are still judged instead of being
# BLOCKED behind a failure everybody already knows about.
_expected: set[str] = set()
_known_hits: list[ClauseViolation] = []
# Clauses a check ran for since the last `take_checked` (passed or not): a test that passes without ever
# checking one of its clauses (the target lacks what the check needs) has not shown that clause holds.
_checked: set[str] = set()


def take_checked() -> set[str]:
    """The clauses checked since the last call (the plugin, per test)."""
    checked = set(_checked)
    _checked.clear()
    return checked


def expect_failures(clause_ids: set[str]) -> None:
    """Set the clauses whose violations are recorded as KNOWN instead of raised (the plugin, per run)."""
    _expected.clear()
    _expected.update(clause_ids)


def take_known_hits() -> list[ClauseViolation]:
    """The violations recorded instead of raised since the last call (KNOWN and NON-STRICT; the plugin, per test)."""
    hits = list(_known_hits)
    _known_hits.clear()
    return hits


def _violate(violation: ClauseViolation) -> bool:
    # A SHOULD/MAY clause not met does not fail the run (NON-STRICT): recorded like an expected failure, so
    # the MUST clauses checked after it in the same test are still judged.
    if violation.clause_id in _expected or violation.clause.level is not Level.MUST:
        _known_hits.append(violation)
        return False
    raise violation


def check_equal(clause_id: str, what: str, observed: object, expected: object, context: str = "") -> bool:
    """Raise `ClauseViolation` unless `observed == expected`. For an expected failure the violation is
    recorded and False returned: a caller whose next steps assume equality stops there."""
    _checked.add(clause_id)
    if observed != expected:
        return _violate(ClauseViolation(clause_id, what, observed, expected, context))
    return True


def check_true(clause_id: str, what: str, condition: bool, observed: object, context: str = "") -> bool:
    """Raise `ClauseViolation` unless `condition` holds (`what` states the expectation); see check_equal."""
    _checked.add(clause_id)
    if not condition:
        return _violate(ClauseViolation(clause_id, what, observed, "a value satisfying: " + what, context))
    return True
