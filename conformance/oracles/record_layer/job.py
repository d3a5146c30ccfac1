"""The differential job: every case through the model and through Kafka's record layer, judged, one row each.

Three steps per case, each a column of one Spark DataFrame over `spark.range(total)`:

1. `request` (Python UDF, executors): generate the case from (seed, magic, index), let the model build, encode
   and down-convert it, and pack the bridge's request (conformance.targets.libraries.java.compact).
2. `answer` (the Java UDF kts_records_oracle, in the executors' JVMs): Kafka builds the batch, reads its own
   bytes and the model's, down-converts its batch and reads both conversions (kts.bridge.RecordsBridge.oracle).
3. `row` (Python UDF, executors): the comparison (compare.compare_case) and its classification against the
   explained differences (explained.classify).

The rows are written as Parquet (`DIR/cases/`) by the executors as partitions finish; the summary is Spark SQL
over those files. Nothing is collected into one Python list, so the job scales with executors unchanged: a
cluster master runs the same plan. `run_inline` does the same work in this process without Spark jobs (the
bridge through py4j in the driver's JVM, rows written with pyarrow): for replays and the speed-up figure.
"""

from __future__ import annotations

import json
import math
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from conformance.oracles.record_layer.case_compare import Difference, compare_case
from conformance.oracles.record_layer.cases import Case, generate_case
from conformance.oracles.record_layer.explained import AGREE, Explanation, classify
from conformance.oracles.record_layer.model_side import Model, ModelRefused, model_named
from conformance.targets.libraries.java.compact import (
    Conversion,
    decode_oracle_response,
    encode_oracle_request,
    encode_spec,
)

CASES_DIR = "cases"
ROW_FIELDS: tuple[tuple[str, str], ...] = (
    ("case_id", "string"),
    ("magic", "int"),
    ("idx", "long"),
    ("codec", "string"),
    ("timestamp_type", "string"),
    ("records", "int"),
    ("style", "string"),
    ("outcome", "string"),
    ("explained_by", "array<string>"),
    ("unexplained", "array<string>"),  # "check field" of each difference no entry explains
    ("differences", "string"),  # JSON list of every difference (empty when the sides agree)
    ("checks", "array<string>"),  # the checks made (compare.compare_case)
)


