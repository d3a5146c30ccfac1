"""The `mutants` adapter: seeded faults that prove the suites can fail (issue 3 item 5).

Each mutant is the reference model with ONE small, realistic deviation of the kind Kafka-compatible
implementations (or Kafka itself, in some release) have shipped. It declares the clause IDs
(models/clauses.py) whose checks must catch it; the kill table (conformance/mutation.py) runs the suites
tagged with those clauses against it and fails if it survives.

The faults are injected without touching `models/`, by subclassing at four seams:
- `MutantCluster`: the leader's produce path (what the validator sees, the append time, what is stored),
  topic creation (which `PartitionLog` class the replicas use), fetch and ListOffsets post-processing;
- `PartitionLog` / `Segment` / `TimeIndex` subclasses: retention, index and follower-append faults;
- a tweaked `Profile` for the cluster (a fault that is exactly "this field has another value"), while
  the implementation still reports the true profile and the model's capabilities;
- `DefaultBatch` / `LegacyBatch` subclasses whose read rule is wrong (a reader-side fault).

Everything is picklable by reference: `MutantFactory` holds names only, `Mutant.build` is a
module-level function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from models.cluster import Cluster, FetchResponse, Partition, ProduceResponse
from models.config import TopicConfig, effective_bounds
from models.constants import (
    LONG_MAX,
    NO_PARTITION_LEADER_EPOCH,
    NO_TIMESTAMP,
    ErrorCode,
    IsolationLevel,
    SpecialTarget,
    TimestampType,
)
from models.list_offsets import ListOffsetsAnswer
from models.log import PartitionLog, Segment
from models.profiles import Profile, RangeRule, UnknownSpecialTarget, get_profile
from models.records import AnyBatch, ConsumerRecord, DefaultBatch, LegacyBatch, RecordSpec, build_v2
from models.time_index import TimeIndex
from models.validator import (
    TIMESTAMP_REJECTED_TEXT,
    AppendRejected,
    RecordError,
    ValidatedAppend,
    out_of_range_text,
    timestamp_out_of_range,
)

from ..implementation import Implementation
from .model import DEFAULT_START_TIME, ModelImplementation, profile_capabilities

BROKERS = 3

# --------------------------------------------------------------------------------------------
# Registry


@dataclass(frozen=True)
class Mutant:
    """One seeded fault. `profiles` None = every profile where its clauses apply."""

    id: str
    description: str
    clauses: tuple[str, ...]
    profiles: tuple[str, ...] | None
    build: Callable[[Profile], Implementation]


MUTANTS: dict[str, Mutant] = {}

_F = TypeVar("_F", bound=Callable[[Profile], Implementation])


def _mutant(
    mutant_id: str, description: str, clauses: Sequence[str], profiles: Sequence[str] | None = None
) -> Callable[[_F], _F]:
    def register(build: _F) -> _F:
        if mutant_id in MUTANTS:
            raise ValueError(f"duplicate mutant id {mutant_id!r}")
        MUTANTS[mutant_id] = Mutant(
            mutant_id, description, tuple(clauses), tuple(profiles) if profiles else None, build
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
        return f"mutant:{self.mutant}"

    def build(self) -> Implementation:
        try:
            mutant = MUTANTS[self.mutant]
        except KeyError:
            raise KeyError(f"unknown mutant {self.mutant!r}: one of {', '.join(sorted(MUTANTS))}") from None
        impl = mutant.build(get_profile(self.profile))
        impl.name = self.name
        return impl


# --------------------------------------------------------------------------------------------
# Seams


class MutantCluster(Cluster):
    """The model's cluster; a mutant overrides one of `Cluster`'s produce-path seams (`append_time`,
    `pre_validate`, `validation_inputs`, `post_validate`) or its `log_class`."""


class MutantImplementation(ModelImplementation):
    """`ModelImplementation` whose answers can be post-processed (response-level faults). It reports
    the true profile and the model's capabilities even when its cluster runs a tweaked profile."""

    def __init__(self, cluster: Cluster, profile: Profile) -> None:
        super().__init__(cluster, name="mutant")
        self.profile = profile
        self.capabilities = profile_capabilities(profile)

    def topic_config(self, topic: str, partition: int) -> TopicConfig:
        return self.cluster.partition(topic, partition).config


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


def _specs(batch: DefaultBatch) -> list[RecordSpec]:
    return [
        RecordSpec(timestamp=r.timestamp, key=r.key, value=r.value, headers=r.headers) for r in batch.records()
    ]


# --------------------------------------------------------------------------------------------
# Validation faults (VAL-*)


class _LatIgnoredCluster(MutantCluster):
    def validation_inputs(self, part: Partition) -> tuple[TopicConfig, Profile]:
        return replace(part.config, timestamp_type=TimestampType.CREATE_TIME), self.profile


@_mutant(
    "lat-ignored",
    "message.timestamp.type=LogAppendTime is ignored and the topic is treated as CreateTime (producer "
    "timestamps kept, like brokers that accept the config but never implement it).",
    ("CMP.lat-every-record-reads-now", "VAL.lat-response-time", "CON.v2-lat-max-timestamp"),
)
def build_lat_ignored(profile: Profile) -> Implementation:
    return _impl(profile, _LatIgnoredCluster)


