"""The reference broker's group coordinator: classic consumer groups (JoinGroup, SyncGroup, Heartbeat,
LeaveGroup) and the offsets they commit (OffsetCommit, OffsetFetch), kept in memory.

Groups are not part of the timestamp model: they live here, beside the Kafka listeners, never in models/
and never in a mutant, so a seeded mutant is served with the same groups as the model. They exist because
some clients cannot consume without one (KafkaJS has no manual assignment: its consumer joins a group and
seeks). A reset of the served cluster (the control plane's reset) drops every group and offset.

What is followed is Apache Kafka's classic GroupCoordinator (core/src/main/scala/kafka/coordinator/group/
GroupCoordinator.scala and GroupMetadata.scala, 3.9), state by state:

- a group is Empty, PreparingRebalance, CompletingRebalance or Stable. A JoinGroup from a new member, a
  leader's rejoin, a member whose protocols changed, a member that leaves or whose session expires, puts a
  Stable or CompletingRebalance (or Empty) group into PreparingRebalance (maybePrepareRebalance); the
  JoinGroups wait, and all are answered when every member has rejoined and no pending member is left
  (hasAllMembersJoined) or when the rebalance timeout (the largest of the members') passes, members that did
  not rejoin being removed (onCompleteJoin). A fresh group completes at once when its one member has
  joined: Kafka's group.initial.rebalance.delay.ms is 0 here, as in the suite's own Kafka
  (conformance/targets/brokers/kafka.py), so a single consumer joins without waiting;
- the leader is the first member (addMember), the next one in join order when it leaves; the protocol is
  the one most members vote for among those every member supports (selectProtocol), ties going to the
  earlier member's choice;
- JoinGroup v4+ with no member id is answered MEMBER_ID_REQUIRED with a new id, kept pending until that
  member joins with it or its session timeout passes (KIP-394);
- SyncGroup: followers wait for the leader's assignments (members the leader leaves out get an empty one);
  when the leader has not synced within the rebalance timeout, the members that have not synced are removed
  and the group rebalances (the pending-sync expiration of KIP-800);
- Heartbeat: UNKNOWN_MEMBER_ID for a member the group does not have, ILLEGAL_GENERATION for another
  generation, REBALANCE_IN_PROGRESS while the group prepares a rebalance;
- OffsetCommit (validateOffsetCommit, doCommitOffsets): generation -1 with no member commits to an Empty group
  (a group that does not exist is made, Empty); a member commits in its generation; REBALANCE_IN_PROGRESS while
  the group completes a rebalance. OffsetFetch answers committed offsets whatever the group's state.

Not here: static membership (KIP-345: a group_instance_id is not remembered, the member is treated as
dynamic), the consumer protocol of KIP-848, transactional offset commits, offset expiry, DescribeGroups,
ListGroups and DeleteGroups.

Session timeouts run on the broker's real time (`clock`, time.monotonic), not on the model's driven clock:
sessions are kept alive by the clients' heartbeat threads, which run on real time, while the suite steps
the brokers' clocks by hours and back (the clock-skew clauses) and a member would be expired, or kept
forever, by a step no client could see. The two are one clock in Kafka (its Time.SYSTEM); here only the
record timestamps follow the driven clock.

Every method holds the coordinator's lock. A JoinGroup or a follower's SyncGroup that cannot be answered at
once returns a `Pending` answer, which `wait` blocks on until it is answered, a deadline passes (checked by
`expire`, which every call and every waiter runs first: the effect of Kafka's timers, seen by any client at
its next request), or the coordinator is closed (NOT_COORDINATOR, as Kafka answers the waiting requests of a
group whose coordinator moved away: GroupCoordinator.onResignation).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum

# Error codes of the group APIs (Errors.java numbering); none of them is the timestamp model's.
NONE = 0
OFFSET_METADATA_TOO_LARGE = 12
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
ILLEGAL_GENERATION = 22
INCONSISTENT_GROUP_PROTOCOL = 23
INVALID_GROUP_ID = 24
UNKNOWN_MEMBER_ID = 25
INVALID_SESSION_TIMEOUT = 26
REBALANCE_IN_PROGRESS = 27
MEMBER_ID_REQUIRED = 79

ERROR_NAMES = {
    NONE: "NONE",
    OFFSET_METADATA_TOO_LARGE: "OFFSET_METADATA_TOO_LARGE",
    COORDINATOR_NOT_AVAILABLE: "COORDINATOR_NOT_AVAILABLE",
    NOT_COORDINATOR: "NOT_COORDINATOR",
    ILLEGAL_GENERATION: "ILLEGAL_GENERATION",
    INCONSISTENT_GROUP_PROTOCOL: "INCONSISTENT_GROUP_PROTOCOL",
    INVALID_GROUP_ID: "INVALID_GROUP_ID",
    UNKNOWN_MEMBER_ID: "UNKNOWN_MEMBER_ID",
    INVALID_SESSION_TIMEOUT: "INVALID_SESSION_TIMEOUT",
    REBALANCE_IN_PROGRESS: "REBALANCE_IN_PROGRESS",
    MEMBER_ID_REQUIRED: "MEMBER_ID_REQUIRED",
}

# Kafka's broker defaults: group.min.session.timeout.ms, group.max.session.timeout.ms, offset.metadata.max.bytes.
MIN_SESSION_TIMEOUT_MS = 6_000
MAX_SESSION_TIMEOUT_MS = 1_800_000
MAX_OFFSET_METADATA_BYTES = 4_096

NO_GENERATION = -1
NO_OFFSET = -1
NO_LEADER_EPOCH = -1

_WAKE_S = 0.25  # how often a waiting request looks again at the stop flag and whether it is still served


class GroupState(Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"


Protocols = tuple[tuple[str, bytes], ...]


@dataclass(frozen=True)
class JoinAnswer:
    """What a JoinGroup is answered: `members` (id, metadata) only for the leader."""

    error: int
    member_id: str
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    members: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True)
class SyncAnswer:
    error: int
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(frozen=True)
class Committed:
    """A committed offset, as OffsetFetch answers it."""

    offset: int
    leader_epoch: int = NO_LEADER_EPOCH
    metadata: str | None = ""


@dataclass
class Pending:
    """A JoinGroup or SyncGroup the coordinator answers later: `answer` is set when it does."""

    answer: JoinAnswer | SyncAnswer | None = None
    closing: JoinAnswer | SyncAnswer | None = None  # what it is answered if the coordinator closes first


@dataclass
class Member:
    member_id: str
    client_id: str
    protocol_type: str
    protocols: Protocols
    session_timeout_ms: int
    rebalance_timeout_ms: int
    expires_at: float
    join: list[Pending] = field(default_factory=list)  # JoinGroups waiting (awaiting join)
    sync: Pending | None = None  # a SyncGroup waiting for the leader (awaiting sync)
    assignment: bytes = b""

    @property
    def awaiting_join(self) -> bool:
        return bool(self.join)

    def vote(self, candidates: set[str]) -> str:
        """The member's first protocol among `candidates` (MemberMetadata.vote)."""
        return next(name for name, _ in self.protocols if name in candidates)


