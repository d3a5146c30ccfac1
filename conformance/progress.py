"""Progress of the slow steps (fetching or building a target, starting a broker, installing the report tool), on
stderr: a line when one starts and a line when it ends with the seconds it took,

    fetching Apache Kafka 4.4.0 from Maven Central...
    fetched Apache Kafka 4.4.0 in 23.4 s

and on a terminal a live spinner (rich) in place of the start line. Nothing is said of a step that fails: its
error says what went wrong.

One switch for the whole process tree, the environment variable KTS_QUIET=1 (`--quiet` sets it for the command's
duration, `silenced`), because a run's target is obtained inside the pytest process `run` starts. That process
captures its own stderr while fixtures run, so `run` hands it a copy of its stderr to write progress on
(`for_child`: KTS_PROGRESS_FD).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from collections.abc import Iterator, Mapping
from typing import TextIO

__all__ = ["PROGRESS_FD_ENV", "QUIET_ENV", "for_child", "quiet", "silenced", "step"]

QUIET_ENV = "KTS_QUIET"
PROGRESS_FD_ENV = "KTS_PROGRESS_FD"


def quiet() -> bool:
    """Whether progress is silenced (KTS_QUIET set to anything but empty or 0)."""
    return os.environ.get(QUIET_ENV, "") not in ("", "0")


@contextlib.contextmanager
def silenced(on: bool = True) -> Iterator[None]:
    """KTS_QUIET=1 while the block runs (and in every process it starts), when `on`; restored afterwards."""
    if not on:
        yield
        return
    previous = os.environ.get(QUIET_ENV)
    os.environ[QUIET_ENV] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(QUIET_ENV, None)
        else:
            os.environ[QUIET_ENV] = previous


@contextlib.contextmanager
def for_child(env: Mapping[str, str] | None = None) -> Iterator[tuple[dict[str, str], tuple[int, ...]]]:
    """The environment and the file descriptors to pass a child process (subprocess's `env` and `pass_fds`) so
    that its progress lines reach this process's stderr even where the child captures its own (pytest)."""
    child = dict(os.environ if env is None else env)
    try:
        fd = os.dup(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # a stderr with no file behind it (a test's capture)
        yield child, ()
        return
    child[PROGRESS_FD_ENV] = str(fd)
    try:
        yield child, (fd,)
    finally:
        os.close(fd)


# The copy of a parent's stderr this process was handed, taken out of the environment at once: a process this one
# starts inherits the variable but not the descriptor, whose number could name another of its files there.
_handed = os.environ.pop(PROGRESS_FD_ENV, "")


def _stream() -> TextIO:
    """Where progress goes: the stderr a parent handed down (KTS_PROGRESS_FD), else this process's stderr."""
    if _handed.isdigit():
        with contextlib.suppress(OSError, ValueError):
            os.fstat(int(_handed))
            return open(int(_handed), "w", encoding="utf-8", errors="replace", closefd=False)
    return sys.stderr


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError, io.UnsupportedOperation):
        return False


@contextlib.contextmanager
def step(start: str, done: str) -> Iterator[None]:
    """Say `start` (e.g. "fetching Apache Kafka 4.4.0 from Maven Central..."), run the block, then say `done` with
    the seconds taken ("fetched Apache Kafka 4.4.0" -> "fetched Apache Kafka 4.4.0 in 23.4 s"); on a terminal, a
    spinner with `start` while the block runs. Silent under KTS_QUIET, and after a block that raised."""
    if quiet():
        yield
        return
    stream = _stream()
    began = time.monotonic()
    if _is_terminal(stream):
        from rich.console import Console

        with Console(file=stream, highlight=False).status(start):
            yield
    else:
        stream.write(f"{start}\n")
        stream.flush()
        yield
    stream.write(f"{done} in {time.monotonic() - began:.1f} s\n")
    stream.flush()
