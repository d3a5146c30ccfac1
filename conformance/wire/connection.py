"""One TCP connection to one Kafka-protocol broker (every socket
operation has a timeout, an unreachable or non-Kafka address gives a one-line error naming the fix).

Encoding is kafka-python's (`kafka.protocol`, the generated Request/Response classes of its 3.x
JSON-schema layer): a request is ``size int32 | header | body``; the response is
``size int32 | correlation_id int32 | [tagged fields] | body``. We read the size prefix ourselves
(conformance/wire/framing.py, within the round trip's deadline), check the correlation id ourselves (so
that a garbled answer is reported as such, not as a decode crash deep inside kafka-python), then let
kafka-python decode the rest at the version we asked for.

Every failure of the transport (refused, timed out, reset, closed, garbage, undecodable) raises
`WireError` and closes the socket: the next `send` reconnects. A connection to a secured listener
(conformance.wire.security) negotiates TLS and authenticates with SASL (conformance.wire.sasl) each time it
connects, before its first request; those round trips are kept out of the exchange history, whose bytes a report
shows (a PLAIN token holds the password). The last exchanges (raw request and
response bytes with their wall-clock bracket) are kept in a bounded deque for the report.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from conformance.wire.framing import (
    FRAME,
    SIZE_PREFIX,
    FrameSizeError,
    FrameTimeout,
    StreamEnded,
    read_frame,
    send_all,
)
from conformance.wire.sasl import SaslError, authenticate
from conformance.wire.security import PLAINTEXT, SecuritySettings, TlsError, open_socket

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_RESPONSE_BYTES",
    "TLS_ALERT",
    "Exchange",
    "KafkaConnection",
    "WireError",
    "api_name",
]

DEFAULT_TIMEOUT = 10.0
# A size prefix above this is not a Kafka answer: "HTTP" reads as 1 213 486 160, "SSH-" as
# 1 397 966 893. Real fetch responses are bounded by the max_bytes the suite asks for.
MAX_RESPONSE_BYTES = 256 * 1024 * 1024
_SIZE = struct.Struct(">i")
# What a TLS listener sends back to bytes that are not a TLS handshake: an alert record (content type 21, 3.x).
TLS_ALERT = b"\x15\x03"
# What a read's part is called in the errors of a round trip.
_RESPONSE_PART = {SIZE_PREFIX: "the response size", FRAME: "the response"}

_API_NAMES = {
    0: "Produce",
    1: "Fetch",
    2: "ListOffsets",
    3: "Metadata",
    17: "SaslHandshake",
    18: "ApiVersions",
    19: "CreateTopics",
    20: "DeleteTopics",
    32: "DescribeConfigs",
    33: "AlterConfigs",
    36: "SaslAuthenticate",
    43: "ElectLeaders",
    44: "IncrementalAlterConfigs",
}


def api_name(api_key: int) -> str:
    """"Produce", "Fetch", ... or "api key N" for one this module does not name."""
    return _API_NAMES.get(api_key, f"api key {api_key}")


class WireError(Exception):
    """The broker could not be reached, closed the connection, timed out or answered something
    that is not the Kafka protocol. `str(error)` is one line that names the address and the fix.
    `kind` says which: "unreachable" (nothing sent), "timeout", "closed", "not-kafka" (garbage,
    absurd size, wrong correlation id), "undecodable" (a Kafka-looking frame that does not decode at
    the version asked), "protocol" (a decoded answer that breaks the protocol), "address" (a
    malformed bootstrap string), "tls" (the TLS handshake failed: the certificate did not verify, or
    the listener does not speak TLS) or "auth" (SASL authentication failed). "tls" and "auth" are the
    settings' to fix: no other address or version fixes them."""

    def __init__(self, message: str, *, address: str = "", kind: str = "protocol") -> None:
        super().__init__(message)
        self.message = message
        self.address = address
        self.kind = kind


@dataclass(frozen=True)
class Exchange:
    """One request/response round trip, its bytes kept for the report (what went over the wire, for
    a counterexample a stranger can check). `response_bytes` is b"" when none came (acks=0, or the
    connection failed before the answer); `seconds` is the monotonic round-trip time and
    `wall_start_ms`/`wall_end_ms` bracket the exchange on the local wall clock, so that a model can
    accept any broker `now` inside the bracket."""

    api_key: int
    api_version: int
    request_bytes: bytes
    response_bytes: bytes
    seconds: float
    address: str = ""
    correlation_id: int = 0
    wall_start_ms: int = 0
    wall_end_ms: int = 0
    error: str | None = None


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _forget(*_exchange: object) -> None:
    """Where a round trip is not recorded (the SASL exchange)."""


def _fmt_seconds(value: float) -> str:
    return f"{value:g} s"


