"""A small Kafka protocol client for the conformance suite.

It is not a producer or a consumer: it sends exactly the request the suite asks for, at exactly the
API version the suite asks for, with the record bytes the suite built (`models.codec.encode_batches`,
any magic, codec and timestamps, invalid ones included), and hands back the broker's answer field by
field, the record bytes of a fetch undecoded (`models.codec.decode_batches(data, partial_tail=True)`
reads them). Framing is kafka-python's generated protocol layer (`kafka.protocol`, 3.x), whose
schemas cover every version of the APIs used here (their lower bounds are widened to 0, and the
field-level version ranges of the old versions are kept, so Produce v0..2, Fetch v0..3 and
ListOffsets v0 encode as the protocol guide lays them out).

Versions (what this module can send, if the broker offers it; see SUPPORTED_VERSIONS):

    Produce v0..13        v0/v1 legacy answers, v2+ log_append_time (KIP-32), v5+ log_start_offset,
                          v8+ record_errors/error_message (KIP-467); v13 addresses the topic by id
    Fetch v0..18          v0..3 the broker down-converts to the magic the version implies (CNV-*),
                          v4+ last_stable_offset, v5+ log_start_offset; v13+ by topic id
    ListOffsets v0..11    v0 answers a list of offsets (mapped below), v1+ one (timestamp, offset),
                          v4+ leader_epoch; -3 MAX_TIMESTAMP needs v7, -4/-5 v8/v9 (KIP-734/1005)
    Metadata v0..13, ApiVersions v0..4, CreateTopics v0..7, DeleteTopics v0..6,
    DescribeConfigs v0..4, AlterConfigs v0..2, IncrementalAlterConfigs v0..1, ElectLeaders v0..2,
    AlterPartitionReassignments v0..1

A version the broker does not list in ApiVersions, or that kafka-python cannot encode, raises
`UnsupportedVersion` before anything is sent. Transport failures raise `WireError` (one line naming
the address and the fix). Broker error codes are returned, not raised, except where the method has
nothing else to return (`describe_configs`, `metadata` with a top-level error): those raise
`ApiError`.

Partition requests go to the partition leader found with Metadata. Errors that mean "your metadata
is stale" (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, the leader-epoch
and topic-id errors) refresh the metadata and retry, a bounded number of times with a short backoff;
the last answer is returned as it is. A Produce is retried only on those errors, which mean the
batch was not appended, or when the leader cannot be connected to (nothing was sent).

Not thread-safe: one client per thread.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

import kafka.errors as _kerrors
from kafka.protocol.admin import (
    AlterConfigsRequest,
    AlterPartitionReassignmentsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    DescribeConfigsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
)
from kafka.protocol.consumer import FetchRequest, ListOffsetsRequest
from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest
from kafka.protocol.producer import ProduceRequest
from kafka.version import __version__ as KAFKA_PYTHON_VERSION

from conformance.wire.connection import DEFAULT_TIMEOUT, Exchange, KafkaConnection, WireError, api_name
from conformance.wire.security import PLAINTEXT, SecuritySettings

__all__ = [
    "KAFKA_PYTHON_VERSION",
    "SUPPORTED_VERSIONS",
    "ApiError",
    "ApiResult",
    "BrokerMetadata",
    "ClusterMetadata",
    "FetchResult",
    "ListOffsetsResult",
    "PartitionMetadata",
    "ProduceResult",
    "TopicMetadata",
    "UnsupportedVersion",
    "WireClient",
    "parse_bootstrap",
]

# API keys (the protocol guide's numbering).
PRODUCE, FETCH, LIST_OFFSETS, METADATA = 0, 1, 2, 3
API_VERSIONS, CREATE_TOPICS, DELETE_TOPICS = 18, 19, 20
DESCRIBE_CONFIGS, ALTER_CONFIGS, ELECT_LEADERS, INCREMENTAL_ALTER_CONFIGS = 32, 33, 43, 44
ALTER_PARTITION_REASSIGNMENTS = 45

_REQUESTS: dict[int, Any] = {
    PRODUCE: ProduceRequest,
    FETCH: FetchRequest,
    LIST_OFFSETS: ListOffsetsRequest,
    METADATA: MetadataRequest,
    API_VERSIONS: ApiVersionsRequest,
    CREATE_TOPICS: CreateTopicsRequest,
    DELETE_TOPICS: DeleteTopicsRequest,
    DESCRIBE_CONFIGS: DescribeConfigsRequest,
    ALTER_CONFIGS: AlterConfigsRequest,
    ELECT_LEADERS: ElectLeadersRequest,
    INCREMENTAL_ALTER_CONFIGS: IncrementalAlterConfigsRequest,
    ALTER_PARTITION_REASSIGNMENTS: AlterPartitionReassignmentsRequest,
}

# What kafka-python's schemas let us encode: (0, newest) per API key. Versions below a schema's
# `validVersions` are kept by kafka-python ("ignore min valid version") with their historical fields.
SUPPORTED_VERSIONS: dict[int, tuple[int, int]] = {
    key: (0, int(cls.max_version)) for key, cls in _REQUESTS.items()
}

# Error codes (Kafka's Errors.java numbering) the client acts on.
_NONE = 0
_UNKNOWN_TOPIC_OR_PARTITION = 3
_LEADER_NOT_AVAILABLE = 5
_NOT_LEADER_OR_FOLLOWER = 6
_UNSUPPORTED_VERSION = 35
_NOT_CONTROLLER = 41
_FENCED_LEADER_EPOCH = 74
_UNKNOWN_LEADER_EPOCH = 75
_UNKNOWN_TOPIC_ID = 100
_INCONSISTENT_TOPIC_ID = 103
# "Your metadata is stale": the request was not executed, so it is safe to refresh and resend.
_STALE_METADATA = frozenset(
    {
        _UNKNOWN_TOPIC_OR_PARTITION,
        _LEADER_NOT_AVAILABLE,
        _NOT_LEADER_OR_FOLLOWER,
        _FENCED_LEADER_EPOCH,
        _UNKNOWN_LEADER_EPOCH,
        _UNKNOWN_TOPIC_ID,
        _INCONSISTENT_TOPIC_ID,
    }
)

_TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC
_DYNAMIC_TOPIC_CONFIG = 1  # DescribeConfigs config_source of a per-topic override
_OP_SET, _OP_DELETE = 0, 1  # IncrementalAlterConfigs operations
_NO_TOPIC_ID = uuid.UUID(int=0)
_LATEST = -1  # ListOffsets' special target: the log end offset
_APIVERSIONS_FIRST = 3  # flexible, with client software name; brokers older than 2.4 need v0

_T = TypeVar("_T")


def error_name(code: int) -> str:
    """NOT_LEADER_OR_FOLLOWER, ... (kafka-python's table; "error N" if it does not know N)."""
    if code == _NONE:
        return "NONE"
    cls = _kerrors.kafka_errors.get(code)
    return f"{cls.message} ({code})" if cls is not None else f"error {code}"


# ------------------------------------------------------------------------------------------------
# Results


class UnsupportedVersion(Exception):
    """The broker does not offer `api_key` at `version`, or kafka-python cannot encode it."""

    def __init__(self, message: str, *, api_key: int, version: int, offered: tuple[int, int] | None) -> None:
        super().__init__(message)
        self.message = message
        self.api_key = api_key
        self.version = version
        self.offered = offered


class ApiError(Exception):
    """A broker error code where the method has no result to carry it (see the module doc)."""

    def __init__(self, api_key: int, error_code: int, message: str | None, what: str) -> None:
        text = f"{api_name(api_key)} {what} failed: {error_name(error_code)}"
        super().__init__(f"{text}: {message}" if message else text)
        self.api_key = api_key
        self.error_code = error_code
        self.error_message = message


class ApiResult(NamedTuple):
    """An error code and the broker's message (None when the version carries none)."""

    error_code: int
    error_message: str | None


@dataclass(frozen=True)
class ProduceResult:
    """One partition's Produce answer. Fields the chosen version does not carry are None:
    `log_append_time` before v2 (KIP-32; -1 when the topic uses CreateTime), `log_start_offset`
    before v5, `record_errors` and `error_message` before v8 (KIP-467: `record_errors` lists
    (batch_index, message) of the records that made the broker drop the batch).
    With acks=0 the broker sends no answer: error_code 0, base_offset -1, everything else None."""

    error_code: int
    base_offset: int
    log_append_time: int | None
    log_start_offset: int | None
    record_errors: list[tuple[int, str | None]] | None
    error_message: str | None


@dataclass(frozen=True)
class FetchResult:
    """One partition's Fetch answer; `records` is the raw record set (b"" when none), possibly cut at
    the byte limit (decode it with `decode_batches(records, partial_tail=True)`).
    `last_stable_offset` is None before v4, `log_start_offset` before v5."""

    error_code: int
    high_watermark: int
    last_stable_offset: int | None
    log_start_offset: int | None
    records: bytes


@dataclass(frozen=True)
class ListOffsetsResult:
    """One partition's ListOffsets answer (LO-*).

    v1+: `timestamp` and `offset` as the broker answered them (-1/-1 when no record qualifies);
    `leader_epoch` is None before v4.
    v0 answers `old_style_offsets`, a list of up to max_num_offsets segment-base offsets in
    descending order (it is segment-granular, not per record, for a timestamp target). We ask for one
    and map `offset` to its first element (-1 when the list is empty); `timestamp` is None since v0
    carries none. The raw list stays in `old_style_offsets` (None at v1+)."""

    error_code: int
    timestamp: int | None
    offset: int
    leader_epoch: int | None
    old_style_offsets: tuple[int, ...] | None = None


@dataclass(frozen=True)
class BrokerMetadata:
    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True)
