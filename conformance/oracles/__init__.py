"""The oracles: an implementation judged otherwise than by the suites' tests, in bulk, each on Spark
(the broker-level differential's tasks on the campaign's runner, conformance/campaign/runner.py;
audit mode in the engine's session; the record layer's job in the JVM bridge's session):

- audit_job.py: audit mode, a topic's ListOffsets answers against the ground truth Spark computes from the topic's
  own records, judged by conformance/judging/ like the suites' checks (`kafka-conformance audit`);
- record_layer/: the model against Apache Kafka's own record layer (kafka-clients in Spark's JVM), batch by batch
  (`kafka-conformance differential`);
- broker_level/: generated programs against a running broker and the model, answer by answer
  (`kafka-conformance broker-differential`).
"""
