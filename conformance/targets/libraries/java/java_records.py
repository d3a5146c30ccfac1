"""Apache Kafka's own record layer (kafka-clients 3.9.1) as a codec library under test, run in Spark's JVM.

- build: `MemoryRecords.builder(buffer, magic, compression, timestampType, baseOffset, logAppendTime)` then
  `appendWithOffset(baseOffset + i, timestamp, key, value, headers)` per record, as the producer's
  accumulator and the broker's rebuild paths do; magics 0, 1, 2, every codec Kafka has (zstd on v2 only: the
  builder refuses it below v2, FMT-4). A request's `log_append_time` is the builder's logAppendTime
  (BUILD_LOG_APPEND_TIME); a LogAppendTime request without one is built with NO_TIMESTAMP (-1), which Kafka's
  builder then writes as the batch max timestamp.
- read: `MemoryRecords.readableRecords(...).batches()`, each batch's getters (magic, base/last offset,
  timestampType, maxTimestamp: BATCH_MAX_TIMESTAMP) and its records (offset, timestamp, key, value, headers), the
  records carrying their batch's timestamp type as the consumer's ConsumerRecord does (CON-1).
- convert: `MemoryRecords.downConvert(toMagic, firstOffset, time)` (RecordsUtil.downConvert, the 0.10-3.9
  broker's fetch path, CNV-5): DOWN_CONVERT. A batch already at or below `to_magic` comes back unchanged, as
  Kafka does; the record layer has no up-conversion (the broker's LogValidator does that).

Every call goes through our bridge (conformance/jvm/java/kts/bridge/RecordsBridge.java) in one py4j round trip.
Kafka's exceptions (IllegalArgumentException for a timestamp below -1, headers below v2, zstd below v2;
UnsupportedCompressionTypeException for a zstd down-conversion; CorruptRecordException on a bad read) become
CodecRefused with the exception's class and message. No Java, no jar, no PySpark: CodecUnavailable, one line.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from conformance import jvm
from conformance.judging.capabilities import CodecCapability
from conformance.jvm.locate import PYSPARK_MISSING
from conformance.targets.kinds.codec_library import BatchRequest, CodecRefused, CodecUnavailable, ReadBatch
from conformance.targets.libraries.java.compact import Refused, decode_read, decode_records_result, encode_spec
from models.constants import Codec


class JavaCodec:
    name = "java"
    capabilities = frozenset(
        {
            CodecCapability.BUILD,
            CodecCapability.READ,
            CodecCapability.BUILD_LOG_APPEND_TIME,
            CodecCapability.DOWN_CONVERT,
            CodecCapability.BATCH_MAX_TIMESTAMP,
        }
    )
    build_magics = frozenset({0, 1, 2})
    read_magics = frozenset({0, 1, 2})
    codecs = frozenset(Codec)

    @staticmethod
    def require() -> None:
        """Before a run starts, without starting the JVM: Java, kafka-clients.jar and PySpark are there
        (CodecUnavailable naming the fix)."""
        from conformance.jvm.session import check_java

        try:
            check_java()
            jvm.kafka_clients_jar()
        except jvm.JvmUnavailable as exc:
            raise CodecUnavailable(str(exc)) from None
        if importlib.util.find_spec("pyspark") is None:
            raise CodecUnavailable(PYSPARK_MISSING)

    def __init__(self) -> None:
        try:
            # The process's session (conformance.jvm), started here (local[2]) unless one runs already.
            self._bridge: Any = jvm.bridge()
            self.version: str = str(self._bridge.kafkaVersion())
        except jvm.JvmUnavailable as exc:
            raise CodecUnavailable(str(exc)) from None

    def build(self, request: BatchRequest) -> bytes:
        result = decode_records_result(bytes(self._bridge.build(encode_spec(request))))
        if isinstance(result, Refused):
            raise CodecRefused(result.detail)
        return result

    def read(self, data: bytes) -> tuple[ReadBatch, ...]:
        result = decode_read(bytes(self._bridge.read(bytes(data))))
        if isinstance(result, Refused):
            raise CodecRefused(result.detail)
        return tuple(batch.read_batch() for batch in result)

    def convert(self, data: bytes, *, to_magic: int, first_offset: int = 0) -> bytes:
        result = decode_records_result(bytes(self._bridge.downConvert(bytes(data), to_magic, first_offset)))
        if isinstance(result, Refused):
            raise CodecRefused(result.detail)
        return result

    def close(self) -> None:
        # The JVM is the process's Spark session, shared (conformance.jvm); it stops at exit, not per target.
        pass
