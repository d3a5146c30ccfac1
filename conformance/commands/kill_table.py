"""The kill table: the suites against every seeded mutant, proving that each clause can fail.

Each mutant runs in its own pytest processes (`--target mutant:<id>`), on the tests tagged with the clauses the
mutant declares. A mutant is KILLED when one of its declared clauses fails (a verdict in
`conformance.judging.verdicts.KILLS`: FAIL, or NON-STRICT for a SHOULD clause); WRONG-CLAUSE when only other clauses
caught it (the mutant's declaration or the suite's clause attribution is wrong); SURVIVED when nothing failed;
CRASHED when its pytest run died or ran past its time limit. Over the wire (`--served`), a mutant whose fault is only
in a consumer's reading (`Mutant.reader_only`) is NOT-SERVED: a served broker cannot show it (the reading is the
suite's codec), and it is not run.

Finding the kill fast, without lowering the budget:
- the tests run most direct first: the fewer clauses besides the declared ones a test checks, the earlier it
  runs (a test of one clause before the state machine that checks thirty); ties in collection order;
- the run stops at the first failed test (`--maxfail 1`); when that failure was not a kill, the tests not yet
  run go on the same way;
- under `ci` the first pass runs the `broker` Hypothesis profile, the same derandomized examples without the
  shrink phase, so the time to the first failure is not spent shrinking; then one replay of only the killing
  test at `ci` shrinks the counterexample (Hypothesis bounds shrinking at 5 minutes). `fast` has no shrink phase
  and runs once; `dev` and `thorough` run once with their own shrinking.

The table (`mutants.json`, `mutants.md`) is rewritten after each mutant, atomically, so a stopped run leaves
every finished row; `resume=True` keeps the finished rows of the same profile and Hypothesis profile and runs
the rest. Each row gives the time from the mutant's first pytest launch to the end of its first killing test.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from conformance.campaign.tasks import profile_for
from conformance.judging.results import TestResult, read_results
from conformance.judging.verdicts import KILLS, KillStatus, most_severe
from conformance.plugin.launcher import CollectedTest, SuitesRun, collect, pytest_command
from conformance.targets.kinds.implementation import Kind
from conformance.targets.target import MODEL, mutant_name, served_mutant_name

# The statuses a kill table row takes (conformance.judging.verdicts.KillStatus), by the names importers use.
KILLED = KillStatus.KILLED
SURVIVED = KillStatus.SURVIVED
WRONG_CLAUSE = KillStatus.WRONG_CLAUSE
CRASHED = KillStatus.CRASHED
NOT_SERVED = KillStatus.NOT_SERVED

# A Hypothesis profile whose twin without the shrink phase the plugin registers: the first pass runs the twin
# (the same derandomized examples), the replay of the killing test the profile itself.
_WITHOUT_SHRINKING = {"ci": "broker"}
# The profiles conformance/plugin/ registers without a shrink phase: their counterexamples are as found.
_NO_SHRINK_PHASE = frozenset({"fast", "broker"})

PASS_TIMEOUT_S = 600.0
# Hypothesis stops shrinking after 300 s (hypothesis.internal.conjecture.engine.MAX_SHRINKING_SECONDS); the rest
# is the run up to the failure and the process around it.
REPLAY_TIMEOUT_S = 420.0


@dataclass
class KillResult:
    """One row of the kill table."""

    mutant: str
    profile: str
    hypothesis_profile: str
    declared: list[str]
    status: KillStatus = KillStatus.SURVIVED
    killed_by: list[str] = field(default_factory=list)  # the declared clauses the first killing test failed
    other_clauses: list[str] = field(default_factory=list)  # undeclared clauses that failed in the tests run
    killer: str | None = None  # node id of the first killing test
    seconds_to_first_failure: float | None = None  # from the mutant's first pytest launch to the end of its kill
    counterexample_lines: int | None = None
    shrunk: bool = False  # the counterexample went through Hypothesis' shrink phase (`fast` has none)
    tests_run: int = 0
    first_pass_seconds: float = 0.0
    wall_seconds: float = 0.0
    replay: str | None = None
    detail: str = ""

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> KillResult:
        known = {f.name for f in fields(cls)}
        result = cls(**{k: v for k, v in row.items() if k in known})
        result.status = KillStatus(result.status)
        return result


class Interrupted(Exception):
    """The mutant's pytest run was stopped by Ctrl-C: no row for it."""


