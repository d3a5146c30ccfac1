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
import time
from collections.abc import Sequence
from typing import Any

from conformance.extras import install_hint
from conformance.judging.capabilities import ClientCapability
from conformance.targets.kinds.client_library import (
    ClientFailed,
    ClientRefused,
    ClientUnavailable,
    LibraryClient,
    OffsetAndTimestamp,
    Outgoing,
    RecordMetadata,
    SendFailure,
    SendOutcome,
)
from models.constants import Codec, ErrorCode, SpecialTarget, TimestampType
from models.records import ConsumerRecord

_COMPRESSION = {Codec.NONE: "none", Codec.GZIP: "gzip", Codec.SNAPPY: "snappy", Codec.LZ4: "lz4", Codec.ZSTD: "zstd"}
_LINGER_MS = 1000
_POLL_S = 0.1
_LOG = logging.getLogger("conformance.targets.libraries.confluent_kafka.confluent_client")


def _confluent() -> Any:
    try:
        import confluent_kafka
    except ImportError:
        raise ClientUnavailable(
            f"confluent-kafka is not installed: {install_hint('targets')} (or pip install 'confluent-kafka==2.16.1')"
        ) from None
    return confluent_kafka


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
    capabilities = frozenset(ClientCapability)
    codecs = frozenset(Codec)

    @staticmethod
    def require() -> None:
        _confluent()

    def __init__(self, bootstrap: str, *, timeout: float = 10.0) -> None:
        super().__init__(bootstrap, timeout=timeout)
        confluent_kafka = _confluent()
        self.version = f"{confluent_kafka.version()[0]} (librdkafka {confluent_kafka.libversion()[0]})"

    def _common(self) -> dict[str, Any]:
        # librdkafka's log goes to this module's logger (pytest keeps it with the test), not to stderr.
        return {"bootstrap.servers": self.bootstrap, "socket.timeout.ms": self._ms, "logger": _LOG}

    def _producer(self, codec: Codec) -> Any:
        if codec not in self._producers:
            from confluent_kafka import Producer

            self._producers[codec] = Producer({
                **self._common(),
                "client.id": "kts-confluent-producer",
                "acks": "all",
                "enable.idempotence": False,
                "compression.type": _COMPRESSION[codec],
                "linger.ms": _LINGER_MS,
                "message.timeout.ms": 2 * self._ms,
            })
        return self._producers[codec]

    def _consumer_of(self) -> Any:
        if self._consumer is None:
            from confluent_kafka import Consumer

            self._consumer = Consumer({
                **self._common(),
                "client.id": "kts-confluent-consumer",
                "group.id": "kts-assign-only",
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "enable.partition.eof": False,
                "auto.offset.reset": "earliest",
                "fetch.wait.max.ms": 100,
            })
        return self._consumer

    def _admin_of(self) -> Any:
        if self._admin is None:
            from confluent_kafka.admin import AdminClient

            self._admin = AdminClient({**self._common(), "client.id": "kts-confluent-admin"})
        return self._admin

    def close(self) -> None:
        """Flush and destroy every handle (librdkafka's threads stop when the last reference goes)."""
        try:
            for producer in self._producers.values():
                producer.flush(self.timeout)
            if self._consumer is not None:
                self._consumer.close()
        finally:
            self._producers, self._consumer, self._admin = {}, None, None

    # -- producing

    def send(
        self, topic: str, partition: int, records: Sequence[Outgoing], *, codec: Codec = Codec.NONE
    ) -> tuple[SendOutcome, ...]:
        producer = self._producer(codec)
        outcomes: dict[int, SendOutcome] = {}

        def report(index: int) -> Any:
            def delivered(error: Any, message: Any) -> None:
                if error is not None:
                    outcomes[index] = failure_of(error)
                else:
                    outcomes[index] = RecordMetadata(message.offset(), message.timestamp()[1])

            return delivered

        for index, record in enumerate(records):
            producer.produce(topic, value=record.value, key=record.key, partition=partition,
                             timestamp=0 if record.timestamp is None else record.timestamp, on_delivery=report(index))
        left = producer.flush(self.timeout)
        if left:
            raise ClientFailed(f"confluent-kafka: {left} messages not delivered within {self.timeout:g} s")
        return tuple(outcomes[i] for i in range(len(records)))

    # -- consuming

    def _poll_from(self, topic: str, partition: int, offset: int, *, until: int, first_only: bool
                   ) -> tuple[ConsumerRecord, ...]:
        from confluent_kafka import TopicPartition

        consumer = self._consumer_of()
        consumer.assign([TopicPartition(topic, partition, offset)])
        out: list[ConsumerRecord] = []
        deadline = time.monotonic() + self.timeout
        while (not out or out[-1].offset < until - 1) and until > offset and time.monotonic() < deadline:
            message = consumer.poll(_POLL_S)
            if message is None:
                continue
            if message.error() is not None:
                raise ClientFailed(f"confluent-kafka: {message.error().str()}", delivered=tuple(out))
            kind, timestamp = message.timestamp()
            read = timestamp_type_of(kind)
            if read is TimestampType.NO_TIMESTAMP_TYPE:
                timestamp = -1  # Message.timestamp(): "should be ignored if the type is TIMESTAMP_NOT_AVAILABLE"
            out.append(ConsumerRecord(message.offset(), timestamp, read, message.key(), message.value()))
            if first_only:
                break
        consumer.unassign()
        return tuple(r for r in out if r.offset < until)

    def consume(self, topic: str, partition: int, offset: int, *, until: int) -> tuple[ConsumerRecord, ...]:
        return self._poll_from(topic, partition, offset, until=until, first_only=False)

    # -- lookups

    def offsets_for_times(self, topic: str, partition: int, target: int) -> OffsetAndTimestamp | None:
        from confluent_kafka import KafkaException, TopicPartition

        try:
            answered = self._consumer_of().offsets_for_times([TopicPartition(topic, partition, target)],
                                                             timeout=self.timeout)
        except (ValueError, TypeError) as exc:
            raise ClientRefused(type(exc).__name__, str(exc)) from None
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
        futures = self._admin_of().list_offsets({tp: specs[spec]}, request_timeout=self.timeout)
        try:
            (future,) = futures.values()
            info = future.result(timeout=self.timeout)
        except KafkaException as exc:
            raise ClientFailed(f"confluent-kafka list_offsets {spec.name}: {exc}") from None
        return OffsetAndTimestamp(info.offset, info.timestamp)

    def seekable(self, found: OffsetAndTimestamp) -> bool:
        # librdkafka answers a lookup that found nothing with -1 (OFFSET_END): nothing to seek to.
        return found.offset >= 0

    def first_record(
        self, topic: str, partition: int, found: OffsetAndTimestamp, *, until: int
    ) -> ConsumerRecord | None:
        records = self._poll_from(topic, partition, found.offset, until=until, first_only=True)
        return records[0] if records else None
