"""The reference broker's Kafka APIs: what each request becomes on the served implementation, and the
table of APIs and versions the brokers offer (`APIS`, `offered_versions`).

Produce, Fetch and ListOffsets go to `served.impl` (the model or a seeded mutant, so a mutant that
answers differently is served as it answers) at the request's version; topics, partitions, leaders and
epochs come from `served.cluster`. A partition request that reaches a broker other than the
partition's leader gets NOT_LEADER_OR_FOLLOWER for that partition, with the current leader where the
version carries it (KIP-951). Topic administration is in `topics.py`.

Beyond the spec's APIs, the brokers answer what real clients need to produce (acks=0/1/all, idempotent
producers: InitProducerId), consume with manual assignment (assign + seek; OffsetForLeaderEpoch validates
positions after a leader change) or in a consumer group (FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
LeaveGroup, OffsetCommit, OffsetFetch: group_apis.py and groups.py, kept out of the model) and call
offsetsForTimes. There are no transactions: FindCoordinator for a transactional id answers
COORDINATOR_NOT_AVAILABLE, a transactional InitProducerId INVALID_REQUEST.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin import (
    AlterConfigsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    DescribeConfigsRequest,
    IncrementalAlterConfigsRequest,
)
from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetCommitRequest,
    OffsetFetchRequest,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    SyncGroupRequest,
)
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    FindCoordinatorRequest,
    MetadataRequest,
    MetadataResponse,
)
from kafka.protocol.producer import (
    InitProducerIdRequest,
    InitProducerIdResponse,
    ProduceRequest,
    ProduceResponse,
)

from conformance.reference import group_apis, topics
from conformance.reference.request_context import (
    FETCH_SESSION_ID_NOT_FOUND,
    INVALID_REQUIRED_ACKS,
    NO_TOPIC_ID,
    UNKNOWN_TOPIC_ID,
    Request,
    leader_error,
)
from models.cluster import Partition
from models.cluster import ProduceResponse as ModelProduceResponse
from models.codec import decode_batches, encode_batch
from models.constants import NO_PARTITION_LEADER_EPOCH, NOT_SERVED, ErrorCode, IsolationLevel
from models.errors import CodecError
from models.log import PartitionLog
from models.profiles import Profile

# API keys (the protocol guide's numbering).
PRODUCE, FETCH, LIST_OFFSETS, METADATA = 0, 1, 2, 3
OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP = 8, 9, 10, 11, 12, 13, 14
API_VERSIONS, CREATE_TOPICS, DELETE_TOPICS = 18, 19, 20
INIT_PRODUCER_ID, OFFSET_FOR_LEADER_EPOCH = 22, 23
DESCRIBE_CONFIGS, ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 32, 33, 44

_ACKS = (-1, 0, 1)


class NoAnswer(Exception):
    """The served model gives this request no answer (NOT_SERVED: a version the profile lists but does not
    serve, Produce v0-v2 on 4.0+): the connection is closed, as Kafka's network layer does (CNV-1)."""


@dataclass(frozen=True)
class Api:
    """One API the brokers serve: its request class (kafka-python), the handler, and the versions offered
    under a profile (Produce, Fetch and ListOffsets: the profile's ranges within what kafka-python
    encodes; the rest fixed)."""

    request: Any
    handle: Callable[[Request], Any]
    versions: Callable[[Profile], tuple[int, int]]

    @property
    def key(self) -> int:
        return int(self.request.API_KEY)

    @property
    def name(self) -> str:
        return str(self.request.name).removesuffix("Request")


def _within_kafka_python(request: Any, versions: tuple[int, int]) -> tuple[int, int]:
    return versions[0], min(versions[1], int(request.max_version))


def _fixed(low: int, high: int) -> Callable[[Profile], tuple[int, int]]:
    return lambda profile: (low, high)


def offered_versions(profile: Profile) -> dict[int, tuple[int, int]]:
    """{api_key: (min, max)} the brokers answer in ApiVersions under `profile`."""
    return {key: api.versions(profile) for key, api in sorted(APIS.items())}


# ------------------------------------------------------------------------------------------------
# ApiVersions


