"""Expectation files: what an implementation is known to get wrong, as narrow as the evidence.

A file is TOML, one `[[expected]]` table per known departure:

    [[expected]]
    clause = "LO.latest-is-high-watermark"   # required: a catalogue clause ID
    observable = "list-offsets.leader-epoch" # required: the observable that departs (or a list:
                                             #   observables = ["list-offsets.offset", ...])
    observed = -1                            # optional matcher: the value the implementation shows
    reason = "answers leader epoch -1"       # required: one line of explanation
    link = "https://github.com/org/repo/issues/1"  # required: the upstream issue (or "none: ...")
    test = "suites/test_list_offsets.py::test_latest"  # optional: the one test it covers
    example = "data=Replay([...])"           # optional, with test: the minimal counterexample, pinned

An entry covers a violation when the clause and the observable are its own and every matcher it has holds:
- `observed = V`: the implementation showed V (an enum by its name, e.g. "NETWORK_EXCEPTION", or its
  number; a list for a list; "None" for nothing);
- `expected = V`: the reference model expected V (narrows an entry to one scenario, e.g. expected = -1);
- `observed_is = "NAME"`: the implementation showed the value the check knows by that name
  (conformance.judging.observables.FACTS): "sent", what the producer sent for that field (a header stored as the
  producer wrote it); "last-batch-base-plus-one" (LATEST one past the last batch's base offset). A check
  that does not know the value (e.g. in another test) is not covered.
With `test`, it covers violations in that test only, unless `scope = "run"` widens it to every test.
`scope = "audit"` makes an entry audit mode's only (a departure only a whole topic's records show, e.g. the
leader epoch of stored batches); the suites never match it and never call it stale.
`chance = "WHAT"` marks an unpinned entry whose departure shows only when something outside the suite's control
falls a certain way (WHAT says what, e.g. two appends in the same millisecond of a broker's wall clock): a run in
which it covered nothing cannot tell a fixed target from a scenario that did not occur, so it is NOT-EXERCISED
there, never STALE.
Any violation no entry covers is FAIL, even inside a clause that has known departures.

A failing run prints the entry to paste (section "pin" of the pytest report): the suites draw through
`conformance.judging.draws`, so the counterexample is `data=Replay([...])`, every (label, value) drawn. The pinned
example is added to that Hypothesis test as an `@example`, so the departure is reproduced on every run
(xfail plus random generation alone is flaky); if the entry then covers nothing in that test, the run
reports UNEXPECTED-PASS. An unpinned entry that covered nothing while its clause and observable were
checked is reported STALE (summary and verdicts.json); `run --fail-on-stale` makes that fail the run (the tox envs
of the shipped files do: docs/expectations-stale.md).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from conformance.judging.checks import ClauseViolation, Cover
from conformance.judging.observables import FACTS, Obs
from models.clauses import CLAUSES


class ExpectationsError(ValueError):
    """A malformed expectations file; the message names the file, the entry and the fix."""


_ANY: Any = object()  # a matcher that was not given


@dataclass(frozen=True)
class Expectation:
    clause: str
    observables: tuple[Obs, ...]
    reason: str
    link: str
    test: str | None = None
    example: str | None = None
    observed: Any = _ANY
    expected: Any = _ANY
    observed_is: str | None = None
    whole_run: bool = False  # scope = "run": a pinned entry that also covers the departure in other tests
    audit_only: bool = False  # scope = "audit": audit mode's (nodeid None) only
    chance: str | None = None  # what outside the suite's control decides whether its departure shows
    index: int = 0  # 1-based position in its file (how a report names it)

    @property
    def pinned(self) -> bool:
        return self.test is not None and self.example is not None

    def covers(self, violation: ClauseViolation, nodeid: str | None) -> bool:
        """Whether this entry describes `violation`, seen in test `nodeid`."""
        if violation.clause_id != self.clause or violation.observable not in self.observables:
            return False
        if self.audit_only and nodeid is not None:
            return False
        if self.test is not None and not self.whole_run and nodeid != self.test:
            return False
        seen = violation.observation
        if self.observed is not _ANY and not matches(self.observed, seen.observed):
            return False
        if self.expected is not _ANY and not matches(self.expected, seen.expected):
            return False
        if self.observed_is is None:
            return True
        return self.observed_is in seen.facts and seen.observed == seen.facts[self.observed_is]

    def describe(self) -> str:
        """One line naming what the entry covers (reports, the STALE list)."""
        parts = [self.clause, "/".join(o.id for o in self.observables)]
        if self.observed is not _ANY:
            parts.append(f"observed={self.observed!r}")
        if self.expected is not _ANY:
            parts.append(f"expected={self.expected!r}")
        if self.observed_is is not None:
            parts.append(f"observed is {self.observed_is}")
        if self.test is not None:
            parts.append(f"in {self.test}" + (" (pinned there, covers every test)" if self.whole_run else ""))
        if self.audit_only:
            parts.append("(audit mode only)")
        if self.chance is not None:
            parts.append(f"(by chance: {self.chance})")
        return f"entry {self.index}: " + " ".join(parts)


def matches(wanted: object, actual: object) -> bool:
    """Whether a TOML matcher value describes an observed Python value: an enum by name or number, a tuple
    or list element by element, None as "None"."""
    if isinstance(actual, Enum):
        return wanted == actual.name or (not isinstance(wanted, bool) and wanted == actual.value)
    if isinstance(actual, tuple | list):
        return (
            isinstance(wanted, list)
            and len(wanted) == len(actual)
            and all(matches(w, a) for w, a in zip(wanted, actual, strict=True))
        )
    if actual is None:
        return wanted == "None"
    if isinstance(actual, bytes):
        return wanted == actual.hex()
    if isinstance(actual, bool) or isinstance(wanted, bool):
        return type(actual) is type(wanted) and wanted == actual
    return bool(wanted == actual)


def plain(value: object) -> object:
    """A value as an expectations file writes it (the inverse of `matches`), or None where TOML cannot."""
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, tuple | list):
        items = [plain(v) for v in value]
        return None if any(i is None for i in items) else items
    if value is None:
        return "None"
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, bool | int | str):
        return value
    return None


_KNOWN_KEYS = {
    "clause", "observable", "observables", "reason", "link", "test", "example", "observed", "expected",
    "observed_is", "scope", "chance",
}  # fmt: skip


def load_expectations(path: str | Path) -> tuple[Expectation, ...]:
    """Parse and check an expectations file (see the module doc for the format)."""
    p = Path(path)
    if not p.is_file():
        raise ExpectationsError(f"expectations file {p} does not exist: pass an existing file to --expectations")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ExpectationsError(f"expectations file {p} is not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ExpectationsError(f"expectations file {p} is not UTF-8 text: {exc}") from None
    unknown_top = set(data) - {"expected"}
    if unknown_top:
        raise ExpectationsError(f"{p}: unknown top-level keys {sorted(unknown_top)}: only [[expected]] tables")
    entries = data.get("expected", [])
    if not isinstance(entries, list):
        raise ExpectationsError(f"{p}: 'expected' must be an array of tables ([[expected]])")
    clause_ids = {c.id for c in CLAUSES}
    out: list[Expectation] = []
    for n, entry in enumerate(entries, start=1):
        where = f"{p}: entry {n}"
        if not isinstance(entry, dict):
            raise ExpectationsError(f"{where}: must be a table")
        out.append(_entry(entry, where, clause_ids, n))
    return tuple(out)


def _observables(entry: dict[str, Any], where: str) -> tuple[Obs, ...]:
    known = ", ".join(o.id for o in Obs)
    if ("observable" in entry) == ("observables" in entry):
        raise ExpectationsError(
            f"{where}: name what departs with 'observable = \"ID\"' (or a list 'observables = [...]'), "
            f"exactly one of the two; the failing run's 'pin' section prints it. Known IDs: {known}"
        )
    raw = entry.get("observable", entry.get("observables"))
    ids = [raw] if isinstance(raw, str) else raw
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise ExpectationsError(f"{where}: 'observable' must be a string, 'observables' a non-empty list of strings")
    try:
        return tuple(Obs.by_id(i) for i in ids)
    except KeyError as exc:
        raise ExpectationsError(f"{where}: {exc.args[0]}") from None


def _entry(entry: dict[str, Any], where: str, clause_ids: set[str], index: int) -> Expectation:
    unknown = set(entry) - _KNOWN_KEYS
    if unknown:
        raise ExpectationsError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(_KNOWN_KEYS)}")
    for key in ("clause", "reason", "link"):
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ExpectationsError(f"{where}: '{key}' is required and must be a non-empty string")
    if entry["clause"] not in clause_ids:
        raise ExpectationsError(
            f"{where}: unknown clause {entry['clause']!r}: `kafka-conformance clauses` lists the IDs"
        )
    observables = _observables(entry, where)
    for key in ("test", "example"):
        if key in entry and not isinstance(entry[key], str):
            raise ExpectationsError(f"{where}: '{key}' must be a string")
    if "example" in entry and "test" not in entry:
        raise ExpectationsError(f"{where}: 'example' needs 'test' (the example is pinned on that test)")
    if "example" in entry:
        try:
            compile(f"dict({entry['example']})", "<example>", "eval")
        except SyntaxError as exc:
            raise ExpectationsError(
                f"{where}: 'example' must be keyword arguments in Python syntax (a=1, b=[2]): {exc.msg}"
            ) from None
    if "observed_is" in entry and entry["observed_is"] not in FACTS:
        raise ExpectationsError(
            f"{where}: 'observed_is' names a value a check knows: one of {', '.join(map(repr, FACTS))}"
        )
    scope = entry.get("scope", "test")
    if scope not in ("test", "run", "audit"):
        raise ExpectationsError(f"{where}: 'scope' must be \"test\" (the default), \"run\" or \"audit\"")
    if scope == "audit" and "test" in entry:
        raise ExpectationsError(f"{where}: 'scope = \"audit\"' is audit mode's only: it takes no 'test'")
    if scope == "run" and "test" not in entry:
        raise ExpectationsError(f"{where}: 'scope = \"run\"' widens an entry with a 'test'; without one it is wide")
    if "chance" in entry:
        if not isinstance(entry["chance"], str) or not entry["chance"].strip():
            raise ExpectationsError(f"{where}: 'chance' must say, in a non-empty string, what decides the departure")
        if "example" in entry:
            raise ExpectationsError(
                f"{where}: 'chance' is for a departure no pinned example can replay; a pinned entry takes none"
            )
    for key in ("observed", "expected"):
        if isinstance(entry.get(key), dict):
            raise ExpectationsError(f"{where}: '{key}' must be a value (number, string, list), not a table")
    return Expectation(
        clause=entry["clause"],
        observables=observables,
        reason=entry["reason"],
        link=entry["link"],
        test=entry.get("test"),
        example=entry.get("example"),
        observed=entry.get("observed", _ANY),
        expected=entry.get("expected", _ANY),
        observed_is=entry.get("observed_is"),
        whole_run=scope == "run",
        audit_only=scope == "audit",
        chance=entry.get("chance"),
        index=index,
    )


def coverer(entries: tuple[Expectation, ...], nodeid: str | None) -> Cover:
    """The `conformance.judging.checks.Cover` for a test: the index (into `entries`) of the first entry that covers a
    violation, or None."""

    def cover(violation: ClauseViolation) -> int | None:
        for i, entry in enumerate(entries):
            if entry.covers(violation, nodeid):
                return i
        return None

    return cover


def pin_text(nodeid: str, example: str, violations: Iterable[ClauseViolation], clause_ids: Iterable[str]) -> str:
    """The entries that pin a failure of test `nodeid` with the drawn `example` (a failing run's "pin" section),
    one per (clause, observable) that departed, for a user who records it as known."""
    lines = ["To record this failure as known, add to the target's expectations file (fill in reason and link):"]
    targets: dict[tuple[str, str | None], ClauseViolation | None] = {}
    for v in violations:
        targets.setdefault((v.clause_id, v.observable.id), v)
    if not targets:  # a failure outside the clause checks: nothing names an observable
        targets = {(cid, None): None for cid in clause_ids}
    for (clause_id, observable), v in targets.items():
        lines += ["[[expected]]", f"clause = {json.dumps(clause_id)}"]
        lines.append(f"observable = {json.dumps(observable)}" if observable else 'observable = "..."')
        # A matcher only where the departure is a constant (an error code, a type, -1): a value that moves
        # with the scenario (an offset, a timestamp) would make the entry miss the next example.
        raw = v.observation.observed if v is not None else None
        if isinstance(raw, Enum) or (isinstance(raw, int) and not isinstance(raw, bool) and raw == -1):
            lines.append(f"observed = {json.dumps(plain(raw))}")
        lines += [
            'reason = "..."',
            'link = "..."',
            f"test = {json.dumps(nodeid)}",
            f"example = {json.dumps(example)}",
        ]
    return "\n".join(lines)


def draft_text(pin: str, nodeid: str, drafted: str) -> str:
    """The entries of `pin` (pin_text) not in `drafted` yet (one per clause and observable), with a DRAFT
    reason, for a person to check, explain and move into the expectations file; "" when all are there."""
    out: list[str] = []
    for entry in pin.split("[[expected]]")[1:]:
        key = "\n".join(ln for ln in entry.splitlines() if ln.startswith(("clause = ", "observable = ")))
        if key and key in drafted:
            continue
        body = entry.replace('reason = "..."', f"reason = {json.dumps('DRAFT: seen in ' + nodeid)}")
        body = body.replace('link = "..."', 'link = "none: not reported upstream yet"')
        out.append("[[expected]]" + body.rstrip("\n") + "\n\n")
    return "".join(out)


def example_namespace() -> dict[str, object]:
    """Names an `example` may use: the model's values, so a printed counterexample pastes back."""
    import models.constants as constants
    import models.records as records
    from conformance.judging.draws import Replay
    from models.config import TopicConfig

    names: dict[str, object] = {"TopicConfig": TopicConfig, "Replay": Replay}
    # The values the suites' strategies draw (a leader move, a clock move) appear in pins too.
    from strategies.clocks import ClockMove, ClockMoveKind, ProducerClock
    from strategies.failover import LeaderMove
    from strategies.records import Invalidity

    for value in (ClockMove, ClockMoveKind, ProducerClock, LeaderMove, Invalidity):
        names[value.__name__] = value
    for module in (constants, records):
        names.update({k: v for k, v in vars(module).items() if not k.startswith("_")})
    return names


def parse_example(expectation: Expectation) -> dict[str, object]:
    """The pinned example's keyword arguments (evaluated with the model's names only)."""
    assert expectation.example is not None
    # The expectations file is the user's own test input, evaluated with the model's names only.
    value = eval(
        f"dict({expectation.example})", {"__builtins__": {"dict": dict, "range": range}}, example_namespace()
    )
    assert isinstance(value, dict)
    return value