class PartitionMetadata:
    partition: int
    error_code: int
    leader: int  # -1: no leader
    leader_epoch: int | None  # None before Metadata v7
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True)
class TopicMetadata:
    name: str
    error_code: int
    topic_id: uuid.UUID | None  # None before Metadata v10 or when the broker sends the zero id
    partitions: dict[int, PartitionMetadata] = field(default_factory=dict)


@dataclass(frozen=True)
class ClusterMetadata:
    brokers: tuple[BrokerMetadata, ...]
    controller_id: int | None  # None before Metadata v1 or when unknown (-1)
    cluster_id: str | None
    topics: dict[str, TopicMetadata]

    def broker(self, node_id: int) -> BrokerMetadata | None:
        return next((b for b in self.brokers if b.node_id == node_id), None)


def parse_bootstrap(bootstrap: str) -> list[tuple[str, int]]:
    """ "h1:9092,h2:9092" (an optional PLAINTEXT:// prefix and [ipv6] brackets allowed) as pairs."""
    out: list[tuple[str, int]] = []
    for raw in bootstrap.split(","):
        item = raw.strip()
        if "://" in item:
            item = item.split("://", 1)[1]
        host, sep, port = item.rpartition(":")
        host = host.strip("[]")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise WireError(
                f"bad bootstrap address {raw.strip()!r} in {bootstrap!r}: pass --bootstrap-servers "
                "HOST:PORT[,HOST:PORT...]",
                address=raw.strip(),
                kind="address",
            )
        out.append((host, int(port)))
    return out


# ------------------------------------------------------------------------------------------------
# The client


