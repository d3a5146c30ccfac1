"""The differential oracle: the model against Apache Kafka's own record layer (kafka-clients 3.9.1 in
Spark's JVM), on generated batches of every magic, codec and timestamp type, compared field by field both ways
(Kafka builds, the model reads; the model builds, Kafka reads; both down-convert), as a Spark job.

- cases.py: the generated cases (a pure function of seed, magic and index);
- model_side.py: the model's side (and seeded model faults, to show the oracle can fail);
- case_compare.py: the comparison, one named check per step;
- explained.py: the explained differences (suites/expectations/differential.json) and a case's outcome;
- job.py: the Spark job (and the same work inline); report.py: the outputs; reproduce.py: replay, shrink;
- conformance/commands/differential.py: `kafka-conformance differential`.

`check(request, stored=..., conversions=...)` runs one hand-written case (the reproducers in the report use it).
"""

from __future__ import annotations

from conformance.oracles.record_layer.reproduce import check

__all__ = ["check"]
