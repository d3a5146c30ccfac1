"""kafka-python's record layer (`kafka.record`, 3.0.12) as a codec library: `DefaultRecordBatchBuilder` (v2),
`LegacyRecordBatchBuilder` (v0/v1) and `MemoryRecords`, driven as its producer and consumer drive them
(conformance/targets/libraries/pyrecords.py). Snappy and zstd need the optional `python-snappy` and `zstandard` packages
(`kafka.codec.has_snappy()`, `has_zstd()`); without them those codecs are not offered (UNSUPPORTED)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.targets.kinds.codec_library import CodecUnavailable
from conformance.targets.libraries.pyrecords import PythonRecordLayer
from models.constants import Codec

FIX = "pip install kafka-python==3.0.12"


class KafkaPythonCodec(PythonRecordLayer):
    def __init__(self) -> None:
        try:
            import kafka
            import kafka.codec as codecs
            from kafka.record.default_records import DefaultRecordBatchBuilder
            from kafka.record.legacy_records import LegacyRecordBatchBuilder
            from kafka.record.memory_records import MemoryRecords
        except ImportError as exc:
            raise CodecUnavailable(f"kafka-python's record layer is not importable ({exc}): {FIX}") from None

        def batches(data: bytes) -> Iterator[tuple[int, Any]]:
            records = MemoryRecords(data)
            while records.has_next():
                batch = records.next_batch()
                yield batch.magic, batch

        available = {
            Codec.GZIP: codecs.has_gzip(),
            Codec.SNAPPY: codecs.has_snappy(),
            Codec.LZ4: codecs.has_lz4(),
            Codec.ZSTD: codecs.has_zstd(),
        }
        super().__init__(
            name="kafka-python",
            version=str(kafka.__version__),
            codecs=frozenset({Codec.NONE, *(c for c, ok in available.items() if ok)}),
            default_builder=DefaultRecordBatchBuilder,
            legacy_builder=LegacyRecordBatchBuilder,
            batches=batches,
        )
