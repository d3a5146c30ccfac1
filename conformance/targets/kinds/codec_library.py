"""The codec capability: a record library under test builds batches and reads them as a consumer does.

A codec is what a client library (or a broker) uses to turn records into the bytes of a batch and back:
kafka-python's and aiokafka's record layers, Apache Kafka's Java record layer (MemoryRecordsBuilder,
MemoryRecords) run in Spark's JVM, and the model's own codec (models/codec.py with models/records.py), which
is the reference the codec suites compare every library with.

Three operations, each optional by capability (a suite reports UNSUPPORTED where one is missing):
- `build(request)`: the bytes the library writes for these records (a producer's batch; with
  `log_append_time`, a broker-side builder's LogAppendTime batch where the library has one);
- `read(data)`: the batches and records as the library's consumer sees them (CON-1);
- `convert(data, to_magic=...)`: the library's down-conversion of stored bytes (CNV-5), where it has one.

Every value is a model type (RecordSpec, ConsumerRecord, Codec, TimestampType), so a suite compares a library
with the model field by field. Adapters live in conformance/targets/libraries/; a library that is not installed raises
CodecUnavailable with the one line that names the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from conformance.judging.capabilities import CodecCapability
from models.constants import Codec, TimestampType
from models.records import ConsumerRecord, RecordSpec


class CodecUnavailable(Exception):
    """The library (or its runtime: a JVM, a jar) is not there; the message is one line naming the fix."""


class CodecRefused(Exception):
    """The library refused the operation (e.g. a writer refusing a timestamp below -1, FMT-8). `detail` is the
    library's own message, kept for the report."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(detail)


@dataclass(frozen=True)
class BatchRequest:
    """What a producer (or a broker-side builder) asks a library to write: records in one batch (v2 or a
    compressed legacy wrapper) or one legacy entry per record (uncompressed v0/v1)."""

    magic: int
    records: tuple[RecordSpec, ...]
    codec: Codec = Codec.NONE
    timestamp_type: TimestampType = TimestampType.CREATE_TIME
    # A broker-side builder's LogAppendTime (MemoryRecordsBuilder's logAppendTime); None for a producer.
    log_append_time: int | None = None
    base_offset: int = 0


@dataclass(frozen=True)
class ReadBatch:
    """One batch as a library's reader reports it (FMT-14 getters, CON-1 records)."""

    magic: int
    base_offset: int
    last_offset: int
    timestamp_type: TimestampType
    # The batch-level max timestamp as the library reports it; None where it does not expose one.
    max_timestamp: int | None
    records: tuple[ConsumerRecord, ...]


@runtime_checkable
class RecordCodecLibrary(Protocol):
    """A record library under test (or the model's codec, the reference)."""

    name: str  # e.g. "kafka-python", "aiokafka", "aiokafka-pure", "java", "model"
    version: str  # the library's version, for the report's environment
    capabilities: frozenset[CodecCapability]
    build_magics: frozenset[int]
    read_magics: frozenset[int]
    codecs: frozenset[Codec]  # compression codecs it can write and read

    def build(self, request: BatchRequest) -> bytes: ...

    def read(self, data: bytes) -> tuple[ReadBatch, ...]: ...

    def convert(self, data: bytes, *, to_magic: int, first_offset: int = 0) -> bytes: ...

    def close(self) -> None: ...


def read_records(batches: Sequence[ReadBatch]) -> tuple[ConsumerRecord, ...]:
    """Every record of `batches`, in order (what a consumer iterates)."""
    return tuple(r for b in batches for r in b.records)
