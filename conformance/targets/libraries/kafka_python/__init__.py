"""kafka-python: its record layer (kafka_python_records.py) and its client (kafka_python_client.py), in this
process at the pinned version from PyPI; another version, or a local checkout, runs through the Python driver with
that version installed into the cache."""

from __future__ import annotations

from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE, Library, Route

KAFKA_PYTHON = Library(
    "kafka-python", "python", "kafka-python", "PyPI", "3.0.12", frozenset({CLIENT_ROLE, CODEC_ROLE}),
    "conformance.targets.routes.driver.driver_builds:build_python_driver",
    adapters={
        CODEC_ROLE: "conformance.targets.libraries.kafka_python.kafka_python_records:KafkaPythonCodec",
        CLIENT_ROLE: "conformance.targets.libraries.kafka_python.kafka_python_client:KafkaPythonClient",
    },
    route=Route.PYTHON,
)  # fmt: skip
