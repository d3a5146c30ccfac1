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


class LibraryClient(ClientAdapter):
    """A library's client adapter against one cluster: its bootstrap address and call bound, its producers (one per
    compression codec), consumer and admin client, each made on first use."""

    def __init__(self, bootstrap: str, *, timeout: float) -> None:
        self.bootstrap = bootstrap
        self.timeout = timeout
        self._producers: dict[Codec, Any] = {}
        self._consumer: Any = None
        self._admin: Any = None

    @property
    def _ms(self) -> int:
        return int(self.timeout * 1000)


def java_refusal_text(topic: str, partition: int, target: int) -> str:
    """LO-9: the message Java's offsetsForTimes refuses a negative target with (ClassicKafkaConsumer,
    OffsetFetcherUtils), the partition printed as TopicPartition.toString() does ("topic-0")."""
    return f"The target time for partition {topic}-{partition} is {target}. The target time cannot be negative."
