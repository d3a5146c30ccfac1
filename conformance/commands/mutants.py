"""`kafka-conformance mutants`: the suites against every seeded mutant (conformance.faults), the kill table."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from conformance.commands.usage import EXIT_CHECK_FAILED, EXIT_OK, PROG, UsageError, check_profile, sigterm_as_interrupt
from conformance.targets.target import served_mutant_name


def add_arguments(parser: argparse.ArgumentParser) -> None:
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


def run(args: argparse.Namespace, out: TextIO) -> int:
    from conformance.commands.kill_table import KILLED, NOT_SERVED, KillResult, KillTable, default_jobs, run_kill_table
    from conformance.faults import MUTANTS
    from conformance.plugin.launcher import LauncherError, suites_dir

    if args.list:
        for mutant in sorted(MUTANTS.values(), key=lambda m: m.id):
            out.write(f"{mutant.id:<40} {', '.join(mutant.clauses)}\n    {mutant.description}\n")
        out.write(f"{len(MUTANTS)} mutants\n")
        return EXIT_OK
    profile = check_profile(args.profile)
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

    with sigterm_as_interrupt():
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
