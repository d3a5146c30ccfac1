"""aiokafka: its client (aiokafka_client.py) and its record layer twice (aiokafka_records.py): the C-accelerated
record classes (codec:aiokafka) and the pure-Python ones (codec:aiokafka-pure), a library row each. In this process
at the pinned version from PyPI; another version, or a local checkout, runs through the Python driver with that
version installed into the cache."""

from __future__ import annotations

from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE, python_library

_RECORDS = "conformance.targets.libraries.aiokafka.aiokafka_records"

AIOKAFKA = python_library(
    "aiokafka", "aiokafka", "0.14.0",
    {
        CODEC_ROLE: f"{_RECORDS}:AiokafkaCodec",  # its C-accelerated record classes
        CLIENT_ROLE: "conformance.targets.libraries.aiokafka.aiokafka_client:AiokafkaClient",
    },
)  # fmt: skip

AIOKAFKA_PURE = python_library(
    "aiokafka-pure", "aiokafka", "0.14.0",
    {CODEC_ROLE: f"{_RECORDS}:AiokafkaPureCodec"},  # its pure-Python record classes
)  # fmt: skip
