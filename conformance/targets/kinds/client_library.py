"""The client capability: a Kafka client library under test, driven against a broker.

A client is what an application calls: a producer that sends records and reports each one's RecordMetadata
(VAL-12), a consumer that reads records from an offset as ConsumerRecords (CON-1), and the lookups of
KIP-79/KIP-734 (offsetsForTimes, the beginning and end offsets, the max-timestamp spec; LO-9). The libraries
under test are kafka-python, aiokafka, confluent-kafka (librdkafka) and Apache Kafka's Java client in Spark's
JVM; the reference client (`client:model`, conformance/targets/libraries/model/model_client.py) implements the same
operations on the
project's wire client and is the oracle every library is compared with.

Operations, each optional by capability (a suite reports UNSUPPORTED where one is missing):
- `send(topic, partition, records, codec=...)`: one outcome per record, in order: its RecordMetadata
  (offset, timestamp), or the failure the library reports for it (KIP-467: per-record exceptions);
- `consume(topic, partition, offset, until=...)`: the records from `offset` up to `until` (exclusive), as the
  library's consumer delivers them after assign + seek (no consumer group: the reference broker has none); each
  record's timestamp type where the library exposes one (TIMESTAMP_TYPE), None otherwise;
- `offsets_for_times(topic, partition, target)`: the library's answer for one partition, None for null (LO-9);
  a negative target is refused with ClientRefused (the library's exception, before any request);
- `list_offsets(topic, partition, spec)`: EARLIEST, LATEST or MAX_TIMESTAMP where the library offers them
  (beginningOffsets / endOffsets / Admin listOffsets with an OffsetSpec);
- `seek_by_time(topic, partition, target, until=...)`: offsetsForTimes, then seek to the answer and consume the
  first record.

Every value is a model type or a small dataclass below, so a suite compares a library field by field with what
the broker answered and stored. Every call is bounded by the library's `timeout` (seconds); a library that is
not installed raises ClientUnavailable with the one line that names the fix.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

from conformance.judging.capabilities import ClientCapability
from models.constants import Codec, SpecialTarget
from models.records import ConsumerRecord

# The ListOffsets specs a client may offer, by the capability that offers each.
SPEC_CAPABILITY: dict[SpecialTarget, ClientCapability] = {
    SpecialTarget.EARLIEST: ClientCapability.EARLIEST,
    SpecialTarget.LATEST: ClientCapability.LATEST,
    SpecialTarget.MAX_TIMESTAMP: ClientCapability.MAX_TIMESTAMP,
}


class ClientUnavailable(Exception):
    """The library (or its runtime: a JVM, a jar) is not there; the message is one line naming the fix."""


class ClientRefused(Exception):
    """The library refused a call before sending anything (LO-9: a negative offsetsForTimes target). `kind` is
    the library's exception type (e.g. "IllegalArgumentException", "ValueError") and `detail` its message."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(f"{kind}: {detail}")

    @classmethod
    def of(cls, exc: BaseException) -> ClientRefused:
        """A Python library's refusal: its exception's class name and text."""
        return cls(type(exc).__name__, str(exc))


class ClientFailed(Exception):
    """A library call failed in a way the operation does not report as a value (a timeout, an error answer
    raised as an exception): the test fails with the library's own text. A consumer that fails part-way keeps the
    records it delivered before the failure in `delivered`, so that a suite judges the records it could not read
    under the clause of their stored form."""

    def __init__(self, message: str, *, delivered: tuple[ConsumerRecord, ...] = ()) -> None:
        self.delivered = delivered
        super().__init__(message)


@dataclass(frozen=True)
class Outgoing:
    """A record as an application hands it to a producer: no timestamp (None) lets the producer stamp it with
    its own clock, as KafkaProducer does with System.currentTimeMillis()."""

    key: bytes
    value: bytes | None
    timestamp: int | None = None


