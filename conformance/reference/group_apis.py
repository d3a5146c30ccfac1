"""The reference broker's coordinator APIs on the wire: FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
LeaveGroup, OffsetCommit and OffsetFetch, translated to and from the group coordinator (groups.py) with
kafka-python's request and response classes.

One broker coordinates every group: the lowest-numbered live broker (FindCoordinator answers it); a group
request that reaches another broker is answered NOT_COORDINATOR, as Kafka answers a group whose
__consumer_offsets partition another broker leads. There are no transactions: FindCoordinator for a
transactional id answers COORDINATOR_NOT_AVAILABLE.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.consumer import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
    SyncGroupResponse,
)
from kafka.protocol.metadata import FindCoordinatorResponse

from conformance.reference import groups
from conformance.reference.groups import Committed, GroupCoordinator, JoinAnswer, Pending, SyncAnswer
from conformance.reference.request_context import Request
from models.constants import ErrorCode

GROUP_KEY, TRANSACTION_KEY = 0, 1


def _name(error: int) -> str:
    return groups.ERROR_NAMES.get(error) or ErrorCode(error).name


def _coordinator_error(req: Request) -> int:
    """NONE when this broker coordinates groups; NOT_COORDINATOR, or COORDINATOR_NOT_AVAILABLE when no broker is up."""
    with req.state.lock:
        broker = req.state.group_coordinator_broker()
    if broker is None:
        return groups.COORDINATOR_NOT_AVAILABLE
    return groups.NONE if broker == req.broker else groups.NOT_COORDINATOR


def _wait(req: Request, coordinator: GroupCoordinator, answer: Any) -> Any:
    if isinstance(answer, Pending):
        return coordinator.wait(answer, served=lambda: req.state.serves(coordinator))
    return answer


# ------------------------------------------------------------------------------------------------
# FindCoordinator


def handle_find_coordinator(req: Request) -> Any:
    body, version = req.body, req.version
    key_type = body.key_type if version >= 1 else GROUP_KEY
    keys = list(body.coordinator_keys) if version >= 4 else [body.key]
    answers = [_coordinator_for(req, key_type, key) for key in keys]
    if version >= 4:
        coordinators = [
            FindCoordinatorResponse.Coordinator(
                key=key, node_id=node, host=host, port=port, error_code=error, error_message=message
            )
            for key, (error, message, node, host, port) in zip(keys, answers, strict=True)
        ]
        return FindCoordinatorResponse(throttle_time_ms=0, coordinators=coordinators, version=version)
    error, message, node, host, port = answers[0]
    return FindCoordinatorResponse(
        throttle_time_ms=0, error_code=error, error_message=message, node_id=node, host=host, port=port, version=version
    )


def _coordinator_for(req: Request, key_type: int, key: str) -> tuple[int, str | None, int, str, int]:
    """(error, message, node id, host, port) for one key."""
    if key_type == TRANSACTION_KEY:
        req.note(f"transaction {key!r} COORDINATOR_NOT_AVAILABLE")
        return groups.COORDINATOR_NOT_AVAILABLE, "the reference broker has no transaction coordinator", -1, "", -1
    if key_type != GROUP_KEY:
        req.note(f"key type {key_type} INVALID_REQUEST")
        return ErrorCode.INVALID_REQUEST, f"unknown coordinator type {key_type}", -1, "", -1
    with req.state.lock:
        broker = req.state.group_coordinator_broker()
    if broker is None:
        req.note(f"group {key!r} COORDINATOR_NOT_AVAILABLE")
        return groups.COORDINATOR_NOT_AVAILABLE, "no broker is up", -1, "", -1
    host, port = req.state.addresses[broker]
    req.note(f"group {key!r}: broker {broker}")
    return groups.NONE, None, broker, host, port


# ------------------------------------------------------------------------------------------------
# JoinGroup, SyncGroup, Heartbeat, LeaveGroup


def handle_join_group(req: Request) -> Any:
    body, version = req.body, req.version
    error = _coordinator_error(req)
    if error:
        answer: JoinAnswer = JoinAnswer(error, body.member_id)
    else:
        coordinator = req.state.groups()
        header = getattr(body, "header", None)
        answer = _wait(
            req,
            coordinator,
            coordinator.join(
                body.group_id,
                body.member_id,
                client_id=(getattr(header, "client_id", None) or "member"),
                protocol_type=body.protocol_type,
                protocols=tuple((p.name, bytes(p.metadata)) for p in body.protocols),
                session_timeout_ms=body.session_timeout_ms,
                rebalance_timeout_ms=body.rebalance_timeout_ms if version >= 1 else body.session_timeout_ms,
                require_known_member_id=version >= 4,  # KIP-394
            ),
        )
    req.note(f"group {body.group_id!r} member {answer.member_id!r}: {_name(answer.error)}")
    if answer.error == groups.NONE:
        req.note(f"generation {answer.generation_id} leader {answer.leader!r} protocol {answer.protocol_name}")
    member = JoinGroupResponse.JoinGroupResponseMember
    return JoinGroupResponse(
        throttle_time_ms=0,
        error_code=answer.error,
        generation_id=answer.generation_id,
        protocol_type=answer.protocol_type,
        # Nullable from v7 only: before, an answer without a protocol names "".
        protocol_name=answer.protocol_name if answer.protocol_name is not None or version >= 7 else "",
        leader=answer.leader,
        skip_assignment=False,
        member_id=answer.member_id,
        members=[member(member_id=m, group_instance_id=None, metadata=meta) for m, meta in answer.members],
        version=version,
    )


def handle_sync_group(req: Request) -> Any:
    body, version = req.body, req.version
    error = _coordinator_error(req)
    if error:
        answer: SyncAnswer = SyncAnswer(error)
    else:
        coordinator = req.state.groups()
        answer = _wait(
            req,
            coordinator,
            coordinator.sync(
                body.group_id,
                body.generation_id,
                body.member_id,
                protocol_type=body.protocol_type if version >= 5 else None,
                protocol_name=body.protocol_name if version >= 5 else None,
                assignments=[(a.member_id, bytes(a.assignment)) for a in body.assignments],
            ),
        )
    req.note(
        f"group {body.group_id!r} member {body.member_id!r} generation {body.generation_id}: {_name(answer.error)}"
    )
    return SyncGroupResponse(
        throttle_time_ms=0,
        error_code=answer.error,
        protocol_type=answer.protocol_type,
        protocol_name=answer.protocol_name,
        assignment=answer.assignment,
        version=version,
    )


def handle_heartbeat(req: Request) -> Any:
    body = req.body
    error = _coordinator_error(req) or req.state.groups().heartbeat(body.group_id, body.generation_id, body.member_id)
    req.note(f"group {body.group_id!r} member {body.member_id!r} generation {body.generation_id}: {_name(error)}")
    return HeartbeatResponse(throttle_time_ms=0, error_code=error, version=req.version)


def handle_leave_group(req: Request) -> Any:
    body, version = req.body, req.version
    member_ids = [m.member_id for m in body.members] if version >= 3 else [body.member_id]
    error = _coordinator_error(req)
    errors = [] if error else req.state.groups().leave(body.group_id, member_ids)
    req.note(
        f"group {body.group_id!r}: " + ", ".join(f"{m!r} {_name(e)}" for m, e in zip(member_ids, errors, strict=False))
    )
    if version < 3:
        # One member, whose error is the answer's.
        return LeaveGroupResponse(throttle_time_ms=0, error_code=error or errors[0], version=version)
    members = [
        LeaveGroupResponse.MemberResponse(member_id=m, group_instance_id=None, error_code=e)
        for m, e in zip(member_ids, errors, strict=True)
    ]
    return LeaveGroupResponse(throttle_time_ms=0, error_code=error, members=members, version=version)


# ------------------------------------------------------------------------------------------------
# OffsetCommit, OffsetFetch


def handle_offset_commit(req: Request) -> Any:
    body, version = req.body, req.version
    error = _coordinator_error(req)
    wanted: list[tuple[str, int, Committed]] = []
    unknown: set[tuple[str, int]] = set()
    with req.state.lock:
        for topic in body.topics:
            for p in topic.partitions:
                if req.state.partition(topic.name, p.partition_index) is None:
                    unknown.add((topic.name, p.partition_index))  # KafkaApis: UNKNOWN_TOPIC_OR_PARTITION
                    continue
                epoch = p.committed_leader_epoch if version >= 6 else groups.NO_LEADER_EPOCH
                wanted.append(
                    (topic.name, p.partition_index, Committed(p.committed_offset, epoch, p.committed_metadata))
                )
    if error:
        errors = [error] * len(wanted)
    else:
        errors = req.state.groups().commit(body.group_id, body.generation_id_or_member_epoch, body.member_id, wanted)
    outcome = {(t, p): e for (t, p, _), e in zip(wanted, errors, strict=True)}
    outcome.update({key: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION for key in unknown})
    topic_class = OffsetCommitResponse.OffsetCommitResponseTopic
    partition_class = topic_class.OffsetCommitResponsePartition
    answers = []
    for topic in body.topics:
        partitions = [
            partition_class(partition_index=p.partition_index, error_code=int(outcome[(topic.name, p.partition_index)]))
            for p in topic.partitions
        ]
        answers.append(topic_class(name=topic.name, partitions=partitions))
    for (t, p), e in sorted(outcome.items()):
        req.note(f"{t}-{p} {_name(e)}" if e else f"{t}-{p}")
    req.note(f"group {body.group_id!r} generation {body.generation_id_or_member_epoch}")
    return OffsetCommitResponse(throttle_time_ms=0, topics=answers, version=version)


def handle_offset_fetch(req: Request) -> Any:
    body, version = req.body, req.version
    error = _coordinator_error(req)
    if version >= 8:
        group_class = OffsetFetchResponse.OffsetFetchResponseGroup
        answers = [
            group_class(
                group_id=g.group_id,
                topics=[] if error else _fetched(req, g.group_id, g.topics, version),
                error_code=error,
            )
            for g in body.groups
        ]
        return OffsetFetchResponse(throttle_time_ms=0, groups=answers, version=version)
    if error and version >= 2:
        req.note(f"group {body.group_id!r}: {_name(error)}")
        return OffsetFetchResponse(throttle_time_ms=0, topics=[], error_code=error, version=version)
    topics = _fetched(req, body.group_id, body.topics, version, error=error)
    return OffsetFetchResponse(throttle_time_ms=0, topics=topics, error_code=groups.NONE, version=version)


def _fetched(req: Request, group_id: str, topics: Any, version: int, *, error: int = groups.NONE) -> list[Any]:
    """The response's topics for one group (v1 puts a coordinator error on every partition asked)."""
    asked = None if topics is None else [(t.name, p) for t in topics for p in t.partition_indexes]
    found = {} if error else req.state.groups().fetch(group_id, asked)
    if asked is None:
        asked = list(found)
    if version >= 8:
        topic_class = OffsetFetchResponse.OffsetFetchResponseGroup.OffsetFetchResponseTopics
        partition_class = topic_class.OffsetFetchResponsePartitions
    else:
        topic_class = OffsetFetchResponse.OffsetFetchResponseTopic
        partition_class = topic_class.OffsetFetchResponsePartition
    by_topic: dict[str, list[Any]] = {}
    for name, index in asked:
        committed = found.get((name, index), Committed(groups.NO_OFFSET))
        by_topic.setdefault(name, []).append(
            partition_class(
                partition_index=index,
                committed_offset=committed.offset,
                committed_leader_epoch=committed.leader_epoch,
                metadata=committed.metadata,
                error_code=error,
            )
        )
        req.note(f"{name}-{index} {_name(error) if error else committed.offset}")
    req.note(f"group {group_id!r}")
    return [topic_class(name=name, partitions=partitions) for name, partitions in by_topic.items()]
