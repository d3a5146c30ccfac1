"""`kafka-conformance diff OLD NEW`: two runs compared clause by clause (reports.run_diff, classified by
conformance.judging.changes). Exit 1 when a clause regressed, 0 otherwise, 2 on bad input."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from conformance.commands.usage import UsageError
from conformance.judging.results import ResultsError
from reports.run_diff import FORMATS, Side, diff_runs, read_run, render


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD", help="the earlier run: its verdicts.json or its report folder (--out)")
    parser.add_argument("new", metavar="NEW", help="the later run: its verdicts.json or its report folder")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default), markdown (a pull-request comment, a CI job summary) or json",
    )
    parser.epilog = (
        "Exit 1 when a clause regressed (it did not fail in OLD and fails in NEW: FAIL, UNEXPECTED-PASS, TIMEOUT, "
        "CRASHED), else 0; 2 on bad input. docs/comparing-runs.md lists every kind of change."
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    try:
        old, new = read_run(Path(args.old)), read_run(Path(args.new))
    except ResultsError as exc:
        raise UsageError(str(exc)) from None
    diff = diff_runs(Side("old", args.old, old), Side("new", args.new, new))
    out.write(render(diff, args.format))
    return diff.exit_code
