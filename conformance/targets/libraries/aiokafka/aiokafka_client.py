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
import inspect
import threading
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from conformance.extras import install_hint
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

_LINGER_MS = 200  # flush() waits for the linger: long enough for one send() call's records, short enough to wait
_T = TypeVar("_T")


class AiokafkaClient(PythonClient):
    """aiokafka against one cluster (conformance.targets.kinds.client_library.ClientLibrary)."""

    name = "aiokafka"
    client_id = "aiokafka"
    module = "aiokafka"
    capabilities = frozenset(ClientCapability) - {ClientCapability.MAX_TIMESTAMP}

    @classmethod
    def load(cls) -> Any:
        return import_library(
            "aiokafka", f"aiokafka is not installed: {install_hint('clients')} (or pip install 'aiokafka==0.14.0')"
        )

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

    def call(self, action: Callable[[], Any]) -> Any:
        """What `action` answers, run on the adapter's event loop (aiokafka's objects belong to it), awaited where
        it answers an awaitable (a coroutine, a future)."""

        async def run() -> Any:
            answer = action()
            return await answer if inspect.isawaitable(answer) else answer

        return self._run(run())

    def _started(self, make: Callable[[], Any]) -> Any:
        """A producer or consumer made and started on the adapter's event loop."""

        async def start() -> Any:
            handle = make()
            await handle.start()
            return handle

        return self._run(start())

    def new_producer(self, codec: Codec) -> Any:
        from aiokafka import AIOKafkaProducer

        settings = keywords(self.producer_settings(codec, _LINGER_MS))
        return self._started(lambda: AIOKafkaProducer(bootstrap_servers=self.bootstrap, **settings,
                                                      request_timeout_ms=self._ms))  # fmt: skip

    def new_consumer(self) -> Any:
        from aiokafka import AIOKafkaConsumer

        settings = keywords(self.consumer_settings())
        return self._started(lambda: AIOKafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None, **settings,
                                                      fetch_max_wait_ms=POLL_MS,
                                                      request_timeout_ms=self._ms))  # fmt: skip

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

    # -- producing and consuming

    def hand_over(self, producer: Any, topic: str, partition: int, record: Outgoing) -> Any:
        return self._run(producer.send(topic, value=record.value, key=record.key, partition=partition,
                                       timestamp_ms=record.timestamp))  # fmt: skip

    def flush(self, producer: Any) -> None:
        self._run(producer.flush(), timeout=2 * self.timeout)

    def delivered(self, pending: Any) -> Any:
        return self.call(lambda: pending)

    def batch(self, tp: Any, max_records: int | None) -> Mapping[Any, Sequence[Any]]:
        consumer = self.consumer()
        answer: Mapping[Any, Sequence[Any]] = self.call(
            lambda: consumer.getmany(tp, timeout_ms=POLL_MS, max_records=max_records)
        )
        return answer

    # -- lookups

    def lookup(self, tp: Any, target: int) -> Any:
        consumer = self.consumer()
        return self.call(lambda: consumer.offsets_for_times({tp: target})).get(tp)

    def list_offsets(self, topic: str, partition: int, spec: SpecialTarget) -> OffsetAndTimestamp:
        if spec not in (SpecialTarget.EARLIEST, SpecialTarget.LATEST):
            raise ClientFailed(f"aiokafka {self.version} offers no ListOffsets call for {spec.name}")
        consumer = self.consumer()
        tp = self.library.TopicPartition(topic, partition)
        edge = consumer.beginning_offsets if spec is SpecialTarget.EARLIEST else consumer.end_offsets
        return OffsetAndTimestamp(int(self.call(lambda: edge([tp]))[tp]), None)
