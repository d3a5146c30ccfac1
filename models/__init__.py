"""The executable spec of Apache Kafka's message-timestamp contract.

Pure and deterministic: no I/O, no Hypothesis, no Spark, and time is always a parameter. Every
rule cites its ID in docs/rules.md (VAL-4, IDX-8, LO-6, ...).
"""
