"""aiokafka's record layer (0.14) as a codec library, twice: `AiokafkaCodec` drives its C-accelerated classes
(`aiokafka.record._crecords`: what aiokafka uses when its extensions are built, the default), `AiokafkaPureCodec`
its pure-Python ones (`_DefaultRecordBatchBuilderPy`, `_LegacyRecordBatchBuilderPy`, `_DefaultRecordBatchPy`,
`_LegacyRecordBatchPy`: what it uses with AIOKAFKA_NO_EXTENSIONS set), so a difference between the two shows.
Both are driven as aiokafka's producer and consumer drive them (conformance/targets/libraries/pyrecords.py). Both
readers walk
the record set themselves (pyrecords.sliced: the Length and magic framing aiokafka's MemoryRecords uses) and hand each
entry to the batch class of their kind: aiokafka's pure `_MemoryRecordsPy` would hand out whichever batch classes the
import chose (the C ones when they exist)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

from conformance.extras import install_hint
from conformance.targets.kinds.codec_library import CodecUnavailable
from conformance.targets.libraries.pyrecords import PythonRecordLayer, sliced
from models.constants import MAGIC_V2, Codec

FIX = f"{install_hint('clients')} (or pip install aiokafka==0.14.0)"


def _codecs(module: Any) -> frozenset[Codec]:
    available = {
        Codec.GZIP: module.has_gzip(),
        Codec.SNAPPY: module.has_snappy(),
        Codec.LZ4: module.has_lz4(),
        Codec.ZSTD: module.has_zstd(),
    }
    return frozenset({Codec.NONE, *(c for c, ok in available.items() if ok)})


def _require(*modules: str, what: str) -> None:
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise CodecUnavailable(f"{what} not importable ({exc}): {FIX}") from None


class AiokafkaCodec(PythonRecordLayer):
    """aiokafka's C-accelerated record classes."""

    @staticmethod
    def require() -> None:
        """Before a run starts: aiokafka and its C record classes import (CodecUnavailable naming the fix)."""
        _require("aiokafka", "aiokafka.codec", what="aiokafka is")
        _require("aiokafka.record._crecords", what="aiokafka's C record classes are")

    def __init__(self) -> None:
        try:
            import aiokafka
            import aiokafka.codec as codecs
        except ImportError as exc:
            raise CodecUnavailable(f"aiokafka is not importable ({exc}): {FIX}") from None
        try:
            from aiokafka.record import _crecords
        except ImportError as exc:
            raise CodecUnavailable(
                f"aiokafka's C record classes are not built ({exc}): {FIX} (a wheel with its extensions)"
            ) from None

        def batches(data: bytes) -> Iterator[tuple[int, Any]]:
            for magic, entry in sliced(data):
                if magic >= MAGIC_V2:
                    yield magic, _crecords.DefaultRecordBatch(entry)
                else:
                    yield magic, _crecords.LegacyRecordBatch(entry, magic)

        super().__init__(
            name="aiokafka",
            version=str(aiokafka.__version__),
            codecs=_codecs(codecs),
            default_builder=_crecords.DefaultRecordBatchBuilder,
            legacy_builder=_crecords.LegacyRecordBatchBuilder,
            batches=batches,
        )


class AiokafkaPureCodec(PythonRecordLayer):
    """aiokafka's pure-Python record classes."""

    @staticmethod
    def require() -> None:
        """Before a run starts: aiokafka's pure-Python record classes import (CodecUnavailable naming the fix)."""
        _require("aiokafka", "aiokafka.record.default_records", "aiokafka.record.legacy_records",
                 what="aiokafka's pure-Python record classes are")  # fmt: skip

    def __init__(self) -> None:
        try:
            import aiokafka
            import aiokafka.codec as codecs
            from aiokafka.record.default_records import _DefaultRecordBatchBuilderPy, _DefaultRecordBatchPy
            from aiokafka.record.legacy_records import _LegacyRecordBatchBuilderPy, _LegacyRecordBatchPy
        except ImportError as exc:
            raise CodecUnavailable(f"aiokafka's pure-Python record classes are not importable ({exc}): {FIX}") from None

        def batches(data: bytes) -> Iterator[tuple[int, Any]]:
            for magic, entry in sliced(data):
                yield magic, (_DefaultRecordBatchPy(entry) if magic >= MAGIC_V2 else _LegacyRecordBatchPy(entry, magic))

        super().__init__(
            name="aiokafka-pure",
            version=str(aiokafka.__version__),
            codecs=_codecs(codecs),
            default_builder=_DefaultRecordBatchBuilderPy,
            legacy_builder=_LegacyRecordBatchBuilderPy,
            batches=batches,
        )
