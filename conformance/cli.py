"""The `kafka-conformance` command line.

Subcommands are registered in `_COMMANDS`; each adds its own arguments and returns an exit code.
Exit codes: 0 success, 1 a check failed (e.g. a rule of docs/rules.md no clause covers), 2 bad input (one
line on stderr naming the problem and the fix, never a traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn, TextIO

from conformance.commands import clauses, mutants, run
from conformance.commands.usage import EXIT_CHECK_FAILED, EXIT_OK, EXIT_USAGE, PROG, UsageError

__all__ = ["EXIT_CHECK_FAILED", "EXIT_OK", "EXIT_USAGE", "PROG", "UsageError", "build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    # argparse prints usage and calls sys.exit(2); we want one line and a return code instead.
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


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
        clauses.add_arguments,
        clauses.run,
    ),
    _Command(
        "run",
        "run the suites against a target and build the report (the main job)",
        run.add_arguments,
        run.run,
    ),
    _Command(
        "diff",
        "compare two runs clause by clause (verdicts.json files or report folders): regressed, fixed, ...; exit 1 "
        "on a regression",
        lambda parser: _diff().add_arguments(parser),
        lambda args, out: _diff().run(args, out),
    ),
    _Command(
        "junit",
        "write a run's verdicts.json as JUnit XML for a CI's test view (run --junit-xml does it during a run)",
        lambda parser: _junit().add_arguments(parser),
        lambda args, out: _junit().run(args, out),
    ),
    _Command(
        "mutants",
        "run the suites against every seeded mutant and write the kill table",
        mutants.add_arguments,
        mutants.run,
    ),
    _Command(
        "up",
        "start a managed broker target (kafka:<version>, reference, tansu...) and print one JSON line when it answers",
        lambda parser: _up().add_arguments(parser),
        lambda args, out: _up().run(args, out),
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
        "check-driver",
        "check a client or codec driver against the driver protocol (docs/driver-protocol.md), one line per check",
        lambda parser: _check_driver().add_arguments(parser),
        lambda args, out: _check_driver().run(args, out),
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
    _Command(
        "broker-differential",
        "generated programs against a real broker (kafka:<line>, reference) and the model, answers compared field "
        "by field, on Spark",
        lambda parser: _broker_differential().add_arguments(parser),
        lambda args, out: _broker_differential().run(args, out),
    ),
)


def _diff():  # type: ignore[no-untyped-def]
    from conformance.commands import diff as command

    return command


def _junit():  # type: ignore[no-untyped-def]
    from conformance.commands import junit as command

    return command


def _check_driver():  # type: ignore[no-untyped-def]
    from conformance.commands import check_driver as command

    return command


def _broker_differential():  # type: ignore[no-untyped-def]
    from conformance.commands import broker_differential as command

    return command


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


def _up():  # type: ignore[no-untyped-def]
    from conformance.commands import up

    return up


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
