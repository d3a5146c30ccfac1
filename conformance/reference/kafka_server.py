"""The reference broker's Kafka listeners: one TCP listener per broker of a `ServedCluster` on a loopback
address, each announcing itself in Metadata under the cluster's broker id, and a thread per connection.

Framing is kafka-python's generated protocol layer, as in the suite's own client (conformance/wire): a
request is ``size int32 | header | body``; the server reads the size (conformance/wire/framing.py), peeks
api_key, api_version and correlation_id (fixed offsets in every request header version), decodes the request
at that version and answers ``XResponse(...).with_header(correlation_id).encode(header=True, framed=True)``
(ApiVersions answers always with the non-flexible header, which kafka-python's ApiVersionsResponse does itself).

What a client gets when it does something wrong, as Kafka does it:
- ApiVersions at a version the broker does not offer: UNSUPPORTED_VERSION with the v0 answer listing the
  versions offered (KIP-511), and the connection stays open;
- any other API or version not offered, or offered but not served (Produce v0-v2 on 4.0+, KAFKA-18659), a
  request size that is not positive or above 100 MiB (Kafka's
  socket.request.max.bytes), or a body that does not decode at its version: the connection is closed and
  one line logged;
- a handler that fails: logged with the request, that connection closed; the server goes on.

Every request is logged in one line: broker, client address, API and version, correlation id, a short
summary (topic-partitions and error names) and the milliseconds it took. Sockets have timeouts: an idle
client is dropped after `idle_timeout` (Kafka's connections.max.idle.ms, 10 minutes), and `stop()` shuts
every connection down, so nothing waits on a client at shutdown.
"""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import logging
import socket
import threading
import time
import uuid
from types import TracebackType
from typing import Any

from conformance.reference.handlers import API_VERSIONS, APIS, NoAnswer, api_versions_answer
from conformance.reference.request_context import KafkaState, Request
from conformance.reference.served import ServedCluster
from conformance.wire.framing import REQUEST_HEAD, FrameSizeError, StreamEnded, read_frame
from models.constants import ErrorCode

__all__ = ["DEFAULT_HOST", "IDLE_TIMEOUT", "MAX_REQUEST_BYTES", "KafkaServer", "ServeError", "check_host"]

log = logging.getLogger("conformance.reference")

DEFAULT_HOST = "127.0.0.1"
MAX_REQUEST_BYTES = 100 * 1024 * 1024  # Kafka's socket.request.max.bytes
IDLE_TIMEOUT = 600.0  # Kafka's connections.max.idle.ms
_ACCEPT_POLL = 0.2  # how often an accept loop looks at the stop flag
_LOOPBACK = ipaddress.ip_network("127.0.0.0/8")


class ServeError(Exception):
    """The server cannot start: one line naming the cause and the fix (a host off loopback, a port in use)."""


class _Drop(Exception):
    """The connection is to be closed; the message says why (for the log)."""


