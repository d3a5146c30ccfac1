"""A Kafka-protocol broker as a child process of the suite: started on a free
loopback port, its output in a log file, ready only once it answers a Kafka request, and always
stopped: by `stop()`, by leaving its `with` block (normally or by an exception), by Ctrl-C
during start-up, by the child dying during start-up, and at interpreter exit (`atexit`).

Readiness is "TCP connect succeeded AND an ApiVersions v0 request got a well-formed
ApiVersions answer AND the child is still alive AND the listener is the child's". A listening socket
alone is not enough (Tansu and noida bind before they serve); the last two guard against a port race
handing us somebody else's broker, whether ours died on "address in use" or is still starting (a JVM
binds seconds after its port was picked): the child is started again on a fresh port (ports.py).

Why the ApiVersions probe is hand-rolled with `struct` and the project's standard-library framing
(conformance/wire/framing.py) and not kafka-python: it is the one request every Kafka-protocol broker
must answer at v0 (KIP-35; a broker that does not support the version asked still answers in the v0
layout with UNSUPPORTED_VERSION, KIP-511), its frame is a dozen bytes, and keeping it dependency-free
means a readiness failure can never be a protocol-library problem, and that the managed layer works
before kafka-python is installed.
Every socket operation in it has a timeout: a broker that stops answering fails the run instead of hanging it.

Stopping: the child is started with `start_new_session=True`, so its PID is also its process
group id; `stop()` sends SIGTERM to the whole group, waits up to `stop_timeout` seconds for the
leader without reaping it (so its PID cannot be reused meanwhile), then sends SIGKILL to the
group, which also takes any helper process the binary forked, and finally reaps it.

Not covered: if the Python process itself is killed with SIGKILL (or killed by SIGTERM without
a handler), no Python code runs and the broker, in its own session, survives; CI runners that
kill the whole process tree or cgroup clean it up.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import re
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, BinaryIO, TypeVar

from conformance.progress import step
from conformance.targets.brokers.ports import LOOPBACK, free_loopback_port, listener_pids
from conformance.wire.framing import FrameSizeError, StreamEnded, read_frame, write_frame
from conformance.wire.security import PLAINTEXT, SecuritySettings, TlsError, open_socket

__all__ = [
    "API_VERSIONS_KEY",
    "DEFAULT_READY_TIMEOUT",
    "DEFAULT_STOP_TIMEOUT",
    "LOOPBACK",
    "ApiVersionsProbeError",
    "ManagedBroker",
    "ManagedProcessError",
    "NotReady",
    "free_loopback_port",
    "managed_broker_at",
    "probe_api_versions",
    "process_group_members",
    "start_together",
    "stop_together",
]

_T = TypeVar("_T")

DEFAULT_READY_TIMEOUT = 30.0
DEFAULT_STOP_TIMEOUT = 10.0
API_VERSIONS_KEY = 18

# Probe quickly at first (both brokers serve within ~10 ms), then back off to 50 ms.
_FIRST_POLL_INTERVAL = 0.002
_MAX_POLL_INTERVAL = 0.05
_PROBE_TIMEOUT = 2.0
# Bound on waiting for the rest of the group (helpers the broker forked) after the leader is reaped.
_GROUP_EXIT_TIMEOUT = 2.0
_LOG_TAIL_LINES = 6
_LOG_TAIL_LINE_CHARS = 240
# An ApiVersions v0 answer is 10 bytes + 6 per API: a few hundred bytes for any real broker.
# Anything bigger is not one ("HTTP" read as a size is 1 213 486 160).
_MAX_API_VERSIONS_RESPONSE = 64 * 1024
_CLIENT_ID = b"kafka-conformance-readiness"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# What a binary says when the port picked for it was taken between our bind(0) and its bind.
_PORT_IN_USE = re.compile(r"address (already )?in use|addrinuse|already in use|eaddrinuse", re.IGNORECASE)


# The brokers this process started, by bootstrap address: the pytest plugin only holds the target's
# picklable factory (an address), and looks the broker up here to tell a dead broker from a failing one.
_started: weakref.WeakValueDictionary[str, ManagedBroker] = weakref.WeakValueDictionary()


def unused_log_path(log_dir: Path, stem: str) -> Path:
    """`log_dir/stem.log`, or `stem-2.log`, `stem-3.log`, ... when that exists: an earlier run's log is kept."""
    path = log_dir / f"{stem}.log"
    counter = 1
    while path.exists():
        counter += 1
        path = log_dir / f"{stem}-{counter}.log"
    return path