class WireClient:
    """Requests at explicit versions to the brokers of one cluster (see the module doc)."""

    def __init__(
        self,
        bootstrap: str,
        timeout: float = DEFAULT_TIMEOUT,
        client_id: str = "kafka-timestamp-conformance",
        *,
        retries: int = 3,
        history: int = 64,
        security: SecuritySettings = PLAINTEXT,
    ) -> None:
        self.bootstrap = bootstrap
        self.security = security
        self.timeout = timeout
        self.client_id = client_id
        self.retries = retries
        self._bootstrap = parse_bootstrap(bootstrap)
        # Every connection appends to one deque: the report reads the last exchanges in order.
        self.exchanges: deque[Exchange] = deque(maxlen=history)
        self._conns: dict[tuple[str, int], KafkaConnection] = {}
        self._versions: dict[tuple[str, int], dict[int, tuple[int, int]]] = {}
        self._home: tuple[str, int] | None = None  # the bootstrap address that answered
        self._nodes: dict[int, tuple[str, int]] = {}
        self._controller: int | None = None
        self._topics: dict[str, TopicMetadata] = {}

    # -- lifecycle

    def close(self) -> None:
        """Close every socket (the client reconnects if used again)."""
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
        self._versions.clear()
        self._home = None

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def last_exchange(self) -> Exchange | None:
        return self.exchanges[-1] if self.exchanges else None

    # -- connections and ApiVersions

    def _connection(self, address: tuple[str, int]) -> KafkaConnection:
        """A connected, version-negotiated connection to `address`."""
        conn = self._conns.get(address)
        if conn is None:
            conn = KafkaConnection(
                address[0], address[1], timeout=self.timeout, client_id=self.client_id, security=self.security
            )
            conn.exchanges = self.exchanges
            self._conns[address] = conn
        if not conn.connected or address not in self._versions:
            conn.connect()
            self._versions[address] = self._negotiate(conn)
        return conn

    def _negotiate(self, conn: KafkaConnection) -> dict[int, tuple[int, int]]:
        """ApiVersions: v3 first; a broker that does not know v3 either answers UNSUPPORTED_VERSION
        with a v0 body listing its range (Kafka >= 2.4) or closes the connection (older brokers,
        librdkafka's mock cluster at some versions), so fall back to its newest version, then v0."""
        attempts = [_APIVERSIONS_FIRST, 0]
        failures: list[WireError] = []
        answered: list[str] = []
        while attempts:
            version = attempts.pop(0)
            try:
                conn.connect()
                request = ApiVersionsRequest(
                    client_software_name="kafka-timestamp-conformance", client_software_version="0.1.0"
                )
                response = conn.send(request, version)
            except WireError as exc:
                if exc.kind in ("unreachable", "tls", "auth"):  # no other version fixes these
                    raise
                failures.append(exc)
                continue
            versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
            if response.error_code == _NONE and versions:
                return versions
            answered.append(f"v{version}: {error_name(response.error_code)}")
            offered = versions.get(API_VERSIONS)
            if response.error_code == _UNSUPPORTED_VERSION and offered is not None and offered[1] < version:
                retry = min(offered[1], SUPPORTED_VERSIONS[API_VERSIONS][1])
                attempts = [retry] + [v for v in attempts if v != retry]
        conn.close()
        # The most telling failure: garbage beats a timeout beats a dropped connection.
        for kind in ("not-kafka", "timeout"):
            for failure in failures:
                if failure.kind == kind:
                    raise WireError(failure.message, address=conn.address, kind=kind)
        what = "; ".join(answered) if answered else "it closed the connection on ApiVersions v3 and v0"
        raise WireError(
            f"{conn.address} does not speak the Kafka protocol ({what}): pass --bootstrap-servers "
            "HOST:PORT of a Kafka listener",
            address=conn.address,
            kind="not-kafka",
        )

    def _home_connection(self) -> KafkaConnection:
        """A connection to any broker: the bootstrap address that answered, else the next one, else a
        broker from the last metadata."""
        if self._home is not None:
            with contextlib.suppress(WireError):
                return self._connection(self._home)
        candidates = list(dict.fromkeys([*self._bootstrap, *self._nodes.values()]))
        error: WireError | None = None
        for address in candidates:
            try:
                conn = self._connection(address)
            except WireError as exc:
                error = exc if error is None else error
                continue
            self._home = address
            return conn
        assert error is not None
        raise error

    def _node_connection(self, node_id: int) -> KafkaConnection:
        address = self._nodes.get(node_id)
        if address is None:
            self.metadata([])
            address = self._nodes.get(node_id)
        if address is None:
            raise WireError(
                f"broker {node_id} is not in the metadata of {self.bootstrap}: the cluster changed; "
                "check the broker log",
                address=self.bootstrap,
            )
        return self._connection(address)

    def api_versions(self, node_id: int | None = None) -> dict[int, tuple[int, int]]:
        """{api_key: (min, max)} as the broker answered ApiVersions (the bootstrap broker by
        default)."""
        conn = self._home_connection() if node_id is None else self._node_connection(node_id)
        return dict(self._versions[(conn.host, conn.port)])

    def max_version(self, api_key: int, wanted: int, node_id: int | None = None) -> int:
        """The newest version <= `wanted` that both the broker (the bootstrap broker by default) and
        kafka-python support; UnsupportedVersion if there is none."""
        return _best(self.api_versions(node_id), api_key, wanted)

    def _check(self, conn: KafkaConnection, api_key: int, version: int, *, beyond_offer: bool = False) -> None:
        offered = self._versions[(conn.host, conn.port)].get(api_key)
        ours = SUPPORTED_VERSIONS[api_key]
        if not ours[0] <= version <= ours[1]:
            raise UnsupportedVersion(
                f"kafka-python {KAFKA_PYTHON_VERSION} cannot encode {api_name(api_key)} v{version} "
                f"(it knows v{ours[0]}..v{ours[1]})",
                api_key=api_key, version=version, offered=offered,
            )
        if not beyond_offer and (offered is None or not offered[0] <= version <= offered[1]):
            has = "does not offer it" if offered is None else f"offers v{offered[0]}..v{offered[1]}"
            raise UnsupportedVersion(
                f"the broker at {conn.address} does not support {api_name(api_key)} v{version} ({has})",
                api_key=api_key, version=version, offered=offered,
            )

    def _send(self, conn: KafkaConnection, request: Any, version: int, *, beyond_offer: bool = False) -> Any:
        """`request` at `version`, which kafka-python must encode and the broker offer (UnsupportedVersion
        otherwise); `beyond_offer` sends it whatever the broker offers, to see what it does with a version it
        removed (Kafka closes the connection: WireError)."""
        self._check(conn, int(request.API_KEY), version, beyond_offer=beyond_offer)
        return conn.send(request, version)

    def _pick(self, conn: KafkaConnection, api_key: int, version: int | None, newest: int) -> int:
        """`version` if given (checked when sent), else the newest both sides offer, up to `newest`."""
        if version is not None:
            return version
        return _best(self._versions[(conn.host, conn.port)], api_key, newest)

    # -- Metadata

    def metadata(
        self, topics: Sequence[str] | None = None, *, version: int | None = None, node_id: int | None = None
    ) -> ClusterMetadata:
        """Metadata for `topics` (None: every topic; []: brokers only) from any broker (broker `node_id` if
        given); refreshes the routing cache. Never creates topics (allow_auto_topic_creation=False from v4)."""
        conn = self._home_connection() if node_id is None else self._node_connection(node_id)
        version = self._pick(conn, METADATA, version, 12)
        if version == 0:
            # v0 cannot ask for "no topics": an empty list means every topic.
            wanted: list[Any] | None = [MetadataRequest.MetadataRequestTopic(name=t) for t in topics or ()]
        elif topics is None:
            wanted = None
        else:
            wanted = [MetadataRequest.MetadataRequestTopic(name=t, topic_id=_NO_TOPIC_ID) for t in topics]
        request = MetadataRequest(topics=wanted)
        if version >= 4:
            request.allow_auto_topic_creation = False
        response = self._send(conn, request, version)
        if getattr(response, "error_code", 0):
            raise ApiError(METADATA, response.error_code, None, f"v{version}")
        brokers = tuple(
            BrokerMetadata(b.node_id, b.host, b.port, b.rack if version >= 1 else None) for b in response.brokers
        )
        controller = response.controller_id if version >= 1 and response.controller_id >= 0 else None
        described: dict[str, TopicMetadata] = {}
        for t in response.topics:
            topic_id = t.topic_id if version >= 10 and t.topic_id != _NO_TOPIC_ID else None
            partitions = {
                p.partition_index: PartitionMetadata(
                    partition=p.partition_index,
                    error_code=p.error_code,
                    leader=p.leader_id,
                    leader_epoch=p.leader_epoch if version >= 7 else None,
                    replicas=tuple(p.replica_nodes),
                    isr=tuple(p.isr_nodes),
                )
                for p in t.partitions
            }
            described[t.name] = TopicMetadata(t.name, t.error_code, topic_id, partitions)
        for b in brokers:
            self._nodes[b.node_id] = (b.host, b.port)
        self._controller = controller
        for name in topics if topics is not None else list(self._topics):
            self._topics.pop(name, None)
        self._topics.update(described)
        return ClusterMetadata(brokers, controller, response.cluster_id if version >= 2 else None, described)

    def _partition(self, topic: str, partition: int, *, refresh: bool = False) -> PartitionMetadata | None:
        if refresh or topic not in self._topics:
            self.metadata([topic])
        known = self._topics.get(topic)
        return None if known is None else known.partitions.get(partition)

    def leader(self, topic: str, partition: int) -> int:
        """The leader's node id, waiting (bounded by the retries) while there is none; -1 if there is
        still none afterwards."""
        meta = self._partition(topic, partition)
        for attempt in range(self.retries + 1):
            if meta is not None and meta.leader >= 0:
                return meta.leader
            if attempt < self.retries:
                self._backoff(attempt)
                meta = self._partition(topic, partition, refresh=True)
        return -1

    def _backoff(self, attempt: int) -> None:
        time.sleep(min(0.05 * (2**attempt), 1.0))

    def _on_leader(
        self,
        topic: str,
        partition: int,
        call: Callable[[KafkaConnection], _T],
        error_of: Callable[[_T], int],
    ) -> _T:
        """Run `call` on the partition leader; on a stale-metadata error, or when the leader cannot be
        connected to, refresh and retry (bounded); return the last answer as it is."""
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            node = self.leader(topic, partition)
            if node < 0:
                # No leader known (e.g. the topic does not exist): ask any broker, it answers the error.
                conn = self._home_connection()
            else:
                try:
                    conn = self._node_connection(node)
                except WireError:
                    if last:
                        raise
                    self._backoff(attempt)
                    self._topics.pop(topic, None)
                    continue
            result = call(conn)
            if last or error_of(result) not in _STALE_METADATA:
                return result
            self._backoff(attempt)
            self._topics.pop(topic, None)
        raise AssertionError("unreachable")  # pragma: no cover

    def topic_id(self, topic: str) -> uuid.UUID | None:
        """The topic's id from Metadata v10+, or None where the broker gives none (a Java client then
        asks Fetch at v12 at most, which names topics instead of ids)."""
        found = self._topic_id(topic)
        return None if found == _NO_TOPIC_ID else found

    def _topic_id(self, topic: str) -> uuid.UUID:
        known = self._topics.get(topic)
        if known is None or known.topic_id is None:
            conn = self._home_connection()
            if self._versions[(conn.host, conn.port)].get(METADATA, (0, 0))[1] >= 10:
                self.metadata([topic], version=self.max_version(METADATA, 12))
            known = self._topics.get(topic)
        if known is None or known.topic_id is None:
            # Sent as the zero id, the broker answers UNKNOWN_TOPIC_ID: a fair answer to report.
            return _NO_TOPIC_ID
        return known.topic_id

    # -- Produce, Fetch, ListOffsets

    def produce(
        self,
        topic: str,
        partition: int,
        records: bytes,
        *,
        version: int,
        acks: int = -1,
        timeout_ms: int | None = None,
        transactional_id: str | None = None,
        beyond_offer: bool = False,
    ) -> ProduceResult:
        """Send `records` (a raw record set, e.g. `encode_batches(batches)`) as one partition's data
        at Produce `version`. `timeout_ms` defaults to the client timeout. `beyond_offer`: send `version` even
        where the broker does not offer it (as for every request here: see `_send`)."""
        wait_ms = int(self.timeout * 1000) if timeout_ms is None else timeout_ms
        topic_id = self._topic_id(topic) if version >= 13 else None

        def call(conn: KafkaConnection) -> ProduceResult:
            data = ProduceRequest.TopicProduceData(
                partition_data=[ProduceRequest.TopicProduceData.PartitionProduceData(index=partition, records=records)]
            )
            if version >= 13:
                data.topic_id = topic_id
            else:
                data.name = topic
            request = ProduceRequest(acks=acks, timeout_ms=wait_ms, topic_data=[data])
            if version >= 3:
                request.transactional_id = transactional_id
            response = self._send(conn, request, version, beyond_offer=beyond_offer)
            if response is None:  # acks=0: no answer by design
                return ProduceResult(_NONE, -1, None, None, None, None)
            answer = _find_partition(
                response.responses, topic, topic_id, partition, lambda t: t.partition_responses, lambda p: p.index
            )
            if answer is None:
                raise _without_partition(conn, "Produce", version, topic, partition)
            return ProduceResult(
                error_code=answer.error_code,
                base_offset=answer.base_offset,
                log_append_time=answer.log_append_time_ms if version >= 2 else None,
                log_start_offset=answer.log_start_offset if version >= 5 else None,
                record_errors=[(e.batch_index, e.batch_index_error_message) for e in answer.record_errors]
                if version >= 8
                else None,
                error_message=answer.error_message if version >= 8 else None,
            )

        return self._on_leader(topic, partition, call, lambda r: r.error_code)

    def fetch(
        self,
        topic: str,
        partition: int,
        offset: int,
        *,
        version: int,
        max_bytes: int = 1 << 20,
        max_wait_ms: int = 10,
        min_bytes: int = 1,
        isolation_level: int = 0,
        beyond_offer: bool = False,
    ) -> FetchResult:
        """One partition from `offset` at Fetch `version` (a session-less fetch, as a plain consumer
        sends it: replica_id -1, session_id 0, session_epoch -1). `max_bytes` bounds both the
        response and the partition (a v0..2 request has only the partition bound). `max_wait_ms` is
        not 0 by default: Tansu 0.6.0 answers a Fetch with max_wait_ms=0 without any partition."""
        topic_id = self._topic_id(topic) if version >= 13 else None

        def call(conn: KafkaConnection) -> FetchResult:
            part = FetchRequest.FetchTopic.FetchPartition(
                partition=partition,
                fetch_offset=offset,
                partition_max_bytes=max_bytes,
                current_leader_epoch=-1,
                last_fetched_epoch=-1,
                log_start_offset=-1,
            )
            wanted = FetchRequest.FetchTopic(partitions=[part])
            if version >= 13:
                wanted.topic_id = topic_id
            else:
                wanted.topic = topic
            request = FetchRequest(
                max_wait_ms=max_wait_ms,
                min_bytes=min_bytes,
                max_bytes=max_bytes,
                isolation_level=isolation_level,
                session_id=0,
                session_epoch=-1,
                topics=[wanted],
                forgotten_topics_data=[],
                rack_id="",
            )
            if version >= 15:
                request.replica_state = FetchRequest.ReplicaState(replica_id=-1, replica_epoch=-1)
            else:
                request.replica_id = -1
            response = self._send(conn, request, version, beyond_offer=beyond_offer)
            answer = _find_partition(
                response.responses, topic, topic_id, partition, lambda t: t.partitions, lambda p: p.partition_index
            )
            if answer is None:
                top = getattr(response, "error_code", 0) if version >= 7 else 0
                if top:
                    return FetchResult(top, -1, None, None, b"")
                raise _without_partition(conn, "Fetch", version, topic, partition)
            return FetchResult(
                error_code=answer.error_code,
                high_watermark=answer.high_watermark,
                last_stable_offset=answer.last_stable_offset if version >= 4 else None,
                log_start_offset=answer.log_start_offset if version >= 5 else None,
                records=bytes(answer.records) if answer.records is not None else b"",
            )

        return self._on_leader(topic, partition, call, lambda r: r.error_code)

    def list_offsets(
        self,
        topic: str,
        partition: int,
        timestamp: int,
        *,
        version: int,
        isolation_level: int = 0,
        beyond_offer: bool = False,
    ) -> ListOffsetsResult:
        """ListOffsets for one partition: `timestamp` is a time in ms (the first offset whose
        timestamp is >= it, LO-*) or a special target: -1 latest, -2 earliest, -3 max timestamp (v7+),
        -4 earliest local (v8+), -5 latest tiered (v9+). The version is not checked against the
        target: what the broker does with a target older than its version is part of the answer.
        `isolation_level` is sent from v2 (0 read_uncommitted, 1 read_committed)."""

        def call(conn: KafkaConnection) -> ListOffsetsResult:
            part = ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(
                partition_index=partition, timestamp=timestamp, current_leader_epoch=-1, max_num_offsets=1
            )
            request = ListOffsetsRequest(
                replica_id=-1,
                isolation_level=isolation_level,
                topics=[ListOffsetsRequest.ListOffsetsTopic(name=topic, partitions=[part])],
                timeout_ms=int(self.timeout * 1000),
            )
            response = self._send(conn, request, version, beyond_offer=beyond_offer)
            answer = _find_partition(
                response.topics, topic, None, partition, lambda t: t.partitions, lambda p: p.partition_index
            )
            if answer is None:
                raise _without_partition(conn, "ListOffsets", version, topic, partition)
            if version == 0:
                offsets = tuple(answer.old_style_offsets or ())
                return ListOffsetsResult(answer.error_code, None, offsets[0] if offsets else -1, None, offsets)
            return ListOffsetsResult(
                error_code=answer.error_code,
                timestamp=answer.timestamp,
                offset=answer.offset,
                leader_epoch=answer.leader_epoch if version >= 4 else None,
            )

        return self._on_leader(topic, partition, call, lambda r: r.error_code)

    # -- topics and configs

    def _controller_connection(self) -> KafkaConnection:
        """The controller where the metadata names one (Kafka < 2.8 answers NOT_CONTROLLER
        elsewhere); any broker otherwise (KRaft and newer brokers forward)."""
        if self._controller is None and not self._nodes:
            self.metadata([])
        if self._controller is not None and self._controller in self._nodes:
            with contextlib.suppress(WireError):
                return self._node_connection(self._controller)
        return self._home_connection()

    def _on_controller(self, call: Callable[[KafkaConnection], _T], error_of: Callable[[_T], int]) -> _T:
        result = call(self._controller_connection())
        if error_of(result) == _NOT_CONTROLLER:
            self.metadata([])
            result = call(self._controller_connection())
        return result

    def _change_on_controller(self, topic: str, call: Callable[[KafkaConnection], ApiResult]) -> ApiResult:
        """`call`, a request that changes `topic`, on the controller; the topic's cached metadata is forgotten,
        whatever the answer, so that the next request reads it anew."""
        result = self._on_controller(call, lambda r: r.error_code)
        self._topics.pop(topic, None)
        return result

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int = 1,
        configs: Mapping[str, str] | None = None,
        *,
        assignments: Mapping[int, Sequence[int]] | None = None,
        version: int | None = None,
    ) -> ApiResult:
        """CreateTopics for one topic; on success wait (bounded by the client timeout) until Metadata
        shows a leader for every partition. A wait that runs out answers LEADER_NOT_AVAILABLE. `assignments`
        ({partition: replicas}, the first the preferred leader) places the replicas instead of `partitions` and
        `replication_factor`, which the request then leaves to them (-1)."""
        entries = [
            CreateTopicsRequest.CreatableTopic.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()
        ]
        placed = [
            CreateTopicsRequest.CreatableTopic.CreatableReplicaAssignment(partition_index=p, broker_ids=list(ids))
            for p, ids in sorted((assignments or {}).items())
        ]

        def call(conn: KafkaConnection) -> ApiResult:
            chosen = self._pick(conn, CREATE_TOPICS, version, 7)
            topic = CreateTopicsRequest.CreatableTopic(
                name=name,
                num_partitions=-1 if placed else partitions,
                replication_factor=-1 if placed else replication_factor,
                assignments=placed,
                configs=entries,
            )
            request = CreateTopicsRequest(topics=[topic], timeout_ms=int(self.timeout * 1000), validate_only=False)
            response = self._send(conn, request, chosen)
            answer = next((t for t in response.topics if t.name == name), None)
            if answer is None:
                return ApiResult(-1, f"CreateTopics v{chosen} answer does not mention {name!r}")
            return ApiResult(answer.error_code, answer.error_message if chosen >= 1 else None)

        result = self._change_on_controller(name, call)
        if result.error_code != _NONE:
            return result
        result = self._await_leaders(name, len(placed) or partitions)
        if result.error_code == _NONE:
            self._await_logs(name, len(placed) or partitions)
        return result

    def _await_leaders(self, name: str, partitions: int) -> ApiResult:
        """Until Metadata shows a leader for every partition, from any broker and then from each broker holding a
        replica: in a cluster of several, a broker may learn of the topic after another answered Metadata (Kafka's
        leader then answers UNKNOWN_TOPIC_ID for a while)."""
        deadline = time.monotonic() + self.timeout
        attempt = 0

        def led(meta: TopicMetadata | None) -> bool:
            return (
                meta is not None
                and meta.error_code == _NONE
                and len(meta.partitions) >= partitions
                and all(p.leader >= 0 for p in meta.partitions.values())
            )

        while True:
            meta = self.metadata([name]).topics.get(name)
            if led(meta):
                assert meta is not None
                holders = sorted({r for p in meta.partitions.values() for r in p.replicas})
                if len(holders) < 2 or all(led(self.metadata([name], node_id=n).topics.get(name)) for n in holders):
                    return ApiResult(_NONE, None)
            if time.monotonic() >= deadline:
                return ApiResult(
                    _LEADER_NOT_AVAILABLE,
                    f"topic {name!r} was created but Metadata shows no leader for every partition within "
                    f"{self.timeout:g} s",
                )
            _poll_pause(attempt)
            attempt += 1

    def _await_logs(self, name: str, partitions: int) -> None:
        """Until every partition's leader answers ListOffsets (latest) without a stale-metadata error: its log
        exists. Metadata shows a leader before the leader has made its log (a KRaft broker publishes the new
        image to its metadata cache, then creates the partitions; a ZooKeeper-mode broker's LeaderAndIsr
        arrives after the controller's answer), and the log's first segment is dated by the broker's clock when
        it is made: a caller that sets the clock and creates a topic must know the segment was made at that
        clock before it moves it (segment.ms rolls count from that date). Bounded by the client timeout; a
        partition that still answers an error then is left to the requests that follow, which see it."""
        deadline = time.monotonic() + self.timeout
        offered = self.api_versions().get(LIST_OFFSETS)
        if offered is None:
            return  # a broker without ListOffsets: nothing to ask (its suites say what it lacks)
        version = max(offered[0], min(1, offered[1]))
        for partition in range(partitions):
            attempt = 0
            while True:
                try:
                    answer = self.list_offsets(name, partition, _LATEST, version=version)
                except WireError:
                    return
                if answer.error_code not in _STALE_METADATA or time.monotonic() >= deadline:
                    break
                _poll_pause(attempt)
                attempt += 1

    def delete_topics(self, names: Iterable[str], *, version: int | None = None) -> dict[str, ApiResult]:
        """DeleteTopics; {name: (error_code, error_message)} (messages from v5)."""
        wanted = list(names)
        if not wanted:
            return {}

        def call(conn: KafkaConnection) -> dict[str, ApiResult]:
            chosen = self._pick(conn, DELETE_TOPICS, version, 6)
            if chosen >= 6:
                states = [DeleteTopicsRequest.DeleteTopicState(name=n, topic_id=_NO_TOPIC_ID) for n in wanted]
                request = DeleteTopicsRequest(topics=states, timeout_ms=int(self.timeout * 1000))
            else:
                request = DeleteTopicsRequest(topic_names=wanted, timeout_ms=int(self.timeout * 1000))
            response = self._send(conn, request, chosen)
            return {
                r.name: ApiResult(r.error_code, r.error_message if chosen >= 5 else None) for r in response.responses
            }

        def worst(results: dict[str, ApiResult]) -> int:
            return _NOT_CONTROLLER if any(r.error_code == _NOT_CONTROLLER for r in results.values()) else _NONE

        results = self._on_controller(call, worst)
        for name in wanted:
            self._topics.pop(name, None)
        return results

    def _describe(self, topic: str, version: int | None, node: int | None = None) -> tuple[int, Any]:
        conn = self._home_connection() if node is None else self._node_connection(node)
        chosen = self._pick(conn, DESCRIBE_CONFIGS, version, 4)
        resource = DescribeConfigsRequest.DescribeConfigsResource(
            resource_type=_TOPIC_RESOURCE, resource_name=topic, configuration_keys=None
        )
        request = DescribeConfigsRequest(resources=[resource], include_synonyms=False, include_documentation=False)
        response = self._send(conn, request, chosen)
        result = next((r for r in response.results if r.resource_name == topic), None)
        if result is None:
            raise ApiError(DESCRIBE_CONFIGS, -1, f"the answer does not mention {topic!r}", f"v{chosen} of {topic}")
        if result.error_code != _NONE:
            raise ApiError(DESCRIBE_CONFIGS, result.error_code, result.error_message, f"v{chosen} of {topic}")
        return chosen, result

    def describe_configs(self, topic: str, *, version: int | None = None, node: int | None = None) -> dict[str, str]:
        """The topic's effective configs {name: value} as broker `node` shows them (any broker by default:
        each applies a config change when it replays it, KRaft); entries whose value is null (sensitive or
        unset) are left out. Raises ApiError on a broker error."""
        _, result = self._describe(topic, version, node)
        return {c.name: c.value for c in result.configs if c.value is not None}

    def alter_configs(
        self,
        topic: str,
        configs: Mapping[str, str | None],
        *,
        incremental: bool | None = None,
        version: int | None = None,
    ) -> ApiResult:
        """Set (or, for a None value, delete) per-topic configs. IncrementalAlterConfigs when the
        broker offers it (or `incremental=True`); otherwise AlterConfigs, which replaces the whole set
        of overrides, so the current overrides are read first and merged."""
        conn = self._home_connection()
        offered = self._versions[(conn.host, conn.port)]
        use_incremental = INCREMENTAL_ALTER_CONFIGS in offered if incremental is None else incremental
        if use_incremental:
            chosen = self._pick(conn, INCREMENTAL_ALTER_CONFIGS, version, 1)
            entry = IncrementalAlterConfigsRequest.AlterConfigsResource.AlterableConfig
            changes = [
                entry(name=k, config_operation=_OP_DELETE if v is None else _OP_SET, value=v)
                for k, v in configs.items()
            ]
            request: Any = IncrementalAlterConfigsRequest(
                resources=[
                    IncrementalAlterConfigsRequest.AlterConfigsResource(
                        resource_type=_TOPIC_RESOURCE, resource_name=topic, configs=changes
                    )
                ],
                validate_only=False,
            )
            response = self._send(conn, request, chosen)
        else:
            chosen = self._pick(conn, ALTER_CONFIGS, version, 2)
            described_version, described = self._describe(topic, None)
            merged: dict[str, str] = {}
            for c in described.configs:
                override = (
                    c.config_source == _DYNAMIC_TOPIC_CONFIG if described_version >= 1 else not c.is_default
                )
                if override and c.value is not None:
                    merged[c.name] = c.value
            for k, v in configs.items():
                if v is None:
                    merged.pop(k, None)
                else:
                    merged[k] = v
            plain = AlterConfigsRequest.AlterConfigsResource.AlterableConfig
            request = AlterConfigsRequest(
                resources=[
                    AlterConfigsRequest.AlterConfigsResource(
                        resource_type=_TOPIC_RESOURCE,
                        resource_name=topic,
                        configs=[plain(name=k, value=v) for k, v in merged.items()],
                    )
                ],
                validate_only=False,
            )
            response = self._send(conn, request, chosen)
        answer = next((r for r in response.responses if r.resource_name == topic), None)
        if answer is None:
            return ApiResult(-1, f"{api_name(int(request.API_KEY))} answer does not mention {topic!r}")
        return ApiResult(answer.error_code, answer.error_message)

    def elect_leaders(
        self, topic: str, partition: int, *, election_type: int = 0, version: int | None = None
    ) -> ApiResult:
        """ElectLeaders for one partition (election_type 0 preferred, 1 unclean; v1+). Raises
        UnsupportedVersion where the broker does not offer ElectLeaders."""

        def call(conn: KafkaConnection) -> ApiResult:
            chosen = self._pick(conn, ELECT_LEADERS, version, 2)
            request = ElectLeadersRequest(
                election_type=election_type,
                topic_partitions=[ElectLeadersRequest.TopicPartitions(topic=topic, partitions=[partition])],
                timeout_ms=int(self.timeout * 1000),
            )
            response = self._send(conn, request, chosen)
            if chosen >= 1 and response.error_code != _NONE:
                return ApiResult(response.error_code, None)
            return _partition_result(
                f"ElectLeaders v{chosen}", response.replica_election_results, topic, partition,
                lambda t: t.partition_result, lambda p: p.partition_id,
            )  # fmt: skip

        return self._change_on_controller(topic, call)

    def alter_partition_reassignments(
        self, topic: str, partition: int, replicas: Sequence[int], *, version: int | None = None
    ) -> ApiResult:
        """AlterPartitionReassignments for one partition: its replicas become `replicas`, in that order (the first
        is the preferred leader). The answer says the reassignment started; Metadata shows when it is done. Raises
        UnsupportedVersion where the broker does not offer it (Kafka before 2.4)."""

        def call(conn: KafkaConnection) -> ApiResult:
            chosen = self._pick(conn, ALTER_PARTITION_REASSIGNMENTS, version, 1)
            wanted = AlterPartitionReassignmentsRequest.ReassignableTopic
            request = AlterPartitionReassignmentsRequest(
                timeout_ms=int(self.timeout * 1000),
                topics=[wanted(name=topic, partitions=[
                    wanted.ReassignablePartition(partition_index=partition, replicas=list(replicas))])],
            )  # fmt: skip
            response = self._send(conn, request, chosen)
            if response.error_code != _NONE:
                return ApiResult(response.error_code, response.error_message)
            return _partition_result(
                f"AlterPartitionReassignments v{chosen}", response.responses, topic, partition,
                lambda t: t.partitions, lambda p: p.partition_index,
            )  # fmt: skip

        return self._change_on_controller(topic, call)


