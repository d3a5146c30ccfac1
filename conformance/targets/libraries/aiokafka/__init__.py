"""aiokafka: its client (aiokafka_client.py) and its record layer twice (aiokafka_records.py): the C-accelerated
record classes (codec:aiokafka) and the pure-Python ones (codec:aiokafka-pure), a library row each. In this process
at the pinned version from PyPI; another version, or a local checkout, runs through the Python driver with that
version installed into the cache."""

from __future__ import annotations

from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE, Library, Route

_PYTHON_DRIVER = "conformance.targets.routes.driver.driver_builds:build_python_driver"

_RECORDS = "conformance.targets.libraries.aiokafka.aiokafka_records"

AIOKAFKA = Library(
    "aiokafka", "python", "aiokafka", "PyPI", "0.14.0", frozenset({CLIENT_ROLE, CODEC_ROLE}), _PYTHON_DRIVER,
    adapters={
        CODEC_ROLE: f"{_RECORDS}:AiokafkaCodec",  # its C-accelerated record classes
        CLIENT_ROLE: "conformance.targets.libraries.aiokafka.aiokafka_client:AiokafkaClient",
    },
    route=Route.PYTHON,
)  # fmt: skip

AIOKAFKA_PURE = Library(
    "aiokafka-pure", "python", "aiokafka", "PyPI", "0.14.0", frozenset({CODEC_ROLE}), _PYTHON_DRIVER,
    adapters={CODEC_ROLE: f"{_RECORDS}:AiokafkaPureCodec"},  # its pure-Python record classes
    route=Route.PYTHON,
)  # fmt: skip
