"""Down-conversion faults for old fetch versions (CNV-*)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from conformance.faults.mutant import MutantCluster, _is_v2, _model_mutant, _restamped, _rewritten
from models.cluster import Cluster, Partition
from models.constants import (
    MAGIC_V0,
    NO_TIMESTAMP,
    Codec,
    ErrorCode,
    TimestampType,
)
from models.records import AnyBatch, DefaultBatch, LegacyBatch
from models.validator import AppendRejected, ValidatedAppend


def _drop_timestamps(batch: LegacyBatch) -> LegacyBatch:
    inner = tuple(
        replace(e, message=replace(e.message, timestamp=NO_TIMESTAMP, crc=None)) for e in batch.message.inner
    )
    return replace(batch, message=replace(batch.message, timestamp=NO_TIMESTAMP, inner=inner, crc=None))


class _DownConvertCluster(MutantCluster):
    """A down-conversion fault: `convert` rewrites each batch a fetch below v4 serves (CNV-*)."""

    def fetch_view(
        self, part: Partition, batches: Sequence[AnyBatch], *, fetch_version: int, replica: bool, fetch_offset: int
    ) -> tuple[ErrorCode, tuple[AnyBatch, ...]]:
        error, view = super().fetch_view(
            part, batches, fetch_version=fetch_version, replica=replica, fetch_offset=fetch_offset
        )
        if fetch_version >= 4:
            return error, view
        return error, tuple(self.convert(b) for b in view)

    def convert(self, batch: AnyBatch) -> AnyBatch:
        return batch


class _DownConvertDropsTypeCluster(_DownConvertCluster):
    def convert(self, batch: AnyBatch) -> AnyBatch:
        # The fault: the LogAppendTime type bit is lost in the v1 messages (CNV-5).
        lat = batch.timestamp_type is TimestampType.LOG_APPEND_TIME
        if isinstance(batch, LegacyBatch) and batch.magic == 1 and lat:
            return batch.with_header(timestamp_type=TimestampType.CREATE_TIME, max_timestamp=batch.max_timestamp)
        return batch


_model_mutant(
    "down-conversion-drops-type",
    "Down-converting a LogAppendTime v2 batch to v1 writes CreateTime messages (the type bit lost).",
    ("CNV.down-convert-keeps-type",),
    cluster=_DownConvertDropsTypeCluster,
)


class _DownConvertDropsTimestampsCluster(_DownConvertCluster):
    def convert(self, batch: AnyBatch) -> AnyBatch:
        # The fault: v1 messages are written with timestamp -1, as if converted to v0 (CNV-5).
        return _drop_timestamps(batch) if isinstance(batch, LegacyBatch) and batch.magic == 1 else batch


_model_mutant(
    "down-conversion-drops-timestamps",
    "Down-converting to v1 writes timestamp -1 into every message (converted as if to v0) although v1 "
    "carries timestamps. On a LogAppendTime topic the messages and wrapper then lack the batch "
    "MaxTimestamp they must carry (CNV.down-convert-keeps-type).",
    ("CNV.down-convert-createtime-keeps-timestamps", "CNV.down-convert-keeps-type"),
    cluster=_DownConvertDropsTimestampsCluster,
)


class _ZstdConvertedCluster(MutantCluster):
    def fetch_view(
        self, part: Partition, batches: Sequence[AnyBatch], *, fetch_version: int, replica: bool, fetch_offset: int
    ) -> tuple[ErrorCode, tuple[AnyBatch, ...]]:
        error, view = super().fetch_view(
            part, batches, fetch_version=fetch_version, replica=replica, fetch_offset=fetch_offset
        )
        if error is not ErrorCode.UNSUPPORTED_COMPRESSION_TYPE:
            return error, view
        # The fault: zstd batches are down-converted like any codec (recompressed as gzip for magic 0/1)
        # instead of failing the fetch (CNV-5).
        regzipped = _rewritten(
            batches,
            lambda b: _is_v2(b) and b.codec is Codec.ZSTD,
            lambda b: replace(b, attributes=(b.attributes & ~0x07) | Codec.GZIP.value, crc=None),
        )
        return super().fetch_view(
            part, regzipped, fetch_version=fetch_version, replica=replica, fetch_offset=fetch_offset
        )


_model_mutant(
    "zstd-down-converted",
    "A fetch below v4 that reaches a zstd batch gets it down-converted (recompressed with another codec) "
    "instead of failing with UNSUPPORTED_COMPRESSION_TYPE (CNV-5).",
    ("CNV.down-convert-zstd-unsupported",),
    cluster=_ZstdConvertedCluster,
)


class _RemovedProduceVersionsServedCluster(MutantCluster):
    def request_refusal(self, batches: Sequence[AnyBatch], produce_version: int) -> AppendRejected | None:
        # The fault: Produce v0-v2, which 4.0 still lists in ApiVersions (KAFKA-18659) but closes the connection
        # on, are served as before 4.0: any magic accepted and converted to v2 (CNV-1, CNV-7).
        if produce_version < 3:
            return None
        return super().request_refusal(batches, produce_version)


_model_mutant(
    "removed-produce-versions-served",
    "Produce v0-v2 are answered and their magic 0/1 record sets stored (up-converted) on a profile that removed "
    "them, where Kafka 4.0 closes the connection (CNV-1, CNV-7), as Tansu and librdkafka's mock cluster do.",
    ("CNV.no-conversion",),
    cluster=_RemovedProduceVersionsServedCluster,
)


def _keep_max(restamped: AnyBatch, original: AnyBatch) -> AnyBatch:
    if isinstance(restamped, DefaultBatch):
        return replace(restamped, max_timestamp=original.max_timestamp, crc=None)
    return restamped


def _up_converted_v0_stamped_now(
    cluster: Cluster, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
) -> ValidatedAppend:
    if not any(b.magic == MAGIC_V0 for b in sent):
        return outcome
    # The fault: a v0 record converted for a newer format on a CreateTime topic is given the broker's now
    # (CNV-4 gives it -1 with type CreateTime: a v0 record carries no time).
    # The header max stays what the validator computed from the v0 source (-1, CMP-6): only the records change.
    stored = tuple(_keep_max(_restamped(b, lambda t: now if t == NO_TIMESTAMP else t), b)
                   if b.magic > MAGIC_V0 else b for b in outcome.batches)  # fmt: skip
    return replace(outcome, batches=stored)


_model_mutant(
    "up-convert-v0-stamps-now",
    "On a CreateTime topic whose format is newer than v0, records produced as v0 are stored with the broker's "
    "now instead of -1 (CNV-4).",
    ("CNV.up-convert-v0-createtime",),
    stored=_up_converted_v0_stamped_now,
    topics=TimestampType.CREATE_TIME,
)
