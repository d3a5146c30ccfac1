"""What every `kafka-conformance` subcommand shares: the program's name, its exit codes, the usage error that
becomes one line on stderr, the checks of --out, --master and --profile, and SIGTERM handled as Ctrl-C."""

from __future__ import annotations

import argparse
import contextlib
import re
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

from models.profiles import PROFILES

PROG = "kafka-conformance"
EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def output_directory(path: str | Path) -> Path:
    """`--out` created (with its parents) if it is not there; a UsageError naming it when it cannot be."""
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"cannot create the output directory {str(out)!r} ({exc.strerror or exc}): pass --out DIR you can write"
        ) from None
    return out


# The master URLs Spark accepts (SparkContext picks its scheduler by them; Spark 4 has no Mesos), checked before
# any JVM starts: a URL Spark cannot parse otherwise ends in the JVM's own stack trace, seconds later.
_SPARK_MASTER = re.compile(
    r"local(\[(\*|[1-9]\d*)(\s*,\s*[1-9]\d*)?\])?"
    r"|local-cluster\[\s*[1-9]\d*\s*,\s*[1-9]\d*\s*,\s*[1-9]\d*\s*\]"
    r"|spark://[^\s/,:]+:\d+(,[^\s/,:]+:\d+)*"
    r"|yarn"
    r"|k8s://\S+"
)


def spark_master(text: str) -> str:
    """--master as an argparse type: a URL Spark can parse, else one line naming the forms it takes."""
    if not _SPARK_MASTER.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a master URL Spark accepts: use local[N] (N cores of this machine) or spark://HOST:PORT "
            "(also local[*], yarn, k8s://URL)"
        )
    return text.strip()


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
