"""The reference broker as a managed process: `kafka-conformance serve` run with this
interpreter (`sys.executable -m conformance serve ...`), its brokers and control plane on free loopback
ports, started and stopped by the suite.

Readiness: the child writes a ready file (JSON: bootstrap, control_url, pid, ...) atomically once every
listener and the control plane serve; the parent waits for that file (bounded), checks that it names the
child's PID, and then that the first broker answers ApiVersions. The ports come from the file, since the
child picks them itself (`--port 0 --control-port 0`): nothing can take them between a pick and a bind.

Everything else is `ManagedBroker`'s (conformance/targets/brokers/process.py): the child runs in its own process
group and is stopped by PID on every path (`stop()`, the `with` block, an error or Ctrl-C during start-up,
interpreter exit): SIGTERM (the server exits 0 within a second), SIGKILL after a grace period. A start that
fails raises ManagedProcessError with the last lines of the child's log.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from conformance.targets.brokers.opening import wire_factory
from conformance.targets.brokers.process import (
    DEFAULT_READY_TIMEOUT,
    LOOPBACK,
    ApiVersionsProbeError,
    ManagedBroker,
    ManagedProcessError,
    probe_api_versions,
    unused_log_path,
)
from conformance.targets.routes.wire_adapter.kafka_wire import check_control
from conformance.targets.target import Opened, Opening, Target

MAX_REFERENCE_BROKERS = 64  # kafka-conformance serve --brokers

__all__ = ["DEFAULT_STOP_GRACE", "ReferenceBroker", "open_reference", "reference_command", "start_reference"]

DEFAULT_STOP_GRACE = 5.0  # the server stops within a second of SIGTERM; SIGKILL after this
_POLL_INTERVAL = 0.01


def reference_command(
    *, profile: str, target: str, brokers: int | None, ready_file: Path, host: str = LOOPBACK
) -> list[str]:
    """The argv that serves `target` under `profile` on free ports and writes `ready_file` when serving."""
    argv = [sys.executable, "-m", "conformance", "serve", "--target", target, "--profile", profile]
    if brokers is not None:
        argv += ["--brokers", str(brokers)]
    return [*argv, "--host", host, "--port", "0", "--control-port", "0", "--ready-file", str(ready_file)]


class ReferenceBroker(ManagedBroker):
    """The reference broker in a child process. `bootstrap` ("127.0.0.1:P0,...,127.0.0.1:Pn-1") and
    `control_url` are known once it is ready; `pid`, `log_path` and `stop()` are ManagedBroker's."""

    def __init__(
        self,
        log_dir: str | os.PathLike[str],
        *,
        profile: str,
        target: str = "model",
        brokers: int | None = None,
        ready_timeout: float = DEFAULT_READY_TIMEOUT,
        stop_timeout: float = DEFAULT_STOP_GRACE,
    ) -> None:
        self.profile = profile
        self.target = target
        self.ready_file = Path(log_dir) / f"reference-{uuid.uuid4().hex[:8]}.ready.json"
        self._facts: dict[str, Any] | None = None
        super().__init__(
            "reference",
            lambda port: reference_command(
                profile=profile, target=target, brokers=brokers, ready_file=self.ready_file
            ),
            log_dir,
            ready_timeout=ready_timeout,
            stop_timeout=stop_timeout,
            port_attempts=1,  # the child picks its ports itself: no race to retry
            pick_port=lambda: 0,
            description=f"the reference broker serving {target} ({profile})",
        )

    @property
    def facts(self) -> dict[str, Any]:
        if self._facts is None:
            raise ManagedProcessError(f"the reference broker ({self.target}, {self.profile}) is not ready")
        return self._facts

    @property
    def bootstrap(self) -> str:
        return str(self.facts["bootstrap"])

    @property
    def control_url(self) -> str:
        return str(self.facts["control_url"])

    def _fresh_log_path(self, port: int) -> Path:
        stem = "reference-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{self.target}-{self.profile}")
        return unused_log_path(self._log_dir, stem)

    def _await_ready(self, deadline: float, spawned_at: float, *, last_attempt: bool) -> bool:
        """Wait for the ready file naming our child, then for an ApiVersions answer from its first broker."""
        assert self._proc is not None
        last_problem = "no ready file yet"
        while True:
            if self._proc.poll() is not None:
                raise self._start_failure(f"exited with code {self._proc.returncode} during start-up")
            if time.monotonic() >= deadline:
                raise self._start_failure(f"not ready within {self.ready_timeout:g} s ({last_problem})")
            facts = _read_facts(self.ready_file)
            if facts is not None and facts.get("pid") == self._proc.pid:
                host, _, port = str(facts["bootstrap"]).split(",")[0].rpartition(":")
                try:
                    self._api_versions = probe_api_versions(host, int(port))
                except ApiVersionsProbeError as exc:
                    last_problem = f"broker {host}:{port}: {exc}"
                else:
                    self._facts = facts
                    self._port = int(port)
                    self.startup_seconds = time.monotonic() - spawned_at
                    return True
            time.sleep(_POLL_INTERVAL)

    def _start_failure(self, what: str) -> ManagedProcessError:
        tail = " | ".join(self.log_tail()) or "(empty)"
        return ManagedProcessError(
            f"the reference broker ({self.target}, {self.profile}) {what}; log {self._log_path}: {tail}"
        )

    def stop(self) -> int | None:
        code = super().stop()
        # The server removes its ready file when it exits cleanly; not after SIGKILL.
        if self._proc is not None and self._proc.returncode is not None:
            self.ready_file.unlink(missing_ok=True)
        return code


def _read_facts(path: Path) -> dict[str, Any] | None:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # not written yet (it is replaced atomically, so never half-written)
    return loaded if isinstance(loaded, dict) else None


def start_reference(
    log_dir: str | os.PathLike[str],
    *,
    profile: str,
    target: str = "model",
    brokers: int = 3,
    timeout: float = DEFAULT_READY_TIMEOUT,
) -> ReferenceBroker:
    """Start `kafka-conformance serve` for `target` ("model" or "mutant:<id>") under `profile` with
    `brokers` brokers, and wait (up to `timeout` s) until it serves. Its log goes to `log_dir`. Use the
    result in a `with` block, or call `.stop()`; a failed start raises ManagedProcessError."""
    Path(log_dir).mkdir(parents=True, exist_ok=True)
    broker = ReferenceBroker(log_dir, profile=profile, target=target, brokers=brokers, ready_timeout=timeout)
    broker.start()
    return broker


@contextlib.contextmanager
def open_reference(target: Target, opening: Opening) -> Iterator[Opened]:
    """`--target reference` or `reference:mutant:<id>`: the reference broker serving the model or that mutant
    under the run's profile, with its control plane, stopped on the way out (also on errors)."""
    reference = start_reference(
        opening.log_dir, profile=opening.profile, target=target.served, brokers=opening.brokers or 3
    )
    with reference:
        # The reference broker's own control plane must answer and name the brokers Metadata names.
        check_control(reference.bootstrap, reference.control_url, timeout=opening.timeout)
        yield wire_factory(target, opening, reference.bootstrap, control_url=reference.control_url), [
            Path(reference.log_path)
        ]
