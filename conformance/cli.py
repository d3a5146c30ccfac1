"""The `kafka-conformance` command line.

Subcommands are registered in `_COMMANDS`; each adds its own arguments and returns an exit code.
Exit codes: 0 success, 1 a check failed (e.g. a rule of docs/rules.md no clause covers), 2 bad input (one
line on stderr naming the problem and the fix, never a traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any, NoReturn, TextIO

# The seeded mutants register themselves into the targets on import (conformance.targets.kinds.seeding).
import conformance.faults  # noqa: F401
from conformance.commands.usage import EXIT_CHECK_FAILED, EXIT_OK, EXIT_USAGE, PROG, UsageError
from conformance.extras import extra_of, install_hint
from conformance.progress import silenced

__all__ = ["EXIT_CHECK_FAILED", "EXIT_OK", "EXIT_USAGE", "PROG", "UsageError", "build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    # argparse prints usage and calls sys.exit(2); we want one line and a return code instead.
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


# --- command registry -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Command:
    """A subcommand: its module (`conformance.commands.<module>`, imported only when the command is parsed, its
    help shown or it runs) gives `add_arguments(parser)` and `run(args, out) -> exit code`, and may name
    `USAGE_ERRORS`, its own exception classes that are bad input (one line, exit 2). `extra`: the extra of
    pyproject.toml that its work needs, said in the help; a module of an extra found missing when it runs is one
    line naming the extra to install, whichever command reaches it."""

    name: str
    help: str
    module: str
    extra: str | None = None

    def load(self) -> ModuleType:
        return importlib.import_module(f"conformance.commands.{self.module}")

    def run(self, args: argparse.Namespace, out: TextIO) -> int:
        command = self.load()
        usage_errors: tuple[type[Exception], ...] = getattr(command, "USAGE_ERRORS", ())
        try:
            with silenced(bool(getattr(args, "quiet", False))):
                code: int = command.run(args, out)
        except usage_errors as exc:
            raise UsageError(str(exc)) from None
        except ModuleNotFoundError as exc:
            extra = extra_of(exc.name or "", prefer=self.extra)
            if extra is None:
                raise
            raise UsageError(
                f"{self.name} needs the {extra} extra ({exc.name} is not installed): {install_hint(extra)}"
            ) from None
        return code


_COMMANDS: tuple[_Command, ...] = (
    _Command("clauses", "show the clause catalogue (table, JSON, coverage)", "clauses"),
    _Command("run", "run the suites against a target and build the report (the main job)", "run"),
    _Command(
        "diff",
        "compare two runs clause by clause (verdicts.json files or report folders): regressed, fixed, ...; exit 1 "
        "on a regression",
        "diff",
    ),
    _Command(
        "junit",
        "write a run's verdicts.json as JUnit XML for a CI's test view (run --junit-xml does it during a run)",
        "junit",
    ),
    _Command("mutants", "run the suites against every seeded mutant and write the kill table", "mutants"),
    _Command(
        "up",
        "start a managed broker target (kafka:<version>, reference, tansu...) and print one JSON line when it answers",
        "up",
    ),
    _Command(
        "serve",
        "serve the reference model (or a seeded mutant) over the Kafka protocol, with its HTTP control plane",
        "serve",
    ),
    _Command(
        "check-control",
        "check a control plane against the OpenAPI document with schemathesis (one verdict line)",
        "check_control",
        extra="control",
    ),
    _Command(
        "check-driver",
        "check a client or codec driver against the driver protocol (docs/driver-protocol.md), one line per check",
        "check_driver",
    ),
    _Command(
        "compare",
        "compare a target's clause verdicts with the in-process model's, profile by profile (the reference check)",
        "compare",
    ),
    _Command(
        "campaign",
        "run a table of tasks (target x suite x profile x seed) on Spark and write the conformance matrix",
        "campaign",
        extra="campaign",
    ),
    _Command(
        "audit",
        "audit mode: check a topic's ListOffsets answers against Spark's ground truth from its records",
        "audit",
        extra="campaign",
    ),
    _Command(
        "differential",
        "the differential oracle: generated batches through the model and Apache Kafka's record layer, on Spark",
        "differential",
        extra="java",
    ),
    _Command(
        "broker-differential",
        "generated programs against a real broker (kafka:<line>, reference) and the model, answers compared field "
        "by field, on Spark",
        "broker_differential",
        extra="campaign",
    ),
)


class _CommandParser(_Parser):
    """A subcommand's parser that adds its arguments on first use (parsing, help, usage), importing its module
    then: `kafka-conformance clauses` imports neither Spark's wing nor the reference broker's."""

    def __init__(self, *args: Any, command: _Command | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._command = command

    def fill(self) -> None:
        command, self._command = self._command, None
        if command is not None:
            command.load().add_arguments(self)

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        self.fill()
        return super().parse_known_args(*args, **kwargs)

    def format_help(self) -> str:
        self.fill()
        return super().format_help()

    def format_usage(self) -> str:
        self.fill()
        return super().format_usage()


def build_parser(*, complete: bool = False) -> argparse.ArgumentParser:
    """The parser; each command's arguments are added when it is used, or all at once with `complete` (for a
    reference of every option)."""
    parser = _Parser(
        prog=PROG,
        description="Conformance suite for Apache Kafka's message-timestamp contract "
        "(KIP-32/33/79/734/937).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_CommandParser)
    for command in _COMMANDS:
        said = f"{command.help} [needs the {command.extra} extra]" if command.extra else command.help
        p = sub.add_parser(command.name, help=said, description=said, command=command)
        p.set_defaults(run=command.run)
        if complete:
            p.fill()
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
