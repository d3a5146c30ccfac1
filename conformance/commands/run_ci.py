"""What `kafka-conformance run` adds for CI: `--baseline OLD` (what changed since an earlier run, as
`kafka-conformance diff` prints it; a regression makes the run exit 1) and `--junit-xml FILE` (the clause
verdicts for a CI's test view, red exactly when the exit code is not 0). Kept beside run.py so the main job's
module keeps to running the suites."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from conformance.commands.usage import EXIT_CHECK_FAILED, EXIT_OK, UsageError, output_directory
from conformance.judging.changes import Change
from conformance.judging.results import ResultsError, RunResults, read_results

DIFF_MARKDOWN = "diff.md"  # beside verdicts.json: the diff against --baseline, for a pull request or a job summary


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--baseline",
        default=None,
        metavar="OLD",
        help="an earlier run's verdicts.json or report folder: after the run, print what changed since then, clause "
        "by clause (as `kafka-conformance diff OLD NEW`), and write it as Markdown to diff.md beside verdicts.json; "
        "a clause that regressed (did not fail in OLD, fails now) makes the run exit 1",
    )
    parser.add_argument(
        "--junit-xml",
        default=None,
        metavar="FILE",
        help="also write the clause verdicts as JUnit XML for a CI's test view: one test case per clause (FAIL a "
        "failure with its counterexample; KNOWN, UNSUPPORTED, N/A skipped with their reason), and one for the run's "
        "verdict, which fails exactly when the exit code is not 0",
    )


@dataclass(frozen=True)
class Baseline:
    source: str
    results: RunResults


def check_inputs(args: argparse.Namespace) -> Baseline | None:
    """--baseline read and --junit-xml checked before the suites start (a baseline in the folder this run writes
    to is read before the run replaces it); a UsageError naming the fix."""
    from reports.run_diff import read_run

    if args.junit_xml is not None:
        if Path(args.junit_xml).is_dir():
            raise UsageError(f"--junit-xml {args.junit_xml} is a folder: give a file, e.g. {args.junit_xml}/junit.xml")
        output_directory(Path(args.junit_xml).parent)
    if args.baseline is None:
        return None
    try:
        return Baseline(args.baseline, read_run(Path(args.baseline)))
    except ResultsError as exc:
        raise UsageError(f"--baseline: {exc}") from None


def after_run(
    args: argparse.Namespace,
    verdicts: Path,
    baseline: Baseline | None,
    exit_code: int,
    expectations: Path | None,
    out: TextIO,
) -> tuple[int, str]:
    """Print the diff against the baseline (and write it as Markdown beside `verdicts`), write the JUnit file;
    returns (the run's exit code, 1 when it was 0 and a clause regressed; what the verdict line adds)."""
    from reports.run_diff import Side, diff_runs, to_markdown, to_text

    results = read_results(verdicts) if verdicts.is_file() else None
    note = ""
    if baseline is not None and results is not None:
        diff = diff_runs(Side("baseline", baseline.source, baseline.results), Side("this run", str(verdicts), results))
        out.write(to_text(diff))
        (verdicts.parent / DIFF_MARKDOWN).write_text(to_markdown(diff), encoding="utf-8")
        if diff.regressed:
            note = f"; {len(diff.of(Change.REGRESSED))} regressed since the baseline"
            if exit_code == EXIT_OK:
                exit_code = EXIT_CHECK_FAILED
    if args.junit_xml is not None and not _write_junit(args, results, exit_code, expectations, note, out):
        exit_code = exit_code or EXIT_CHECK_FAILED  # as for a report not built: asked for, not there
    return exit_code, note


def _write_junit(
    args: argparse.Namespace,
    results: RunResults | None,
    exit_code: int,
    expectations: Path | None,
    note: str,
    out: TextIO,
) -> bool:
    from conformance.judging.expectations import ExpectationsError, load_expectations
    from reports.junit import JunitError, write_junit

    if results is None:  # no test ran: the run's verdict case alone says why the exit code is what it is
        results = RunResults(target=args.target, profile=args.profile or "", exit_status=exit_code)
    entries = ()
    if expectations is not None:
        try:
            entries = load_expectations(expectations)
        except ExpectationsError:  # checked before the run; a file edited since only loses the reasons
            entries = ()
    try:
        cases = write_junit(Path(args.junit_xml), results, exit_code=exit_code, expectations=entries, note=note)
    except JunitError as exc:
        out.write(f"junit not written: {exc}\n")
        return False
    out.write(f"junit: {cases} test cases in {args.junit_xml}\n")
    return True
