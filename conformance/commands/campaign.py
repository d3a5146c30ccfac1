"""`kafka-conformance campaign`: plan the task table, run it on Spark, aggregate the matrix.
Usage problems are CampaignErrors, which the CLI prints as one line with exit code 2.

    kafka-conformance campaign --targets model,mutant:lookup-last-match,tansu --machines list_offsets \\
        --profiles kafka-4.0 --seeds 2 --budget 60s --master local[2] --out reports/out/campaign-demo

Writes into --out: `campaign.json` (the plan), `rows/<task>.parquet` (as tasks finish), `matrix.md`,
`matrix.html`, `matrix.png` (the implementations: brokers, codecs, clients), `mutants.md` and `mutants.html` (the
kill table of the mutants it ran) and `tasks.md`. The exit code follows `kafka-conformance run`'s rule over the
matrix (conformance.campaign.aggregate.campaign_outcome): 1 when an implementation's cell (its suites' or its audit's
rows) is FAIL or UNEXPECTED-PASS, when a graded mutant was not killed (the kill table's rule), when a task timed
out or crashed, or when a cell regressed against --baseline (an earlier campaign's folder; the comparison goes
to `matrix-diff.md`); else 0; 2 on bad input, 130 when stopped. The last line says why ("2 FAIL, 0 UNEXPECTED-PASS:
exit 1").
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from conformance.campaign.tasks import ALL, CampaignError, CampaignTask, suite_paths, task_table
from conformance.commands.kill_table import SURVIVED, WRONG_CLAUSE
from conformance.commands.usage import add_master, add_quiet, output_directory
from conformance.faults import MUTANTS
from conformance.plugin.launcher import LauncherError, SuitesRun, choose_expectations
from conformance.plugin.launcher import suites_dir as _installed_suites
from conformance.plugin.run_options import add_command_options
from conformance.targets.brokers.kafka import HISTORY_TARGETS
from conformance.targets.kinds.implementation import Kind
from conformance.targets.registry import (
    MutantForm,
    TargetSpec,
    open_target,
    said_version,
    table,
    target_kind,
    targets_help,
)
from conformance.targets.target import SERVED_AT, ServedBy, mutant_name, served_mutant_name

if TYPE_CHECKING:
    from conformance.campaign.aggregate import CampaignOutcome


def suites_dir(override: str | None) -> Path:
    """The suites directory (`--suites`, else the installed package), a CampaignError naming the fix."""
    try:
        return _installed_suites(override)
    except LauncherError as exc:
        raise CampaignError(str(exc)) from None


EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_quiet(parser)
    parser.add_argument("--targets", required=True, help=targets_argument_help())
    parser.add_argument("--machines", default=ALL, help="comma-separated suite modules (e.g. list_offsets) or all")
    parser.add_argument("--profiles", default="kafka-4.0", help="comma-separated behaviour profiles")
    parser.add_argument("--seeds", type=int, default=1, help="Hypothesis seeds per (target, suite, profile)")
    parser.add_argument("--budget", default="60s", help="time limit per task, e.g. 60s or 2m (default 60s)")
    add_master(parser)
    parser.add_argument("--out", default=None, help="output directory (default reports/out/campaign-<id>)")
    parser.add_argument("--resume", action="store_true", help="skip the tasks whose rows are already in --out")
    add_command_options(parser, SuitesRun, ("suites",))  # as in `run` (conformance.plugin.launcher)
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
        "--baseline",
        default=None,
        metavar="OLD_CAMPAIGN",
        help="the --out folder of an earlier campaign: compare the matrix with its matrix, cell by cell, into "
        "matrix-diff.md (regressed, fixed, newly known, ...: docs/comparing-runs.md); a regression in any column "
        "makes the campaign exit 1",
    )
    parser.add_argument(
        "--expectations",
        action="append",
        default=[],
        metavar="TARGET=FILE",
        help="known failures of a target (default: suites/expectations/<target>.toml where it exists)",
    )


MUTANTS_GROUP, SERVED_MUTANTS_GROUP, KAFKA_HISTORY_GROUP = "mutants", "served-mutants", "kafka-history"
# A group per kind: every row of the table of that kind that a campaign can start (not the user's cluster).
KIND_GROUPS = {"brokers": Kind.BROKER, "codecs": Kind.CODEC, "clients": Kind.CLIENT}


def targets_argument_help() -> str:
    """The help of --targets: the table's names (conformance.targets.registry) and the groups."""
    startable = targets_help(lambda spec: spec.served_by is not ServedBy.CLUSTER)
    groups = ", ".join(f"{group} (every {kind.value} target)" for group, kind in KIND_GROUPS.items())
    served = [s.name for s in table() if MutantForm.SERVED in s.mutants][-1:] + [
        group for group, kind in KIND_GROUPS.items() if any(MutantForm.SERVED in s.mutants for s in _group(kind))
    ]
    examples = ", ".join(f"{x}{SERVED_AT}{SERVED_MUTANTS_GROUP}" for x in served)
    return (
        f"comma-separated: {startable}; or a group: {MUTANTS_GROUP} (every mutant:<id>), {KAFKA_HISTORY_GROUP} "
        "(every Kafka line's last release, and the releases that shipped or fixed a timestamp bug), "
        f"{SERVED_MUTANTS_GROUP} "
        "(every mutant the reference broker serves, but those whose fault is only in a consumer's reading), "
        f"{groups}; X{SERVED_AT}{SERVED_MUTANTS_GROUP} for a target or group X that runs against the reference "
        f"broker, each against every served mutant (e.g. {examples}); a library at another version or from a "
        "checkout (NAME==VERSION, NAME=PATH) is a target, and a matrix column, of its own"
    )


