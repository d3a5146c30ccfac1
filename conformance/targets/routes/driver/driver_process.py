"""A driver process and its JSON lines (docs/driver-protocol.md): started in its own process group, its stderr to
a log file, one request at a time, every answer checked against protocol.schema.json, stopped by its PID's group
on every path.

Two failures, kept apart because they mean different things:
- `DriverAnswered`: the driver answered an `error` value (the library failed, refused, or cannot do it): the
  adapters turn it into the client's or codec's own outcome;
- `DriverBroken`: the driver itself is broken (it died, did not answer in time, wrote something that is not the
  protocol): one line naming the driver, what happened, its log and the fix; a run stops with exit 2 on it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, NoReturn

from conformance.errors import TargetError
from conformance.targets.routes.driver import PROTOCOL_VERSION, SCHEMA_PATH
from conformance.targets.routes.driver.driver_builds import driver_command, driver_title
from conformance.targets.routes.driver.driver_values import CODEC_OF

# How long a driver has beyond the protocol's bound (twice timeout_ms) to answer: a driver's own start-up (a JVM,
# node loading a library) and the suite's scheduling on a busy machine.
ANSWER_SLACK = 5.0
STOP_WAIT = 3.0
_LINE_LIMIT = 64 * 1024 * 1024  # an answer is a few batches at most; a runaway driver is cut off
_EOF = object()


class DriverBroken(TargetError):
    """The driver broke the protocol, died or hung: one line naming it, what happened, its log and the fix."""


class DriverAnswered(Exception):
    """The driver answered an error value (docs/driver-protocol.md "Errors are values")."""

    def __init__(self, op: str, error: Mapping[str, Any]) -> None:
        self.op = op
        self.type = str(error.get("type", ""))
        self.kind = str(error.get("kind", ""))
        self.message = str(error.get("message", ""))
        self.delivered: list[Mapping[str, Any]] = list(error.get("delivered", []))
        super().__init__(f"{op}: {self.type} {self.kind}: {self.message}".strip())


def broken_driver_behind(exc: BaseException | None, depth: int = 0) -> DriverBroken | None:
    """The DriverBroken behind `exc`: itself, one inside the group Hypothesis raises for a flaky or multiple
    failure, or its cause."""
    if exc is None or depth > 8:
        return None
    if isinstance(exc, DriverBroken):
        return exc
    inner = list(exc.exceptions) if isinstance(exc, BaseExceptionGroup) else []
    for candidate in (*inner, exc.__cause__, exc.__context__):
        found = broken_driver_behind(candidate, depth + 1)
        if found is not None:
            return found
    return None


@cache
def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


@cache
def _validator(pointer: str) -> Any:
    """A validator for the schema's $defs at `pointer` ("answer", "ok/send", "request/hello"), references resolved
    in the whole document."""
    from jsonschema import Draft202012Validator

    schema = _schema()
    return Draft202012Validator({"$ref": f"#/$defs/{pointer}", "$defs": schema["$defs"]})


def schema_problem(pointer: str, value: Any) -> str | None:
    """The first way `value` breaks the protocol's schema at `pointer`, as one line, or None."""
    errors = sorted(_validator(pointer).iter_errors(value), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    first = errors[0]
    where = "/".join(str(p) for p in first.absolute_path) or "(the object)"
    return f"{where}: {first.message[:300]}"


class DriverProcess:
    """One running driver: `request(op, **fields)` sends a request and returns the `ok` object of its answer.

    `name` names the driver in messages ("the franz-go driver"), `target` the target it serves (for the fix: the
    self-test's command); `argv` is its command; its stderr goes to `log_path`.
    `timeout` (seconds) is the `timeout_ms` it is told in hello; an answer is awaited twice that plus
    ANSWER_SLACK."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        target: str,
        log_path: Path,
        timeout: float,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.target = target
        self.argv = list(argv)
        self.log_path = log_path
        self.timeout = timeout
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        self._proc: subprocess.Popen[bytes] | None = None
        self._answers: queue.Queue[object] = queue.Queue()
        self._next_id = 0
        self.hello: dict[str, Any] = {}
        self.broken: str | None = None

    # -- start and stop

    def start(self, role: str, *, bootstrap: str | None = None) -> dict[str, Any]:
        """Spawn the driver and say hello; the hello answer (what it is, what it can do). A DriverBroken if it does
        not start or does not answer hello as the protocol says; a DriverAnswered for an error value."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        try:
            self._proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=self._env,
                cwd=self._cwd, start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            raise DriverBroken(
                f"{self.name} could not be started ({self.argv[0]}: {exc.strerror or exc}): "
                "check that the driver's command exists and is executable"
            ) from None
        finally:
            log.close()
        threading.Thread(target=self._read, name=f"{self.name} stdout", daemon=True).start()
        fields: dict[str, Any] = {"protocol": PROTOCOL_VERSION, "role": role, "timeout_ms": int(self.timeout * 1000)}
        if bootstrap is not None:
            fields["bootstrap"] = bootstrap
        try:
            hello = self.request("hello", **fields)
        except BaseException:
            self.stop()
            raise
        problem = schema_problem("ok/hello", hello)
        if problem is None and hello.get("protocol") != PROTOCOL_VERSION:
            problem = f"it speaks protocol {hello.get('protocol')}, the suite speaks {PROTOCOL_VERSION}"
        if problem is not None:
            self.stop()
            raise self._broken(f"answered hello against the protocol ({problem})")
        self.hello = hello
        return hello

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def stop(self, *, say_close: bool = True) -> None:
        """Ask the driver to close (when it is healthy), end its input, and stop its process group: waited for,
        then SIGTERM, then SIGKILL. Safe to call twice."""
        proc = self._proc
        if proc is None:
            return
        if say_close and self.broken is None and proc.poll() is None and self.hello:
            with contextlib.suppress(DriverBroken, DriverAnswered):
                self.request("close")
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=STOP_WAIT)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)  # whatever it forked, too (it leads its own session)
            except (ProcessLookupError, PermissionError):
                break
            try:
                proc.wait(timeout=STOP_WAIT)
                if sig is signal.SIGTERM:
                    os.killpg(proc.pid, signal.SIGKILL)  # a child it left behind in the group
            except subprocess.TimeoutExpired:
                continue
            except (ProcessLookupError, PermissionError):
                break
        if proc.poll() is None:
            proc.wait(timeout=STOP_WAIT)
        if proc.stdout is not None:
            proc.stdout.close()
        self._proc = None

    def __enter__(self) -> DriverProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- one request, one answer

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send `op` with `fields`, return the `ok` object of the answer (checked against the schema). A
        DriverAnswered for an error value; a DriverBroken if the driver died, hung or broke the protocol."""
        if self.broken is not None:
            raise DriverBroken(self.broken)
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise self._broken(f"was asked {op} before it was started")
        request_id = self._next_id
        self._next_id += 1
        line = json.dumps({"id": request_id, "op": op, **fields}, separators=(",", ":")) + "\n"
        try:
            proc.stdin.write(line.encode("utf-8"))
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._broken(f"stopped reading its input before {op}{self._exit_text()}") from None
        answer = self._await(op, time.monotonic() + 2 * self.timeout + ANSWER_SLACK)
        problem = schema_problem("answer", answer)
        if problem is not None:
            raise self._broken(f"answered {op} against the protocol ({problem}): {_clip(answer)}")
        if answer["id"] != request_id:
            raise self._broken(f"answered {op} with id {answer['id']}, not {request_id}")
        if "error" in answer:
            error = answer["error"]
            if error.get("type") == "bad-request":
                raise self._broken(
                    f"did not understand {op} (bad-request: {error.get('message', '')}); it and the suite disagree "
                    f"on protocol {PROTOCOL_VERSION}"
                )
            raise DriverAnswered(op, error)
        ok: dict[str, Any] = answer["ok"]
        pointer = f"ok/{op}"
        if pointer.removeprefix("ok/") in _schema()["$defs"]["ok"]:
            problem = schema_problem(pointer, ok)
            if problem is not None:
                raise self._broken(f"answered {op} against the protocol ({problem}): {_clip(ok)}")
        return ok

    def send_raw(self, line: bytes) -> dict[str, Any]:
        """Send one raw line (the self-test's malformed input) and return the next answer, unchecked."""
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise self._broken("was sent a line before it was started")
        try:
            proc.stdin.write(line)
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._broken(f"stopped reading its input{self._exit_text()}") from None
        answer = self._await("a malformed line", time.monotonic() + 2 * self.timeout + ANSWER_SLACK)
        self._next_id = max(self._next_id, int(answer.get("id", 0)) + 1 if isinstance(answer.get("id"), int) else 0)
        return answer

    def close_input_and_wait(self, seconds: float) -> int | None:
        """End the driver's input (no close request) and wait up to `seconds` for it to exit; its status, or None
        if it is still running (the self-test's end-of-input check)."""
        proc = self._proc
        if proc is None:
            return None
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            return proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return None

    def _await(self, op: str, deadline: float) -> dict[str, Any]:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._broken(f"did not answer {op} within {2 * self.timeout + ANSWER_SLACK:g} s", stop=True)
            try:
                item = self._answers.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if item is _EOF:
                self._wait_exit(1.0)
                raise self._broken(f"exited before answering {op}{self._exit_text()}")
            if isinstance(item, str):
                raise self._broken(f"wrote a line that is not a JSON object when asked {op}: {item[:200]!r}")
            assert isinstance(item, dict)
            return item

    def _read(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        for raw in iter(lambda: proc.stdout.readline(_LINE_LIMIT), b""):  # type: ignore[union-attr]
            text = raw.decode("utf-8", errors="replace").strip()
            if not text:
                continue
            try:
                value = json.loads(text)
            except ValueError:
                self._answers.put(text)
                continue
            self._answers.put(value if isinstance(value, dict) else text)
        self._answers.put(_EOF)

    def _wait_exit(self, seconds: float) -> None:
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=seconds)

    def _exit_text(self) -> str:
        proc = self._proc
        if proc is None or proc.poll() is None:
            return ""
        code = proc.returncode
        how = f"signal {-code}" if code < 0 else f"status {code}"
        return f" (it exited with {how})"

    def _broken(self, what: str, *, stop: bool = False) -> DriverBroken:
        self.broken = (
            f"{self.name} (pid {self.pid}) {what}; its log: {self.log_path}. A driver must answer every "
            f"request as docs/driver-protocol.md says: `kafka-conformance check-driver --target {self.target}` "
            "checks it"
        )
        if stop:
            self.stop(say_close=False)
        return DriverBroken(self.broken)


def _clip(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"))
    return text if len(text) <= 300 else text[:300] + "..."


_serial = itertools.count()


def driver_log(log_dir: Path, library: str, role: str) -> Path:
    """A log file of its own for each driver process this one starts."""
    return log_dir / f"driver-{role}-{library}-{os.getpid()}-{next(_serial)}.log"


class DriverAdapter:
    """What the client and codec adapters over a driver share: the driver of `library` (built first if it is not
    in the cache) started in the subclass's `role`, what its hello declared (its version, its capabilities in the
    role's vocabulary `known`, the compression codecs it writes), each request's error answer raised as the role's
    exception (`failed`), and the stop. `bootstrap` is the client role's broker; the codec role has none."""

    role: ClassVar[str]
    known: ClassVar[type[Enum]]

    def __init__(
        self,
        library: str,
        bootstrap: str | None = None,
        *,
        timeout: float = 10.0,
        version: str | None = None,
        path: str | None = None,
        log_dir: Path = Path("reports/out/logs"),
        target: str = "",
    ) -> None:
        self.name = library
        self.timeout = timeout
        self.process = DriverProcess(
            driver_title(library), driver_command(library, version=version, path=path),
            target=target or f"{self.role}:{library}", timeout=timeout,
            log_path=driver_log(log_dir, library, self.role),
        )  # fmt: skip
        self.hello = self.process.start(self.role, bootstrap=bootstrap)
        self.version = str(self.hello["version"])
        self.language = str(self.hello["language"])
        by_name = {c.value: c for c in self.known}
        self.capabilities = frozenset(by_name[c] for c in self.hello["capabilities"] if c in by_name)
        self.codecs = frozenset(CODEC_OF[c] for c in self.hello["codecs"])

    def _ask(self, op: str, **fields: Any) -> dict[str, Any]:
        try:
            return self.process.request(op, **fields)
        except DriverAnswered as answered:
            self.failed(answered)

    def failed(self, answered: DriverAnswered) -> NoReturn:
        """Raise the role's exception for an error answer (refused, unsupported, failed)."""
        raise NotImplementedError

    def close(self) -> None:
        self.process.stop()
