"""A wire tap between a client library and the broker: what the broker answered the library, read off the wire.

A client check compares what a library reports with what the broker told it: a RecordMetadata timestamp with the
ProduceResponse's log_append_time and the create timestamp the producer itself wrote into the batch (VAL-12), an
offsetsForTimes result with the ListOffsets answer and the version it was asked at (LO-9). Against a broker that
departs (a served mutant, a real broker), the library is then judged against the broker's own answers, never
against the model's, so a client is never blamed for a broker's fault; the broker's answers are compared with the
model separately, under broker clauses.

The tap listens on one loopback port per broker, relays requests and answers byte for byte, and rewrites only the
broker addresses a client would connect to next (Metadata brokers; FindCoordinator's coordinator; DescribeCluster's
brokers; the node endpoints of Produce v10+ / Fetch v16+ answers, KIP-951), each broker to its own tap port, so that
every connection of the library passes the tap.
Produce and ListOffsets requests and answers are decoded (kafka-python's protocol classes, as the reference broker
and the wire client use them) and kept as `Tapped` records; Metadata v10+ answers give topic ids their names.

The relaying itself (listeners, a thread per direction, timeouts, `stop()` joining every thread) is
conformance/wire/relay.py's, shared with the wire-fault proxy of the project's tests. A frame the tap cannot relay
or read is kept in `errors` and closes that connection: a broken tap must not pass for a broken library.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from kafka.protocol.admin.cluster import DescribeClusterResponse
from kafka.protocol.consumer import FetchResponse, ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata import MetadataResponse
from kafka.protocol.metadata.find_coordinator import FindCoordinatorResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse

from conformance.wire.client import FETCH, LIST_OFFSETS, METADATA, PRODUCE, parse_bootstrap
from conformance.wire.relay import LOOPBACK, Asked, Relay, RelayError
from models.codec import decode_batches
from models.errors import CodecError
from models.records import AnyBatch

_NO_ID = uuid.UUID(int=0)
FIND_COORDINATOR, DESCRIBE_CLUSTER = 10, 60  # answers that name a broker a client connects to next


class TapError(RelayError):
    """The tap could not relay or read a frame (kept in `WireTap.errors`)."""


@dataclass(frozen=True)
class TappedProduce:
    """One partition of a Produce exchange: what the producer sent (decoded by the model's codec) and what
    the broker answered. `log_append_time` is None before v2, `log_start_offset` before v5, `record_errors` is
    empty before v8."""

    topic: str
    partition: int
    version: int
    batches: tuple[AnyBatch, ...]
    error_code: int
    base_offset: int
    log_append_time: int | None
    log_start_offset: int | None
    record_errors: tuple[tuple[int, str | None], ...]
    error_message: str | None
    at: float  # monotonic time of the answer


@dataclass(frozen=True)
class TappedLookup:
    """One partition of a ListOffsets exchange: the target and version the client asked, the broker's answer
    (`timestamp` None at v0; `leader_epoch` None before v4)."""

    topic: str
    partition: int
    version: int
    target: int
    isolation_level: int
    error_code: int
    offset: int
    timestamp: int | None
    leader_epoch: int | None
    at: float


class WireTap:
    """A tap in front of the cluster at `upstream` ("HOST:PORT[,...]"): clients connect to `bootstrap`. Use it
    in a `with` block, or `start()` then `stop()`."""

    def __init__(self, upstream: str, *, timeout: float = 10.0) -> None:
        self.upstream = parse_bootstrap(upstream)
        self.timeout = timeout
        self._produced: list[TappedProduce] = []
        self._lookups: list[TappedLookup] = []
        self._topic_names: dict[uuid.UUID, str] = {}
        self._lock = threading.Lock()
        self._relay = Relay(self._request, self._answer, timeout=timeout, name="tap", error=TapError)

    # -- lifecycle

    @property
    def bootstrap(self) -> str:
        """The tap's address for the first upstream broker (the one a client bootstraps from)."""
        return f"{LOOPBACK}:{self._relay.listen(self.upstream[0])}"

    @property
    def errors(self) -> list[str]:
        """What the tap could not relay or read, one line each."""
        return self._relay.errors

    def start(self) -> WireTap:
        self._relay.listen(self.upstream[0])
        return self

    def stop(self) -> None:
        """Close every listener and connection, and join every thread (idempotent)."""
        self._relay.stop()

    def __enter__(self) -> WireTap:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- what was seen

    def mark(self) -> tuple[int, int]:
        """A position in the record: `produced(since=...)` and `lookups(since=...)` return what came after it."""
        with self._lock:
            return len(self._produced), len(self._lookups)

    def produced(self, topic: str, *, since: tuple[int, int] = (0, 0)) -> list[TappedProduce]:
        with self._lock:
            return [p for p in self._produced[since[0] :] if p.topic == topic]

    def lookups(self, topic: str, *, since: tuple[int, int] = (0, 0)) -> list[TappedLookup]:
        with self._lock:
            return [lo for lo in self._lookups[since[1] :] if lo.topic == topic]

    # -- reading requests

    def _request(self, api_key: int, version: int, frame: bytes) -> Any:
        """The decoded Produce and ListOffsets requests, kept for their answers."""
        if api_key == PRODUCE:
            return ProduceRequest.decode(frame, version=version, header=True, framed=True)
        if api_key == LIST_OFFSETS:
            return ListOffsetsRequest.decode(frame, version=version, header=True, framed=True)
        return None

    # -- reading answers

    def _answer(self, asked: Asked, frame: bytes) -> bytes:
        api_key, version = asked.api_key, asked.version
        if api_key == METADATA:
            response = MetadataResponse.decode(frame, version=version, header=True, framed=True)
            if version >= 10:
                with self._lock:
                    self._topic_names.update({t.topic_id: t.name for t in response.topics if t.topic_id != _NO_ID})
            return self._readdressed(response, list(response.brokers), frame)
        if api_key == PRODUCE and asked.request is not None:
            response = ProduceResponse.decode(frame, version=version, header=True, framed=True)
            self._record_produce(asked.request, response, version)
            endpoints = list(getattr(response, "node_endpoints", None) or ()) if version >= 10 else []
            return self._readdressed(response, endpoints, frame)
        if api_key == LIST_OFFSETS and asked.request is not None:
            response = ListOffsetsResponse.decode(frame, version=version, header=True, framed=True)
            self._record_lookups(asked.request, response, version)
            return frame
        if api_key == FIND_COORDINATOR:
            # A consumer with a group.id asks for its coordinator even when it only assigns partitions; librdkafka
            # then moves its connection to that node to the address named here (seen against Kafka 4.0.2: every
            # later ListOffsets went around the tap). v4+ names a list of coordinators (KIP-699).
            response = FindCoordinatorResponse.decode(frame, version=version, header=True, framed=True)
            return self._readdressed(response, list(response.coordinators) if version >= 4 else [response], frame)
        if api_key == DESCRIBE_CLUSTER:
            response = DescribeClusterResponse.decode(frame, version=version, header=True, framed=True)
            return self._readdressed(response, list(response.brokers), frame)
        if api_key == FETCH and version >= 16:
            response = FetchResponse.decode(frame, version=version, header=True, framed=True)
            return self._readdressed(response, list(getattr(response, "node_endpoints", None) or ()), frame)
        return frame

    def _readdressed(self, response: Any, endpoints: list[Any], frame: bytes) -> bytes:
        """Every broker address in the answer becomes that broker's tap port."""
        changed = False
        for endpoint in endpoints:
            if endpoint.port < 0:
                continue
            port = self._relay.listen((endpoint.host, endpoint.port))
            if (endpoint.host, endpoint.port) != (LOOPBACK, port):
                endpoint.host, endpoint.port = LOOPBACK, port
                changed = True
        # A decoded answer keeps its version and header (kafka-python: encode with header=True).
        return bytes(response.encode(header=True, framed=True)) if changed else frame

    def _name(self, name: str | None, topic_id: uuid.UUID | None) -> str:
        if name:
            return name
        with self._lock:
            return self._topic_names.get(topic_id or _NO_ID, "")

    def _record_produce(self, request: Any, response: Any, version: int) -> None:
        sent: dict[tuple[str, int], tuple[AnyBatch, ...]] = {}
        for data in request.topic_data:
            name = self._name(getattr(data, "name", None), getattr(data, "topic_id", None))
            for part in data.partition_data:
                try:
                    batches = decode_batches(bytes(part.records or b""), verify_crc=False, legacy_zstd=True)
                except CodecError as exc:
                    raise TapError(f"a Produce request to {name}-{part.index} does not decode: {exc}") from None
                sent[(name, part.index)] = tuple(batches)
        now = time.monotonic()
        tapped: list[TappedProduce] = []
        for topic in response.responses:
            name = self._name(getattr(topic, "name", None), getattr(topic, "topic_id", None))
            for p in topic.partition_responses:
                tapped.append(
                    TappedProduce(
                        topic=name,
                        partition=p.index,
                        version=version,
                        batches=sent.get((name, p.index), ()),
                        error_code=p.error_code,
                        base_offset=p.base_offset,
                        log_append_time=p.log_append_time_ms if version >= 2 else None,
                        log_start_offset=p.log_start_offset if version >= 5 else None,
                        record_errors=tuple((e.batch_index, e.batch_index_error_message) for e in p.record_errors)
                        if version >= 8
                        else (),
                        error_message=p.error_message if version >= 8 else None,
                        at=now,
                    )
                )
        with self._lock:
            self._produced.extend(tapped)

    def _record_lookups(self, request: Any, response: Any, version: int) -> None:
        targets = {
            (t.name, p.partition_index): p.timestamp for t in request.topics for p in t.partitions
        }
        isolation = getattr(request, "isolation_level", 0) if version >= 2 else 0
        now = time.monotonic()
        tapped: list[TappedLookup] = []
        for topic in response.topics:
            for p in topic.partitions:
                if version == 0:
                    offsets = tuple(p.old_style_offsets or ())
                    offset, timestamp = (offsets[0] if offsets else -1), None
                else:
                    offset, timestamp = p.offset, p.timestamp
                tapped.append(
                    TappedLookup(
                        topic=topic.name,
                        partition=p.partition_index,
                        version=version,
                        target=targets.get((topic.name, p.partition_index), 0),
                        isolation_level=isolation,
                        error_code=p.error_code,
                        offset=offset,
                        timestamp=timestamp,
                        leader_epoch=p.leader_epoch if version >= 4 else None,
                        at=now,
                    )
                )
        with self._lock:
            self._lookups.extend(tapped)

