"""`kafka-conformance check-driver --target client:<library>` (or codec:<library>, any version or checkout, or
client:driver=PATH for your own): the driver self-test (conformance.targets.routes.driver.driver_check). One line per
check, then one verdict line: exit 0 when every check passed, 1 when one failed, 2 for bad input (a target that is
not a driver's, a driver that cannot be built)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from conformance.commands.usage import EXIT_CHECK_FAILED, EXIT_OK, UsageError, add_quiet
from conformance.errors import TargetError
from conformance.targets.kinds.implementation import Kind
from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE
from conformance.targets.libraries import LIBRARIES
from conformance.targets.registry import parse_target
from conformance.targets.routes.driver.driver_builds import driver_command
from conformance.targets.routes.driver.driver_check import DriverCheck, check_client_driver, check_codec_driver, report

NAME = "check-driver"
DEFAULT_TIMEOUT = 10.0


def _drivers_help() -> str:
    names = [f"{role}:{spec.name}" for spec in LIBRARIES.values() for role in sorted(spec.roles)]
    return ", ".join(names)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_quiet(parser)
    parser.add_argument(
        "--target", required=True,
        help=f"the driver to check, as a target: {_drivers_help()}; NAME==VERSION or NAME=PATH as in run "
        "(client:driver=PATH: your own driver's executable)",
    )  # fmt: skip
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT,
        help=f"seconds the driver is told to bound each library call by (default {DEFAULT_TIMEOUT:g})",
    )  # fmt: skip
    parser.add_argument(
        "--log-dir", default="reports/out/logs",
        help="where the driver's stderr and the reference broker's log go (default reports/out/logs)",
    )  # fmt: skip


def run(args: argparse.Namespace, out: TextIO) -> int:
    try:
        target = parse_target(args.target)
    except TargetError as exc:
        raise UsageError(str(exc)) from None
    role = {Kind.CLIENT: CLIENT_ROLE, Kind.CODEC: CODEC_ROLE}.get(target.kind)
    spec = LIBRARIES.get(target.library)
    if role is None or spec is None or role not in spec.roles:
        raise UsageError(f"{args.target!r} is not a driver's target: choose one of {_drivers_help()} (--target)")
    if target.mutant is not None or target.against is not None:
        raise UsageError(
            f"check-driver checks a driver against the reference model: write --target {target.parts.base}"
        )
    if args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout:g}: give a positive number of seconds")
    try:
        argv = driver_command(target.library, version=target.version, path=target.path)
    except TargetError as exc:
        raise UsageError(str(exc)) from None
    check = DriverCheck(target.library, argv, target=str(target), log_dir=Path(args.log_dir), timeout=args.timeout)
    (check_client_driver if role == CLIENT_ROLE else check_codec_driver)(check)
    report(check, out)
    return EXIT_OK if check.passed else EXIT_CHECK_FAILED