def api_versions_answer(profile: Profile, version: int, error: int = 0) -> Any:
    """The ApiVersions answer; with UNSUPPORTED_VERSION it is encoded at v0 whatever was asked (KIP-511)."""
    keys = [
        ApiVersionsResponse.ApiVersion(api_key=key, min_version=low, max_version=high)
        for key, (low, high) in offered_versions(profile).items()
    ]
    return ApiVersionsResponse(error_code=error, api_keys=keys, throttle_time_ms=0, version=version)


def handle_api_versions(req: Request) -> Any:
    req.note(f"{len(APIS)} apis")
    return api_versions_answer(req.served.profile, req.version)


# ------------------------------------------------------------------------------------------------
# Metadata


def handle_metadata(req: Request) -> Any:
    state, body, version = req.state, req.body, req.version
    meta = MetadataResponse
    brokers = [
        meta.MetadataResponseBroker(node_id=b, host=host, port=port, rack=None)
        for b, (host, port) in sorted(state.addresses.items())
    ]
    answers: list[Any] = []
    with state.lock:
        requested = body.topics
        if requested is None or (version == 0 and not requested):
            wanted: list[tuple[str | None, Any]] = [(name, None) for name in state.topics()]
        else:
            wanted = []
            for t in requested:
                topic_id = t.topic_id if version >= 10 else None
                if t.name is None and topic_id is not None and topic_id != NO_TOPIC_ID:
                    wanted.append((state.topic_by_id(topic_id), topic_id))
                else:
                    wanted.append((t.name, None))
        for name, by_id in wanted:
            if name is None:
                answers.append(
                    meta.MetadataResponseTopic(error_code=UNKNOWN_TOPIC_ID, name=None, topic_id=by_id or NO_TOPIC_ID)
                )
                req.note(f"id {by_id} UNKNOWN_TOPIC_ID")
                continue
            parts = state.partitions(name)
            if not parts:
                answers.append(
                    meta.MetadataResponseTopic(
                        error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name, topic_id=NO_TOPIC_ID, partitions=[]
                    )
                )
                req.note(f"{name} UNKNOWN_TOPIC_OR_PARTITION")
                continue
            answers.append(
                meta.MetadataResponseTopic(
                    error_code=0,
                    name=name,
                    topic_id=state.topic_id(name),
                    is_internal=False,
                    partitions=[_partition_metadata(req, p) for p in parts],
                )
            )
        if requested is None or len(answers) > 3:
            req.summary = [f"{len(answers)} topics"]
    return meta(
        throttle_time_ms=0,
        brokers=brokers,
        cluster_id=state.cluster_id,
        controller_id=min(state.addresses),
        topics=answers,
        version=version,
    )


def _partition_metadata(req: Request, part: Partition) -> Any:
    brokers = req.served.cluster.brokers
    replicas = list(part.replicas)
    offline = [b for b in replicas if not brokers[b].alive]
    leader_alive = brokers[part.leader].alive
    req.note(f"{part.topic}-{part.index} leader {part.leader} epoch {part.leader_epoch}")
    return MetadataResponse.MetadataResponseTopic.MetadataResponsePartition(
        error_code=0 if leader_alive else ErrorCode.LEADER_NOT_AVAILABLE,
        partition_index=part.index,
        leader_id=part.leader if leader_alive else -1,
        leader_epoch=part.leader_epoch,
        replica_nodes=replicas,
        isr_nodes=sorted(part.isr),
        offline_replicas=offline,
    )


def _addressed(answer: Any, wanted: Any, name_field: str, version: int) -> Any:
    """A topic's `answer` addressed as its request `wanted` addressed the topic: by id from version 13 on (Produce
    and Fetch alike), by name before, in the field the API calls `name_field` in both request and answer."""
    if version >= 13:
        answer.topic_id = wanted.topic_id
    else:
        setattr(answer, name_field, getattr(wanted, name_field))
    return answer


# ------------------------------------------------------------------------------------------------
# Produce