class KafkaConnection:
    """A blocking connection to one broker. Not thread-safe: one request in flight at a time.

    `send(request, version)` encodes `request` (a kafka-python ``ApiMessage``) at `version`, sends
    it, reads and checks the answer and returns the decoded response object (or None when the
    request expects no response, i.e. Produce with acks=0)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        client_id: str = "kafka-timestamp-conformance",
        history: int = 64,
        security: SecuritySettings = PLAINTEXT,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        self.host = host
        self.port = port
        self.timeout = timeout
        self.client_id = client_id
        self.security = security
        self.exchanges: deque[Exchange] = deque(maxlen=history)
        self._sock: socket.socket | None = None
        self._correlation_id = 0
        # Correlation ids of requests sent expecting no answer (Produce acks=0). Kafka never answers
        # them, but Tansu 0.6.0 does: such an answer is skipped when it turns up before ours.
        self._unanswered: deque[int] = deque(maxlen=256)

    # ------------------------------------------------------------------------------------------
    # Lifecycle

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def connect(self) -> None:
        """Open the connection if it is not open: TCP, TLS and SASL as the security settings ask, each step
        bounded by `timeout`."""
        if self._sock is not None:
            return
        try:
            sock = open_socket(self.host, self.port, timeout=self.timeout, settings=self.security)
        except TlsError as exc:
            raise self._tls_failed(exc) from None
        except TimeoutError:
            raise self._unreachable("no answer") from None
        except OSError as exc:
            raise self._unreachable(exc.strerror or str(exc)) from None
        self._sock = sock
        if self.security.sasl:
            try:
                authenticate(self._unrecorded, self.security, self.address)
            except SaslError as exc:
                self.close()
                raise WireError(str(exc), address=self.address, kind="auth" if exc.kind == "auth" else "protocol") \
                    from None
            except WireError:
                self.close()
                raise

    def close(self) -> None:
        sock, self._sock = self._sock, None
        self._unanswered.clear()
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()

    def __enter__(self) -> KafkaConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "connected" if self._sock is not None else "closed"
        return f"KafkaConnection({self.address}, {state})"

    # ------------------------------------------------------------------------------------------
    # Round trips

    def send(self, request: Any, version: int) -> Any:
        """Send `request` at `version` and return the decoded response (None if the request
        expects none). Raises WireError on any transport failure (and closes the connection)."""
        return self._round_trip(request, version, record=True)

    def _unrecorded(self, request: Any, version: int) -> Any:
        """A round trip of the SASL exchange on the open socket, kept out of the history (its bytes are secret)."""
        return self._round_trip(request, version, record=False)

    def _round_trip(self, request: Any, version: int, *, record: bool) -> Any:
        api_key = int(request.API_KEY)
        self._correlation_id = (self._correlation_id + 1) & 0x7FFFFFFF
        correlation_id = self._correlation_id
        request.API_VERSION = version
        request.with_header(correlation_id=correlation_id, client_id=self.client_id)
        payload = bytes(request.encode(header=True, framed=True))
        expect_response = bool(request.expect_response())
        if record:
            self.connect()
        keep = self._record if record else _forget
        wall_start = _now_ms()
        started = time.monotonic()
        response = b""
        try:
            self._send_all(payload, api_key, version, started)
            if not expect_response:
                self._unanswered.append(correlation_id)
            while expect_response:
                response = self._read_frame(api_key, version, started)
                (got,) = _SIZE.unpack_from(response, 0)
                if got == correlation_id or got not in self._unanswered:
                    break
                self._unanswered.remove(got)
                keep(api_key, version, b"", response, started, wall_start, got,
                     f"an answer to request {got}, which expected none (acks=0), skipped")
        except WireError as exc:
            self.close()
            keep(api_key, version, payload, response, started, wall_start, correlation_id, exc.message)
            raise
        keep(api_key, version, payload, response, started, wall_start, correlation_id, None)
        if not expect_response:
            return None
        return self._decode(request, version, response, correlation_id)

    def _record(
        self,
        api_key: int,
        version: int,
        payload: bytes,
        response: bytes,
        started: float,
        wall_start: int,
        correlation_id: int,
        error: str | None,
    ) -> None:
        self.exchanges.append(
            Exchange(
                api_key=api_key,
                api_version=version,
                request_bytes=payload,
                response_bytes=response,
                seconds=time.monotonic() - started,
                address=self.address,
                correlation_id=correlation_id,
                wall_start_ms=wall_start,
                wall_end_ms=_now_ms(),
                error=error,
            )
        )

    def _send_all(self, payload: bytes, api_key: int, version: int, started: float) -> None:
        sock = self._sock
        assert sock is not None
        try:
            send_all(sock, payload, deadline=started + self.timeout)
        except FrameTimeout:
            raise self._timed_out(api_key, version, "sending the request") from None
        except OSError as exc:
            raise self._closed(api_key, version, exc.strerror or str(exc)) from None

    def _read_frame(self, api_key: int, version: int, started: float) -> bytes:
        """The response without its size prefix (correlation id first)."""
        sock = self._sock
        assert sock is not None
        try:
            return read_frame(sock, min_size=4, max_size=MAX_RESPONSE_BYTES, deadline=started + self.timeout)
        except FrameTimeout as late:
            raise self._timed_out(api_key, version, _RESPONSE_PART[late.part]) from None
        except StreamEnded as ended:
            what = _RESPONSE_PART[ended.part]
            got = f"after {ended.done} of {ended.expected} bytes of {what}" if ended.done else f"before {what}"
            raise self._closed(api_key, version, f"end of stream {got}") from None
        except FrameSizeError as bad:
            if bad.head[:2] == TLS_ALERT:
                raise self._tls_listener() from None
            raise self._not_kafka(f"a response size of {bad.size} bytes (first bytes {bad.head!r})") from None
        except OSError as exc:
            raise self._closed(api_key, version, exc.strerror or str(exc)) from None

    def _decode(self, request: Any, version: int, response: bytes, correlation_id: int) -> Any:
        (got,) = _SIZE.unpack_from(response, 0)
        if got != correlation_id:
            self.close()
            raise self._not_kafka(
                f"correlation id {got} to a request with correlation id {correlation_id}"
            )
        response_class = request.header.get_response_class()
        try:
            return response_class.decode(response, version=version, header=True)
        except Exception as exc:  # kafka-python raises many types on truncated/garbled input
            self.close()
            raise WireError(
                f"{self.address} answered {api_name(int(request.API_KEY))} v{version} with bytes "
                f"that do not decode as its response ({type(exc).__name__}: {exc}): the broker "
                "may not implement this version correctly; see the attached response bytes",
                address=self.address,
                kind="undecodable",
            ) from None

    # ------------------------------------------------------------------------------------------
    # One-line errors that name the cause and the fix: a user reads them, not a traceback

    def _unreachable(self, reason: str) -> WireError:
        return WireError(
            f"cannot reach broker at {self.address} within {_fmt_seconds(self.timeout)} "
            f"({reason}): is it running? pass --bootstrap-servers HOST:PORT",
            address=self.address,
            kind="unreachable",
        )

    def _tls_failed(self, exc: TlsError) -> WireError:
        if exc.verify:
            fix = (
                "connect by a name the certificate gives, or turn hostname verification off with "
                "--ssl-endpoint-identification-algorithm '' (ssl.endpoint.identification.algorithm=)"
                if exc.name_mismatch
                else "pass the CA that signed the broker's certificate with --ssl-ca-file (ssl.truststore.location)"
            )
            return WireError(
                f"TLS verification of the broker at {self.address} failed ({exc.reason}): {fix}",
                address=self.address,
                kind="tls",
            )
        return WireError(
            f"TLS handshake with {self.address} failed ({exc.reason}): is it a TLS listener? for a listener "
            "without TLS set --security-protocol PLAINTEXT or SASL_PLAINTEXT (security.protocol)",
            address=self.address,
            kind="tls",
        )

    def _timed_out(self, api_key: int, version: int, what: str) -> WireError:
        return WireError(
            f"broker at {self.address} did not finish {what} for {api_name(api_key)} v{version} "
            f"within {_fmt_seconds(self.timeout)}: is it overloaded or hung? raise --wire-timeout "
            "(env KTS_WIRE_TIMEOUT) or check the broker log",
            address=self.address,
            kind="timeout",
        )

    def _closed(self, api_key: int, version: int, reason: str) -> WireError:
        return WireError(
            f"broker at {self.address} closed the connection during {api_name(api_key)} "
            f"v{version} ({reason}): it may have crashed, or it rejects this request or API "
            "version; check the broker log",
            address=self.address,
            kind="closed",
        )

    def _tls_listener(self) -> WireError:
        return WireError(
            f"{self.address} is a TLS listener (it answered with a TLS alert) and the connection was "
            f"{self.security.protocol}: set --security-protocol SSL or SASL_SSL (security.protocol), with "
            "--ssl-ca-file for a private CA",
            address=self.address,
            kind="tls",
        )

    def _not_kafka(self, what: str) -> WireError:
        return WireError(
            f"{self.address} does not speak the Kafka protocol (it answered {what}): pass "
            "--bootstrap-servers HOST:PORT of a Kafka listener",
            address=self.address,
            kind="not-kafka",
        )
