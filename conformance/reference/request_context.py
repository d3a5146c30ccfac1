"""What every Kafka request handler of the reference broker works with: the cluster-wide state of the
Kafka side (`KafkaState`: the served implementation, the brokers' addresses, topic ids, producer ids) and
one request (`Request`: which broker it reached, from whom, its decoded body and the summary it logs).
The group coordinator (groups.py) is kept here too, one per served cluster: a reset gives a fresh one.

Every read or write of the model holds `served.lock` (the model is not thread-safe); `KafkaState` keeps
its own few fields under the same lock.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from conformance.reference.groups import GroupCoordinator
from conformance.reference.served import ServedCluster
from models.cluster import Partition
from models.constants import ErrorCode

# Error codes the Kafka side answers that the model never does (Errors.java numbering).
INVALID_TOPIC_EXCEPTION = 17
INVALID_REQUIRED_ACKS = 21
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
FETCH_SESSION_ID_NOT_FOUND = 70
UNKNOWN_TOPIC_ID = 100
COORDINATOR_NOT_AVAILABLE = 15
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53

NO_TOPIC_ID = uuid.UUID(int=0)
FIRST_PRODUCER_ID = 1000


class KafkaState:
    """The Kafka side's view of one `ServedCluster`, shared by every broker's listener.

    Topic ids are made here (the model has none): one random UUID per topic, stable for the topic's life
    (a topic deleted and created again gets a new one, as in Kafka), and forgotten when the control plane
    resets the cluster. Producer ids for InitProducerId count up from FIRST_PRODUCER_ID."""

    def __init__(self, served: ServedCluster, addresses: dict[int, tuple[str, int]], *, cluster_id: str) -> None:
        self.served = served
        self.addresses = addresses
        self.cluster_id = cluster_id
        self.lock = served.lock
        self._topic_ids: dict[str, uuid.UUID] = {}
        self._ids_of: object = served.impl
        self._producer_ids = itertools.count(FIRST_PRODUCER_ID)
        self._groups = GroupCoordinator()
        self._groups_of: object = served.impl
        # Notified after every append, so that a Fetch with nothing to answer waits for data (max_wait_ms).
        self.appended = threading.Condition()
        self.appends = 0
        self.stopping = threading.Event()

    # -- topics (call with `lock` held)

    def _current(self) -> None:
        if self._ids_of is not self.served.impl:  # reset by the control plane: a fresh cluster, no topics
            self._topic_ids.clear()
            self._ids_of = self.served.impl

    def topics(self) -> list[str]:
        """The cluster's topics, sorted."""
        return sorted({t for t, _ in self.served.cluster.partitions})

    def has_topic(self, name: str) -> bool:
        return any(t == name for t, _ in self.served.cluster.partitions)

    def topic_id(self, name: str) -> uuid.UUID:
        """The topic's id (made on first use); the zero id for a topic that does not exist."""
        self._current()
        if not self.has_topic(name):
            return NO_TOPIC_ID
        found = self._topic_ids.get(name)
        if found is None:
            found = self._topic_ids[name] = uuid.uuid4()
        return found

    def topic_by_id(self, topic_id: uuid.UUID) -> str | None:
        self._current()
        for name, known in self._topic_ids.items():
            if known == topic_id and self.has_topic(name):
                return name
        return None

    def forget(self, name: str) -> None:
        self._topic_ids.pop(name, None)
        self.groups().forget_topic(name)

    def partitions(self, name: str) -> list[Partition]:
        """The topic's partitions in index order ([] for an unknown topic)."""
        found = [p for (t, _), p in self.served.cluster.partitions.items() if t == name]
        return sorted(found, key=lambda p: p.index)

    def partition(self, name: str, index: int) -> Partition | None:
        return self.served.cluster.partitions.get((name, index))

    def next_producer_id(self) -> int:
        return next(self._producer_ids)

    # -- groups (no lock needed: the coordinator has its own)

    def groups(self) -> GroupCoordinator:
        """The group coordinator of the cluster served now: after a reset by the control plane the old one is
        closed (its waiting requests answered NOT_COORDINATOR) and a fresh one, with no group, takes over."""
        with self.lock:
            if self._groups_of is not self.served.impl:
                self._groups.close()
                self._groups = GroupCoordinator()
                self._groups_of = self.served.impl
            return self._groups

    def serves(self, coordinator: GroupCoordinator) -> bool:
        """Whether `coordinator` is still the cluster's (no reset since, no shutdown): a waiting JoinGroup or
        SyncGroup asks this while it waits."""
        return not self.stopping.is_set() and coordinator is self._groups and self._groups_of is self.served.impl

    def group_coordinator_broker(self) -> int | None:
        """The broker that coordinates every group: the lowest-numbered live broker (None: no broker is up)."""
        brokers = self.served.cluster.brokers
        return min((b for b in sorted(brokers) if brokers[b].alive), default=None)

    # -- appends

    def note_append(self) -> None:
        with self.appended:
            self.appends += 1
            self.appended.notify_all()

    def stop(self) -> None:
        """Shutdown: wake every Fetch waiting for data (keep new ones from waiting) and every waiting group request."""
        self.stopping.set()
        with self.appended:
            self.appended.notify_all()
        self._groups.close()  # waiting JoinGroups and SyncGroups are answered at once


@dataclass
class Request:
    """One decoded request on one broker. Handlers add to `summary` what the log line should say."""

    state: KafkaState
    broker: int
    client: str
    api_key: int
    version: int
    correlation_id: int
    body: Any
    summary: list[str] = field(default_factory=list)

    @property
    def served(self) -> ServedCluster:
        return self.state.served

    def note(self, text: str) -> None:
        self.summary.append(text)

    def note_partition(self, topic: str | None, partition: int, error: int, extra: str = "") -> None:
        """`topic-partition` and the error name when it is not NONE, e.g. "t-0 NOT_LEADER_OR_FOLLOWER"."""
        text = f"{topic}-{partition}"
        if error:
            text += f" {ErrorCode(error).name}"
        if extra:
            text += f" {extra}"
        self.summary.append(text)


def leader_error(part: Partition, broker: int, current_leader_epoch: int = -1) -> ErrorCode:
    """Whether `broker` may answer for `part` as its leader: NOT_LEADER_OR_FOLLOWER on another broker;
    a client's `current_leader_epoch` (-1: none) below the leader's is FENCED_LEADER_EPOCH, above it
    UNKNOWN_LEADER_EPOCH (KIP-320), as Kafka checks it."""
    if part.leader != broker:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    if current_leader_epoch >= 0:
        if current_leader_epoch < part.leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if current_leader_epoch > part.leader_epoch:
            return ErrorCode.UNKNOWN_LEADER_EPOCH
    return ErrorCode.NONE
