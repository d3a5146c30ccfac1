"""Replication, leader failover and clock skew (docs/rules.md, REP-1..4).

Brokers get skewed clocks; leadership moves along a generated failover sequence with produce requests in
between. Before each move the log and the lookups are compared with the model under their own clauses; after it
the records already written must read exactly as before (followers store the leader's bytes) and the
lookups must still agree, now under the REP clauses; LogAppendTime follows the new leader's clock.

Replication clauses not covered here, and why:
- REP.replica-index-agrees, REP.replica-segments-agree: index offsets and segment boundaries of each
  replica are internal; a 3.8+/4.1+ difference shows only indirectly (lookups, retention), which these
  tests compare under the REP lookup clause.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.capabilities import Capability
from conformance.judging.checks import check_equal
from conformance.judging.draws import Draws, draws
from conformance.judging.observables import Obs
from models.config import TopicConfig
from models.constants import ErrorCode, TimestampType
from models.profiles import Profile
from strategies.clocks import broker_clock_offsets
from strategies.failover import failover_sequences

from .helpers import (
    Suite,
    Twin,
    accepted_timestamps,
    check_fetch,
    check_list_offsets,
    check_produce,
    lifted_after,
    list_offsets_versions,
    newest_fetch,
    produce_version_for,
    producible_codecs,
    producible_magics,
    sent_batches,
    suite_settings,
    unique_topic,
)


@pytest.mark.clause(
    "REP.follower-no-restamp",
    "REP.lookups-agree-after-failover",
    "REP.lat-from-current-leader-clock",
    "VAL.lat-response-time",
)
@pytest.mark.requires(Capability.LEADER_FAILOVER)
@given(data=draws())
@suite_settings(30)
def test_failover_keeps_records(suite: Suite, data: Draws) -> None:
    """REP-1/2 (TV-15): after every leader move the stored records are unchanged, timestamp lookups answer as
    the model does, and new LogAppendTime appends carry the new leader's clock. With CLOCK_CONTROL the brokers'
    clocks are skewed and each move steps the new leader's clock; a wall-clock cluster (brokers on one machine,
    or NTP-synchronised) keeps its own clocks, and the producers' timestamps still spread around them."""
    data = suite.draws(data)
    lat = data.draw(st.booleans(), label='lat')
    twin = suite.twin()
    lat = lat and twin.has(Capability.LOG_APPEND_TIME)
    after = lifted_after(twin, suite.profile)
    config = TopicConfig(
        timestamp_type=TimestampType.LOG_APPEND_TIME if lat else TimestampType.CREATE_TIME, after_max_ms=after
    )
    topic = unique_topic("failover")
    twin.create_topic(topic, config)
    if twin.clock_control:
        skew = data.draw(broker_clock_offsets(twin.brokers()), label="broker skew")
        for broker, offset in skew.items():
            twin.set_clock(broker, twin.clock(broker) + offset)
    moves = data.draw(failover_sequences(twin.brokers(), initial_leader=twin.leader(topic), max_moves=4))
    magics = producible_magics(twin, suite.profile)
    codecs = producible_codecs(suite.impl.capabilities)
    sent: list[int] = []
    moved = False
    answers: dict[int, object] = {}
    for move in moves:
        for _ in range(move.records_before):
            now = twin.leader_clock(topic)
            ts = accepted_timestamps(now, config, suite.profile, specials=False, mistakes=False)
            request = data.draw(sent_batches(twin, ts, magics=magics, codecs=codecs, max_records=4))
            observed, expected = twin.produce(topic, request, produce_version=produce_version_for(request[0].magic,
                                                                                               suite.profile))
            if lat and moved and expected.error is ErrorCode.NONE:
                check_equal("REP.lat-from-current-leader-clock", Obs.PRODUCE_LOG_APPEND_TIME,
                            observed.log_append_time, expected.log_append_time, f"leader {twin.leader(topic)}")
            check_produce(observed, expected, config=config, error_clause="REP.follower-no-restamp")
            sent.extend(r.timestamp for b in request for r in b.records())
        # Before the move, the log and the lookups against the model under their own clauses (CON/CMP/VAL,
        # LO-2/LO-6): a fault of the leader's append or of the lookup itself is named there, so a difference
        # that first shows after the move is the move's (REP-1: the new leader serves its replica's copy).
        answers = _compare(
            twin, topic, config, suite.profile, sent, replication=False, where=f"before move to {move.broker}"
        )
        if twin.clock_control:
            twin.set_clock(move.broker, twin.clock(move.broker) + move.clock_skew_ms)
        twin.elect_leader(topic, move.broker)
        moved = True
        check_equal("REP.follower-no-restamp", Obs.LEADER, suite.impl.leader(topic, 0), twin.leader(topic))
        _compare(
            twin,
            topic,
            config,
            suite.profile,
            sent,
            replication=True,
            where=f"after move to {move.broker}",
            before=answers,
        )


