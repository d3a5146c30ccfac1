"""The state of one suite run: its settings, the expectations in force and every test's result. One object,
kept on the pytest config and handed to whatever needs it (no module-level state shared across modules)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from conformance.judging.expectations import Expectation
from conformance.judging.judge import RunRecord, clause_verdicts, entry_statuses
from conformance.judging.results import ExpectationOutcome, RunResults, TestResult, one_version
from conformance.judging.verdicts import EntryStatus, Verdict


@dataclass
class RunState:
    target: str
    profile: str
    hypothesis_profile: str
    seed: int | None
    expectations: tuple[Expectation, ...] = ()
    results: list[TestResult] = field(default_factory=list)  # one per test, in the order they were reported
    lost: list[str] = field(default_factory=list)  # why the target was lost, if it was
    # Hypothesis examples per test node id (--count-examples), and the test running now.
    examples: dict[str, int] = field(default_factory=dict)
    running: str | None = None
    # The version of the implementation that the target's row knows without building it (a managed broker's, the
    # model's: conformance.targets.registry.target_version), and what built implementations said, each once: what
    # they said wins (a library's adapter or driver says its own).
    declared_version: str | None = None
    versions: list[str] = field(default_factory=list)
    complete: bool = True  # false once the run was stopped early (Ctrl-C, SIGTERM): see entry_statuses
    fail_on_stale: bool = False  # --fail-on-stale: a STALE entry fails the run
    _by_clause: dict[str, list[Verdict]] = field(default_factory=lambda: defaultdict(list))

    def add_result(self, result: TestResult) -> None:
        """A test's result (on pytest-xdist: as the controller receives it from a worker)."""
        self.results.append(result)
        for cid, verdict in result.verdicts.items():
            self._by_clause[cid].append(verdict)
        lost = result.target_lost
        if lost and lost not in self.lost:
            self.lost.append(lost)

    def add_version(self, version: str) -> None:
        """A version the implementation said (each process that opened it says it with its tests' results)."""
        if version not in self.versions:
            self.versions.append(version)

    def count_example(self) -> None:
        if self.running is not None:
            self.examples[self.running] = self.examples.get(self.running, 0) + 1

    def clause_verdicts(self) -> dict[str, Verdict]:
        return clause_verdicts(self._by_clause)

    def entry_statuses(self) -> list[EntryStatus]:
        records = [
            RunRecord(
                nodeid=r.nodeid,
                checked=frozenset(r.checked),
                matched=frozenset(r.matched),
                unexpected=frozenset(r.unexpected),
            )
            for r in self.results
        ]
        return entry_statuses(self.expectations, records, complete=self.complete)

    def stale_fails(self) -> bool:
        """Whether a STALE entry fails this run (--fail-on-stale)."""
        return self.fail_on_stale and EntryStatus.STALE in self.entry_statuses()

    def expectations_report(self) -> tuple[ExpectationOutcome, ...]:
        """Each entry with what became of it (verdicts.json "expectations")."""
        return tuple(
            ExpectationOutcome.of(e, status) for e, status in zip(self.expectations, self.entry_statuses(), strict=True)
        )

    def run_results(self, exit_status: int) -> RunResults:
        """The run's results, as verdicts.json holds them (conformance.judging.results)."""
        return RunResults(
            target=self.target,
            implementation_version=one_version(self.versions or [self.declared_version]),
            profile=self.profile,
            hypothesis_profile=self.hypothesis_profile,
            seed=self.seed,
            exit_status=exit_status,
            target_lost=tuple(self.lost),
            fail_on_stale=self.fail_on_stale,
            clauses=dict(sorted(self.clause_verdicts().items())),
            expectations=self.expectations_report(),
            tests=tuple(self.results),
        )