class _SymmetricCluster(MutantCluster):
    def validation_inputs(self, part: Partition) -> tuple[TopicConfig, Profile]:
        before, after = effective_bounds(part.config, self.profile)
        return (
            replace(part.config, difference_max_ms=max(before, after)),
            replace(self.profile, range_rule=RangeRule.SYMMETRIC),
        )


@_mutant(
    "symmetric-range",
    "KIP-937 before/after are collapsed into one symmetric bound max(before, after) (the pre-3.6 "
    "difference rule kept after adding the new configs).",
    ("VAL.range-before-after",),
    ("kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_symmetric_range(profile: Profile) -> Implementation:
    return _impl(profile, _SymmetricCluster)


class _BeforeExclusiveCluster(MutantCluster):
    def validation_inputs(self, part: Partition) -> tuple[TopicConfig, Profile]:
        before, after = effective_bounds(part.config, self.profile)
        return replace(part.config, before_max_ms=before - 1, after_max_ms=after), self.profile


@_mutant(
    "before-bound-exclusive",
    "The past bound is exclusive: now - ts >= before rejects, so ts = now - before is refused (an "
    "off-by-one `>=` in the range check).",
    ("VAL.range-inclusive-bounds",),
    ("kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_before_bound_exclusive(profile: Profile) -> Implementation:
    return _impl(profile, _BeforeExclusiveCluster)


class _AfterExclusiveCluster(MutantCluster):
    def validation_inputs(self, part: Partition) -> tuple[TopicConfig, Profile]:
        before, after = effective_bounds(part.config, self.profile)
        return replace(part.config, before_max_ms=before, after_max_ms=after - 1), self.profile


@_mutant(
    "after-bound-exclusive",
    "The future bound is exclusive: ts - now >= after rejects, so ts = now + after is refused.",
    ("VAL.range-inclusive-bounds",),
    ("kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_after_bound_exclusive(profile: Profile) -> Implementation:
    return _impl(profile, _AfterExclusiveCluster)


@_mutant(
    "no-timestamp-not-exempt",
    "Timestamp -1 is range-checked like any value (the 0.10.x behaviour, VAL-3) on a profile where it "
    "must be exempt.",
    ("VAL.no-timestamp-exempt",),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_no_timestamp_not_exempt(profile: Profile) -> Implementation:
    return _impl(profile, cluster_profile=replace(profile, exempt_no_timestamp=False))


@_mutant(
    "difference-honoured-in-4-0",
    "message.timestamp.difference.max.ms is still accepted and used as the fallback bound after its "
    "removal in 4.0 (KIP-724), as in 3.6-3.9.",
    ("VAL.difference-config-removed",),
    ("kafka-4.0", "kafka-4.1"),
)
def build_difference_honoured(profile: Profile) -> Implementation:
    return _impl(profile, cluster_profile=replace(profile, has_difference_config=True))


class _NoFallbackCluster(MutantCluster):
    def validation_inputs(self, part: Partition) -> tuple[TopicConfig, Profile]:
        return replace(part.config, difference_max_ms=None), self.profile


@_mutant(
    "no-fallback-to-difference",
    "In 3.6-3.9 an unset before/after bound does not fall back to message.timestamp.difference.max.ms, "
    "so topics configured with the deprecated config lose their bound.",
    ("VAL.bounds-fallback-to-difference",),
    ("kafka-3.9",),
)
def build_no_fallback(profile: Profile) -> Implementation:
    return _impl(profile, _NoFallbackCluster)


@_mutant(
    "after-default-unlimited",
    "The 4.0 default message.timestamp.after.max.ms of 1 h (KIP-1030) is not applied: far-future "
    "timestamps are accepted with default configs.",
    ("VAL.after-default-one-hour",),
    ("kafka-4.0", "kafka-4.1"),
)
def build_after_default_unlimited(profile: Profile) -> Implementation:
    return _impl(profile, cluster_profile=replace(profile, default_after_ms=LONG_MAX))


class _LatRangeCheckedCluster(MutantCluster):
    """VAL-3 fault: the range check runs on LogAppendTime topics too (on the producer's timestamps)."""

    def pre_validate(
        self, part: Partition, batches: Sequence[AnyBatch], now: int
    ) -> Sequence[AnyBatch] | AppendRejected:
        if not _is_lat_topic(part):
            return batches
        before, after = effective_bounds(replace(part.config, timestamp_type=TimestampType.CREATE_TIME), self.profile)
        errors: list[RecordError] = []
        for batch in batches:
            for i, record in enumerate(batch.records()):
                ts = record.timestamp
                if ts != NO_TIMESTAMP and timestamp_out_of_range(
                    ts, now=now, before=before, after=after, rule=self.profile.range_rule
                ):
                    text = out_of_range_text(
                        ts, record.offset, now=now, before=before, after=after, style=self.profile.error_text
                    )
                    errors.append(RecordError(i, text))
        if errors:
            return AppendRejected(ErrorCode.INVALID_TIMESTAMP, TIMESTAMP_REJECTED_TEXT, tuple(errors))
        return batches


@_mutant(
    "lat-topic-range-checked",
    "Producer timestamps are range-checked on LogAppendTime topics although they are about to be "
    "overwritten (the bounds only apply to CreateTime, VAL-3).",
    ("VAL.lat-topic-skips-range-check",),
)
def build_lat_topic_range_checked(profile: Profile) -> Implementation:
    return _impl(profile, _LatRangeCheckedCluster)


class _LatFlagAcceptedCluster(MutantCluster):
    def pre_validate(
        self, part: Partition, batches: Sequence[AnyBatch], now: int
    ) -> Sequence[AnyBatch] | AppendRejected:
        if not _is_lat_topic(part):
            return batches
        # The fault: a producer-set LogAppendTime flag is silently cleared instead of rejected (VAL-8).
        return [
            b.with_header(timestamp_type=TimestampType.CREATE_TIME, max_timestamp=b.max_timestamp)
            if isinstance(b, DefaultBatch) and b.timestamp_type is TimestampType.LOG_APPEND_TIME
            else b
            for b in batches
        ]


@_mutant(
    "lat-flag-accepted-on-lat-topic",
    "A producer batch flagged LogAppendTime is accepted on a LogAppendTime topic (the flag cleared and "
    "the batch stamped) instead of rejected with INVALID_TIMESTAMP (VAL-8).",
    ("VAL.lat-flag-rejected-on-lat-topic",),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_lat_flag_accepted(profile: Profile) -> Implementation:
    return _impl(profile, _LatFlagAcceptedCluster)


class _PartialBatchCluster(MutantCluster):
    """VAL-9 fault: out-of-range records are dropped and the valid rest of the v2 batch is appended."""

    def pre_validate(
        self, part: Partition, batches: Sequence[AnyBatch], now: int
    ) -> Sequence[AnyBatch] | AppendRejected:
        if _is_lat_topic(part) or len(batches) != 1 or not isinstance(batches[0], DefaultBatch):
            return batches
        batch = batches[0]
        if batch.producer_id >= 0 or batch.timestamp_type is TimestampType.LOG_APPEND_TIME:
            return batches
        before, after = effective_bounds(part.config, self.profile)
        specs = _specs(batch)
        keep = [
            s
            for s in specs
            if (s.timestamp == NO_TIMESTAMP and self.profile.exempt_no_timestamp)
            or not timestamp_out_of_range(
                s.timestamp, now=now, before=before, after=after, rule=self.profile.range_rule
            )
        ]
        if not keep or len(keep) == len(specs):
            return batches
        return [build_v2(keep, codec=batch.codec)]


@_mutant(
    "partial-batch-append",
    "A batch with some out-of-range records is partly appended (the valid records kept) instead of "
    "rejected as a whole (VAL-9).",
    ("VAL.whole-batch-rejected",),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_partial_batch_append(profile: Profile) -> Implementation:
    return _impl(profile, _PartialBatchCluster)


class _RecordErrorsMissingImpl(MutantImplementation):
    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        response = super().produce(topic, partition, batches, produce_version=produce_version)
        return replace(response, record_errors=())


@_mutant(
    "record-errors-missing",
    "A rejected produce carries no record_errors at v8+ (KIP-467 not implemented, as in pre-2.4 brokers "
    "and some proxies).",
    ("VAL.record-errors-batch-index",),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_record_errors_missing(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_RecordErrorsMissingImpl)


class _RecordErrorsOffByOneImpl(MutantImplementation):
    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        response = super().produce(topic, partition, batches, produce_version=produce_version)
        shifted = tuple(replace(e, batch_index=e.batch_index + 1) for e in response.record_errors)
        return replace(response, record_errors=shifted)


@_mutant(
    "record-errors-index-off-by-one",
    "record_errors report a 1-based batch_index instead of the record's 0-based position (VAL-11).",
    ("VAL.record-errors-batch-index",),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_record_errors_off_by_one(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_RecordErrorsOffByOneImpl)


# --------------------------------------------------------------------------------------------
# Produce response faults (VAL-12)


class _LatResponseMinusOneImpl(MutantImplementation):
    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        response = super().produce(topic, partition, batches, produce_version=produce_version)
        return replace(response, log_append_time=-1)


@_mutant(
    "lat-response-minus-one",
    "A successful produce to a LogAppendTime topic answers log_append_time -1 (the field left at its "
    "default), so clients report their own create time.",
    ("VAL.lat-response-time",),
)
def build_lat_response_minus_one(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_LatResponseMinusOneImpl)


class _LatResponseCreateTimeImpl(MutantImplementation):
    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        response = super().produce(topic, partition, batches, produce_version=produce_version)
        if response.log_append_time == -1 or not batches:
            return response
        # The fault: the producer's (create) timestamp of the batch is echoed instead of `now`.
        return replace(response, log_append_time=batches[0].max_timestamp)


@_mutant(
    "lat-response-create-time",
    "A successful produce to a LogAppendTime topic answers the batch's producer timestamp instead of "
    "the broker's append time.",
    ("VAL.lat-response-time",),
)
def build_lat_response_create_time(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_LatResponseCreateTimeImpl)


class _CreateTimeResponseNowImpl(MutantImplementation):
    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        response = super().produce(topic, partition, batches, produce_version=produce_version)
        config = self.topic_config(topic, partition)
        created = config.timestamp_type is TimestampType.CREATE_TIME
        if response.error is ErrorCode.NONE and created and produce_version >= 2:
            return replace(response, log_append_time=self.clock(self.leader(topic, partition)))
        return response


@_mutant(
    "createtime-response-now",
    "A successful produce to a CreateTime topic answers log_append_time = the broker clock instead of -1.",
    ("VAL.createtime-response-minus-one",),
)
def build_createtime_response_now(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_CreateTimeResponseNowImpl)


# --------------------------------------------------------------------------------------------
# Stored header / read-rule faults (VAL-13, CMP-*, FMT-12, CON-1)


@dataclass(frozen=True, kw_only=True)
class _BaseDeltaBatch(DefaultBatch):
    """Reader fault: a LogAppendTime v2 batch reads BaseTimestamp + delta (MaxTimestamp ignored)."""

    def record_timestamp(self, record: Any) -> int:
        return self.base_timestamp + int(record.timestamp_delta)


class _LatReadsBaseDeltaCluster(MutantCluster):
    def post_validate(
        self, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
    ) -> ValidatedAppend:
        stored = tuple(
            _retype(b, _BaseDeltaBatch)
            if isinstance(b, DefaultBatch) and b.timestamp_type is TimestampType.LOG_APPEND_TIME
            else b
            for b in outcome.batches
        )
        return replace(outcome, batches=stored)


@_mutant(
    "lat-reads-base-plus-delta",
    "LogAppendTime is stamped into MaxTimestamp but v2 records are read as BaseTimestamp + delta "
    "(the FMT-12 override missing, a classic client/broker reader bug).",
    ("CON.v2-lat-max-timestamp", "FMT.v2-lat-reads-max", "CMP.lat-every-record-reads-now"),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_lat_reads_base_plus_delta(profile: Profile) -> Implementation:
    return _impl(profile, _LatReadsBaseDeltaCluster)


class _LatOverwritesBaseCluster(MutantCluster):
    def post_validate(
        self, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
    ) -> ValidatedAppend:
        stored = tuple(
            replace(b, base_timestamp=now, crc=None)
            if isinstance(b, DefaultBatch) and b.timestamp_type is TimestampType.LOG_APPEND_TIME
            else b
            for b in outcome.batches
        )
        return replace(outcome, batches=stored)


@_mutant(
    "lat-overwrites-base-timestamp",
    "Stamping LogAppendTime also overwrites the v2 BaseTimestamp with now: in place (FMT-13 says only "
    "attributes and MaxTimestamp change) and on a rebuilt batch (CMP-4: the first source record's timestamp).",
    ("FMT.set-max-timestamp-keeps-base", "CMP.lat-inplace-v2-keeps-base", "CMP.lat-rebuild-v2-base-first-source"),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_lat_overwrites_base(profile: Profile) -> Implementation:
    return _impl(profile, _LatOverwritesBaseCluster)


class _HeaderMaxKeptCluster(MutantCluster):
    def post_validate(
        self, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
    ) -> ValidatedAppend:
        if _is_lat_topic(part) or len(sent) != len(outcome.batches):
            return outcome
        stored = tuple(
            replace(b, max_timestamp=s.max_timestamp, crc=None)
            if isinstance(b, DefaultBatch) and isinstance(s, DefaultBatch)
            else b
            for b, s in zip(outcome.batches, sent, strict=True)
        )
        return replace(outcome, batches=stored, max_timestamp=max(b.max_timestamp for b in stored))


@_mutant(
    "header-max-not-recomputed",
    "On a CreateTime topic the producer's batch MaxTimestamp is trusted and stored instead of the max of "
    "the record timestamps (VAL-13).",
    ("VAL.header-max-recomputed",),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_header_max_not_recomputed(profile: Profile) -> Implementation:
    return _impl(profile, _HeaderMaxKeptCluster)


class _HeaderMaxLastCluster(MutantCluster):
    def post_validate(
        self, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
    ) -> ValidatedAppend:
        if _is_lat_topic(part):
            return outcome
        stored = tuple(
            replace(b, max_timestamp=b.records()[-1].timestamp, crc=None)
            if isinstance(b, DefaultBatch) and b.records_
            else b
            for b in outcome.batches
        )
        return replace(outcome, batches=stored, max_timestamp=max(b.max_timestamp for b in stored))


@_mutant(
    "header-max-last-record",
    "The stored batch max timestamp (and the append's max) is the last record's timestamp instead of "
    "the largest one.",
    ("VAL.header-max-recomputed", "CMP.append-max-timestamp"),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_header_max_last_record(profile: Profile) -> Implementation:
    return _impl(profile, _HeaderMaxLastCluster)


@dataclass(frozen=True, kw_only=True)
class _InnerOwnTimestampBatch(LegacyBatch):
    """Reader fault: inner messages of a LogAppendTime v1 wrapper read their own stored timestamps."""

    def records(self) -> tuple[ConsumerRecord, ...]:
        wrapper = self.message
        if not self.is_compressed or wrapper.own_timestamp_type is not TimestampType.LOG_APPEND_TIME:
            return super().records()
        return tuple(
            replace(record, timestamp=entry.message.stored_timestamp)
            for record, entry in zip(super().records(), wrapper.inner, strict=True)
        )


class _InnerOwnTimestampCluster(MutantCluster):
    def fetch(
        self, topic: str, index: int, offset: int, *, fetch_version: int = 12, replica: bool = False
    ) -> FetchResponse:
        response = super().fetch(topic, index, offset, fetch_version=fetch_version, replica=replica)
        view = tuple(_retype(b, _InnerOwnTimestampBatch) if isinstance(b, LegacyBatch) else b for b in response.batches)
        return replace(response, batches=view)


@_mutant(
    "v1-wrapper-lat-inner-own-timestamp",
    "Inner records of a compressed LogAppendTime v1 wrapper are read with their own (producer) "
    "timestamps instead of the wrapper's, as several non-Java clients did.",
    ("CON.v1-wrapper-lat-wrapper-value",),
    ("kafka-2.8", "kafka-0.10", "kafka-0.10.0"),
)
def build_v1_wrapper_inner_own(profile: Profile) -> Implementation:
    return _impl(profile, _InnerOwnTimestampCluster)


# --------------------------------------------------------------------------------------------
# Time-index, segment and retention faults (IDX-*)


class _NonStrictTimeIndex(TimeIndex):
    def maybe_append(self, timestamp: int, offset: int, *, skip_full_check: bool = False) -> bool:
        last_timestamp, last_offset = self.last_entry()
        if len(self) and timestamp == last_timestamp and offset > last_offset:
            # The fault: an equal timestamp is appended (>= instead of >, IDX-3).
            if not skip_full_check and self.is_full():
                return super().maybe_append(timestamp, offset, skip_full_check=skip_full_check)
            self._timestamps.append(timestamp)
            self._offsets.append(offset)
            return True
        return super().maybe_append(timestamp, offset, skip_full_check=skip_full_check)


class _NonStrictSegment(Segment):
    def _raise_max(self, timestamp: int, offset: int) -> None:
        # The fault: ties move the segment max to the later batch (>= instead of >, IDX-5).
        if timestamp >= self.max_timestamp and timestamp >= 0:
            self.max_timestamp = timestamp
            self.offset_of_max_timestamp = offset


class _NonStrictLog(PartitionLog):
    def _new_segment(self, base_offset: int, now: int) -> Segment:
        segment = super()._new_segment(base_offset, now)
        segment.__class__ = _NonStrictSegment
        segment.time_index.__class__ = _NonStrictTimeIndex
        return segment


class _NonStrictCluster(MutantCluster):
    log_class = _NonStrictLog


@_mutant(
    "time-index-non-strict",
    "Time-index appends and the segment max use >= instead of >, so equal timestamps add entries "
    "pointing at later offsets and lookups skip the first record at that timestamp.",
    ("IDX.strictly-increasing", "IDX.segment-max-strictly-greater", "LO.first-ge-target"),
    ("kafka-0.10", "kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_time_index_non_strict(profile: Profile) -> Implementation:
    return _impl(profile, _NonStrictCluster)


class _NextOffsetSegment(Segment):
    """KIP-33's wording (DIS-2): an entry points at "the next offset when the entry is inserted"."""

    def _maybe_index(self, last_offset: int, position: int, index_interval_bytes: int) -> None:
        if self.bytes_since_last_index_entry > index_interval_bytes:
            self.offset_index.append(last_offset, position)
            if self.time_indexed:
                self.time_index.maybe_append(self.max_timestamp, max(last_offset + 1, self._last_indexed()))
            self.bytes_since_last_index_entry = 0

    def _last_indexed(self) -> int:
        return self.time_index.last_entry()[1] if len(self.time_index) else self.base_offset

    def on_become_inactive(self) -> None:
        if self.time_indexed:
            self.time_index.maybe_append(
                self.max_timestamp, max(self.next_offset(), self._last_indexed()), skip_full_check=True
            )


class _NextOffsetLog(PartitionLog):
    def _new_segment(self, base_offset: int, now: int) -> Segment:
        segment = super()._new_segment(base_offset, now)
        segment.__class__ = _NextOffsetSegment
        return segment


class _NextOffsetCluster(MutantCluster):
    log_class = _NextOffsetLog


@_mutant(
    "time-index-entry-next-offset",
    "Time-index entries pair the segment max with the next offset (KIP-33's text, DIS-2) instead of the "
    "batch holding it, so a lookup for exactly that timestamp starts past its record.",
    ("IDX.entry-offset-batch-last", "LO.first-ge-target"),
    ("kafka-0.10", "kafka-2.8", "kafka-3.9", "kafka-4.0"),
)
def build_time_index_entry_next_offset(profile: Profile) -> Implementation:
    return _impl(profile, _NextOffsetCluster)


class _RetentionSmallestLog(PartitionLog):
    def _retention_breached(self, segment: Segment, now: int) -> bool:
        stamps = [r.timestamp for r in segment.records() if r.timestamp >= 0]
        reference = min(stamps) if stamps else segment.largest_timestamp()
        return now - reference > self.config.retention_ms


class _RetentionSmallestCluster(MutantCluster):
    log_class = _RetentionSmallestLog


@_mutant(
    "retention-by-smallest-timestamp",
    "Time retention measures a segment's age from its smallest record timestamp instead of its largest "
    "(IDX-10), deleting segments that still hold recent records.",
    ("IDX.retention-by-largest-timestamp",),
    ("kafka-0.10", "kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_retention_smallest(profile: Profile) -> Implementation:
    return _impl(profile, _RetentionSmallestCluster)


class _RetentionFirstBatchLog(PartitionLog):
    def _retention_breached(self, segment: Segment, now: int) -> bool:
        first = segment.batches[0].max_timestamp if segment.batches else -1
        reference = first if first >= 0 else segment.largest_timestamp()
        return now - reference > self.config.retention_ms


class _RetentionFirstBatchCluster(MutantCluster):
    log_class = _RetentionFirstBatchLog


@_mutant(
    "retention-by-first-batch",
    "Time retention measures a segment's age from its first batch's timestamp (the roll base) instead "
    "of its largest timestamp.",
    ("IDX.retention-by-largest-timestamp",),
    ("kafka-0.10", "kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_retention_first_batch(profile: Profile) -> Implementation:
    return _impl(profile, _RetentionFirstBatchCluster)


class _RetentionNoPrefixLog(PartitionLog):
    def deletable_segments(self, now: int) -> int:
        # The fault: keep walking past a non-deletable segment; delete through the last breached one.
        if self.config.retention_ms < 0 or not self.config.deletes_by_retention:
            return 0
        count = 0
        for i, segment in enumerate(self.segments):
            is_last = i == len(self.segments) - 1
            if is_last and segment.is_empty():
                break
            upper = self.log_end_offset if is_last else self.segments[i + 1].base_offset
            if self.high_watermark < upper:
                break
            if self._retention_breached(segment, now):
                count = i + 1
        return count


class _RetentionNoPrefixCluster(MutantCluster):
    log_class = _RetentionNoPrefixLog


@_mutant(
    "retention-ignores-prefix",
    "Time retention does not stop at the first non-deletable segment: an old segment behind a "
    "future-stamped one is deleted along with everything before it (IDX-10 prefix rule).",
    ("IDX.retention-prefix-rule",),
    ("kafka-0.10", "kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_retention_ignores_prefix(profile: Profile) -> Implementation:
    return _impl(profile, _RetentionNoPrefixCluster)


# --------------------------------------------------------------------------------------------
# Replication and clock faults (REP-*)


class _RestampingLog(PartitionLog):
    def append_as_follower(self, batches: Sequence[AnyBatch], *, now: int) -> None:
        # The fault: the follower re-stamps LogAppendTime batches with its own clock (REP-1).
        restamped = [
            b.with_header(timestamp_type=TimestampType.LOG_APPEND_TIME, max_timestamp=now)
            if b.timestamp_type is TimestampType.LOG_APPEND_TIME and b.magic > 0
            else b
            for b in batches
        ]
        super().append_as_follower(restamped, now=now)


class _RestampingCluster(MutantCluster):
    log_class = _RestampingLog


@_mutant(
    "follower-restamps-lat",
    "Followers re-stamp LogAppendTime batches with their own clock on replication, so timestamps change "
    "when leadership moves (REP-1).",
    ("REP.follower-no-restamp", "REP.lookups-agree-after-failover"),
)
def build_follower_restamps(profile: Profile) -> Implementation:
    return _impl(profile, _RestampingCluster)


class _ClampedCluster(MutantCluster):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._last_append_time: dict[tuple[str, int], int] = {}

    def append_time(self, part: Partition, clock: int) -> int:
        if not _is_lat_topic(part):
            return clock
        key = (part.topic, part.index)
        now = max(self._last_append_time.get(key, clock), clock)
        self._last_append_time[key] = now
        return now


@_mutant(
    "lat-clamped-monotonic",
    "LogAppendTime is clamped to max(previous append time, now), so after a backward clock step or a "
    "failover to a slower clock it does not follow the leader's clock (VAL-2, REP-2).",
    ("REP.lat-not-clamped", "REP.lat-from-current-leader-clock", "VAL.lat-response-time"),
)
def build_lat_clamped(profile: Profile) -> Implementation:
    return _impl(profile, _ClampedCluster)


# --------------------------------------------------------------------------------------------
# Down-conversion faults (CNV-5)


def _drop_timestamps(batch: LegacyBatch) -> LegacyBatch:
    inner = tuple(
        replace(e, message=replace(e.message, timestamp=NO_TIMESTAMP, crc=None)) for e in batch.message.inner
    )
    return replace(batch, message=replace(batch.message, timestamp=NO_TIMESTAMP, inner=inner, crc=None))


class _DownConvertDropsTypeCluster(MutantCluster):
    def fetch(
        self, topic: str, index: int, offset: int, *, fetch_version: int = 12, replica: bool = False
    ) -> FetchResponse:
        response = super().fetch(topic, index, offset, fetch_version=fetch_version, replica=replica)
        if fetch_version >= 4:
            return response
        view = tuple(
            b.with_header(timestamp_type=TimestampType.CREATE_TIME, max_timestamp=b.max_timestamp)
            if isinstance(b, LegacyBatch) and b.magic == 1 and b.timestamp_type is TimestampType.LOG_APPEND_TIME
            else b
            for b in response.batches
        )
        return replace(response, batches=view)


@_mutant(
    "down-conversion-drops-type",
    "Down-converting a LogAppendTime v2 batch to v1 writes CreateTime messages (the type bit lost).",
    ("CNV.down-convert-keeps-type",),
    ("kafka-3.9", "kafka-2.8", "kafka-0.10"),
)
def build_down_conversion_drops_type(profile: Profile) -> Implementation:
    return _impl(profile, _DownConvertDropsTypeCluster)


class _DownConvertDropsTimestampsCluster(MutantCluster):
    def fetch(
        self, topic: str, index: int, offset: int, *, fetch_version: int = 12, replica: bool = False
    ) -> FetchResponse:
        response = super().fetch(topic, index, offset, fetch_version=fetch_version, replica=replica)
        if fetch_version >= 4:
            return response
        view = tuple(
            _drop_timestamps(b) if isinstance(b, LegacyBatch) and b.magic == 1 else b for b in response.batches
        )
        return replace(response, batches=view)


@_mutant(
    "down-conversion-drops-timestamps",
    "Down-converting to v1 writes timestamp -1 into every message (converted as if to v0) although v1 "
    "carries timestamps. On a LogAppendTime topic the messages and wrapper then lack the batch "
    "MaxTimestamp they must carry (CNV.down-convert-keeps-type).",
    ("CNV.down-convert-createtime-keeps-timestamps", "CNV.down-convert-keeps-type"),
    ("kafka-3.9", "kafka-2.8"),
)
def build_down_conversion_drops_timestamps(profile: Profile) -> Implementation:
    return _impl(profile, _DownConvertDropsTimestampsCluster)


# --------------------------------------------------------------------------------------------
# ListOffsets faults (LO-*)


class _ListOffsetsImpl(MutantImplementation):
    """Post-processes ListOffsets answers with `mutate`; the leader log is at hand for the fault."""

    def list_offsets(
        self,
        topic: str,
        partition: int,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> ListOffsetsAnswer:
        answer = super().list_offsets(topic, partition, target, version=version, isolation=isolation)
        return self.mutate(self.cluster.leader_log(topic, partition), target, version, answer)

    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        return answer


def _visible_records(log: PartitionLog) -> list[tuple[ConsumerRecord, AnyBatch]]:
    return [
        (r, b)
        for b in log.batches()
        for r in b.records()
        if log.log_start_offset <= r.offset < log.high_watermark
    ]


def _found(answer: ListOffsetsAnswer) -> bool:
    return answer.error is ErrorCode.NONE and answer.offset >= 0


class _LastMatchImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target < 0 or not _found(answer):
            return answer
        ties = [r.offset for r, _ in _visible_records(log) if r.timestamp == answer.timestamp]
        return replace(answer, offset=max(ties, default=answer.offset))


@_mutant(
    "lookup-last-match",
    "A timestamp lookup answers the last of several records sharing the first matching timestamp "
    "instead of the first (an upper-bound instead of lower-bound binary search).",
    ("LO.first-ge-target",),
)
def build_lookup_last_match(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_LastMatchImpl)


class _ClosestImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target < 0 or not _found(answer):
            return answer
        candidates = [(r.timestamp, r.offset, b) for r, b in _visible_records(log) if r.timestamp >= target]
        if not candidates:
            return answer
        ts, offset, batch = min(candidates, key=lambda c: (c[0], c[1]))
        epoch = batch.partition_leader_epoch if version >= 4 else NO_PARTITION_LEADER_EPOCH
        return replace(answer, offset=offset, timestamp=ts, leader_epoch=max(epoch, NO_PARTITION_LEADER_EPOCH))


@_mutant(
    "lookup-closest-timestamp",
    "A timestamp lookup answers the record with the timestamp closest above the target (smallest "
    "timestamp >= target) instead of the smallest offset with timestamp >= target.",
    ("LO.first-ge-target",),
)
def build_lookup_closest(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_ClosestImpl)


class _BatchFirstOffsetImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target < 0 or not _found(answer):
            return answer
        for batch in log.batches():
            if batch.base_offset <= answer.offset <= batch.last_offset:
                return replace(answer, offset=max(batch.base_offset, log.log_start_offset))
        return answer


@_mutant(
    "lookup-batch-first-offset",
    "A timestamp lookup answers the first offset of the batch holding the match instead of the "
    "matching record's own offset (a batch-granular search).",
    ("LO.first-ge-target", "IDX.segment-search-first-ge"),
)
def build_lookup_batch_first_offset(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_BatchFirstOffsetImpl)


class _NotFoundLeoImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target >= 0 and answer.error is ErrorCode.NONE and answer.offset == -1:
            return replace(answer, offset=log.high_watermark)
        return answer


@_mutant(
    "not-found-answers-leo",
    "A timestamp lookup with no record at or after the target answers the log end offset instead of -1 "
    "(the pre-KIP-79 'latest' convention).",
    ("LO.not-found-minus-one",),
)
def build_not_found_leo(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_NotFoundLeoImpl)


class _MaxTsBatchLastImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target != SpecialTarget.MAX_TIMESTAMP or not _found(answer):
            return answer
        for batch in log.batches():
            if batch.base_offset <= answer.offset <= batch.last_offset:
                return replace(answer, offset=batch.last_offset)
        return answer


@_mutant(
    "max-timestamp-batch-last-offset",
    "MAX_TIMESTAMP answers the last offset of the batch holding the max (Kafka 3.0-3.7, KAFKA-16310) "
    "instead of the record's. On a LogAppendTime topic that is also not the batch's first record "
    "(LO.max-timestamp-lat-batch-first-record).",
    ("LO.max-timestamp-first-record", "LO.max-timestamp-lat-batch-first-record"),
)
def build_max_ts_batch_last(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_MaxTsBatchLastImpl)


class _MaxTsLastRecordImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target != SpecialTarget.MAX_TIMESTAMP or not _found(answer):
            return answer
        for batch in log.batches():
            if batch.base_offset <= answer.offset <= batch.last_offset:
                ties = [r.offset for r in batch.records() if r.timestamp == answer.timestamp]
                return replace(answer, offset=max(ties))
        return answer


@_mutant(
    "max-timestamp-last-record",
    "MAX_TIMESTAMP answers the last record of the batch holding the max timestamp instead of the first "
    "(a `>=` scan). Every record of a LogAppendTime batch holds the max, so there it answers the batch's "
    "last record (LO.max-timestamp-lat-batch-first-record).",
    ("LO.max-timestamp-first-record", "LO.max-timestamp-lat-batch-first-record"),
)
def build_max_ts_last_record(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_MaxTsLastRecordImpl)


class _EarliestZeroImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target in (SpecialTarget.EARLIEST, SpecialTarget.EARLIEST_LOCAL) and _found(answer):
            return replace(answer, offset=0)
        return answer


@_mutant(
    "earliest-returns-zero",
    "EARLIEST (-2) answers offset 0 instead of the log start offset once retention has deleted segments.",
    ("LO.earliest-is-log-start",),
)
def build_earliest_zero(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_EarliestZeroImpl)


class _EpochMissingImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        return replace(answer, leader_epoch=NO_PARTITION_LEADER_EPOCH)


@_mutant(
    "epoch-missing",
    "ListOffsets v4+ answers carry leader epoch -1 (KIP-320 field never filled).",
    ("LO.epoch-of-found-batch", "LO.latest-is-high-watermark"),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_epoch_missing(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_EpochMissingImpl)


def _with_target_min_version(profile: Profile, target: int, version: int) -> Profile:
    versions = tuple((t, version if t == target else v) for t, v in profile.special_target_min_versions)
    return replace(profile, special_target_min_versions=versions)


@_mutant(
    "max-timestamp-below-v7",
    "MAX_TIMESTAMP (-3) is served at any ListOffsets version instead of UNSUPPORTED_VERSION below v7 "
    "(KIP-734, KAFKA-17331).",
    ("LO.special-target-min-version",),
    ("kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_max_ts_below_v7(profile: Profile) -> Implementation:
    return _impl(profile, cluster_profile=_with_target_min_version(profile, SpecialTarget.MAX_TIMESTAMP, 0))


@_mutant(
    "unknown-target-searched",
    "An unknown negative target (e.g. -7) falls through to the timestamp search (pre-3.9 behaviour) "
    "instead of UNSUPPORTED_VERSION. Below its minimum version a special target is unknown too, so "
    "EARLIEST_LOCAL/LATEST_TIERED asked too early are searched as well (LO.special-target-min-version).",
    ("LO.unknown-target-unsupported", "LO.special-target-min-version"),
    ("kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_unknown_target_searched(profile: Profile) -> Implementation:
    return _impl(profile, cluster_profile=replace(profile, unknown_special_target=UnknownSpecialTarget.SEARCH))


__all__ = ["MUTANTS", "Mutant", "MutantCluster", "MutantFactory", "MutantImplementation"]
