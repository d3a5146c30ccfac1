"""A loopback Kafka proxy: the suite talks to it as to a broker, it relays every request to one real broker and
every answer back, and can put one fault (faults.py) into the answers.

Framing is the project's (conformance/wire/connection.py): ``size int32 | header | body`` both ways, decoded
with kafka-python's protocol layer. Requests are relayed byte for byte; their header (api key, version,
correlation id) is read with kafka-python's `RequestHeader` to pair each answer with its request, and the
few requests the proxy learns from are decoded whole (CreateTopics, AlterConfigs, IncrementalAlterConfigs:
topic types; ListOffsets: the targets a fault needs). An answer is decoded and re-encoded only when
something in it must change: the broker addresses of Metadata, FindCoordinator and DescribeCluster answers
(and the node endpoints of Produce v10+ / Fetch v16+ answers) become the proxy's own, so that the suite
keeps talking through the proxy; and the fault's field. Everything else passes through untouched.

One broker only (a single-node cluster such as Tansu): every advertised broker becomes this one address.

Threads: one accepts (its listening socket polls with a short timeout), and each client connection gets
one thread per direction. Every socket has a timeout; `stop()` closes the listener and every connection
and joins every thread, and it is what the test fixture's finaliser calls. A failure inside the proxy
(an answer it cannot decode, a fault that raises) closes that connection and is kept in `errors`, which
the tests assert is empty: a broken proxy must not pass for a broken broker.
"""

from __future__ import annotations

import contextlib
import io
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from kafka.protocol.admin import (
    AlterConfigsRequest,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DescribeClusterResponse,
    IncrementalAlterConfigsRequest,
)
from kafka.protocol.api_header import RequestHeader
from kafka.protocol.consumer import FetchResponse, ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata import FindCoordinatorResponse, MetadataResponse
from kafka.protocol.producer import ProduceResponse

from conformance.wire.client import (
    ALTER_CONFIGS,
    CREATE_TOPICS,
    FETCH,
    INCREMENTAL_ALTER_CONFIGS,
    LIST_OFFSETS,
    METADATA,
    PRODUCE,
    parse_bootstrap,
)
from conformance.wire.connection import MAX_RESPONSE_BYTES, api_name

from .faults import Fault
from .topics import TopicBook

__all__ = ["LOOPBACK", "KafkaProxy", "ProxyError"]

LOOPBACK = "127.0.0.1"
# API keys the client does not use; the others are the client's (the protocol guide's numbering).
FIND_COORDINATOR, DESCRIBE_CLUSTER = 10, 60

# Requests decoded whole, and what is learnt from them.
_REQUESTS: dict[int, Any] = {
    LIST_OFFSETS: ListOffsetsRequest,
    CREATE_TOPICS: CreateTopicsRequest,
    ALTER_CONFIGS: AlterConfigsRequest,
    INCREMENTAL_ALTER_CONFIGS: IncrementalAlterConfigsRequest,
}
# Answers the proxy may have to read or change.
_RESPONSES: dict[int, Any] = {
    PRODUCE: ProduceResponse,
    FETCH: FetchResponse,
    LIST_OFFSETS: ListOffsetsResponse,
    METADATA: MetadataResponse,
    FIND_COORDINATOR: FindCoordinatorResponse,
    CREATE_TOPICS: CreateTopicsResponse,
    DESCRIBE_CLUSTER: DescribeClusterResponse,
}
_SIZE = struct.Struct(">i")
# How often a blocked socket call wakes up to see whether the proxy is stopping.
_POLL = 0.2


class ProxyError(Exception):
    """The proxy could not relay or rewrite a frame (kept in `KafkaProxy.errors`)."""


@dataclass(frozen=True)
class _Pending:
    api_key: int
    version: int
    request: Any  # the decoded request for the APIs in _REQUESTS, else None


