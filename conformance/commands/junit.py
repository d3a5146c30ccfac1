"""`kafka-conformance junit VERDICTS FILE`: a run's verdicts.json as JUnit XML (reports.junit), for a CI's test
view when the run was made without --junit-xml. Exit 0 when written, 2 on bad input."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from conformance.commands.usage import UsageError
from conformance.judging.results import ResultsError
from reports.junit import JunitError, write_junit
from reports.run_diff import read_run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("verdicts", metavar="VERDICTS", help="a run's verdicts.json, or its report folder (--out)")
    parser.add_argument("file", metavar="FILE", help="the JUnit XML file to write")


def run(args: argparse.Namespace, out: TextIO) -> int:
    try:
        results = read_run(Path(args.verdicts))
        cases = write_junit(Path(args.file), results)
    except (ResultsError, JunitError) as exc:
        raise UsageError(str(exc)) from None
    out.write(f"junit: {cases} test cases in {args.file}\n")
    return 0