def managed_broker_at(bootstrap: str) -> ManagedBroker | None:
    """The broker this process started at `bootstrap` ("127.0.0.1:PORT"), or None (not managed here)."""
    return _started.get(bootstrap)


class ManagedProcessError(RuntimeError):
    """A managed broker could not be started (or located); the message is one line naming the
    binary, the port, the cause and the last lines of its log."""


class NotReady(Exception):
    """A readiness probe found the child not serving yet; the message says what it saw."""


class ApiVersionsProbeError(NotReady):
    """The address did not give a well-formed ApiVersions v0 answer (refused, timed out,
    closed, or answered something that is not Kafka)."""


def dies_with_parent(argv: Sequence[str]) -> list[str]:
    """`argv` run so that the kernel kills it when the thread that started it ends (Linux: util-linux's
    `setpriv --pdeathsig KILL`, which sets PR_SET_PDEATHSIG and execs it; the signal survives the exec). A broker
    lives in its own session so that a terminal's Ctrl-C reaches the suite first; without this, a suite killed
    with SIGKILL (a campaign task over its budget, the OOM killer) would leave it running. Where setpriv is
    missing, `argv` as given: stop() and the atexit stop still cover every exit but SIGKILL."""
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    return [setpriv, "--pdeathsig", "KILL", "--", *argv] if setpriv else list(argv)