def _compare(
    twin: Twin,
    topic: str,
    config: TopicConfig,
    profile: Profile,
    sent: list[int],
    *,
    replication: bool,
    where: str,
    before: dict[int, object] | None = None,
) -> dict[int, object]:
    """The served log and the timestamp lookups against the model: under the REP clauses after a move
    (`replication`), otherwise under the clauses of the append and the lookup. An answer after the move that
    is the one the old leader gave (`before`) did not change with the move: a difference from the model there
    is the lookup's own (LO-2/LO-6), judged under its clause. Returns the observed answers by target."""
    got, want = twin.fetch(topic, fetch_version=newest_fetch(profile))
    if replication:
        check_fetch(
            got,
            want,
            config=config,
            profile=profile,
            stored_clause="REP.follower-no-restamp",
            record_clause=lambda b: "REP.follower-no-restamp",
            header_clause=lambda b: "REP.follower-no-restamp",
            context=where,
        )
    else:
        check_fetch(got, want, config=config, profile=profile, context=where)
    observed_answers: dict[int, object] = {}
    if not twin.has(Capability.LIST_OFFSETS):
        return observed_answers
    version = list_offsets_versions(profile)[-1]
    targets = sorted({max(t + d, 0) for t in sent for d in (-1, 0, 1)})
    if twin.has(Capability.MAX_TIMESTAMP_LOOKUP):
        targets.append(-3)
    for target in targets:
        observed_answer, expected_answer = twin.list_offsets(topic, target, version=version)
        observed_answers[target] = observed_answer
        lookup_fault = before is not None and before.get(target) == observed_answer != expected_answer
        clause = "REP.lookups-agree-after-failover" if replication and not lookup_fault else None
        check_list_offsets(
            observed_answer,
            expected_answer,
            target=target,
            version=version,
            profile=profile,
            clause=clause,
            context=where,
            facts=twin.list_offsets_facts(topic),
        )
    return observed_answers


@pytest.mark.clause("REP.lat-not-clamped", "REP.backward-step-lookup", "VAL.lat-response-time")
@pytest.mark.requires(Capability.LOG_APPEND_TIME, Capability.CLOCK_CONTROL)
@given(data=draws())
@suite_settings(30)
def test_backward_clock_step(suite: Suite, data: Draws) -> None:
    """REP-2/3: when the leader's clock steps backwards LogAppendTime follows it (no clamp), and lookups still
    return the smallest offset with timestamp >= target, possibly from before the step."""
    data, twin = suite.start(data)
    config = TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME)
    topic = unique_topic("step-back")
    twin.create_topic(topic, config)
    leader = twin.leader(topic)
    magics = producible_magics(twin, suite.profile)
    codecs = producible_codecs(suite.impl.capabilities)
    stamps: list[int] = []
    for step in data.draw(st.lists(st.integers(-3_600_000, 60_000), min_size=1, max_size=6), label="clock steps"):
        twin.set_clock(leader, twin.clock(leader) + step)
        now = twin.clock(leader)
        request = data.draw(sent_batches(twin, st.just(now), magics=magics, codecs=codecs, max_records=3))
        observed, expected = twin.produce(
            topic, request, produce_version=produce_version_for(request[0].magic, suite.profile)
        )
        clause = "REP.lat-not-clamped" if stamps and now < max(stamps) else "VAL.lat-response-time"
        check_equal(
            clause, Obs.PRODUCE_LOG_APPEND_TIME, observed.log_append_time, expected.log_append_time, f"now={now}"
        )
        check_produce(observed, expected, config=config, error_clause=clause)
        stamps.append(now)
    if twin.has(Capability.LIST_OFFSETS):
        version = list_offsets_versions(suite.profile)[-1]
        for target in sorted({s + d for s in stamps for d in (-1, 0, 1)}):
            observed_answer, expected_answer = twin.list_offsets(topic, target, version=version)
            check_list_offsets(
                observed_answer,
                expected_answer,
                target=target,
                version=version,
                profile=suite.profile,
                clause="REP.backward-step-lookup",
                context=f"stamps {stamps}",
            )
