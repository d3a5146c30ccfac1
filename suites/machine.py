"""The timestamp-contract state machine: producers with skewed clocks, broker clock moves, leader failover,
retention ticks, fetches at old and new versions, ListOffsets with every kind of target and configuration
changes, driven against an implementation and the reference model side by side.

`TimestampContractMachine` holds the rules and invariants; `machine_for(target_factory, reference_factory)`
probes what the target offers (`MachineSetup`) and returns the subclass Hypothesis runs, whose three rules
that draw from the target's offer (the topic configurations, the fetch versions) are made there. After every
step what the implementation shows is compared with the model under the clause the comparison enforces
(suites.helpers); invariants hold the KIP-33/KIP-79 guarantees: lookups for every produced timestamp,
LogAppendTime records reading their batch max, MAX_TIMESTAMP.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from conformance.judging.capabilities import Capability
from conformance.judging.checks import check_equal
from conformance.judging.observables import Obs
from conformance.targets.kinds.implementation import ImplementationFactory, UnsupportedOperation
from models.config import TopicConfig, effective_bounds
from models.constants import MAGIC_V1, MAGIC_V2, Codec, ErrorCode, TimestampType
from models.log import PartitionLog
from models.profiles import Profile, get_profile, narrow_versions
from models.records import AnyBatch, RecordSpec, build_batches
from strategies.clocks import ProducerClock, clock_moves, producer_clocks
from strategies.configs import topic_configs
from strategies.records import Invalidity, combinations, invalid_batches
from strategies.timestamps import around, unit_mistakes
from suites.helpers import (
    Twin,
    check_fetch,
    check_list_offsets,
    check_list_offsets_under,
    check_produce,
    list_offsets_versions,
    newest_fetch,
    producible_codecs,
    producible_magics,
    segment_clause,
    timestampless_segments,
)

TOPIC = "machine"
MAX_LOOKUP_TARGETS = 48
# The seed of a derandomized run (profiles ci, fast, broker). Left to itself Hypothesis derives it from the
# source of the machine class, so any change to this module's code would draw other programs and the known
# departures of the managed targets (their expectations files name this test) would come and go with it. The
# value is the one Hypothesis derived when the machine was last changed on purpose; change it only with them.
DERANDOMIZED_SEED = int(
    "82d00599164e6e9329b1e97a239e794c730c87c4dc1d3a45ffc7515fc195f9655161d5052caacc1336ba5663eeb1c634", 16
)


@dataclass(frozen=True)
class MachineSetup:
    """What one target and its reference model (same profile) give the machine to draw from."""

    target_factory: ImplementationFactory
    reference_factory: ImplementationFactory
    profile: Profile  # narrowed to the versions both sides serve
    pairs: tuple[tuple[int, Codec], ...]  # (magic, codec) the target can produce
    configs: st.SearchStrategy[TopicConfig]
    lo_versions: tuple[int, ...]
    fetch_versions: tuple[int, ...]  # the profile's oldest and newest

    @classmethod
    def probe(cls, target_factory: ImplementationFactory, reference_factory: ImplementationFactory) -> MachineSetup:
        probe = target_factory.build()
        capabilities = probe.capabilities
        offered = getattr(probe, "offered_versions", None)
        probe.close()
        profile = get_profile(str(getattr(reference_factory, "profile", "kafka-4.0")))
        if offered:
            profile = narrow_versions(profile, offered)  # the versions both sides serve
        magics = producible_magics(capabilities, profile)
        codecs = producible_codecs(capabilities)
        pairs = combinations(magics, codecs) if magics else ()
        types = [TimestampType.CREATE_TIME]
        if Capability.LOG_APPEND_TIME in capabilities:
            types.append(TimestampType.LOG_APPEND_TIME)
        if Capability.KIP_937_CONFIGS in capabilities or Capability.DIFFERENCE_CONFIG in capabilities:
            configs = topic_configs(
                profile, timestamp_types=tuple(types), bounded=True, retention=Capability.RETENTION in capabilities
            )
        else:
            # A target whose topics have its defaults only (librdkafka's mock cluster): the profile's defaults.
            configs = st.just(TopicConfig())
        return cls(
            target_factory=target_factory,
            reference_factory=reference_factory,
            profile=profile,
            pairs=pairs,
            configs=configs,
            lo_versions=list_offsets_versions(profile),
            fetch_versions=tuple(sorted({profile.fetch_versions[0], newest_fetch(profile)})),
        )


class TimestampContractMachine(RuleBasedStateMachine):
    """One topic-partition, several producers, three brokers; see the module docstring.

    Run the subclass `machine_for` returns: `create_topic`, `fetch` and `alter_config` become rules there,
    drawn from its `setup`."""

    setup: ClassVar[MachineSetup]

    def __init__(self) -> None:
        super().__init__()
        self.profile = self.setup.profile
        self.impl = self.setup.target_factory.build()
        self.twin = Twin(self.impl, self.setup.reference_factory)
        self.config = TopicConfig()
        self.producers: list[tuple[ProducerClock, int]] = []
        self.sent: list[int] = []  # every timestamp a producer sent (lookup targets)
        self.created = False
        self.diverged = False  # see produce()

    def has(self, *caps: Capability) -> bool:
        return self.twin.has(*caps)

    # ------------------------------------------------------------------ setup

    def create_topic(self, config: TopicConfig) -> None:
        """An @initialize rule of machine_for's subclass: config drawn from the setup's configurations."""
        self.config = config
        self.twin.create_topic(TOPIC, config)
        self.created = True

    # ------------------------------------------------------------------ rules

    @initialize(clock=producer_clocks(max_step_index=10))
    def first_producer(self, clock: ProducerClock) -> None:
        self.producers.append((clock, 0))

    @rule(clock=producer_clocks(max_step_index=10))
    def add_producer(self, clock: ProducerClock) -> None:
        self.producers.append((clock, 0))

    @precondition(lambda self: bool(self.producers) and bool(self.setup.pairs))
    @rule(data=st.data())
    def produce_burst(self, data: st.DataObject) -> None:
        """Several requests in a row: the log must grow for lookups and retention to mean anything."""
        if self.diverged:
            return
        for _ in range(data.draw(st.integers(1, 4), label="burst")):
            self.produce(data)

    @precondition(lambda self: bool(self.producers) and bool(self.setup.pairs))
    @rule(data=st.data())
    def produce_one(self, data: st.DataObject) -> None:
        if self.diverged:
            return
        self.produce(data)

    def produce(self, data: st.DataObject) -> None:
        if self.diverged:
            return
        profile = self.profile
        index = data.draw(st.integers(0, len(self.producers) - 1), label="producer")
        clock, sends = self.producers[index]
        self.producers[index] = (clock, sends + 1)
        now = self.twin.leader_clock(TOPIC)
        magic, codec = data.draw(st.sampled_from(self.setup.pairs), label="magic, codec")
        base = clock.read(now, sends)
        # A producer's timestamps: its clock around the send, sometimes -1, 0 or a unit mistake.
        ts = st.one_of(
            around(base, -5_000, 5_000),
            around(base, -5_000, 5_000),
            st.sampled_from((-1, 0)),
            unit_mistakes(now),
        )
        if magic in (MAGIC_V2, MAGIC_V1):
            invalid = data.draw(st.integers(0, 9), label="invalid?") == 0
        else:
            invalid = False
        if invalid:
            sent: tuple[AnyBatch, ...] = data.draw(
                invalid_batches(
                    ts,
                    magics=(magic,),
                    codecs=(codec,),
                    kinds=(
                        Invalidity.PRODUCER_LOG_APPEND_TIME,
                        Invalidity.HEADER_MAX_NOT_MAX,
                        Invalidity.NEGATIVE_DELTA,
                        Invalidity.WRAPPER_NOT_MAX,
                    )
                    if (magic == MAGIC_V2 or codec != 0)
                    else (Invalidity.PRODUCER_LOG_APPEND_TIME,),
                    max_records=5,
                ),
                label="invalid batch",
            )
        else:
            specs = data.draw(st.lists(ts, min_size=1, max_size=5), label="timestamps")
            if magic == MAGIC_V2 and specs and any(abs(t - specs[0]) >= 1 << 62 for t in specs):
                specs = specs[:1]
            sent = build_batches(
                [RecordSpec(t, b"k%d" % i, b"v") for i, t in enumerate(specs)], magic=magic, codec=codec
            )
        version = profile.produce_versions[1] if magic == MAGIC_V2 else 2
        observed, expected = self.twin.produce(TOPIC, sent, produce_version=version)
        for b in sent:
            self.sent.extend(r.timestamp for r in b.records())
        before, after = effective_bounds(self.config, profile)
        flagged = any(b.timestamp_type is TimestampType.LOG_APPEND_TIME for b in sent)
        if self.config.timestamp_type is TimestampType.LOG_APPEND_TIME and flagged:
            clause = "VAL.lat-flag-rejected-on-lat-topic"  # VAL-8: a producer may not set the bit
        elif self.config.timestamp_type is TimestampType.LOG_APPEND_TIME:
            clause = "VAL.lat-topic-skips-range-check"
        elif profile.range_rule.value == "symmetric":
            clause = "VAL.range-symmetric"
        else:
            clause = "VAL.range-before-after"
        check_produce(
            observed,
            expected,
            config=self.config,
            error_clause=clause,
            context=f"now={now} bounds=({before}, {after})",
        )
        if expected.error is not ErrorCode.NONE:
            self._compare_log("VAL.whole-batch-rejected")
        if observed.error is not expected.error or observed.base_offset != expected.base_offset:
            # Reached only when the difference is a known failure (the checks went on): the target's log
            # now differs from the model's, and every later comparison would only repeat this one under
            # other clauses' names. The rest of this example does nothing.
            self.diverged = True

    @precondition(lambda self: self.has(Capability.CLOCK_CONTROL))
    @rule(data=st.data(), move=clock_moves())
    def move_clock(self, data: st.DataObject, move: Any) -> None:
        if self.diverged:
            return
        broker = data.draw(st.sampled_from(self.twin.brokers()), label="broker")
        self.twin.set_clock(broker, move.apply(self.twin.clock(broker)))

    @precondition(lambda self: self.has(Capability.LEADER_FAILOVER))
    @rule(data=st.data())
    def move_leader(self, data: st.DataObject) -> None:
        if self.diverged:
            return
        current = self.twin.leader(TOPIC)
        others = [b for b in self.twin.brokers() if b != current]
        if not others:
            return
        served_before = self.impl.fetch(TOPIC, 0, 0, fetch_version=newest_fetch(self.profile))
        self.twin.elect_leader(TOPIC, data.draw(st.sampled_from(others), label="new leader"))
        check_equal("REP.follower-no-restamp", Obs.LEADER, self.impl.leader(TOPIC, 0), self.twin.leader(TOPIC))
        got, _ = self.twin.fetch(TOPIC, fetch_version=newest_fetch(self.profile))
        if got.batches == served_before.batches and got.error == served_before.error:
            # The new leader serves what the old one served: the move changed nothing, and a difference
            # from the model there is the appends' (judged under their clauses, as the fetch rule does).
            check_equal("REP.follower-no-restamp", Obs.FETCH_SERVED_LOG, got.batches, served_before.batches)
            self._compare_log("CNV.stored-magic")
        else:
            self._compare_log("REP.follower-no-restamp", records="REP.follower-no-restamp")

    def _retention_decidable(self) -> bool:
        """Retention dates a segment without timestamps by its file's time (IDX-6); a target whose controlled
        clock does not set file times (no FILE_TIMES) leaves that unknown, so no tick while the log has one."""
        if self.has(Capability.FILE_TIMES):
            return True
        return not timestampless_segments(self._leader_log())

    def _leader_log(self) -> PartitionLog:
        return self.twin.ref.cluster.leader_log(TOPIC)  # type: ignore[attr-defined, no-any-return]

    def _lookup_clause(self, target: int) -> tuple[bool, str | None]:
        """Whether `target`'s answer can be compared, and the clause it is compared under (None: the
        target's own, suites.helpers.list_offsets_clause). Where a segment without timestamps decides it
        (LO-2 with IDX-6) the answer hangs on that segment file's mtime: compared under the clause that names
        that, where the target dates its files by the clock the suite sets (FILE_TIMES); not compared
        otherwise, so that the clause is left undecided there (UNSUPPORTED when nothing else decides it)."""
        if target < 0:
            return True, None
        clause = segment_clause(self._leader_log(), target)
        return clause is None or self.has(Capability.FILE_TIMES), clause

    @precondition(lambda self: self.has(Capability.RETENTION) and self._retention_decidable())
    @rule()
    def retention_tick(self) -> None:
        if self.diverged:
            return
        self.twin.retention_tick()
        clause = (
            "IDX.retention-by-largest-timestamp"
            if self.profile.retention_basis.value == "largest-timestamp"
            else "IDX.retention-by-mtime"
        )
        got, want = self.twin.fetch(TOPIC, fetch_version=newest_fetch(self.profile))
        check_equal(clause, Obs.LOG_START_OFFSET, got.log_start_offset, want.log_start_offset)

    @precondition(lambda self: self.has(Capability.FETCH))
    def fetch(self, version: int, data: st.DataObject) -> None:
        """A rule of machine_for's subclass: version drawn from the setup's fetch versions."""
        if self.diverged:
            return
        leo = self.twin.ref.cluster.leader_log(TOPIC).log_end_offset  # type: ignore[attr-defined]
        offset = data.draw(st.integers(0, max(leo, 0)), label="fetch offset")
        got, want = self.twin.fetch(TOPIC, offset, fetch_version=version)
        stored = "CNV.stored-magic" if version >= 4 else "CNV.fetch-version-caps-magic"
        check_fetch(
            got,
            want,
            config=self.config,
            profile=self.profile,
            stored_clause=stored,
            context=f"fetch v{version} at {offset}",
        )

    @precondition(lambda self: self.has(Capability.LIST_OFFSETS) and bool(self.setup.lo_versions))
    @rule(data=st.data())
    def list_offsets(self, data: st.DataObject) -> None:
        if self.diverged:
            return
        version = data.draw(st.sampled_from(self.setup.lo_versions), label="version")
        near = [t + d for t in self.sent[-20:] for d in (-1, 0, 1) if t + d >= 0] or [0]
        target = data.draw(
            st.one_of(st.sampled_from(near), st.sampled_from((-1, -2, -3, -4, -5)), st.integers(0, 2**62)),
            label="target",
        )
        comparable, clause = self._lookup_clause(target)
        if not comparable:
            return
        observed, expected = self.twin.list_offsets(TOPIC, target, version=version)
        check_list_offsets_under(observed, expected, target=target, version=version, profile=self.profile,
                                 clause=clause, facts=self.twin.list_offsets_facts(TOPIC))

    @precondition(lambda self: self.has(Capability.ALTER_CONFIG))
    def alter_config(self, config: TopicConfig) -> None:
        """A rule of machine_for's subclass: config drawn from the setup's configurations."""
        if self.diverged:
            return
        # message.format.version is not altered: changing it mid-log is its own story (CNV-3).
        config = replace(config, message_format_magic=self.config.message_format_magic)
        try:
            self.twin.alter_config(TOPIC, config)
        except UnsupportedOperation:
            # The target refused this config (the twin altered neither side): the topic goes on as it was. A
            # missing capability, not a departure, and the tests that need the config report it UNSUPPORTED.
            return
        self.config = config

    # ------------------------------------------------------------------ invariants

    @invariant()
    def lookups_agree(self) -> None:
        """KIP-79/KIP-33: for every produced timestamp (a bounded, recent sample) the lookup answers
        as the model's, and MAX_TIMESTAMP too."""
        if self.diverged:
            return
        lo_versions = self.setup.lo_versions
        if not self.created or not self.has(Capability.LIST_OFFSETS) or not lo_versions:
            return
        version = lo_versions[-1]
        targets = sorted({t for t in self.sent if t >= 0})[-MAX_LOOKUP_TARGETS:]
        for target in targets:
            comparable, clause = self._lookup_clause(target)
            if not comparable:
                continue
            observed, expected = self.twin.list_offsets(TOPIC, target, version=version)
            check_list_offsets_under(observed, expected, target=target, version=version, profile=self.profile,
                                     clause=clause)
        if self.has(Capability.MAX_TIMESTAMP_LOOKUP):
            observed, expected = self.twin.list_offsets(TOPIC, -3, version=version)
            check_list_offsets(observed, expected, target=-3, version=version, profile=self.profile,
                               facts=self.twin.list_offsets_facts(TOPIC))

    @invariant()
    def lat_records_read_batch_max(self) -> None:
        """FMT-12/CON-1 and REP-1: every stored record reads as the model's (LogAppendTime batches: their
        max), including records written before any failover."""
        if self.diverged:
            return
        if self.created and self.has(Capability.FETCH):
            self._compare_log("CNV.stored-magic")

    def _compare_log(self, stored_clause: str, records: str | None = None) -> None:
        got, want = self.twin.fetch(TOPIC, fetch_version=newest_fetch(self.profile))
        if records is None:
            check_fetch(got, want, config=self.config, profile=self.profile, stored_clause=stored_clause)
        else:
            check_fetch(
                got,
                want,
                config=self.config,
                profile=self.profile,
                stored_clause=stored_clause,
                record_clause=lambda b: records,
            )

    def teardown(self) -> None:
        self.impl.close()
        self.twin.close()


def machine_for(
    target_factory: ImplementationFactory, reference_factory: ImplementationFactory
) -> type[TimestampContractMachine]:
    """The state machine class for one implementation and its reference model (same profile)."""
    probed = MachineSetup.probe(target_factory, reference_factory)

    class Machine(TimestampContractMachine):
        # Hypothesis fixes a rule's strategies when the rule is made, and these three draw from what this
        # target offers; every other rule, precondition and invariant is the base class's.
        setup = probed
        create_topic = initialize(config=probed.configs)(TimestampContractMachine.create_topic)
        fetch = rule(version=st.sampled_from(probed.fetch_versions), data=st.data())(TimestampContractMachine.fetch)
        alter_config = rule(config=probed.configs)(TimestampContractMachine.alter_config)

    Machine.__name__ = f"TimestampContractMachine[{target_factory.name}, {probed.profile.name}]"
    return Machine


__all__ = ["DERANDOMIZED_SEED", "MachineSetup", "TimestampContractMachine", "machine_for"]
