"""The reference broker's group coordinator (conformance/reference/groups.py) without a socket: its pure parts
(protocol choice, session timeout bounds) and its states driven by hand on a clock the test moves, each step
named after the GroupCoordinator behaviour of Apache Kafka it follows."""

from __future__ import annotations

import threading

import pytest

from conformance.reference import groups as g
from conformance.reference.groups import Committed, GroupCoordinator, GroupState, JoinAnswer, Member, Pending

RANGE, ROUND_ROBIN = ("range", b"r"), ("roundrobin", b"rr")


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _member(member_id: str, *names: str) -> Member:
    return Member(member_id, "c", "consumer", tuple((n, b"") for n in names), 10_000, 10_000, expires_at=0.0)


def _join(
    coordinator: GroupCoordinator, member_id: str = "", protocols: g.Protocols = (RANGE,), **kwargs: object
) -> JoinAnswer | Pending:
    options: dict[str, object] = {
        "client_id": "c",
        "protocol_type": "consumer",
        "protocols": protocols,
        "session_timeout_ms": 10_000,
        "rebalance_timeout_ms": 30_000,
        "require_known_member_id": False,
    }
    options.update(kwargs)
    return coordinator.join("grp", member_id, **options)  # type: ignore[arg-type]


def _joined(coordinator: GroupCoordinator, member_id: str = "") -> JoinAnswer:
    answer = _join(coordinator, member_id)
    assert isinstance(answer, JoinAnswer) and answer.error == g.NONE, answer
    return answer


def _stable(coordinator: GroupCoordinator) -> str:
    """One member in a Stable group (generation 1): its id."""
    first = _joined(coordinator)
    synced = coordinator.sync("grp", 1, first.member_id, protocol_type=None, protocol_name=None, assignments=[])
    assert synced == g.SyncAnswer(g.NONE, "consumer", "range", b"")
    return first.member_id


# ------------------------------------------------------------------------------------------------ pure parts


def test_the_protocol_is_the_most_voted_among_those_every_member_supports() -> None:
    members = [_member("a", "roundrobin", "range"), _member("b", "range", "roundrobin"), _member("c", "range")]
    assert g.select_protocol(members) == "range"  # roundrobin is not supported by c
    assert g.select_protocol(members[:2]) == "roundrobin"  # a tie: the earlier member's vote
    with pytest.raises(ValueError):
        g.select_protocol([])


@pytest.mark.parametrize(
    ("timeout_ms", "valid"), [(5_999, False), (6_000, True), (1_800_000, True), (1_800_001, False)]
)
def test_session_timeouts_within_kafkas_default_bounds(timeout_ms: int, valid: bool) -> None:
    assert g.valid_session_timeout(timeout_ms) is valid
    answer = _join(GroupCoordinator(Clock()), session_timeout_ms=timeout_ms)
    assert isinstance(answer, JoinAnswer) and (answer.error == g.INVALID_SESSION_TIMEOUT) is not valid


# ------------------------------------------------------------------------------------------------ joining


def test_a_single_member_joins_at_once_and_leads() -> None:
    coordinator = GroupCoordinator(Clock())
    answer = _joined(coordinator)
    assert (answer.generation_id, answer.leader, answer.protocol_name) == (1, answer.member_id, "range")
    assert answer.members == ((answer.member_id, b"r"),)  # the leader gets every member's metadata
    assert coordinator.groups["grp"].state is GroupState.COMPLETING_REBALANCE


def test_join_v4_asks_for_a_member_id_first() -> None:
    """KIP-394: MEMBER_ID_REQUIRED with a new id; the member joins with it; unclaimed, it expires."""
    clock = Clock()
    coordinator = GroupCoordinator(clock)
    asked = _join(coordinator, require_known_member_id=True)
    assert isinstance(asked, JoinAnswer) and asked.error == g.MEMBER_ID_REQUIRED and asked.member_id
    assert _joined(coordinator, asked.member_id).member_id == asked.member_id
    unclaimed = _join(coordinator, require_known_member_id=True)
    assert isinstance(unclaimed, JoinAnswer)
    clock.now += 11
    assert _join(coordinator, unclaimed.member_id) == JoinAnswer(g.UNKNOWN_MEMBER_ID, unclaimed.member_id)


