"""kafka-python: its record layer (kafka_python_records.py) and its client (kafka_python_client.py), in this
process at the pinned version from PyPI; another version, or a local checkout, runs through the Python driver with
that version installed into the cache."""

from __future__ import annotations

from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE, python_library

KAFKA_PYTHON = python_library(
    "kafka-python", "kafka-python", "3.0.12",
    {
        CODEC_ROLE: "conformance.targets.libraries.kafka_python.kafka_python_records:KafkaPythonCodec",
        CLIENT_ROLE: "conformance.targets.libraries.kafka_python.kafka_python_client:KafkaPythonClient",
    },
)  # fmt: skip