def expand_targets(targets: list[str]) -> list[str]:
    """Groups of targets, in id order: `mutants` stands for every seeded mutant (mutant:<id> for each),
    `served-mutants` for every mutant served by the reference broker (reference:mutant:<id>: the same faults over
    the wire), `brokers`, `codecs` and `clients` for every row of the table of that kind a campaign starts;
    `kafka-history` for every Kafka line's last release and the releases where a timestamp bug of Kafka's shipped
    and was fixed (conformance.targets.brokers.kafka.HISTORY_TARGETS);
    `X@served-mutants` (X a target or a group whose rows run against the reference broker) for each of those
    against every served mutant (client:<lib>@reference:mutant:<id>). Any other name stands for itself."""
    out: list[str] = []
    for target in targets:
        base, at, served = target.partition(SERVED_AT)
        if at and served == SERVED_MUTANTS_GROUP:
            names = [s.name for s in _group(KIND_GROUPS[base]) if MutantForm.SERVED in s.mutants] \
                if base in KIND_GROUPS else [base]  # fmt: skip
            out += [served_mutant_name(m, to=name) for name in names for m in _served_mutants()]
        elif target == MUTANTS_GROUP:
            out += [mutant_name(m) for m in sorted(MUTANTS)]
        elif target == SERVED_MUTANTS_GROUP:
            out += [served_mutant_name(m) for m in _served_mutants()]
        elif target in KIND_GROUPS:
            out += [s.name for s in _group(KIND_GROUPS[target])]
        elif target == KAFKA_HISTORY_GROUP:
            out += list(HISTORY_TARGETS)
        else:
            out.append(target)
    return list(dict.fromkeys(out))


def _group(kind: Kind) -> list[TargetSpec]:
    return [s for s in table() if s.kind is kind and s.served_by is not ServedBy.CLUSTER and s.in_groups]


def _served_mutants() -> list[str]:
    """The ids of every broker mutant but those whose fault is only in a consumer's reading (Mutant.reader_only:
    over the wire the reading is the client's, so no broker answer shows it). A codec or client mutant is a fault
    of a library, not of a broker: nothing to serve."""
    return [m for m in sorted(MUTANTS) if MUTANTS[m].kind is Kind.BROKER and not MUTANTS[m].reader_only]