def handle_produce(req: Request) -> Any:
    state, body, version = req.state, req.body, req.version
    answers: list[Any] = []
    leaders: set[int] = set()
    appended = False
    with state.lock:
        for data in body.topic_data:
            name = data.name if version < 13 else state.topic_by_id(data.topic_id)
            partitions = []
            for pd in data.partition_data:
                if body.acks not in _ACKS:
                    error: Any = ModelProduceResponse(ErrorCode(INVALID_REQUIRED_ACKS))
                    answer = _produce_answer(pd.index, error, version)
                    req.note_partition(name, pd.index, INVALID_REQUIRED_ACKS, f"acks={body.acks}")
                else:
                    answer, ok = _produce_partition(req, name, pd.index, pd.records, leaders)
                    appended = appended or ok
                partitions.append(answer)
            topic = ProduceResponse.TopicProduceResponse(partition_responses=partitions)
            answers.append(_addressed(topic, data, "name", version))
    if appended:
        state.note_append()
    if body.acks == 0:
        req.note("acks=0: no answer")
        return None
    response = ProduceResponse(responses=answers, throttle_time_ms=0, version=version)
    if version >= 10 and leaders:
        response.node_endpoints = _node_endpoints(req, leaders, ProduceResponse.NodeEndpoint)
    return response


def _produce_partition(
    req: Request, name: str | None, index: int, records: bytes | None, leaders: set[int]
) -> tuple[Any, bool]:
    """One partition's answer, and whether something was appended."""
    state, version = req.state, req.version
    part = state.partition(name, index) if name is not None else None
    if part is None:
        code = UNKNOWN_TOPIC_ID if name is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        req.note_partition(name, index, code)
        return _produce_answer(index, ModelProduceResponse(ErrorCode(code)), version), False
    refused = leader_error(part, req.broker)
    if refused is not ErrorCode.NONE:
        req.note_partition(name, index, refused, f"(leader {part.leader})")
        answer = _produce_answer(index, ModelProduceResponse(refused), version)
        if version >= 10:
            answer.current_leader = answer.LeaderIdAndEpoch(leader_id=part.leader, leader_epoch=part.leader_epoch)
            leaders.add(part.leader)
        return answer, False
    assert name is not None
    try:
        batches = decode_batches(bytes(records or b""), verify_crc=False, legacy_zstd=True, keep_count_lies=True)
    except CodecError as exc:
        # VAL-9: bytes that do not decode at all; a wrong CRC decodes and is the validator's to refuse, and so
        # does a v2 RecordsCount lie over whole records (INVALID_RECORD from Kafka's record iterator, VAL-14).
        log = part.replicas[part.leader]
        response = ModelProduceResponse(
            ErrorCode.CORRUPT_MESSAGE, log_start_offset=log.log_start_offset, error_message=str(exc)
        ).as_of_version(version)
    else:
        response = req.served.impl.produce(name, index, batches, produce_version=version)
    if response.error is NOT_SERVED:
        raise NoAnswer(f"Produce v{version}: {response.error_message or 'not served'}")
    ok = response.error is ErrorCode.NONE
    req.note_partition(name, index, response.error, f"base {response.base_offset}" if ok else "")
    return _produce_answer(index, response, version), ok


def _produce_answer(index: int, response: ModelProduceResponse, version: int) -> Any:
    answer = ProduceResponse.TopicProduceResponse.PartitionProduceResponse(
        index=index, error_code=int(response.error), base_offset=response.base_offset
    )
    if version >= 2:
        answer.log_append_time_ms = response.log_append_time
    if version >= 5:
        answer.log_start_offset = response.log_start_offset
    if version >= 8:
        answer.record_errors = [
            answer.BatchIndexAndErrorMessage(batch_index=e.batch_index, batch_index_error_message=e.message)
            for e in response.record_errors
        ]
        answer.error_message = response.error_message
    return answer


def _node_endpoints(req: Request, nodes: set[int], endpoint: Any) -> list[Any]:
    return [
        endpoint(node_id=b, host=host, port=port, rack=None)
        for b, (host, port) in sorted(req.state.addresses.items())
        if b in nodes
    ]


# ------------------------------------------------------------------------------------------------
# Fetch


