"""Benchmark: the suites in process vs over the wire to the reference broker (issue 12, item 6).

    python tests/benchmarks/bench_reference.py [--profile kafka-4.0] [--suites-only a,b] [--kill-tables DIR]

1. Examples per second: the same suites, derandomized (Hypothesis profile ci), against the model in process and
   against `reference` (the model served over the Kafka protocol, with its control plane), counted with
   `--count-examples`: examples and test seconds from verdicts.json, per target.
2. Time to first failure per mutant, in process and over the wire: the kill tables `kafka-conformance mutants`
   and `kafka-conformance mutants --served` write (DIR/in-process/mutants.json, DIR/over-the-wire/mutants.json);
   a table missing there is run first (the wire one takes about three times the in-process one). Prints the median
   and max of each, and every mutant killed one way but not the other.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conformance.plugin.launcher import SuitesRun, pytest_command

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SUITES = "test_list_offsets.py,test_validation.py,test_compression.py,test_failover.py"


def suites_run(
    target: str, profile: str, hypothesis_profile: str, tests: tuple[str, ...] = (), *, no_expectations: bool = False
) -> tuple[list[dict[str, Any]], float]:
    """(verdicts.json's tests, wall seconds) of the suites (`tests`: their paths, default all) against `target`,
    with `--count-examples`."""
    with tempfile.TemporaryDirectory(prefix="kts-bench-") as scratch:
        verdicts = Path(scratch) / "verdicts.json"
        # The command line `kafka-conformance run` builds (conformance.plugin.launcher), on this checkout's suites.
        command = pytest_command(
            SuitesRun(
                target=target,
                profile=profile,
                hypothesis_profile=hypothesis_profile,
                suites=ROOT / "suites",
                tests=tests,
                verdicts_json=verdicts,
                log_dir=Path(scratch) / "logs",
                no_expectations=no_expectations,
                count_examples=True,
            )
        )
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        if not verdicts.is_file():
            raise SystemExit(f"{target}: no verdicts (pytest exit {done.returncode}):\n{done.stdout[-2000:]}")
        return list(json.loads(verdicts.read_text())["tests"]), wall


def examples_per_second(target: str, profile: str, suites: list[str]) -> tuple[int, float, float]:
    """(examples, seconds inside the tests, wall seconds) of the suites against `target`."""
    tests, wall = suites_run(target, profile, "ci", tuple(f"suites/{s}" for s in suites))
    examples = sum(int(t.get("examples") or 0) for t in tests)
    seconds = sum(float(t.get("duration") or 0.0) for t in tests)
    return examples, seconds, wall


def kill_table(folder: Path, profile: str, served: bool) -> dict[str, Any]:
    path = folder / "mutants.json"
    if not path.is_file():
        command = ["kafka-conformance", "mutants", "--hypothesis-profile", "ci", "--profile", profile]
        command += ["--out", str(folder)]
        if served:
            command.append("--served")
        print(f"$ {' '.join(command)}", flush=True)
        subprocess.run(command, cwd=ROOT, check=False)
    return dict(json.loads(path.read_text()))


def _times(table: dict[str, Any]) -> dict[str, float | None]:
    return {r["mutant"]: r.get("seconds_to_first_failure") for r in table["results"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="kafka-4.0")
    parser.add_argument("--suites-only", default=DEFAULT_SUITES, help=f"suite modules (default {DEFAULT_SUITES})")
    parser.add_argument("--kill-tables", default="reports/out/bench-reference", help="where the two kill tables are")
    parser.add_argument("--no-kill-tables", action="store_true", help="only the examples per second")
    args = parser.parse_args()
    suites = [s.strip() for s in args.suites_only.split(",") if s.strip()]

    print(f"examples per second, {args.profile}, Hypothesis profile ci, suites {', '.join(suites)}:")
    rates = {}
    for target in ("model", "reference"):
        examples, seconds, wall = examples_per_second(target, args.profile, suites)
        rates[target] = examples / seconds if seconds else 0.0
        print(f"  {target:<10} {examples:>6} examples in {seconds:7.1f} s of tests ({wall:.1f} s wall): "
              f"{rates[target]:8.1f} examples/s", flush=True)  # fmt: skip
    if rates["reference"]:
        print(f"  over the wire: {rates['model'] / rates['reference']:.1f}x slower than in process")

    if args.no_kill_tables:
        return 0
    base = ROOT / args.kill_tables
    in_process = kill_table(base / "in-process", args.profile, served=False)
    wire = kill_table(base / "over-the-wire", args.profile, served=True)
    print("time to first failure (s), Hypothesis profile ci:")
    for name, table in (("in process", in_process), ("over the wire", wire)):
        s = table["summary"]
        print(f"  {name:<14} {s['killed']}/{s['mutants']} killed, median {s['median_seconds_to_first_failure']}, "
              f"max {s['max_seconds_to_first_failure']}")  # fmt: skip
    a, b = _times(in_process), _times(wire)
    both = [(m, a[m], b[m]) for m in sorted(a) if a.get(m) is not None and b.get(m) is not None]
    if both:
        ratios = [w / i for _, i, w in both if i]
        print(f"  per mutant, wire/in-process: median {statistics.median(ratios):.1f}x, max {max(ratios):.1f}x "
              f"over {len(both)} mutants killed both ways")  # fmt: skip
    not_served = {r["mutant"]: r["detail"] for r in wire["results"] if r["status"] == "NOT-SERVED"}
    for m, why in sorted(not_served.items()):
        print(f"  not served over the wire: {m} ({why})")
    differ = [m for m in sorted(set(a) | set(b)) if (a.get(m) is None) != (b.get(m) is None) and m not in not_served]
    for m in differ:
        print(f"  KILLED ONE WAY ONLY: {m}: in process {a.get(m)}, over the wire {b.get(m)}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
