"""Running a campaign on Spark: each task of the table is one Spark job of one Spark task, so
`local[2]` runs two at a time and a cluster as many as it has cores, unchanged. The driver submits the
jobs from a small thread pool and writes each task's rows to `rows/<task_id>.parquet` the moment its job
returns, so a crash or Ctrl-C loses no finished task and `--resume` skips them (that runner, for any picklable task,
is `conformance.campaign.runner.run_jobs`; the broker-level differential runs its tasks on it too).

Spark's toolchain facts apply: PYSPARK_PYTHON is set to this interpreter before the session
starts, the function shipped to workers lives in this importable package, and Hypothesis runs without an
example database inside tasks (the worker's `dev` profile).
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from conformance.campaign.rows import ROW_FIELDS
from conformance.campaign.runner import run_jobs
from conformance.campaign.tasks import CampaignTask
from conformance.campaign.worker import run_task
from conformance.judging.verdicts import TaskStatus
from conformance.jvm.masters import driver_builder


class SparkUnavailable(RuntimeError):
    """PySpark or Java is missing or the session did not start; the message names the fix."""


@dataclass
class CampaignProgress:
    total: int
    skipped: int = 0
    done: int = 0
    failed_tasks: list[str] = field(default_factory=list)
    examples: int = 0  # Hypothesis examples of the tasks finished in this run
    started: float = field(default_factory=time.monotonic)

    def line(self, task: CampaignTask, status: str, seconds: float) -> str:
        elapsed = time.monotonic() - self.started
        rate = self.examples / elapsed if elapsed > 0 else 0.0
        return (
            f"[{self.done + self.skipped}/{self.total}] {task.task_id}: {status} in {seconds:.1f} s "
            f"({len(self.failed_tasks)} task(s) timed out or crashed, {self.examples} examples at "
            f"{rate:.1f}/s, {elapsed:.0f} s elapsed)"
        )


def rows_dir(out: Path) -> Path:
    return out / "rows"


def finished_tasks(out: Path) -> set[str]:
    """Task ids whose rows are on disk (what --resume skips)."""
    return {p.stem for p in rows_dir(out).glob("*.parquet")}


def spark_session(master: str, app: str = "kafka-conformance campaign") -> Any:
    """A Spark session for `master` (conformance.jvm.masters.driver_builder: a laptop campaign, local[N] or a
    standalone cluster on loopback, talks to nothing but loopback), or SparkUnavailable naming the fix (PySpark,
    Java)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkUnavailable(
            "PySpark is not installed: pip install 'kafka-timestamp-conformance[campaign]' (or pip install pyspark)"
        ) from None
    if not (os.environ.get("JAVA_HOME") or _on_path("java")):
        raise SparkUnavailable("Spark needs Java 17 or newer: install a JDK or set JAVA_HOME")
    try:
        return driver_builder(SparkSession, master, app).getOrCreate()
    except Exception as exc:  # Py4J and JVM start-up errors: one line, not a Java trace
        raise SparkUnavailable(f"Spark did not start with --master {master}: {str(exc).splitlines()[0]}") from None


def _on_path(name: str) -> bool:
    import shutil

    return shutil.which(name) is not None


def _spark_task(task: CampaignTask, *, campaign_id: str, suites: str, expectations: dict[str, str]) -> list[Any]:
    # Runs on a Spark worker: importable from this package, arguments picklable.
    return run_task(task, campaign_id, suites, expectations)


def write_rows(out: Path, task: CampaignTask, rows: Sequence[dict[str, Any]]) -> Path:
    """The task's rows as one Parquet file, written under a temporary name and renamed (never half a file)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = rows_dir(out) / f"{task.task_id}.parquet"
    target.parent.mkdir(parents=True, exist_ok=True)
    columns = {name: [row.get(name) for row in rows] for name in ROW_FIELDS}
    schema = pa.schema(
        [
            (name, pa.float64() if name in ("first_failure_s", "task_seconds", "finished_at")
             else pa.int64() if name in ("seed", "tests", "examples", "task_examples") else pa.string())
            for name in ROW_FIELDS
        ]
    )  # fmt: skip
    temporary = target.with_suffix(".parquet.tmp")
    pq.write_table(pa.table(columns, schema=schema), temporary)
    temporary.replace(target)
    return target


def run_campaign(
    tasks: Sequence[CampaignTask],
    out: Path,
    *,
    master: str = "local[2]",
    campaign_id: str,
    suites: Path = Path("suites"),
    expectations: dict[str, str] | None = None,
    resume: bool = False,
    log: TextIO = sys.stdout,
    spark: Any = None,
) -> CampaignProgress:
    """Run every task not yet finished (with `resume`) and write its rows as it finishes. `spark`: a session
    to use (the caller stops it); without one a session for `master` is started here and stopped."""
    out.mkdir(parents=True, exist_ok=True)
    done_before = finished_tasks(out) if resume else set()
    pending = [t for t in tasks if t.task_id not in done_before]
    progress = CampaignProgress(total=len(tasks), skipped=len(tasks) - len(pending))
    if progress.skipped:
        log.write(f"resuming: {progress.skipped} of {len(tasks)} task(s) already finished\n")
    if not pending:
        return progress
    own = spark is None
    if own:
        started = time.monotonic()
        spark = spark_session(master)
        log.write(f"spark session ({master}) started in {time.monotonic() - started:.1f} s\n")
        log.flush()
    context = spark.sparkContext
    context.setLogLevel("ERROR")
    job = functools.partial(
        _spark_task, campaign_id=campaign_id, suites=str(suites.resolve()), expectations=dict(expectations or {})
    )

    def finished(task: CampaignTask, rows: list[dict[str, Any]], seconds: float) -> None:
        write_rows(out, task, rows)
        status = rows[0]["status"] if rows else TaskStatus.CRASHED
        progress.done += 1
        progress.examples += int(rows[0].get("task_examples") or 0) if rows else 0
        if status != TaskStatus.OK:
            progress.failed_tasks.append(task.task_id)
        log.write(progress.line(task, status, seconds) + "\n")
        log.flush()

    try:
        run_jobs(context, pending, job, finished, label="campaign task", thread_prefix="campaign")
    except KeyboardInterrupt:
        log.write(
            f"interrupted: {progress.done + progress.skipped} of {len(tasks)} task(s) finished and kept in "
            f"{rows_dir(out)}; run again with --resume to complete the campaign\n"
        )
        raise
    finally:
        if own:
            spark.stop()
    return progress