def _poll_pause(attempt: int) -> None:
    """The pause before asking again whether a new topic is ready (its leaders known, its logs made): short and
    capped at 50 ms, as a broker's metadata catches up within tens of milliseconds; a pause that doubled up to half
    a second overslept it, which was four tenths of a three-node run."""
    time.sleep(min(0.005 * (2**attempt), 0.05))


def _best(offered_by_broker: Mapping[int, tuple[int, int]], api_key: int, wanted: int) -> int:
    offered = offered_by_broker.get(api_key)
    ours = SUPPORTED_VERSIONS.get(api_key)
    if offered is None or ours is None:
        who = "the broker" if offered is None else f"kafka-python {KAFKA_PYTHON_VERSION}"
        raise UnsupportedVersion(
            f"{who} does not offer {api_name(api_key)} at all", api_key=api_key, version=wanted, offered=offered
        )
    best = min(wanted, offered[1], ours[1])
    if best < max(offered[0], ours[0]):
        raise UnsupportedVersion(
            f"no {api_name(api_key)} version <= v{wanted}: the broker offers v{offered[0]}..v{offered[1]}",
            api_key=api_key,
            version=wanted,
            offered=offered,
        )
    return best


def _without_partition(conn: KafkaConnection, api: str, version: int, topic: str, partition: int) -> WireError:
    """A broker's answer that lacks the partition it was asked about: a breach of the protocol, the response bytes
    attached by the connection."""
    return WireError(
        f"broker at {conn.address} answered {api} v{version} without partition {topic}-{partition}: "
        "it does not follow the protocol; see the attached response bytes",
        address=conn.address,
    )


