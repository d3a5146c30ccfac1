"""Benchmark: the whole suites against an Apache Kafka line vs the reference broker, side by side at the same
Hypothesis budget (issue 29, item 7: the suite on kafka:<line> at most 1.5x the reference broker).

    python tests/benchmarks/bench_kafka_suite.py [--lines 4.4,2.8] [--rounds 1]

Each target runs the command `kafka-conformance run` builds (conformance.plugin.launcher), Hypothesis profile
broker, no expectations, with `--count-examples`: wall seconds (broker start and stop included), seconds inside the
tests, and examples, from verdicts.json. The reference broker runs under the Kafka line's own profile, so both sides
draw the same programs' kinds. Then, per suite module, the seconds on each side and their ratio, slowest ratio
first: where the time goes. The best of --rounds is the figure to compare (other load only ever adds time).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.targets.brokers.kafka import release
from tests.benchmarks.bench_reference import suites_run


def run_once(target: str, profile: str) -> tuple[float, float, int, dict[str, float]]:
    """(wall seconds, seconds in tests, examples, seconds per suite module) of the suites against `target`."""
    tests, wall = suites_run(target, profile, "broker", no_expectations=True)
    modules: dict[str, float] = defaultdict(float)
    for test in tests:
        modules[str(test.get("nodeid", "?")).split("::")[0].rsplit("/", 1)[-1]] += float(test.get("duration") or 0)
    examples = sum(int(t.get("examples") or 0) for t in tests)
    return wall, sum(modules.values()), examples, dict(modules)


def best(target: str, profile: str, rounds: int) -> tuple[float, float, int, dict[str, float]]:
    return min((run_once(target, profile) for _ in range(rounds)), key=lambda r: r[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default="4.4", help="comma-separated Kafka lines (default 4.4)")
    parser.add_argument("--rounds", type=int, default=1, help="runs per target; the fastest counts (default 1)")
    args = parser.parse_args()
    print(f"{'target':<12} {'profile':<10} {'wall s':>7} {'tests s':>8} {'examples':>9} {'wall ratio':>11}")
    for line in args.lines.split(","):
        profile = release(line.strip()).profile
        ref = best("reference", profile, args.rounds)
        kafka = best(f"kafka:{line.strip()}", profile, args.rounds)
        print(f"{'reference':<12} {profile:<10} {ref[0]:>7.1f} {ref[1]:>8.1f} {ref[2]:>9}")
        print(f"{'kafka:' + line:<12} {profile:<10} {kafka[0]:>7.1f} {kafka[1]:>8.1f} {kafka[2]:>9} "
              f"{kafka[0] / ref[0]:>10.2f}x")  # fmt: skip
        print("  per suite module (seconds in tests): reference, kafka, ratio")
        rows = [(m, ref[3].get(m, 0.0), kafka[3].get(m, 0.0)) for m in sorted(set(ref[3]) | set(kafka[3]))]
        for module, a, b in sorted(rows, key=lambda r: -(r[2] - r[1])):
            ratio = f"{b / a:.1f}x" if a else "-"
            print(f"  {module:<36} {a:>7.1f} {b:>7.1f} {ratio:>7}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