def _counterexample_lines(message: str) -> int:
    """Length of the counterexample: the steps of a state-machine program, or the lines of a `Falsifying
    example` call."""
    lines = message.splitlines()
    steps = [ln for ln in lines if ln.strip().startswith("state.")]
    if steps:
        return len(steps)
    for i, line in enumerate(lines):
        if line.startswith("Falsifying example"):
            block = []
            for follow in lines[i + 1 :]:
                if not follow.strip() or follow.startswith(("Explanation", "You can reproduce")):
                    break
                block.append(follow)
            return max(1, len(block))
    return 1


def order_tests(tests: Sequence[CollectedTest], declared: Sequence[str]) -> list[str]:
    """The node ids of the tests tagged with a declared clause, the most direct first: by the number of
    clauses each checks besides the declared ones, then in collection order."""
    wanted = set(declared)
    chosen = [(len(set(t.clauses) - wanted), i, t.nodeid) for i, t in enumerate(tests) if wanted & set(t.clauses)]
    return [nodeid for *_, nodeid in sorted(chosen)]


def _kills(test: TestResult, declared: set[str]) -> set[str]:
    return {cid for cid, v in test.verdicts.items() if v in KILLS and cid in declared}


def _departures(test: TestResult) -> set[str]:
    return {cid for cid, v in test.verdicts.items() if v in KILLS}


@dataclass
class _Pass:
    """One pytest process of a mutant: its exit code, output tail and the plugin's per-test results."""

    returncode: int | None  # None: killed at its time limit
    tail: str
    tests: list[TestResult] = field(default_factory=list)


_PYTEST_INTERRUPTED = 2  # pytest.ExitCode.INTERRUPTED