def _find_partition(
    topics: Iterable[Any],
    name: str,
    topic_id: uuid.UUID | None,
    partition: int,
    partitions_of: Callable[[Any], Iterable[Any]],
    index_of: Callable[[Any], int],
) -> Any | None:
    """The answer for `partition` of the topic called `name` (or with `topic_id`, from the versions
    that address topics by id)."""
    for t in topics:
        t_name = getattr(t, "name", None) or getattr(t, "topic", None)
        t_id = getattr(t, "topic_id", None) if topic_id is not None else None
        if t_name == name or (topic_id is not None and t_id == topic_id):
            for p in partitions_of(t):
                if index_of(p) == partition:
                    return p
    return None


def _partition_result(
    answer: str,
    topics: Iterable[Any],
    name: str,
    partition: int,
    partitions_of: Callable[[Any], Iterable[Any]],
    index_of: Callable[[Any], int],
) -> ApiResult:
    """The error code and message `answer` (an API and its version) gives for `partition` of the topic called
    `name`, or -1 and a sentence where it does not mention that partition."""
    found = _find_partition(topics, name, None, partition, partitions_of, index_of)
    if found is not None:
        return ApiResult(found.error_code, found.error_message)
    return ApiResult(-1, f"{answer} answer does not mention {name}-{partition}")
