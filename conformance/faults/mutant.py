"""The mutants' shared machinery: the registry (`MUTANTS`, a conformance.faults.seeded.FaultRegistry of
`Mutant`s; `MutantFactory`; the `_mutant` decorator), the seams a mutant subclasses (`MutantCluster`,
`MutantImplementation`), the one build of every broker mutant that changes one of them (`ModelBuild`, registered
by `_model_mutant`) and small helpers used by more than one area.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from conformance.faults.seeded import FaultRegistry, SeededFault
from conformance.targets.kinds.implementation import Implementation, Kind
from conformance.targets.libraries.model.model_broker import (
    DEFAULT_START_TIME,
    ModelImplementation,
    profile_capabilities,
)
from conformance.targets.target import mutant_name
from models.clauses import get_clause
from models.cluster import Cluster, Partition, ProduceResponse
from models.config import TopicConfig
from models.constants import IsolationLevel, TimestampType
from models.list_offsets import ListOffsetsAnswer
from models.log import PartitionLog, Segment
from models.profiles import PROFILES, Profile, get_profile
from models.records import AnyBatch, DefaultBatch, LegacyBatch, RecordSpec
from models.time_index import TimeIndex
from models.validator import AppendRejected, ValidatedAppend

BROKERS = 3

# --------------------------------------------------------------------------------------------
# Registry


# The profiles a mutant may run under by default, newest first: the first in which all its declared
# clauses apply is where its fault is observed with the most checks (conformance.campaign.tasks.profile_for).
MAIN_PROFILES = ("kafka-4.0", "kafka-3.9", "kafka-2.8", "kafka-0.10")

# The profiles of a fault in v2 batches, stated explicitly: 0.10.x profiles do not have them (max_magic 1).
V2_PROFILES = ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1")


@dataclass(frozen=True)
class Mutant(SeededFault[Callable[[Profile], Implementation]]):
    """One seeded fault of a target (conformance.faults.seeded.SeededFault), built for a profile. Its `kind`
    says which suites see it: a broker mutant runs the broker suites, a codec mutant (a fault in the model's record
    codec) the codec suites, a client mutant (a fault in the reference client) the client suites against the
    reference broker. `profiles`: the profiles whose behaviour the fault can be seeded into (a fault of a feature
    some versions lack, e.g. down-conversion, v2 batch headers), None = every profile."""

    profiles: tuple[str, ...] | None = None
    # A fault only in how a consumer reads what it was served (the model's fetch answer, retyped), with nothing
    # on the broker's side: served over the wire, the reading is the client's (the suite's codec), so a served
    # broker cannot show it. Client and codec adapters are where such faults are caught.
    reader_only: bool = False

    def runs_under(self, profile: str) -> bool:
        """Whether the fault can be seeded into `profile` and every declared clause applies there
        (models.clauses: a clause's `profiles`)."""
        seeded = self.profiles is None or profile in self.profiles
        return seeded and all(profile in get_clause(clause).profiles for clause in self.clauses)

    @property
    def profile(self) -> str:
        """The profile the mutant runs under by default: the first of MAIN_PROFILES it `runs_under`, then of every
        profile (a clause of one line only, as ListOffsets v11's of kafka-4.2), derived from its declared clauses
        (else its first seeded profile)."""
        derived = next((p for p in (*MAIN_PROFILES, *PROFILES) if self.runs_under(p)), None)
        if derived is not None:
            return derived
        return self.profiles[0] if self.profiles else MAIN_PROFILES[0]


MUTANTS: FaultRegistry[Mutant] = FaultRegistry("mutant")

_F = TypeVar("_F", bound=Callable[[Profile], Implementation])


def _mutant(
    mutant_id: str,
    description: str,
    clauses: Sequence[str],
    profiles: Sequence[str] | None = None,
    *,
    reader_only: bool = False,
    kind: Kind = Kind.BROKER,
) -> Callable[[_F], _F]:
    def register(build: _F) -> _F:
        MUTANTS.register(
            Mutant(
                id=mutant_id,
                kind=kind,
                clauses=tuple(clauses),
                description=description,
                build=build,
                profiles=tuple(profiles) if profiles else None,
                reader_only=reader_only,
            )
        )
        return build

    return register


@dataclass(frozen=True)
class MutantFactory:
    """Picklable recipe for one mutant under one profile (`--target mutant:<id>`)."""

    mutant: str
    profile: str = "kafka-4.0"

    @property
    def name(self) -> str:
        return mutant_name(self.mutant)

    def build(self) -> Implementation:
        impl = MUTANTS[self.mutant].build(get_profile(self.profile))  # UnknownFault names the mutants
        impl.name = self.name
        return impl


# --------------------------------------------------------------------------------------------
# Seams


# A fault of what the validator applies: (the cluster, the partition) -> the topic configuration and the behaviour
# profile it validates the append with.
InputsFault = Callable[[Cluster, Partition], tuple[TopicConfig, Profile]]
# A fault of what the leader is about to validate: (the cluster, the partition, the batches sent, now) -> the
# batches the validator is given, or the append's refusal.
SentFault = Callable[[Cluster, Partition, Sequence[AnyBatch], int], Sequence[AnyBatch] | AppendRejected]
# A fault of what validation made of them: (the cluster, the partition, the validator's outcome, the batches sent,
# now) -> what is stored and answered.
StoredFault = Callable[[Cluster, Partition, ValidatedAppend, Sequence[AnyBatch], int], ValidatedAppend]


class MutantCluster(Cluster):
    """The model's cluster; a mutant overrides one of `Cluster`'s produce-path seams (`append_time`,
    `pre_validate`, `validation_inputs`, `post_validate`) or its `log_class`.

    A fault that is a small function of one of these steps need not spell the seam: `sent_fault` rewrites what
    `pre_validate` gives the validator, `inputs_fault` chooses what `validation_inputs` has it apply and
    `stored_fault` rewrites what `post_validate` stores, each on the topics whose timestamp type is `fault_topics`
    only (None: every topic), as many faults are of CreateTime or of LogAppendTime topics alone."""

    sent_fault: SentFault | None = None
    inputs_fault: InputsFault | None = None
    stored_fault: StoredFault | None = None
    fault_topics: TimestampType | None = None

    def _faulty(self, part: Partition) -> bool:
        return self.fault_topics is None or part.config.timestamp_type is self.fault_topics

    def validation_inputs(self, part: Partition) -> tuple[TopicConfig, Profile]:
        if self.inputs_fault is None or not self._faulty(part):
            return super().validation_inputs(part)
        return self.inputs_fault(self, part)

    def pre_validate(
        self, part: Partition, batches: Sequence[AnyBatch], now: int
    ) -> Sequence[AnyBatch] | AppendRejected:
        if self.sent_fault is None or not self._faulty(part):
            return super().pre_validate(part, batches, now)
        return self.sent_fault(self, part, batches, now)

    def post_validate(
        self, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
    ) -> ValidatedAppend:
        if self.stored_fault is None or not self._faulty(part):
            return super().post_validate(part, outcome, sent, now)
        return self.stored_fault(self, part, outcome, sent, now)


# A ListOffsets fault that rewrites the model's answer: (the partition's leader log, the target, the request's
# version, the model's answer) -> the answer sent.
OffsetsFault = Callable[[PartitionLog, int, int, ListOffsetsAnswer], ListOffsetsAnswer]
# A Produce fault that rewrites the model's answer: (the implementation, the topic, the partition, the batches sent,
# the request's version, the model's answer) -> the answer sent.
ProducedFault = Callable[
    ["MutantImplementation", str, int, Sequence[AnyBatch], int, ProduceResponse], ProduceResponse
]


class MutantImplementation(ModelImplementation):
    """`ModelImplementation` whose answers can be post-processed (response-level faults). It reports
    the true profile and the model's capabilities even when its cluster runs a tweaked profile.

    A fault of an answer need not spell the operation again: `produce_fault`, where set, rewrites the model's
    Produce answer. ListOffsets has two seams: `lookup` finds the model's answer (a mutant that changes how it is
    found overrides it) and `offsets_fault`, where set, rewrites it."""

    offsets_fault: OffsetsFault | None = None
    produce_fault: ProducedFault | None = None

    def __init__(self, cluster: Cluster, profile: Profile) -> None:
        super().__init__(cluster, name="mutant")
        self.profile = profile
        self.capabilities = profile_capabilities(profile)

    def topic_config(self, topic: str, partition: int) -> TopicConfig:
        return self.cluster.partition(topic, partition).config

    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        response = super().produce(topic, partition, batches, produce_version=produce_version)
        if self.produce_fault is None:
            return response
        return self.produce_fault(self, topic, partition, batches, produce_version, response)

    def list_offsets(
        self,
        topic: str,
        partition: int,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> ListOffsetsAnswer:
        answer = self.lookup(topic, partition, target, version, isolation)
        if self.offsets_fault is None:
            return answer
        return self.offsets_fault(self.cluster.leader_log(topic, partition), target, version, answer)

    def lookup(
        self, topic: str, partition: int, target: int, version: int, isolation: IsolationLevel
    ) -> ListOffsetsAnswer:
        """The model's ListOffsets answer, before any `offsets_fault`."""
        return super().list_offsets(topic, partition, target, version=version, isolation=isolation)


class _SegmentsOf(PartitionLog):
    """A log whose new segments are of `segment_class` and their time indexes of `index_class` (None: the
    model's), for a segment- or index-level fault overriding one step of `Segment` or `TimeIndex`."""

    segment_class: type[Segment] | None = None
    index_class: type[TimeIndex] | None = None

    def _new_segment(self, base_offset: int, now: int) -> Segment:
        segment = super()._new_segment(base_offset, now)
        if self.segment_class is not None:
            segment.__class__ = self.segment_class
        if self.index_class is not None:
            segment.time_index.__class__ = self.index_class
        return segment


@dataclass(frozen=True)
class ModelBuild:
    """The build of a broker mutant that is the model with one seam changed, named by the fields that are not
    their defaults: `cluster` (a `MutantCluster` overriding a produce-path or fetch seam); `sent`, `inputs` and
    `stored` (the cluster's `sent_fault`, `inputs_fault` and `stored_fault`, on the topics of timestamp type
    `topics` only, None: every topic); `answers` (a `MutantImplementation` post-processing an answer); `produced`
    and `offsets` (its `produce_fault` and `offsets_fault`, rewriting a Produce or a ListOffsets answer); `log`
    (the replicas' `PartitionLog`); `segment` and `time_index` (the class of each new segment and of its time
    index); or `profile_changes` (the cluster runs a profile whose named fields have other values, while the
    implementation reports the true profile). A value of classes, module functions and constants, so a mutant
    pickles by reference (MutantFactory, the kill table's workers)."""

    cluster: type[MutantCluster] = MutantCluster
    sent: SentFault | None = None
    inputs: InputsFault | None = None
    stored: StoredFault | None = None
    topics: TimestampType | None = None
    answers: type[MutantImplementation] = MutantImplementation
    produced: ProducedFault | None = None
    offsets: OffsetsFault | None = None
    log: type[PartitionLog] | None = None
    segment: type[Segment] | None = None
    time_index: type[TimeIndex] | None = None
    profile_changes: tuple[tuple[str, Any], ...] = ()

    def __call__(self, profile: Profile) -> Implementation:
        cluster_profile = replace(profile, **dict(self.profile_changes)) if self.profile_changes else None
        impl = _impl(profile, self._cluster_class(), self.answers, cluster_profile)
        if self.produced is not None:
            impl.produce_fault = self.produced
        if self.offsets is not None:
            impl.offsets_fault = self.offsets
        return impl

    def _cluster_class(self) -> type[Cluster]:
        # The faults are class attributes, not the instance's: a cluster rebuilt from its class (serve's
        # WithBrokers) keeps them.
        cluster: type[MutantCluster] = self.cluster
        if self.sent is not None or self.inputs is not None or self.stored is not None:
            seams = {
                "sent_fault": None if self.sent is None else staticmethod(self.sent),
                "inputs_fault": None if self.inputs is None else staticmethod(self.inputs),
                "stored_fault": None if self.stored is None else staticmethod(self.stored),
                "fault_topics": self.topics,
            }
            cluster = type("_Cluster", (cluster,), seams)
        if self.log is None and self.segment is None and self.time_index is None:
            return cluster
        log: type[PartitionLog] = self.log or PartitionLog
        if self.segment is not None or self.time_index is not None:
            log = type("_Log", (_SegmentsOf, log), {"segment_class": self.segment, "index_class": self.time_index})
        return type("_Cluster", (cluster,), {"log_class": log})


def _model_mutant(
    mutant_id: str,
    description: str,
    clauses: Sequence[str],
    profiles: Sequence[str] | None = None,
    *,
    cluster: type[MutantCluster] = MutantCluster,
    sent: SentFault | None = None,
    inputs: InputsFault | None = None,
    stored: StoredFault | None = None,
    topics: TimestampType | None = None,
    answers: type[MutantImplementation] = MutantImplementation,
    produced: ProducedFault | None = None,
    offsets: OffsetsFault | None = None,
    log: type[PartitionLog] | None = None,
    segment: type[Segment] | None = None,
    time_index: type[TimeIndex] | None = None,
    profile_changes: Mapping[str, Any] | None = None,
    reader_only: bool = False,
) -> None:
    """Register a broker mutant (`_mutant`) built by `ModelBuild` from the one seam it changes."""
    changes = tuple(sorted((profile_changes or {}).items()))
    build = ModelBuild(
        cluster, sent, inputs, stored, topics, answers, produced, offsets, log, segment, time_index, changes
    )
    _mutant(mutant_id, description, clauses, profiles, reader_only=reader_only)(build)


def _cluster(profile: Profile, cls: type[Cluster] = MutantCluster) -> Cluster:
    return cls(profile=profile, broker_ids=tuple(range(BROKERS)), start_time=DEFAULT_START_TIME)


def _impl(
    profile: Profile,
    cluster_cls: type[Cluster] = MutantCluster,
    impl_cls: type[MutantImplementation] = MutantImplementation,
    cluster_profile: Profile | None = None,
) -> MutantImplementation:
    return impl_cls(_cluster(cluster_profile or profile, cluster_cls), profile)


_B = TypeVar("_B", DefaultBatch, LegacyBatch)


def _retype(batch: Any, cls: type[_B]) -> _B:
    """The same field values under another (faulty) batch class."""
    return cls(**{f.name: getattr(batch, f.name) for f in fields(batch)})


def _is_lat_topic(part: Partition) -> bool:
    return part.config.timestamp_type is TimestampType.LOG_APPEND_TIME


def _rewritten(
    batches: Iterable[AnyBatch], where: Callable[[AnyBatch], bool], change: Callable[[Any], AnyBatch]
) -> tuple[AnyBatch, ...]:
    """`batches` with each one `where` picks passed through `change` and the rest as they are: how a fault rewrites
    the batches it is about, whether sent, stored, served or replicated."""
    return tuple(change(b) if where(b) else b for b in batches)


def _is_v2(batch: AnyBatch) -> bool:
    return isinstance(batch, DefaultBatch)


def _is_legacy(batch: AnyBatch) -> bool:
    return isinstance(batch, LegacyBatch)


def _is_lat_v2(batch: AnyBatch) -> bool:
    return isinstance(batch, DefaultBatch) and batch.timestamp_type is TimestampType.LOG_APPEND_TIME


def _specs(batch: DefaultBatch) -> list[RecordSpec]:
    return [
        RecordSpec(timestamp=r.timestamp, key=r.key, value=r.value, headers=r.headers) for r in batch.records()
    ]


def _restamped(batch: AnyBatch, stamp: Callable[[int], int]) -> AnyBatch:
    """`batch` with each record's timestamp mapped through `stamp` (v2: base, deltas and max recomputed;
    v0/v1: an uncompressed message's own field; wrappers are left as they are), CRC recomputed."""
    if isinstance(batch, DefaultBatch):
        stamps = [stamp(r.timestamp) for r in batch.records()]
        if not stamps:
            return batch
        records = tuple(replace(r, timestamp_delta=t - stamps[0]) for r, t in zip(batch.records_, stamps, strict=True))
        return replace(batch, base_timestamp=stamps[0], max_timestamp=max(stamps), records_=records, crc=None)
    message = batch.message
    if message.inner or message.timestamp is None:
        return batch
    return replace(batch, message=replace(message, timestamp=stamp(message.timestamp), crc=None))
