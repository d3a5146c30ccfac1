"""`kafka-conformance broker-differential`: generated programs against a real broker and the model, on Spark.

    kafka-conformance broker-differential --target kafka:4.0 --ops 10000          # local[2], one Kafka shared
    kafka-conformance broker-differential --target kafka:3.9 --master spark://127.0.0.1:7077
    kafka-conformance broker-differential --target reference --ops 500 --inline    # one process, no Spark
    kafka-conformance broker-differential --target reference:mutant:<id> --ops 500 --inline   # see it catch one
    kafka-conformance broker-differential --target kafka:4.0 --replay DIR/reproducers/<id>.json

Starts the target (a broker whose clock the suite sets: `kafka:<line>`, `reference`, `reference:mutant:<id>`), then
runs tasks that draw programs (several producers with skewed clocks, CreateTime and LogAppendTime topics,
compression, validation bounds, clock moves, fetches at every version, lookups at every target kind:
strategies.programs) until at least --ops operations have been compared. Writes into --out: `rows/<task>.parquet`
(one row per operation), `reproducers/<id>.json` (a shrunk program for each unexplained difference),
`summary.json` and `summary.md`.

Exit 0 when every difference is explained (suites/expectations/broker-differential.json) and every task finished,
1 otherwise, 2 on bad input (one line naming the fix), 130 when stopped.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from conformance.commands.differential import explained_path as shipped_or_given
from conformance.commands.usage import (
    EXIT_CHECK_FAILED,
    EXIT_OK,
    UsageError,
    add_quiet,
    check_profile,
    output_directory,
    sigterm_as_interrupt,
    spark_master,
)
from conformance.errors import TargetError
from conformance.judging.capabilities import Capability
from conformance.oracles.broker_level.diff_tasks import (
    REPRODUCERS_DIR,
    ROUNDS,
    ROWS_DIR,
    SHRINK_SECONDS,
    DiffTask,
    TaskResult,
    progress_printer,
    run_inline,
    run_spark,
)
from conformance.oracles.broker_level.op_explanations import (
    EXPLAINED,
    UNEXPLAINED,
    UNSUPPORTED,
    ExplainedError,
    Explanation,
    classify,
    load_explained,
)
from conformance.targets.brokers.process import ManagedProcessError
from conformance.targets.kinds.implementation import Kind
from conformance.targets.registry import check_target, default_profile, open_target, parse_target, spec_of
from conformance.targets.routes.wire_adapter.kafka_wire import WireFactory
from conformance.targets.target import ServedBy, Target

EXPLAINED_FILE = "broker-differential.json"
SHOWN_DIFFERENCES = 5  # of each reproducer, on the terminal and in summary.json
# To plan the first wave; later waves use what the earlier ones measured. Programs of at most 40 operations compare
# 14.6 on average (kafka:4.4 and kafka:4.0, the first 35 tasks, 2026-12-07); a guess a little under it makes the
# first wave enough without overshooting (with 10, --ops 10000 ran 14,560 operations, 46% more than asked).
FIRST_GUESS_OPS_PER_PROGRAM = 14


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_quiet(parser)
    parser.add_argument("--target", default="kafka", help="a broker whose clock the suite sets: kafka[:<line>] "
                        "(default: the newest line), reference, or reference:mutant:<id>")  # fmt: skip
    parser.add_argument("--profile", default=None, help="the behaviour profile (default: the target's own)")
    parser.add_argument("--ops", type=int, default=10_000, help="operations to compare, at least (default 10000)")
    parser.add_argument("--programs-per-task", type=int, default=20, help="programs one task draws (default 20)")
    parser.add_argument("--max-ops", type=int, default=40, help="operations per program, at most (default 40)")
    parser.add_argument("--shrink-seconds", type=float, default=SHRINK_SECONDS, help="time a task spends shrinking "
                        f"one failing program to a reproducer (default {SHRINK_SECONDS:g})")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="seeds a task tries: after a failing "
                        f"program is shrunk it goes on with the next seed, at most (default {ROUNDS})")  # fmt: skip
    parser.add_argument("--seed", type=int, default=1, help="the first task's seed (task n uses seed + n)")
    parser.add_argument("--master", type=spark_master, default=os.environ.get("KTS_SPARK_MASTER", "local[2]"),
                        help="Spark master URL (default local[2], env KTS_SPARK_MASTER)")  # fmt: skip
    parser.add_argument("--inline", action="store_true", help="run the tasks in this process, without Spark")
    parser.add_argument("--out", default=None, help="output directory (default reports/out/broker-differential/"
                        "<target>)")  # fmt: skip
    parser.add_argument("--explained", default=None, help="explained-differences file (default: the installed "
                        f"suites/expectations/{EXPLAINED_FILE})")  # fmt: skip
    parser.add_argument("--replay", default=None, metavar="FILE", help="run one reproducer's program and show "
                        "every difference")  # fmt: skip
    parser.add_argument("--log-dir", default=None, help="where the broker's log goes (default OUT/logs)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds each request may take (default 10)")


def explained_path(override: str | None) -> Path:
    return shipped_or_given(override, EXPLAINED_FILE)


def _target(args: argparse.Namespace) -> Target:
    try:
        target = parse_target(args.target)
        spec = spec_of(target)
        if spec.kind is not Kind.BROKER or spec.served_by not in (ServedBy.MANAGED, ServedBy.REFERENCE) or not (
            str(target).startswith("kafka") or spec.served_by is ServedBy.REFERENCE
        ):
            raise TargetError(
                f"--target {args.target}: the broker differential sets the broker's clock, so it runs against "
                "kafka[:<line>], reference or reference:mutant:<id>"
            )
        if args.profile is None:
            args.profile = default_profile(target)
        check_profile(args.profile)
        return check_target(target, args.profile)
    except TargetError as exc:
        raise UsageError(str(exc)) from None


def _check_arguments(args: argparse.Namespace) -> tuple[Explanation, ...]:
    if args.shrink_seconds < 0:
        raise UsageError(f"--shrink-seconds {args.shrink_seconds:g}: give 0 or more seconds")
    for name in ("ops", "programs_per_task", "max_ops", "rounds"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} {getattr(args, name)}: give a positive number")
    if args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout:g}: give a positive number of seconds")
    try:
        return load_explained(explained_path(args.explained))
    except ExplainedError as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace, out: TextIO) -> int:
    explanations = _check_arguments(args)
    target = _target(args)
    replay = _read_replay(args.replay) if args.replay else None
    folder = output_directory(args.out or Path("reports/out/broker-differential") / str(target).replace(":", "-"))
    log_dir = Path(args.log_dir) if args.log_dir else folder / "logs"
    with sigterm_as_interrupt():
        try:
            with open_target(target, args.profile, log_dir=log_dir, timeout=args.timeout) as (factory, _logs):
                assert isinstance(factory, WireFactory), f"{target} opened as {type(factory).__name__}"
                _check_clock(factory)
                if replay is not None:
                    return _replay(replay, factory, str(target), args.profile, explanations, out)
                return _run(args, factory, str(target), explanations, folder, out)
        except TargetError as exc:  # it could not be had or started (open_target says which): bad input, exit 2
            raise UsageError(str(exc)) from None
        except ManagedProcessError as exc:
            out.write(f"kafka-conformance: {target} did not start: {exc}\n")
            return EXIT_CHECK_FAILED


def _check_clock(factory: WireFactory) -> None:
    impl = factory.build()
    try:
        if Capability.CLOCK_CONTROL not in impl.capabilities:
            raise UsageError(f"{factory.target} does not let the suite set its clock: the broker differential needs "
                             "a target with clock-control (kafka:<line>, reference)")  # fmt: skip
    finally:
        impl.close()


def _read_replay(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
        program = data["program"]
        from strategies.programs import program_from_json

        program_from_json(program)
        return dict(data)
    except FileNotFoundError:
        raise UsageError(f"--replay {path}: no such file (reproducers are in OUT/{REPRODUCERS_DIR}/)") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--replay {path}: not a reproducer this version reads ({type(exc).__name__}: {exc}); "
                         f"give a file from OUT/{REPRODUCERS_DIR}/") from None  # fmt: skip


def _replay(data: dict[str, Any], factory: WireFactory, target: str, profile: str,
            explanations: tuple[Explanation, ...], out: TextIO) -> int:  # fmt: skip
    from conformance.oracles.broker_level.execute import ClockLease, run_program
    from conformance.targets.libraries.model.model_broker import ModelFactory
    from strategies.programs import program_from_json

    program = program_from_json(data["program"])
    impl = factory.build()
    try:
        model = ModelFactory(profile, brokers=1, start_time=program.start_ms).build()
        outcomes = run_program(program, impl, model, f"replay-{uuid.uuid4().hex[:6]}", ClockLease(factory.bootstrap))
    finally:
        impl.close()
    unexplained = 0
    for o in outcomes:
        kind, used, _left = classify(o.differences, explanations, facts=o.facts, version=o.version, target=target)
        if o.unsupported:
            kind = UNSUPPORTED
        unexplained += kind == UNEXPLAINED
        note = f" (explained by {', '.join(used)})" if used else ""
        out.write(f"op {o.index} {o.kind} v{o.version}: {kind}{note}\n")
        for d in o.differences:
            out.write(f"  {d.line()}\n")
    out.write(f"{target}: {len(outcomes)} operations, {unexplained} with an unexplained difference\n")
    return EXIT_CHECK_FAILED if unexplained else EXIT_OK


def _run(args: argparse.Namespace, factory: WireFactory, target: str, explanations: tuple[Explanation, ...],
         folder: Path, out: TextIO) -> int:  # fmt: skip
    for stale in [*(folder / ROWS_DIR).glob("*.parquet"), *(folder / REPRODUCERS_DIR).glob("*.json")]:
        stale.unlink()
    run_id = uuid.uuid4().hex[:6]
    spark = None
    began = time.monotonic()
    if not args.inline:
        from conformance.campaign.engine import SparkUnavailable, spark_session

        try:
            spark = spark_session(args.master, app="kafka-conformance broker-differential")
        except SparkUnavailable as exc:
            raise UsageError(str(exc)) from None
        spark.sparkContext.setLogLevel("ERROR")
    startup = time.monotonic() - began
    where = "inline (one process)" if args.inline else f"Spark {args.master}"
    out.write(f"broker differential: {target} ({args.profile}), at least {args.ops} operations, {where}\n")
    out.flush()
    results: list[TaskResult] = []
    progress = progress_printer(out)
    wave, done, programs = 0, 0, 0
    try:
        while done < args.ops and wave < 20:
            per_program = done / programs if programs else FIRST_GUESS_OPS_PER_PROGRAM
            count = max(1, math.ceil((args.ops - done) / max(per_program, 1.0) / args.programs_per_task))
            if spark is not None:
                count = max(count, int(spark.sparkContext.defaultParallelism)) if wave == 0 else count
            tasks = [
                DiffTask(f"w{wave}-t{n}", args.seed + 1_000 * wave + n, args.programs_per_task, factory, target,
                         args.profile, explanations, max_ops=args.max_ops, run_id=run_id,
                         shrink_seconds=args.shrink_seconds, rounds=args.rounds)
                for n in range(count)
            ]
            found = run_inline(tasks, folder, progress) if spark is None else run_spark(spark, tasks, folder, progress)
            results.extend(found)
            done += sum(len(r.rows) for r in found)
            programs += sum(r.programs for r in found)
            wave += 1
            if any(r.error for r in found):
                break
    finally:
        if spark is not None:
            spark.stop()
    seconds = time.monotonic() - began
    summary = summarize(results, explanations)
    summary.update(target=target, profile=args.profile, where=where, master=None if args.inline else args.master,
                   session_seconds=round(startup, 1), seconds=round(seconds, 1),
                   ops_per_second=round(summary["operations"] / seconds, 1) if seconds else None,
                   explained_file=str(explained_path(args.explained)))  # fmt: skip
    (folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (folder / "summary.md").write_text(summary_markdown(summary))
    failed = summary["outcomes"].get(UNEXPLAINED, 0) or summary["task_errors"]
    out.write(verdict_line(summary) + f" ({folder / 'summary.md'})\n")
    if failed:
        out.writelines(line + "\n" for line in difference_lines(summary))
    return EXIT_CHECK_FAILED if failed else EXIT_OK


def summarize(results: Sequence[TaskResult], explanations: Sequence[Explanation]) -> dict[str, Any]:
    """Counts over every row: by outcome, by operation and version, the unexplained differences by field, the
    explanations used and those that explained nothing."""
    rows = [r for result in results for r in result.rows]
    by_op: dict[str, Counter[str]] = {}
    for row in rows:
        key = f"{row['op']} v{row['api_version']}" if row["api_version"] >= 0 else row["op"]
        by_op.setdefault(key, Counter())[row["outcome"]] += 1
    used = Counter(entry for row in rows for entry in row["explained_by"])
    unexplained = Counter(key for row in rows for key in row["unexplained"])
    return {
        "operations": len(rows),
        "programs": sum(r.programs for r in results),
        "tasks": len(results),
        "task_errors": [f"{r.task_id}: {r.error}" for r in results if r.error],
        "outcomes": dict(Counter(row["outcome"] for row in rows)),
        "by_operation": {k: dict(v) for k, v in sorted(by_op.items(), key=lambda kv: _op_order(kv[0]))},
        "unexplained_by_field": dict(unexplained.most_common()),
        "explained_by": dict(used.most_common()),
        "explanations_unused": [e.id for e in explanations if e.id not in used],
        "reproducers": [f"{REPRODUCERS_DIR}/{p['id']}.json" for r in results for p in r.reproducers],
        "differences": {
            f"{REPRODUCERS_DIR}/{p['id']}.json": p["differences"][:SHOWN_DIFFERENCES]
            for r in results
            for p in r.reproducers
        },
    }


def difference_lines(summary: dict[str, Any]) -> list[str]:
    """The first differences of each shrunk reproducer, for the terminal: a run whose folder is gone (a CI
    machine) still tells what disagreed."""
    lines = []
    for path, differences in summary["differences"].items():
        lines.append(f"{path}: replay with --replay {path}")
        lines += [f"  {d}" for d in differences]
    return lines


def _op_order(key: str) -> tuple[str, int]:
    name, _, version = key.partition(" v")
    return (name, int(version) if version else -1)


def verdict_line(summary: dict[str, Any]) -> str:
    outcomes = summary["outcomes"]
    counts = ", ".join(f"{outcomes.get(k, 0)} {k}" for k in ("agree", EXPLAINED, UNEXPLAINED, UNSUPPORTED))
    errors = f"; {len(summary['task_errors'])} task error(s)" if summary["task_errors"] else ""
    word = "FAIL" if outcomes.get(UNEXPLAINED, 0) or summary["task_errors"] else "OK"
    return (f"{word}: {summary['operations']} operations in {summary['programs']} programs ({counts}){errors}, "
            f"{summary.get('seconds', 0)} s")  # fmt: skip


def summary_markdown(summary: dict[str, Any]) -> str:
    lines = [
        f"# Broker differential: {summary['target']} ({summary['profile']})",
        "",
        verdict_line(summary),
        "",
        f"Where: {summary['where']}. Explained differences: `{summary['explained_file']}`.",
        "",
        "| operation | agree | explained | unexplained | unsupported |",
        "|---|---|---|---|---|",
    ]
    for key, counts in summary["by_operation"].items():
        lines.append(f"| {key} | {counts.get('agree', 0)} | {counts.get(EXPLAINED, 0)} | "
                     f"{counts.get(UNEXPLAINED, 0)} | {counts.get(UNSUPPORTED, 0)} |")  # fmt: skip
    if summary["unexplained_by_field"]:
        lines += ["", "## Unexplained differences (check field: operations)", ""]
        lines += [f"- `{k}`: {v}" for k, v in summary["unexplained_by_field"].items()]
    if summary["reproducers"]:
        lines += ["", "## Shrunk reproducers", ""]
        lines += [f"- `{p}` (replay: `kafka-conformance broker-differential --target {summary['target']} "
                  f"--replay {p}`)" for p in summary["reproducers"]]  # fmt: skip
    if summary["explained_by"]:
        lines += ["", "## Explanations used", ""] + [f"- `{k}`: {v}" for k, v in summary["explained_by"].items()]
    if summary["explanations_unused"]:
        lines += ["", "## Explanations that explained nothing (stale?)", ""]
        lines += [f"- `{k}`" for k in summary["explanations_unused"]]
    if summary["task_errors"]:
        lines += ["", "## Task errors", ""] + [f"- {e}" for e in summary["task_errors"]]
    return "\n".join(lines) + "\n"
