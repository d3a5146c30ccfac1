"""kafka-python as a client under test: KafkaProducer (RecordMetadata from FutureRecordMetadata), KafkaConsumer (assign,
seek, poll; offsets_for_times, beginning_offsets, end_offsets) and KafkaAdminClient.list_partition_offsets for the
MAX_TIMESTAMP spec (OffsetSpec.MAX_TIMESTAMP).

What the adapter translates, and nothing more: kafka-python's ConsumerRecord gives a v0 record timestamp None and
timestamp_type None (Python's "no timestamp"), read here as -1 and NoTimestampType (CON-1's table); a producer
exception with a Kafka error code (`errno`) is that error's name (SendFailure.kind), any other its class name.

Producers: acks=all, no idempotence (the reference broker's idempotent producer state is not what these suites
check), one per compression codec, a long linger so that one send() call's records go out as one batch when flushed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from conformance.judging.capabilities import ClientCapability
from conformance.targets.kinds.client_library import (
    ClientFailed,
    ClientRefused,
    ClientUnavailable,
    LibraryClient,
    OffsetAndTimestamp,
    Outgoing,
    RecordMetadata,
    SendOutcome,
)
from conformance.targets.libraries.pylibs import codecs_of, consumer_record, failure_of
from models.constants import Codec, SpecialTarget
from models.records import ConsumerRecord

_COMPRESSION = {Codec.NONE: None, Codec.GZIP: "gzip", Codec.SNAPPY: "snappy", Codec.LZ4: "lz4", Codec.ZSTD: "zstd"}
_LINGER_MS = 1000  # flush() sends at once; a send() call's records are appended before it
_POLL_MS = 100


def _kafka() -> Any:
    try:
        import kafka
    except ImportError:
        raise ClientUnavailable(
            "kafka-python is not installed (a dependency of this package): pip install 'kafka-python==3.0.12'"
        ) from None
    return kafka


class KafkaPythonClient(LibraryClient):
    """kafka-python against one cluster (conformance.targets.kinds.client_library.ClientLibrary)."""

    name = "kafka-python"
    capabilities = frozenset(ClientCapability)

    @staticmethod
    def require() -> None:
        _kafka()

    def __init__(self, bootstrap: str, *, timeout: float = 10.0) -> None:
        super().__init__(bootstrap, timeout=timeout)
        kafka = _kafka()
        from kafka import codec

        self.version = str(kafka.__version__)
        self.codecs = codecs_of(codec)

    def _producer(self, codec: Codec) -> Any:
        if codec not in self._producers:
            from kafka import KafkaProducer

            self._producers[codec] = KafkaProducer(
                bootstrap_servers=self.bootstrap,
                acks="all",
                enable_idempotence=False,
                compression_type=_COMPRESSION[codec],
                linger_ms=_LINGER_MS,
                request_timeout_ms=self._ms,
                max_block_ms=self._ms,
                delivery_timeout_ms=2 * self._ms + _LINGER_MS,
                client_id="kts-kafka-python-producer",
            )
        return self._producers[codec]

    def _consumer_of(self) -> Any:
        if self._consumer is None:
            from kafka import KafkaConsumer

            self._consumer = KafkaConsumer(
                bootstrap_servers=self.bootstrap,
                group_id=None,
                enable_auto_commit=False,
                auto_offset_reset="earliest",
                fetch_max_wait_ms=_POLL_MS,
                request_timeout_ms=self._ms,
                client_id="kts-kafka-python-consumer",
            )
        return self._consumer

    def close(self) -> None:
        for producer in self._producers.values():
            producer.close(timeout=self.timeout)
        if self._consumer is not None:
            self._consumer.close()
        if self._admin is not None:
            self._admin.close()

    # -- producing

    def send(
        self, topic: str, partition: int, records: Sequence[Outgoing], *, codec: Codec = Codec.NONE
    ) -> tuple[SendOutcome, ...]:
        from kafka.errors import KafkaError

        producer = self._producer(codec)
        futures = [
            producer.send(topic, key=r.key, value=r.value, partition=partition, timestamp_ms=r.timestamp)
            for r in records
        ]
        producer.flush(timeout=self.timeout)
        out: list[SendOutcome] = []
        for future in futures:
            try:
                metadata = future.get(timeout=self.timeout)
            except KafkaError as exc:
                out.append(failure_of(exc, KafkaError))
            else:
                out.append(RecordMetadata(metadata.offset, metadata.timestamp))
        return tuple(out)

    # -- consuming

    def _assigned(self, topic: str, partition: int, offset: int) -> tuple[Any, Any]:
        from kafka import TopicPartition

        consumer = self._consumer_of()
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, offset)
        return consumer, tp

    def consume(self, topic: str, partition: int, offset: int, *, until: int) -> tuple[ConsumerRecord, ...]:
        from kafka.errors import KafkaError

        consumer, tp = self._assigned(topic, partition, offset)
        out: list[ConsumerRecord] = []
        deadline = time.monotonic() + self.timeout
        while (not out or out[-1].offset < until - 1) and until > offset and time.monotonic() < deadline:
            try:
                polled = consumer.poll(timeout_ms=_POLL_MS).get(tp, ())
            except KafkaError as exc:
                raise ClientFailed(f"{type(exc).__name__}: {exc}", delivered=tuple(out)) from None
            out.extend(consumer_record(record) for record in polled)
        return tuple(r for r in out if r.offset < until)

    # -- lookups

    def offsets_for_times(self, topic: str, partition: int, target: int) -> OffsetAndTimestamp | None:
        from kafka import TopicPartition
        from kafka.errors import KafkaError

        tp = TopicPartition(topic, partition)
        try:
            found = self._consumer_of().offsets_for_times({tp: target}, timeout_ms=self._ms)
        except ValueError as exc:
            raise ClientRefused(type(exc).__name__, str(exc)) from None
        except KafkaError as exc:
            raise ClientFailed(f"kafka-python offsets_for_times: {type(exc).__name__}: {exc}") from None
        answer = found.get(tp)
        return None if answer is None else OffsetAndTimestamp(answer.offset, answer.timestamp)

    def list_offsets(self, topic: str, partition: int, spec: SpecialTarget) -> OffsetAndTimestamp:
        from kafka import TopicPartition

        tp = TopicPartition(topic, partition)
        if spec is SpecialTarget.EARLIEST:
            return OffsetAndTimestamp(self._consumer_of().beginning_offsets([tp], timeout_ms=self._ms)[tp], None)
        if spec is SpecialTarget.LATEST:
            return OffsetAndTimestamp(self._consumer_of().end_offsets([tp], timeout_ms=self._ms)[tp], None)
        from kafka.admin import OffsetSpec

        answer = self._admin_of().list_partition_offsets({tp: OffsetSpec(int(spec))}, timeout_ms=self._ms)[tp]
        return OffsetAndTimestamp(answer.offset, answer.timestamp)

    def _admin_of(self) -> Any:
        if self._admin is None:
            from kafka import KafkaAdminClient

            self._admin = KafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=self._ms,
                                           client_id="kts-kafka-python-admin")
        return self._admin

    def first_record(
        self, topic: str, partition: int, found: OffsetAndTimestamp, *, until: int
    ) -> ConsumerRecord | None:
        consumer, tp = self._assigned(topic, partition, found.offset)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            records = consumer.poll(timeout_ms=_POLL_MS, max_records=1).get(tp, ())
            if records:
                return consumer_record(records[0])
        return None
