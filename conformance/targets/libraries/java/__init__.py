"""Apache Kafka's Java client (kafka-clients): its client (java_client.py) and its record layer (java_records.py,
with compact.py: the codec's values in the bridge's compact form) at the pinned version in Spark's JVM through the
JVM bridge (conformance.jvm); another release, or a jar or checkout of the user's, runs through the Java driver
(conformance/targets/routes/driver/java/kafkaclients/), built with Maven by java_build.py."""

from __future__ import annotations

from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE, Library, Route

JAVA = Library(
    "java", "java", "org.apache.kafka:kafka-clients", "Maven Central", "3.9.1", frozenset({CLIENT_ROLE, CODEC_ROLE}),
    "conformance.targets.libraries.java.java_build:build_java_driver", "java/kafkaclients",
    adapters={
        CODEC_ROLE: "conformance.targets.libraries.java.java_records:JavaCodec",
        CLIENT_ROLE: "conformance.targets.libraries.java.java_client:JavaClient",
    },
    route=Route.JVM_BRIDGE,
)  # fmt: skip