def suite_kinds(module: Path) -> frozenset[Kind]:
    """The kinds of implementation a suite module has tests for, read from its source (no import, no pytest): a
    test's `@pytest.mark.kind("codec")`, else the module's `pytestmark`, else a broker test, as the plugin
    decides. A `kind(...)` mark written any other way still counts for its kind, so a task is never left out
    for a test this reading missed (at worst a task selects nothing, as before)."""
    tree = ast.parse(module.read_text(encoding="utf-8"), filename=str(module))
    module_mark: set[Kind] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            module_mark |= _kind_marks(node.value)
    kinds = _kind_marks(tree)  # every kind a mark names anywhere in the module
    for node in tree.body:
        own: set[Kind] = set()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            is_test = node.name.startswith("test")
        elif isinstance(node, ast.ClassDef):
            is_test = node.name.startswith("Test")
        elif isinstance(node, ast.Assign):  # a state machine's `TestX = Machine.TestCase`
            is_test = any(isinstance(t, ast.Name) and t.id.startswith("Test") for t in node.targets)
        else:
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for decorator in node.decorator_list:
                own |= _kind_marks(decorator)
        if is_test and not (own or module_mark):
            kinds.add(Kind.BROKER)
    return frozenset(kinds)


def _kind_marks(node: ast.AST) -> set[Kind]:
    """The kinds named by `<...>.kind("name")` calls under `node`."""
    words = {k.value for k in Kind}
    return {
        Kind(call.args[0].value)
        for call in ast.walk(node)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "kind"
        and call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value in words
    }  # fmt: skip


def plannable(tasks: list[CampaignTask], suites: Path) -> tuple[list[CampaignTask], list[tuple[str, str]]]:
    """(the tasks whose suites have a test of their target's kind, the (target, suite) pairs left out). The
    plugin deselects every test of another kind (a codec is not a broker), so such a task would select nothing:
    pytest's exit 5, a CRASHED task."""
    kinds: dict[str, frozenset[Kind]] = {}
    kept: list[CampaignTask] = []
    left_out: dict[tuple[str, str], None] = {}
    for task in tasks:
        if task.machine not in kinds:
            paths = [Path(p) for p in suite_paths(task.machine, suites)]
            files = [f for p in paths for f in (sorted(p.glob("test_*.py")) if p.is_dir() else [p])]
            kinds[task.machine] = frozenset(k for f in files for k in suite_kinds(f))
        if target_kind(task.target) in kinds[task.machine]:
            kept.append(task)
        else:
            left_out[(task.target, task.machine)] = None
    return kept, list(left_out)


def parse_budget(text: str) -> float:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*", text)
    if not match:
        raise CampaignError(f"--budget {text!r}: give seconds per task like 60s, 90 or 2m")
    return float(match.group(1)) * {"s": 1, None: 1, "m": 60, "h": 3600}[match.group(2)]