class _Runner:
    """Runs the pytest processes of a kill table, and stops them all when the table is stopped (Ctrl-C,
    SIGTERM): a stopped mutant gets no row."""

    def __init__(self, suites: Path | None, timeout_s: float, replay_timeout_s: float, *, served: bool = False) -> None:
        self.suites = suites
        # Over the wire: each mutant is served by the reference broker (`--target reference:mutant:<id>`).
        self.served = served
        self.timeout_s = timeout_s
        self.replay_timeout_s = replay_timeout_s
        self.stopping = threading.Event()
        self._live: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()

    def stop(self) -> None:
        self.stopping.set()
        with self._lock:
            for proc in self._live:
                if proc.poll() is None:
                    proc.terminate()  # the plugin reads SIGTERM as Ctrl-C: pytest unwinds

    def run_pass(self, run: SuitesRun, timeout_s: float) -> _Pass:
        with tempfile.TemporaryDirectory(prefix="kts-mutant-") as scratch:
            verdicts = Path(scratch) / "verdicts.json"
            cmd = pytest_command(replace(run, verdicts_json=verdicts))
            with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as output:
                with self._lock:
                    if self.stopping.is_set():
                        raise Interrupted(run.target)
                    proc = subprocess.Popen(cmd, stdout=output, stderr=subprocess.STDOUT)
                    self._live.add(proc)
                try:
                    code: int | None = proc.wait(timeout=timeout_s)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    code = None
                finally:
                    with self._lock:
                        self._live.discard(proc)
                output.seek(0)
                tail = "\n".join(output.read().splitlines()[-8:])
            if self.stopping.is_set() or (code == _PYTEST_INTERRUPTED and "KeyboardInterrupt" in tail):
                raise Interrupted(run.target)
            tests = list(read_results(verdicts).tests) if verdicts.is_file() else []
        return _Pass(code, tail, tests)

    def run_mutant(
        self, mutant: str, declared: Sequence[str], tests: Sequence[CollectedTest], *, profile: str,
        hypothesis_profile: str,
    ) -> KillResult:  # fmt: skip
        """Run the suites against one mutant until its first kill; then, where the first pass did not shrink,
        replay the killing test at `hypothesis_profile` for the minimal counterexample."""
        wanted = set(declared)
        ordered = order_tests(tests, declared)
        first_profile = _WITHOUT_SHRINKING.get(hypothesis_profile, hypothesis_profile)
        target = served_mutant_name(mutant) if self.served else mutant_name(mutant)
        base = SuitesRun(target, profile, first_profile, suites=self.suites)
        result = KillResult(mutant, profile, hypothesis_profile, list(declared))
        if not ordered:
            result.detail = f"no suite test declares {', '.join(declared)}"
            return result
        start = time.time()
        ran: list[TestResult] = []
        first_kill: TestResult | None = None
        remaining = ordered
        while remaining and first_kill is None:
            # --maxfail 1: the run stops at its first failed test; if that was no kill, the rest goes on.
            done = self.run_pass(replace(base, tests=tuple(remaining), maxfail=1), self.timeout_s)
            ran += done.tests
            first_kill = min((t for t in ran if _kills(t, wanted)), key=lambda t: t.finished_at, default=None)
            if done.returncode not in (0, 1):
                result.status = CRASHED
                code = done.returncode
                result.detail = "timed out" if code is None else f"pytest exit {code}: {done.tail}"
                break
            seen = {t.nodeid for t in done.tests}
            remaining = [n for n in remaining if n not in seen] if seen else []
        result.first_pass_seconds = round(time.time() - start, 3)
        result.tests_run = len({t.nodeid for t in ran})
        result.other_clauses = sorted(set().union(*(_departures(t) for t in ran)) - wanted)
        if first_kill is not None:
            result.status = KILLED
            result.killer = first_kill.nodeid
            result.killed_by = sorted(_kills(first_kill, wanted))
            result.seconds_to_first_failure = round(first_kill.finished_at - start, 3)
            message, result.replay = first_kill.message, first_kill.replay
            if first_profile != hypothesis_profile:
                message = self._shrink(result, base, hypothesis_profile) or message
            else:
                result.shrunk = first_profile not in _NO_SHRINK_PHASE
            result.counterexample_lines = _counterexample_lines(message)
        elif result.status != CRASHED:
            result.status = WRONG_CLAUSE if result.other_clauses else SURVIVED
            seen = {cid: most_severe(t.verdicts[cid] for t in ran if cid in t.verdicts) for cid in declared}
            result.detail = f"{result.tests_run} test(s) ran; declared clauses: " + ", ".join(
                f"{cid} {verdict.value if verdict else 'not reached'}" for cid, verdict in seen.items()
            )
        result.wall_seconds = round(time.time() - start, 3)
        return result

    def _shrink(self, result: KillResult, base: SuitesRun, hypothesis_profile: str) -> str | None:
        """Replay the killing test alone at `hypothesis_profile` (with shrinking); the shrunk message, or None
        (with the reason in `result.detail`) when the replay did not kill again."""
        assert result.killer is not None
        again = replace(base, tests=(result.killer,), hypothesis_profile=hypothesis_profile)
        replayed = self.run_pass(again, self.replay_timeout_s)
        kill = next((t for t in replayed.tests if _kills(t, set(result.declared))), None)
        if kill is None:
            why = "timed out" if replayed.returncode is None else "did not fail a declared clause"
            result.detail = f"the {hypothesis_profile} replay of {result.killer} {why}: counterexample not shrunk"
            return None
        result.shrunk = True
        result.replay = kill.replay or result.replay
        return kill.message


def run_mutant(
    mutant: str,
    declared: Sequence[str],
    tests: Sequence[CollectedTest],
    *,
    profile: str,
    hypothesis_profile: str,
    suites: Path | None = None,
    timeout_s: float = PASS_TIMEOUT_S,
    replay_timeout_s: float = REPLAY_TIMEOUT_S,
) -> KillResult:
    """One row of the kill table (see the module doc); `tests` as `conformance.plugin.launcher.collect` lists them."""
    runner = _Runner(suites, timeout_s, replay_timeout_s)
    return runner.run_mutant(mutant, declared, tests, profile=profile, hypothesis_profile=hypothesis_profile)


