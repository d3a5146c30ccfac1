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

from collections.abc import Mapping, Sequence
from typing import Any

from conformance.judging.capabilities import ClientCapability
from conformance.targets.kinds.client_library import (
    POLL_MS,
    ClientFailed,
    OffsetAndTimestamp,
    Outgoing,
    import_library,
)
from conformance.targets.libraries.pylibs import PythonClient, keywords
from models.constants import Codec, SpecialTarget

_LINGER_MS = 1000  # flush() sends at once; a send() call's records are appended before it


class KafkaPythonClient(PythonClient):
    """kafka-python against one cluster (conformance.targets.kinds.client_library.ClientLibrary)."""

    name = "kafka-python"
    client_id = "kafka-python"
    module = "kafka"
    capabilities = frozenset(ClientCapability)

    @classmethod
    def load(cls) -> Any:
        return import_library(
            "kafka", "kafka-python is not installed (a dependency of this package): pip install 'kafka-python==3.0.12'"
        )

    def new_producer(self, codec: Codec) -> Any:
        from kafka import KafkaProducer

        return KafkaProducer(
            bootstrap_servers=self.bootstrap,
            **keywords(self.producer_settings(codec, _LINGER_MS)),
            request_timeout_ms=self._ms,
            max_block_ms=self._ms,
            delivery_timeout_ms=2 * self._ms + _LINGER_MS,
        )

    def new_consumer(self) -> Any:
        from kafka import KafkaConsumer

        return KafkaConsumer(
            bootstrap_servers=self.bootstrap,
            group_id=None,
            **keywords(self.consumer_settings()),
            fetch_max_wait_ms=POLL_MS,
            request_timeout_ms=self._ms,
        )

    def new_admin(self) -> Any:
        from kafka import KafkaAdminClient

        return KafkaAdminClient(
            bootstrap_servers=self.bootstrap, request_timeout_ms=self._ms, client_id=self.client_id_of("admin")
        )

    def close_producer(self, producer: Any) -> None:
        producer.close(timeout=self.timeout)

    # -- producing and consuming

    def hand_over(self, producer: Any, topic: str, partition: int, record: Outgoing) -> Any:
        return producer.send(topic, key=record.key, value=record.value, partition=partition,
                             timestamp_ms=record.timestamp)  # fmt: skip

    def flush(self, producer: Any) -> None:
        producer.flush(timeout=self.timeout)

    def delivered(self, pending: Any) -> Any:
        return pending.get(timeout=self.timeout)

    def batch(self, tp: Any, max_records: int | None) -> Mapping[Any, Sequence[Any]]:
        answer: Mapping[Any, Sequence[Any]] = self.consumer().poll(timeout_ms=POLL_MS, max_records=max_records)
        return answer

    # -- lookups

    def lookup(self, tp: Any, target: int) -> Any:
        try:
            return self.consumer().offsets_for_times({tp: target}, timeout_ms=self._ms).get(tp)
        except self.kafka_error as exc:
            raise ClientFailed(f"kafka-python offsets_for_times: {type(exc).__name__}: {exc}") from None

    def list_offsets(self, topic: str, partition: int, spec: SpecialTarget) -> OffsetAndTimestamp:
        tp = self.library.TopicPartition(topic, partition)
        if spec is SpecialTarget.EARLIEST:
            return OffsetAndTimestamp(self.consumer().beginning_offsets([tp], timeout_ms=self._ms)[tp], None)
        if spec is SpecialTarget.LATEST:
            return OffsetAndTimestamp(self.consumer().end_offsets([tp], timeout_ms=self._ms)[tp], None)
        from kafka.admin import OffsetSpec

        answer = self.admin().list_partition_offsets({tp: OffsetSpec(int(spec))}, timeout_ms=self._ms)[tp]
        return OffsetAndTimestamp(answer.offset, answer.timestamp)
