"""The broker-level differential's tasks: Hypothesis draws programs (strategies.programs), each runs against the
shared broker and a fresh model (execute.run_program), every answer is compared and classified; one row per
operation, and for any unexplained difference a shrunk program (a reproducer).

A task is picklable (a Spark task builds its own adapter from the broker's `WireFactory` and names its topics
behind a prefix of its own, so tasks share one broker). Inside a task Hypothesis runs with the task's seed and no
example database: rows are recorded for the programs it generates; when one has an unexplained difference,
Hypothesis shrinks it (rows are not recorded for the shrinker's attempts, which re-run programs on fresh topics),
the smallest failing program becomes a reproducer, and the task goes on with the next seed until it has run its
programs. `run_spark` runs tasks on Spark, one job per task (the campaign's runner, conformance.campaign.runner),
and writes each task's rows as Parquet as it finishes (`rows/<task>.parquet`) and its reproducers as JSON
(`reproducers/<id>.json`); `run_inline` does the same in this process.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from conformance.campaign.runner import run_jobs
from conformance.oracles.broker_level.execute import ClockLease, OpOutcome, run_program
from conformance.oracles.broker_level.op_explanations import UNEXPLAINED, UNSUPPORTED, Explanation, classify
from conformance.plugin.hypothesis_profiles import same_examples_for_every_target
from conformance.targets.kinds.implementation import producible_codecs, producible_magics
from conformance.targets.libraries.model.model_broker import ModelFactory
from conformance.targets.routes.wire_adapter.kafka_wire import WireFactory
from models.profiles import get_profile, narrow_versions
from strategies.programs import Program, program_to_json, programs

ROWS_DIR, REPRODUCERS_DIR = "rows", "reproducers"
ROW_FIELDS: tuple[tuple[str, str], ...] = (
    ("target", "string"),
    ("profile", "string"),
    ("task", "string"),
    ("program", "long"),
    ("op_index", "int"),
    ("op", "string"),
    ("api_version", "int"),
    ("outcome", "string"),  # agree, explained, unexplained, unsupported
    ("explained_by", "array<string>"),
    ("unexplained", "array<string>"),  # "check field" of each difference no entry explains
    ("differences", "string"),  # JSON list of every difference (empty when the sides agree)
    ("facts", "array<string>"),
    ("seconds", "double"),
    ("detail", "string"),
)
SHRINK_SECONDS = 180.0  # default time a task spends shrinking one failing program; then the smallest one is kept
ROUNDS = 8  # seeds a task tries, each after a failure was shrunk, before it stops


@dataclass(frozen=True)
class DiffTask:
    task_id: str
    seed: int
    programs: int  # programs to generate (Hypothesis's max_examples, across rounds)
    factory: WireFactory
    target: str  # the target's name in rows and reproducers (kafka:4.0, reference)
    profile: str
    explanations: tuple[Explanation, ...]
    max_ops: int = 40
    run_id: str = "run"
    shrink_seconds: float = SHRINK_SECONDS
    rounds: int = ROUNDS  # seeds tried: after each failure (shrunk to a reproducer) the next seed, up to this many


@dataclass
class TaskResult:
    task_id: str
    rows: list[dict[str, Any]]
    reproducers: list[dict[str, Any]]
    programs: int = 0
    seconds: float = 0.0
    error: str | None = None


class _Unexplained(Exception):
    def __init__(self, program: Program, lines: list[str]) -> None:
        super().__init__("; ".join(lines[:3]))
        self.program = program
        self.lines = lines


def _size(program: Program) -> tuple[int, int]:
    return (len(program.ops), sum(len(getattr(op, "records", ())) for op in program.ops))


def run_task(task: DiffTask) -> TaskResult:
    """Runs on a Spark worker (or inline): see the module doc. A failure of the harness itself (the broker lost,
    our bug) is the result's `error`, with the rows recorded so far kept."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as with_seed
    from hypothesis.errors import Flaky

    from strategies.records import combinations

    # A seed's programs must not depend on which of the project's modules happen to be loaded (Hypothesis draws
    # from the constants of the local modules it finds loaded): a module moved or imported elsewhere would
    # otherwise change every task's programs, and a run's reproducers would not replay in another process.
    same_examples_for_every_target()
    began = time.monotonic()
    result = TaskResult(task.task_id, [], [])
    factory = dataclasses.replace(task.factory, topic_prefix=f"kts-bd-{task.run_id}-{task.task_id}-")
    impl = factory.build()
    try:
        profile = narrow_versions(get_profile(task.profile), impl.offered_versions)  # type: ignore[attr-defined]
        pairs = combinations(producible_magics(impl.capabilities, profile), producible_codecs(impl.capabilities))
        lease = ClockLease(task.factory.bootstrap)
        state: dict[str, Any] = {"topics": 0, "failing": None, "smallest": None, "since": 0.0}

        def body(program: Program) -> None:
            shrinking = state["failing"] is not None
            if shrinking and time.monotonic() - state["since"] > task.shrink_seconds:
                return  # out of shrinking time: the smallest failing program so far is kept (Flaky below)
            state["topics"] += 1
            topic = f"p{state['topics']}"
            model = ModelFactory(task.profile, brokers=1, start_time=program.start_ms).build()
            outcomes = run_program(program, impl, model, topic, lease)
            bad: list[str] = []
            number = result.programs
            if not shrinking:
                result.programs += 1
            for outcome in outcomes:
                row, left = _row(task, number, outcome)
                if not shrinking:
                    result.rows.append(row)
                bad.extend(f"op {outcome.index} ({outcome.kind} v{outcome.version}): {d.line()}" for d in left)
            if bad:
                if not shrinking:
                    state["failing"], state["since"] = program, time.monotonic()
                if state["smallest"] is None or _size(program) < _size(state["smallest"][0]):
                    state["smallest"] = (program, bad)
                raise _Unexplained(program, bad)

        for round_ in range(task.rounds):
            remaining = task.programs - result.programs
            if remaining <= 0:
                break
            state["failing"] = state["smallest"] = None
            test = settings(
                max_examples=remaining,
                database=None,
                deadline=None,
                derandomize=False,
                phases=(Phase.generate, Phase.shrink),
                suppress_health_check=list(HealthCheck),
                verbosity=Verbosity.quiet,
                report_multiple_bugs=False,
            )(with_seed(task.seed * 1_000 + round_)(given(programs(profile, pairs, max_ops=task.max_ops))(body)))
            try:
                test()
            except (_Unexplained, Flaky):
                program, lines = state["smallest"]
                result.reproducers.append(_reproducer(task, len(result.reproducers), program, lines))
            if state["failing"] is None:
                break  # every program generated agreed (or was explained)
    except Exception as exc:  # the harness's own failure: kept as the task's error, never a lost task
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        impl.close()
        result.seconds = time.monotonic() - began
    return result


