"""What the Python client libraries (kafka-python, aiokafka) share in how they report, translated to the model's
types once: Python's "no timestamp" (None) for a v0 record, and producer exceptions carrying a Kafka error code; and
how they are set (Kafka's settings as their keyword arguments)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from conformance.targets.kinds.client_library import BATCH_FAILED, ClientFailed, SendFailure
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