def _expectations(args: argparse.Namespace, targets: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for target in targets:
        # The one rule of `run` and `pytest suites` (conformance.plugin.launcher.choose_expectations).
        shipped = choose_expectations(target, None, suites=suites_dir(args.suites)).path
        if shipped is not None:
            found[target] = str(shipped.resolve())
    for entry in args.expectations:
        target, sep, path = entry.partition("=")
        if not sep or not Path(path).is_file():
            raise CampaignError(f"--expectations {entry!r}: give TARGET=FILE with an existing file")
        found[target] = str(Path(path).resolve())
    return found


# Bad input this command raises as its own exception: the CLI prints it as one line, exit 2.
USAGE_ERRORS: tuple[type[Exception], ...] = (CampaignError,)


def run(args: argparse.Namespace, out_stream: TextIO) -> int:
    from conformance.campaign.engine import SparkUnavailable, finished_tasks, rows_dir, run_campaign, spark_session

    targets, machines, profiles = (
        [x.strip() for x in value.split(",") if x.strip()] for value in (args.targets, args.machines, args.profiles)
    )
    targets = expand_targets(targets)
    if not (targets and machines and profiles):
        raise CampaignError("--targets, --machines and --profiles each need at least one name")
    tasks, left_out = plannable(
        task_table(
            targets, machines, profiles, args.seeds, parse_budget(args.budget), suites=suites_dir(args.suites),
            hypothesis_profile=args.hypothesis_profile,
        ),
        suites_dir(args.suites),
    )  # fmt: skip
    if not tasks:
        raise CampaignError(
            f"nothing to run: no suite of --machines {args.machines} has a test of the kind of any target "
            f"({', '.join(sorted({target_kind(t).value for t in targets}))}); codec suites are "
            "suites/test_codec_*.py, client suites suites/test_client_*.py, the others are broker suites"
        )
    expectations = _expectations(args, targets)
    baseline = check_baseline(args.baseline)
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
    out = output_directory(args.out or f"reports/out/campaign-{campaign_id}")
    (out / "campaign.json").write_text(
        json.dumps(
            {"campaign_id": campaign_id, "master": args.master, "tasks": [t.as_dict() for t in tasks]}, indent=1
        ),
        encoding="utf-8",
    )
    out_stream.write(f"campaign {campaign_id}: {len(tasks)} task(s) on {args.master}, rows in {rows_dir(out)}\n")
    if left_out:
        pairs = ", ".join(f"{t} x {m}" for t, m in left_out[:6]) + (", ..." if len(left_out) > 6 else "")
        out_stream.write(
            f"left out {len(left_out)} (target, suite) pair(s) whose suite has no test of the target's kind: {pairs}\n"
        )
    out_stream.flush()
    began = time.monotonic()
    _interrupt_on_sigterm()
    try:
        spark = spark_session(args.master)
    except SparkUnavailable as exc:
        raise CampaignError(str(exc)) from None
    out_stream.write(f"spark session started in {time.monotonic() - began:.1f} s\n")
    try:
        run_campaign(
            tasks, out, master=args.master, campaign_id=campaign_id, suites=suites_dir(args.suites),
            expectations=expectations, resume=args.resume, log=out_stream, spark=spark,
        )  # fmt: skip
        if args.audit:
            # Audit mode asks a broker ListOffsets questions: codecs and clients have no log to audit.
            brokers = [t for t in targets if target_kind(t) is Kind.BROKER]
            audit_targets(spark, brokers, profiles, out, campaign_id, expectations, out_stream, resume=args.resume)
        outcome = write_outputs(spark, out, campaign_id, tasks, out_stream)
        regressed = baseline is not None and write_baseline_diff(spark, out, baseline, campaign_id, out_stream)
    except KeyboardInterrupt:
        out_stream.write("stopped: finished rows are kept\n")
        return 130
    finally:
        spark.stop()
    out_stream.write(f"campaign {campaign_id} done in {time.monotonic() - began:.0f} s: {out}\n")
    code = EXIT_FAILED if outcome.failed or regressed else EXIT_OK
    since = "; a regression since the baseline (matrix-diff.md)" if regressed else ""
    out_stream.write(f"{outcome.summary()}{since}: exit {code}\n")
    return code


def check_baseline(path: str | None) -> Path | None:
    """--baseline: the folder of an earlier campaign (it holds rows/), or a CampaignError naming the fix."""
    from conformance.campaign.engine import rows_dir

    if path is None:
        return None
    folder = Path(path)
    if not folder.is_dir() or not any(rows_dir(folder).glob("*.parquet")):
        raise CampaignError(
            f"--baseline {path}: not the folder of a campaign (no rows/*.parquet in it): pass the --out of an earlier "
            "`kafka-conformance campaign`"
        )
    return folder


def write_baseline_diff(spark: object, out: Path, baseline: Path, campaign_id: str, log: TextIO) -> bool:
    """The matrix of the campaign in `out` against the one in `baseline`, into matrix-diff.md (reports.matrix_diff);
    the counts per column on `log`. Returns whether a cell regressed."""
    from conformance.campaign.aggregate import aggregate, implementation_matrix
    from conformance.campaign.engine import rows_dir
    from reports.matrix_diff import DIFF_FILE, matrix_diff, to_markdown

    old = implementation_matrix(aggregate(spark, rows_dir(baseline)))
    new = implementation_matrix(aggregate(spark, rows_dir(out)))
    diff = matrix_diff(old, new)
    title = f"Conformance matrix of campaign {campaign_id} against {baseline}"
    (out / DIFF_FILE).write_text(to_markdown(diff, title), encoding="utf-8")
    log.write(f"against the baseline {baseline}: {diff.summary()}, {out / DIFF_FILE}\n")
    for column in diff.columns:
        counts = ", ".join(f"{n} {change.value}" for change, n in diff.counts(column).items())
        log.write(f"  {column[0]} ({column[1]}): {counts}\n")
    return diff.regressed


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
    from conformance.campaign.engine import finished_tasks, write_rows
    from conformance.campaign.tasks import profile_for
    from conformance.commands.audit import load_entries
    from conformance.oracles.audit_job import (
        AuditTask,
        Workload,
        audit_generated,
        audit_rows,
        build,
        crash_row,
        write_report,
    )

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
                    version = said_version(target, impl)
                    try:
                        found = audit_generated(spark, impl, Workload(seed=1), out=out / "audit", target_name=target,
                                                expectations=entries)  # fmt: skip
                    finally:
                        impl.close()
            except Exception as exc:  # one target's audit failing does not stop the campaign
                write_rows(out, task, [crash_row(task, campaign_id, 1, f"{type(exc).__name__}: {exc}")])
                log.write(f"audit {target} ({profile}): CRASHED: {exc}\n")
                continue
            rows = audit_rows(found, task, campaign_id=campaign_id, seed=1, implementation_version=version)
            write_rows(out, task, rows)
            results += found
            wrong = sum(len(r.disagreements) for r in found)
            log.write(f"audit {target} ({profile}): {wrong} disagreement(s) in {time.monotonic() - began:.1f} s\n")
            log.flush()
    if results:
        write_report(results, out / "audit")


def write_outputs(
    spark: object, out: Path, campaign_id: str, tasks: list[CampaignTask], log: TextIO
) -> CampaignOutcome:
    """matrix.md/.html/.png (the implementations), mutants.md/.html (the kill table, when the campaign ran
    mutants), tasks.md and the Allure results, all from the rows on disk; returns the campaign's outcome, read from
    the same rows."""
    from conformance.campaign.aggregate import aggregate, campaign_outcome, implementation_matrix, kill_table
    from conformance.campaign.engine import rows_dir
    from reports.matrix import column_label, kill_html, kill_markdown, summary_counts, to_html, to_markdown, to_png

    everything = aggregate(spark, rows_dir(out))
    matrix, kills = implementation_matrix(everything), kill_table(everything)
    title = f"Kafka timestamp conformance matrix, campaign {campaign_id}"
    killed = "; ".join(f"{way}: {kills.summary(way)}" for way in kills.ways)
    seeds = len({t["seed"] for t in everything.tasks})
    meta = f"{len(everything.tasks)} task(s), {seeds} seed(s);"
    if matrix.columns:
        (out / "matrix.md").write_text(f"# {title}\n\n" + to_markdown(matrix), encoding="utf-8")
        (out / "matrix.html").write_text(to_html(matrix, title, meta=meta, mutants=killed), encoding="utf-8")
        width, height = to_png(matrix, out / "matrix.png", title)
        log.write(
            f"matrix: {len(matrix.columns)} implementation(s) x {len(matrix.clauses)} clause(s), {out / 'matrix.md'}, "
            f"{out / 'matrix.html'}, {out / 'matrix.png'} ({width} x {height} px)\n"
        )
        for column, counts in summary_counts(matrix).items():
            log.write(f"  {column_label(matrix, column)}: {counts}\n")
    lines = [
        "| Task | Target | Suite | Profile | Seed | Status | Seconds | Examples |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t in everything.tasks:
        lines.append(
            f"| {t['task_id']} | {t['target']} | {t['machine']} | {t['profile']} | {t['seed']} | {t['status']} "
            f"| {t['seconds']:.1f} | {t['examples']} |"
        )
    (out / "tasks.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if kills.rows:
        kill_title = f"Mutant kill table, campaign {campaign_id}"
        (out / "mutants.md").write_text(kill_markdown(kills, kill_title), encoding="utf-8")
        (out / "mutants.html").write_text(kill_html(kills, kill_title), encoding="utf-8")
        for way in kills.ways:
            missed = sorted(r.mutant for r in kills.rows if r.kills.get(way) is not None
                            and r.kills[way].status in (SURVIVED, WRONG_CLAUSE))  # fmt: skip
            shown = ", ".join(missed[:8]) + (f" and {len(missed) - 8} more" if len(missed) > 8 else "")
            log.write(f"mutants ({way}): {kills.summary(way)}" + (f"; not killed: {shown}" if missed else "") + "\n")
        log.write(f"kill table: {out / 'mutants.md'}, {out / 'mutants.html'}\n")
    from reports.campaign_allure import write_campaign_results

    results = out / "allure-results"
    if results.is_dir():  # results of this campaign only (a --resume rewrites them all from the rows)
        import shutil

        shutil.rmtree(results)
    written = write_campaign_results(rows_dir(out), results, campaign_id=campaign_id, log=log)
    log.write(f"allure results: {written} in {results} (npx allure generate {results})\n")
    return campaign_outcome(everything)
