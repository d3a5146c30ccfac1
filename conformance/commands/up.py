"""`kafka-conformance up TARGET`: start a managed broker target (an Apache Kafka line, the reference broker,
Tansu, noida, librdkafka's mock cluster) as a run would, and keep it until SIGTERM or Ctrl-C.

    kafka-conformance up kafka:4.0 [--profile P] [--brokers N] [--log-dir DIR] [--timeout S]

Once it answers, one JSON line goes to stdout and nothing else does:

    {"bootstrap_servers": "127.0.0.1:P", "control_url": null, "profile": "kafka-4.0", "target": "kafka:4.0",
     "brokers": 1, "logs": ["..."], "pid": 1234}

`control_url` is the target's HTTP control plane (conformance/control/openapi.json) where it has one, else
null. Human-readable lines (what started, where its logs are, how to stop it) go to stderr. SIGTERM or Ctrl-C
stops what was started, by its process id, and exits 0. Bad input is one line naming the fix, exit 2, and
nothing is started; so is a target that cannot be obtained (a release its registry does not have, a build that
fails: before anything starts) or that fails to start (one line naming its log, with nothing left running).

For users who want a real broker to poke at, for scripts (read the first stdout line), and for tests.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import threading
from pathlib import Path
from typing import TextIO

from conformance.commands.usage import EXIT_OK, UsageError, add_quiet, check_profile, sigterm_as_interrupt
from conformance.errors import TargetError
from conformance.plugin.launcher import SuitesRun
from conformance.plugin.run_options import SettingsError, add_command_options, resolve_namespace
from conformance.targets.kinds.implementation import Kind
from conformance.targets.registry import (
    TargetSpec,
    check_target,
    default_profile,
    obtain_target,
    open_target,
    parse_target,
    spec_of,
    table,
    targets_help,
)
from conformance.targets.routes.wire_adapter.kafka_wire import WireFactory
from conformance.targets.target import ServedBy, Target, read_name

# The options this command shares with `run`: declared once, in conformance.plugin.launcher.SuitesRun.
SHARED = ("profile", "brokers")


def startable(spec: TargetSpec) -> bool:
    """What `up` starts: a broker the suite starts and stops itself (managed, or the reference broker)."""
    return spec.kind is Kind.BROKER and spec.served_by in (ServedBy.MANAGED, ServedBy.REFERENCE)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_quiet(parser)
    parser.add_argument("target", metavar="TARGET", help=f"the broker to start: {targets_help(startable)}")
    add_command_options(parser, SuitesRun, SHARED)  # as in `run` (conformance.plugin.launcher)
    parser.add_argument(
        "--log-dir",
        default=None,
        help="where the broker's log goes (default: a new folder in the system's temporary directory, "
        "kafka-conformance-up-<target>-..., kept after it stops)",
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds each readiness probe may take (default 10)"
    )


def _parsed(name: str) -> Target:
    """`name` parsed; a name the table does not know lists what `up` starts, not every target `run` takes."""
    try:
        return parse_target(name)
    except TargetError:
        if read_name(name).implementation in {spec.name for spec in table()}:
            raise  # a known row with a bad version, mutant or path: its own message says what is wrong
        raise TargetError(f"unknown target {name!r}: up starts {targets_help(startable)}") from None


def _target(args: argparse.Namespace) -> Target:
    try:
        resolve_namespace(args, SuitesRun, SHARED)
        target = _parsed(args.target)
        if not startable(spec_of(target)):
            raise TargetError(
                f"{args.target!r} is not a broker the suite starts: up starts {targets_help(startable)}"
                + (" (the model is served over the wire by `up reference`)" if target.served_by is ServedBy.IN_PROCESS
                   and target.kind is Kind.BROKER else "")
            )
        if args.profile is None:
            args.profile = default_profile(target)
        check_profile(args.profile)
        if args.timeout <= 0:
            raise UsageError(f"--timeout {args.timeout:g}: give a positive number of seconds, e.g. --timeout 10")
        checked = check_target(target, args.profile, brokers=args.brokers)
        return obtain_target(checked, args.profile, brokers=args.brokers)  # a download or a build, before any start
    except (TargetError, SettingsError) as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace, out: TextIO, *, stop: threading.Event | None = None) -> int:
    """Start TARGET, print its JSON line on `out` once it answers, keep it until SIGTERM or Ctrl-C (or until
    `stop` is set, for callers outside the main thread), then stop it."""
    target = _target(args)
    if args.log_dir is None:  # not reports/out/ of whatever folder `up` runs in: a folder of its own
        safe = re.sub(r"[^A-Za-z0-9._-]+", "-", str(target)).strip("-.")
        args.log_dir = tempfile.mkdtemp(prefix=f"kafka-conformance-up-{safe}-")
    err = sys.stderr
    with sigterm_as_interrupt():
        try:
            err.write(f"starting {target} ({args.profile}); its log goes to {args.log_dir}\n")
            err.flush()
            with open_target(
                target, args.profile, log_dir=Path(args.log_dir), timeout=args.timeout, brokers=args.brokers
            ) as (factory, logs):
                assert isinstance(factory, WireFactory), f"{target} opened as {type(factory).__name__}"
                brokers = len(factory.bootstrap.split(","))
                line = {
                    "bootstrap_servers": factory.bootstrap,
                    "control_url": factory.control_url,
                    "profile": args.profile,
                    "target": str(target),
                    "brokers": brokers,
                    "logs": [str(p) for p in logs],
                    "pid": os.getpid(),
                }
                out.write(json.dumps(line) + "\n")
                out.flush()
                control = f", control plane {factory.control_url}" if factory.control_url else ""
                err.write(
                    f"{target} is up: bootstrap servers {factory.bootstrap}{control}; "
                    "SIGTERM or Ctrl-C stops it\n"
                )
                err.flush()
                _wait(stop)
        except KeyboardInterrupt:
            err.write(f"{target} stopped\n")
            return EXIT_OK
        except TargetError as exc:  # open_target says a start that failed so (registry.did_not_start)
            raise UsageError(str(exc)) from None
    err.write(f"{target} stopped\n")
    return EXIT_OK


def _wait(stop: threading.Event | None) -> None:
    """Until a signal (KeyboardInterrupt) or `stop`."""
    event = stop if stop is not None else threading.Event()
    while not event.wait(0.5):
        pass
