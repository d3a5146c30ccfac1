"""The reference broker: the model, or a seeded mutant, served over the real Kafka protocol on
loopback (`kafka_server`), with an HTTP control plane (`control`) for clocks, leaders and retention, both
over one `ServedCluster` (`state`). `kafka-conformance serve` runs it (`serve`)."""
