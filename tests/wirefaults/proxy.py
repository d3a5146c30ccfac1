"""A loopback Kafka proxy: the suite talks to it as to a broker, it relays every request to one real broker and
every answer back, and can put one fault (faults.py) into the answers.

Framing and relaying are the project's (conformance/wire/framing.py, relay.py, shared with the client tap):
``size int32 | header | body`` both ways, decoded with kafka-python's protocol layer. Requests are relayed byte
for byte, each answer paired with its request by correlation id, and the few requests the proxy learns from
are decoded whole (CreateTopics, AlterConfigs, IncrementalAlterConfigs: topic types; ListOffsets: the targets a
fault needs). An answer is decoded and re-encoded only when something in it must change: the broker addresses
of Metadata, FindCoordinator and DescribeCluster answers (and the node endpoints of Produce v10+ / Fetch v16+
answers) become the proxy's own, so that the suite keeps talking through the proxy; and the fault's field.
Everything else passes through untouched.

One broker only (a single-node cluster such as Tansu): every advertised broker becomes this one address.

The relay has one thread accepting and one per direction of each client connection, every socket with a
timeout; `stop()` closes the listener and every connection and joins every thread, and it is what the test
fixture's finaliser calls. A failure inside the proxy (an answer it cannot decode, a fault that raises) closes
that connection and is kept in `errors`, which the tests assert is empty: a broken proxy must not pass for a
broken broker.
"""

from __future__ import annotations

import threading
from collections import Counter
from types import TracebackType
from typing import Any

from kafka.protocol.admin import (
    AlterConfigsRequest,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DescribeClusterResponse,
    IncrementalAlterConfigsRequest,
)
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
from conformance.wire.connection import api_name
from conformance.wire.relay import LOOPBACK, Asked, Relay, RelayError

from .faults import Fault, WireFault
from .topics import TopicBook

__all__ = ["LOOPBACK", "KafkaProxy", "ProxyError"]

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


class ProxyError(RelayError):
    """The proxy could not relay or rewrite a frame (kept in `KafkaProxy.errors`)."""


class KafkaProxy:
    """Relays one client port on 127.0.0.1 to `upstream` ("HOST:PORT"), with `fault` in the answers (None:
    a faithful relay). Use it in a `with` block, or `start()` then `stop()`.

    `rewritten` counts the answers the fault changed (by API name) and `fields` the fields it changed, so a
    test can tell a fault that never fired from one the suite did not catch."""

    def __init__(self, upstream: str, fault: WireFault | None = None, *, timeout: float = 10.0) -> None:
        ((host, port),) = parse_bootstrap(upstream)
        self.upstream = (host, port)
        self.fault = fault
        self.timeout = timeout
        self.topics = TopicBook()
        self.rewritten: Counter[str] = Counter()
        self.fields = 0
        self._rewriter: Fault | None = fault.build() if fault is not None else None
        self._fault_id = fault.id if fault is not None else ""
        self._lock = threading.Lock()
        self._relay = Relay(self._request, self._answer, timeout=timeout, name="proxy", error=ProxyError)
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

    @property
    def errors(self) -> list[str]:
        """What the proxy could not relay or rewrite, one line each (the tests assert it is empty)."""
        return self._relay.errors

    @property
    def connections(self) -> int:
        """How many client connections the proxy has relayed."""
        return self._relay.connections

    def start(self) -> KafkaProxy:
        self._port = self._relay.listen(self.upstream)
        return self

    def stop(self) -> None:
        """Close the listener and every connection, and join every thread (idempotent)."""
        self._relay.stop()

    def __enter__(self) -> KafkaProxy:
        if self._port is None:
            self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- what is read and changed

    def _request(self, api_key: int, version: int, frame: bytes) -> Any:
        """The decoded request for the APIs in _REQUESTS (kept for its answer, and learnt from), else None."""
        if api_key not in _REQUESTS:
            return None
        request = _REQUESTS[api_key].decode(frame, version=version, header=True, framed=True)
        self._learn_from_request(api_key, request)
        return request

    def _learn_from_request(self, api_key: int, request: Any) -> None:
        if api_key == CREATE_TOPICS:
            self.topics.created(request)
        elif api_key in (ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS):
            self.topics.altered(request, incremental=api_key == INCREMENTAL_ALTER_CONFIGS)

    def _answer(self, asked: Asked, frame: bytes) -> bytes:
        api_key, version = asked.api_key, asked.version
        if api_key not in _RESPONSES:
            return frame
        rewriter = self._rewriter if self._rewriter is not None and self._rewriter.api_key == api_key else None
        if api_key in (PRODUCE, FETCH) and rewriter is None and not _may_carry_endpoints(api_key, version):
            return frame  # nothing to read or change: pass it on without decoding
        response = _RESPONSES[api_key].decode(frame, version=version, header=True, framed=True)
        changed = self._advertise_self(api_key, version, response)
        if api_key == CREATE_TOPICS or (api_key == METADATA and version >= 10):
            self.topics.named(response.topics)  # CreateTopics v7+ and Metadata v10+ carry topic ids
        if rewriter is not None:
            try:
                fields = rewriter.rewrite(asked.request, response, version, self.topics)
            except Exception as exc:
                raise ProxyError(f"fault {self._fault_id} on {api_name(api_key)} v{version}: {exc!r}") from exc
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

