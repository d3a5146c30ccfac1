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
import time
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

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
    SendOutcome,
)
from conformance.targets.libraries.pylibs import codecs_of, consumer_record, failure_of
from models.constants import Codec, SpecialTarget
from models.records import ConsumerRecord

_COMPRESSION = {Codec.NONE: None, Codec.GZIP: "gzip", Codec.SNAPPY: "snappy", Codec.LZ4: "lz4", Codec.ZSTD: "zstd"}
_LINGER_MS = 200  # flush() waits for the linger: long enough for one send() call's records, short enough to wait
_POLL_MS = 100
_T = TypeVar("_T")


def _aiokafka() -> Any:
    try:
        import aiokafka
    except ImportError:
        raise ClientUnavailable(
            f"aiokafka is not installed: {install_hint('clients')} (or pip install 'aiokafka==0.14.0')"
        ) from None
    return aiokafka


class AiokafkaClient(LibraryClient):
    """aiokafka against one cluster (conformance.targets.kinds.client_library.ClientLibrary)."""

    name = "aiokafka"
    capabilities = frozenset(ClientCapability) - {ClientCapability.MAX_TIMESTAMP}

    @staticmethod
    def require() -> None:
        _aiokafka()

    def __init__(self, bootstrap: str, *, timeout: float = 10.0) -> None:
        super().__init__(bootstrap, timeout=timeout)
        aiokafka = _aiokafka()
        from aiokafka import codec

        self.version = str(aiokafka.__version__)
        self.codecs = codecs_of(codec)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="aiokafka-client-loop", daemon=True)
        self._thread.start()

    def _run(self, coroutine: Coroutine[Any, Any, _T], *, timeout: float | None = None) -> _T:
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result(timeout=self.timeout if timeout is None else timeout)
        except TimeoutError:
            future.cancel()
            raise ClientFailed(f"aiokafka: no result within {self.timeout:g} s") from None

    async def _producer(self, codec: Codec) -> Any:
        if codec not in self._producers:
            from aiokafka import AIOKafkaProducer

            producer = AIOKafkaProducer(
                bootstrap_servers=self.bootstrap,
                acks="all",
                enable_idempotence=False,
                compression_type=_COMPRESSION[codec],
                linger_ms=_LINGER_MS,
                request_timeout_ms=self._ms,
                client_id="kts-aiokafka-producer",
            )
            await producer.start()
            self._producers[codec] = producer
        return self._producers[codec]

    async def _consumer_of(self) -> Any:
        if self._consumer is None:
            from aiokafka import AIOKafkaConsumer

            consumer = AIOKafkaConsumer(
                bootstrap_servers=self.bootstrap,
                group_id=None,
                enable_auto_commit=False,
                auto_offset_reset="earliest",
                fetch_max_wait_ms=_POLL_MS,
                request_timeout_ms=self._ms,
                client_id="kts-aiokafka-consumer",
            )
            await consumer.start()
            self._consumer = consumer
        return self._consumer

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

    def send(
        self, topic: str, partition: int, records: Sequence[Outgoing], *, codec: Codec = Codec.NONE
    ) -> tuple[SendOutcome, ...]:
        from aiokafka.errors import KafkaError

        async def send_all() -> tuple[SendOutcome, ...]:
            producer = await self._producer(codec)
            futures = [
                await producer.send(topic, value=r.value, key=r.key, partition=partition, timestamp_ms=r.timestamp)
                for r in records
            ]
            await producer.flush()
            out: list[SendOutcome] = []
            for future in futures:
                try:
                    metadata = await future
                except KafkaError as exc:
                    out.append(failure_of(exc, KafkaError))
                else:
                    out.append(RecordMetadata(metadata.offset, metadata.timestamp))
            return tuple(out)

        return self._run(send_all(), timeout=2 * self.timeout)

    # -- consuming

    async def _assigned(self, topic: str, partition: int, offset: int) -> tuple[Any, Any]:
        from aiokafka import TopicPartition

        consumer = await self._consumer_of()
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, offset)
        return consumer, tp

    def consume(self, topic: str, partition: int, offset: int, *, until: int) -> tuple[ConsumerRecord, ...]:
        from aiokafka.errors import KafkaError

        async def poll() -> tuple[ConsumerRecord, ...]:
            consumer, tp = await self._assigned(topic, partition, offset)
            out: list[ConsumerRecord] = []
            deadline = time.monotonic() + self.timeout * 0.9
            while (not out or out[-1].offset < until - 1) and until > offset and time.monotonic() < deadline:
                try:
                    batch = await consumer.getmany(tp, timeout_ms=_POLL_MS)
                except KafkaError as exc:
                    raise ClientFailed(f"{type(exc).__name__}: {exc}", delivered=tuple(out)) from None
                out.extend(consumer_record(r) for r in batch.get(tp, ()))
            return tuple(r for r in out if r.offset < until)

        return self._run(poll())

    # -- lookups

    def offsets_for_times(self, topic: str, partition: int, target: int) -> OffsetAndTimestamp | None:
        async def lookup() -> Any:
            from aiokafka import TopicPartition

            consumer = await self._consumer_of()
            tp = TopicPartition(topic, partition)
            return (await consumer.offsets_for_times({tp: target})).get(tp)

        try:
            answer = self._run(lookup())
        except ValueError as exc:
            raise ClientRefused(type(exc).__name__, str(exc)) from None
        return None if answer is None else OffsetAndTimestamp(answer.offset, answer.timestamp)

    def list_offsets(self, topic: str, partition: int, spec: SpecialTarget) -> OffsetAndTimestamp:
        if spec not in (SpecialTarget.EARLIEST, SpecialTarget.LATEST):
            raise ClientFailed(f"aiokafka {self.version} offers no ListOffsets call for {spec.name}")

        async def lookup() -> int:
            from aiokafka import TopicPartition

            consumer = await self._consumer_of()
            tp = TopicPartition(topic, partition)
            call = consumer.beginning_offsets if spec is SpecialTarget.EARLIEST else consumer.end_offsets
            return int((await call([tp]))[tp])

        return OffsetAndTimestamp(self._run(lookup()), None)

    def first_record(
        self, topic: str, partition: int, found: OffsetAndTimestamp, *, until: int
    ) -> ConsumerRecord | None:
        async def first() -> ConsumerRecord | None:
            consumer, tp = await self._assigned(topic, partition, found.offset)
            deadline = time.monotonic() + self.timeout * 0.9
            while time.monotonic() < deadline:
                batch = await consumer.getmany(tp, timeout_ms=_POLL_MS, max_records=1)
                if batch.get(tp):
                    return consumer_record(batch[tp][0])
            return None

        return self._run(first())
