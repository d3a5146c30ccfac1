"""aiokafka as a client under test: AIOKafkaProducer (the RecordMetadata of each send's future) and AIOKafkaConsumer
(assign, seek, getmany; offsets_for_times, beginning_offsets, end_offsets). aiokafka 0.14.0 has no ListOffsets call
for the MAX_TIMESTAMP spec (its admin client lists none), so that capability is absent (UNSUPPORTED).

aiokafka is asyncio: the adapter runs its own event loop in one thread and every call waits for its coroutine with the
adapter's timeout, so the suites stay synchronous. Translations, and nothing more: a v0 record's timestamp None and
timestamp_type None read as -1 and NoTimestampType (CON-1's table); a producer exception with a Kafka error code
(`errno`) is that error's name (SendFailure.kind), aiokafka's base KafkaError is BATCH_FAILED (as Java's
KafkaException), anything else its class name.

Producers: acks=all, no idempotence, one per compression codec, a long linger so that one send() call's records go out
as one batch when flushed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Sequence
from functools import cached_property
from typing import Any, TypeVar

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
    SendOutcome,
    import_library,
)
from conformance.targets.libraries.pylibs import codecs_of, failure_of, keywords, polled
from models.constants import Codec, SpecialTarget
from models.records import ConsumerRecord

_LINGER_MS = 200  # flush() waits for the linger: long enough for one send() call's records, short enough to wait
_T = TypeVar("_T")


class AiokafkaClient(LibraryClient):
    """aiokafka against one cluster (conformance.targets.kinds.client_library.ClientLibrary)."""

    name = "aiokafka"
    client_id = "aiokafka"
    capabilities = frozenset(ClientCapability) - {ClientCapability.MAX_TIMESTAMP}

    @classmethod
    def load(cls) -> Any:
        return import_library(
            "aiokafka", f"aiokafka is not installed: {install_hint('clients')} (or pip install 'aiokafka==0.14.0')"
        )

    def version_of(self, library: Any) -> str:
        return str(library.__version__)

    @cached_property
    def codecs(self) -> frozenset[Codec]:
        from aiokafka import codec

        return codecs_of(codec)

    def __init__(self, bootstrap: str, *, timeout: float = 10.0) -> None:
        super().__init__(bootstrap, timeout=timeout)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="aiokafka-client-loop", daemon=True)
        self._thread.start()

    def _run(self, coroutine: Coroutine[Any, Any, _T], *, timeout: float | None = None) -> _T:
        """`coroutine` run on the adapter's event loop, waited for at most the call's bound (or `timeout`)."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result(timeout=self.timeout if timeout is None else timeout)
        except TimeoutError:
            future.cancel()
            raise ClientFailed(f"aiokafka: no result within {self.timeout:g} s") from None

    def new_producer(self, codec: Codec) -> Any:
        async def start() -> Any:
            from aiokafka import AIOKafkaProducer

            producer = AIOKafkaProducer(
                bootstrap_servers=self.bootstrap,
                **keywords(self.producer_settings(codec, _LINGER_MS)),
                request_timeout_ms=self._ms,
            )
            await producer.start()
            return producer

        return self._run(start())

    def new_consumer(self) -> Any:
        async def start() -> Any:
            from aiokafka import AIOKafkaConsumer

            consumer = AIOKafkaConsumer(
                bootstrap_servers=self.bootstrap,
                group_id=None,
                **keywords(self.consumer_settings()),
                fetch_max_wait_ms=POLL_MS,
                request_timeout_ms=self._ms,
            )
            await consumer.start()
            return consumer

        return self._run(start())

    def close(self) -> None:
        async def stop() -> None:
            for producer in self._producers.values():
                await producer.stop()
            if self._consumer is not None:
                await self._consumer.stop()

        try:
            self._run(stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(self.timeout)
            self._loop.close()

    # -- producing

    def hand_over(self, producer: Any, topic: str, partition: int, record: Outgoing) -> Any:
        return self._run(producer.send(topic, value=record.value, key=record.key, partition=partition,
                                       timestamp_ms=record.timestamp))  # fmt: skip

    def flush(self, producer: Any) -> None:
        self._run(producer.flush(), timeout=2 * self.timeout)

    def outcome(self, pending: Any) -> SendOutcome:
        from aiokafka.errors import KafkaError

        async def delivered() -> Any:
            return await pending

        try:
            metadata = self._run(delivered())
        except KafkaError as exc:
            return failure_of(exc, KafkaError)
        return RecordMetadata(metadata.offset, metadata.timestamp)

    # -- consuming

    def assign(self, topic: str, partition: int, offset: int) -> Any:
        from aiokafka import TopicPartition

        consumer = self.consumer()
        tp = TopicPartition(topic, partition)

        async def assign() -> None:
            consumer.assign([tp])
            consumer.seek(tp, offset)

        self._run(assign())
        return tp

    def poll(self, position: Any, *, first_only: bool) -> Sequence[ConsumerRecord]:
        from aiokafka.errors import KafkaError

        consumer = self.consumer()

        def batch() -> Any:
            return self._run(consumer.getmany(position, timeout_ms=POLL_MS, max_records=1 if first_only else None))

        return polled(lambda: batch().get(position, ()), KafkaError, let_through=first_only)

    # -- lookups

    def offsets_for_times(self, topic: str, partition: int, target: int) -> OffsetAndTimestamp | None:
        from aiokafka import TopicPartition

        consumer = self.consumer()
        tp = TopicPartition(topic, partition)
        try:
            answer = self._run(consumer.offsets_for_times({tp: target})).get(tp)
        except ValueError as exc:
            raise ClientRefused.of(exc) from None
        return None if answer is None else OffsetAndTimestamp(answer.offset, answer.timestamp)

    def list_offsets(self, topic: str, partition: int, spec: SpecialTarget) -> OffsetAndTimestamp:
        if spec not in (SpecialTarget.EARLIEST, SpecialTarget.LATEST):
            raise ClientFailed(f"aiokafka {self.version} offers no ListOffsets call for {spec.name}")
        from aiokafka import TopicPartition

        consumer = self.consumer()
        tp = TopicPartition(topic, partition)
        call = consumer.beginning_offsets if spec is SpecialTarget.EARLIEST else consumer.end_offsets
        return OffsetAndTimestamp(int(self._run(call([tp]))[tp]), None)
