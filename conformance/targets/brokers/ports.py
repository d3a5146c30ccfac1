"""Loopback ports for the processes the suite starts, and who listens on one.

A managed broker is told its port on its command line, so the port is picked before the broker binds it, and
for a JVM that is seconds later. A port the kernel picked for bind(0) is the worst choice for that gap: the
kernel hands the same range to every other bind(0) and to every outgoing connection on the machine, so another
process (a reference broker of a parallel tox env, a client's connection) can get it in between, and the
readiness probe then hears *that* process answer. Seen in CI: a Kafka node's port went to a three-broker
reference cluster of a parallel env, which answered ApiVersions while the JVM was still starting, and the run
was pointed at the wrong cluster.

So `free_loopback_port` picks below the kernel's ephemeral range (net.ipv4.ip_local_port_range), where only
explicit binds land, and claims each port it hands out for a few minutes with a file under the temporary folder,
so that two runs of the suite on one machine do not pick the same one. `listener_pids` then tells whose the
listener on a port is (Linux /proc), so that a broker is ready only once the answer came from its own process.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

__all__ = ["LOOPBACK", "free_loopback_port", "listener_pids"]

LOOPBACK = "127.0.0.1"

# The lowest port handed out: above the registered services most machines run on fixed ports.
_LOWEST = 10000
# Below the ephemeral range only when there are this many ports there (else the same range as bind(0)).
_ENOUGH = 2048
# How long a claim keeps a port from another run's pick: longer than any pick-to-bind gap (a JVM under load).
_CLAIM_SECONDS = 300.0
_PICK_ATTEMPTS = 200
_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's st column
# Its own generator: Hypothesis seeds the module's one in a test, and two parallel runs would pick alike.
_RANDOM = random.SystemRandom()


def _ephemeral_range() -> tuple[int, int] | None:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return None


def _candidates() -> range | None:
    """The ports to pick from: below the ephemeral range, or above it; None where neither has room."""
    ephemeral = _ephemeral_range()
    if ephemeral is None:
        return None
    low, high = ephemeral
    if low - _LOWEST >= _ENOUGH:
        return range(_LOWEST, low)
    if 65535 - high >= _ENOUGH:
        return range(high + 1, 65536)
    return None


def _claims() -> Path:
    return Path(tempfile.gettempdir()) / f"kafka-conformance-ports-{os.getuid()}"


def _claim(port: int) -> bool:
    """Claim `port` for the next few minutes; False when a run on this machine claimed it less long ago."""
    folder = _claims()
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / str(port)
    for _ in range(2):
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            return True
        except FileExistsError:
            try:
                if time.time() - path.stat().st_mtime < _CLAIM_SECONDS:
                    return False
                path.unlink()  # an old claim: its broker bound the port long ago, or never will
            except FileNotFoundError:
                pass
    return False


def _binds(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago, picked where neither bind(0) nor an outgoing connection
    can take it before the broker binds it, and claimed against another run's pick (see the module doc).

    The port is still released before the broker binds it, so a process binding that very port on purpose could
    take it in between: `ManagedBroker` retries on a new port when the child reports "address in use", and is
    ready only once the listener is its own. Where /proc does not give the ephemeral range, the kernel's pick."""
    candidates = _candidates()
    if candidates is not None:
        for _ in range(_PICK_ATTEMPTS):
            port = _RANDOM.choice(candidates)
            if _claim(port) and _binds(port):
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        picked: int = sock.getsockname()[1]
        return picked


def _listening_inodes(port: int) -> set[str]:
    """The socket inodes listening on `port` (any local address), from /proc/net/tcp and tcp6."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != _LISTEN:
                continue
            with contextlib.suppress(ValueError):
                if int(fields[1].rpartition(":")[2], 16) == port:
                    inodes.add(fields[9])
    return inodes


def _holding(pids: Iterable[str], inodes: set[str]) -> set[int]:
    links = {f"socket:[{inode}]" for inode in inodes}
    found: set[int] = set()
    for pid in pids:
        try:
            fds = os.scandir(f"/proc/{pid}/fd")
        except OSError:  # gone, or not ours to read
            continue
        with fds:
            for fd in fds:
                with contextlib.suppress(OSError):
                    if os.readlink(fd.path) in links:
                        found.add(int(pid))
                        break
    return found


def listener_pids(port: int, *, among: Iterable[str] | None = None) -> set[int] | None:
    """The PIDs holding a socket that listens on `port`: looked for `among` the given PIDs, or in every process
    this user may read. None where it cannot be told (no /proc, or no listener in its tables); an empty set when
    there is a listener but no readable process holds it."""
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    if among is None:
        with os.scandir("/proc") as entries:
            among = [entry.name for entry in entries if entry.name.isdigit()]
    return _holding(among, inodes)