class KafkaProxy:
    """Relays one client port on 127.0.0.1 to `upstream` ("HOST:PORT"), with `fault` in the answers (None:
    a faithful relay). Use it in a `with` block, or `start()` then `stop()`.

    `rewritten` counts the answers the fault changed (by API name) and `fields` the fields it changed, so a
    test can tell a fault that never fired from one the suite did not catch."""

    def __init__(self, upstream: str, fault: Fault | None = None, *, timeout: float = 10.0) -> None:
        ((host, port),) = parse_bootstrap(upstream)
        self.upstream = (host, port)
        self.fault = fault
        self.timeout = timeout
        self.topics = TopicBook()
        self.rewritten: Counter[str] = Counter()
        self.fields = 0
        self.errors: list[str] = []
        self.connections = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._port: int | None = None

    # -- lifecycle

    @property
    def port(self) -> int:
        if self._port is None:
            raise ProxyError("the proxy has not been started")
        return self._port

    @property
    def bootstrap(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    def start(self) -> KafkaProxy:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((LOOPBACK, 0))
        listener.listen(16)
        listener.settimeout(_POLL)
        self._listener = listener
        self._port = listener.getsockname()[1]
        self._spawn(self._accept_loop, "accept")
        return self

    def stop(self) -> None:
        """Close the listener and every connection, and join every thread (idempotent)."""
        self._stopping.set()
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.close()
        with self._lock:
            sockets = list(self._sockets)
            self._sockets.clear()
        for sock in sockets:
            _close(sock)
        deadline = time.monotonic() + self.timeout
        for thread in list(self._threads):
            if thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))
        alive = [t.name for t in self._threads if t.is_alive()]
        if alive:
            raise ProxyError(f"proxy threads still running after {self.timeout:g} s: {', '.join(alive)}")

    def __enter__(self) -> KafkaProxy:
        if self._listener is None:
            self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _spawn(self, target: Any, name: str, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, name=f"kafka-proxy-{name}", daemon=True)
        with self._lock:
            self._threads.append(thread)
        thread.start()

    def _track(self, sock: socket.socket) -> bool:
        with self._lock:
            if self._stopping.is_set():
                return False
            self._sockets.add(sock)
            return True

    def _fail(self, what: str) -> None:
        with self._lock:
            self.errors.append(what)

    # -- connections

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            listener = self._listener
            if listener is None:
                return
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed by stop()
            client.settimeout(_POLL)
            try:
                broker = socket.create_connection(self.upstream, timeout=self.timeout)
            except OSError as exc:
                self._fail(f"cannot reach the broker at {self.upstream[0]}:{self.upstream[1]}: {exc}")
                _close(client)
                continue
            broker.settimeout(_POLL)
            if not (self._track(client) and self._track(broker)):
                _close(client)
                _close(broker)
                return
            with self._lock:
                self.connections += 1
                number = self.connections
            pending: dict[int, _Pending] = {}
            self._spawn(self._relay_requests, f"{number}-requests", client, broker, pending)
            self._spawn(self._relay_answers, f"{number}-answers", broker, client, pending)

    def _relay_requests(self, client: socket.socket, broker: socket.socket, pending: dict[int, _Pending]) -> None:
        try:
            while (frame := self._read_frame(client)) is not None:
                header = RequestHeader.decode(io.BytesIO(frame[4:]), flexible=False)
                api_key, version = header.request_api_key, header.request_api_version
                request = None
                if api_key in _REQUESTS:
                    request = _REQUESTS[api_key].decode(frame, version=version, header=True, framed=True)
                    self._learn_from_request(api_key, request)
                with self._lock:
                    pending[header.correlation_id] = _Pending(api_key, version, request)
                self._send_all(broker, frame)
        except Exception as exc:
            if not self._stopping.is_set():
                self._fail(f"relaying a request: {type(exc).__name__}: {exc}")
        finally:
            _close(client)
            _close(broker)

    def _relay_answers(self, broker: socket.socket, client: socket.socket, pending: dict[int, _Pending]) -> None:
        try:
            while (frame := self._read_frame(broker)) is not None:
                (correlation_id,) = _SIZE.unpack_from(frame, 4)
                with self._lock:
                    asked = pending.pop(correlation_id, None)
                if asked is not None and asked.api_key in _RESPONSES:
                    frame = self._answer(asked, frame)
                self._send_all(client, frame)
        except Exception as exc:
            if not self._stopping.is_set():
                self._fail(f"relaying an answer: {type(exc).__name__}: {exc}")
        finally:
            _close(broker)
            _close(client)

    # -- frames

    def _read_frame(self, sock: socket.socket) -> bytes | None:
        """One whole frame, size prefix included; None at the end of the stream or when stopping."""
        head = self._recv_exactly(sock, 4)
        if head is None:
            return None
        (size,) = _SIZE.unpack(head)
        if not 4 <= size <= MAX_RESPONSE_BYTES:
            raise ProxyError(f"a frame size of {size} bytes is not Kafka")
        body = self._recv_exactly(sock, size)
        if body is None:
            raise ProxyError(f"the stream ended inside a {size}-byte frame")
        return head + body

    def _recv_exactly(self, sock: socket.socket, size: int) -> bytes | None:
        data = bytearray()
        while len(data) < size:
            if self._stopping.is_set():
                return None
            try:
                chunk = sock.recv(min(size - len(data), 1 << 20))
            except TimeoutError:
                continue  # idle (the suite keeps connections open between tests): look at _stopping again
            except OSError:
                return None
            if not chunk:
                return None
            data += chunk
        return bytes(data)

    def _send_all(self, sock: socket.socket, data: bytes) -> None:
        view = memoryview(data)
        deadline = time.monotonic() + self.timeout
        while view:
            if self._stopping.is_set():
                return
            try:
                sent = sock.send(view)
            except TimeoutError:
                if time.monotonic() > deadline:
                    raise ProxyError(f"the peer did not take {len(view)} bytes within {self.timeout:g} s") from None
                continue
            view = view[sent:]

    # -- what is read and changed

    def _learn_from_request(self, api_key: int, request: Any) -> None:
        if api_key == CREATE_TOPICS:
            self.topics.created(request)
        elif api_key in (ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS):
            self.topics.altered(request, incremental=api_key == INCREMENTAL_ALTER_CONFIGS)

    def _answer(self, asked: _Pending, frame: bytes) -> bytes:
        api_key, version = asked.api_key, asked.version
        fault = self.fault if self.fault is not None and self.fault.api_key == api_key else None
        if api_key in (PRODUCE, FETCH) and fault is None and not _may_carry_endpoints(api_key, version):
            return frame  # nothing to read or change: pass it on without decoding
        response = _RESPONSES[api_key].decode(frame, version=version, header=True, framed=True)
        changed = self._advertise_self(api_key, version, response)
        if api_key == CREATE_TOPICS or (api_key == METADATA and version >= 10):
            self.topics.named(response.topics)  # CreateTopics v7+ and Metadata v10+ carry topic ids
        if fault is not None:
            try:
                fields = fault.rewrite(asked.request, response, version, self.topics)
            except Exception as exc:
                raise ProxyError(f"fault {fault.name} on {api_name(api_key)} v{version}: {exc!r}") from exc
            if fields:
                changed += fields
                with self._lock:
                    self.rewritten[api_name(api_key)] += 1
                    self.fields += fields
        if not changed:
            return frame
        # The decoded answer keeps its version and header; encode(version=...) would try to set the version
        # on the header too, which only a request header has.
        return bytes(response.encode(header=True, framed=True))

    def _advertise_self(self, api_key: int, version: int, response: Any) -> int:
        """Every broker address in the answer becomes the proxy's; the number of addresses changed."""
        endpoints: list[Any] = []
        if api_key in (METADATA, DESCRIBE_CLUSTER):
            endpoints = list(response.brokers)
        elif api_key == FIND_COORDINATOR:
            endpoints = list(response.coordinators) if version >= 4 else [response]
        elif _may_carry_endpoints(api_key, version):
            endpoints = list(getattr(response, "node_endpoints", None) or ())
        changed = 0
        for endpoint in endpoints:
            if api_key == FIND_COORDINATOR and endpoint.node_id < 0:
                continue  # an error answer names no coordinator
            if (endpoint.host, endpoint.port) != (LOOPBACK, self.port):
                endpoint.host, endpoint.port = LOOPBACK, self.port
                changed += 1
        return changed


def _may_carry_endpoints(api_key: int, version: int) -> bool:
    """Produce v10+ and Fetch v16+ name the new leader's address in a NOT_LEADER answer (KIP-951)."""
    return (api_key == PRODUCE and version >= 10) or (api_key == FETCH and version >= 16)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
