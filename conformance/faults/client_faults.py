"""Client faults (VAL-11, VAL-12, CON-1, LO-9): the reference client
(conformance/targets/libraries/model/model_client.py) with one
step changed, run against the reference broker serving the model (`--target mutant:<id>` of kind client), so the
client suites (suites/test_client_*.py) must catch each under the clauses it declares.

Each is a fault client libraries have shipped or plausibly ship: reading LogAppendTime batches as their records'
create times (Sarama #885, KafkaJS #838, librdkafka #2368 report LogAppendTime read or reported wrongly), reporting
the producer's own timestamp in RecordMetadata, answering a not-found lookup with -1 instead of null, passing a
negative target to the broker where it means LATEST or EARLIEST, handing over a fetched batch's records below the
seek position.

A client mutant is registered twice from one declaration, in registries of one shape (conformance.faults.seeded):
in MUTANTS with kind CLIENT (its declared clauses, its profile), and in CLIENT_FAULTS with its faulty client as what
builds it; `Mutant.build` cannot make it in process (it needs the reference broker): conformance.targets.registry
opens `mutant:<id>` of kind client through conformance.targets.kinds.client_target, which starts the broker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from conformance.errors import TargetError
from conformance.faults.mutant import _mutant
from conformance.faults.seeded import FaultRegistry, SeededFault
from conformance.targets.kinds.client_library import OffsetAndTimestamp, SendFailure
from conformance.targets.kinds.implementation import Implementation, Kind
from conformance.targets.libraries.model.model_client import ReferenceClient
from conformance.wire.client import LIST_OFFSETS, ListOffsetsResult, ProduceResult
from models.constants import MAGIC_V0, NO_TIMESTAMP, SpecialTarget, TimestampType
from models.profiles import Profile
from models.records import AnyBatch, ConsumerRecord, DefaultBatch, LegacyBatch

CLIENT_FAULTS: FaultRegistry[SeededFault[type[ReferenceClient]]] = FaultRegistry("client mutant")

_C = Callable[[type[ReferenceClient]], type[ReferenceClient]]


def _against_reference_broker(profile: Profile) -> Implementation:
    raise TargetError(
        "a client mutant is the reference client with a fault, run against the reference broker: pass it as "
        "--target mutant:<id> (the suite starts the broker); it cannot be served or built in process"
    )


def _client_mutant(
    mutant_id: str, description: str, clauses: Sequence[str], profiles: Sequence[str] | None = None
) -> _C:
    def register(cls: type[ReferenceClient]) -> type[ReferenceClient]:
        _mutant(mutant_id, description, clauses, profiles, kind=Kind.CLIENT)(_against_reference_broker)
        CLIENT_FAULTS.register(SeededFault(mutant_id, Kind.CLIENT, tuple(clauses), description, cls))
        return cls

    return register


def client_fault(mutant_id: str) -> type[ReferenceClient]:
    """The faulty reference client of client mutant `mutant_id` (UnknownFault, a KeyError, naming the choices
    otherwise)."""
    return CLIENT_FAULTS[mutant_id].build


def _read_with(batch: AnyBatch, timestamp: Callable[[ConsumerRecord], int]) -> tuple[ConsumerRecord, ...]:
    return tuple(
        ConsumerRecord(r.offset, timestamp(r), r.timestamp_type, r.key, r.value, r.headers) for r in batch.records()
    )


# -- RecordMetadata and producer exceptions (VAL-12, VAL-11)


@_client_mutant(
    "client-metadata-create-time",
    "RecordMetadata reports the record's create time even when the broker answered a log_append_time (a client "
    "that ignores the ProduceResponse field, so LogAppendTime topics report the producer's clock).",
    ("VAL.record-metadata-timestamp",),
)
class MetadataCreateTime(ReferenceClient):
    def metadata_timestamp(self, log_append_time: int | None, create_time: int) -> int:
        return create_time


@_client_mutant(
    "client-failures-partition-error",
    "Every record of a batch rejected with record_errors fails with the partition's error (INVALID_TIMESTAMP), the "
    "records that were not listed and several listed ones included, instead of Sender.failBatch's split.",
    ("VAL.producer-future-exceptions",),
)
class FailuresPartitionError(ReferenceClient):
    def record_failures(self, result: ProduceResult, count: int) -> tuple[SendFailure, ...]:
        return super().record_failures(replace(result, record_errors=[]), count)


# -- the consumer's view (CON-1)


class _ReadsFieldsAsStored(ReferenceClient):
    """A reader fault on one kind of stored batch: `reads_wrong(batch)` says which, `wrong(batch, record)` what it
    reads there."""

    def reads_wrong(self, batch: AnyBatch) -> bool:
        raise NotImplementedError

    def wrong(self, batch: AnyBatch, record: ConsumerRecord) -> ConsumerRecord:
        raise NotImplementedError

    def read_batch(self, batch: AnyBatch) -> tuple[ConsumerRecord, ...]:
        records = super().read_batch(batch)
        return tuple(self.wrong(batch, r) for r in records) if self.reads_wrong(batch) else records


@_client_mutant(
    "client-lat-reads-base-plus-delta",
    "A LogAppendTime v2 batch is read as BaseTimestamp + delta (the records' create times) instead of its "
    "MaxTimestamp (FMT-12), the reader bug behind several clients' wrong LogAppendTime values.",
    # LO.client-seek-by-time: the record a seek by time delivers is read as CON-1 says, so a reader fault shows there.
    ("CON.v2-lat-max-timestamp", "LO.client-seek-by-time"),
)
class LatReadsBasePlusDelta(_ReadsFieldsAsStored):
    def reads_wrong(self, batch: AnyBatch) -> bool:
        return isinstance(batch, DefaultBatch) and batch.timestamp_type is TimestampType.LOG_APPEND_TIME

    def wrong(self, batch: AnyBatch, record: ConsumerRecord) -> ConsumerRecord:
        assert isinstance(batch, DefaultBatch)
        delta = {batch.base_offset + r.offset_delta: r.timestamp_delta for r in batch.records_}
        return ConsumerRecord(record.offset, batch.base_timestamp + delta[record.offset], record.timestamp_type,
                              record.key, record.value, record.headers)


@_client_mutant(
    "client-createtime-reads-base",
    "A CreateTime v2 batch's records all read the batch's BaseTimestamp (the record deltas ignored, FMT-11).",
    ("CON.v2-createtime-base-plus-delta", "LO.client-seek-by-time"),  # as above
)
class CreateTimeReadsBase(_ReadsFieldsAsStored):
    def reads_wrong(self, batch: AnyBatch) -> bool:
        return isinstance(batch, DefaultBatch) and batch.timestamp_type is TimestampType.CREATE_TIME

    def wrong(self, batch: AnyBatch, record: ConsumerRecord) -> ConsumerRecord:
        assert isinstance(batch, DefaultBatch)
        return ConsumerRecord(record.offset, batch.base_timestamp, record.timestamp_type, record.key, record.value,
                              record.headers)


@_client_mutant(
    "client-lat-wrapper-reads-inner",
    "The inner records of a LogAppendTime v1 wrapper read their own stored timestamps instead of the wrapper's "
    "(FMT-7: the wrapper's type and value win).",
    ("CON.v1-wrapper-lat-wrapper-value",),
)
class LatWrapperReadsInner(_ReadsFieldsAsStored):
    def reads_wrong(self, batch: AnyBatch) -> bool:
        return (isinstance(batch, LegacyBatch) and batch.is_compressed
                and batch.timestamp_type is TimestampType.LOG_APPEND_TIME)

    def wrong(self, batch: AnyBatch, record: ConsumerRecord) -> ConsumerRecord:
        assert isinstance(batch, LegacyBatch)
        inner = dict(zip(batch.inner_offsets(), batch.message.inner or (), strict=True))
        own = inner[record.offset].message.stored_timestamp
        return ConsumerRecord(record.offset, own, record.timestamp_type, record.key, record.value, record.headers)


@_client_mutant(
    "client-createtime-wrapper-reads-wrapper",
    "The inner records of a CreateTime v1 wrapper all read the wrapper's timestamp (the inner max) instead of "
    "their own stored timestamps.",
    ("CON.v1-wrapper-createtime-inner",),
)
class CreateTimeWrapperReadsWrapper(_ReadsFieldsAsStored):
    def reads_wrong(self, batch: AnyBatch) -> bool:
        return (isinstance(batch, LegacyBatch) and batch.is_compressed and batch.magic != MAGIC_V0
                and batch.timestamp_type is TimestampType.CREATE_TIME)

    def wrong(self, batch: AnyBatch, record: ConsumerRecord) -> ConsumerRecord:
        assert isinstance(batch, LegacyBatch)
        return ConsumerRecord(record.offset, batch.message.stored_timestamp, record.timestamp_type, record.key,
                              record.value, record.headers)


@_client_mutant(
    "client-v1-type-bit-ignored",
    "An uncompressed v1 record reads CreateTime whatever its own bit 3 says, so a LogAppendTime v1 message reports "
    "the wrong type.",
    ("CON.v1-uncompressed-own",),
)
class V1TypeBitIgnored(_ReadsFieldsAsStored):
    def reads_wrong(self, batch: AnyBatch) -> bool:
        return isinstance(batch, LegacyBatch) and not batch.is_compressed and batch.magic != MAGIC_V0

    def wrong(self, batch: AnyBatch, record: ConsumerRecord) -> ConsumerRecord:
        return ConsumerRecord(record.offset, record.timestamp, TimestampType.CREATE_TIME, record.key, record.value,
                              record.headers)


@_client_mutant(
    "client-v0-reads-create-time",
    "A v0 record (no timestamp field) reads timestamp -1 with type CreateTime instead of NoTimestampType.",
    ("CON.v0-no-timestamp",),
)
class V0ReadsCreateTime(_ReadsFieldsAsStored):
    def reads_wrong(self, batch: AnyBatch) -> bool:
        return batch.magic == MAGIC_V0

    def wrong(self, batch: AnyBatch, record: ConsumerRecord) -> ConsumerRecord:
        return ConsumerRecord(record.offset, NO_TIMESTAMP, TimestampType.CREATE_TIME, record.key, record.value,
                              record.headers)


@_client_mutant(
    "client-seek-delivers-batch",
    "After a seek into the middle of a batch the consumer hands over the batch's records below its position too "
    "(a fetch answers whole batches; they must be dropped).",
    ("LO.client-seek-by-time",),
)
class SeekDeliversBatch(ReferenceClient):
    def delivered(self, records: Sequence[ConsumerRecord], position: int) -> tuple[ConsumerRecord, ...]:
        return tuple(records)


# -- lookups (LO-9)


@_client_mutant(
    "client-negative-target-sent",
    "offsetsForTimes sends a negative target to the broker instead of refusing it, so -1 answers LATEST and -2 "
    "EARLIEST as if they were times.",
    ("LO.client-rejects-negative-target",),
)
class NegativeTargetSent(ReferenceClient):
    def check_target(self, topic: str, partition: int, target: int) -> None:
        return None


@_client_mutant(
    "client-not-found-minus-one",
    "offsetsForTimes answers a partition the broker found nothing for with (-1, -1) instead of null.",
    ("LO.client-null-when-not-found",),
)
class NotFoundMinusOne(ReferenceClient):
    def lookup_answer(self, result: ListOffsetsResult) -> OffsetAndTimestamp | None:
        found = super().lookup_answer(result)
        return OffsetAndTimestamp(-1, -1) if found is None else found


@_client_mutant(
    "client-lookup-reports-target",
    "offsetsForTimes reports the target it asked for as the found record's timestamp instead of the broker's "
    "answer (the record's own timestamp, LO-2).",
    ("LO.client-offsets-for-times-answer",),
)
class LookupReportsTarget(ReferenceClient):
    def offsets_for_times(self, topic: str, partition: int, target: int) -> OffsetAndTimestamp | None:
        found = super().offsets_for_times(topic, partition, target)
        return None if found is None else OffsetAndTimestamp(found.offset, target)


@_client_mutant(
    "client-lookup-v0",
    "offsetsForTimes asks the oldest ListOffsets version the broker offers, v0 where it is served, which answers "
    "segment offsets instead of the first record at or after the target (LO-7).",
    ("LO.client-min-version",),
    # ListOffsets v0 is served only before 4.0 (KIP-896): the fault shows where the broker still offers it.
    profiles=("kafka-3.9", "kafka-2.8"),
)
class LookupV0(ReferenceClient):
    def lookup_version(self) -> int:
        return self.wire.api_versions()[LIST_OFFSETS][0]


@_client_mutant(
    "client-latest-last-record",
    "endOffsets reports the offset of the last record (the high watermark minus one) instead of the broker's LATEST "
    "answer, the next offset to be written.",
    ("LO.client-special-target-answer",),
)
class LatestLastRecord(ReferenceClient):
    def spec_answer(self, spec: SpecialTarget, result: ListOffsetsResult) -> OffsetAndTimestamp:
        answer = super().spec_answer(spec, result)
        return OffsetAndTimestamp(answer.offset - 1, answer.timestamp) if spec is SpecialTarget.LATEST else answer
