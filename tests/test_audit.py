"""Audit mode (conformance.campaign.audit): Spark's ground truth against ListOffsets answers.

The proof that audit mode finds what it must: on the reference model it reports nothing; on every seeded
mutant, every answer that differs from the model's answer over the same records is reported, and no other;
and each mutant whose ListOffsets answers or stored batch maxima contradict its own records is caught.
Needs the campaign extra (pyspark); `tox -e campaign` runs it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.campaign.audit import (
    EARLIEST,
    AuditResult,
    ObservedBatch,
    ObservedLog,
    Workload,
    audit_generated,
    ground_truth,
    targets_for,
    write_records,
    write_report,
)
from conformance.targets import resolve_target

pytest.importorskip("pyspark", reason="the campaign extra (pyspark) is not installed: tox -e campaign")

# Mutants whose answers contradict their own records (the others change validation, produce responses,
# conversion, replication or what retention deletes: their answers agree with what they store).
AUDIT_VISIBLE = {
    "epoch-missing",  # LO.epoch-of-found-batch
    "earliest-returns-zero",  # LO.earliest-is-log-start, after retention moved the log start
    "header-max-last-record",  # VAL.header-max-recomputed and the lookups that trust the stored max
    "header-max-not-recomputed",
    "lat-reads-base-plus-delta",  # records read otherwise than the index stores them
    "lookup-batch-first-offset",
    "lookup-closest-timestamp",
    "lookup-last-match",
    "max-timestamp-batch-last-offset",
    "max-timestamp-last-record",
    "not-found-answers-leo",
    "time-index-entry-next-offset",
    "time-index-non-strict",
}
WORKLOAD = Workload(seed=3)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from conformance.campaign.engine import spark_session

    session = spark_session("local[2]", app="audit tests")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _audit(spark: Any, target: str, out: Path, workload: Workload = WORKLOAD) -> dict[str, AuditResult]:
    impl = resolve_target(target, "kafka-4.0").build()
    try:
        return {r.topic: r for r in audit_generated(spark, impl, workload, out=out, target_name=target)}
    finally:
        impl.close()


def test_ground_truth_matches_a_scan_of_the_records(spark: Any, tmp_path: Path) -> None:
    # LO-2 / LO-6 by brute force over a hand-made log with ties, out-of-order timestamps and a batch whose
    # stored max is wrong; the window query must agree with the scan for every target.
    batches = [
        ObservedBatch(0, 2, 2, "none", "CREATE_TIME", 50, 0, ((0, 30), (1, 50), (2, 10))),
        ObservedBatch(3, 3, 2, "gzip", "CREATE_TIME", 50, 1, ((3, 50),)),
        ObservedBatch(4, 6, 2, "none", "CREATE_TIME", 40, 1, ((4, 70), (5, 20), (6, 70))),
        ObservedBatch(7, 8, 2, "none", "LOG_APPEND_TIME", 90, 2, ((7, 90), (8, 90))),
        ObservedBatch(9, 9, 2, "none", "CREATE_TIME", -1, 2, ((9, -1),)),
    ]
    log = ObservedLog("t", 0, log_start_offset=1, high_watermark=9, batches=batches)
    records = write_records(log, tmp_path / "r.parquet")
    targets = [*range(0, 100, 1), 1000]
    truth = ground_truth(spark, records, targets)
    visible = [(o, ts, e) for b in batches for o, ts in b.records if 1 <= o < 9 for e in [b.leader_epoch]]
    for target in targets:
        hits = [(o, ts, e) for o, ts, e in visible if ts >= target]
        assert truth.first_at_or_after[target] == (hits[0] if hits else None), target
    assert truth.max_timestamp == (90, 7, 2) and truth.max_batches == 1
    assert [(w["base_offset"], w["stored_max"], w["record_max"]) for w in truth.wrong_batch_max] == [(4, 40, 70)]


def test_targets_cover_each_timestamp_and_its_neighbours() -> None:
    assert targets_for([5, 5, 9, -1]) == [0, 4, 5, 6, 8, 9, 10, 1009]
    many = targets_for(range(0, 100_000, 7), most=50)
    assert len(many) <= 50 and many[0] == 0 and many[-1] == 99_995 + 1000


def test_the_model_agrees_with_the_ground_truth(spark: Any, tmp_path: Path) -> None:
    results = _audit(spark, "model", tmp_path)
    assert set(results) == {"audit-ct-3", "audit-lat-3"}
    for result in results.values():
        assert result.disagreements == [], result.disagreements[:3]
        assert result.records > 50 and sum(result.questions.values()) > 200
        assert set(result.verdicts().values()) == {"PASS"}, result.verdicts()
    # Retention moved the CreateTime topic's log start (so EARLIEST was a real question).
    assert results["audit-ct-3"].log_start_offset > 0
    assert results["audit-ct-3"].answers[EARLIEST][1] == results["audit-ct-3"].log_start_offset


def test_every_answer_a_mutant_changes_is_reported(spark: Any, tmp_path: Path) -> None:
    from conformance.adapters.mutants import MUTANTS

    reference = _audit(spark, "model", tmp_path / "model")
    caught = set()
    compared = 0
    for mutant in sorted(MUTANTS):
        for topic, result in _audit(spark, f"mutant:{mutant}", tmp_path / mutant).items():
            if result.disagreements:
                caught.add(mutant)
            expected = reference[topic]
            if result.record_digest != expected.record_digest:
                continue  # other records, other truth: checked against its own records only
            compared += 1
            changed = {t for t, answer in result.answers.items() if answer != expected.answers.get(t)}
            flagged = result.flagged_targets()
            missed, extra = sorted(changed - flagged), sorted(flagged - changed)
            assert not missed, f"{mutant} {topic}: answers changed but not reported: {missed}"
            assert not extra, f"{mutant} {topic}: reported although the model answers the same: {extra}"
    assert compared >= len(MUTANTS)  # most mutants store the model's records: the comparison above is real
    assert caught >= AUDIT_VISIBLE, f"not caught: {sorted(AUDIT_VISIBLE - caught)}"


def test_the_report_names_each_disagreement_with_its_records(spark: Any, tmp_path: Path) -> None:
    results = list(_audit(spark, "mutant:lookup-last-match", tmp_path).values())
    json_path, md_path = write_report(results, tmp_path / "report")
    text = md_path.read_text()
    assert "| `LO.first-ge-target` | FAIL |" in text
    # The evidence shows the stored records: offsets with their timestamps, the batch and its stored max.
    assert "offset:timestamp" in text and "stored max" in text and "expected: offset" in text
    assert '"LO.first-ge-target": "FAIL"' in json_path.read_text()
