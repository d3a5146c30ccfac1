"""The broker-level differential: generated programs against a running broker and the model, answer by answer
(`kafka-conformance broker-differential`)."""