@dataclass
class Group:
    group_id: str
    state: GroupState = GroupState.EMPTY
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str | None = None
    members: dict[str, Member] = field(default_factory=dict)  # in join order
    pending_members: dict[str, float] = field(default_factory=dict)  # member id -> expiry (MEMBER_ID_REQUIRED)
    rebalance_deadline: float | None = None
    sync_deadline: float | None = None
    synced: set[str] = field(default_factory=set)  # members that sent SyncGroup in this generation

    def rebalance_timeout_s(self) -> float:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0) / 1000

    def has_all_members_joined(self) -> bool:
        return all(m.awaiting_join for m in self.members.values()) and not self.pending_members

    def supports(self, protocol_type: str, protocols: Protocols) -> bool:
        """Whether a member with these protocols may join (GroupMetadata.supportsProtocols)."""
        names = {name for name, _ in protocols}
        if self.state is GroupState.EMPTY:
            return bool(protocol_type) and bool(names)
        return self.protocol_type == protocol_type and bool(names & supported_by_all(self.members.values()))


def valid_session_timeout(session_timeout_ms: int) -> bool:
    return MIN_SESSION_TIMEOUT_MS <= session_timeout_ms <= MAX_SESSION_TIMEOUT_MS


def supported_by_all(members: Iterable[Member]) -> set[str]:
    """The protocol names every member lists (GroupMetadata.candidateProtocols)."""
    sets = [{name for name, _ in m.protocols} for m in members]
    return set.intersection(*sets) if sets else set()