def test_unknown_member_and_inconsistent_protocol() -> None:
    coordinator = GroupCoordinator(Clock())
    assert _join(coordinator, "nobody") == JoinAnswer(g.UNKNOWN_MEMBER_ID, "nobody")  # no such group
    _stable(coordinator)
    assert _join(coordinator, "nobody") == JoinAnswer(g.UNKNOWN_MEMBER_ID, "nobody")
    answer = _join(coordinator, protocols=(("sticky", b""),))
    assert isinstance(answer, JoinAnswer) and answer.error == g.INCONSISTENT_GROUP_PROTOCOL
    answer = _join(coordinator, protocol_type="connect")
    assert isinstance(answer, JoinAnswer) and answer.error == g.INCONSISTENT_GROUP_PROTOCOL


def test_a_second_member_rebalances_the_group_once_the_first_rejoins() -> None:
    coordinator = GroupCoordinator(Clock())
    first = _stable(coordinator)
    second = _join(coordinator)
    assert isinstance(second, Pending) and second.answer is None
    assert coordinator.heartbeat("grp", 1, first) == g.REBALANCE_IN_PROGRESS
    early = coordinator.sync("grp", 1, first, protocol_type=None, protocol_name=None, assignments=[])
    assert early == g.SyncAnswer(g.REBALANCE_IN_PROGRESS)
    rejoined = _joined(coordinator, first)
    assert (rejoined.generation_id, rejoined.leader) == (2, first)
    assert [m for m, _ in rejoined.members] == [first, second.answer.member_id]  # type: ignore[union-attr]
    follower = coordinator.sync(
        "grp", 2, second.answer.member_id, protocol_type=None, protocol_name=None, assignments=[]
    )  # type: ignore[union-attr]
    assert isinstance(follower, Pending) and follower.answer is None  # waits for the leader's assignments
    leader = coordinator.sync(
        "grp", 2, first, protocol_type="consumer", protocol_name="range",
        assignments=[(first, b"A"), (second.answer.member_id, b"B")],  # type: ignore[union-attr]
    )  # fmt: skip
    assert leader == g.SyncAnswer(g.NONE, "consumer", "range", b"A")
    assert follower.answer == g.SyncAnswer(g.NONE, "consumer", "range", b"B")
    assert coordinator.groups["grp"].state is GroupState.STABLE


def test_sync_and_heartbeat_errors() -> None:
    coordinator = GroupCoordinator(Clock())
    member = _stable(coordinator)
    sync = coordinator.sync
    assert sync("grp", 7, member, protocol_type=None, protocol_name=None, assignments=[]).error == g.ILLEGAL_GENERATION  # type: ignore[union-attr]
    assert sync("grp", 1, "x", protocol_type=None, protocol_name=None, assignments=[]).error == g.UNKNOWN_MEMBER_ID  # type: ignore[union-attr]
    wrong = sync("grp", 1, member, protocol_type=None, protocol_name="roundrobin", assignments=[])
    assert wrong.error == g.INCONSISTENT_GROUP_PROTOCOL  # type: ignore[union-attr]
    assert coordinator.heartbeat("grp", 1, member) == g.NONE
    assert coordinator.heartbeat("grp", 2, member) == g.ILLEGAL_GENERATION
    assert coordinator.heartbeat("grp", 1, "x") == g.UNKNOWN_MEMBER_ID
    assert coordinator.heartbeat("other", 1, member) == g.UNKNOWN_MEMBER_ID
    assert coordinator.heartbeat("", 1, member) == g.INVALID_GROUP_ID
    _join(coordinator)  # a new member: the group prepares a rebalance
    assert (
        sync("grp", 1, member, protocol_type=None, protocol_name=None, assignments=[]).error == g.REBALANCE_IN_PROGRESS
    )  # type: ignore[union-attr]


def test_a_member_that_does_not_rejoin_is_removed_after_the_rebalance_timeout() -> None:
    clock = Clock()
    coordinator = GroupCoordinator(clock)
    first = _stable(coordinator)
    second = _join(coordinator)
    assert isinstance(second, Pending)
    for _ in range(6):  # 30 s of heartbeats (within the 10 s session): they do not count as rejoining
        clock.now += 4.9
        assert coordinator.heartbeat("grp", 1, first) == g.REBALANCE_IN_PROGRESS
    assert second.answer is None
    clock.now += 0.7  # past the rebalance timeout (30 s)
    assert coordinator.heartbeat("grp", 1, first) == g.UNKNOWN_MEMBER_ID
    assert second.answer is not None and (second.answer.generation_id, second.answer.leader) == (
        2,
        second.answer.member_id,
    )  # type: ignore[union-attr]


