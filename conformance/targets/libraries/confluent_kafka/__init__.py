"""confluent-kafka (librdkafka): its client (confluent_client.py), in this process at the pinned version from PyPI;
another version, or a local checkout, runs through the Python driver with that version installed into the cache.
Its record layer is librdkafka's C code, which has no Python interface: it plays no codec role."""

from __future__ import annotations

from conformance.targets.kinds.library import CLIENT_ROLE, python_library

CONFLUENT_KAFKA = python_library(
    "confluent-kafka", "confluent-kafka", "2.16.1",
    # librdkafka
    {CLIENT_ROLE: "conformance.targets.libraries.confluent_kafka.confluent_client:ConfluentClient"},
)  # fmt: skip
