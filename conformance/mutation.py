"""The kill table: the suites against every seeded mutant, proving that each clause can fail.

Each mutant runs in its own pytest process (`--target mutant:<id>`), restricted to the tests tagged
with the clauses the mutant declares. A mutant is KILLED when one of its declared clauses fails
(FAIL, or NON-STRICT for a SHOULD clause); WRONG-CLAUSE when only other clauses caught it (the
mutant's declaration or the suite's clause attribution is wrong); SURVIVED when nothing failed.
Results: `mutants.json` and `mutants.md` (mutant × clause × time to kill × counterexample length).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

KILLED = "KILLED"
SURVIVED = "SURVIVED"
WRONG_CLAUSE = "WRONG-CLAUSE"
CRASHED = "CRASHED"
FAILING_VERDICTS = {"FAIL", "NON-STRICT"}


@dataclass
class KillResult:
    mutant: str
    profile: str
    declared: list[str]
    status: str
    killed_by: list[str]
    other_clauses: list[str]
    seconds_to_kill: float | None
    counterexample_lines: int | None
    tests_run: int
    wall_seconds: float
    replay: str | None
    detail: str = ""


def _counterexample_lines(message: str) -> int:
    """Length of the shrunk counterexample: the steps of a state-machine program, or the lines of a
    `Falsifying example` call."""
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


def run_mutant(
    mutant: str,
    declared: list[str],
    *,
    profile: str,
    hypothesis_profile: str,
    suites: str = "suites",
    timeout_s: float = 600.0,
) -> KillResult:
    with tempfile.TemporaryDirectory(prefix="kts-mutant-") as tmp:
        verdicts_path = Path(tmp) / "verdicts.json"
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            suites,
            "-q",
            "-p",
            "no:cacheprovider",
            "--target",
            f"mutant:{mutant}",
            "--profile",
            profile,
            "--hypothesis-profile",
            hypothesis_profile,
            "--clauses",
            ",".join(declared),
            "--verdicts-json",
            str(verdicts_path),
        ]
        start = time.time()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            return KillResult(mutant, profile, declared, CRASHED, [], [], None, None, 0, timeout_s, None, "timed out")
        wall = time.time() - start
        if not verdicts_path.exists():
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
            return KillResult(mutant, profile, declared, CRASHED, [], [], None, None, 0, wall, None, " | ".join(tail))
        data: dict[str, Any] = json.loads(verdicts_path.read_text(encoding="utf-8"))
    tests: list[dict[str, Any]] = data["tests"]
    killed_by: set[str] = set()
    others: set[str] = set()
    first_kill: dict[str, Any] | None = None
    for test in sorted(tests, key=lambda t: t["finished_at"]):
        failing = {cid for cid, v in test["verdicts"].items() if v in FAILING_VERDICTS}
        declared_hits = failing & set(declared)
        killed_by |= declared_hits
        others |= failing - set(declared)
        if declared_hits and first_kill is None:
            first_kill = test
    if killed_by:
        status = KILLED
    elif others:
        status = WRONG_CLAUSE
    else:
        status = SURVIVED
    return KillResult(
        mutant=mutant,
        profile=profile,
        declared=declared,
        status=status,
        killed_by=sorted(killed_by),
        other_clauses=sorted(others),
        seconds_to_kill=(first_kill["finished_at"] - start) if first_kill else None,
        counterexample_lines=_counterexample_lines(first_kill["message"]) if first_kill else None,
        tests_run=len(tests),
        wall_seconds=wall,
        replay=first_kill["replay"] if first_kill else None,
    )


def run_kill_table(
    *,
    profile: str,
    hypothesis_profile: str,
    only: list[str] | None = None,
    jobs: int = 2,
    suites: str = "suites",
) -> list[KillResult]:
    from .adapters.mutants import MUTANTS

    chosen = sorted(only) if only else sorted(MUTANTS)
    unknown = [m for m in chosen if m not in MUTANTS]
    if unknown:
        raise ValueError(f"unknown mutants {unknown}: `kafka-conformance mutants --list` shows them")

    def one(mutant_id: str) -> KillResult:
        mutant = MUTANTS[mutant_id]
        # A mutant seeded into behaviour that exists only in some versions (e.g. the 3.6-3.9 fallback to
        # the difference config) runs under its first declared profile when the chosen one lacks it.
        mutant_profile = profile
        if mutant.profiles and profile not in mutant.profiles:
            mutant_profile = mutant.profiles[0]
        return run_mutant(
            mutant_id,
            list(mutant.clauses),
            profile=mutant_profile,
            hypothesis_profile=hypothesis_profile,
            suites=suites,
        )

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, chosen))


def write_reports(results: list[KillResult], out_dir: Path, *, profile: str, hypothesis_profile: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    times = [r.seconds_to_kill for r in results if r.seconds_to_kill is not None]
    summary = {
        "profile": profile,
        "hypothesis_profile": hypothesis_profile,
        "mutants": len(results),
        "killed": sum(r.status == KILLED for r in results),
        "median_seconds_to_kill": statistics.median(times) if times else None,
        "max_seconds_to_kill": max(times) if times else None,
    }
    (out_dir / "mutants.json").write_text(
        json.dumps({"summary": summary, "results": [asdict(r) for r in results]}, indent=2), encoding="utf-8"
    )
    lines = [
        f"# Kill table: profile {profile}, Hypothesis profile {hypothesis_profile}",
        "",
        f"{summary['killed']} of {summary['mutants']} mutants killed; time to kill: median "
        f"{_fmt(summary['median_seconds_to_kill'])} s, max {_fmt(summary['max_seconds_to_kill'])} s.",
        "",
        "| Mutant | Profile | Status | Killed by (declared) | Also failed | Time to kill (s) | Counterexample lines |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| `{r.mutant}` | {r.profile} | {r.status} | {', '.join(r.killed_by) or '-'} "
            f"| {', '.join(r.other_clauses) or '-'} | {_fmt(r.seconds_to_kill)} "
            f"| {r.counterexample_lines if r.counterexample_lines is not None else '-'} |"
        )
    failures = [r for r in results if r.status != KILLED]
    if failures:
        lines += ["", "## Not killed", ""]
        lines += [f"- `{r.mutant}`: {r.status}; declared {', '.join(r.declared)}. {r.detail}" for r in failures]
    (out_dir / "mutants.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _fmt(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else "-"


def default_jobs() -> int:
    return max(1, min(2, os.cpu_count() or 1))
