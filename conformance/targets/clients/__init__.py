"""Client libraries under test: the client capability (client_library.py), the client rules as pure functions
(client_rules.py), the reference client built on them (model_client.py), one adapter per library (pylibs.py:
what the Python ones share), the wire tap that reads what the broker answered a library (tap.py) and the
`client:<library>` targets (client_target.py). The client suites' checks are in suites/client_helpers.py.
`LIBRARIES` names each adapter as "module:Class", imported only when the target is opened, so a library that is
not installed costs nothing until it is asked for."""

from __future__ import annotations

LIBRARIES: dict[str, str] = {
    # the reference: the spec's client rules on the wire client
    "model": "conformance.targets.clients.model_client:ReferenceClient",
    "kafka-python": "conformance.targets.clients.kafka_python_client:KafkaPythonClient",
    "aiokafka": "conformance.targets.clients.aiokafka_client:AiokafkaClient",
    "confluent-kafka": "conformance.targets.clients.confluent_client:ConfluentClient",  # librdkafka
    # Apache Kafka's Java client (kafka-clients) in Spark's JVM
    "java": "conformance.targets.clients.java_client:JavaClient",
}