def handle_fetch(req: Request) -> Any:
    """Fetch, session-less: a request that names a fetch session gets FETCH_SESSION_ID_NOT_FOUND, and the
    answer's session id 0 tells clients there is none (they send full requests). With nothing to answer
    yet, the broker waits up to max_wait_ms for an append, as Kafka does for min_bytes."""
    state, body, version = req.state, req.body, req.version
    if version >= 7 and body.session_id != 0:
        req.note(f"session {body.session_id} FETCH_SESSION_ID_NOT_FOUND")
        return FetchResponse(
            throttle_time_ms=0, error_code=FETCH_SESSION_ID_NOT_FOUND, session_id=0, responses=[], version=version
        )
    deadline = time.monotonic() + max(0, body.max_wait_ms) / 1000
    while True:
        with state.lock:
            seen = state.appends
            req.summary = []
            answers, leaders, size, settled = _fetch_once(req)
        remaining = deadline - time.monotonic()
        if settled or size >= max(body.min_bytes, 1) or remaining <= 0 or state.stopping.is_set():
            break
        _wait_for_append(req, seen, remaining)
    response = FetchResponse(throttle_time_ms=0, error_code=0, session_id=0, responses=answers, version=version)
    if version >= 16 and leaders:
        response.node_endpoints = _node_endpoints(req, leaders, FetchResponse.NodeEndpoint)
    return response


def _wait_for_append(req: Request, seen: int, timeout: float) -> None:
    state = req.state
    with state.appended:
        state.appended.wait_for(lambda: state.appends != seen or state.stopping.is_set(), timeout=timeout)


def _fetch_once(req: Request) -> tuple[list[Any], set[int], int, bool]:
    """The answers, the leaders named in them, the record bytes, and whether an error settles the answer."""
    state, body, version = req.state, req.body, req.version
    budget = body.max_bytes if version >= 3 else 1 << 31
    answers: list[Any] = []
    leaders: set[int] = set()
    size = 0
    settled = False
    for wanted in body.topics:
        name = wanted.topic if version < 13 else state.topic_by_id(wanted.topic_id)
        partitions = []
        for p in wanted.partitions:
            limit = min(p.partition_max_bytes, budget - size)
            answer, records = _fetch_partition(req, name, p, leaders, limit, first=size == 0)
            settled = settled or answer.error_code != ErrorCode.NONE
            size += len(records)
            partitions.append(answer)
        topic = FetchResponse.FetchableTopicResponse(partitions=partitions)
        answers.append(_addressed(topic, wanted, "topic", version))
    return answers, leaders, size, settled


def _fetch_partition(
    req: Request, name: str | None, wanted: Any, leaders: set[int], limit: int, *, first: bool
) -> tuple[Any, bytes]:
    state, version = req.state, req.version
    index = wanted.partition
    part = state.partition(name, index) if name is not None else None
    if part is None:
        code = UNKNOWN_TOPIC_ID if name is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        req.note_partition(name, index, code)
        return _fetch_answer(index, code, version), b""
    refused = leader_error(part, req.broker, wanted.current_leader_epoch if version >= 9 else -1)
    if refused is not ErrorCode.NONE:
        req.note_partition(name, index, refused, f"(leader {part.leader} epoch {part.leader_epoch})")
        answer = _fetch_answer(index, refused, version)
        if version >= 12:
            answer.current_leader = answer.LeaderIdAndEpoch(leader_id=part.leader, leader_epoch=part.leader_epoch)
            leaders.add(part.leader)
        return answer, b""
    assert name is not None
    offset = wanted.fetch_offset
    # An offset outside [log start, log end] is the model's OFFSET_OUT_OF_RANGE (with -1 for both offsets).
    response = req.served.impl.fetch(name, index, offset, fetch_version=version)
    records = b""
    if response.error is ErrorCode.NONE:
        records = _records_within(response.batches, limit, at_least_one=first)
    count = f"at {offset}: {len(records)} bytes, hw {response.high_watermark}"
    req.note_partition(name, index, response.error, count)
    answer = _fetch_answer(index, response.error, version, response.high_watermark, response.log_start_offset)
    answer.records = records
    return answer, records


def _records_within(batches: Any, limit: int, *, at_least_one: bool) -> bytes:
    """The batches' bytes up to `limit`; the first partition with data in a response gets at least its
    first batch whatever the limits (KIP-74: a consumer must be able to make progress)."""
    out = bytearray()
    for batch in batches:
        encoded = encode_batch(batch)
        if len(out) + len(encoded) > limit and (out or not at_least_one):
            break
        out += encoded
    return bytes(out)


