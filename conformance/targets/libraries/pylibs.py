"""What the Python client libraries (kafka-python, aiokafka: aiokafka's API is kafka-python's, made asyncio) share:
how they report, translated to the model's types once (Python's "no timestamp", None, for a v0 record; producer
exceptions carrying a Kafka error code), how they are set (Kafka's settings as their keyword arguments), and the part
of their adapters that is the same call on either (`PythonClient`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any

from conformance.targets.kinds.client_library import (
    BATCH_FAILED,
    ClientFailed,
    ClientRefused,
    LibraryClient,
    OffsetAndTimestamp,
    RecordMetadata,
    SendFailure,
    SendOutcome,
)
from models.constants import Codec, ErrorCode, TimestampType
from models.records import ConsumerRecord


def consumer_record(record: Any) -> ConsumerRecord:
    """A library's ConsumerRecord (offset, timestamp, timestamp_type, key, value attributes) as the model's: a v0
    record's timestamp None and timestamp_type None read as -1 and NoTimestampType (CON-1's table)."""
    timestamp = -1 if record.timestamp is None else int(record.timestamp)
    kind = TimestampType.NO_TIMESTAMP_TYPE if record.timestamp_type is None else TimestampType(record.timestamp_type)
    return ConsumerRecord(record.offset, timestamp, kind, record.key, record.value)


def polled(poll: Callable[[], Iterable[Any]], error: type[BaseException], *, let_through: bool) -> list[ConsumerRecord]:
    """One poll's records (`poll`) as the model's; the library's error (`error`) as ClientFailed with its class name
    and text, or, `let_through`, as it is (the seek by time has always let the library's own error through)."""
    try:
        return [consumer_record(record) for record in poll()]
    except error as exc:
        if let_through:
            raise
        raise ClientFailed(f"{type(exc).__name__}: {exc}") from None


def failure_of(exc: BaseException, generic: type[BaseException]) -> SendFailure:
    """A producer exception as a SendFailure: the Kafka error its `errno` names; the library's base error class
    `generic` (Java's KafkaException, which Sender.failBatch gives a rejected batch's unlisted records) is
    BATCH_FAILED; anything else is its class name."""
    errno = getattr(exc, "errno", None)
    if isinstance(errno, int) and errno > 0:
        return SendFailure(ErrorCode(errno).name, str(exc))
    return SendFailure(BATCH_FAILED if type(exc) is generic else type(exc).__name__, str(exc))


def codecs_of(codec: Any) -> frozenset[Codec]:
    """The compression codecs a Python library can write, by its `codec` module's `has_*` probes (kafka-python's
    and aiokafka's name them alike): none always, the others where their packages are installed."""
    return frozenset(
        c
        for c, has in (
            (Codec.NONE, True),
            (Codec.GZIP, codec.has_gzip()),
            (Codec.SNAPPY, codec.has_snappy()),
            (Codec.LZ4, codec.has_lz4()),
            (Codec.ZSTD, codec.has_zstd()),
        )
        if has
    )


def keywords(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Settings by Kafka's names (compression.type) as the keyword arguments kafka-python and aiokafka name them
    after (compression_type), where no compression is None."""
    return {
        key.replace(".", "_"): None if key == "compression.type" and value == "none" else value
        for key, value in settings.items()
    }


class PythonClient(LibraryClient):
    """What kafka-python's and aiokafka's adapters share, the same call on either library: its version and the codecs
    it can write, its KafkaError, a record's outcome from what the producer answered, the consumer assigned a
    partition and seeking, one poll. Each adapter says where its library's calls run (`call`), how a record's
    outcome is waited for (`delivered`) and how its consumer polls (`batch`)."""

    module: str  # the library's Python module ("kafka", "aiokafka")

    def version_of(self, library: Any) -> str:
        return str(library.__version__)

    @cached_property
    def codecs(self) -> frozenset[Codec]:
        return codecs_of(importlib.import_module(f"{self.module}.codec"))

    @cached_property
    def kafka_error(self) -> type[Exception]:
        """The library's base error class (kafka.errors.KafkaError, aiokafka.errors.KafkaError)."""
        error: type[Exception] = importlib.import_module(f"{self.module}.errors").KafkaError
        return error

    def call(self, action: Callable[[], Any]) -> Any:
        """What `action` (a call of the library's) answers, run where the library's calls run: here."""
        return action()

    def delivered(self, pending: Any) -> Any:
        """The RecordMetadata of the record the producer answered `pending` for (raises its failure)."""
        raise NotImplementedError

    def batch(self, tp: Any, max_records: int | None) -> Mapping[Any, Sequence[Any]]:
        """One poll of the consumer: its records by partition, at most `max_records` (None: its own bound)."""
        raise NotImplementedError

    def lookup(self, tp: Any, target: int) -> Any:
        """The consumer's offsets_for_times answer for `tp` (its OffsetAndTimestamp, or None)."""
        raise NotImplementedError

    def outcome(self, pending: Any) -> SendOutcome:
        try:
            metadata = self.delivered(pending)
        except self.kafka_error as exc:
            return failure_of(exc, self.kafka_error)
        return RecordMetadata(metadata.offset, metadata.timestamp)

    def assign(self, topic: str, partition: int, offset: int) -> Any:
        consumer = self.consumer()
        tp = self.library.TopicPartition(topic, partition)

        def seek() -> None:
            consumer.assign([tp])
            consumer.seek(tp, offset)

        self.call(seek)
        return tp

    def poll(self, position: Any, *, first_only: bool) -> Sequence[ConsumerRecord]:
        return polled(lambda: self.batch(position, 1 if first_only else None).get(position, ()), self.kafka_error,
                      let_through=first_only)  # fmt: skip

    def offsets_for_times(self, topic: str, partition: int, target: int) -> OffsetAndTimestamp | None:
        """LO-9: the library's answer; its ValueError (a negative target, before any request) is its refusal."""
        try:
            answer = self.lookup(self.library.TopicPartition(topic, partition), target)
        except ValueError as exc:
            raise ClientRefused.of(exc) from None
        return None if answer is None else OffsetAndTimestamp(answer.offset, answer.timestamp)