def test_a_member_that_stops_heartbeating_is_removed_after_its_session_timeout() -> None:
    clock = Clock()
    coordinator = GroupCoordinator(clock)
    member = _stable(coordinator)
    clock.now += 9.9
    assert coordinator.heartbeat("grp", 1, member) == g.NONE
    clock.now += 9.9
    assert coordinator.heartbeat("grp", 1, member) == g.NONE
    clock.now += 10.1
    assert coordinator.heartbeat("grp", 1, member) == g.UNKNOWN_MEMBER_ID
    group = coordinator.groups["grp"]
    assert (group.state, group.generation_id, group.members) == (GroupState.EMPTY, 2, {})


def test_leaving_rebalances_the_others_and_passes_the_leadership_on() -> None:
    coordinator = GroupCoordinator(Clock())
    first = _stable(coordinator)
    pending = _join(coordinator)
    _joined(coordinator, first)
    assert isinstance(pending, Pending) and pending.answer is not None
    second = pending.answer.member_id
    assert coordinator.leave("grp", [first, "x"]) == [g.NONE, g.UNKNOWN_MEMBER_ID]
    rejoined = _joined(coordinator, second)
    assert (rejoined.generation_id, rejoined.leader) == (3, second)
    assert coordinator.leave("nope", [second]) == [g.UNKNOWN_MEMBER_ID]


# ------------------------------------------------------------------------------------------------ offsets


def test_offsets_commit_and_fetch() -> None:
    coordinator = GroupCoordinator(Clock())
    # Generation -1 and no member: a group that only stores offsets (made Empty).
    assert coordinator.commit("simple", -1, "", [("t", 0, Committed(5, 2, "m"))]) == [g.NONE]
    assert coordinator.fetch("simple", [("t", 0), ("t", 1)]) == {
        ("t", 0): Committed(5, 2, "m"),
        ("t", 1): Committed(g.NO_OFFSET, metadata=""),
    }
    assert coordinator.fetch("simple", None) == {("t", 0): Committed(5, 2, "m")}
    assert coordinator.commit("absent", 3, "m", [("t", 0, Committed(1))]) == [g.ILLEGAL_GENERATION]
    member = _stable(coordinator)
    assert coordinator.commit(
        "grp", 1, member, [("t", 0, Committed(7)), ("t", 1, Committed(8, metadata="x" * 5000))]
    ) == [
        g.NONE,
        g.OFFSET_METADATA_TOO_LARGE,
    ]
    assert coordinator.commit("grp", 2, member, [("t", 0, Committed(9))]) == [g.ILLEGAL_GENERATION]
    assert coordinator.commit("grp", 1, "x", [("t", 0, Committed(9))]) == [g.UNKNOWN_MEMBER_ID]
    assert coordinator.commit("grp", -1, "", [("t", 0, Committed(9))]) == [g.UNKNOWN_MEMBER_ID]  # not Empty
    assert coordinator.fetch("grp", [("t", 0)]) == {("t", 0): Committed(7)}
    coordinator.forget_topic("t")
    assert coordinator.fetch("grp", None) == {}


def test_commits_wait_for_the_rebalance_to_complete() -> None:
    coordinator = GroupCoordinator(Clock())
    member = _joined(coordinator).member_id  # CompletingRebalance: no SyncGroup yet
    assert coordinator.commit("grp", 1, member, [("t", 0, Committed(1))]) == [g.REBALANCE_IN_PROGRESS]


# ------------------------------------------------------------------------------------------------ waiting, closing


def test_a_waiting_join_is_answered_by_another_thread_and_close_answers_not_coordinator() -> None:
    coordinator = GroupCoordinator()
    first = _stable(coordinator)
    second = _join(coordinator)
    assert isinstance(second, Pending)
    answers: list[object] = []
    waiter = threading.Thread(target=lambda: answers.append(coordinator.wait(second, served=lambda: True)))
    waiter.start()
    _joined(coordinator, first)
    waiter.join(5)
    assert answers and answers[0].error == g.NONE  # type: ignore[attr-defined]
    third = _join(coordinator)
    assert isinstance(third, Pending)
    assert coordinator.wait(third, served=lambda: False) == JoinAnswer(g.NOT_COORDINATOR, third.closing.member_id)  # type: ignore[union-attr]
    assert coordinator.groups == {} and coordinator.offsets == {}
