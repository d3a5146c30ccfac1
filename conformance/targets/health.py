"""Whether a wire target is still there during a run (a broker killed mid-run gives one clear failure
per remaining test, not a hang and not clause FAILs)."""

from __future__ import annotations

import time

from conformance.targets.implementation import Capability


class TargetLost(Exception):
    """The target stopped answering (or its managed process exited) earlier in the run: this test is not run."""


class TargetHealth:
    """Whether the wire target of this session is still there (a broker killed mid-run gives one
    clear failure per remaining test, not a hang and not clause FAILs).

    A managed broker (tansu, noida) is a child of this process: its exit is seen without any network
    request, before every test and after each one. After a test failed or hit a known failure, any wire
    target is also asked one ApiVersions v0 per bootstrap address (a hung broker, or one this process did
    not start), so a healthy run pays nothing. Once lost, the cause is kept and no test talks to the
    target again (a managed broker is stopped at once)."""

    # A broker that refuses or drops the probe is asked again after these pauses (a restart or a moment of
    # overload is not a loss); a probe that times out has already waited the whole wire timeout.
    RETRY_PAUSES = (0.5, 1.0)

    def __init__(self, name: str, bootstrap: str, *, timeout: float) -> None:
        from conformance.targets.managed.process import managed_broker_at

        self.name = name
        self.bootstrap = bootstrap
        self.timeout = timeout
        self.managed = managed_broker_at(bootstrap)
        self.capabilities: frozenset[Capability] | None = None  # as the last implementation built saw them
        self.lost: str | None = None
        self.noticed_in: str | None = None

    def check(self, nodeid: str, *, probe: bool) -> str | None:
        """The cause if the target is gone (noticed now or earlier), else None. `probe`: also ask it over
        the network (bounded by the wire timeout per address and attempt)."""
        if self.lost is None:
            cause = self._cause(probe)
            if cause is not None:
                self.lost, self.noticed_in = cause, nodeid
                if self.managed is not None:
                    self.managed.stop()  # reap it, and whatever it forked; or stop a hung one
        return self.lost

    def not_run_message(self) -> str:
        return f"TARGET LOST (not run): {self.lost} (noticed in {self.noticed_in})"

    def _cause(self, probe: bool) -> str | None:
        broker = self.managed
        if broker is not None and not broker.alive():
            return broker.exit_description(" during the run")
        if not probe:
            return None
        problem = self._unanswered()
        if problem is None:
            return None
        if broker is not None:
            return (
                f"the {broker.name} broker (pid {broker.pid}, {broker.bootstrap}) stopped answering during the "
                f"run ({problem}), so the suite stopped it; its log: {broker.log_path}"
            )
        return (
            f"{self.name} at {self.bootstrap} stopped answering during the run ({problem}): "
            "is it still running? check it and its log, then run again"
        )

    def _unanswered(self) -> str | None:
        """None if any bootstrap address answers ApiVersions, else what the last attempt met."""
        from conformance.targets.managed.process import ApiVersionsProbeError, probe_api_versions
        from conformance.wire.client import parse_bootstrap

        addresses = parse_bootstrap(self.bootstrap)
        problem = "no address"
        for pause in (0.0, *self.RETRY_PAUSES):
            time.sleep(pause)
            for host, port in addresses:
                started = time.monotonic()
                try:
                    probe_api_versions(host, port, timeout=self.timeout)
                except ApiVersionsProbeError as exc:
                    problem = f"{host}:{port}: {exc}" if len(addresses) > 1 else str(exc)
                    if time.monotonic() - started >= self.timeout * 0.9:
                        return problem + f" (no answer within {self.timeout:g} s)"
                    continue
                return None
        return problem