@dataclass(frozen=True)
class Plan:
    seed: int
    batches: int  # cases per magic
    magics: tuple[int, ...] = (0, 1, 2)
    model_fault: str | None = None

    @property
    def total(self) -> int:
        return self.batches * len(self.magics)

    def case_of(self, row_id: int) -> Case:
        # Magics interleave so that every partition holds a mix (v2 cases, with two conversions, cost more).
        magic = self.magics[row_id % len(self.magics)]
        return generate_case(self.seed, magic, row_id // len(self.magics))


def oracle_request(case: Case, model: Model) -> bytes:
    """Step 1: the bridge's request for `case`: the spec, the model's stored bytes, its conversions' bytes."""
    stored = model.stored(case.request, case.stored)
    model_bytes = None if isinstance(stored, ModelRefused) else model.encode(stored)
    conversions = []
    for to_magic, first_offset in case.conversions:
        converted: bytes | ModelRefused | None = None
        if not isinstance(stored, ModelRefused):
            own = model.convert(stored, to_magic, first_offset)
            converted = own if isinstance(own, ModelRefused) else model.encode(own)
        conversions.append(Conversion(to_magic, first_offset, converted if isinstance(converted, bytes) else None))
    return encode_oracle_request(
        encode_spec(case.request),
        model_bytes if isinstance(model_bytes, bytes) else None,
        conversions,
    )


def judge(case: Case, answer: bytes | None, model: Model, explanations: Sequence[Explanation]) -> tuple[Any, ...]:
    """Step 3: the case's row (ROW_FIELDS order). A failure of our own (an answer that does not parse, an
    exception in the comparison) is an unexplained difference of check `harness`, never a lost row."""
    ran: list[str] = []
    try:
        differences = compare_case(case, decode_oracle_response(answer or b"", len(case.conversions)), model, ran)
    except Exception as exc:  # our bug, reported in the row rather than failing the task
        where = traceback.extract_tb(exc.__traceback__)[-1]
        text = f"{type(exc).__name__}: {exc}"
        differences = [Difference("harness", "error", text, f"{where.filename}:{where.lineno}")]
    outcome, used, left = classify(case, differences, explanations)
    request = case.request
    return (
        case.case_id,
        case.magic,
        case.index,
        request.codec.name.lower(),
        request.timestamp_type.name.lower().replace("_", "-"),
        len(request.records),
        case.style,
        outcome,
        list(used),
        sorted({f"{d.check} {d.field}" for d in left}),
        "" if outcome == AGREE else json.dumps([asdict(d) for d in differences]),
        ran,
    )


def _spark_schema() -> str:
    return ", ".join(f"{name} {kind}" for name, kind in ROW_FIELDS)


def _request_function(plan: Plan) -> Callable[[int], bytes]:
    def request(row_id: int) -> bytes:
        return oracle_request(plan.case_of(row_id), model_named(plan.model_fault))

    return request


def _judge_function(plan: Plan, explanations: tuple[Explanation, ...]) -> Callable[[int, bytes | None], Any]:
    def row(row_id: int, answer: bytes | None) -> tuple[Any, ...]:
        return judge(plan.case_of(row_id), answer, model_named(plan.model_fault), explanations)

    return row


def partitions_for(total: int, parallelism: int) -> int:
    """Enough tasks to keep every slot busy and each task small (about 500 cases), so a lost task costs little."""
    return max(1, min(total, max(4 * parallelism, math.ceil(total / 500))))


def run_spark(spark: Any, plan: Plan, explanations: tuple[Explanation, ...], out: Path) -> Path:
    """The job on `spark` (its master decides where the tasks run); returns the rows' directory."""
    from pyspark.sql.functions import col, expr, udf
    from pyspark.sql.types import BinaryType

    from conformance.jvm import register_udfs

    register_udfs(spark)
    request = udf(_request_function(plan), BinaryType(), useArrow=False)
    row = udf(_judge_function(plan, explanations), _spark_schema(), useArrow=False)
    parts = partitions_for(plan.total, int(spark.sparkContext.defaultParallelism))
    target = out / CASES_DIR
    (
        spark.range(0, plan.total, numPartitions=parts)
        .select(col("id"), request(col("id")).alias("request"))
        .select(col("id"), expr("kts_records_oracle(request)").alias("answer"))
        .select(row(col("id"), col("answer")).alias("row"))
        .select("row.*")
        .write.mode("overwrite")
        .parquet(str(target))
    )
    return target


def inline_answer(case: Case, model: Model) -> bytes:
    """Kafka's answer for one case through py4j in the driver's JVM (no Spark job)."""
    from conformance.jvm import bridge

    return bytes(bridge().oracle(oracle_request(case, model)))


def run_inline(plan: Plan, explanations: tuple[Explanation, ...], out: Path, chunk: int = 2000) -> Path:
    """The same work as `run_spark` in this process: one case after another, rows written in chunks."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = out / CASES_DIR
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob("*.parquet"):
        stale.unlink()
    schema = _arrow_schema(pa)
    model = model_named(plan.model_fault)
    with pq.ParquetWriter(target / "part-inline.parquet", schema) as writer:
        for rows in _chunks((judge(c, inline_answer(c, model), model, explanations) for c in _cases(plan)), chunk):
            columns = list(zip(*rows, strict=True))
            writer.write_table(pa.table({n: list(v) for (n, _), v in zip(ROW_FIELDS, columns, strict=True)}, schema))
    return target


def _cases(plan: Plan) -> Iterator[Case]:
    for row_id in range(plan.total):
        yield plan.case_of(row_id)


def _chunks(rows: Iterator[tuple[Any, ...]], size: int) -> Iterator[list[tuple[Any, ...]]]:
    block: list[tuple[Any, ...]] = []
    for r in rows:
        block.append(r)
        if len(block) >= size:
            yield block
            block = []
    if block:
        yield block


def _arrow_schema(pa: Any) -> Any:
    kinds = {"string": pa.string(), "int": pa.int32(), "long": pa.int64(), "array<string>": pa.list_(pa.string())}
    return pa.schema([(name, kinds[kind]) for name, kind in ROW_FIELDS])
