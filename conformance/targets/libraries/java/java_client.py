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

import time
from collections.abc import Sequence
from typing import Any

from conformance.judging.capabilities import ClientCapability
from conformance.targets.kinds.client_library import (
    BATCH_FAILED,
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

_COMPRESSION = {Codec.NONE: "none", Codec.GZIP: "gzip", Codec.SNAPPY: "snappy", Codec.LZ4: "lz4", Codec.ZSTD: "zstd"}
_LINGER_MS = 1000
_POLL_MS = 100
_BYTES = "org.apache.kafka.common.serialization.ByteArray"


def _jvm() -> Any:
    from conformance import jvm

    try:
        return jvm.jvm()
    except jvm.JvmUnavailable as exc:
        raise ClientUnavailable(str(exc)) from None


def java_exception(exc: BaseException) -> Any:
    """The Java Throwable behind a py4j call's failure (PySpark re-raises some as its own CapturedException)."""
    return getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)


class JavaClient(LibraryClient):
    """Apache Kafka's Java client against one cluster (conformance.targets.kinds.client_library.ClientLibrary)."""

    name = "java"
    capabilities = frozenset(ClientCapability)
    codecs = frozenset(Codec)

    @staticmethod
    def require() -> None:
        from conformance import jvm
        from conformance.jvm.session import check_java

        try:
            check_java()
            jvm.kafka_clients_jar()
        except jvm.JvmUnavailable as exc:
            raise ClientUnavailable(str(exc)) from None

    def __init__(self, bootstrap: str, *, timeout: float = 10.0) -> None:
        super().__init__(bootstrap, timeout=timeout)
        self.jvm = _jvm()
        self.version = str(self.jvm.org.apache.kafka.common.utils.AppInfoParser.getVersion())

    def _props(self, settings: dict[str, object]) -> Any:
        props = self.jvm.java.util.Properties()
        for key, value in {"bootstrap.servers": self.bootstrap, "request.timeout.ms": self._ms,
                           "default.api.timeout.ms": self._ms, **settings}.items():
            props.put(key, str(value))
        return props

    def _producer(self, codec: Codec) -> Any:
        if codec not in self._producers:
            self._producers[codec] = self.jvm.org.apache.kafka.clients.producer.KafkaProducer(self._props({
                "client.id": "kts-java-producer",
                "acks": "all",
                "enable.idempotence": "false",
                "compression.type": _COMPRESSION[codec],
                "linger.ms": _LINGER_MS,
                "max.block.ms": self._ms,
                "delivery.timeout.ms": 2 * self._ms + _LINGER_MS,
                "key.serializer": _BYTES + "Serializer",
                "value.serializer": _BYTES + "Serializer",
            }))
        return self._producers[codec]

    def _consumer_of(self) -> Any:
        if self._consumer is None:
            self._consumer = self.jvm.org.apache.kafka.clients.consumer.KafkaConsumer(self._props({
                "client.id": "kts-java-consumer",
                "enable.auto.commit": "false",
                "auto.offset.reset": "earliest",
                "fetch.max.wait.ms": _POLL_MS,
                "key.deserializer": _BYTES + "Deserializer",
                "value.deserializer": _BYTES + "Deserializer",
            }))
        return self._consumer

    def _admin_of(self) -> Any:
        if self._admin is None:
            self._admin = self.jvm.org.apache.kafka.clients.admin.Admin.create(self._props({
                "client.id": "kts-java-admin",
            }))
        return self._admin

    def close(self) -> None:
        duration = self.jvm.java.time.Duration.ofMillis(self._ms)
        try:
            for producer in self._producers.values():
                producer.close(duration)
            if self._consumer is not None:
                self._consumer.close(duration)
            if self._admin is not None:
                self._admin.close(duration)
        finally:
            self._producers, self._consumer, self._admin = {}, None, None

    # -- producing

    def send(
        self, topic: str, partition: int, records: Sequence[Outgoing], *, codec: Codec = Codec.NONE
    ) -> tuple[SendOutcome, ...]:
        producer = self._producer(codec)
        record_class = self.jvm.org.apache.kafka.clients.producer.ProducerRecord
        futures = [
            producer.send(record_class(topic, partition, r.timestamp, r.key, r.value, None)) for r in records
        ]
        producer.flush()
        unit = self.jvm.java.util.concurrent.TimeUnit.MILLISECONDS
        out: list[SendOutcome] = []
        for future in futures:
            try:
                metadata = future.get(self._ms, unit)
            except Exception as exc:
                out.append(self._failure(exc))
            else:
                out.append(RecordMetadata(metadata.offset(), metadata.timestamp()))
        return tuple(out)

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
                           str(cause.getMessage()))

    # -- consuming

    def _tp(self, topic: str, partition: int) -> Any:
        return self.jvm.org.apache.kafka.common.TopicPartition(topic, partition)

    def _poll_from(self, topic: str, partition: int, offset: int, *, until: int, first_only: bool
                   ) -> tuple[ConsumerRecord, ...]:
        consumer, tp = self._consumer_of(), self._tp(topic, partition)
        consumer.assign(self.jvm.java.util.Collections.singletonList(tp))
        consumer.seek(tp, offset)
        poll = self.jvm.java.time.Duration.ofMillis(_POLL_MS)
        out: list[ConsumerRecord] = []
        deadline = time.monotonic() + self.timeout
        while (not out or out[-1].offset < until - 1) and until > offset and time.monotonic() < deadline:
            try:
                polled = consumer.poll(poll).records(tp).iterator()
            except Exception as exc:
                thrown = java_exception(exc)
                what = f"{thrown.getClass().getName()}: {thrown.getMessage()}" if thrown is not None else str(exc)
                raise ClientFailed(f"Java consumer: {what}", delivered=tuple(out)) from None
            while polled.hasNext():
                record = polled.next()
                out.append(ConsumerRecord(record.offset(), record.timestamp(),
                                          TimestampType[str(record.timestampType().name())],
                                          _bytes(record.key()), _bytes(record.value())))
                if first_only:
                    return tuple(out)
        return tuple(r for r in out if r.offset < until)

    def consume(self, topic: str, partition: int, offset: int, *, until: int) -> tuple[ConsumerRecord, ...]:
        return self._poll_from(topic, partition, offset, until=until, first_only=False)

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
            found = self._consumer_of().offsetsForTimes(self._long_map(tp, target),
                                                       self.jvm.java.time.Duration.ofMillis(self._ms))
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
            info = self._admin_of().listOffsets(request).partitionResult(tp).get(
                self._ms, self.jvm.java.util.concurrent.TimeUnit.MILLISECONDS)
        except Exception as exc:
            thrown = java_exception(exc)
            what = f"{thrown.getClass().getName()}: {thrown.getMessage()}" if thrown is not None else str(exc)
            raise ClientFailed(f"Java Admin.listOffsets {spec.name}: {what}") from None
        return OffsetAndTimestamp(info.offset(), info.timestamp())

    def first_record(
        self, topic: str, partition: int, found: OffsetAndTimestamp, *, until: int
    ) -> ConsumerRecord | None:
        records = self._poll_from(topic, partition, found.offset, until=until, first_only=True)
        return records[0] if records else None


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)
