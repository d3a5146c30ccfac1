"""`kafka-conformance run`: the suites against one target, with the HTML report and a verdict summary (the main job)."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from conformance.commands import run_ci
from conformance.commands.usage import (
    EXIT_CHECK_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    UsageError,
    add_quiet,
    check_profile,
    output_directory,
    run_directory,
    sigterm_as_interrupt,
)
from conformance.judging.harness import HARNESS_ERROR_PREFIX
from conformance.judging.results import UNKNOWN_VERSION, RunResults, read_results
from conformance.plugin.launcher import SuitesRun
from conformance.plugin.run_options import SettingsError, Surface, add_command_options, declared, resolve_namespace
from conformance.targets.registry import (
    TargetError,
    check_target,
    default_hypothesis_profile,
    default_profile,
    obtain_target,
    parse_target,
)
from conformance.targets.target import ServedBy, Target
from conformance.wire.client_config import SecurityConfigError, config_bootstrap, resolve_security
from conformance.wire.security import SecuritySettings
from models.clauses import CLAUSES

if TYPE_CHECKING:
    from conformance.plugin.launcher import ExpectationsChoice
    from conformance.targets.routes.wire_adapter.kafka_wire import ControlOffer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_quiet(parser)
    add_command_options(parser, SuitesRun)  # the settings that reach the suites' pytest: declared once, there
    parser.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="where the report, verdicts and logs go (default: a folder of the run's own, "
        "reports/out/<target>-<UTC time>, with the link reports/out/latest to the newest run)",
    )
    parser.add_argument("--no-html", action="store_true", help="skip the Allure HTML report (results still written)")
    run_ci.add_arguments(parser)
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")


def _resolve_settings(args: argparse.Namespace) -> None:
    """Each setting of the run in `args` as the run uses it: the option, else its environment variable, else its
    default (conformance.plugin.run_options); a usage error for a variable that does not read or a timeout that
    is not positive."""
    try:
        resolve_namespace(args, SuitesRun)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    if not args.wire_timeout > 0:
        raise UsageError(
            f"--wire-timeout {args.wire_timeout:g}: give a positive number of seconds, e.g. --wire-timeout 10"
        )


def _security(args: argparse.Namespace) -> SecuritySettings:
    """The TLS and SASL settings of the run (options, then KTS_ variables, then --client-config), or a usage error."""
    try:
        return resolve_security(lambda dest: getattr(args, dest, None))
    except SecurityConfigError as exc:
        raise UsageError(str(exc)) from None


def _check_run_inputs(args: argparse.Namespace, out: TextIO) -> tuple[Path, Target, SecuritySettings]:
    """Everything `run` can check before pytest starts, each problem one usage error; the suites directory, the
    target (parsed once, here) and its security settings. What a control plane turns on is said on `out`."""
    from conformance.plugin.launcher import LauncherError, suites_dir
    from conformance.targets.routes.wire_adapter.fault_hook import check_fault_options

    security = _security(args)
    try:
        parsed = parse_target(args.target)
        if args.bootstrap_servers is None and parsed.served_by is ServedBy.CLUSTER:
            args.bootstrap_servers = config_bootstrap(lambda dest: getattr(args, dest, None))
        if args.profile is None:
            args.profile = default_profile(parsed)
        check_profile(args.profile)
        target = check_target(
            parsed, args.profile, bootstrap=args.bootstrap_servers, control_url=args.control_url,
            brokers=args.brokers, security=security,
        )
        check_fault_options(args.target, args.fault_hook, args.allow_disruptive)
        suites = suites_dir(args.suites)
    except (TargetError, LauncherError) as exc:
        raise UsageError(str(exc)) from None
    for cid in args.clauses:
        if cid not in {c.id for c in CLAUSES}:
            raise UsageError(f"--clauses: unknown clause {cid!r}: `{PROG} clauses` lists the IDs")
    if target.served_by is ServedBy.CLUSTER:
        from conformance.targets.routes.wire_adapter.kafka_wire import check_control, check_reachable

        try:
            check_reachable(args.bootstrap_servers, timeout=args.wire_timeout, security=security)
            if not security.plaintext:  # once it works: a usage error stays one line
                out.write(f"security: {security.describe()}\n")
            if args.control_url:
                offer = check_control(
                    args.bootstrap_servers, args.control_url, timeout=args.wire_timeout, security=security
                )
                _print_control_offer(args, offer, out)
        except TargetError as exc:
            raise UsageError(str(exc)) from None
    return suites, target, security


def _print_control_offer(args: argparse.Namespace, offer: ControlOffer, out: TextIO) -> None:
    """What the control plane turns on for this run, and what it declared that the suite ignores."""
    from conformance.judging.capabilities import Capability

    names = ", ".join(sorted(c.value for c in offer.capabilities)) or "nothing"
    out.write(f"control plane at {args.control_url}: turns on {names}\n")
    for note in offer.notes:
        out.write(f"note: {note}\n")
    if args.fault_hook and Capability.LEADER_FAILOVER in offer.capabilities:
        out.write("note: leaders move through the control plane; --fault-hook is not used\n")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """The main job: the suites against one target, Allure results and the single-file HTML report, and a
    clause summary. Exit 0 when every result matches the expectations (PASS, KNOWN, UNSUPPORTED, N/A,
    NON-STRICT), 1 when a clause FAILs, a pinned expectation is stale (with --fail-on-stale: any STALE entry), the
    harness broke or a clause regressed against --baseline, 2 on bad input; stopped by Ctrl-C or SIGTERM, 130 or 143
    (128 + the signal) with the report of what finished. A target that cannot be obtained or started is bad input
    too (2, its one line, no test run; docs/setup-failures.md)."""
    with sigterm_as_interrupt():
        try:
            return _run(args, out)
        except KeyboardInterrupt as exc:  # before the suites started, or while the report was built
            sig = _signal_of(exc)
            wrote = f": what it wrote is in {args.out}" if args.out is not None else ""
            out.write(f"the run was stopped ({sig.name}) before it finished{wrote}\n")
            return 128 + sig


def _signal_of(exc: KeyboardInterrupt) -> signal.Signals:
    """The signal behind a KeyboardInterrupt: SIGTERM when sigterm_as_interrupt raised it, else Ctrl-C."""
    return signal.SIGTERM if exc.args == (f"signal {signal.SIGTERM.value}",) else signal.SIGINT


def _run(args: argparse.Namespace, out: TextIO) -> int:
    import shlex

    from conformance.plugin.launcher import choose_expectations, pytest_command, run_streaming, suites_environment

    _resolve_settings(args)
    suites, target, security = _check_run_inputs(args, out)
    expectations = choose_expectations(
        args.target, args.expectations, none=args.no_expectations, suites=suites, parsed=target
    )
    _check_expectations(expectations)
    baseline = run_ci.check_inputs(args)
    try:
        # Last of the checks (a typo is named before a download), and before pytest and the run's folder: a release
        # or a build that cannot be had stops the run with its one line, never with every test failing on it.
        obtain_target(target, args.profile, brokers=args.brokers)
    except TargetError as exc:
        raise UsageError(str(exc)) from None
    root = output_directory(args.out) if args.out is not None else run_directory(args.target)
    args.out = str(root)
    results, html, verdicts = root / "allure-results", root / "allure-report", root / "verdicts.json"
    budget = args.hypothesis_profile or default_hypothesis_profile(target)
    color = ("--color=yes",) if out.isatty() else ()
    # The run's settings as declared (conformance.plugin.launcher.SuitesRun), with what `run` decided of them.
    settings = {name: getattr(args, name) for name, _ in declared(SuitesRun, Surface.COMMAND)}
    settings.update(
        hypothesis_profile=budget,
        suites=suites,
        expectations=str(expectations.path) if expectations.path is not None else None,
    )
    run = SuitesRun(
        **settings,
        security=security,
        verdicts_json=verdicts,
        alluredir=results,
        log_dir=root / "logs",
        extra=("-rfE", *color, *args.pytest_args),
    )
    cmd = pytest_command(run)
    out.write(f"$ {shlex.join(['pytest', *cmd[3:]])}\n{expectations.describe()}\n")
    out.flush()
    finished = run_streaming(cmd, out, env=suites_environment(run), forward_stops=True)
    # pytest.exit(): the run could not start (e.g. a managed broker that did not come up), or a driver broke
    # under it (conformance.targets.routes.driver). Its message names the cause and the fix; the class that carried it
    # is no news to a user. What ran before a driver broke keeps its report, and the message comes last.
    stopped_by_message = finished.exit_messages[0].removeprefix(f"{PROG}: ") if finished.exit_messages else None
    if stopped_by_message is not None and not (verdicts.is_file() and read_results(verdicts).tests):
        raise UsageError(stopped_by_message)
    code = finished.returncode
    if code in (3, 4) and finished.stopped_by is None and stopped_by_message is None:
        # internal error or usage error: pytest has said why
        return EXIT_USAGE
    # A run stopped early says so wherever its verdicts are shown (they cover only the tests that finished).
    incomplete = read_results(verdicts).incomplete if verdicts.is_file() else None
    if finished.stopped_by is not None and incomplete is None:
        incomplete = f"stopped ({finished.stopped_by.name})"
    if results.is_dir():
        from reports.allure import ReportError, write_categories, write_environment

        said = read_results(verdicts) if verdicts.is_file() else None
        counts = _verdict_counts(said) if said is not None else ""
        # The clause verdicts at a glance: Allure's own summary counts KNOWN, UNSUPPORTED and N/A all as skipped.
        environment = {
            "target": args.target,
            "implementation_version": (said and said.implementation_version) or UNKNOWN_VERSION,
            "profile": args.profile,
            "hypothesis_profile": budget,
            "clause_verdicts": counts or "none",
            "expectations": expectations.describe().partition(": ")[2],
        }
        if incomplete:
            environment["incomplete"] = incomplete
        write_environment(results, environment)
        write_categories(results)
        if verdicts.is_file():
            from reports.clauses import write_clause_results

            write_clause_results(verdicts, results, expectations.path)
        if not args.no_html:
            exit_code = 128 + finished.stopped_by if finished.stopped_by is not None else int(code != 0)
            if stopped_by_message is not None:
                exit_code = EXIT_USAGE
            try:
                index = _build_report(args, results, html, verdicts, expectations, budget, exit_code)
                out.write(f"report: {index}\n")
            except ReportError as exc:
                out.write(f"report not built: {exc}\n")
                code = code or EXIT_CHECK_FAILED
        else:
            out.write(f"results: {results} (no HTML report: --no-html)\n")
    if finished.stopped_by is not None:
        exit_code = 128 + finished.stopped_by
    elif stopped_by_message is not None:
        exit_code = EXIT_USAGE
    else:
        exit_code = EXIT_OK if code == 0 else EXIT_CHECK_FAILED
    exit_code, regressed = run_ci.after_run(args, verdicts, baseline, exit_code, expectations.path, out)
    if verdicts.is_file():
        _print_verdict_summary(read_results(verdicts), out)
    out.write(f"{expectations.describe()}\n")
    if finished.stopped_by is not None:
        out.write(f"the run was {incomplete}: the report and verdicts.json cover what finished\n")
    elif code == 5:
        out.write("no test ran: check --clauses and the suites directory\n")
    if verdicts.is_file():
        from conformance.judging.headline import headline_of

        # Last, as on the report's first page: the verdict as the exit code says it.
        out.write(f"verdict: {headline_of(read_results(verdicts)).with_exit(exit_code)}{regressed}\n")
    if stopped_by_message is not None:
        out.flush()
        raise UsageError(stopped_by_message)
    return exit_code


def _build_report(
    args: argparse.Namespace,
    results: Path,
    html: Path,
    verdicts: Path,
    expectations: ExpectationsChoice,
    budget: str,
    exit_code: int,
) -> Path:
    """The HTML report: the clause verdicts and the tests as two Allure reports, and before them the first page
    (reports.front_page) whose verdict line says what `exit_code` says. Without verdicts.json (the run stopped
    before any test), the Allure report alone."""
    from conformance.judging.headline import headline_of
    from reports.allure import QUALITY_GATE_FILE, build_html
    from reports.front_page import RunFacts, write_front_page

    title = f"Kafka timestamp conformance: {args.target} ({args.profile})"
    if not verdicts.is_file():
        return build_html(results, html, name=title)
    run = read_results(verdicts)
    index = build_html(results, html, name=f"{title}: {headline_of(run).with_exit(exit_code)}", split=True)
    gate, _, words = (html / QUALITY_GATE_FILE).read_text(encoding="utf-8").partition("\n")
    settings = (
        ("target", args.target),
        ("version", run.implementation_version or UNKNOWN_VERSION),
        ("profile", args.profile),
        ("budget", budget),
        *((("seed", str(run.seed)),) if run.seed is not None else ()),
    )
    facts = RunFacts(title, exit_code, gate, " ".join(words.split()), expectations.describe(), settings)
    write_front_page(html, run, facts)
    return index


def _verdict_counts(results: RunResults) -> str:
    """'27 KNOWN, 12 PASS, ...' in triage order (conformance.judging.verdicts.TRIAGE_ORDER)."""
    from conformance.judging.verdicts import TRIAGE_ORDER

    counts: dict[str, int] = {}
    for verdict in results.clauses.values():
        counts[verdict.value] = counts.get(verdict.value, 0) + 1
    order = [v.value for v in TRIAGE_ORDER]
    return ", ".join(f"{counts[v]} {v}" for v in order if v in counts)


def _check_expectations(choice: ExpectationsChoice) -> None:
    """The expectations file in force loads, or a usage error names it and the way out."""
    from conformance.judging.expectations import ExpectationsError, load_expectations

    if choice.path is None:
        return
    try:
        load_expectations(choice.path)
    except ExpectationsError as exc:
        drop = "drop --expectations" if choice.path != choice.shipped else "pass --no-expectations"
        raise UsageError(f"{exc} (fix the file, or {drop})") from None


def _print_verdict_summary(results: RunResults, out: TextIO) -> None:
    out.write(f"clauses: {len(results.clauses)} ({_verdict_counts(results) or 'none'})\n")
    broke = sum(1 for t in results.tests if t.message.startswith(HARNESS_ERROR_PREFIX))
    if broke:
        # Not the target's departures: a bug of the suite left these tests' clauses BLOCKED.
        out.write(
            f"the harness broke in {broke} test{'s' if broke != 1 else ''}: their clauses are BLOCKED; "
            "report it with the traceback above\n"
        )
    if results.target_lost:
        # The clauses left BLOCKED say nothing about the target's timestamps: the target went away.
        out.write(f"TARGET LOST: {results.target_lost[0]}\n")
