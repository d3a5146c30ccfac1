"""confluent-kafka (librdkafka) as a client under test: Producer (delivery reports: offset and timestamp), Consumer
(assign at an offset, poll; offsets_for_times) and AdminClient.list_offsets with OffsetSpec earliest, latest and
max_timestamp (KIP-734).

What the adapter translates, and nothing more: a message's (timestamp type, timestamp) pair, TIMESTAMP_NOT_AVAILABLE
read as NoTimestampType with timestamp -1 (Message.timestamp(): the value "should be ignored" then; librdkafka gives
0), TIMESTAMP_CREATE_TIME as CreateTime, TIMESTAMP_LOG_APPEND_TIME as LogAppendTime; a delivery
error is the Kafka error its code names (broker codes are Kafka's numbers; librdkafka's own negative codes keep
librdkafka's name). offsets_for_times answers a TopicPartition whose offset is the lookup's and which carries no
timestamp: reported as such (timestamp None), the offset as it comes (librdkafka answers -1, RD_KAFKA_OFFSET_END,
where Java answers null).

Producers: acks=all, no idempotence, one per compression codec, a long linger (flush() sends at once) so that one
send() call's records go out as one batch. The consumer has a group id (librdkafka requires one) but never joins or
commits: it is assigned partitions directly (the reference broker has no groups).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from conformance.extras import install_hint
from conformance.judging.capabilities import ClientCapability
from conformance.targets.kinds.client_library import (
    POLL_MS,
    ClientFailed,
    ClientRefused,
    LibraryClient,
    OffsetAndTimestamp,
    Outgoing,
    RecordMetadata,
    SendFailure,
    SendOutcome,
    import_library,
)
from models.constants import Codec, ErrorCode, SpecialTarget, TimestampType
from models.records import ConsumerRecord

_LINGER_MS = 1000
_LOG = logging.getLogger("conformance.targets.libraries.confluent_kafka.confluent_client")


def timestamp_type_of(kind: int) -> TimestampType:
    from confluent_kafka import TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME

    if kind == TIMESTAMP_CREATE_TIME:
        return TimestampType.CREATE_TIME
    if kind == TIMESTAMP_LOG_APPEND_TIME:
        return TimestampType.LOG_APPEND_TIME
    return TimestampType.NO_TIMESTAMP_TYPE


def failure_of(error: Any) -> SendFailure:
    """A delivery report's KafkaError: a broker error by its Kafka name, a librdkafka-local one by librdkafka's."""
    code = int(error.code())
    kind = ErrorCode(code).name if code > 0 else str(error.name())
    return SendFailure(kind, str(error.str()))


class ConfluentClient(LibraryClient):
    """confluent-kafka against one cluster (conformance.targets.kinds.client_library.ClientLibrary)."""

    name = "confluent-kafka"
    client_id = "confluent"
    capabilities = frozenset(ClientCapability)
    codecs = frozenset(Codec)

    @classmethod
    def load(cls) -> Any:
        return import_library(
            "confluent_kafka",
            f"confluent-kafka is not installed: {install_hint('targets')} (or pip install 'confluent-kafka==2.16.1')",
        )

    def version_of(self, library: Any) -> str:
        return f"{library.version()[0]} (librdkafka {library.libversion()[0]})"

    def _common(self, role: str) -> dict[str, Any]:
        # librdkafka's log goes to this module's logger (pytest keeps it with the test), not to stderr.
        return {"bootstrap.servers": self.bootstrap, "socket.timeout.ms": self._ms, "logger": _LOG,
                "client.id": self.client_id_of(role)}  # fmt: skip

    def new_producer(self, codec: Codec) -> Any:
        from confluent_kafka import Producer

        return Producer({
            **self._common("producer"),
            **self.producer_settings(codec, _LINGER_MS),
            "message.timeout.ms": 2 * self._ms,
        })  # fmt: skip

    def new_consumer(self) -> Any:
        from confluent_kafka import Consumer

        return Consumer({
            **self._common("consumer"),
            **self.consumer_settings(),
            "group.id": "kts-assign-only",
            "enable.auto.offset.store": False,
            "enable.partition.eof": False,
            "fetch.wait.max.ms": POLL_MS,
        })  # fmt: skip

    def new_admin(self) -> Any:
        from confluent_kafka.admin import AdminClient

        return AdminClient(self._common("admin"))

    def close_producer(self, producer: Any) -> None:
        producer.flush(self.timeout)

    def close_admin(self, admin: Any) -> None:
        """Nothing: an AdminClient has no close (librdkafka's threads stop when the last reference goes)."""

    # -- producing

    def hand_over(self, producer: Any, topic: str, partition: int, record: Outgoing) -> Any:
        """The record's delivery report, once flushed, in the list answered (librdkafka reports by callback)."""
        reported: list[SendOutcome] = []

        def delivered(error: Any, message: Any) -> None:
            if error is not None:
                reported.append(failure_of(error))
            else:
                reported.append(RecordMetadata(message.offset(), message.timestamp()[1]))

        stamp = 0 if record.timestamp is None else record.timestamp
        producer.produce(topic, value=record.value, key=record.key, partition=partition, timestamp=stamp,
                         on_delivery=delivered)  # fmt: skip
        return reported

    def flush(self, producer: Any) -> None:
        left = producer.flush(self.timeout)
        if left:
            raise ClientFailed(f"confluent-kafka: {left} messages not delivered within {self.timeout:g} s")

    def outcome(self, pending: Any) -> SendOutcome:
        (reported,) = pending
        return reported

    # -- consuming

    def assign(self, topic: str, partition: int, offset: int) -> Any:
        from confluent_kafka import TopicPartition

        self.consumer().assign([TopicPartition(topic, partition, offset)])

    def poll(self, position: Any, *, first_only: bool) -> Sequence[ConsumerRecord]:
        message = self.consumer().poll(POLL_MS / 1000)
        if message is None:
            return ()
        if message.error() is not None:
            raise ClientFailed(f"confluent-kafka: {message.error().str()}")
        kind, timestamp = message.timestamp()
        read = timestamp_type_of(kind)
        if read is TimestampType.NO_TIMESTAMP_TYPE:
            timestamp = -1  # Message.timestamp(): "should be ignored if the type is TIMESTAMP_NOT_AVAILABLE"
        return (ConsumerRecord(message.offset(), timestamp, read, message.key(), message.value()),)

    def poll_from(
        self, topic: str, partition: int, offset: int, *, until: int, first_only: bool
    ) -> tuple[ConsumerRecord, ...]:
        """The records polled (LibraryClient.poll_from), then the partition unassigned."""
        records = super().poll_from(topic, partition, offset, until=until, first_only=first_only)
        self.consumer().unassign()
        return records

    # -- lookups

    def offsets_for_times(self, topic: str, partition: int, target: int) -> OffsetAndTimestamp | None:
        from confluent_kafka import KafkaException, TopicPartition

        try:
            answered = self.consumer().offsets_for_times([TopicPartition(topic, partition, target)],
                                                         timeout=self.timeout)  # fmt: skip
        except (ValueError, TypeError) as exc:
            raise ClientRefused.of(exc) from None
        except KafkaException as exc:
            raise ClientFailed(f"confluent-kafka offsets_for_times: {exc}") from None
        (found,) = answered
        if found.error is not None:
            raise ClientFailed(f"confluent-kafka offsets_for_times: {found.error}")
        return OffsetAndTimestamp(found.offset, None)

    def list_offsets(self, topic: str, partition: int, spec: SpecialTarget) -> OffsetAndTimestamp:
        from confluent_kafka import KafkaException, TopicPartition
        from confluent_kafka.admin import OffsetSpec

        specs = {
            SpecialTarget.EARLIEST: OffsetSpec.earliest(),
            SpecialTarget.LATEST: OffsetSpec.latest(),
            SpecialTarget.MAX_TIMESTAMP: OffsetSpec.max_timestamp(),
        }
        tp = TopicPartition(topic, partition)
        futures = self.admin().list_offsets({tp: specs[spec]}, request_timeout=self.timeout)
        try:
            (future,) = futures.values()
            info = future.result(timeout=self.timeout)
        except KafkaException as exc:
            raise ClientFailed(f"confluent-kafka list_offsets {spec.name}: {exc}") from None
        return OffsetAndTimestamp(info.offset, info.timestamp)

    def seekable(self, found: OffsetAndTimestamp) -> bool:
        # librdkafka answers a lookup that found nothing with -1 (OFFSET_END): nothing to seek to.
        return found.offset >= 0
