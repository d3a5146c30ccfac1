"""`kafka-conformance campaign`: plan the task table, run it on Spark, aggregate the matrix (issue 5).
Usage problems are CampaignErrors, which the CLI prints as one line with exit code 2.

    kafka-conformance campaign --targets model,mutant:lookup-last-match,tansu --machines list_offsets \\
        --profiles kafka-4.0 --seeds 2 --budget 60s --master local[2] --out reports/out/campaign-demo

Writes into --out: `campaign.json` (the plan), `rows/<task>.parquet` (as tasks finish), `matrix.md`,
`matrix.html`, `matrix.png` and `tasks.md`. Exit 0 when every task ran to its end, 1 when a task timed
out or crashed, 2 on bad input. Verdicts themselves do not set the exit code: a campaign is a survey.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any, TextIO

from ..launcher import LauncherError
from ..launcher import suites_dir as _installed_suites
from ..mutation import KILLED, SURVIVED, WRONG_CLAUSE
from ..verdicts import KILLS, words
from .tasks import ALL, CampaignError, CampaignTask, task_table


def suites_dir(override: str | None) -> Path:
    """The suites directory (`--suites`, else the installed package), a CampaignError naming the fix."""
    try:
        return _installed_suites(override)
    except LauncherError as exc:
        raise CampaignError(str(exc)) from None

EXIT_OK, EXIT_TASKS_FAILED, EXIT_USAGE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--targets",
        required=True,
        help="comma-separated: model, mutant:<id>, mutants (all), reference, reference:mutant:<id>, "
        "served-mutants (all served by the reference broker, but those whose fault is only in a consumer's "
        "reading), tansu, noida, ...",
    )
    parser.add_argument("--machines", default=ALL, help="comma-separated suite modules (e.g. list_offsets) or all")
    parser.add_argument("--profiles", default="kafka-4.0", help="comma-separated behaviour profiles")
    parser.add_argument("--seeds", type=int, default=1, help="Hypothesis seeds per (target, suite, profile)")
    parser.add_argument("--budget", default="60s", help="time limit per task, e.g. 60s or 2m (default 60s)")
    parser.add_argument("--master", default=os.environ.get("KTS_SPARK_MASTER", "local[2]"), help="Spark master URL")
    parser.add_argument("--out", default=None, help="output directory (default reports/out/campaign-<id>)")
    parser.add_argument("--resume", action="store_true", help="skip the tasks whose rows are already in --out")
    parser.add_argument("--suites", default=None, help="the suites directory (default: the installed suites)")
    parser.add_argument(
        "--audit",
        action="store_true",
        help="also audit each target: a generated topic's ListOffsets answers against Spark's ground truth",
    )
    parser.add_argument(
        "--hypothesis-profile",
        default="dev",
        choices=("fast", "dev", "ci", "broker"),
        help="the Hypothesis budget of every task (default dev); the task's --budget still bounds it",
    )
    parser.add_argument(
        "--expectations",
        action="append",
        default=[],
        metavar="TARGET=FILE",
        help="known failures of a target (default: suites/expectations/<target>.toml where it exists)",
    )


def expand_targets(targets: list[str]) -> list[str]:
    """`mutants` stands for every seeded mutant (mutant:<id> for each, in id order); `served-mutants` for every
    mutant served by the reference broker (reference:mutant:<id>: the same faults over the wire)."""
    out: list[str] = []
    for target in targets:
        if target in ("mutants", "served-mutants"):
            from ..adapters.mutants import MUTANTS

            if target == "mutants":
                out += [f"mutant:{m}" for m in sorted(MUTANTS)]
            else:  # a fault only in a consumer's reading has nothing to show over the wire (Mutant.reader_only)
                out += [f"reference:mutant:{m}" for m in sorted(MUTANTS) if not MUTANTS[m].reader_only]
        else:
            out.append(target)
    return list(dict.fromkeys(out))


def mutant_kills(matrix: Any) -> dict[tuple[str, str], str]:
    """(mutant target, profile) -> KILLED (a clause the mutant declares failed: FAIL, or NON-STRICT for a
    SHOULD), WRONG-CLAUSE (only other clauses failed) or SURVIVED, as `kafka-conformance mutants` grades."""
    from ..adapters.mutants import MUTANTS

    kills: dict[tuple[str, str], str] = {}
    for target, profile in matrix.columns:
        mutant = target.removeprefix("reference:").removeprefix("mutant:")
        if not target.removeprefix("reference:").startswith("mutant:") or mutant not in MUTANTS:
            continue
        declared = set(MUTANTS[mutant].clauses)
        failing = {c for c in matrix.clauses if getattr(matrix.cells.get((c, (target, profile))), "verdict", "")
                   in words(KILLS)}  # fmt: skip
        kills[(target, profile)] = KILLED if failing & declared else WRONG_CLAUSE if failing else SURVIVED
    return kills


def parse_budget(text: str) -> float:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*", text)
    if not match:
        raise CampaignError(f"--budget {text!r}: give seconds per task like 60s, 90 or 2m")
    return float(match.group(1)) * {"s": 1, None: 1, "m": 60, "h": 3600}[match.group(2)]


def _expectations(args: argparse.Namespace, targets: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for target in targets:
        default = suites_dir(args.suites) / "expectations" / f"{target}.toml"
        if default.is_file():
            found[target] = str(default.resolve())
    for entry in args.expectations:
        target, sep, path = entry.partition("=")
        if not sep or not Path(path).is_file():
            raise CampaignError(f"--expectations {entry!r}: give TARGET=FILE with an existing file")
        found[target] = str(Path(path).resolve())
    return found


def run(args: argparse.Namespace, out_stream: TextIO) -> int:
    from .engine import SparkUnavailable, finished_tasks, rows_dir, run_campaign, spark_session

    targets, machines, profiles = (
        [x.strip() for x in value.split(",") if x.strip()] for value in (args.targets, args.machines, args.profiles)
    )
    targets = expand_targets(targets)
    if not (targets and machines and profiles):
        raise CampaignError("--targets, --machines and --profiles each need at least one name")
    tasks = task_table(
        targets, machines, profiles, args.seeds, parse_budget(args.budget), suites=suites_dir(args.suites),
        hypothesis_profile=args.hypothesis_profile,
    )  # fmt: skip
    expectations = _expectations(args, targets)
    plan_file = Path(args.out) / "campaign.json" if args.out else None
    if args.resume and (plan_file is None or not plan_file.is_file()):
        raise CampaignError("--resume needs the --out directory of an earlier campaign (it holds campaign.json)")
    if plan_file is not None and plan_file.is_file():
        earlier = json.loads(plan_file.read_text(encoding="utf-8"))
        if not args.resume and finished_tasks(Path(args.out)):
            raise CampaignError(
                f"{args.out} holds rows of campaign {earlier['campaign_id']}: add --resume to complete it, "
                "or choose another --out"
            )
        campaign_id = str(earlier["campaign_id"]) if args.resume else uuid.uuid4().hex[:8]
    else:
        campaign_id = uuid.uuid4().hex[:8]
    out = Path(args.out or f"reports/out/campaign-{campaign_id}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "campaign.json").write_text(
        json.dumps(
            {"campaign_id": campaign_id, "master": args.master, "tasks": [t.as_dict() for t in tasks]}, indent=1
        ),
        encoding="utf-8",
    )
    out_stream.write(f"campaign {campaign_id}: {len(tasks)} task(s) on {args.master}, rows in {rows_dir(out)}\n")
    out_stream.flush()
    began = time.monotonic()
    _interrupt_on_sigterm()
    try:
        spark = spark_session(args.master)
    except SparkUnavailable as exc:
        raise CampaignError(str(exc)) from None
    out_stream.write(f"spark session started in {time.monotonic() - began:.1f} s\n")
    try:
        progress = run_campaign(
            tasks, out, master=args.master, campaign_id=campaign_id, suites=suites_dir(args.suites),
            expectations=expectations, resume=args.resume, log=out_stream, spark=spark,
        )  # fmt: skip
        if args.audit:
            audit_targets(spark, targets, profiles, out, campaign_id, expectations, out_stream, resume=args.resume)
        write_outputs(spark, out, campaign_id, tasks, out_stream)
    except KeyboardInterrupt:
        out_stream.write("stopped: finished rows are kept\n")
        return 130
    finally:
        spark.stop()
    out_stream.write(f"campaign {campaign_id} done in {time.monotonic() - began:.0f} s: {out}\n")
    return EXIT_TASKS_FAILED if progress.failed_tasks else EXIT_OK


def _interrupt_on_sigterm() -> None:
    """SIGTERM (a CI job cancelled, `kill PID`) stops the campaign like Ctrl-C: finished rows are kept."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():

        def stop(signum: int, frame: object) -> None:
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, stop)


