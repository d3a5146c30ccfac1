"""Apache Kafka's Java client (kafka-clients 3.9.1) as a client under test, in Spark's JVM through py4j
(conformance.jvm): KafkaProducer (RecordMetadata from each send's future), KafkaConsumer (assign, seek, poll;
offsetsForTimes) and Admin.listOffsets with OffsetSpec earliest, latest and maxTimestamp.

The Java client is where the client rules of docs/rules.md come from (FutureRecordMetadata, Sender.failBatch,
ClassicKafkaConsumer.offsetsForTimes); running it here checks the reference client's reading of them and the suites'
checks against the real thing.

What the adapter translates, and nothing more: a producer failure (the cause of the future's ExecutionException) is
the Kafka error its exception stands for (Errors.forException: InvalidTimestampException is INVALID_TIMESTAMP), a
plain KafkaException is BATCH_FAILED; a ConsumerRecord's TimestampType by its enum name. py4j passes a Python int
that fits 32 bits as an Integer, which a Map<TopicPartition, Long> cannot hold (ClassCastException), so the
offsetsForTimes map is built on the Java side from a primitive long (a LongStream collected with a constant key).

Producers: acks=all, no idempotence, one per compression codec, a long linger (flush() sends at once).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conformance.judging.capabilities import ClientCapability
from conformance.targets.kinds.client_library import (
    BATCH_FAILED,
    POLL_MS,
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
from models.constants import Codec, SpecialTarget, TimestampType
from models.records import ConsumerRecord

_LINGER_MS = 1000
_BYTES = "org.apache.kafka.common.serialization.ByteArray"


def java_exception(exc: BaseException) -> Any:
    """The Java Throwable behind a py4j call's failure (PySpark re-raises some as its own CapturedException)."""
    return getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)


def java_text(exc: BaseException) -> str:
    """A py4j call's failure as "<Java exception class>: <message>" (the Python text where no Throwable is behind)."""
    thrown = java_exception(exc)
    return f"{thrown.getClass().getName()}: {thrown.getMessage()}" if thrown is not None else str(exc)


