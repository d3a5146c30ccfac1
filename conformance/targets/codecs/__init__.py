"""Record codecs under test: the codec capability (codec_library.py), one adapter per library, and the
`codec:<library>` targets (codec_target.py). `LIBRARIES` names each adapter as "module:Class", imported only when
the target is opened, so a library that is not installed costs nothing until it is asked for."""

from __future__ import annotations

LIBRARIES: dict[str, str] = {
    # the reference: models/codec.py and models/records.py
    "model": "conformance.targets.codecs.model_codec:ModelCodec",
    "kafka-python": "conformance.targets.codecs.kafka_python_records:KafkaPythonCodec",
    "aiokafka": "conformance.targets.codecs.aiokafka_records:AiokafkaCodec",  # its C-accelerated record classes
    "aiokafka-pure": "conformance.targets.codecs.aiokafka_records:AiokafkaPureCodec",  # its pure-Python record classes
    # Apache Kafka's record layer (kafka-clients) in Spark's JVM
    "java": "conformance.targets.codecs.java_records:JavaCodec",
}
