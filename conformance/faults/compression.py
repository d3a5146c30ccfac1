"""Faults of the stored batch when the broker stamps or rebuilds it (CMP-*): base timestamp, append max,
rebuild of out-of-range values."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from conformance.faults.mutant import MutantCluster, _impl, _is_lat_topic, _mutant, _restamped
from conformance.targets.kinds.implementation import Implementation
from models.cluster import Partition
from models.constants import (
    MAGIC_V1,
    TimestampType,
)
from models.profiles import Profile
from models.records import AnyBatch, DefaultBatch, LegacyBatch
from models.validator import (
    AppendRejected,
    ValidatedAppend,
    ValidationPath,
)


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
)
def build_lat_overwrites_base(profile: Profile) -> Implementation:
    return _impl(profile, _LatOverwritesBaseCluster)


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
    # Explicit: the fault is in v2 batches, which 0.10.x profiles do not have (max_magic 1).
    ("kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"),
)
def build_header_max_last_record(profile: Profile) -> Implementation:
    return _impl(profile, _HeaderMaxLastCluster)


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
)
def build_rebuild_clamps_negative(profile: Profile) -> Implementation:
    return _impl(profile, _RebuildClampsCluster)



# --- the v1 LogAppendTime stamping paths (CMP-3/4, where v1 is produced and stored: before IBP 3.0) -------------


def _v1_wrappers(
    outcome: ValidatedAppend, stamp_inner: Callable[[LegacyBatch, int], int], *, path: ValidationPath
) -> ValidatedAppend:
    """`outcome` with the inner messages of each stored compressed v1 wrapper restamped (when the append took
    `path`); the wrapper and what a consumer reads (the wrapper's LogAppendTime, FMT-7) are left as they are."""
    if outcome.path is not path:
        return outcome
    stored: list[AnyBatch] = []
    for b in outcome.batches:
        if isinstance(b, LegacyBatch) and b.magic == MAGIC_V1 and b.message.inner:
            inner = tuple(
                replace(e, message=replace(e.message, timestamp=stamp_inner(e, i), crc=None))
                for i, e in enumerate(b.message.inner)
            )
            b = replace(b, message=replace(b.message, inner=inner, crc=None))
        stored.append(b)
    return replace(outcome, batches=tuple(stored))


class _LatV1UncompressedKeepsProducerTimeCluster(MutantCluster):
    def post_validate(
        self, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
    ) -> ValidatedAppend:
        if not _is_lat_topic(part) or outcome.path is not ValidationPath.IN_PLACE_UNCOMPRESSED:
            return outcome
        # The fault: the LogAppendTime bit is set on each uncompressed v1 message but its timestamp field keeps
        # the producer's value (CMP-3 overwrites it with now).
        produced = iter(
            m.message.timestamp for m in sent if isinstance(m, LegacyBatch) and not m.message.inner
        )
        stored = tuple(
            replace(b, message=replace(b.message, timestamp=next(produced, b.message.timestamp), crc=None))
            if isinstance(b, LegacyBatch) and b.magic == MAGIC_V1 and not b.message.inner
            else b
            for b in outcome.batches
        )
        return replace(outcome, batches=stored)


@_mutant(
    "lat-v1-uncompressed-keeps-producer-time",
    "On a LogAppendTime topic stored as v1, an uncompressed v1 message gets bit 3 set but keeps the producer's "
    "timestamp instead of now (CMP-3).",
    ("CMP.lat-v1-uncompressed-overwrites",),
)
def build_lat_v1_uncompressed_keeps_producer_time(profile: Profile) -> Implementation:
    return _impl(profile, _LatV1UncompressedKeepsProducerTimeCluster)


class _LatV1InPlaceStampsInnerCluster(MutantCluster):
    def post_validate(
        self, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
    ) -> ValidatedAppend:
        if not _is_lat_topic(part):
            return outcome
        # The fault: in place, now is also written into every inner message (CMP-3 stamps only the wrapper).
        return _v1_wrappers(outcome, lambda e, i: now, path=ValidationPath.IN_PLACE_COMPRESSED)


@_mutant(
    "lat-v1-inplace-stamps-inner",
    "On a LogAppendTime topic a compressed v1 set kept in place gets now in every inner message too, where "
    "Kafka stamps only the wrapper and keeps the producer's inner values (CMP-3, CMP-8).",
    ("CMP.lat-v1-compressed-wrapper-only",),
)
def build_lat_v1_inplace_stamps_inner(profile: Profile) -> Implementation:
    return _impl(profile, _LatV1InPlaceStampsInnerCluster)


class _LatV1RebuildKeepsInnerCluster(MutantCluster):
    def post_validate(
        self, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
    ) -> ValidatedAppend:
        if not _is_lat_topic(part):
            return outcome
        # The fault: a rebuilt v1 set keeps each record's source timestamp in its inner message (CMP-4 writes now,
        # as Kafka's record builder does under LogAppendTime).
        source = [r.timestamp for b in sent for r in b.records()]
        return _v1_wrappers(
            outcome, lambda e, i: source[i] if i < len(source) else e.message.stored_timestamp,
            path=ValidationPath.REBUILD,
        )


@_mutant(
    "lat-v1-rebuild-keeps-inner",
    "On a LogAppendTime topic a v1 set rebuilt for the topic's codec keeps the source timestamps in its inner "
    "messages, where Kafka's builder writes now into each of them (CMP-4, CMP-8).",
    ("CMP.lat-rebuild-v1-inner-now",),
)
def build_lat_v1_rebuild_keeps_inner(profile: Profile) -> Implementation:
    return _impl(profile, _LatV1RebuildKeepsInnerCluster)
