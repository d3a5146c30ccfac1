"""Clause-tagged assertions: the comparison of what an implementation shows with what the model says.

Every check names the clause it enforces and the observable it compares (conformance.judging.observables). A
failed check is a `ClauseViolation`, an `AssertionError` whose message tells a stranger which clause
failed, on which observable, what was observed, what the reference model expected and where
(array-api-tests' `ph.assert_*` helpers).

What happens to a violation is decided by the test's `CheckRecord` (the plugin opens one per test with
`recording`): a violation an expectations entry covers (KNOWN) or of a SHOULD/MAY clause (NON-STRICT) is
recorded and the test goes on, so the checks after it are still judged; any other raises and ends the
example. Outside a recording (a direct call) nothing is expected: MUST violations raise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final

from conformance.judging.observables import Obs
from conformance.judging.routing import routed
from models.clauses import Clause, Level, get_clause


class _NotGiven:
    def __repr__(self) -> str:
        return "<not given>"


# The producer's own value was not given to the check (an `observed_is = "sent"` matcher cannot match then).
NOT_GIVEN: Final = _NotGiven()


@dataclass(frozen=True)
class Observation:
    """One observed value, the model's expectation for it and, where the check knows them, other values the
    observed one may be compared with (conformance.judging.observables.FACTS: what the producer sent, ...)."""

    observable: Obs
    observed: object
    expected: object
    facts: Mapping[str, object] = field(default_factory=dict)


class ClauseViolation(AssertionError):
    """An implementation departed from the reference model on one observable of one clause."""

    def __init__(
        self,
        clause_id: str,
        observable: Obs,
        observed: object,
        expected: object,
        context: str = "",
        *,
        facts: Mapping[str, object] | None = None,
        expectation: str | None = None,
    ) -> None:
        self.clause: Clause = get_clause(clause_id)
        self.clause_id = clause_id
        self.observation = Observation(observable, observed, expected, dict(facts or {}))
        self.context = context
        where = f" [{context}]" if context else ""
        wanted = expectation if expectation is not None else repr(expected)
        known = "".join(f"; {name} = {value!r}" for name, value in (facts or {}).items())
        sent_text = f" ({known[2:]})" if known else ""
        super().__init__(
            f"{clause_id} ({self.clause.level.value}, {', '.join(self.clause.rules)}) on {observable.id} "
            f"({observable.description}){where}: observed {observed!r}{sent_text}, the reference model "
            f"expects {wanted}. Clause: {self.clause.summary}"
        )

    @property
    def observable(self) -> Obs:
        return self.observation.observable


# Decides whether an expectation covers a violation: returns the covering entry's index, or None.
Cover = Callable[[ClauseViolation], int | None]


def _covers_nothing(violation: ClauseViolation) -> int | None:
    return None


@dataclass
class CheckRecord:
    """What the checks of one test did: the (clause, observable) pairs a check ran for, the violations an
    expectation covered (with the entry's index), and the SHOULD/MAY violations (NON-STRICT) let through.
    A violation neither covers is raised and ends the example."""

    cover: Cover = _covers_nothing
    checked: set[tuple[str, Obs]] = field(default_factory=set)
    held: set[tuple[str, Obs]] = field(default_factory=set)
    covered: list[tuple[ClauseViolation, int]] = field(default_factory=list)
    lenient: list[ClauseViolation] = field(default_factory=list)

    def passed(self, clause_id: str, observable: Obs) -> bool:
        self.checked.add((clause_id, observable))
        self.held.add((clause_id, observable))
        return True

    def violated(self, violation: ClauseViolation) -> bool:
        """Record `violation` and return False where it is expected or not a MUST; raise it otherwise."""
        self.checked.add((violation.clause_id, violation.observable))
        entry = self.cover(violation)
        if entry is not None:
            self.covered.append((violation, entry))
            return False
        # A SHOULD/MAY clause not met does not fail the run (NON-STRICT): recorded like an expected failure,
        # so the MUST clauses checked after it in the same test are still judged.
        if violation.clause.level is not Level.MUST:
            self.lenient.append(violation)
            return False
        raise violation


_current: ContextVar[CheckRecord | None] = ContextVar("kafka_conformance_checks", default=None)


def recording(record: CheckRecord) -> AbstractContextManager[CheckRecord]:
    """Route every check made inside the block (this thread and context) to `record`."""
    return routed(_current, record)


def _record() -> CheckRecord:
    record = _current.get()
    return record if record is not None else CheckRecord()


Facts = Mapping[str, object] | None  # other values a check knows, by the names of observables.FACTS


def departure(
    clause_id: str, observable: Obs, observed: object, expected: object, context: str = "", facts: Facts = None
) -> ClauseViolation | None:
    """The violation `observed != expected` is under `clause_id` on `observable` (with the `facts` the comparison
    knows), None where they are equal: the comparison of `check_equal` without recording it (audit mode judges its
    own collection of them)."""
    if observed == expected:
        return None
    return ClauseViolation(clause_id, observable, observed, expected, context, facts=facts)


def unmet(
    clause_id: str, observable: Obs, condition: bool, observed: object, context: str = "", *, expectation: str
) -> ClauseViolation | None:
    """The violation of `observed` not satisfying `condition` (`expectation` states it for a reader), None where it
    holds: the comparison of `check_true` without recording it."""
    if condition:
        return None
    return ClauseViolation(
        clause_id, observable, observed, expectation, context, expectation="a value satisfying: " + expectation
    )


def check_equal(
    clause_id: str,
    observable: Obs,
    observed: object,
    expected: object,
    context: str = "",
    *,
    sent: object = NOT_GIVEN,
    facts: Mapping[str, object] | None = None,
) -> bool:
    """Check `observed == expected` under `clause_id` on `observable`. True if it holds; on a violation an
    expectation covers (or of a SHOULD/MAY clause), the violation is recorded and False returned: a caller
    whose next steps assume equality stops there. Any other violation raises `ClauseViolation`. `sent` (the
    producer's own value for the field) and `facts` are other values the check knows, by the names of
    conformance.judging.observables.FACTS: an expectation may say the observed value equals one of them."""
    known = dict(facts or {})
    if sent is not NOT_GIVEN:
        known["sent"] = sent
    violation = departure(clause_id, observable, observed, expected, context, known)
    return _record().passed(clause_id, observable) if violation is None else _record().violated(violation)


def check_true(
    clause_id: str,
    observable: Obs,
    condition: bool,
    observed: object,
    context: str = "",
    *,
    expectation: str,
) -> bool:
    """Check that `condition` holds for `observed` (`expectation` states it for a reader); see check_equal."""
    violation = unmet(clause_id, observable, condition, observed, context, expectation=expectation)
    return _record().passed(clause_id, observable) if violation is None else _record().violated(violation)