@dataclass(frozen=True)
class RecordMetadata:
    """What a producer reports for a sent record (Java's RecordMetadata offset() and timestamp())."""

    offset: int
    timestamp: int


# The failure a Java producer gives the other records of a batch rejected for some of its records (VAL-11,
# Sender.failBatch: a plain KafkaException "Failed to append record because it was part of a batch which had one
# more more invalid records"): an adapter reports its library's generic exception (the base error class, no Kafka
# error code) as this kind.
BATCH_FAILED = "BATCH_FAILED"


@dataclass(frozen=True)
class SendFailure:
    """A record the producer failed. `kind` is the Kafka error the library's exception stands for, by its
    protocol name (INVALID_TIMESTAMP for InvalidTimestampException, INVALID_RECORD for InvalidRecordException),
    or BATCH_FAILED for the generic failure of a record that was only part of a rejected batch; `message` is
    the exception's text."""

    kind: str
    message: str = ""


SendOutcome = RecordMetadata | SendFailure


class OffsetAndTimestamp(NamedTuple):
    """A lookup's answer as a client reports it (Java's OffsetAndTimestamp / ListOffsetsResultInfo). `timestamp`
    is None where the library's call reports an offset only (beginningOffsets, endOffsets). A tuple, so that an
    expectations entry matches it as a list: `observed = [-1, "None"]`."""

    offset: int
    timestamp: int | None


@runtime_checkable
class ClientLibrary(Protocol):
    """A client library under test (or the reference client), connected to one cluster."""

    name: str  # e.g. "kafka-python", "aiokafka", "confluent-kafka", "java", "model"
    version: str  # the library's version, for the report's environment
    capabilities: frozenset[ClientCapability]
    codecs: frozenset[Codec]  # compression codecs its producer can write
    timeout: float  # seconds: the bound of every call

    def send(
        self, topic: str, partition: int, records: Sequence[Outgoing], *, codec: Codec = Codec.NONE
    ) -> tuple[SendOutcome, ...]: ...

    def consume(self, topic: str, partition: int, offset: int, *, until: int) -> tuple[ConsumerRecord, ...]: ...

    def offsets_for_times(self, topic: str, partition: int, target: int) -> OffsetAndTimestamp | None: ...

    def list_offsets(self, topic: str, partition: int, spec: SpecialTarget) -> OffsetAndTimestamp: ...

    def seek_by_time(
        self, topic: str, partition: int, target: int, *, until: int
    ) -> tuple[OffsetAndTimestamp | None, ConsumerRecord | None]: ...

    def close(self) -> None: ...


class ClientAdapter:
    """What every client adapter shares (the reference client's and each library's): seek by time is offsetsForTimes,
    then the first record from the answer (`first_record`), where the answer is one to seek to (`seekable`)."""

    timeout: float

    def offsets_for_times(self, topic: str, partition: int, target: int) -> OffsetAndTimestamp | None:
        raise NotImplementedError

    def first_record(
        self, topic: str, partition: int, found: OffsetAndTimestamp, *, until: int
    ) -> ConsumerRecord | None:
        """The first record a consumer delivers after seeking to the offset `found` (None if none came)."""
        raise NotImplementedError

    def seekable(self, found: OffsetAndTimestamp) -> bool:
        """Whether the library seeks to what offsetsForTimes answered (every answer it reports is one to seek to)."""
        return True

    def seek_by_time(
        self, topic: str, partition: int, target: int, *, until: int
    ) -> tuple[OffsetAndTimestamp | None, ConsumerRecord | None]:
        found = self.offsets_for_times(topic, partition, target)
        if found is None or not self.seekable(found):
            return found, None
        return found, self.first_record(topic, partition, found, until=until)


# How long one poll of a library's consumer waits for records (and its fetch waits at the broker), in milliseconds.
POLL_MS = 100


