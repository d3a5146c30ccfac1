"""The one runner of Spark tasks: each task one Spark job of one Spark task, as many at once as the session has
slots, each result handed back the moment its job returns. The campaign engine (engine.py) runs its table on it, and
the broker-level differential (conformance/oracles/broker_level/) its tasks.

It imports nothing of the project, and its code holds no literal Hypothesis would take for a "local constant"
(hypothesis.internal.conjecture.providers draws from the literals of the project's modules loaded so far): the
broker-level differential's programs, drawn in the process that imports this module, stay what its seeds give.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Protocol


class SparkTask(Protocol):
    """What `run_jobs` runs: a picklable task with an id (the job group Ctrl-C cancels)."""

    @property
    def task_id(self) -> str: ...


def run_jobs(
    context: Any,
    tasks: Sequence[SparkTask],
    job: Callable[[Any], Any],
    finished: Callable[[Any, Any, float], None],
    *,
    label: str,
    thread_prefix: str,
) -> None:
    """Run `job` on every task, each as one Spark job of one Spark task on `context` (a SparkContext), as many at
    once as it has slots, and hand each task, its result and its seconds to `finished` in this thread as its job
    returns (where the caller writes it: a stopped run keeps every finished task). `job` runs on a Spark worker: a
    function at the top of a module of this package (the worker imports it), the task picklable; `label` names the
    job group. On Ctrl-C the jobs not finished are cancelled and the KeyboardInterrupt goes on to the caller."""
    slots = max(1, int(context.defaultParallelism))

    def one(task: SparkTask) -> tuple[SparkTask, Any, float]:
        began = time.monotonic()
        context.setJobGroup(task.task_id, f"{label} {task.task_id}", interruptOnCancel=True)
        result = context.parallelize([task], 1).map(job).collect()[0]
        return task, result, time.monotonic() - began

    pool = ThreadPoolExecutor(max_workers=slots, thread_name_prefix=thread_prefix)
    futures: set[Future[tuple[SparkTask, Any, float]]] = {pool.submit(one, t) for t in tasks}
    try:
        while futures:
            done, futures = wait(futures, return_when=FIRST_COMPLETED)
            for future in done:
                finished(*future.result())
    except KeyboardInterrupt:
        for future in futures:
            future.cancel()
        context.cancelAllJobs()
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