def _fetch_answer(
    index: int, error: int, version: int, high_watermark: int = -1, log_start_offset: int = -1
) -> Any:
    answer = FetchResponse.FetchableTopicResponse.PartitionData(
        partition_index=index, error_code=int(error), high_watermark=high_watermark, records=b""
    )
    if version >= 4:
        answer.last_stable_offset = high_watermark  # no transactions: the LSO is the high watermark
        answer.aborted_transactions = None
    if version >= 5:
        answer.log_start_offset = log_start_offset
    if version >= 11:
        answer.preferred_read_replica = -1
    return answer


# ------------------------------------------------------------------------------------------------
# ListOffsets


def handle_list_offsets(req: Request) -> Any:
    state, body, version = req.state, req.body, req.version
    isolation = IsolationLevel(body.isolation_level if version >= 2 else 0)
    answers = []
    with state.lock:
        for wanted in body.topics:
            partitions = [_list_offsets_partition(req, wanted.name, p, isolation) for p in wanted.partitions]
            answers.append(ListOffsetsResponse.ListOffsetsTopicResponse(name=wanted.name, partitions=partitions))
    return ListOffsetsResponse(throttle_time_ms=0, topics=answers, version=version)


def _list_offsets_partition(req: Request, name: str, wanted: Any, isolation: IsolationLevel) -> Any:
    version = req.version
    index = wanted.partition_index
    answer = ListOffsetsResponse.ListOffsetsTopicResponse.ListOffsetsPartitionResponse(partition_index=index)
    part = req.state.partition(name, index)
    if part is None:
        error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    else:
        error = leader_error(part, req.broker, wanted.current_leader_epoch if version >= 4 else -1)
    if error is not ErrorCode.NONE:
        req.note_partition(name, index, error, f"target {wanted.timestamp}")
        return _list_offsets_answer(answer, version, error, -1, -1, NO_PARTITION_LEADER_EPOCH)
    found = req.served.impl.list_offsets(name, index, wanted.timestamp, version=version, isolation=isolation)
    req.note_partition(name, index, found.error, f"target {wanted.timestamp}: offset {found.offset}")
    return _list_offsets_answer(answer, version, found.error, found.offset, found.timestamp, found.leader_epoch)


def _list_offsets_answer(answer: Any, version: int, error: int, offset: int, timestamp: int, epoch: int) -> Any:
    answer.error_code = int(error)
    if version == 0:
        # LO-7: v0 answers a list of offsets; the model gives its first (largest) element, -1 for none.
        answer.old_style_offsets = [offset] if error == ErrorCode.NONE and offset >= 0 else []
        return answer
    answer.offset = offset
    answer.timestamp = timestamp
    if version >= 4:
        answer.leader_epoch = epoch
    return answer


# ------------------------------------------------------------------------------------------------
# Idempotent producers and consumers' position checks


def handle_init_producer_id(req: Request) -> Any:
    """A producer id for an idempotent producer (no transactions here). A producer that names its id
    and epoch (v3+, KIP-360) gets the same id with the epoch bumped."""
    body, version = req.body, req.version
    if body.transactional_id is not None:
        req.note(f"transactional id {body.transactional_id!r}: INVALID_REQUEST (no transactions)")
        return InitProducerIdResponse(
            throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST, producer_id=-1, producer_epoch=-1, version=version
        )
    with req.state.lock:
        if version >= 3 and body.producer_id >= 0 and 0 <= body.producer_epoch < 32767:
            producer_id, epoch = body.producer_id, body.producer_epoch + 1
        else:
            producer_id, epoch = req.state.next_producer_id(), 0
    req.note(f"producer id {producer_id} epoch {epoch}")
    return InitProducerIdResponse(
        throttle_time_ms=0, error_code=0, producer_id=producer_id, producer_epoch=epoch, version=version
    )


