"""Client libraries under test (issue 13): the client capability (protocol.py), the client rules as pure functions
(rules.py), the reference client built on them (model.py), one adapter per library (pylibs.py: what the Python
ones share), the wire tap that reads what the broker answered a library (tap.py) and the `client:<library>` targets
(target.py). The client suites' checks are in suites/client_helpers.py. `LIBRARIES` names each adapter as
"module:Class", imported only when the target is opened, so a library that is not installed costs nothing until
it is asked for."""

from __future__ import annotations

LIBRARIES: dict[str, str] = {
    "model": "conformance.clients.model:ReferenceClient",  # the reference: the spec's client rules on the wire client
    "kafka-python": "conformance.clients.kafka_python:KafkaPythonClient",
    "aiokafka": "conformance.clients.aiokafka:AiokafkaClient",
    "confluent-kafka": "conformance.clients.confluent:ConfluentClient",  # librdkafka
    "java": "conformance.clients.java:JavaClient",  # Apache Kafka's Java client (kafka-clients) in Spark's JVM
}
