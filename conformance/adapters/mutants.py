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

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from models.cluster import Cluster, FetchResponse, Partition, ProduceResponse, find_duplicate
from models.config import TopicConfig, effective_bounds
from models.constants import (
    LONG_MAX,
    NO_PARTITION_LEADER_EPOCH,
    NO_TIMESTAMP,
    Codec,
    ErrorCode,
    IsolationLevel,
    SpecialTarget,
    TimestampType,
)
from models.conversion import fetch_view
from models.list_offsets import NOT_FOUND, ListOffsetsAnswer
from models.log import PartitionLog, Segment
from models.profiles import Profile, RangeRule, RollBase, UnknownSpecialTarget, get_profile
from models.records import AnyBatch, ConsumerRecord, DefaultBatch, LegacyBatch, RecordSpec, build_v2
from models.time_index import TimeIndex
from models.validator import (
    RECORDS_REJECTED_TEXT_2_5,
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



# --------------------------------------------------------------------------------------------
# Issue 11: faults of the clauses the suites newly check (one seam each)


def _capped(log: PartitionLog, found: tuple[int, int, int] | None, version: int) -> ListOffsetsAnswer:
    """A found (timestamp, offset, epoch) answered as the model does: below the high watermark (LO-3), the
    epoch from v4 (KIP-320); otherwise not found."""
    if found is None or found[1] >= log.high_watermark:
        return NOT_FOUND
    timestamp, offset, epoch = found
    return ListOffsetsAnswer(ErrorCode.NONE, offset, timestamp, epoch if version >= 4 else NO_PARTITION_LEADER_EPOCH)


class _NoStableOffsetImpl(MutantImplementation):
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
        capped = target >= 0 or target in (SpecialTarget.LATEST, SpecialTarget.MAX_TIMESTAMP)
        if isolation is IsolationLevel.READ_COMMITTED and capped and answer.error is ErrorCode.NONE:
            return NOT_FOUND
        return answer


@_mutant(
    "read-committed-no-stable-offset",
    "The last stable offset is unknown (-1) outside transactions, so every read_committed LATEST or timestamp "
    "lookup is capped away and answers -1 (a broker that tracks the LSO only for transactional producers).",
    ("LO.read-committed-lso",),
)
def build_read_committed_no_stable_offset(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_NoStableOffsetImpl)


class _MaxTsLogEndImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target == SpecialTarget.MAX_TIMESTAMP and answer.error is ErrorCode.NONE and answer.offset == -1:
            return replace(answer, offset=log.log_end_offset)
        return answer


@_mutant(
    "max-timestamp-empty-answers-log-end",
    "MAX_TIMESTAMP on a log without a timestamped record answers the log end offset (= the high watermark) "
    "with timestamp -1 instead of -1/-1: an offset no consumer can read (LO-3, LO-6).",
    ("LO.max-timestamp-capped", "LO.max-timestamp-empty"),
)
def build_max_ts_empty_log_end(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_MaxTsLogEndImpl)


class _EverySegmentImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target < 0 or answer.error is not ErrorCode.NONE or answer.offset != -1:
            return answer
        # The fault: when the first segment dated at or after the target holds no match, the search goes
        # on into later segments (LO-2 searches only that one).
        for segment in log.segments:
            found = segment.find_offset_by_timestamp(target, log.log_start_offset)
            if found is not None:
                return _capped(log, found, version)
        return answer


@_mutant(
    "lookup-searches-every-segment",
    "A timestamp lookup that finds nothing in the first segment whose largest timestamp reaches the target "
    "(e.g. a segment without timestamps, dated by its mtime) goes on searching the later segments.",
    ("LO.first-qualifying-segment",),
)
def build_lookup_searches_every_segment(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_EverySegmentImpl)


class _DatedNowImpl(MutantImplementation):
    def list_offsets(
        self,
        topic: str,
        partition: int,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> ListOffsetsAnswer:
        # The fault: a segment without timestamps is dated by the broker's clock at the lookup, not by its
        # file's mtime (IDX-6).
        log = self.cluster.leader_log(topic, partition)
        now = self.cluster.clock(self.cluster.partition(topic, partition).leader)
        untimed = [(s, s.last_modified) for s in log.segments if not s.is_empty() and s.max_timestamp < 0]
        for segment, _ in untimed:
            segment.last_modified = now
        try:
            return super().list_offsets(topic, partition, target, version=version, isolation=isolation)
        finally:
            for segment, mtime in untimed:
                segment.last_modified = mtime


@_mutant(
    "untimed-segment-dated-now",
    "A segment holding only records without timestamps is dated by the broker's current clock instead of its "
    "file's mtime (IDX-6), so a lookup for a target between the two stops there and finds nothing.",
    ("IDX.largest-timestamp-mtime",),
)
def build_untimed_segment_dated_now(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_DatedNowImpl)


class _KeepsDeletedLog(PartitionLog):
    pending_deletion: list[Segment]

    def delete_retention_breached_segments(self, now: int) -> int:
        doomed = list(self.segments[: self.deletable_segments(now)])
        deleted = super().delete_retention_breached_segments(now)
        self.pending_deletion = [*getattr(self, "pending_deletion", []), *doomed[:deleted]]
        return deleted


class _KeepsDeletedCluster(MutantCluster):
    log_class = _KeepsDeletedLog


class _DeletedSearchedImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target < 0 or answer.error is not ErrorCode.NONE:
            return answer
        # The fault: segments retention deleted are still searched, from offset 0, until their files go.
        for segment in [*getattr(log, "pending_deletion", []), *log.segments]:
            if segment.largest_timestamp() >= target:
                return _capped(log, segment.find_offset_by_timestamp(target, 0), version)
        return answer


@_mutant(
    "lookup-searches-deleted-segments",
    "Segments deleted by retention stay searchable until their files are removed (file.delete.delay.ms), "
    "and the search does not start at the log start offset, so a lookup may answer a deleted offset.",
    ("LO.search-from-log-start",),
)
def build_lookup_searches_deleted_segments(profile: Profile) -> Implementation:
    return _impl(profile, _KeepsDeletedCluster, _DeletedSearchedImpl)


class _OldFormatSearchedImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if answer.error is ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT:
            return NOT_FOUND
        return answer


@_mutant(
    "old-format-searched",
    "A timestamp lookup on a topic stored in format v0 searches (and finds nothing) instead of failing with "
    "UNSUPPORTED_FOR_MESSAGE_FORMAT (43), so a consumer cannot tell 'no timestamps' from 'no match'.",
    ("LO.unsupported-for-message-format",),
    ("kafka-2.8", "kafka-0.10"),
)
def build_old_format_searched(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_OldFormatSearchedImpl)


class _V0SearchImpl(MutantImplementation):
    def list_offsets(
        self,
        topic: str,
        partition: int,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> ListOffsetsAnswer:
        if version != 0:
            return super().list_offsets(topic, partition, target, version=version, isolation=isolation)
        # The fault: v0 is answered by the v1 handler (a record-timestamp search, LO-2) instead of segment
        # base offsets dated by file mtime (LO-7).
        answer = self.cluster.list_offsets(topic, partition, target, version=1, isolation=isolation)
        return replace(answer, timestamp=NO_TIMESTAMP, leader_epoch=NO_PARTITION_LEADER_EPOCH)


@_mutant(
    "list-offsets-v0-searches-timestamps",
    "ListOffsets v0 is answered by the v1 handler: a time target searches record timestamps instead of "
    "answering segment base offsets dated by their files' mtime (LO-7).",
    ("LO.v0-segment-offsets",),
    ("kafka-3.9", "kafka-2.8", "kafka-0.10", "kafka-0.10.0"),
)
def build_list_offsets_v0_searches(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_V0SearchImpl)



class _EarliestCappedImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        # The fault: EARLIEST goes through the consumer cap like a lookup (offset < high watermark, LO-3).
        earliest = target in (SpecialTarget.EARLIEST, SpecialTarget.EARLIEST_LOCAL)
        if earliest and _found(answer) and answer.offset >= log.high_watermark:
            return NOT_FOUND
        return answer


@_mutant(
    "earliest-capped-at-high-watermark",
    "EARLIEST (and EARLIEST_LOCAL) are capped like a timestamp lookup, so when the log start offset equals "
    "the high watermark (an empty log, or retention deleted every record) they answer -1 instead of it.",
    ("LO.cap-exempts-earliest",),
)
def build_earliest_capped(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_EarliestCappedImpl)


class _MaxTsLastTieImpl(_ListOffsetsImpl):
    def mutate(self, log: PartitionLog, target: int, version: int, answer: ListOffsetsAnswer) -> ListOffsetsAnswer:
        if target != SpecialTarget.MAX_TIMESTAMP or not _found(answer):
            return answer
        # The fault: of several batches reaching the max, the latest answers (a `>=` scan, LO-6).
        holding = [b for b in log.batches() if b.last_offset < log.high_watermark
                   and any(r.timestamp == answer.timestamp for r in b.records())]
        batch = holding[-1]
        offset = next(r.offset for r in batch.records() if r.timestamp == answer.timestamp)
        epoch = batch.partition_leader_epoch if version >= 4 else NO_PARTITION_LEADER_EPOCH
        return replace(answer, offset=offset, leader_epoch=max(epoch, NO_PARTITION_LEADER_EPOCH))


@_mutant(
    "max-timestamp-latest-tie",
    "When several batches reach the log's max timestamp, MAX_TIMESTAMP answers the first record of the latest "
    "of them instead of the earliest (LO-6).",
    ("LO.max-timestamp-earliest-on-ties",),
)
def build_max_ts_latest_tie(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_MaxTsLastTieImpl)



class _RoundsUpTimeIndex(TimeIndex):
    def lookup(self, target: int) -> tuple[int, int]:
        # The fault: the first entry at or above the target (a lower-bound search) where IDX-7 takes the
        # largest entry at or below it.
        at_or_above = [(t, o) for t, o in self.entries if t >= target]
        return at_or_above[0] if at_or_above else super().lookup(target)


class _RoundsUpLog(PartitionLog):
    def _new_segment(self, base_offset: int, now: int) -> Segment:
        segment = super()._new_segment(base_offset, now)
        segment.time_index.__class__ = _RoundsUpTimeIndex
        return segment


class _RoundsUpCluster(MutantCluster):
    log_class = _RoundsUpLog


@_mutant(
    "time-index-lookup-rounds-up",
    "A time-index lookup returns the first entry at or above the target instead of the last at or below it, "
    "so the scan can start past the batch holding the answer (IDX-7).",
    ("IDX.lookup-largest-le-target",),
    ("kafka-0.10", "kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_time_index_lookup_rounds_up(profile: Profile) -> Implementation:
    return _impl(profile, _RoundsUpCluster)



class _ProduceAnswerImpl(MutantImplementation):
    """Post-processes produce answers with `mutate` (a response-level fault); what was sent is at hand."""

    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        response = super().produce(topic, partition, batches, produce_version=produce_version)
        return self.mutate(topic, partition, batches, response)

    def mutate(
        self, topic: str, partition: int, sent: Sequence[AnyBatch], response: ProduceResponse
    ) -> ProduceResponse:
        return response


def _is_key_error(error: RecordError) -> bool:
    return (error.message or "").startswith("Compacted topic cannot accept message without key")


class _KeyErrorWinsImpl(_ProduceAnswerImpl):
    def mutate(
        self, topic: str, partition: int, sent: Sequence[AnyBatch], response: ProduceResponse
    ) -> ProduceResponse:
        # The fault: the first record error's kind decides the partition error, not "any timestamp error".
        errors = response.record_errors
        if response.error is ErrorCode.INVALID_TIMESTAMP and errors and _is_key_error(errors[0]):
            return replace(response, error=ErrorCode.INVALID_RECORD, error_message=RECORDS_REJECTED_TEXT_2_5)
        return response


@_mutant(
    "first-record-error-decides",
    "A batch with both key errors (compacted topic) and timestamp errors fails with the first record's error "
    "(INVALID_RECORD, 87) instead of INVALID_TIMESTAMP (VAL-9: any timestamp error wins).",
    ("VAL.timestamp-error-wins",),
)
def build_first_record_error_decides(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_KeyErrorWinsImpl)


class _EveryFailureImpl(_ProduceAnswerImpl):
    def mutate(
        self, topic: str, partition: int, sent: Sequence[AnyBatch], response: ProduceResponse
    ) -> ProduceResponse:
        config = self.topic_config(topic, partition)
        if not (config.compacted and response.record_errors) or len(sent) != 1:
            return response
        # The fault: a keyless record is checked on to its timestamp, and both failures are listed (VAL-9
        # reports only a record's first failure); any timestamp error then fails the batch with 32.
        now = self.cluster.clock(self.cluster.partition(topic, partition).leader)
        before, after = effective_bounds(config, self.profile)
        extra = [
            RecordError(i, out_of_range_text(r.timestamp, i, now=now, before=before, after=after,
                                             style=self.profile.error_text))
            for i, r in enumerate(sent[0].records())
            if r.key is None
            and timestamp_out_of_range(r.timestamp, now=now, before=before, after=after, rule=self.profile.range_rule)
        ]
        if not extra:
            return response
        errors = tuple(sorted([*response.record_errors, *extra], key=lambda e: e.batch_index))
        return replace(response, error=ErrorCode.INVALID_TIMESTAMP, error_message=TIMESTAMP_REJECTED_TEXT,
                       record_errors=errors)


@_mutant(
    "every-failure-per-record",
    "A keyless record on a compacted topic is also checked for its timestamp, and both failures are listed "
    "in record_errors (VAL-9 reports only each record's first failure, the key).",
    ("VAL.first-failure-per-record",),
)
def build_every_failure_per_record(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_EveryFailureImpl)


class _PlainSummaryImpl(_ProduceAnswerImpl):
    def mutate(
        self, topic: str, partition: int, sent: Sequence[AnyBatch], response: ProduceResponse
    ) -> ProduceResponse:
        # The fault: the 2.5-3.1 top-level text, without the count and the first three record errors.
        if response.error is ErrorCode.INVALID_RECORD and response.error_message:
            return replace(response, error_message=RECORDS_REJECTED_TEXT_2_5)
        return response


@_mutant(
    "invalid-record-summary-plain",
    "A batch rejected for non-timestamp record errors carries the pre-3.2 error_message \"One or more records "
    "have been rejected\" instead of the count and the first three errors (VAL-9).",
    ("VAL.invalid-record-summary-text",),
)
def build_invalid_record_summary_plain(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_PlainSummaryImpl)


_OUT_OF_RANGE_TEXT = re.compile(
    r"^(Timestamp -?\d+ of message with offset )(-?\d+)( is out of range\. "
    r"The timestamp should be within \[)(-?\d+), (-?\d+)\]$"
)


class _LogOffsetInTextImpl(_ProduceAnswerImpl):
    def mutate(
        self, topic: str, partition: int, sent: Sequence[AnyBatch], response: ProduceResponse
    ) -> ProduceResponse:
        # The fault: the message prints the offset the record would have had in the log (VAL-7 prints the
        # request's own, relative offset).
        end = self.cluster.leader_log(topic, partition).log_end_offset

        def absolute(error: RecordError) -> RecordError:
            match = _OUT_OF_RANGE_TEXT.match(error.message or "")
            if match is None:
                return error
            head, offset, middle, low, high = match.groups()
            return replace(error, message=f"{head}{end + int(offset)}{middle}{low}, {high}]")

        return replace(response, record_errors=tuple(absolute(e) for e in response.record_errors))


@_mutant(
    "error-text-log-offset",
    "An out-of-range record's message prints the offset the record would have had in the log instead of its "
    "offset in the request (VAL-7).",
    ("VAL.error-offset-from-request",),
)
def build_error_text_log_offset(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_LogOffsetInTextImpl)


class _SaturatedBoundsImpl(_ProduceAnswerImpl):
    def mutate(
        self, topic: str, partition: int, sent: Sequence[AnyBatch], response: ProduceResponse
    ) -> ProduceResponse:
        # The fault: the printed bounds saturate at Long.MAX_VALUE instead of wrapping (VAL-7).
        def saturated(error: RecordError) -> RecordError:
            match = _OUT_OF_RANGE_TEXT.match(error.message or "")
            if match is None:
                return error
            head, offset, middle, low, high = match.groups()
            upper = LONG_MAX if int(high) < int(low) else int(high)
            return replace(error, message=f"{head}{offset}{middle}{low}, {upper}]")

        return replace(response, record_errors=tuple(saturated(e) for e in response.record_errors))


@_mutant(
    "error-bounds-saturated",
    "The bounds printed in an out-of-range message saturate at Long.MAX_VALUE where Kafka's 64-bit sum "
    "wraps to a negative number (after = Long.MAX_VALUE, VAL-7).",
    ("VAL.error-bounds-wraparound",),
)
def build_error_bounds_saturated(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_SaturatedBoundsImpl)



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


def _timestamp_rejection(rejected: list[tuple[int, int]], text: Callable[[int, int], str]) -> AppendRejected:
    errors = tuple(RecordError(index, text(index, ts)) for index, ts in rejected)
    return AppendRejected(ErrorCode.INVALID_TIMESTAMP, TIMESTAMP_REJECTED_TEXT, errors, "seeded fault")


class _NegativeExemptCluster(MutantCluster):
    def pre_validate(
        self, part: Partition, batches: Sequence[AnyBatch], now: int
    ) -> Sequence[AnyBatch] | AppendRejected:
        # The fault: the range check skips every negative timestamp, as if each were "no timestamp" (VAL-3
        # exempts only -1).
        return [_restamped(b, lambda t: -1 if t < -1 else t) for b in batches]


@_mutant(
    "negative-timestamps-exempt",
    "Every negative timestamp is exempt from the range check like -1, so Long.MIN_VALUE is accepted where "
    "the 3.6+ rule's 64-bit difference makes it ~2^63 ms in the future (VAL-4).",
    ("VAL.range-long-min-is-future",),
)
def build_negative_timestamps_exempt(profile: Profile) -> Implementation:
    return _impl(profile, _NegativeExemptCluster)


class _ExactDistanceCluster(MutantCluster):
    def pre_validate(
        self, part: Partition, batches: Sequence[AnyBatch], now: int
    ) -> Sequence[AnyBatch] | AppendRejected:
        if self.profile.range_rule is not RangeRule.SYMMETRIC or _is_lat_topic(part):
            return batches
        difference, _ = effective_bounds(part.config, self.profile)
        # The fault: |ts - now| computed without 64-bit overflow, so Long.MIN_VALUE is "out of range" (VAL-5:
        # Java's abs of the overflowed distance stays negative and never rejects).
        flat = [r.timestamp for b in batches for r in b.records()]
        rejected = [(i, t) for i, t in enumerate(flat) if t != -1 and abs(t - now) > difference]
        if not rejected:
            return batches
        return _timestamp_rejection(rejected, lambda i, t: out_of_range_text(
            t, i, now=now, before=difference, after=difference, style=self.profile.error_text))


@_mutant(
    "symmetric-distance-exact",
    "The symmetric range rule computes |ts - now| exactly (no 64-bit overflow), so it rejects ts = now + "
    "Long.MIN_VALUE, which Kafka's overflowing Math.abs never does (VAL-5).",
    ("VAL.symmetric-long-min-accepted",),
    ("kafka-2.8", "kafka-0.10", "kafka-0.10.0"),
)
def build_symmetric_distance_exact(profile: Profile) -> Implementation:
    return _impl(profile, _ExactDistanceCluster)


class _NegativeRejectedCluster(MutantCluster):
    def pre_validate(
        self, part: Partition, batches: Sequence[AnyBatch], now: int
    ) -> Sequence[AnyBatch] | AppendRejected:
        if _is_lat_topic(part):
            return batches
        # The fault: the broker applies the Java writer's sign check (FMT-8) to what it receives (VAL-15
        # range-checks such values like any other).
        flat = [r.timestamp for b in batches for r in b.records()]
        rejected = [(i, t) for i, t in enumerate(flat) if t < -1]
        if not rejected:
            return batches
        return _timestamp_rejection(rejected, lambda i, t: f"Invalid negative timestamp {t}")


@_mutant(
    "negative-timestamps-rejected",
    "A record stamped below -1 is refused with INVALID_TIMESTAMP for its sign (the Java writer's check) "
    "instead of being range-checked like any value (VAL-15).",
    ("VAL.below-minus-one-range-checked",),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_negative_timestamps_rejected(profile: Profile) -> Implementation:
    return _impl(profile, _NegativeRejectedCluster)


class _RebuildClampsCluster(MutantCluster):
    def pre_validate(
        self, part: Partition, batches: Sequence[AnyBatch], now: int
    ) -> Sequence[AnyBatch] | AppendRejected:
        if _is_lat_topic(part):
            return batches
        # The fault: when the batch is rebuilt (the topic's codec differs) a timestamp below -1 is written as
        # -1 instead of failing the builder (VAL-15: UNKNOWN_SERVER_ERROR).
        return [
            _restamped(b, lambda t: -1 if t < -1 else t) if part.config.target_codec(b.codec) is not b.codec else b
            for b in batches
        ]


@_mutant(
    "rebuild-clamps-negative-timestamps",
    "A batch rebuilt for the topic's codec stores a timestamp below -1 as -1 instead of failing the produce "
    "with UNKNOWN_SERVER_ERROR as Kafka's record builder does (VAL-15).",
    ("VAL.below-minus-one-rebuild-fails",),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_rebuild_clamps_negative(profile: Profile) -> Implementation:
    return _impl(profile, _RebuildClampsCluster)


def _without_crc(batch: AnyBatch) -> AnyBatch:
    if isinstance(batch, DefaultBatch):
        return replace(batch, crc=None)
    message = batch.message
    inner = tuple(_without_crc(entry) for entry in message.inner)
    return replace(batch, message=replace(message, crc=None, inner=inner))  # type: ignore[arg-type]


class _CrcTrustedCluster(MutantCluster):
    def pre_validate(
        self, part: Partition, batches: Sequence[AnyBatch], now: int
    ) -> Sequence[AnyBatch] | AppendRejected:
        # The fault: CRCs are not verified (the producer's bytes are trusted), so a field changed after the
        # CRC was computed is stored (FMT-3, FMT-9, VAL-9).
        return [_without_crc(b) for b in batches]


@_mutant(
    "crc-not-verified",
    "Batch and message CRCs are not verified on produce: a v2 batch or v1 message whose timestamp or type "
    "changed after its CRC was computed, or a compressed set with a corrupt inner message, is stored "
    "instead of refused with CORRUPT_MESSAGE.",
    ("FMT.v2-crc-coverage", "FMT.v1-timestamp-field", "VAL.corrupt-inner-crc"),
)
def build_crc_not_verified(profile: Profile) -> Implementation:
    return _impl(profile, _CrcTrustedCluster)


class _ZstdLegacyCluster(MutantCluster):
    def pre_validate(
        self, part: Partition, batches: Sequence[AnyBatch], now: int
    ) -> Sequence[AnyBatch] | AppendRejected:
        # The fault: a v0/v1 wrapper compressed with zstd is decompressed like any codec (FMT-4 allows zstd in
        # v2 only); the model stores it as gzip.
        return [
            replace(b, message=replace(b.message, attributes=(b.message.attributes & ~0x07) | Codec.GZIP.value))
            if isinstance(b, LegacyBatch) and b.codec is Codec.ZSTD
            else b
            for b in batches
        ]


@_mutant(
    "zstd-accepted-below-v2",
    "A v1 wrapper compressed with zstd is accepted (KIP-110 allows zstd in v2 batches only: Kafka refuses it "
    "with UNSUPPORTED_COMPRESSION_TYPE).",
    ("FMT.zstd-requires-v2",),
    ("kafka-3.9", "kafka-2.8"),
)
def build_zstd_accepted_below_v2(profile: Profile) -> Implementation:
    return _impl(profile, _ZstdLegacyCluster)



class _DuplicateAnsweredAsNewImpl(MutantImplementation):
    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        log = self.cluster.leader_log(topic, partition)
        duplicate = find_duplicate(log.batches(), batches)
        response = super().produce(topic, partition, batches, produce_version=produce_version)
        if duplicate is None or response.error is not ErrorCode.NONE:
            return response
        # The fault: a duplicate is answered like a new append: -1 on a CreateTime topic, the current clock on
        # a LogAppendTime one (VAL-12: the cached batch's MaxTimestamp either way).
        leader = self.cluster.partition(topic, partition).leader
        lat = self.topic_config(topic, partition).timestamp_type is TimestampType.LOG_APPEND_TIME
        return replace(response, log_append_time=self.cluster.clock(leader) if lat else NO_TIMESTAMP)


@_mutant(
    "duplicate-answered-as-new",
    "A retried idempotent batch is answered with the log_append_time of a new append (-1 on CreateTime topics, "
    "now on LogAppendTime ones) instead of the cached batch's MaxTimestamp (VAL-12).",
    ("VAL.duplicate-returns-cached-max",),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_duplicate_answered_as_new(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_DuplicateAnsweredAsNewImpl)


class _DedupFirstImpl(MutantImplementation):
    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        log = self.cluster.leader_log(topic, partition)
        duplicate = find_duplicate(log.batches(), batches)
        if duplicate is None:
            return super().produce(topic, partition, batches, produce_version=produce_version)
        # The fault: duplicate detection before validation, so a retry whose timestamps fell out of the window
        # is still answered as a duplicate (VAL-12: Kafka validates first and rejects it with 32).
        return ProduceResponse(
            ErrorCode.NONE,
            base_offset=duplicate.base_offset,
            log_append_time=duplicate.max_timestamp,
            log_start_offset=log.log_start_offset,
        ).as_of_version(produce_version)


@_mutant(
    "dedup-before-validation",
    "Duplicate detection runs before validation: an idempotent retry whose timestamps are now out of range is "
    "answered as a duplicate instead of rejected with INVALID_TIMESTAMP (VAL-12).",
    ("VAL.validation-before-dedup",),
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_dedup_before_validation(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_DedupFirstImpl)


class _IdempotenceDroppedCluster(MutantCluster):
    def pre_validate(
        self, part: Partition, batches: Sequence[AnyBatch], now: int
    ) -> Sequence[AnyBatch] | AppendRejected:
        if part.config.message_format_magic >= 2 or not self.profile.honours_message_format_version:
            return batches
        # The fault: for a topic stored below v2 the producer id and sequence are dropped in the conversion
        # instead of refusing the batch (VAL-14: UNSUPPORTED_FOR_MESSAGE_FORMAT).
        return [
            replace(b, producer_id=-1, producer_epoch=-1, base_sequence=-1, crc=None)
            if isinstance(b, DefaultBatch)
            else b
            for b in batches
        ]


@_mutant(
    "idempotence-dropped-on-old-format",
    "An idempotent batch for a topic stored in format v0/v1 is accepted, its producer id and sequence dropped "
    "in the conversion, instead of refused with UNSUPPORTED_FOR_MESSAGE_FORMAT (VAL-14).",
    ("VAL.idempotent-needs-v2",),
    ("kafka-2.8",),
)
def build_idempotence_dropped(profile: Profile) -> Implementation:
    return _impl(profile, _IdempotenceDroppedCluster)



def _first_inner_wrapper(batch: AnyBatch) -> AnyBatch:
    if not (isinstance(batch, LegacyBatch) and batch.is_compressed and batch.message.inner):
        return batch
    if batch.timestamp_type is not TimestampType.CREATE_TIME:
        return batch
    first = batch.message.inner[0].message.stored_timestamp
    return replace(batch, message=replace(batch.message, timestamp=first, crc=None))


class _WrapperFirstTimestampImpl(MutantImplementation):
    def fetch(self, topic: str, partition: int, offset: int, *, fetch_version: int) -> FetchResponse:
        response = super().fetch(topic, partition, offset, fetch_version=fetch_version)
        # The fault: a CreateTime v1 wrapper the broker builds (stored in format v1 with a topic codec, or
        # down-converted) carries its first inner timestamp instead of the largest (FMT-7).
        return replace(response, batches=tuple(_first_inner_wrapper(b) for b in response.batches))


@_mutant(
    "v1-wrapper-first-timestamp",
    "A CreateTime v1 wrapper the broker builds (a topic stored in format v1 with a topic codec, or a "
    "down-conversion for Fetch v2/v3) carries its first inner timestamp instead of the largest (FMT-7).",
    ("FMT.v1-wrapper-timestamp-is-max",),
    ("kafka-0.10.0", "kafka-0.10", "kafka-2.8", "kafka-3.9"),
)
def build_v1_wrapper_first_timestamp(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_WrapperFirstTimestampImpl)


def _base_at_min(batch: AnyBatch) -> AnyBatch:
    if not isinstance(batch, DefaultBatch) or batch.timestamp_type is not TimestampType.CREATE_TIME:
        return batch
    stamps = [r.timestamp for r in batch.records()]
    if not stamps:
        return batch
    base = min(stamps)
    records = tuple(replace(r, timestamp_delta=t - base) for r, t in zip(batch.records_, stamps, strict=True))
    return replace(batch, base_timestamp=base, records_=records, crc=None)


class _RebuiltBaseMinCluster(MutantCluster):
    def post_validate(
        self, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
    ) -> ValidatedAppend:
        if not sent or part.config.target_codec(sent[0].codec) is sent[0].codec:
            return outcome
        # The fault: a rebuilt v2 batch starts its BaseTimestamp at the smallest record timestamp instead of
        # the first record's (FMT-11); the records still read the same.
        return replace(outcome, batches=tuple(_base_at_min(b) for b in outcome.batches))


@_mutant(
    "rebuilt-base-is-min",
    "A v2 batch the broker rebuilds for the topic's codec gets BaseTimestamp = the smallest record timestamp "
    "instead of the first record's (FMT-11); every record still reads its own timestamp.",
    ("FMT.v2-base-is-first-record",),
)
def build_rebuilt_base_is_min(profile: Profile) -> Implementation:
    return _impl(profile, _RebuiltBaseMinCluster)



@_mutant(
    "roll-by-wall-clock",
    "Segments roll when the broker clock says they are older than segment.ms (the 0.10.0 rule) instead of "
    "when the incoming max timestamp is that far past the first batch's (IDX-9, KIP-33).",
    ("IDX.roll-by-first-batch",),
    ("kafka-0.10", "kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_roll_by_wall_clock(profile: Profile) -> Implementation:
    return _impl(profile, cluster_profile=replace(profile, roll_base=RollBase.WALL_CLOCK))


def _segment_log(segment_class: type[Segment]) -> type[Cluster]:
    """A cluster whose replicas' segments are of `segment_class` (a segment-level fault)."""

    class _Log(PartitionLog):
        def _new_segment(self, base_offset: int, now: int) -> Segment:
            segment = super()._new_segment(base_offset, now)
            segment.__class__ = segment_class
            return segment

    class _Cluster(MutantCluster):
        log_class = _Log

    return _Cluster


class _AbsoluteAgeSegment(Segment):
    def time_waited_for_roll(
        self, now: int, incoming_max_timestamp: int, roll_rule: RollBase = RollBase.FIRST_APPEND
    ) -> int:
        # The fault: the age is the distance |incoming max - roll base|, so an incoming max of -1, or one below
        # a far-future first timestamp, rolls the segment (IDX-9: the negative age blocks the roll).
        return abs(super().time_waited_for_roll(now, incoming_max_timestamp, roll_rule))


@_mutant(
    "roll-age-absolute",
    "A segment's age for a time roll is |incoming max - roll base|, so records without timestamps (incoming "
    "max -1) roll a timestamped segment, as do records older than a far-future first timestamp; a negative "
    "age never rolls (IDX-9).",
    ("IDX.future-first-timestamp-blocks-roll",),
    ("kafka-0.10", "kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_roll_age_absolute(profile: Profile) -> Implementation:
    return _impl(profile, _segment_log(_AbsoluteAgeSegment))


class _NoAgeRollSegment(Segment):
    def time_waited_for_roll(
        self, now: int, incoming_max_timestamp: int, roll_rule: RollBase = RollBase.FIRST_APPEND
    ) -> int:
        base = self._loaded_roll_base()
        if roll_rule is RollBase.WALL_CLOCK or base is None or base < 0:
            # The fault: without a roll base the segment never ages (IDX-9: now - creation time).
            return 0
        return super().time_waited_for_roll(now, incoming_max_timestamp, roll_rule)


@_mutant(
    "untimed-segment-never-ages",
    "A segment without a roll base (records without timestamps; always in 0.10.0) never rolls on time, "
    "instead of once the broker clock says it is older than segment.ms (IDX-9).",
    ("IDX.roll-by-age-without-timestamps",),
)
def build_untimed_segment_never_ages(profile: Profile) -> Implementation:
    return _impl(profile, _segment_log(_NoAgeRollSegment))


class _LateFullTimeIndex(TimeIndex):
    def is_full(self) -> bool:
        # The fault: full at capacity, not capacity - 1 (IDX-1 keeps the last slot for the roll entry).
        return len(self) >= self.max_entries


class _LateFullLog(PartitionLog):
    def _new_segment(self, base_offset: int, now: int) -> Segment:
        segment = super()._new_segment(base_offset, now)
        segment.time_index.__class__ = _LateFullTimeIndex
        return segment


class _LateFullCluster(MutantCluster):
    log_class = _LateFullLog


@_mutant(
    "time-index-full-one-late",
    "A time index counts as full only at capacity (segment.index.bytes / 12 entries) instead of capacity - 1, "
    "so a segment rolls one indexed append later (IDX-1).",
    ("IDX.full-index-forces-roll",),
    ("kafka-0.10", "kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_time_index_full_one_late(profile: Profile) -> Implementation:
    return _impl(profile, _LateFullCluster)


class _LagIgnoredSegment(Segment):
    def should_roll(
        self,
        incoming_max_timestamp: int,
        incoming_size: int,
        incoming_last_offset: int,
        now: int,
        config: TopicConfig,
        profile: Profile,
    ) -> bool:
        # The fault: the roll threshold is segment.ms on compacted topics too (IDX-9: min with
        # max.compaction.lag.ms).
        return super().should_roll(incoming_max_timestamp, incoming_size, incoming_last_offset, now,
                                   replace(config, compacted=False), profile)


@_mutant(
    "compaction-lag-ignored-for-roll",
    "On a compacted topic the time-roll threshold is segment.ms, ignoring a smaller max.compaction.lag.ms "
    "(IDX-9, KIP-354).",
    ("IDX.compacted-roll-max-lag",),
)
def build_compaction_lag_ignored(profile: Profile) -> Implementation:
    return _impl(profile, _segment_log(_LagIgnoredSegment))



class _ZstdConvertedImpl(MutantImplementation):
    def fetch(self, topic: str, partition: int, offset: int, *, fetch_version: int) -> FetchResponse:
        response = super().fetch(topic, partition, offset, fetch_version=fetch_version)
        if response.error is not ErrorCode.UNSUPPORTED_COMPRESSION_TYPE:
            return response
        # The fault: zstd batches are down-converted like any codec (recompressed as gzip for magic 0/1)
        # instead of failing the fetch (CNV-5).
        log = self.cluster.leader_log(topic, partition)
        stored = [
            replace(b, attributes=(b.attributes & ~0x07) | Codec.GZIP.value, crc=None)
            if isinstance(b, DefaultBatch) and b.codec is Codec.ZSTD
            else b
            for b in log.fetch(offset)
            if b.base_offset < log.high_watermark
        ]
        error, view = fetch_view(stored, fetch_version=fetch_version, profile=self.profile,
                                 config=self.topic_config(topic, partition), replica=False, fetch_offset=offset)
        return replace(response, error=error, batches=view)


@_mutant(
    "zstd-down-converted",
    "A fetch below v4 that reaches a zstd batch gets it down-converted (recompressed with another codec) "
    "instead of failing with UNSUPPORTED_COMPRESSION_TYPE (CNV-5).",
    ("CNV.down-convert-zstd-unsupported",),
    ("kafka-3.9", "kafka-2.8"),
)
def build_zstd_down_converted(profile: Profile) -> Implementation:
    return _impl(profile, impl_cls=_ZstdConvertedImpl)


__all__ = ["MUTANTS", "Mutant", "MutantCluster", "MutantFactory", "MutantImplementation"]
