"""The reference broker: the model, or a seeded mutant, served over the real Kafka protocol on loopback
(`kafka_server`), over one `ServedCluster` (`served`) that the HTTP control plane (conformance/control/) drives too.
`kafka-conformance serve` runs it (conformance/commands/serve.py)."""
