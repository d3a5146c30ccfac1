"""The `noida` managed target: the Kafka listener of the `noida-db` binary
from the PyPI wheel `noida-db`, alone (``--only kafka``) on a free loopback port.

What the broker needs (noida-db 0.2.3; Rust, built with the `kafka-protocol` 0.18 crate):

- Command: ``noida-db start --data-dir D --host 127.0.0.1 --only kafka --kafka-port PORT``.
  `start` runs in the foreground (`up` would daemonise, which we must not: we could not stop
  it by PID). `--only kafka` keeps it from opening Postgres, MySQL, Redis, ... ports.
- Data directory: required in practice (default ./.noida-db in the working directory). noida
  keeps topics in memory and saves a snapshot, D/kafka.json, on shutdown, which it reloads on the
  next start with the same D: a fresh directory is an empty cluster, which is what the suite
  wants, so `start_noida` makes one under `log_dir` unless told otherwise. It also writes
  D/noida.control.json and listens on a second, random loopback port: its control endpoint
  (for `noida-db status/stop/...`), which the suite does not use.
- No environment variables, cluster id or storage flags.
- Start-up: from spawn to the first ApiVersions answer, 3-11 ms on the development machine
  (medians of 5 starts: 4.7 and 7.1 ms in two runs), 0.4 s for the very first, cold start.
- Stop: on SIGTERM it saves its snapshot and exits with code 0, about 50 ms here.
- Quirks: the 0.2.3 Linux binary asks for a weak GLIBC_2.39 symbol and prints a warning line
  about it on glibc 2.36 (Debian 12), then runs normally. When its Kafka port is taken it exits
  with code 1: "error: kafka: port N is already in use".

We run the binary itself (noida_db/noida-db in the package directory), not the `noida-db`
console script: that script is a Python wrapper around `subprocess.call`, one more process in
the way of signals (stopping the process group would still reach both).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import stat
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path

from conformance.extras import install_hint
from conformance.targets.brokers.opening import check_found, open_started
from conformance.targets.brokers.process import DEFAULT_READY_TIMEOUT, LOOPBACK, ManagedBroker, ManagedProcessError
from conformance.targets.target import Opened, Opening, Target

__all__ = [
    "NOIDA_DISTRIBUTION",
    "check_noida",
    "find_noida_binary",
    "noida_command",
    "noida_version",
    "open_noida",
    "start_noida",
]

NOIDA_DISTRIBUTION = "noida-db"
_PACKAGE = "noida_db"
_BINARY = "noida-db.exe" if os.name == "nt" else "noida-db"
_FIX = f"{install_hint('targets')} (or pip install {NOIDA_DISTRIBUTION})"


def find_noida_binary() -> Path:
    """The `noida-db` executable inside the installed noida-db wheel (noida_db/noida-db).

    If the package directory has no binary, a `noida-db` on PATH that is not the Python console
    script is accepted. Raises ManagedProcessError naming the fix when neither exists."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        for package_dir in spec.submodule_search_locations:
            candidate = Path(package_dir) / _BINARY
            if candidate.is_file():
                if not os.access(candidate, os.X_OK):
                    _make_executable(candidate)
                return candidate
    on_path = shutil.which(_BINARY)
    if on_path is not None and not _is_python_script(Path(on_path)):
        return Path(on_path)
    missing = "no noida_db package" if spec is None else "the package has no noida-db binary"
    raise ManagedProcessError(f"the noida-db broker is not installed ({missing}): {_FIX}")


def check_noida(target: Target, opening: Opening) -> None:
    """Before anything starts: the noida-db binary is installed (the targets extra), else one line naming the fix."""
    check_found(find_noida_binary, ManagedProcessError)


def _make_executable(binary: Path) -> None:
    # The package's own console script does the same chmod before running it: a wheel may lose
    # the executable bit on the way.
    try:
        binary.chmod(binary.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    except OSError as exc:
        raise ManagedProcessError(f"{binary} is not executable and cannot be made so ({exc}): {_FIX}") from exc


def _is_python_script(path: Path) -> bool:
    try:
        with path.open("rb") as script:
            return script.read(2) == b"#!" and b"python" in script.readline()
    except OSError:
        return False


def noida_version() -> str:
    """The installed version for the report, e.g. "noida-db 0.2.3"; "" if not installed."""
    try:
        return f"{NOIDA_DISTRIBUTION} {importlib.metadata.version(NOIDA_DISTRIBUTION)}"
    except importlib.metadata.PackageNotFoundError:
        return ""


def noida_command(binary: Path, port: int, data_dir: Path) -> list[str]:
    """The argv of a foreground noida-db serving only Kafka on 127.0.0.1:port."""
    return [
        str(binary),
        "start",
        "--data-dir",
        str(data_dir),
        "--host",
        LOOPBACK,
        "--only",
        "kafka",
        "--kafka-port",
        str(port),
    ]


def start_noida(
    log_dir: str | os.PathLike[str],
    data_dir: str | os.PathLike[str] | None = None,
    *,
    ready_timeout: float = DEFAULT_READY_TIMEOUT,
) -> ManagedBroker:
    """Start noida-db's Kafka listener on a free loopback port and wait until it answers
    ApiVersions. `data_dir` holds its snapshot: pass a directory to keep topics across restarts,
    or None for a fresh, empty one under `log_dir`. The log goes to `log_dir`/noida-PORT.log.
    Stop it with `.stop()` or use the result in a `with` block (it is already started on entry)."""
    binary = find_noida_binary()
    Path(log_dir).mkdir(parents=True, exist_ok=True)
    if data_dir is None:
        data = Path(tempfile.mkdtemp(prefix="noida-data-", dir=log_dir))
    else:
        data = Path(data_dir)
        data.mkdir(parents=True, exist_ok=True)
    broker = ManagedBroker(
        "noida",
        lambda port: noida_command(binary, port, data),
        log_dir,
        cwd=data,  # so that nothing it writes relative to its working directory lands in ours
        ready_timeout=ready_timeout,
        description=noida_version() or "noida-db",
    )
    return broker.start()


def open_noida(target: Target, opening: Opening) -> AbstractContextManager[Opened]:
    """`--target noida`: noida-db with a fresh data directory under the logs, stopped on the way out."""
    return open_started(lambda log_dir: start_noida(log_dir, log_dir / "noida-data"), target, opening)