def audit_targets(
    spark: object,
    targets: list[str],
    profiles: list[str],
    out: Path,
    campaign_id: str,
    expectations: dict[str, str],
    log: TextIO,
    *,
    resume: bool = False,
) -> None:
    """Audit mode for every (target, profile) on the driver (Spark computes the ground truth; the target is
    started here, as in `kafka-conformance audit`); its rows join the tasks' rows (suite "audit")."""
    from ..targets import open_target
    from .audit import AuditTask, Workload, audit_generated, audit_rows, build, crash_row, write_report
    from .audit_command import load_entries
    from .engine import finished_tasks, write_rows
    from .tasks import profile_for

    done = finished_tasks(out) if resume else set()
    results = []
    for target in targets:
        for profile in dict.fromkeys(profile_for(target, p) for p in profiles):
            task = AuditTask(target, profile)
            if task.task_id in done:
                continue
            entries = load_entries(expectations.get(target))
            began = time.monotonic()
            try:
                with open_target(target, profile, log_dir=out / "logs") as (factory, _logs):
                    impl = build(factory)
                    try:
                        found = audit_generated(spark, impl, Workload(seed=1), out=out / "audit", target_name=target,
                                                expectations=entries)  # fmt: skip
                    finally:
                        impl.close()
            except Exception as exc:  # one target's audit failing does not stop the campaign
                write_rows(out, task, [crash_row(task, campaign_id, 1, f"{type(exc).__name__}: {exc}")])
                log.write(f"audit {target} ({profile}): CRASHED: {exc}\n")
                continue
            write_rows(out, task, audit_rows(found, task, campaign_id=campaign_id, seed=1))
            results += found
            wrong = sum(len(r.disagreements) for r in found)
            log.write(f"audit {target} ({profile}): {wrong} disagreement(s) in {time.monotonic() - began:.1f} s\n")
            log.flush()
    if results:
        write_report(results, out / "audit")


