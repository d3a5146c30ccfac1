"""`kafka-conformance differential`: the model against Apache Kafka's record layer, at scale, on Spark.

    kafka-conformance differential --batches 10000 --out reports/out/differential            # local[2]
    kafka-conformance differential --batches 10000 --out DIR --master spark://host:7077      # a cluster
    kafka-conformance differential --batches 500 --out DIR --inline       # one process, no Spark jobs
    kafka-conformance differential --case 1:2:1234                        # replay one case, with its reproducer

Exit 0 when every difference found is explained (suites/expectations/differential.json), 1 when some is not,
2 on bad input or a missing Java, jar or PySpark (one line naming the fix).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any, TextIO

from conformance.commands.usage import spark_master
from conformance.jvm import KAFKA_CLIENTS_VERSION, JvmUnavailable
from conformance.oracles.record_layer.cases import generate_case, parse_case_id
from conformance.oracles.record_layer.explained import (
    UNEXPLAINED,
    ExplainedError,
    Explanation,
    classify,
    load_explained,
)
from conformance.oracles.record_layer.job import Plan, run_inline, run_spark
from conformance.oracles.record_layer.model_side import MODEL_FAULTS, model_named
from conformance.oracles.record_layer.report import Summary, summarize, write_outputs
from conformance.oracles.record_layer.reproduce import differences, reproducer, shrink
from conformance.plugin.launcher import suites_dir

EXIT_OK, EXIT_UNEXPLAINED = 0, 1
EXPLAINED_FILE = "differential.json"


class DifferentialError(ValueError):
    """A run that cannot start as asked; the message is one line naming the problem and the fix."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batches", type=int, default=10_000, help="generated batches per magic (default 10000)")
    parser.add_argument("--out", default="reports/out/differential", help="output directory")
    parser.add_argument(
        "--master",
        type=spark_master,
        default=os.environ.get("KTS_SPARK_MASTER", "local[2]"),
        help="Spark master URL (default local[2], env KTS_SPARK_MASTER)",
    )
    parser.add_argument("--seed", type=int, default=1, help="the generation seed (cases are a function of it)")
    parser.add_argument("--magics", default="0,1,2", help="comma-separated magics to generate (default 0,1,2)")
    parser.add_argument(
        "--inline",
        action="store_true",
        help="do the same work in this process without Spark jobs (py4j to the driver's JVM): the baseline",
    )
    parser.add_argument(
        "--explained",
        default=None,
        help="explained-differences file (default: the installed suites/expectations/differential.json)",
    )
    parser.add_argument("--case", default=None, metavar="SEED:MAGIC:INDEX", help="replay one generated case")
    parser.add_argument(
        "--examples", type=int, default=5, help="unexplained cases per magic to shrink and show (default 5)"
    )
    parser.add_argument(
        "--seed-model-fault",
        default=None,
        choices=sorted(MODEL_FAULTS),
        help="run against the model with a seeded fault, to see the oracle catch it",
    )


def explained_path(override: str | None, name: str = EXPLAINED_FILE) -> Path:
    """`--explained`, else the installed suites' `expectations/<name>` (the broker differential's is another)."""
    if override:
        return Path(override)
    return suites_dir() / "expectations" / name


def _magics(text: str) -> tuple[int, ...]:
    try:
        magics = tuple(dict.fromkeys(int(m) for m in text.split(",") if m.strip()))
    except ValueError:
        magics = ()
    if not magics or any(m not in (0, 1, 2) for m in magics):
        raise DifferentialError(f"--magics {text!r}: give a comma-separated subset of 0,1,2")
    return magics


# Bad input this command raises as its own exception: the CLI prints it as one line, exit 2.
USAGE_ERRORS: tuple[type[Exception], ...] = (DifferentialError,)


def run(args: argparse.Namespace, out: TextIO) -> int:
    try:
        explanations = load_explained(explained_path(args.explained))
    except ExplainedError as exc:
        raise DifferentialError(str(exc)) from None
    if args.batches < 1:
        raise DifferentialError(f"--batches {args.batches}: give at least 1 batch per magic")
    magics = _magics(args.magics)
    from conformance import jvm

    try:
        started = time.monotonic()
        spark = jvm.spark_session(args.master)
        startup = time.monotonic() - started
        if args.case:
            return _replay(args, explanations, out)
        return _run(args, spark, startup, magics, explanations, out)
    except JvmUnavailable as exc:
        raise DifferentialError(str(exc)) from None


