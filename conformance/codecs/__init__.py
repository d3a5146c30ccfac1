"""Record codecs under test (issue 13): the codec capability (protocol.py), one adapter per library, and the
`codec:<library>` targets (target.py). `LIBRARIES` names each adapter as "module:Class", imported only when
the target is opened, so a library that is not installed costs nothing until it is asked for."""

from __future__ import annotations

LIBRARIES: dict[str, str] = {
    "model": "conformance.codecs.model:ModelCodec",  # the reference: models/codec.py and models/records.py
    "kafka-python": "conformance.codecs.kafka_python:KafkaPythonCodec",
    "aiokafka": "conformance.codecs.aiokafka:AiokafkaCodec",  # its C-accelerated record classes
    "aiokafka-pure": "conformance.codecs.aiokafka:AiokafkaPureCodec",  # its pure-Python record classes
    "java": "conformance.codecs.java:JavaCodec",  # Apache Kafka's record layer (kafka-clients) in Spark's JVM
}