def handle_offset_for_leader_epoch(req: Request) -> Any:
    state, body, version = req.state, req.body, req.version
    answers = []
    with state.lock:
        for wanted in body.topics:
            partitions = []
            for p in wanted.partitions:
                part = state.partition(wanted.topic, p.partition)
                if part is None:
                    error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    error = leader_error(part, req.broker, p.current_leader_epoch if version >= 2 else -1)
                epoch, end = -1, -1
                if part is not None and error is ErrorCode.NONE:
                    epoch, end = end_offset_for_epoch(part.replicas[part.leader], p.leader_epoch)
                req.note_partition(wanted.topic, p.partition, error, f"epoch {p.leader_epoch}: {epoch}/{end}")
                partitions.append(
                    OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult.EpochEndOffset(
                        error_code=int(error), partition=p.partition, leader_epoch=epoch, end_offset=end
                    )
                )
            answers.append(
                OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult(topic=wanted.topic, partitions=partitions)
            )
    return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=answers, version=version)


def end_offset_for_epoch(log: PartitionLog, requested: int) -> tuple[int, int]:
    """(epoch, end offset) for a requested leader epoch, as Kafka's leader-epoch cache answers it: the
    latest epoch ends at the log end; an older one at the start of the next higher epoch, reported under
    the largest epoch <= the requested one; an unknown or newer epoch is (-1, -1)."""
    entries = log.leader_epochs
    if requested < 0 or not entries:
        return -1, -1
    if requested == log.latest_epoch:
        return requested, log.log_end_offset
    higher = next(((e, s) for e, s in entries if e > requested), None)
    if higher is None:
        return -1, -1
    floor = [(e, s) for e, s in entries if e <= requested]
    return (floor[-1][0] if floor else requested), higher[1]


# ------------------------------------------------------------------------------------------------
# The table


def _produce_range(profile: Profile) -> tuple[int, int]:
    """Produce offered from v0 on every profile: Kafka 4.0 removed Produce v0-v2 yet still lists them in
    ApiVersions (KAFKA-18659: librdkafka will not compress otherwise) and closes the connection on them
    (CNV-1): the served model answers them NOT_SERVED, and the handler closes the connection (NoAnswer)."""
    return _within_kafka_python(ProduceRequest, (0, profile.produce_versions[1]))


def _profile_range(request: Any, field_name: str) -> Callable[[Profile], tuple[int, int]]:
    return lambda profile: _within_kafka_python(request, getattr(profile, field_name))


APIS: dict[int, Api] = {
    api.key: api
    for api in (
        Api(ProduceRequest, handle_produce, _produce_range),
        Api(FetchRequest, handle_fetch, _profile_range(FetchRequest, "fetch_versions")),
        Api(ListOffsetsRequest, handle_list_offsets, _profile_range(ListOffsetsRequest, "list_offsets_versions")),
        Api(MetadataRequest, handle_metadata, _fixed(0, 12)),
        Api(OffsetCommitRequest, group_apis.handle_offset_commit, _fixed(2, 8)),
        Api(OffsetFetchRequest, group_apis.handle_offset_fetch, _fixed(1, 8)),
        Api(FindCoordinatorRequest, group_apis.handle_find_coordinator, _fixed(0, 4)),
        Api(JoinGroupRequest, group_apis.handle_join_group, _fixed(0, 9)),
        Api(HeartbeatRequest, group_apis.handle_heartbeat, _fixed(0, 4)),
        Api(LeaveGroupRequest, group_apis.handle_leave_group, _fixed(0, 5)),
        Api(SyncGroupRequest, group_apis.handle_sync_group, _fixed(0, 5)),
        Api(ApiVersionsRequest, handle_api_versions, _fixed(0, 4)),
        Api(CreateTopicsRequest, topics.handle_create_topics, _fixed(0, 7)),
        Api(DeleteTopicsRequest, topics.handle_delete_topics, _fixed(0, 6)),
        Api(InitProducerIdRequest, handle_init_producer_id, _fixed(0, 5)),
        Api(OffsetForLeaderEpochRequest, handle_offset_for_leader_epoch, _fixed(0, 4)),
        Api(DescribeConfigsRequest, topics.handle_describe_configs, _fixed(0, 4)),
        Api(AlterConfigsRequest, topics.handle_alter_configs, _fixed(0, 2)),
        Api(IncrementalAlterConfigsRequest, topics.handle_incremental_alter_configs, _fixed(0, 1)),
    )
}
