"""Apache Kafka's own Java code (kafka-clients 3.9.1) in a JVM reached through py4j (Spark's driver JVM), for the
Java codec, the Java clients, the managed Kafka's launcher build and the differential oracle: the ground floor that
targets/, the campaign engine, the oracles and the commands share.

Stable API (other modules and helpers build on it; change it only with them):

    from conformance import jvm

    jvm.spark_session(master="local[2]")  # the process's SparkSession with kafka-clients.jar and our bridge on
                                          # spark.jars (started on first call, ~4 s; a singleton: later calls
                                          # return it). Stopped by jvm.stop() or at interpreter exit.
    jvm.jvm()                             # py4j JVM view of the driver: jvm().org.apache.kafka.clients.producer
                                          # .KafkaProducer, jvm().kts.bridge.RecordsBridge, ...
    jvm.bridge()                          # the RecordsBridge class (build / read / downConvert / oracle)
    jvm.register_udfs(session)            # the bridge's Java UDFs for Spark SQL (jvm.UDFS: name -> class)
    jvm.stop()                            # stop the session (the next spark_session() starts a new one)
    jvm.kafka_clients_jar()               # Path of the jar in use (KAFKA_CLIENTS_JAR, else the wheel's)
    jvm.bridge_jar()                      # Path of the compiled bridge (compiled once into the cache)
    jvm.JvmUnavailable                    # missing Java / jar / PySpark: str(exc) is one line naming the fix

Which jar: the path in `KAFKA_CLIENTS_JAR` if set, else `pyflink/lib/kafka-clients.jar` of the PyPI wheel
`shigawire-apache-flink-libraries==2.0.0.post1`; it must be kafka-clients 3.9.1. PySpark's own jars provide
lz4-java, snappy-java, zstd-jni and slf4j. py4j notes: iterate a Java Iterable with `.iterator()`; get bytes out
of a ByteBuffer with `jvm().org.apache.kafka.common.utils.Utils.toArray(buffer)`; Python bytes pass as byte[].

The bridge (java/kts/bridge/*.java, our own code) does in Java what would be chatty through py4j: build a batch
from a compact spec, read batches into a compact result, down-convert, and the differential's per-case oracle;
compact.py holds both ends of those formats.
"""

from __future__ import annotations

from conformance.jvm.build import bridge_jar
from conformance.jvm.locate import KAFKA_CLIENTS_VERSION, JvmUnavailable, java_tool, kafka_clients_jar
from conformance.jvm.session import UDFS, bridge, jvm, register_udfs, spark_session, stop

__all__ = [
    "KAFKA_CLIENTS_VERSION",
    "UDFS",
    "JvmUnavailable",
    "bridge",
    "bridge_jar",
    "java_tool",
    "jvm",
    "kafka_clients_jar",
    "register_udfs",
    "spark_session",
    "stop",
]