class JavaClient(LibraryClient):
    """Apache Kafka's Java client against one cluster (conformance.targets.kinds.client_library.ClientLibrary)."""

    name = "java"
    client_id = "java"
    capabilities = frozenset(ClientCapability)
    codecs = frozenset(Codec)

    @classmethod
    def require(cls) -> None:
        """Java and the kafka-clients jar are there (without starting the JVM)."""
        from conformance import jvm
        from conformance.jvm.session import check_java

        try:
            check_java()
            jvm.kafka_clients_jar()
        except jvm.JvmUnavailable as exc:
            raise ClientUnavailable(str(exc)) from None

    @classmethod
    def load(cls) -> Any:
        """Spark's JVM through py4j (started on first use)."""
        from conformance import jvm

        try:
            return jvm.jvm()
        except jvm.JvmUnavailable as exc:
            raise ClientUnavailable(str(exc)) from None

    def version_of(self, library: Any) -> str:
        return str(library.org.apache.kafka.common.utils.AppInfoParser.getVersion())

    @property
    def jvm(self) -> Any:
        return self.library

    def _props(self, settings: dict[str, Any]) -> Any:
        props = self.jvm.java.util.Properties()
        for key, value in {"bootstrap.servers": self.bootstrap, "request.timeout.ms": self._ms,
                           "default.api.timeout.ms": self._ms, **settings}.items():  # fmt: skip
            props.put(key, str(value).lower() if isinstance(value, bool) else str(value))
        return props

    def new_producer(self, codec: Codec) -> Any:
        return self.jvm.org.apache.kafka.clients.producer.KafkaProducer(self._props({
            **self.producer_settings(codec, _LINGER_MS),
            "max.block.ms": self._ms,
            "delivery.timeout.ms": 2 * self._ms + _LINGER_MS,
            "key.serializer": _BYTES + "Serializer",
            "value.serializer": _BYTES + "Serializer",
        }))  # fmt: skip

    def new_consumer(self) -> Any:
        return self.jvm.org.apache.kafka.clients.consumer.KafkaConsumer(self._props({
            **self.consumer_settings(),
            "fetch.max.wait.ms": POLL_MS,
            "key.deserializer": _BYTES + "Deserializer",
            "value.deserializer": _BYTES + "Deserializer",
        }))  # fmt: skip

    def new_admin(self) -> Any:
        admin = self.jvm.org.apache.kafka.clients.admin.Admin
        return admin.create(self._props({"client.id": self.client_id_of("admin")}))

    def close_handle(self, handle: Any) -> None:
        handle.close(self.jvm.java.time.Duration.ofMillis(self._ms))

    # -- producing

    def hand_over(self, producer: Any, topic: str, partition: int, record: Outgoing) -> Any:
        record_class = self.jvm.org.apache.kafka.clients.producer.ProducerRecord
        return producer.send(record_class(topic, partition, record.timestamp, record.key, record.value, None))

    def flush(self, producer: Any) -> None:
        producer.flush()

    def outcome(self, pending: Any) -> SendOutcome:
        try:
            metadata = pending.get(self._ms, self.jvm.java.util.concurrent.TimeUnit.MILLISECONDS)
        except Exception as exc:
            return self._failure(exc)
        return RecordMetadata(metadata.offset(), metadata.timestamp())

    def _failure(self, exc: BaseException) -> SendFailure:
        thrown = java_exception(exc)
        if thrown is None:
            raise exc
        cause = thrown.getCause() if thrown.getCause() is not None else thrown
        name = str(cause.getClass().getName())
        if name == "org.apache.kafka.common.KafkaException":
            return SendFailure(BATCH_FAILED, str(cause.getMessage()))
        if name.endswith("TimeoutException"):
            raise ClientFailed(f"Java producer: {name}: {cause.getMessage()}") from None
        error = str(self.jvm.org.apache.kafka.common.protocol.Errors.forException(cause).name())
        return SendFailure(error if error != "UNKNOWN_SERVER_ERROR" else name.rsplit(".", 1)[-1],
                           str(cause.getMessage()))  # fmt: skip

    # -- consuming

    def _tp(self, topic: str, partition: int) -> Any:
        return self.jvm.org.apache.kafka.common.TopicPartition(topic, partition)

    def assign(self, topic: str, partition: int, offset: int) -> Any:
        consumer, tp = self.consumer(), self._tp(topic, partition)
        consumer.assign(self.jvm.java.util.Collections.singletonList(tp))
        consumer.seek(tp, offset)
        return tp

    def poll(self, position: Any, *, first_only: bool) -> Sequence[ConsumerRecord]:
        try:
            polled = self.consumer().poll(self.jvm.java.time.Duration.ofMillis(POLL_MS)).records(position).iterator()
        except Exception as exc:
            raise ClientFailed(f"Java consumer: {java_text(exc)}") from None
        out: list[ConsumerRecord] = []
        while polled.hasNext():
            record = polled.next()
            out.append(ConsumerRecord(record.offset(), record.timestamp(),
                                      TimestampType[str(record.timestampType().name())],
                                      _bytes(record.key()), _bytes(record.value())))  # fmt: skip
        return out

    # -- lookups

    def _long_map(self, tp: Any, value: int) -> Any:
        """Map<TopicPartition, Long> {tp: value}, the Long made on the Java side (see the module doc)."""
        stream = self.jvm.java.util.stream
        constant = getattr(getattr(self.jvm.scala.collection.immutable, "Map$"), "MODULE$").empty().withDefaultValue(tp)
        key = self.jvm.scala.jdk.javaapi.FunctionConverters.asJavaFunction(constant)
        values = self.jvm.java.util.function.Function.identity()
        return stream.LongStream.of(value).boxed().collect(stream.Collectors.toMap(key, values))

    def offsets_for_times(self, topic: str, partition: int, target: int) -> OffsetAndTimestamp | None:
        tp = self._tp(topic, partition)
        try:
            found = self.consumer().offsetsForTimes(self._long_map(tp, target),
                                                    self.jvm.java.time.Duration.ofMillis(self._ms))  # fmt: skip
        except Exception as exc:
            thrown = java_exception(exc)
            if thrown is None:
                raise
            name = str(thrown.getClass().getName())
            if name == "java.lang.IllegalArgumentException":
                raise ClientRefused("IllegalArgumentException", str(thrown.getMessage())) from None
            raise ClientFailed(f"Java offsetsForTimes: {name}: {thrown.getMessage()}") from None
        answer = found.get(tp)
        return None if answer is None else OffsetAndTimestamp(answer.offset(), answer.timestamp())

    def list_offsets(self, topic: str, partition: int, spec: SpecialTarget) -> OffsetAndTimestamp:
        admin = self.jvm.org.apache.kafka.clients.admin
        specs = {
            SpecialTarget.EARLIEST: admin.OffsetSpec.earliest,
            SpecialTarget.LATEST: admin.OffsetSpec.latest,
            SpecialTarget.MAX_TIMESTAMP: admin.OffsetSpec.maxTimestamp,
        }
        tp = self._tp(topic, partition)
        request = self.jvm.java.util.HashMap()
        request.put(tp, specs[spec]())
        try:
            info = self.admin().listOffsets(request).partitionResult(tp).get(
                self._ms, self.jvm.java.util.concurrent.TimeUnit.MILLISECONDS)  # fmt: skip
        except Exception as exc:
            raise ClientFailed(f"Java Admin.listOffsets {spec.name}: {java_text(exc)}") from None
        return OffsetAndTimestamp(info.offset(), info.timestamp())


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)