def compression_type(codec: Codec) -> str:
    """`codec` by the name Kafka's compression.type setting gives it: "none", "gzip", "snappy", "lz4", "zstd"."""
    return codec.name.lower()


def import_library(module: str, missing: str) -> Any:
    """The library's Python module; ClientUnavailable with `missing` (the one line naming the fix) where it is not
    installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ClientUnavailable(missing) from None


class LibraryClient(ClientAdapter):
    """A library's client adapter against one cluster (kafka-python, aiokafka, confluent-kafka, Java's), the part every
    library shares written once: its bootstrap address and call bound; its library loaded when it is made (`load`:
    ClientUnavailable where the library is not there); its producers (one per compression codec), consumer and admin
    client, each made on first use and closed by `close`; the settings every producer and consumer has, by Kafka's
    names; `send` (hand every record over, flush, read each outcome) and the consumer's polling from an offset, which
    `consume` and the seek by time share.

    Each library's adapter says only what is its own: `load`, `version_of`, how it makes each handle
    (`new_producer`, `new_consumer`, `new_admin`) and closes it, how it hands a record over and reads its outcome
    (`hand_over`, `flush`, `outcome`), how its consumer is assigned a partition at an offset and polled (`assign`,
    `poll`), and its lookups."""

    name: str
    version: str
    capabilities: frozenset[ClientCapability]
    codecs: frozenset[Codec]
    client_id: str  # its handles' client ids: kts-<client_id>-producer, -consumer, -admin

    def __init__(self, bootstrap: str, *, timeout: float = 10.0) -> None:
        self.bootstrap = bootstrap
        self.timeout = timeout
        self._producers: dict[Codec, Any] = {}
        self._consumer: Any = None
        self._admin: Any = None
        self.library = self.load()
        self.version = self.version_of(self.library)

    @classmethod
    def load(cls) -> Any:
        """The library (its module, or the runtime that runs it); ClientUnavailable where it is not there."""
        raise NotImplementedError

    @classmethod
    def require(cls) -> None:
        """Whether the library is there, before a target is opened (ClientUnavailable with its fix otherwise)."""
        cls.load()

    def version_of(self, library: Any) -> str:
        """The library's version, for the report's environment."""
        raise NotImplementedError

    @property
    def _ms(self) -> int:
        return int(self.timeout * 1000)

    # -- the handles, each made on first use

    def producer(self, codec: Codec) -> Any:
        """The producer that writes `codec` (a producer's compression is fixed when it is made)."""
        if codec not in self._producers:
            self._producers[codec] = self.new_producer(codec)
        return self._producers[codec]

    def consumer(self) -> Any:
        if self._consumer is None:
            self._consumer = self.new_consumer()
        return self._consumer

    def admin(self) -> Any:
        if self._admin is None:
            self._admin = self.new_admin()
        return self._admin

    def new_producer(self, codec: Codec) -> Any:
        raise NotImplementedError

    def new_consumer(self) -> Any:
        raise NotImplementedError

    def new_admin(self) -> Any:
        raise NotImplementedError

    def client_id_of(self, role: str) -> str:
        """The client id of its `role` handle ("producer", "consumer", "admin"), which a broker's log names it by."""
        return f"kts-{self.client_id}-{role}"

    def producer_settings(self, codec: Codec, linger_ms: int) -> dict[str, Any]:
        """What every adapter's producer is set to, by Kafka's names (ProducerConfig): acks=all, no idempotence (the
        reference broker's idempotent producer state is not what these suites check), the compression `codec`, and a
        long linger, so that one send() call's records go out as one batch when flushed."""
        return {
            "client.id": self.client_id_of("producer"),
            "acks": "all",
            "enable.idempotence": False,
            "compression.type": compression_type(codec),
            "linger.ms": linger_ms,
        }

    def consumer_settings(self) -> dict[str, Any]:
        """What every adapter's consumer is set to, by Kafka's names (ConsumerConfig): it is assigned partitions and
        seeks (the reference broker has no groups), so it commits nothing, and reads from the earliest offset."""
        return {
            "client.id": self.client_id_of("consumer"),
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }

    def close(self) -> None:
        """Close every handle made, the producers first, and forget them."""
        try:
            for producer in self._producers.values():
                self.close_producer(producer)
            if self._consumer is not None:
                self.close_handle(self._consumer)
            if self._admin is not None:
                self.close_admin(self._admin)
        finally:
            self._producers, self._consumer, self._admin = {}, None, None

    def close_handle(self, handle: Any) -> None:
        handle.close()

    def close_producer(self, producer: Any) -> None:
        self.close_handle(producer)

    def close_admin(self, admin: Any) -> None:
        self.close_handle(admin)

    # -- producing

    def send(
        self, topic: str, partition: int, records: Sequence[Outgoing], *, codec: Codec = Codec.NONE
    ) -> tuple[SendOutcome, ...]:
        """Every record handed to the producer of `codec`, the producer flushed, then each record's outcome in
        order."""
        producer = self.producer(codec)
        pending = [self.hand_over(producer, topic, partition, record) for record in records]
        self.flush(producer)
        return tuple(self.outcome(handed) for handed in pending)

    def hand_over(self, producer: Any, topic: str, partition: int, record: Outgoing) -> Any:
        """Give `record` to the producer; what it answers (a future), from which `outcome` reads the record's."""
        raise NotImplementedError

    def flush(self, producer: Any) -> None:
        raise NotImplementedError

    def outcome(self, pending: Any) -> SendOutcome:
        """The record's RecordMetadata, or its SendFailure, from what `hand_over` answered."""
        raise NotImplementedError

    # -- consuming

    def consume(self, topic: str, partition: int, offset: int, *, until: int) -> tuple[ConsumerRecord, ...]:
        return self.poll_from(topic, partition, offset, until=until, first_only=False)

    def first_record(
        self, topic: str, partition: int, found: OffsetAndTimestamp, *, until: int
    ) -> ConsumerRecord | None:
        records = self.poll_from(topic, partition, found.offset, until=until, first_only=True)
        return records[0] if records else None

    def poll_from(
        self, topic: str, partition: int, offset: int, *, until: int, first_only: bool
    ) -> tuple[ConsumerRecord, ...]:
        """The records below `until` the consumer delivers once assigned the partition at `offset`: polled until the
        record before `until` came or the call's bound passed, or, `first_only`, until a poll delivered any. A poll
        that fails (ClientFailed) keeps the records delivered before it (`delivered`)."""
        position = self.assign(topic, partition, offset)
        out: list[ConsumerRecord] = []
        deadline = time.monotonic() + self.timeout
        while (not out or out[-1].offset < until - 1) and until > offset and time.monotonic() < deadline:
            try:
                out.extend(self.poll(position, first_only=first_only))
            except ClientFailed as exc:
                raise ClientFailed(str(exc), delivered=tuple(out)) from None
            if first_only and out:
                break
        return tuple(r for r in out if r.offset < until)

    def assign(self, topic: str, partition: int, offset: int) -> Any:
        """Assign the consumer the partition at `offset`; what `poll` is given (the library's TopicPartition)."""
        raise NotImplementedError

    def poll(self, position: Any, *, first_only: bool) -> Sequence[ConsumerRecord]:
        """One poll of the consumer (at most POLL_MS): the records it delivered, as the model's; ClientFailed with
        the library's text where the poll failed."""
        raise NotImplementedError


def java_refusal_text(topic: str, partition: int, target: int) -> str:
    """LO-9: the message Java's offsetsForTimes refuses a negative target with (ClassicKafkaConsumer,
    OffsetFetcherUtils), the partition printed as TopicPartition.toString() does ("topic-0")."""
    return f"The target time for partition {topic}-{partition} is {target}. The target time cannot be negative."
