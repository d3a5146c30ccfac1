"""What every `kafka-conformance` subcommand shares: the program's name, its exit codes, the usage error that
becomes one line on stderr, the profile check, and SIGTERM handled as Ctrl-C."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

from models.profiles import PROFILES

PROG = "kafka-conformance"
EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def check_profile(name: str) -> str:
    if name not in PROFILES:
        known = ", ".join(PROFILES)
        raise UsageError(f"unknown profile {name!r}: choose one of {known} (e.g. --profile kafka-4.0)")
    return name


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a CI runner cancelling the job, `kill PID`) stops a long command as Ctrl-C does: it stops its
    pytest runs and keeps what finished."""
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
