"""Benchmark: the wall time of the project's fast tests, `pytest tests -m "not e2e" -n auto --dist worksteal` (what
`tox -e py` runs: pytest-xdist, a worker per core; the slow end-to-end tests, marked `e2e`, run in `tox -e e2e`).
Goal: at most 60 s on an idle 2-core machine (issue 28; 90 s in issue 11, 81 s measured before the workers).

    python tests/benchmarks/bench_tests.py [--rounds 1] [-- PYTEST_ARGS...]

Each round is a fresh pytest process from the project root; the line printed per round is pytest's own summary
and the wall time around it, then the best and the median over the rounds (other load on the machine only ever
adds time, so the best round is the figure to compare).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY_WORKERS = ("-n", "auto", "--dist", "worksteal")  # tox.ini's py env; `-- -n 0` times one process
GOAL_SECONDS = 60.0


def run_once(extra: list[str]) -> tuple[float, str, int]:
    """(wall seconds, pytest's summary line, exit status) of one `pytest tests -m "not e2e"` as tox -e py runs it."""
    command = [sys.executable, "-m", "pytest", "tests", "-m", "not e2e", *PY_WORKERS, "-q", "-p", "no:cacheprovider",
               *extra]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    lines = [line for line in done.stdout.strip().splitlines() if line.strip()]
    return seconds, (lines[-1] if lines else done.stderr.strip()[-200:]), done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="fresh pytest runs to time (default 1)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")
    args = parser.parse_args()
    times = []
    status = 0
    for n in range(1, args.rounds + 1):
        seconds, summary, code = run_once(args.pytest_args)
        times.append(seconds)
        status = status or code
        print(f"round {n}: {seconds:.1f} s wall  ({summary})", flush=True)
    best, median = min(times), statistics.median(times)
    verdict = "within" if best <= GOAL_SECONDS else "OVER"
    print(f'pytest tests -m "not e2e" {" ".join(PY_WORKERS)}: best {best:.1f} s, median {median:.1f} s over '
          f"{len(times)} round(s); {verdict} the {GOAL_SECONDS:.0f} s goal")  # fmt: skip
    return status


if __name__ == "__main__":
    sys.exit(main())
