"""Record-format and consumer-view faults (FMT-*, CON-*): CRCs, codecs, wrapper and base timestamps, read rules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from conformance.faults.mutant import (
    MutantCluster,
    MutantImplementation,
    _is_lat_v2,
    _is_legacy,
    _model_mutant,
    _retype,
    _rewritten,
)
from models.cluster import Cluster, FetchResponse, Partition
from models.constants import (
    MAGIC_V1,
    NO_TIMESTAMP,
    Codec,
    TimestampType,
)
from models.records import AnyBatch, ConsumerRecord, DefaultBatch, LegacyBatch, LegacyMessage
from models.validator import ValidatedAppend


@dataclass(frozen=True, kw_only=True)
class _BaseDeltaBatch(DefaultBatch):
    """Reader fault: a LogAppendTime v2 batch reads BaseTimestamp + delta (MaxTimestamp ignored)."""

    def record_timestamp(self, record: Any) -> int:
        return self.base_timestamp + int(record.timestamp_delta)


def _lat_base_delta_stored(
    cluster: Cluster, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
) -> ValidatedAppend:
    return replace(outcome, batches=_rewritten(outcome.batches, _is_lat_v2, lambda b: _retype(b, _BaseDeltaBatch)))


_model_mutant(
    "lat-reads-base-plus-delta",
    "LogAppendTime is stamped into MaxTimestamp but v2 records are read as BaseTimestamp + delta "
    "(the FMT-12 override missing, a classic client/broker reader bug).",
    # LO.record-own-timestamp: a broker's lookup reads the found record as a consumer does (LO-2 with CON-1),
    # the one place a served broker shows a reader fault (over the wire the consumer's reading is the suite's).
    ("CON.v2-lat-max-timestamp", "FMT.v2-lat-reads-max", "CMP.lat-every-record-reads-now", "LO.record-own-timestamp"),
    stored=_lat_base_delta_stored,
)


@dataclass(frozen=True, kw_only=True)
class _InnerOwnTimestampBatch(LegacyBatch):
    """Reader fault: inner messages of a LogAppendTime v1 wrapper read their own stored timestamps."""

    def inner_timestamp(self, inner: LegacyMessage) -> int:
        if self.message.own_timestamp_type is TimestampType.LOG_APPEND_TIME:
            return inner.stored_timestamp  # FMT-7: the wrapper's timestamp
        return super().inner_timestamp(inner)


class _InnerOwnTimestampCluster(MutantCluster):
    def fetch(
        self, topic: str, index: int, offset: int, *, fetch_version: int = 12, replica: bool = False
    ) -> FetchResponse:
        response = super().fetch(topic, index, offset, fetch_version=fetch_version, replica=replica)
        view = tuple(_retype(b, _InnerOwnTimestampBatch) if isinstance(b, LegacyBatch) else b for b in response.batches)
        return replace(response, batches=view)


_model_mutant(
    "v1-wrapper-lat-inner-own-timestamp",
    "Inner records of a compressed LogAppendTime v1 wrapper are read with their own (producer) "
    "timestamps instead of the wrapper's, as several non-Java clients did.",
    ("CON.v1-wrapper-lat-wrapper-value",),
    reader_only=True,  # the fetch answer is retyped, the stored log is not: no broker lookup reads it wrong
    cluster=_InnerOwnTimestampCluster,
)


@dataclass(frozen=True, kw_only=True)
class _V1ReadsAsV0Batch(LegacyBatch):
    """Reader fault: an uncompressed v1 message is read as a v0 one (timestamp -1, NoTimestampType)."""

    def records(self) -> tuple[ConsumerRecord, ...]:
        if self.magic != MAGIC_V1 or self.message.inner:
            return super().records()
        none = TimestampType.NO_TIMESTAMP_TYPE
        return tuple(replace(r, timestamp=NO_TIMESTAMP, timestamp_type=none) for r in super().records())


def _v1_as_v0_stored(
    cluster: Cluster, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
) -> ValidatedAppend:
    stored = _rewritten(outcome.batches, _is_legacy, lambda b: _retype(b, _V1ReadsAsV0Batch))
    return replace(outcome, batches=stored)


_model_mutant(
    "v1-uncompressed-reads-as-v0",
    "An uncompressed v1 message is read as if it were v0: timestamp -1 and NoTimestampType instead of its own "
    "timestamp field and bit 3 (FMT-6, CON-1), the magic byte not consulted by the reader.",
    ("CON.v1-uncompressed-own",),
    stored=_v1_as_v0_stored,
)


def _without_crc(batch: AnyBatch) -> AnyBatch:
    if isinstance(batch, DefaultBatch):
        return replace(batch, crc=None)
    message = batch.message
    inner = tuple(_without_crc(entry) for entry in message.inner)
    return replace(batch, message=replace(message, crc=None, inner=inner))  # type: ignore[arg-type]


def _crcs_trusted(cluster: Cluster, part: Partition, batches: Sequence[AnyBatch], now: int) -> Sequence[AnyBatch]:
    # The fault: CRCs are not verified (the producer's bytes are trusted), so a field changed after the
    # CRC was computed is stored (FMT-3, FMT-9, VAL-9).
    return [_without_crc(b) for b in batches]


_model_mutant(
    "crc-not-verified",
    "Batch and message CRCs are not verified on produce: a v2 batch or v1 message whose timestamp or type "
    "changed after its CRC was computed, or a compressed set with a corrupt inner message, is stored "
    "instead of refused with CORRUPT_MESSAGE.",
    ("FMT.v2-crc-coverage", "FMT.v1-timestamp-field", "VAL.corrupt-inner-crc"),
    sent=_crcs_trusted,
)


def _legacy_zstd_as_gzip(
    cluster: Cluster, part: Partition, batches: Sequence[AnyBatch], now: int
) -> Sequence[AnyBatch]:
    # The fault: a v0/v1 wrapper compressed with zstd is decompressed like any codec (FMT-4 allows zstd in
    # v2 only); the model stores it as gzip.
    return _rewritten(
        batches,
        lambda b: _is_legacy(b) and b.codec is Codec.ZSTD,
        lambda b: replace(b, message=replace(b.message, attributes=(b.message.attributes & ~0x07) | Codec.GZIP.value)),
    )


_model_mutant(
    "zstd-accepted-below-v2",
    "A v0/v1 wrapper compressed with zstd is accepted (KIP-110 allows zstd in v2 batches only: Kafka's legacy "
    "deep iterator refuses it with INVALID_RECORD).",
    ("FMT.zstd-requires-v2",),
    sent=_legacy_zstd_as_gzip,
)


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


_model_mutant(
    "v1-wrapper-first-timestamp",
    "A CreateTime v1 wrapper the broker builds (a topic stored in format v1 with a topic codec, or a "
    "down-conversion for Fetch v2/v3) carries its first inner timestamp instead of the largest (FMT-7).",
    ("FMT.v1-wrapper-timestamp-is-max",),
    # Explicit: a broker builds v1 wrappers only where topics are stored in format v1 or fetches are
    # down-converted, which 4.0 removed (KIP-724); the clause itself applies everywhere.
    ("kafka-0.10.0", "kafka-0.10", "kafka-2.8", "kafka-3.9"),
    answers=_WrapperFirstTimestampImpl,
)


def _base_at_min(batch: AnyBatch) -> AnyBatch:
    if not isinstance(batch, DefaultBatch) or batch.timestamp_type is not TimestampType.CREATE_TIME:
        return batch
    stamps = [r.timestamp for r in batch.records()]
    if not stamps:
        return batch
    base = min(stamps)
    records = tuple(replace(r, timestamp_delta=t - base) for r, t in zip(batch.records_, stamps, strict=True))
    return replace(batch, base_timestamp=base, records_=records, crc=None)


def _rebuilt_base_at_min(
    cluster: Cluster, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
) -> ValidatedAppend:
    if not sent or part.config.target_codec(sent[0].codec) is sent[0].codec:
        return outcome
    # The fault: a rebuilt v2 batch starts its BaseTimestamp at the smallest record timestamp instead of
    # the first record's (FMT-11); the records still read the same.
    return replace(outcome, batches=tuple(_base_at_min(b) for b in outcome.batches))


_model_mutant(
    "rebuilt-base-is-min",
    "A v2 batch the broker rebuilds for the topic's codec gets BaseTimestamp = the smallest record timestamp "
    "instead of the first record's (FMT-11); every record still reads its own timestamp.",
    ("FMT.v2-base-is-first-record",),
    stored=_rebuilt_base_at_min,
)
