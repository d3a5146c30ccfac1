"""Benchmark (issue 5): examples per second of one campaign run in a single process against the same
campaign on Spark `local[2]`, and Spark's fixed start-up cost, in one run on this machine.

Both runs execute the same task table with the same seeds through the same worker (`run_task`): the single
process runs the tasks one after another, Spark runs them as Spark tasks on two cores. Examples are
Hypothesis test cases counted by the plugin (`--count-examples`). Goal: Spark at least 1.7x on 2 cores.

    python tests/benchmarks/bench_campaign.py [--tasks N]
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.campaign.engine import run_campaign, spark_session
from conformance.campaign.tasks import task_table
from conformance.campaign.worker import run_task

SUITES = Path(__file__).resolve().parents[2] / "suites"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4, help="seeds per (target, suite) (default 4)")
    parser.add_argument("--machines", default="all", help="suites (default all: tasks long enough that the per-task "
                        "cost, a pytest child starting, does not dominate)")
    args = parser.parse_args()
    tasks = task_table(["model"], args.machines.split(","), ["kafka-4.0"], args.seeds, 600, suites=SUITES)

    began = time.monotonic()
    single_examples = 0
    for task in tasks:
        rows = run_task(task, "bench-single", str(SUITES), {})
        single_examples += int(rows[0]["task_examples"] or 0)
    single_seconds = time.monotonic() - began

    began = time.monotonic()
    spark = spark_session("local[2]")
    startup = time.monotonic() - began
    with tempfile.TemporaryDirectory() as out:
        began = time.monotonic()
        run_campaign(tasks, Path(out), campaign_id="bench", suites=SUITES, log=io.StringIO(), spark=spark)
        spark_seconds = time.monotonic() - began
        import pyarrow.parquet as pq

        spark_examples = sum(
            int(pq.read_table(p).to_pylist()[0]["task_examples"] or 0) for p in (Path(out) / "rows").glob("*.parquet")
        )
    spark.stop()
    single_rate = single_examples / single_seconds
    spark_rate = spark_examples / spark_seconds
    with_startup = spark_examples / (spark_seconds + startup)
    print(f"{len(tasks)} tasks (model, {args.machines}, kafka-4.0, {args.seeds} seeds each)")
    print(f"single process: {single_examples} examples in {single_seconds:.1f} s = {single_rate:.0f} examples/s")
    print(f"spark local[2]: {spark_examples} examples in {spark_seconds:.1f} s = {spark_rate:.0f} examples/s "
          f"({with_startup:.0f} examples/s counting the session start)")
    print(f"spark session start-up: {startup:.1f} s (fixed cost per campaign)")
    print(f"speed-up: {spark_rate / single_rate:.2f}x without start-up, {with_startup / single_rate:.2f}x with it "
          "(goal: at least 1.7x on 2 cores)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