# --- the table ---------------------------------------------------------------------------------------------


class KillTable:
    """The rows of one kill table, written to `mutants.json` and `mutants.md` after each new row."""

    def __init__(self, out_dir: Path, *, profile: str, hypothesis_profile: str, served: bool = False) -> None:
        self.out_dir = out_dir
        self.served = served
        self.profile = profile
        self.hypothesis_profile = hypothesis_profile
        self.rows: dict[str, KillResult] = {}
        self._lock = threading.Lock()

    def load(self) -> None:
        """The finished rows of an earlier run into the same directory, at the same Hypothesis profile (a
        CRASHED row is not finished: it runs again)."""
        path = self.out_dir / "mutants.json"
        if not path.is_file():
            return
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            rows = [KillResult.from_json(row) for row in data.get("results", [])]
        except (ValueError, TypeError, AttributeError) as exc:
            raise ValueError(f"cannot resume from {path} ({exc}): remove it, or drop --resume") from None
        if bool(data.get("summary", {}).get("served")) != self.served:
            kind = "over the wire" if self.served else "in process"
            raise ValueError(f"{path} is not a kill table {kind}: give another --out, or drop --resume")
        for row in rows:
            if row.hypothesis_profile == self.hypothesis_profile and row.status != CRASHED:
                self.rows[row.mutant] = row

    def finished(self, mutant: str, profile: str) -> bool:
        row = self.rows.get(mutant)
        return row is not None and row.profile == profile

    def add(self, result: KillResult) -> None:
        with self._lock:
            self.rows[result.mutant] = result
            self.write()

    def results(self) -> list[KillResult]:
        return [self.rows[m] for m in sorted(self.rows)]

    def summary(self) -> dict[str, Any]:
        results = self.results()
        times = [r.seconds_to_first_failure for r in results if r.seconds_to_first_failure is not None]
        return {
            "profile": self.profile,
            "hypothesis_profile": self.hypothesis_profile,
            "served": self.served,
            "mutants": len(results),
            "killed": sum(r.status == KILLED for r in results),
            "not_served": sum(r.status == NOT_SERVED for r in results),
            "median_seconds_to_first_failure": round(statistics.median(times), 3) if times else None,
            "max_seconds_to_first_failure": max(times) if times else None,
        }

    def write(self) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        payload = {"summary": self.summary(), "results": [asdict(r) for r in self.results()]}
        _write_atomically(self.out_dir / "mutants.json", json.dumps(payload, indent=2) + "\n")
        _write_atomically(self.out_dir / "mutants.md", self.markdown())

    def markdown(self) -> str:
        summary, results = self.summary(), self.results()
        lines = [
            f"# Kill table{' over the wire (each mutant served by the reference broker)' if self.served else ''}: "
            f"profile {self.profile}, Hypothesis profile {self.hypothesis_profile}",
            "",
            f"{summary['killed']} of {summary['mutants']} mutants killed; time to first failure: median "
            f"{_fmt(summary['median_seconds_to_first_failure'])} s, "
            f"max {_fmt(summary['max_seconds_to_first_failure'])} s.",
            "",
            "| Mutant | Profile | Status | Killed by (declared) | Killing test | Also failed "
            "| Time to first failure (s) | Counterexample lines |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in results:
            lines.append(
                f"| `{r.mutant}` | {r.profile} | {r.status} | {', '.join(r.killed_by) or '-'} "
                f"| {f'`{r.killer}`' if r.killer else '-'} | {', '.join(r.other_clauses) or '-'} "
                f"| {_fmt(r.seconds_to_first_failure)} "
                f"| {_lines(r)} |"
            )
        failures = [r for r in results if r.status != KILLED]
        if failures:
            lines += ["", "## Not killed", ""]
            lines += [f"- `{r.mutant}`: {r.status}; declared {', '.join(r.declared)}. {r.detail}" for r in failures]
        notes = [r for r in results if r.status == KILLED and r.detail]
        if notes:
            lines += ["", "## Notes", ""]
            lines += [f"- `{r.mutant}`: {r.detail}" for r in notes]
        return "\n".join(lines) + "\n"


def _lines(r: KillResult) -> str:
    if r.counterexample_lines is None:
        return "-"
    return f"{r.counterexample_lines}" if r.shrunk or r.hypothesis_profile in _NO_SHRINK_PHASE else (
        f"{r.counterexample_lines} (not shrunk)"
    )


def _write_atomically(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`: a reader (or a run stopped
    half-way) sees the old table or the new one, never half a file."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _fmt(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) and not isinstance(value, bool) else "-"


def mutant_profile(mutant: str, profile: str) -> str:
    """The profile a mutant runs under (`conformance.campaign.tasks.profile_for`, shared with campaigns)."""
    return profile_for(mutant_name(mutant), profile)


def run_kill_table(
    table: KillTable,
    *,
    only: Sequence[str] | None = None,
    jobs: int = 2,
    suites: Path | None = None,
    on_row: Callable[[KillResult, int, int], None] | None = None,
    timeout_s: float = PASS_TIMEOUT_S,
    replay_timeout_s: float = REPLAY_TIMEOUT_S,
) -> list[KillResult]:
    """Run every chosen mutant not already finished in `table`, adding each row as it finishes, `jobs` at a
    time; the rows of the chosen mutants. `on_row(result, done, total)` is called after each new row. Ctrl-C
    (or SIGTERM read as one) stops every pytest run and raises KeyboardInterrupt; finished rows stay."""
    from conformance.faults import MUTANTS

    chosen = sorted(only) if only else sorted(MUTANTS)
    unknown = [m for m in chosen if m not in MUTANTS]
    if unknown:
        raise ValueError(f"unknown mutants {unknown}: `kafka-conformance mutants --list` shows them")
    todo = [m for m in chosen if not table.finished(m, mutant_profile(m, table.profile))]
    # The suites of each kind of fault (conformance.targets.kinds.implementation.Kind): a codec or client mutant runs
    # the tests its kind selects, which a collection for the broker target `model` leaves out.
    by_kind: dict[Kind, list[CollectedTest]] = {}
    for mutant_id in todo:
        kind = MUTANTS[mutant_id].kind
        if kind not in by_kind:
            target = MODEL if kind is Kind.BROKER else mutant_name(mutant_id)
            by_kind[kind] = collect(SuitesRun(target, table.profile, "fast", suites=suites))
    runner = _Runner(suites, timeout_s, replay_timeout_s, served=table.served)
    progress = threading.Lock()
    done = len(chosen) - len(todo)

    def one(mutant_id: str) -> None:
        nonlocal done
        mutant = MUTANTS[mutant_id]
        profile = mutant_profile(mutant_id, table.profile)
        if table.served and (mutant.reader_only or mutant.kind.value != "broker"):
            result = KillResult(mutant_id, profile, table.hypothesis_profile, list(mutant.clauses), status=NOT_SERVED)
            result.detail = (
                "a fault only in how a consumer reads its fetch answer: served over the wire, the reading is the "
                "suite's codec, so no broker answer changes (client and codec adapters are where it is caught)"
                if mutant.reader_only
                else f"a fault of a {mutant.kind.value}, not of a broker: nothing to serve (it runs in process)"
            )
        else:
            result = runner.run_mutant(
                mutant_id, mutant.clauses, by_kind[mutant.kind], profile=profile,
                hypothesis_profile=table.hypothesis_profile,
            )
        table.add(result)
        with progress:
            done += 1
            if on_row is not None:
                on_row(result, done, len(chosen))

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        for future in [pool.submit(one, m) for m in todo]:
            future.result()
    except (KeyboardInterrupt, Interrupted):
        runner.stop()
        raise KeyboardInterrupt from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return [table.rows[m] for m in chosen if m in table.rows]


def default_jobs() -> int:
    return max(1, min(2, os.cpu_count() or 1))