def select_protocol(members: Sequence[Member]) -> str:
    """The protocol of the next generation: each member votes for its first protocol that every member
    supports, the most votes win (GroupMetadata.selectProtocol), a tie going to the earliest member's vote."""
    if not members:
        raise ValueError("no protocol for a group without members")
    candidates = supported_by_all(members)
    votes = [m.vote(candidates) for m in members]
    counts = Counter(votes)
    best = max(counts.values())
    return next(v for v in votes if counts[v] == best)


class GroupCoordinator:
    """Every group of one served cluster, with their committed offsets. Thread-safe; `clock` is the real
    time in seconds (time.monotonic; a test gives its own)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.groups: dict[str, Group] = {}
        self.offsets: dict[tuple[str, str, int], Committed] = {}
        self.closed = False
        self._cond = threading.Condition(threading.RLock())
        self._ids = itertools.count(1)

    # -- JoinGroup

    def join(
        self,
        group_id: str,
        member_id: str,
        *,
        client_id: str,
        protocol_type: str,
        protocols: Protocols,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        require_known_member_id: bool,
    ) -> JoinAnswer | Pending:
        """GroupCoordinator.handleJoinGroup: an answer now, or a Pending one the rebalance answers."""
        with self._cond:
            now = self._expire()
            if not group_id:
                return JoinAnswer(INVALID_GROUP_ID, member_id)
            if not valid_session_timeout(session_timeout_ms):
                return JoinAnswer(INVALID_SESSION_TIMEOUT, member_id)
            group = self.groups.get(group_id)
            if group is None:
                if member_id:
                    return JoinAnswer(UNKNOWN_MEMBER_ID, member_id)
                group = self.groups[group_id] = Group(group_id)
            if not group.supports(protocol_type, protocols):
                return JoinAnswer(INCONSISTENT_GROUP_PROTOCOL, member_id)
            timeouts = (session_timeout_ms, rebalance_timeout_ms if rebalance_timeout_ms >= 0 else session_timeout_ms)
            if not member_id:
                new_id = f"{client_id}-{next(self._ids)}"
                if require_known_member_id:
                    # KIP-394: the member learns its id first, and joins with it.
                    group.pending_members[new_id] = now + session_timeout_ms / 1000
                    return JoinAnswer(MEMBER_ID_REQUIRED, new_id)
                return self._add_member_and_rebalance(group, new_id, client_id, protocol_type, protocols, timeouts, now)
            if member_id in group.pending_members:
                del group.pending_members[member_id]
                return self._add_member_and_rebalance(
                    group, member_id, client_id, protocol_type, protocols, timeouts, now
                )
            member = group.members.get(member_id)
            if member is None or group.state is GroupState.EMPTY:
                return JoinAnswer(UNKNOWN_MEMBER_ID, member_id)
            unchanged = member.protocols == protocols
            if group.state is GroupState.COMPLETING_REBALANCE and unchanged:
                # The same member joining with the same metadata (it missed the answer): this generation again.
                return self._join_answer(group, member)
            if group.state is GroupState.STABLE and unchanged and group.leader != member_id:
                return self._join_answer(group, member)
            # PreparingRebalance; a leader's rejoin (it may need a new assignment); changed metadata.
            member.protocols = protocols
            member.session_timeout_ms, member.rebalance_timeout_ms = timeouts
            pending = Pending(closing=JoinAnswer(NOT_COORDINATOR, member_id))
            member.join.append(pending)
            self._maybe_prepare_rebalance(group, now)
            self._try_complete_join(group, now)
            return pending.answer or pending

    def _add_member_and_rebalance(
        self,
        group: Group,
        member_id: str,
        client_id: str,
        protocol_type: str,
        protocols: Protocols,
        timeouts: tuple[int, int],
        now: float,
    ) -> JoinAnswer | Pending:
        member = Member(member_id, client_id, protocol_type, protocols, *timeouts, expires_at=now + timeouts[0] / 1000)
        pending = Pending(closing=JoinAnswer(NOT_COORDINATOR, member_id))
        member.join.append(pending)
        if not group.members:
            group.leader = member_id
            group.protocol_type = protocol_type
        group.members[member_id] = member
        self._maybe_prepare_rebalance(group, now)
        self._try_complete_join(group, now)
        return pending.answer or pending

    @staticmethod
    def _join_answer(group: Group, member: Member) -> JoinAnswer:
        members = tuple((m.member_id, _metadata(m, group.protocol_name)) for m in group.members.values())
        return JoinAnswer(
            NONE,
            member.member_id,
            group.generation_id,
            group.protocol_type,
            group.protocol_name,
            group.leader or "",
            members if member.member_id == group.leader else (),
        )

    def _maybe_prepare_rebalance(self, group: Group, now: float) -> None:
        """GroupCoordinator.prepareRebalance, from Empty, Stable or CompletingRebalance."""
        if group.state is GroupState.PREPARING_REBALANCE:
            return
        if group.state is GroupState.COMPLETING_REBALANCE:
            self._fail_syncs(group, REBALANCE_IN_PROGRESS)
        group.sync_deadline = None
        group.state = GroupState.PREPARING_REBALANCE
        group.rebalance_deadline = now + group.rebalance_timeout_s()
        self._cond.notify_all()

    def _try_complete_join(self, group: Group, now: float, *, forced: bool = False) -> None:
        """GroupCoordinator.onCompleteJoin, once every member has rejoined or the rebalance timeout passed."""
        if group.state is not GroupState.PREPARING_REBALANCE or not (forced or group.has_all_members_joined()):
            return
        for member in [m for m in group.members.values() if not m.awaiting_join]:
            self._remove(group, member)
        group.pending_members.clear()
        group.generation_id += 1
        group.rebalance_deadline = None
        group.synced.clear()
        if not group.members:
            group.state, group.protocol_name, group.leader = GroupState.EMPTY, None, None
            self._cond.notify_all()
            return
        group.protocol_name = select_protocol(list(group.members.values()))
        group.state = GroupState.COMPLETING_REBALANCE
        group.sync_deadline = now + group.rebalance_timeout_s()
        for member in group.members.values():
            answer = self._join_answer(group, member)
            for pending in member.join:
                pending.answer = answer
            member.join.clear()
            member.expires_at = now + member.session_timeout_ms / 1000
        self._cond.notify_all()

    # -- SyncGroup

    def sync(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        *,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: Sequence[tuple[str, bytes]],
    ) -> SyncAnswer | Pending:
        """GroupCoordinator.handleSyncGroup: the member's assignment now (Stable, or the leader's SyncGroup), or
        a Pending answer the leader's SyncGroup answers."""
        with self._cond:
            now = self._expire()
            if not group_id:
                return SyncAnswer(INVALID_GROUP_ID)
            group = self.groups.get(group_id)
            member = group.members.get(member_id) if group is not None else None
            if group is None or member is None:
                return SyncAnswer(UNKNOWN_MEMBER_ID)
            if generation_id != group.generation_id:
                return SyncAnswer(ILLEGAL_GENERATION)
            if (protocol_type is not None and protocol_type != group.protocol_type) or (
                protocol_name is not None and protocol_name != group.protocol_name
            ):
                return SyncAnswer(INCONSISTENT_GROUP_PROTOCOL)
            if group.state is GroupState.EMPTY:
                return SyncAnswer(UNKNOWN_MEMBER_ID)
            if group.state is GroupState.PREPARING_REBALANCE:
                return SyncAnswer(REBALANCE_IN_PROGRESS)
            member.expires_at = now + member.session_timeout_ms / 1000
            group.synced.add(member_id)
            if group.state is GroupState.STABLE:
                return self._sync_answer(group, member)
            # CompletingRebalance: the leader's assignments settle the generation; a follower waits for them.
            member.sync = Pending(closing=SyncAnswer(NOT_COORDINATOR))
            pending = member.sync
            if member_id == group.leader:
                given = dict(assignments)
                for m in group.members.values():
                    m.assignment = given.get(m.member_id, b"")
                group.state = GroupState.STABLE
                group.sync_deadline = None
                for m in group.members.values():
                    if m.sync is not None:
                        m.sync.answer = self._sync_answer(group, m)
                        m.sync = None
                self._cond.notify_all()
            return pending.answer or pending

    @staticmethod
    def _sync_answer(group: Group, member: Member) -> SyncAnswer:
        return SyncAnswer(NONE, group.protocol_type, group.protocol_name, member.assignment)

    def _fail_syncs(self, group: Group, error: int) -> None:
        """resetAndPropagateAssignmentError: every waiting SyncGroup is answered `error`."""
        for member in group.members.values():
            member.assignment = b""
            if member.sync is not None:
                member.sync.answer = SyncAnswer(error)
                member.sync = None

    # -- Heartbeat, LeaveGroup

    def heartbeat(self, group_id: str, generation_id: int, member_id: str) -> int:
        """GroupCoordinator.handleHeartbeat's error."""
        with self._cond:
            now = self._expire()
            if not group_id:
                return INVALID_GROUP_ID
            group = self.groups.get(group_id)
            member = group.members.get(member_id) if group is not None else None
            if group is None or member is None:
                return UNKNOWN_MEMBER_ID
            if generation_id != group.generation_id:
                return ILLEGAL_GENERATION
            if group.state is GroupState.EMPTY:
                return UNKNOWN_MEMBER_ID
            member.expires_at = now + member.session_timeout_ms / 1000
            return REBALANCE_IN_PROGRESS if group.state is GroupState.PREPARING_REBALANCE else NONE

    def leave(self, group_id: str, member_ids: Sequence[str]) -> list[int]:
        """GroupCoordinator.handleLeaveGroup: one error per member leaving."""
        with self._cond:
            now = self._expire()
            group = self.groups.get(group_id)
            errors = []
            for member_id in member_ids:
                if group is None:
                    errors.append(UNKNOWN_MEMBER_ID)
                elif member_id in group.pending_members:
                    del group.pending_members[member_id]
                    self._try_complete_join(group, now)
                    errors.append(NONE)
                elif member_id in group.members:
                    self._remove_and_update(group, group.members[member_id], now)
                    errors.append(NONE)
                else:
                    errors.append(UNKNOWN_MEMBER_ID)
            return errors

    def _remove(self, group: Group, member: Member) -> None:
        """A member leaves: its waiting JoinGroup is answered UNKNOWN_MEMBER_ID (removeMemberAndUpdateGroup), the
        leadership passes to the next member in join order."""
        for pending in member.join:
            pending.answer = JoinAnswer(UNKNOWN_MEMBER_ID, "")
        if member.sync is not None:
            member.sync.answer = SyncAnswer(UNKNOWN_MEMBER_ID)
        del group.members[member.member_id]
        group.synced.discard(member.member_id)
        if group.leader == member.member_id:
            group.leader = next(iter(group.members), None)
        self._cond.notify_all()

    def _remove_and_update(self, group: Group, member: Member, now: float) -> None:
        self._remove(group, member)
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance(group, now)
        self._try_complete_join(group, now)

    # -- offsets

    def commit(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        offsets: Sequence[tuple[str, int, Committed]],
    ) -> list[int]:
        """GroupCoordinator.handleCommitOffsets: one error per (topic, partition, committed), in order."""
        with self._cond:
            now = self._expire()
            group = self.groups.get(group_id)
            if group is None:
                if generation_id >= 0:
                    return [ILLEGAL_GENERATION] * len(offsets)
                group = self.groups[group_id] = Group(group_id)  # a group that only stores offsets
            error = self._validate_commit(group, generation_id, member_id)
            if error == NONE and group.state is GroupState.COMPLETING_REBALANCE:
                error = REBALANCE_IN_PROGRESS
            if error != NONE:
                return [error] * len(offsets)
            member = group.members.get(member_id)
            if member is not None:
                member.expires_at = now + member.session_timeout_ms / 1000
            errors = []
            for topic, partition, committed in offsets:
                metadata = committed.metadata or ""
                if len(metadata.encode()) > MAX_OFFSET_METADATA_BYTES:
                    errors.append(OFFSET_METADATA_TOO_LARGE)
                    continue
                self.offsets[(group_id, topic, partition)] = committed
                errors.append(NONE)
            return errors

    @staticmethod
    def _validate_commit(group: Group, generation_id: int, member_id: str) -> int:
        """GroupCoordinator.validateOffsetCommit (no transactions, no static members)."""
        if generation_id < 0 and group.state is GroupState.EMPTY:
            return NONE  # the admin client, or a consumer that assigns its partitions itself
        if generation_id >= 0 or member_id:
            if member_id not in group.members:
                return UNKNOWN_MEMBER_ID
            return ILLEGAL_GENERATION if generation_id != group.generation_id else NONE
        return UNKNOWN_MEMBER_ID if group.state is not GroupState.EMPTY else NONE

    def fetch(self, group_id: str, partitions: Sequence[tuple[str, int]] | None) -> dict[tuple[str, int], Committed]:
        """GroupCoordinator.handleFetchOffsets: the committed offsets of the partitions asked (NO_OFFSET for
        one with none), or with None every partition the group has committed, whatever the group's state."""
        with self._cond:
            self._expire()
            if partitions is None:
                return {(t, p): c for (g, t, p), c in sorted(self.offsets.items()) if g == group_id}
            return {
                (t, p): self.offsets.get((group_id, t, p), Committed(NO_OFFSET, metadata="")) for t, p in partitions
            }

    def forget_topic(self, topic: str) -> None:
        """A deleted topic's offsets go with it (Kafka's GroupMetadataManager.cleanupGroupMetadata)."""
        with self._cond:
            for key in [k for k in self.offsets if k[1] == topic]:
                del self.offsets[key]

    # -- time, waiting, closing

    def _expire(self) -> float:
        """Run what Kafka's timers would have run by now: pending members and sessions that expired, rebalances
        and syncs whose timeout passed. The current time."""
        now = self.clock()
        for group in list(self.groups.values()):
            for member_id, expiry in list(group.pending_members.items()):
                if expiry <= now:
                    del group.pending_members[member_id]
                    self._try_complete_join(group, now)
            for member in list(group.members.values()):
                # A member waiting for its JoinGroup or SyncGroup answer is not expired (hasSatisfiedHeartbeat).
                if member.expires_at <= now and not member.awaiting_join and member.sync is None:
                    self._remove_and_update(group, member, now)
            if group.rebalance_deadline is not None and group.rebalance_deadline <= now:
                self._try_complete_join(group, now, forced=True)
            if group.sync_deadline is not None and group.sync_deadline <= now:
                # The leader did not sync in time: members that did not sync are removed, and the group rebalances.
                group.sync_deadline = None
                for member in [m for m in group.members.values() if m.member_id not in group.synced]:
                    self._remove(group, member)
                self._maybe_prepare_rebalance(group, now)
                self._try_complete_join(group, now)
        return now

    def _next_deadline(self) -> float | None:
        deadlines: list[float] = []
        for group in self.groups.values():
            deadlines += group.pending_members.values()
            deadlines += [m.expires_at for m in group.members.values()]
            deadlines += [d for d in (group.rebalance_deadline, group.sync_deadline) if d is not None]
        return min(deadlines, default=None)

    def wait(self, pending: Pending, *, served: Callable[[], bool]) -> JoinAnswer | SyncAnswer:
        """Block until `pending` is answered; `served()` turning False (the broker stopping, the cluster reset)
        closes the coordinator, and every waiting request is answered NOT_COORDINATOR."""
        with self._cond:
            while pending.answer is None:
                if self.closed or not served():
                    self.close()
                    break
                now = self._expire()
                if pending.answer is not None:
                    break
                deadline = self._next_deadline()
                timeout = _WAKE_S if deadline is None else min(_WAKE_S, max(0.0, deadline - now) + 0.001)
                self._cond.wait(timeout)
            assert pending.answer is not None or pending.closing is not None
            return pending.answer or pending.closing  # type: ignore[return-value]

    def close(self) -> None:
        """Answer every waiting request NOT_COORDINATOR and forget every group."""
        with self._cond:
            self.closed = True
            for group in self.groups.values():
                for member in group.members.values():
                    for pending in [*member.join, *([member.sync] if member.sync else [])]:
                        pending.answer = pending.closing
            self.groups.clear()
            self.offsets.clear()
            self._cond.notify_all()


def _metadata(member: Member, protocol_name: str | None) -> bytes:
    return next((meta for name, meta in member.protocols if name == protocol_name), b"")