def _replay(args: argparse.Namespace, explanations: tuple[Explanation, ...], out: TextIO) -> int:
    try:
        seed, magic, index = parse_case_id(args.case)
    except ValueError as exc:
        raise DifferentialError(str(exc)) from None
    model = model_named(args.seed_model_fault)
    case = generate_case(seed, magic, index)
    found = differences(case, model)
    outcome, used, _ = classify(case, found, explanations)
    out.write(f"case {case.case_id}: {outcome}" + (f" (explained by {', '.join(used)})" if used else "") + "\n")
    for d in found:
        out.write(f"  {d.line()}\n")
    if outcome == UNEXPLAINED:
        small = shrink(case, model, explanations)
        out.write("minimal reproducer:\n" + reproducer(small, differences(small, model), model) + "\n")
        return EXIT_UNEXPLAINED
    return EXIT_OK


def _run(
    args: argparse.Namespace,
    spark: Any,
    startup: float,
    magics: tuple[int, ...],
    explanations: tuple[Explanation, ...],
    out: TextIO,
) -> int:
    plan = Plan(seed=args.seed, batches=args.batches, magics=magics, model_fault=args.seed_model_fault)
    target = Path(args.out)
    target.mkdir(parents=True, exist_ok=True)
    where = "inline (one process, no Spark jobs)" if args.inline else f"Spark {args.master}"
    out.write(f"differential: {plan.total} cases ({args.batches} per magic {','.join(map(str, magics))}), {where}, "
              f"session started in {startup:.1f} s\n")  # fmt: skip
    out.flush()
    began = time.monotonic()
    try:
        rows = run_inline(plan, explanations, target) if args.inline else run_spark(spark, plan, explanations, target)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # a failed Spark job or bridge call is ours to fix: one line, not a Java trace
        first = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise DifferentialError(
            f"the differential job failed ({first}): a harness bug, report it with this command"
        ) from None
    job_seconds = time.monotonic() - began
    summary = summarize(spark, rows, magics, args.examples)
    _shrink_examples(summary, plan, explanations)
    run_facts = {
        "kafka_clients": KAFKA_CLIENTS_VERSION,
        "seed": plan.seed,
        "batches": plan.batches,
        "magics": list(magics),
        "cases": plan.total,
        "where": where,
        "master": None if args.inline else args.master,
        "session_seconds": round(startup, 2),
        "job_seconds": round(job_seconds, 2),
        "cases_per_second": round(plan.total / job_seconds, 1) if job_seconds > 0 else None,
        "explained_file": str(explained_path(args.explained)),
        "model_fault": plan.model_fault,
    }
    write_outputs(target, summary, explanations, run_facts)
    _print(out, summary, target, job_seconds)
    return EXIT_UNEXPLAINED if summary.total(UNEXPLAINED) else EXIT_OK


def _shrink_examples(summary: Summary, plan: Plan, explanations: tuple[Explanation, ...]) -> None:
    model = model_named(plan.model_fault)
    for example in summary.examples:
        seed, magic, index = parse_case_id(example.case_id)
        small = shrink(generate_case(seed, magic, index), model, explanations)
        example.reproducer = reproducer(small, differences(small, model), model)


def _print(out: TextIO, summary: Summary, target: Path, seconds: float) -> None:
    for name, row in summary.table().items():
        out.write(
            f"  {name}: {row['batches']} batches, {row['agree']} agree, {row['explained']} explained, "
            f"{row['unexplained']} unexplained\n"
        )
    for key, count in sorted(summary.unexplained_keys.items(), key=lambda kv: -kv[1]):
        out.write(f"  UNEXPLAINED {key}: {count} case(s)\n")
    out.write(f"done in {seconds:.1f} s: {target / 'differential.json'}, {target / 'differential.md'}\n")
