"""Benchmark: the time a newcomer waits for the project's own tests, `tox` (the README's test command), per env
and in all. Goal: the whole default run (`tox run-parallel -p 2`) within 20 minutes on an idle 2-core machine from a
fresh clone with warm package caches (issue 28; 27-29 minutes measured before it).

    python tests/benchmarks/bench_tox.py [--parallel N] [-e ENV[,ENV...]] [--from-log FILE]

It runs tox from the project root (`tox run` for one at a time, `tox run-parallel -p N` with `--parallel`), then
prints one line per env from tox's own report (total, install, commands) and the wall time around it. With
`--from-log` it reads a tox output already written (a CI log) instead of running anything. The figures depend on
the machine: an earlier run's caches (pip's wheels, the Allure package, Spark's jars) make a second run faster,
so the first run of a fresh clone is the one a newcomer sees.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOAL_SECONDS = 20 * 60.0
# tox 4's summary line: "  py: OK (85.16=setup[12.37]+cmd[72.78] seconds)" (run-parallel prints the same).
_LINE = re.compile(r"^\s*(?P<env>[\w.-]+): (?P<status>OK|FAIL|SKIP)\w* \((?P<total>[\d.]+)(?P<parts>=[^ ]*)? seconds\)")


@dataclass(frozen=True)
class EnvTime:
    env: str
    status: str
    total: float
    setup: float
    commands: float


def _seconds(part: str, parts: str) -> float:
    """The sum of "setup[4.58]" or "cmd[0.07,0.97]" in tox's "=setup[...]+cmd[...]"."""
    found = re.search(part + r"\[([^]]*)]", parts)
    return sum(float(x) for x in re.findall(r"[\d.]+", found.group(1))) if found else 0.0


def parse(output: str) -> list[EnvTime]:
    """The per-env lines of tox's summary in `output`."""
    found = []
    for line in output.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        parts = match.group("parts") or ""
        setup, cmd = _seconds("setup", parts), _seconds("cmd", parts)
        found.append(EnvTime(match.group("env"), match.group("status"), float(match.group("total")), setup, cmd))
    return found


def report(times: list[EnvTime], wall: float | None) -> str:
    lines = [f"{'env':<18} {'status':<6} {'total s':>8} {'install s':>10} {'commands s':>11}"]
    for t in sorted(times, key=lambda t: -t.total):
        lines.append(f"{t.env:<18} {t.status:<6} {t.total:>8.1f} {t.setup:>10.1f} {t.commands:>11.1f}")
    summed = sum(t.total for t in times)
    lines.append(f"{'sum of envs':<18} {'':<6} {summed:>8.1f}")
    if wall is not None:
        verdict = "within" if wall <= GOAL_SECONDS else "OVER"
        lines.append(f"wall time {wall:.0f} s ({wall / 60:.1f} min): {verdict} the {GOAL_SECONDS / 60:.0f} min goal")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parallel", type=int, default=0, help="envs at once (tox run-parallel -p N); default: one")
    parser.add_argument("-e", dest="envs", default="", help="comma-separated envs (default: tox's env_list)")
    parser.add_argument("--from-log", type=Path, help="read this tox output instead of running tox")
    args = parser.parse_args()
    if args.from_log is not None:
        try:
            times = parse(args.from_log.read_text(encoding="utf-8", errors="replace"))
        except OSError as exc:
            parser.error(f"cannot read {args.from_log}: {exc.strerror}")
        if not times:
            parser.error(f"{args.from_log} holds no tox summary lines (\"  py: OK (85.16=... seconds)\")")
        print(report(times, None))
        return 0
    command = ["tox", "run-parallel", "-p", str(args.parallel)] if args.parallel else ["tox", "run"]
    if args.envs:
        command += ["-e", args.envs]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        parser.error("tox is not on PATH: pip install tox")
    wall = time.perf_counter() - started
    print(report(parse(done.stdout), wall))
    if done.returncode != 0:
        print(f"tox exited {done.returncode}: {done.stdout.strip().splitlines()[-1:]}", file=sys.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
