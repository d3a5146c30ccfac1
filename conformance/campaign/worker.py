"""What one Spark task does: run one campaign task and return its rows.

The task runs the suites in a pytest child process of the Spark worker, so everything is built inside the
task: the plugin builds the implementation from its factory (a managed broker is started and stopped
there), Hypothesis runs with the task's seed (profile `dev`, random and without an example database,
`--hypothesis-seed` fixed), and the verdicts come back as JSON. A child process also bounds the task: at
its budget the whole process group is killed and the task is reported TIMEOUT; a child that dies is
CRASHED; neither stops the campaign.

Rows (one per clause, or one for a task that produced no verdicts): see `conformance.campaign.rows.ROW_FIELDS`.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conformance.campaign.tasks import CampaignTask, suite_paths
from conformance.judging.results import RunResults, read_results
from conformance.judging.verdicts import DEPARTS, TaskStatus
from conformance.plugin.launcher import SuitesRun, pytest_command


def run_task(task: CampaignTask, campaign_id: str, suites: str, expectations: dict[str, str]) -> list[dict[str, Any]]:
    """Run `task` and return its rows (never raises for the task's own failures: they are rows)."""
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="kts-task-") as scratch:
        verdicts = Path(scratch) / "verdicts.json"
        cmd = pytest_command(
            SuitesRun(
                target=task.target,
                profile=task.profile,
                hypothesis_profile=task.hypothesis_profile,
                suites=Path(suites),
                tests=tuple(suite_paths(task.machine, Path(suites))),
                expectations=expectations.get(task.target) or None,
                hypothesis_seed=task.seed,
                verdicts_json=verdicts,
                log_dir=Path(scratch) / "logs",
                count_examples=True,
            )
        )
        env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
        env.pop("CI", None)  # the task's own Hypothesis profile, not the CI default
        # Examples are counted through Hypothesis' observability callbacks; without line coverage (which
        # would make every example several times slower).
        env["HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY_NOCOVER"] = "1"
        status, tail = _run_bounded(cmd, task.budget_s, env)
        seconds = time.time() - started
        results = read_results(verdicts) if verdicts.is_file() else None
        rows = _rows(task, campaign_id, results, status, seconds, started) if results is not None else []
        if rows:
            return rows
    return [
        _row(task, campaign_id, clause="*", verdict=status.upper(), status=status, tests=0, examples=0,
             task_examples=0, counterexample=f"{shlex.join(cmd)}\n{tail}", replay=shlex.join(cmd[2:]),
             first_failure_s=None, seconds=seconds,
             implementation_version=results.implementation_version if results is not None else None)
    ]  # fmt: skip


def _run_bounded(cmd: list[str], budget_s: float, env: dict[str, str]) -> tuple[TaskStatus, str]:
    """(status, output tail): ok, timeout (killed at the budget with its whole process group) or crashed."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as output:
        proc = subprocess.Popen(
            cmd, stdout=output, stderr=subprocess.STDOUT, env=env, start_new_session=True, preexec_fn=_die_with_parent
        )
        try:
            code = proc.wait(timeout=budget_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            output.seek(0)
            return TaskStatus.TIMEOUT, _tail(output.read())
        output.seek(0)
        text = output.read()
    # pytest: 0 all passed, 1 some failed (verdicts say which); 2-4 interrupted/internal/usage; 5 no tests.
    return (TaskStatus.OK if code in (0, 1) else TaskStatus.CRASHED), _tail(text)


def _die_with_parent() -> None:
    """In the child, before exec (Linux): SIGTERM when the Spark worker that started it dies (a cancelled or
    interrupted campaign), so no pytest run outlives its task. Elsewhere the budget still bounds it."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _rows(
    task: CampaignTask, campaign_id: str, results: RunResults, status: TaskStatus, seconds: float, started: float
) -> list[dict[str, Any]]:
    task_examples = sum(t.examples or 0 for t in results.tests)
    rows = []
    for clause, verdict in sorted(results.clauses.items()):
        named = results.tests_of(clause)
        # The first test that showed the clause not to hold (known or not): the row's first failure.
        first = min((t for t in named if t.verdicts[clause] in DEPARTS), key=lambda t: t.finished_at, default=None)
        rows.append(
            _row(
                task,
                campaign_id,
                clause=clause,
                verdict=verdict.value,
                status=status,
                tests=len(named),
                examples=sum(t.examples or 0 for t in named),
                task_examples=task_examples,
                counterexample=first.message if first else "",
                replay=first.replay or "" if first else "",
                first_failure_s=max(0.0, first.finished_at - started) if first else None,
                seconds=seconds,
                implementation_version=results.implementation_version,
            )
        )
    return rows


def _row(
    task: CampaignTask,
    campaign_id: str,
    *,
    clause: str,
    verdict: str,
    status: TaskStatus,
    tests: int,
    examples: int,
    task_examples: int,
    counterexample: str,
    replay: str,
    first_failure_s: float | None,
    seconds: float,
    implementation_version: str | None,
) -> dict[str, Any]:
    return {
        "campaign_id": campaign_id,
        "task_id": task.task_id,
        "target": task.target,
        "machine": task.machine,
        "profile": task.profile,
        "seed": task.seed,
        "clause": clause,
        "verdict": verdict,
        "status": status.value,
        "tests": tests,
        "examples": examples,
        "task_examples": task_examples,
        "counterexample": counterexample[:20_000],
        "replay": replay,
        "first_failure_s": first_failure_s,
        "task_seconds": round(seconds, 3),
        "finished_at": time.time(),
        "implementation_version": implementation_version,
    }
