"""Faults of the stored batch when the broker stamps or rebuilds it (CMP-*): base timestamp, append max,
rebuild of out-of-range values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from models.cluster import Partition
from models.constants import (
    TimestampType,
)
from models.profiles import Profile
from models.records import AnyBatch, DefaultBatch
from models.validator import (
    AppendRejected,
    ValidatedAppend,
)

from ...implementation import Implementation
from .base import MutantCluster, _impl, _is_lat_topic, _mutant, _restamped


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