def probe_api_versions(
    host: str, port: int, timeout: float = _PROBE_TIMEOUT, *, security: SecuritySettings = PLAINTEXT
) -> dict[int, tuple[int, int]]:
    """Send one ApiVersions v0 request and return the broker's {api_key: (min_version, max_version)}.

    Request v0 (header v1): ``size int32 | api_key int16 = 18 | api_version int16 = 0 |
    correlation_id int32 | client_id string`` and an empty body. Response v0: ``size int32 |
    correlation_id int32 | error_code int16 | [api_key int16, min int16, max int16] (int32 count)``.
    An error code is accepted as an answer as long as the frame is well formed: the broker is up
    and speaking Kafka, which is all readiness means. `timeout` bounds every socket operation. A TLS listener
    (`security`) is asked over TLS; a SASL listener answers ApiVersions before authentication, so none is done."""
    correlation_id = 0x4B54  # arbitrary; checked on the way back
    header = struct.pack(">hhih", API_VERSIONS_KEY, 0, correlation_id, len(_CLIENT_ID)) + _CLIENT_ID
    try:
        with open_socket(host, port, timeout=timeout, settings=security) as sock:
            write_frame(sock, header)
            payload = read_frame(sock, min_size=10, max_size=_MAX_API_VERSIONS_RESPONSE)
    except StreamEnded as ended:
        raise ApiVersionsProbeError(f"connection closed after {ended.done} of {ended.expected} bytes") from None
    except FrameSizeError as bad:
        raise ApiVersionsProbeError(f"size prefix {bad.size} is not an ApiVersions v0 answer") from None
    except TlsError as exc:
        raise ApiVersionsProbeError(f"TLS handshake failed: {exc.reason}") from None
    except OSError as exc:  # refused, reset, timed out (socket.timeout is an OSError)
        raise ApiVersionsProbeError(f"{type(exc).__name__}: {exc}") from exc
    size = len(payload)
    got_correlation, _error_code, count = struct.unpack_from(">ihi", payload)
    if got_correlation != correlation_id:
        raise ApiVersionsProbeError(f"correlation id {got_correlation}, expected {correlation_id}")
    if count < 0 or 10 + 6 * count > size:
        raise ApiVersionsProbeError(f"{count} API entries do not fit in a {size}-byte answer")
    versions: dict[int, tuple[int, int]] = {}
    for index in range(count):
        api_key, min_version, max_version = struct.unpack_from(">hhh", payload, 10 + 6 * index)
        versions[api_key] = (min_version, max_version)
    return versions


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold a Ctrl-C that arrives while `Popen` runs until the child's handle is stored.

    Between fork/exec and `Popen` returning, a KeyboardInterrupt would lose the only handle on
    a child that lives in its own session (so the terminal's Ctrl-C does not reach it): it
    would be left behind. Only the main thread may install handlers; elsewhere no SIGINT
    arrives as KeyboardInterrupt anyway."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[FrameType | None] = []

    def remember(_signum: int, frame: FrameType | None) -> None:
        pending.append(frame)

    previous = signal.signal(signal.SIGINT, remember)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if pending:
            if callable(previous):
                previous(signal.SIGINT, pending[0])
            elif previous == signal.SIG_DFL:
                raise KeyboardInterrupt


class ManagedBroker:
    """One broker process on 127.0.0.1, launched by `command(port)`.

    `name` names the binary in messages and log files ("tansu", "noida"). `command` builds the
    argv for a given port, so that a port lost to a race can be retried on a fresh one (up to
    `port_attempts` times, only when the log says "address in use"). `pick_port` chooses ports
    (default `free_loopback_port`). Use it as a context manager, or call `start()` and then
    `stop()`; both stop the whole process group, whatever happens. It is ready once `_probe` says so:
    an ApiVersions answer here; a subclass for another kind of process names its own (the Spark daemons
    of conformance/campaign/standalone.py: their web UI's JSON).
    """

    def __init__(
        self,
        name: str,
        command: Callable[[int], Sequence[str]],
        log_dir: str | os.PathLike[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        ready_timeout: float = DEFAULT_READY_TIMEOUT,
        stop_timeout: float = DEFAULT_STOP_TIMEOUT,
        port_attempts: int = 3,
        pick_port: Callable[[], int] = free_loopback_port,
        description: str = "",
    ) -> None:
        self.name = name
        self.description = description or name
        self._command = command
        self._log_dir = Path(log_dir)
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        self.ready_timeout = ready_timeout
        self.stop_timeout = stop_timeout
        self._port_attempts = max(1, port_attempts)
        self._pick_port = pick_port
        self._proc: subprocess.Popen[bytes] | None = None
        self._stopped: subprocess.Popen[bytes] | None = None  # the child a completed stop() reaped
        self._port: int | None = None
        self._log_path: Path | None = None
        self._api_versions: dict[int, tuple[int, int]] = {}
        self.startup_seconds: float | None = None
        """Seconds from spawning the process that became ready to its first ApiVersions answer."""
        self._deadline = 0.0  # of the start under way (spawn, await_ready)
        self._attempt = 0
        self._spawned_at = 0.0

    # -- what the suite reads -------------------------------------------------------------

    def _started(self, value: _T | None) -> _T:
        """`value`, a field a start sets; ManagedProcessError where the broker has not been started."""
        if value is None:
            raise ManagedProcessError(f"{self.name} has not been started")
        return value

    @property
    def port(self) -> int:
        return self._started(self._port)

    @property
    def bootstrap(self) -> str:
        """The bootstrap address to give a client: "127.0.0.1:PORT"."""
        return f"{LOOPBACK}:{self.port}"

    @property
    def pid(self) -> int:
        """The child's PID, which is also its process group id (start_new_session=True)."""
        return self._started(self._proc).pid

    @property
    def log_path(self) -> Path:
        """The file the child's stdout and stderr go to (attach it to the report)."""
        return self._started(self._log_path)

    @property
    def api_versions(self) -> dict[int, tuple[int, int]]:
        """{api_key: (min, max)} from the ApiVersions v0 answer that made the broker ready."""
        return dict(self._api_versions)

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.returncode

    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def exit_status(self) -> int | None:
        """How the child ended, without reaping it: None while it runs (or if never started), its exit
        code, or minus the signal that killed it (as `returncode`). Not reaping keeps its PID, and so its
        process group id, ours until `stop()` has signalled the group (see the module doc)."""
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return None if proc is None else proc.returncode
        try:
            result: Any = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped behind Popen's back: ask Popen, which then knows
            return proc.poll()
        if result is None:
            return None
        return int(result.si_status) if result.si_code == os.CLD_EXITED else -int(result.si_status)

    def alive(self) -> bool:
        """Whether the child was started and has not exited (it is not reaped by asking)."""
        return self._proc is not None and self.exit_status() is None

    def exit_description(self, when: str = "") -> str:
        """One sentence for a user, e.g. "the tansu broker (pid 123, 127.0.0.1:PORT) exited with signal 9
        (SIGKILL) during the run; its log: PATH (last line: ...)"; `when` goes after the state."""
        status = self.exit_status()
        pid = self._proc.pid if self._proc is not None else None
        where = f"{LOOPBACK}:{self._port}" if self._port is not None else "no port"
        if self._proc is None:
            how = "was not started"
        elif status is None:
            how = "is running"
        elif status < 0:
            how = f"exited with signal {-status} ({_signal_name(-status)})"
        else:
            how = f"exited with code {status}"
        # The log's last line explains an exit of the broker's own (a panic, an abort); after a kill from
        # outside it is whatever the broker logged last, which would read as a cause.
        killed = status is not None and -status in _KILLED_FROM_OUTSIDE
        tail = [] if killed else self.log_tail(1)
        last = f" (last line: {tail[0]})" if tail else ""
        return f"the {self.name} broker (pid {pid}, {where}) {how}{when}; its log: {self._log_path}{last}"

    def log_tail(self, lines: int = _LOG_TAIL_LINES) -> list[str]:
        """The last non-empty lines of the log, without colour codes, each cut to a sane width."""
        if self._log_path is None:
            return []
        try:
            with self._log_path.open("rb") as log:
                log.seek(0, os.SEEK_END)
                log.seek(max(0, log.tell() - 16 * 1024))
                text = log.read().decode("utf-8", errors="replace")
        except OSError:
            return []
        kept = [_ANSI.sub("", line).strip() for line in text.splitlines()]
        kept = [line[:_LOG_TAIL_LINE_CHARS] for line in kept if line]
        return kept[-lines:]

    def __repr__(self) -> str:
        where = f"{LOOPBACK}:{self._port}" if self._port is not None else "not started"
        state = "running" if self.is_running() else f"stopped (rc={self.returncode})"
        return f"<ManagedBroker {self.name} {where} pid={self._proc.pid if self._proc else None} {state}>"

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> ManagedBroker:
        """Spawn the broker and block until it answers ApiVersions, or raise ManagedProcessError.

        On any failure, including KeyboardInterrupt, the child's process group is stopped
        before the exception propagates."""
        with step(f"starting {self.description}...", f"started {self.description}"):
            self.spawn()
            return self.await_ready()

    def spawn(self) -> None:
        """The first half of `start()`: the child spawned on a fresh port, not yet waited for (`start_together`
        spawns several before waiting for any). Stopped again on any failure."""
        if self._proc is not None:
            raise ManagedProcessError(f"{self.name} was already started (pid {self._proc.pid})")
        self._log_dir.mkdir(parents=True, exist_ok=True)
        self._deadline = time.monotonic() + self.ready_timeout
        self._attempt = 1
        try:
            self._spawned_at = self._spawn(self._pick_port())
        except BaseException:
            self.stop()
            raise

    def await_ready(self) -> ManagedBroker:
        """The second half of `start()`: block until the spawned child answers ApiVersions (a fresh port when
        it lost its port to a race), or raise ManagedProcessError; stopped on any failure."""
        try:
            while True:
                last = self._attempt >= self._port_attempts
                if self._await_ready(self._deadline, self._spawned_at, last_attempt=last):
                    _started[self.bootstrap] = self
                    return self
                self.stop()  # "address in use": the port was taken under us; try a fresh one
                self._proc = None
                self._attempt += 1
                self._spawned_at = self._spawn(self._pick_port())
        except BaseException:
            self.stop()
            raise

    def _spawn(self, port: int) -> float:
        self._port = port
        self._log_path = self._fresh_log_path(port)
        command = [str(part) for part in self._command(port)]
        if shutil.which(command[0]) is None:  # said here: behind setpriv it would be an exit code 127
            raise ManagedProcessError(
                f"cannot start {self.name} ({command[0]}) on {LOOPBACK}:{port}: no such executable file"
            )
        argv = dies_with_parent(command)
        # Appending (O_APPEND): a line the suite adds later (start-up figures) is never overwritten by the child.
        with self._log_path.open("ab") as log:
            log.write(f"$ {shlex.join(argv)}\n".encode())
            log.flush()
            with _sigint_deferred():
                try:
                    self._proc = subprocess.Popen(
                        argv,
                        **self._child_streams(log),
                        env=self._env,
                        cwd=self._cwd,
                        start_new_session=True,
                        close_fds=True,
                    )
                except OSError as exc:
                    raise ManagedProcessError(
                        f"cannot start {self.name} ({argv[0]}) on {LOOPBACK}:{port}: {exc}"
                    ) from exc
                atexit.register(self._stop_at_exit)
        return time.monotonic()

    def _child_streams(self, log: BinaryIO) -> dict[str, Any]:
        """Where the child's standard streams go: no input, its output and errors in the log. A child driven
        through its stdin and stdout (conformance/targets/brokers/kfake.py) takes pipes instead."""
        return {"stdin": subprocess.DEVNULL, "stdout": log, "stderr": subprocess.STDOUT}

    def _fresh_log_path(self, port: int) -> Path:
        return unused_log_path(self._log_dir, f"{self.name}-{port}")

    def _await_ready(self, deadline: float, spawned_at: float, *, last_attempt: bool) -> bool:
        """True once ready; False if the child lost its port (it died of "address in use", or another process answered
    on it) and a retry is allowed."""
        assert self._proc is not None and self._port is not None
        last_problem = "no answer yet"
        interval = _FIRST_POLL_INTERVAL
        while True:
            if self._proc.poll() is not None:
                if not last_attempt and _PORT_IN_USE.search(" ".join(self.log_tail(20))):
                    return False
                raise self._failure(f"exited with code {self._proc.returncode} during start-up")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._failure(f"not ready within {self.ready_timeout:g} s (last probe: {last_problem})")
            try:
                self._probe(min(_PROBE_TIMEOUT, remaining))
            except NotReady as exc:
                last_problem = str(exc)
            else:
                if self._proc.poll() is not None:
                    continue  # the answer came from someone else's listener; report our child's death
                stranger = self._stranger_listening()
                if stranger is None:
                    self.startup_seconds = time.monotonic() - spawned_at
                    return True
                if not last_attempt:
                    return False
                raise self._failure(
                    f"was not the one answering: {stranger} listens on the port while {self.name} starts; "
                    "stop that process or run again"
                )
            time.sleep(min(interval, max(0.0, deadline - time.monotonic())))
            interval = min(2 * interval, _MAX_POLL_INTERVAL)

    def _stranger_listening(self) -> str | None:
        """Who, other than the child's process group, holds the listener on our port ("pid 123 (java)"); None when
        the child does or it cannot be told (ports.listener_pids). An answer from another process's listener
        means our child lost the port in the gap between its pick and its bind."""
        assert self._proc is not None
        port = self.port
        if listener_pids(port, among=process_group_members(self._proc.pid)):
            return None
        others = listener_pids(port)
        if not others:
            return None
        pid = min(others)
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            name = "?"
        return f"another process (pid {pid}, {name})"

    def _probe(self, timeout: float) -> None:
        """Return once the child serves on `self.port`, else raise NotReady saying what was seen. A broker serves
        once it answers ApiVersions; another kind of process (a Spark daemon) names its own answer."""
        self._api_versions = probe_api_versions(LOOPBACK, self.port, timeout=timeout)

    def _failure(self, what: str) -> ManagedProcessError:
        tail = " | ".join(self.log_tail()) or "(empty)"
        return ManagedProcessError(f"{self.name} on {LOOPBACK}:{self._port} {what}; log {self._log_path}: {tail}")

    def stop(self) -> int | None:
        """Stop the whole process group: SIGTERM, wait up to `stop_timeout` s, then SIGKILL.

        Idempotent; returns the child's exit code (negative: killed by that signal), or None if
        it was never started."""
        proc = self._proc
        if proc is None:
            return None
        if self._stopped is proc:
            # Reaped by an earlier stop(): its group id is free and may belong to somebody else now.
            return proc.returncode
        if proc.returncode is None:
            _signal_group(proc.pid, signal.SIGTERM)
            if not _wait_exited_unreaped(proc.pid, self.stop_timeout):
                _signal_group(proc.pid, signal.SIGKILL)
                _wait_exited_unreaped(proc.pid, self.stop_timeout)
        # Whatever the leader did, nothing of its group may outlive it (helpers it forked, or a
        # leader that exited on its own): the leader is unreaped here, so the group id is still ours.
        _signal_group(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=self.stop_timeout)
        _wait_group_empty(proc.pid, min(self.stop_timeout, _GROUP_EXIT_TIMEOUT))
        # Only now: a second Ctrl-C that interrupts the stop above leaves the atexit stop armed.
        atexit.unregister(self._stop_at_exit)
        if proc.returncode is not None:
            self._stopped = proc
        return proc.returncode

    def _stop_at_exit(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()

    def __enter__(self) -> ManagedBroker:
        if self._proc is None:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def start_together(brokers: Sequence[ManagedBroker]) -> None:
    """Start `brokers` that become ready only together (the nodes of one KRaft quorum answer once a majority
    of voters is up): every child spawned from this thread first (`dies_with_parent` ties each to the thread
    that spawned it, so no worker thread may), then each waited for. On any failure, Ctrl-C included, every
    one of them is stopped before the exception propagates."""
    names = ", ".join(broker.description for broker in brokers)
    try:
        with step(f"starting {names}...", f"started {names}"):
            for broker in brokers:
                broker.spawn()
            for broker in brokers:
                broker.await_ready()
    except BaseException:
        stop_together(brokers)
        raise


def stop_together(brokers: Sequence[ManagedBroker]) -> None:
    """Stop `brokers` as one cluster: SIGTERM to every group first, so that they shut down side by side (one
    after another, the last nodes of a quorum would wait for voters already gone), then `stop()` on each."""
    for broker in brokers:
        if broker.alive():
            _signal_group(broker.pid, signal.SIGTERM)
    for broker in brokers:
        broker.stop()


_KILLED_FROM_OUTSIDE = {
    signal.SIGKILL: "SIGKILL: killed from outside, e.g. kill -9 or the kernel's OOM killer",
    signal.SIGTERM: "SIGTERM: stopped from outside",
    signal.SIGINT: "SIGINT: interrupted",
    signal.SIGHUP: "SIGHUP: its session ended",
}


def _signal_name(signum: int) -> str:
    if signum in _KILLED_FROM_OUTSIDE:
        return _KILLED_FROM_OUTSIDE[signal.Signals(signum)]
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _wait_group_empty(pgid: int, timeout: float) -> None:
    """Wait until no process is left in group `pgid`, killing again any that is.

    Members other than the leader are not our children (once the leader is gone, init adopts
    them), so SIGKILL only makes them die soon, not before `killpg` returns: without this wait
    `stop()` could return while a helper is still exiting. The group id cannot be reused while
    a member exists, so signalling it here cannot reach an unrelated process."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            return
        except PermissionError:
            return  # a member changed credentials: not ours to kill
        if not _group_has_live_members(pgid) or time.monotonic() >= deadline:
            return
        time.sleep(0.005)


def _group_has_live_members(pgid: int) -> bool:
    """Whether group `pgid` has a member that is not a zombie. A zombie is dead, only waiting
    for its new parent (init, or a container's PID 1 that may reap late) to collect it, and it
    still counts for `killpg`, so on Linux we look in /proc; elsewhere any member counts."""
    if not Path("/proc/self/stat").exists():
        return True
    return bool(process_group_members(pgid))


def process_group_members(pgid: int) -> list[str]:
    """The PIDs (as /proc names them) of the live processes of group `pgid`, zombies left out; none without /proc."""
    members: list[str] = []
    with contextlib.suppress(OSError), os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue  # exited while we looked
            # "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses.
            fields = stat[stat.rindex(")") + 2 :].split()
            if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                members.append(entry.name)
    return members


def _wait_exited_unreaped(pid: int, timeout: float) -> bool:
    """Wait until `pid` has exited without reaping it (WNOWAIT keeps the PID and so the process
    group id reserved for the final SIGKILL). True if it exited or is already gone."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            result: Any = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True  # already reaped
        except OSError as exc:
            if exc.errno == errno.EINTR:
                continue
            raise
        if result is not None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
