"""What every `kafka-conformance` subcommand shares: the program's name, its exit codes, the usage error that
becomes one line on stderr, --quiet and --master, the checks of --out, --master and --profile, and SIGTERM handled as
Ctrl-C. The options of the suites' settings that commands share with `run` are declared in
conformance.plugin.launcher.SuitesRun (conformance.plugin.run_options)."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from models.profiles import PROFILES

PROG = "kafka-conformance"
EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """--quiet: no progress lines for the slow steps (conformance.progress), here and in what the command starts."""
    parser.add_argument(
        "--quiet",
        action="store_true",
        default=False,
        help="no progress lines while a target is fetched, built or started or the report tool installed "
        "(env KTS_QUIET=1)",
    )


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


REPORTS = Path("reports/out")  # where a command's outputs go when no --out is given, relative to where it runs
LATEST = "latest"  # the link in REPORTS to the newest run's own folder
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def run_directory(label: str, base: Path = REPORTS, *, now: datetime | None = None) -> Path:
    """A new folder of its own for one run, `base/<label>-<UTC time>` (e.g. reports/out/kafka-4.0-20261128T170102Z;
    the label made safe for any file system, a suffix -2, -3... if two runs start in the same second), with the link
    `base/latest` (relative) moved to it; a UsageError naming `base` when it cannot be created."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    safe = _UNSAFE.sub("-", label).strip("-.")[:80] or "run"
    output_directory(base)
    for attempt in range(1, 1000):
        folder = base / (f"{safe}-{stamp}" + (f"-{attempt}" if attempt > 1 else ""))
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise UsageError(
                f"cannot create the output directory {str(folder)!r} ({exc.strerror or exc}): pass --out DIR you "
                "can write"
            ) from None
        _point_latest_at(folder)
        return folder
    raise UsageError(f"cannot find a free folder name for {safe}-{stamp} in {base}: pass --out DIR")


def _point_latest_at(folder: Path) -> None:
    """`latest` beside `folder` made a relative link to it, replaced in one step (a reader never finds it missing).
    Where it cannot be (a file system without links, a folder of that name), the run goes on without it."""
    link, temporary = folder.parent / LATEST, folder.parent / f".{LATEST}-{os.getpid()}"
    with contextlib.suppress(OSError):
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(folder.name, target_is_directory=True)
        os.replace(temporary, link)
    with contextlib.suppress(OSError):
        temporary.unlink(missing_ok=True)


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


def add_master(parser: argparse.ArgumentParser) -> None:
    """--master: where a command's Spark work runs (campaign, audit)."""
    parser.add_argument(
        "--master",
        type=spark_master,
        default=os.environ.get("KTS_SPARK_MASTER", "local[2]"),
        help="Spark master URL: local[N] or spark://HOST:PORT (env KTS_SPARK_MASTER; default local[2])",
    )


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
