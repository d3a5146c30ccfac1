"""The `kafka-conformance` command line.

Subcommands are registered in `_COMMANDS`; each adds its own arguments and returns an exit code.
Exit codes: 0 success, 1 a check failed (e.g. a SEMANTICS rule no clause covers), 2 bad input (one
line on stderr naming the problem and the fix, never a traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from conformance.judging.results import RunResults, read_results
from conformance.targets.fault_hook import fault_options
from conformance.targets.registry import TargetError, check_target, default_hypothesis_profile, targets_help
from conformance.targets.target import ServedBy, Target, served_mutant_name
from models.clauses import CLAUSES, Area, Clause, coverage
from models.profiles import PROFILES
from models.rules import RULE_IDS, UNTESTABLE, parse_semantics

if TYPE_CHECKING:
    from conformance.targets.kafka_wire import ControlOffer

PROG = "kafka-conformance"
EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    # argparse prints usage and calls sys.exit(2); we want one line and a return code instead.
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


# --- clauses ----------------------------------------------------------------------------------------


def _area_names() -> str:
    return ", ".join(a.value for a in Area)


def _parse_area(name: str) -> Area:
    wanted = name.strip().lower().replace("_", "-")
    for area in Area:
        if wanted in (area.value, area.prefix.lower()):
            return area
    raise UsageError(f"unknown area {name!r}: choose one of {_area_names()} (e.g. --area list-offsets)")


def _check_profile(name: str) -> str:
    if name not in PROFILES:
        known = ", ".join(PROFILES)
        raise UsageError(f"unknown profile {name!r}: choose one of {known} (e.g. --profile kafka-4.0)")
    return name


def _short_profile(name: str) -> str:
    return name.removeprefix("kafka-")


def _profiles_label(profiles: Sequence[str]) -> str:
    """"all", a contiguous range "2.8..4.1" in PROFILES order, or the list."""
    order = list(PROFILES)
    if list(profiles) == order:
        return "all"
    positions = [order.index(p) for p in profiles]
    if len(positions) > 2 and positions == list(range(positions[0], positions[-1] + 1)):
        return f"{_short_profile(profiles[0])}..{_short_profile(profiles[-1])}"
    return " ".join(_short_profile(p) for p in profiles)


def _clause_json(clause: Clause) -> dict[str, object]:
    return {
        "id": clause.id,
        "area": clause.area.value,
        "level": clause.level.value,
        "rules": list(clause.rules),
        "kip": clause.kip,
        "profiles": list(clause.profiles),
        "summary": clause.summary,
        "vectors": list(clause.vectors),
    }


def _table_width() -> int:
    # Readable on an 80-120 column terminal; wider terminals get 120 so lines stay scannable.
    return max(80, min(120, shutil.get_terminal_size(fallback=(100, 24)).columns))


def _print_table(clauses: Sequence[Clause], out: TextIO) -> None:
    """Two lines per clause: ID, level, area, profiles; then KIP, rules and the wrapped summary."""
    width = _table_width()
    id_w = max([len("ID"), *(len(c.id) for c in clauses)])
    level_w = max(len(level) for level in ("LEVEL", "SHOULD"))
    area_w = max(len(a.value) for a in Area)
    indent = " " * 4
    print(f"{'ID':<{id_w}}  {'LEVEL':<{level_w}}  {'AREA':<{area_w}}  PROFILES", file=out)
    print(f"{indent}KIP | RULES | SUMMARY", file=out)
    print("-" * width, file=out)
    for c in clauses:
        print(
            f"{c.id:<{id_w}}  {c.level.value:<{level_w}}  {c.area.value:<{area_w}}  "
            f"{_profiles_label(c.profiles)}",
            file=out,
        )
        text = f"{c.kip} | {', '.join(c.rules)} | {c.summary}"
        for line in textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent):
            print(line, file=out)
    print(f"{len(clauses)} clause{'s' if len(clauses) != 1 else ''}", file=out)


def _read_semantics(path: str) -> tuple[str, ...]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(
            f"SEMANTICS file {path!r} not found: pass --semantics PATH to an existing file"
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise UsageError(
            f"cannot read SEMANTICS file {path!r} ({reason}): pass --semantics PATH to a readable "
            "UTF-8 Markdown file"
        ) from None
    rule_ids, _vectors = parse_semantics(text)
    if not rule_ids:
        raise UsageError(
            f"no rule IDs found in {path!r}: expected bold rule headings such as **VAL-4 ...** "
            "(is it a SEMANTICS.md digest?)"
        )
    return rule_ids


def _print_coverage(rule_ids: Sequence[str], source: str, out: TextIO) -> int:
    uncovered, untested = coverage(rule_ids)
    covered = len(rule_ids) - len(uncovered) - len(untested)
    print(f"SEMANTICS rules: {len(rule_ids)} (from {source})", file=out)
    print(f"covered by at least one clause: {covered}", file=out)
    if uncovered:
        print(f"uncovered (no clause cites them, not listed as untestable): {len(uncovered)}", file=out)
        for rule_id in uncovered:
            print(f"  {rule_id}", file=out)
    else:
        print("uncovered: none", file=out)
    print(f"deliberately untested: {len(untested)}", file=out)
    id_w = max([0, *(len(r) for r in untested)])
    hanging = " " * (id_w + 4)
    for rule_id, reason in untested.items():
        lines = textwrap.wrap(
            reason, width=_table_width(), initial_indent=f"  {rule_id:<{id_w}}  ", subsequent_indent=hanging
        )
        print("\n".join(lines), file=out)
    stale = sorted(set(UNTESTABLE) - set(rule_ids))
    if stale:
        print(f"listed as untestable but absent from {source}: {', '.join(stale)}", file=out)
    return EXIT_CHECK_FAILED if uncovered else EXIT_OK


def _print_clause_coverage(out: TextIO) -> int:
    """Clause coverage: per clause, the suite tests that declare it, or where else it is checked and why, or that
    nothing checks it (exit 1 then; conformance.judging.coverage)."""
    from conformance.judging.coverage import CoverageStatus, clause_coverage, format_coverage, with_status

    rows = clause_coverage()
    print("", file=out)
    print(format_coverage(rows), end="", file=out)
    gaps = with_status(rows, CoverageStatus.UNCHECKED) + with_status(rows, CoverageStatus.CONFLICT)
    return EXIT_CHECK_FAILED if gaps else EXIT_OK


def _add_clauses_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the clauses as a JSON list")
    parser.add_argument(
        "--profile", metavar="NAME", help=f"only clauses for this profile ({', '.join(PROFILES)})"
    )
    parser.add_argument("--area", metavar="NAME", help=f"only clauses of this area ({_area_names()})")
    parser.add_argument(
        "--coverage",
        action="store_true",
        help="list SEMANTICS rules no clause covers and those deliberately untested, then per clause the "
        "suite tests that declare it, or where else it is checked and why; exit 1 if any rule is uncovered "
        "or any clause left unchecked",
    )
    parser.add_argument(
        "--semantics",
        metavar="PATH",
        help="with --coverage (implied): read the rule IDs from this SEMANTICS.md instead of models/rules.py",
    )


def _run_clauses(args: argparse.Namespace, out: TextIO) -> int:
    if args.coverage or args.semantics is not None:
        if args.profile is not None or args.area is not None:
            raise UsageError("--coverage checks the whole catalogue: drop --profile/--area")
        if args.semantics is not None:
            return _print_coverage(_read_semantics(args.semantics), args.semantics, out)
        rules_code = _print_coverage(RULE_IDS, "models/rules.py", out)
        return max(rules_code, _print_clause_coverage(out))
    selected: Sequence[Clause] = CLAUSES
    if args.profile is not None:
        profile = _check_profile(args.profile)
        selected = [c for c in selected if profile in c.profiles]
    if args.area is not None:
        area = _parse_area(args.area)
        selected = [c for c in selected if c.area is area]
    if args.json:
        json.dump([_clause_json(c) for c in selected], out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        _print_table(selected, out)
    return EXIT_OK


# --- mutants ----------------------------------------------------------------------------------------


def _add_mutants_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--list", action="store_true", help="list the seeded mutants and their clauses")
    parser.add_argument("--profile", default="kafka-4.0", help="behaviour profile (default kafka-4.0)")
    parser.add_argument(
        "--only", action="append", default=None, help="mutant ids, comma-separated or repeated (default: all)"
    )
    parser.add_argument(
        "--hypothesis-profile",
        default="ci",
        choices=["fast", "ci", "dev", "thorough"],
        help="Hypothesis budget: ci (default: derandomized; the first pass without shrinking, then the killing "
        "test shrunk), fast (the default tox run), dev, thorough",
    )
    parser.add_argument("--jobs", type=int, default=None, help="mutants run in parallel (default: up to 2)")
    parser.add_argument("--out", default="reports/out", help="where mutants.md and mutants.json go")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue a stopped run: keep the rows in --out of the same profile and Hypothesis profile",
    )
    parser.add_argument("--suites", default=None, help="the suites directory (default: the installed suites)")
    parser.add_argument(
        "--served",
        action="store_true",
        help=f"over the wire: each mutant served by the reference broker (--target {served_mutant_name('<id>')})",
    )


def _run_mutants(args: argparse.Namespace, out: TextIO) -> int:
    from conformance.faults import MUTANTS
    from conformance.faults.kill_table import KILLED, NOT_SERVED, KillResult, KillTable, default_jobs, run_kill_table
    from conformance.plugin.launcher import LauncherError, suites_dir

    if args.list:
        for mutant in sorted(MUTANTS.values(), key=lambda m: m.id):
            out.write(f"{mutant.id:<40} {', '.join(mutant.clauses)}\n    {mutant.description}\n")
        out.write(f"{len(MUTANTS)} mutants\n")
        return EXIT_OK
    profile = _check_profile(args.profile)
    only = [m.strip() for value in args.only or () for m in value.split(",") if m.strip()] or None
    if only:
        unknown = [m for m in only if m not in MUTANTS]
        if unknown:
            raise UsageError(f"unknown mutants {', '.join(unknown)}: `{PROG} mutants --list` shows them")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: give at least 1")
    try:
        suites = suites_dir(args.suites)
    except LauncherError as exc:
        raise UsageError(str(exc)) from None
    table = KillTable(Path(args.out), profile=profile, hypothesis_profile=args.hypothesis_profile, served=args.served)
    if args.resume:
        try:
            table.load()
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    def progress(result: KillResult, done: int, total: int) -> None:
        how = f"by {', '.join(result.killed_by)} in {result.killer}" if result.status == KILLED else result.detail
        first = f", first failure after {result.seconds_to_first_failure:.1f} s" if result.killer else ""
        out.write(f"[{done}/{total}] {result.mutant}: {result.status} {how}{first} ({result.wall_seconds:.1f} s)\n")
        out.flush()

    with _sigterm_as_interrupt():
        try:
            results = run_kill_table(
                table, only=only, jobs=args.jobs or default_jobs(), suites=suites, on_row=progress
            )
        except LauncherError as exc:
            raise UsageError(str(exc)) from None
        except KeyboardInterrupt:  # every finished row is on disk already
            out.write(
                f"\nstopped: {len(table.rows)} finished row(s) kept in {table.out_dir}; run the same command with "
                "--resume to continue\n"
            )
            return EXIT_CHECK_FAILED
    table.write()
    out.write("\n" + table.markdown())
    summary = table.summary()
    if summary["median_seconds_to_first_failure"] is not None:
        out.write(
            f"\ntime to first failure: median {summary['median_seconds_to_first_failure']:.2f} s, "
            f"max {summary['max_seconds_to_first_failure']:.2f} s "
            f"({summary['killed']} of {summary['mutants']} killed)\n"
        )
    bad = [r for r in results if r.status not in (KILLED, NOT_SERVED)]
    if bad:
        out.write(f"\n{len(bad)} mutant(s) not killed: {', '.join(r.mutant for r in bad)}\n")
        return EXIT_CHECK_FAILED
    return EXIT_OK


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a CI runner cancelling the job, `kill PID`) stops a long command as Ctrl-C does: it stops its
    pytest runs and keeps what finished."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# --- run ------------------------------------------------------------------------------------------

def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target",
        default=os.environ.get("KTS_TARGET", "tansu"),
        help=f"the implementation under test: {targets_help()} (env KTS_TARGET; default tansu)",
    )
    parser.add_argument("--profile", default=os.environ.get("KTS_PROFILE", "kafka-4.0"), help="behaviour profile")
    parser.add_argument(
        "--bootstrap-servers",
        default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS"),
        help="HOST:PORT of your cluster for --target broker (env KAFKA_BOOTSTRAP_SERVERS)",
    )
    parser.add_argument(
        "--control-url",
        default=os.environ.get("KTS_CONTROL_URL") or None,
        metavar="URL",
        help="--target broker: your cluster's control plane, which turns on clock control, leader failover and "
        "retention as far as it declares them (env KTS_CONTROL_URL; `kafka-conformance check-control URL` "
        "checks it)",
    )
    parser.add_argument(
        "--wire-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds any one network operation may take against a broker (env KTS_WIRE_TIMEOUT; default 10)",
    )
    parser.add_argument("--expectations", default=os.environ.get("KTS_EXPECTATIONS"), help="known failures (TOML)")
    parser.add_argument(
        "--hypothesis-profile",
        default=None,
        choices=["fast", "ci", "broker", "dev", "thorough"],
        help="Hypothesis budget (default: broker for a real broker, ci for the model and mutants)",
    )
    for flag, options in fault_options():
        parser.add_argument(flag, **options)
    parser.add_argument(
        "--draft-expectations",
        default=None,
        help="append an expectations entry for every new failure to this file, to review and keep",
    )
    parser.add_argument("--clauses", default=None, help="only the tests of these comma-separated clause IDs")
    parser.add_argument("--out", default="reports/out", help="where the report, verdicts and logs go")
    parser.add_argument("--suites", default=None, help="the suites directory (default: the installed suites)")
    parser.add_argument("--no-html", action="store_true", help="skip the Allure HTML report (results still written)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")


def _wire_timeout(args: argparse.Namespace) -> float:
    raw = args.wire_timeout if args.wire_timeout is not None else os.environ.get("KTS_WIRE_TIMEOUT", "10")
    try:
        seconds = float(raw)
    except ValueError:
        raise UsageError(f"KTS_WIRE_TIMEOUT={raw!r} is not a number: set it to seconds, e.g. 10") from None
    if not seconds > 0:
        raise UsageError(f"--wire-timeout {raw}: give a positive number of seconds, e.g. --wire-timeout 10")
    return seconds


def _check_run_inputs(args: argparse.Namespace, wire_timeout: float, out: TextIO) -> tuple[Path, Target]:
    """Everything `run` can check before pytest starts, each problem one usage error; the suites directory and
    the parsed target. What a control plane turns on is said on `out`."""
    from conformance.judging.expectations import ExpectationsError, load_expectations
    from conformance.plugin.launcher import LauncherError, suites_dir
    from conformance.targets.fault_hook import check_fault_options

    _check_profile(args.profile)
    try:
        target = check_target(
            args.target, args.profile, bootstrap=args.bootstrap_servers, control_url=args.control_url
        )
        check_fault_options(args.target, args.fault_hook, args.allow_disruptive)
        suites = suites_dir(args.suites)
    except (TargetError, LauncherError) as exc:
        raise UsageError(str(exc)) from None
    if args.expectations:
        try:
            load_expectations(args.expectations)
        except ExpectationsError as exc:
            raise UsageError(f"{exc} (fix the file, or drop --expectations)") from None
    for cid in filter(None, (c.strip() for c in (args.clauses or "").split(","))):
        if cid not in {c.id for c in CLAUSES}:
            raise UsageError(f"--clauses: unknown clause {cid!r}: `{PROG} clauses` lists the IDs")
    if target.served_by is ServedBy.CLUSTER:
        from conformance.targets.kafka_wire import check_control, check_reachable

        try:
            check_reachable(args.bootstrap_servers, timeout=wire_timeout)
            if args.control_url:
                offer = check_control(args.bootstrap_servers, args.control_url, timeout=wire_timeout)
                _print_control_offer(args, offer, out)
        except TargetError as exc:
            raise UsageError(str(exc)) from None
    return suites, target


def _print_control_offer(args: argparse.Namespace, offer: ControlOffer, out: TextIO) -> None:
    """What the control plane turns on for this run, and what it declared that the suite ignores."""
    from conformance.targets.implementation import Capability

    names = ", ".join(sorted(c.value for c in offer.capabilities)) or "nothing"
    out.write(f"control plane at {args.control_url}: turns on {names}\n")
    for note in offer.notes:
        out.write(f"note: {note}\n")
    if args.fault_hook and Capability.LEADER_FAILOVER in offer.capabilities:
        out.write("note: leaders move through the control plane; --fault-hook is not used\n")


def _run_run(args: argparse.Namespace, out: TextIO) -> int:
    """The main job: the suites against one target, Allure results and the single-file HTML report, and a
    clause summary. Exit 0 when every result matches the expectations (PASS, KNOWN, UNSUPPORTED, N/A,
    NON-STRICT), 1 when a clause FAILs or an expectation is stale, 2 on bad input."""
    import shlex

    from conformance.plugin.launcher import SuitesRun, pytest_command, run_streaming

    wire_timeout = _wire_timeout(args)
    suites, target = _check_run_inputs(args, wire_timeout, out)
    root = Path(args.out)
    results, html, verdicts = root / "allure-results", root / "allure-report", root / "verdicts.json"
    root.mkdir(parents=True, exist_ok=True)
    budget = args.hypothesis_profile or default_hypothesis_profile(target)
    color = ("--color=yes",) if out.isatty() else ()
    run = SuitesRun(
        target=args.target,
        profile=args.profile,
        hypothesis_profile=budget,
        suites=suites,
        clauses=tuple(filter(None, (c.strip() for c in (args.clauses or "").split(",")))),
        expectations=args.expectations,
        bootstrap_servers=args.bootstrap_servers,
        wire_timeout=wire_timeout,
        fault_hook=args.fault_hook,
        allow_disruptive=args.allow_disruptive,
        control_url=args.control_url,
        draft_expectations=args.draft_expectations,
        verdicts_json=verdicts,
        alluredir=results,
        log_dir=root / "logs",
        extra=("-rfE", *color, *args.pytest_args),
    )
    cmd = pytest_command(run)
    out.write(f"$ {shlex.join(['pytest', *cmd[3:]])}\n")
    out.flush()
    finished = run_streaming(cmd, out)
    if finished.exit_messages:
        # pytest.exit(): the run could not start (e.g. a managed broker that did not come up). Its message
        # names the cause and the fix; the class that carried it is no news to a user.
        raise UsageError(finished.exit_messages[0].removeprefix(f"{PROG}: "))
    code = finished.returncode
    if code in (3, 4):  # internal error or usage error: pytest has said why
        return EXIT_USAGE
    if results.is_dir():
        from reports.allure import ReportError, build_html, write_categories, write_environment

        counts = _verdict_counts(read_results(verdicts)) if verdicts.is_file() else ""
        # The clause verdicts at a glance: Allure's own summary counts KNOWN, UNSUPPORTED and N/A all as skipped.
        write_environment(results, {"target": args.target, "profile": args.profile,
                                    "hypothesis_profile": budget, "clause_verdicts": counts or "none"})
        write_categories(results)
        if verdicts.is_file():
            from reports.clauses import write_clause_results

            write_clause_results(verdicts, results, Path(args.expectations) if args.expectations else None)
        if not args.no_html:
            try:
                title = f"Kafka timestamp conformance: {args.target} ({args.profile})"
                title += f": {counts}" if counts else ""
                index = build_html(results, html, name=title)
                out.write(f"report: {index}\n")
            except ReportError as exc:
                out.write(f"report not built: {exc}\n")
                code = code or EXIT_CHECK_FAILED
    if verdicts.is_file():
        _print_verdict_summary(read_results(verdicts), out)
    if code == 5:
        out.write("no test ran: check --clauses and the suites directory\n")
        return EXIT_CHECK_FAILED
    return EXIT_OK if code == 0 else EXIT_CHECK_FAILED


def _verdict_counts(results: RunResults) -> str:
    """'27 KNOWN, 12 PASS, ...' in triage order (conformance.judging.verdicts.TRIAGE_ORDER)."""
    from conformance.judging.verdicts import TRIAGE_ORDER

    counts: dict[str, int] = {}
    for verdict in results.clauses.values():
        counts[verdict.value] = counts.get(verdict.value, 0) + 1
    order = [v.value for v in TRIAGE_ORDER]
    return ", ".join(f"{counts[v]} {v}" for v in order if v in counts)


def _print_verdict_summary(results: RunResults, out: TextIO) -> None:
    out.write(f"clauses: {len(results.clauses)} ({_verdict_counts(results) or 'none'})\n")
    if results.target_lost:
        # The clauses left BLOCKED say nothing about the target's timestamps: the target went away.
        out.write(f"TARGET LOST: {results.target_lost[0]}\n")


# --- command registry -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Command:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, TextIO], int]


_COMMANDS: tuple[_Command, ...] = (
    _Command(
        "clauses",
        "show the clause catalogue (table, JSON, coverage)",
        _add_clauses_arguments,
        _run_clauses,
    ),
    _Command(
        "run",
        "run the suites against a target and build the report (the main job)",
        _add_run_arguments,
        _run_run,
    ),
    _Command(
        "mutants",
        "run the suites against every seeded mutant and write the kill table",
        _add_mutants_arguments,
        _run_mutants,
    ),
    _Command(
        "serve",
        "serve the reference model (or a seeded mutant) over the Kafka protocol, with its HTTP control plane",
        lambda parser: _serve().add_arguments(parser),
        lambda args, out: _serve().run(args, out),
    ),
    _Command(
        "check-control",
        "check a control plane against the OpenAPI document with schemathesis (one verdict line)",
        lambda parser: _check_control().add_arguments(parser),
        lambda args, out: _check_control().run(args, out),
    ),
    _Command(
        "compare",
        "compare a target's clause verdicts with the in-process model's, profile by profile (the reference check)",
        lambda parser: _agreement().add_arguments(parser),
        lambda args, out: _run_compare(args, out),
    ),
    _Command(
        "campaign",
        "run a table of tasks (target x suite x profile x seed) on Spark and write the conformance matrix",
        lambda parser: _campaign().add_arguments(parser),
        lambda args, out: _run_campaign(args, out),
    ),
    _Command(
        "audit",
        "audit mode: check a topic's ListOffsets answers against Spark's ground truth from its records",
        lambda parser: _audit().add_arguments(parser),
        lambda args, out: _run_campaign(args, out, _audit()),
    ),
    _Command(
        "differential",
        "the differential oracle: generated batches through the model and Apache Kafka's record layer, on Spark",
        lambda parser: _differential().add_arguments(parser),
        lambda args, out: _run_differential(args, out),
    ),
)


def _differential():  # type: ignore[no-untyped-def]
    # Imported on use: the other commands must not need the JVM bridge's modules.
    from conformance.commands import differential as command

    return command


def _run_differential(args: argparse.Namespace, out: TextIO) -> int:
    command = _differential()
    try:
        code: int = command.run(args, out)
    except command.DifferentialError as exc:
        raise UsageError(str(exc)) from None
    return code


def _serve():  # type: ignore[no-untyped-def]
    # Imported on use, like the campaign: `run` must not need the reference broker's modules.
    from conformance.commands import serve

    return serve


def _check_control():  # type: ignore[no-untyped-def]
    from conformance.commands import check_control as check

    return check


def _agreement():  # type: ignore[no-untyped-def]
    from conformance.commands import compare as agreement

    return agreement


def _run_compare(args: argparse.Namespace, out: TextIO) -> int:
    agreement = _agreement()
    try:
        code: int = agreement.run(args, out)
    except agreement.CompareError as exc:
        raise UsageError(str(exc)) from None
    return code


def _campaign():  # type: ignore[no-untyped-def]
    # Imported on use: the other commands must not need the campaign's dependencies.
    from conformance.commands import campaign as command

    return command


def _audit():  # type: ignore[no-untyped-def]
    from conformance.commands import audit as audit_command

    return audit_command


def _run_campaign(args: argparse.Namespace, out: TextIO, command: object = None) -> int:
    from conformance.spark.tasks import CampaignError

    try:
        code: int = (command or _campaign()).run(args, out)  # type: ignore[attr-defined]
    except CampaignError as exc:
        raise UsageError(str(exc)) from None
    return code


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Conformance suite for Apache Kafka's message-timestamp contract "
        "(KIP-32/33/79/734/937).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in _COMMANDS:
        p = sub.add_parser(command.name, help=command.help, description=command.help)
        command.add_arguments(p)
        p.set_defaults(run=command.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            names = ", ".join(c.name for c in _COMMANDS)
            raise UsageError(f"missing command: choose one of {names} (see {PROG} --help)")
        code: int = args.run(args, sys.stdout)
        return code
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as e:  # --help / --version from argparse
        return e.code if isinstance(e.code, int) else EXIT_OK
    except BrokenPipeError:  # e.g. `kafka-conformance clauses | head`: not an error
        # Point stdout at /dev/null so the interpreter's final flush does not complain again.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
