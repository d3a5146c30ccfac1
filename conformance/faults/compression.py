"""Faults of the stored batch when the broker stamps or rebuilds it (CMP-*): base timestamp, append max,
rebuild of out-of-range values."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from conformance.faults.mutant import (
    V2_PROFILES,
    _is_lat_v2,
    _is_v2,
    _model_mutant,
    _restamped,
    _rewritten,
)
from models.cluster import Cluster, Partition
from models.constants import MAGIC_V1, TimestampType
from models.records import AnyBatch, LegacyBatch
from models.validator import ValidatedAppend, ValidationPath


def _lat_overwrites_base(
    cluster: Cluster, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
) -> ValidatedAppend:
    stored = _rewritten(outcome.batches, _is_lat_v2, lambda b: replace(b, base_timestamp=now, crc=None))
    return replace(outcome, batches=stored)


_model_mutant(
    "lat-overwrites-base-timestamp",
    "Stamping LogAppendTime also overwrites the v2 BaseTimestamp with now: in place (FMT-13 says only "
    "attributes and MaxTimestamp change) and on a rebuilt batch (CMP-4: the first source record's timestamp).",
    ("FMT.set-max-timestamp-keeps-base", "CMP.lat-inplace-v2-keeps-base", "CMP.lat-rebuild-v2-base-first-source"),
    stored=_lat_overwrites_base,
)


def _header_max_last(
    cluster: Cluster, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
) -> ValidatedAppend:
    stored = _rewritten(
        outcome.batches,
        lambda b: _is_v2(b) and bool(b.records_),
        lambda b: replace(b, max_timestamp=b.records()[-1].timestamp, crc=None),
    )
    return replace(outcome, batches=stored, max_timestamp=max(b.max_timestamp for b in stored))


_model_mutant(
    "header-max-last-record",
    "The stored batch max timestamp (and the append's max) is the last record's timestamp instead of "
    "the largest one.",
    ("VAL.header-max-recomputed", "CMP.append-max-timestamp"),
    V2_PROFILES,
    stored=_header_max_last,
    topics=TimestampType.CREATE_TIME,
)


def _rebuild_clamps(cluster: Cluster, part: Partition, batches: Sequence[AnyBatch], now: int) -> Sequence[AnyBatch]:
    # The fault: when the batch is rebuilt (the topic's codec differs) a timestamp below -1 is written as
    # -1 instead of failing the builder (VAL-15: UNKNOWN_SERVER_ERROR).
    return [
        _restamped(b, lambda t: -1 if t < -1 else t) if part.config.target_codec(b.codec) is not b.codec else b
        for b in batches
    ]


_model_mutant(
    "rebuild-clamps-negative-timestamps",
    "A batch rebuilt for the topic's codec stores a timestamp below -1 as -1 instead of failing the produce "
    "with UNKNOWN_SERVER_ERROR as Kafka's record builder does (VAL-15).",
    ("VAL.below-minus-one-rebuild-fails",),
    sent=_rebuild_clamps,
    topics=TimestampType.CREATE_TIME,
)


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


def _lat_v1_keeps_producer_time(
    cluster: Cluster, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
) -> ValidatedAppend:
    if outcome.path is not ValidationPath.IN_PLACE_UNCOMPRESSED:
        return outcome
    # The fault: the LogAppendTime bit is set on each uncompressed v1 message but its timestamp field keeps
    # the producer's value (CMP-3 overwrites it with now).
    produced = iter(m.message.timestamp for m in sent if isinstance(m, LegacyBatch) and not m.message.inner)
    stored = tuple(
        replace(b, message=replace(b.message, timestamp=next(produced, b.message.timestamp), crc=None))
        if isinstance(b, LegacyBatch) and b.magic == MAGIC_V1 and not b.message.inner
        else b
        for b in outcome.batches
    )
    return replace(outcome, batches=stored)


_model_mutant(
    "lat-v1-uncompressed-keeps-producer-time",
    "On a LogAppendTime topic stored as v1, an uncompressed v1 message gets bit 3 set but keeps the producer's "
    "timestamp instead of now (CMP-3).",
    ("CMP.lat-v1-uncompressed-overwrites",),
    stored=_lat_v1_keeps_producer_time,
    topics=TimestampType.LOG_APPEND_TIME,
)


def _lat_v1_inner_stamped(
    cluster: Cluster, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
) -> ValidatedAppend:
    # The fault: in place, now is also written into every inner message (CMP-3 stamps only the wrapper).
    return _v1_wrappers(outcome, lambda e, i: now, path=ValidationPath.IN_PLACE_COMPRESSED)


_model_mutant(
    "lat-v1-inplace-stamps-inner",
    "On a LogAppendTime topic a compressed v1 set kept in place gets now in every inner message too, where "
    "Kafka stamps only the wrapper and keeps the producer's inner values (CMP-3, CMP-8).",
    ("CMP.lat-v1-compressed-wrapper-only",),
    stored=_lat_v1_inner_stamped,
    topics=TimestampType.LOG_APPEND_TIME,
)


def _lat_v1_rebuild_keeps_inner(
    cluster: Cluster, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
) -> ValidatedAppend:
    # The fault: a rebuilt v1 set keeps each record's source timestamp in its inner message (CMP-4 writes now,
    # as Kafka's record builder does under LogAppendTime).
    source = [r.timestamp for b in sent for r in b.records()]
    return _v1_wrappers(
        outcome,
        lambda e, i: source[i] if i < len(source) else e.message.stored_timestamp,
        path=ValidationPath.REBUILD,
    )


_model_mutant(
    "lat-v1-rebuild-keeps-inner",
    "On a LogAppendTime topic a v1 set rebuilt for the topic's codec keeps the source timestamps in its inner "
    "messages, where Kafka's builder writes now into each of them (CMP-4, CMP-8).",
    ("CMP.lat-rebuild-v1-inner-now",),
    stored=_lat_v1_rebuild_keeps_inner,
    topics=TimestampType.LOG_APPEND_TIME,
)