def _row(task: DiffTask, program: int, outcome: OpOutcome) -> tuple[dict[str, Any], tuple[Any, ...]]:
    if outcome.unsupported is not None:
        kind, used, left = UNSUPPORTED, (), ()
    else:
        kind, used, left = classify(outcome.differences, task.explanations, facts=outcome.facts,
                                    version=outcome.version, target=task.target)  # fmt: skip
    row = {
        "target": task.target,
        "profile": task.profile,
        "task": task.task_id,
        "program": program,
        "op_index": outcome.index,
        "op": outcome.kind,
        "api_version": outcome.version,
        "outcome": kind,
        "explained_by": list(used),
        "unexplained": sorted({f"{d.check} {d.field}" for d in left}),
        "differences": json.dumps([dataclasses.asdict(d) for d in outcome.differences]) if outcome.differences else "",
        "facts": sorted(outcome.facts),
        "seconds": outcome.seconds,
        "detail": outcome.unsupported or "",
    }
    return row, left


def _reproducer(task: DiffTask, number: int, program: Program, lines: list[str]) -> dict[str, Any]:
    ident = f"{task.task_id}-{number}"
    return {
        "id": ident,
        "target": task.target,
        "profile": task.profile,
        "differences": lines,
        "program": program_to_json(program),
        "replay": f"kafka-conformance broker-differential --target {task.target} --profile {task.profile} "
        f"--replay {REPRODUCERS_DIR}/{ident}.json",
    }


# -- writing


def write_result(out: Path, result: TaskResult) -> Path:
    """The task's rows as one Parquet file (temporary name, then renamed: never half a file), its reproducers as
    JSON files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = out / ROWS_DIR / f"{result.task_id}.parquet"
    target.parent.mkdir(parents=True, exist_ok=True)
    schema = arrow_schema()
    columns = {name: [row[name] for row in result.rows] for name, _ in ROW_FIELDS}
    temporary = target.with_suffix(".parquet.tmp")
    pq.write_table(pa.table(columns, schema=schema), temporary)
    temporary.replace(target)
    if result.reproducers:
        (out / REPRODUCERS_DIR).mkdir(parents=True, exist_ok=True)
        for reproducer in result.reproducers:
            (out / REPRODUCERS_DIR / f"{reproducer['id']}.json").write_text(json.dumps(reproducer, indent=2) + "\n")
    return target


def arrow_schema() -> Any:
    import pyarrow as pa

    kinds = {"string": pa.string(), "int": pa.int32(), "long": pa.int64(), "double": pa.float64(),
             "array<string>": pa.list_(pa.string())}  # fmt: skip
    return pa.schema([(name, kinds[kind]) for name, kind in ROW_FIELDS])


# -- running


Progress = Callable[[TaskResult], None]


def run_inline(tasks: Sequence[DiffTask], out: Path, progress: Progress) -> list[TaskResult]:
    results = []
    for task in tasks:
        result = run_task(task)
        write_result(out, result)
        progress(result)
        results.append(result)
    return results


def _spark_task(task: DiffTask) -> TaskResult:
    return run_task(task)  # on a Spark worker: importable from this package, the task picklable


def run_spark(spark: Any, tasks: Sequence[DiffTask], out: Path, progress: Progress) -> list[TaskResult]:
    """One Spark job per task on the campaign engine's runner, as many at once as the session has slots; each
    task's rows are written when it finishes."""
    results: list[TaskResult] = []

    def finished(task: DiffTask, result: TaskResult, seconds: float) -> None:
        write_result(out, result)
        results.append(result)
        progress(result)

    run_jobs(spark.sparkContext, tasks, _spark_task, finished, label="broker differential task",
             thread_prefix="brokerdiff")  # fmt: skip
    return results


def progress_printer(log: TextIO = sys.stdout) -> Progress:
    def line(result: TaskResult) -> None:
        unexplained = sum(1 for r in result.rows if r["outcome"] == UNEXPLAINED)
        status = f"error: {result.error}" if result.error else f"{unexplained} unexplained"
        log.write(f"task {result.task_id}: {result.programs} programs, {len(result.rows)} operations, {status}, "
                  f"{result.seconds:.1f} s\n")  # fmt: skip
        log.flush()

    return line