def write_outputs(spark: object, out: Path, campaign_id: str, tasks: list[CampaignTask], log: TextIO) -> None:
    from .engine import rows_dir
    from .matrix import aggregate, summary_counts, to_html, to_markdown, to_png

    matrix = aggregate(spark, rows_dir(out))
    title = f"Kafka timestamp conformance matrix, campaign {campaign_id}"
    (out / "matrix.md").write_text(f"# {title}\n\n" + to_markdown(matrix), encoding="utf-8")
    (out / "matrix.html").write_text(to_html(matrix, title), encoding="utf-8")
    to_png(matrix, out / "matrix.png", title)
    lines = [
        "| Task | Target | Suite | Profile | Seed | Status | Seconds | Examples |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t in matrix.tasks:
        lines.append(
            f"| {t['task_id']} | {t['target']} | {t['machine']} | {t['profile']} | {t['seed']} | {t['status']} "
            f"| {t['seconds']:.1f} | {t['examples']} |"
        )
    (out / "tasks.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    kills = mutant_kills(matrix)
    if kills:
        killed = sum(1 for v in kills.values() if v == KILLED)
        table = ["| Mutant | Profile | Result |", "|---|---|---|"]
        table += [f"| {t} | {p} | {v} |" for (t, p), v in sorted(kills.items())]
        (out / "mutants.md").write_text(
            f"# Mutants killed: {killed} of {len(kills)}\n\n" + "\n".join(table) + "\n", encoding="utf-8"
        )
        survivors = sorted(t for (t, _), v in kills.items() if v != KILLED)
        log.write(f"mutants killed: {killed} of {len(kills)}" + (f"; not: {', '.join(survivors)}" if survivors else "")
                  + f" ({out / 'mutants.md'})\n")  # fmt: skip
    for column, counts in summary_counts(matrix).items():
        log.write(f"  {column[0]} ({column[1]}): {counts}\n")
    log.write(f"matrix: {out / 'matrix.md'}, {out / 'matrix.html'}, {out / 'matrix.png'}\n")
    from reports.campaign_allure import write_campaign_results

    results = out / "allure-results"
    if results.is_dir():  # results of this campaign only (a --resume rewrites them all from the rows)
        import shutil

        shutil.rmtree(results)
    written = write_campaign_results(rows_dir(out), results, campaign_id=campaign_id, log=log)
    log.write(f"allure results: {written} in {results} (npx allure generate {results})\n")
