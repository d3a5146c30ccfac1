"""Whether a wire target is there: before a run, whether what answers at a bootstrap address is a Kafka broker at
all (an HTTP server is named as one in a second or two, not after the wire timeout); during a run, whether it is
still there (a broker killed mid-run gives one clear failure per remaining test, not a hang and not clause FAILs)."""

from __future__ import annotations

import socket
import time

from conformance.judging.capabilities import Capability
from conformance.targets.brokers.process import ApiVersionsProbeError, managed_broker_at, probe_api_versions
from conformance.wire.client import parse_bootstrap
from conformance.wire.connection import TLS_ALERT
from conformance.wire.security import PLAINTEXT, SecuritySettings

# A Kafka broker answers ApiVersions v0 in milliseconds. An address that has not answered by then is asked once
# in HTTP: a web server waits for the end of a request line that a Kafka frame never sends, so it stays silent to
# ApiVersions and answers the HTTP request at once. A Kafka broker closes the connection on the HTTP request
# (its first four bytes read as a frame size far above socket.request.max.bytes) and never answers it.
QUICK_PROBE_SECONDS = 1.0
_HTTP_REQUEST = b"GET / HTTP/1.0\r\n\r\n"
_FIX = "pass the broker's address with --bootstrap-servers HOST:PORT"


def not_a_kafka_broker(bootstrap: str, *, timeout: float, security: SecuritySettings = PLAINTEXT) -> str | None:
    """One line naming an address of `bootstrap` that answers, but not as a Kafka broker (an HTTP server, a TLS
    listener, another protocol), and the fix; None when an address answers ApiVersions, or when nothing there
    answers at all (refused, silent, a slow broker): the wire client's own check then says which, in its time.
    Over TLS (`security`) there is nothing to ask before the handshake: the wire client's TLS errors say it."""
    if security.tls:
        return None
    seconds = min(timeout, QUICK_PROBE_SECONDS)
    found: str | None = None
    for host, port in parse_bootstrap(bootstrap):
        try:
            probe_api_versions(host, port, timeout=seconds)
        except ApiVersionsProbeError:
            answer = _answer_to_http(host, port, timeout=seconds) if found is None else None
            if answer:
                found = _not_kafka_line(f"[{host}]:{port}" if ":" in host else f"{host}:{port}", answer)
            continue
        return None
    return found


def _answer_to_http(host: str, port: int, *, timeout: float) -> bytes:
    """The first bytes `host:port` sends back to an HTTP request within `timeout` (b"" for none)."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(_HTTP_REQUEST)
            return sock.recv(256)
    except OSError:  # refused, reset, timed out: nothing to tell
        return b""


def _not_kafka_line(address: str, answer: bytes) -> str:
    if answer[:2] == TLS_ALERT:
        return (
            f"{address} is a TLS listener (it answered with a TLS alert) and the connection was PLAINTEXT: set "
            "--security-protocol SSL or SASL_SSL (security.protocol), with --ssl-ca-file for a private CA"
        )
    first_line = answer.split(b"\n", 1)[0].strip().decode("utf-8", errors="replace")[:60]
    if first_line.startswith("HTTP/"):
        return f"{address} is not a Kafka broker (it answered HTTP: {first_line!r}): {_FIX}"
    return f"{address} is not a Kafka broker (it answered {first_line!r}, not a Kafka frame): {_FIX}"


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

    def __init__(self, name: str, bootstrap: str, *, timeout: float, security: SecuritySettings = PLAINTEXT) -> None:
        self.name = name
        self.security = security  # a TLS listener is probed over TLS
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
        addresses = parse_bootstrap(self.bootstrap)
        problem = "no address"
        for pause in (0.0, *self.RETRY_PAUSES):
            time.sleep(pause)
            for host, port in addresses:
                started = time.monotonic()
                try:
                    probe_api_versions(host, port, timeout=self.timeout, security=self.security)
                except ApiVersionsProbeError as exc:
                    problem = f"{host}:{port}: {exc}" if len(addresses) > 1 else str(exc)
                    if time.monotonic() - started >= self.timeout * 0.9:
                        return problem + f" (no answer within {self.timeout:g} s)"
                    continue
                return None
        return problem