def check_host(host: str) -> str:
    """`host` if it is a 127.0.0.0/8 address; ServeError otherwise (the reference broker serves loopback only)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise ServeError(f"--host {host!r} is not an IP address: the reference broker listens on loopback only; "
                         "pass --host 127.0.0.1 (or any 127.x.y.z)") from None
    if address not in _LOOPBACK:
        raise ServeError(f"--host {host} is not a loopback address: the reference broker listens on 127.0.0.0/8 "
                         "only; pass --host 127.0.0.1 (or any 127.x.y.z)")
    return host


def _cluster_id() -> str:
    # Kafka's cluster ids are a random UUID in URL-safe base64 without padding (22 characters).
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


class KafkaServer:
    """N Kafka listeners (one per broker id of `served`) on `host`. With `port` 0 each listener takes a
    free port; otherwise broker i (in id order) listens on port + i. Use as a context manager, or call
    `start()` and `stop()`."""

    def __init__(
        self,
        served: ServedCluster,
        *,
        host: str = DEFAULT_HOST,
        port: int = 0,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        self.served = served
        self.host = check_host(host)
        self.port = port
        self.idle_timeout = idle_timeout
        self.state: KafkaState | None = None
        self._listeners: dict[int, socket.socket] = {}
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._accepting: list[threading.Thread] = []

    # -- what clients are given

    @property
    def addresses(self) -> dict[int, tuple[str, int]]:
        """{broker id: (host, port)} of the listeners."""
        return {b: (self.host, s.getsockname()[1]) for b, s in self._listeners.items()}

    @property
    def bootstrap(self) -> str:
        """"127.0.0.1:P0,127.0.0.1:P1,..." in broker id order."""
        return ",".join(f"{h}:{p}" for _, (h, p) in sorted(self.addresses.items()))

    # -- lifecycle

    def start(self) -> KafkaServer:
        """Bind every listener (all or none: ServeError naming a port in use and the fix), then serve."""
        if self._listeners:
            raise RuntimeError("the Kafka listeners are already started")
        brokers = self.served.broker_ids()
        try:
            for i, broker in enumerate(brokers):
                self._listeners[broker] = self._bind(0 if self.port == 0 else self.port + i, broker)
        except BaseException:
            for sock in self._listeners.values():
                sock.close()
            self._listeners.clear()
            raise
        self.state = KafkaState(self.served, self.addresses, cluster_id=_cluster_id())
        for broker, sock in self._listeners.items():
            thread = threading.Thread(
                target=self._accept_loop, args=(broker, sock), name=f"kafka-broker-{broker}", daemon=True
            )
            thread.start()
            self._accepting.append(thread)
        return self

    def _bind(self, port: int, broker: int) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, port))
            sock.listen(64)
        except OSError as exc:
            sock.close()
            if port and exc.errno in (98, 48):  # EADDRINUSE (Linux, macOS)
                last = len(self.served.broker_ids()) - 1
                raise ServeError(
                    f"port {port} on {self.host} (broker {broker}, of ports {self.port}..{self.port + last}) is in "
                    f"use: pass --port P with P..P+{last} free, or --port 0 for free ports"
                ) from None
            reason = exc.strerror or exc
            raise ServeError(f"cannot listen on {self.host}:{port} for broker {broker}: {reason}") from None
        sock.settimeout(_ACCEPT_POLL)
        return sock

    def stop(self, timeout: float = 1.0) -> None:
        """Stop accepting, shut every connection down and wait (bounded by `timeout`) for the threads."""
        self._stopping.set()
        if self.state is not None:
            self.state.stop()
        with self._lock:
            connections = list(self._connections)
        for sock in connections:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for listener in self._listeners.values():
            with contextlib.suppress(OSError):  # wakes a blocked accept() at once (Linux); else it polls
                listener.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + timeout
        for thread in self._accepting:
            thread.join(max(0.0, deadline - time.monotonic()))
        for sock in self._listeners.values():
            sock.close()
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> KafkaServer:
        if not self._listeners:
            self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- accepting and serving

    def _accept_loop(self, broker: int, listener: socket.socket) -> None:
        while not self._stopping.is_set():
            try:
                sock, peer = listener.accept()
            except TimeoutError:
                continue
            except OSError as exc:
                if self._stopping.is_set():
                    return
                log.warning("broker %d: accept failed (%s); retrying", broker, exc)
                time.sleep(_ACCEPT_POLL)
                continue
            sock.settimeout(self.idle_timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            thread = threading.Thread(
                target=self._serve_connection,
                args=(broker, sock, f"{peer[0]}:{peer[1]}"),
                name=f"kafka-broker-{broker}-{peer[1]}",
                daemon=True,
            )
            with self._lock:
                if self._stopping.is_set():
                    sock.close()
                    return
                self._connections.add(sock)
                self._threads.add(thread)
            thread.start()

    def _serve_connection(self, broker: int, sock: socket.socket, client: str) -> None:
        try:
            while not self._stopping.is_set():
                frame = self._read_request(sock)
                if frame is None or not self._answer(broker, client, sock, frame):
                    return
        except _Drop as why:
            log.warning("broker %d %s: %s; connection closed", broker, client, why)
        except TimeoutError:
            log.info("broker %d %s: idle for %g s; connection closed", broker, client, self.idle_timeout)
        except OSError as exc:  # reset by the client, or shut down by stop()
            if not self._stopping.is_set():
                log.info("broker %d %s: connection lost (%s)", broker, client, exc.strerror or exc)
        finally:
            with contextlib.suppress(OSError):
                sock.close()
            with self._lock:
                self._connections.discard(sock)
                self._threads.discard(threading.current_thread())

    def _read_request(self, sock: socket.socket) -> bytes | None:
        """The next request without its size prefix; None when the client closed between requests."""
        try:
            return read_frame(sock, min_size=1, max_size=MAX_REQUEST_BYTES)
        except StreamEnded as ended:
            if ended.between_frames:
                return None
            raise _Drop(str(ended)) from None
        except FrameSizeError as bad:
            raise _Drop(f"a request size of {bad.size} bytes (first bytes {bad.head!r}): not a Kafka request") from None

    def _answer(self, broker: int, client: str, sock: socket.socket, frame: bytes) -> bool:
        """Answer one request; False when the connection is to be closed."""
        started = time.monotonic()
        if len(frame) < REQUEST_HEAD.size:
            raise _Drop(f"a {len(frame)}-byte request, too short for a request header")
        api_key, version, correlation_id = REQUEST_HEAD.unpack_from(frame)
        api = APIS.get(api_key)
        profile = self.served.profile
        offered = api.versions(profile) if api is not None else None
        if offered is None or not offered[0] <= version <= offered[1]:
            name = api.name if api is not None else f"api key {api_key}"
            if api_key == API_VERSIONS:
                answer = api_versions_answer(profile, 0, error=ErrorCode.UNSUPPORTED_VERSION)
                answer.with_header(correlation_id=correlation_id)
                sock.sendall(answer.encode(header=True, framed=True))
                what = "UNSUPPORTED_VERSION (v0 answer)"
                self._log(broker, client, f"{name} v{version}", correlation_id, what, started)
                return True
            offer = f"v{offered[0]}..v{offered[1]} offered" if offered is not None else "not served"
            raise _Drop(f"{name} v{version} #{correlation_id} ({offer}): closing, as Kafka does")
        assert api is not None and self.state is not None
        try:
            body = api.request.decode(frame, version=version, header=True)
        except Exception as exc:  # kafka-python raises many types on truncated or garbled input
            why = f"{type(exc).__name__}: {exc}"
            raise _Drop(f"{api.name} v{version} #{correlation_id} does not decode ({why})") from None
        request = Request(self.state, broker, client, api_key, version, correlation_id, body)
        try:
            response: Any = api.handle(request)
            payload = None
            if response is not None:
                response.with_header(correlation_id=correlation_id)
                payload = response.encode(header=True, framed=True)
        except NoAnswer as why:
            raise _Drop(f"{api.name} v{version} #{correlation_id}: {why}: closing, as Kafka does") from None
        except Exception:
            log.exception(
                "broker %d %s: %s v%d #%d failed; connection closed. The request: %r",
                broker, client, api.name, version, correlation_id, body,
            )
            return False
        if payload is not None:
            sock.sendall(payload)
        self._log(broker, client, f"{api.name} v{version}", correlation_id, "; ".join(request.summary), started)
        return True

    @staticmethod
    def _log(broker: int, client: str, what: str, correlation_id: int, summary: str, started: float) -> None:
        millis = (time.monotonic() - started) * 1000
        log.info("broker %d %s %s #%d: %s (%.1f ms)", broker, client, what, correlation_id, summary or "-", millis)
