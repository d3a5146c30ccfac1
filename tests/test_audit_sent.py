"""Audit mode knows what it sent (conformance.oracles.audit_job.Sent): `populate` records each batch's MaxTimestamp as
the producer wrote it and its record timestamps, and the stored-max check (VAL-13) gives the producer's MaxTimestamp
to its violation as the fact "sent", so an expectations entry `observed_is = "sent"` (a header stored as sent:
Tansu, noida, librdkafka's mock) covers the departure in audit mode as it does in the suites. A topic the audit did
not write (`audit --topic`) has no such fact, and such an entry covers nothing there.

The first tests need no Spark: the stored-max judgement is fed the wrong batches a scan of the records finds (what
`ground_truth`'s VAL-13 query computes). The e2e ones run the whole audit on Spark local[2].
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.judging.expectations import Expectation, load_expectations
from conformance.judging.verdicts import Verdict
from conformance.oracles.audit_job import (
    Disagreement,
    ObservedLog,
    Sent,
    Workload,
    populate,
    read_log,
    stored_max_disagreements,
)
from conformance.targets.kinds.implementation import Implementation
from conformance.targets.registry import resolve_target
from models.constants import TimestampType

REPO = Path(__file__).resolve().parents[1]
CLAUSE = "VAL.header-max-recomputed"
STORES_AS_SENT = "mutant:header-max-not-recomputed"  # trusts and stores the producer's MaxTimestamp (VAL-13)
STORES_LAST = "mutant:header-max-last-record"  # stores the last record's timestamp: neither the max nor as sent
WORKLOAD = Workload(seed=5, batches=40)
AS_SENT = f'clause = "{CLAUSE}"\nobservable = "batch.max-timestamp"\nobserved_is = "sent"'
OTHER_FACT = f'clause = "{CLAUSE}"\nobservable = "batch.max-timestamp"\nobserved_is = "last-batch-base-plus-one"'


def _entries(tmp_path: Path, *tables: str) -> tuple[Expectation, ...]:
    """Entries written as a user writes them (TOML) and loaded as the audit loads them."""
    path = tmp_path / "expectations.toml"
    body = "".join(f'[[expected]]\n{t}\nreason = "seeded"\nlink = "none: a test"\n\n' for t in tables)
    path.write_text(body, encoding="utf-8")
    return load_expectations(path)


def _build(target: str) -> Implementation:
    return resolve_target(target, "kafka-4.0").build()


def _written(target: str, topic: str = "sent-ct") -> tuple[Sent, ObservedLog]:
    """The workload written into a CreateTime topic of `target`, and the topic read back."""
    impl = _build(target)
    try:
        sent = populate(impl, topic, WORKLOAD, timestamp_type=TimestampType.CREATE_TIME)
        return sent, read_log(impl, topic, fetch_version=impl.profile.fetch_versions[1])
    finally:
        impl.close()


def _wrong_batch_max(log: ObservedLog) -> list[dict[str, Any]]:
    """By a scan: the CreateTime batches whose stored max is not their largest record timestamp."""
    out = []
    for batch in log.batches:
        record_max = max(ts for _, ts in batch.records)
        create_time = batch.timestamp_type == TimestampType.CREATE_TIME.name and batch.magic >= 1
        if create_time and batch.max_timestamp != record_max:
            out.append({"base_offset": batch.base_offset, "last_offset": batch.last_offset,
                        "stored_max": batch.max_timestamp, "record_max": record_max})  # fmt: skip
    return out


def _verdict(disagreements: list[Disagreement], entries: tuple[Expectation, ...]) -> Verdict:
    """The clause's verdict as AuditResult.verdicts gives it: FAIL if any disagreement is not covered."""
    assert disagreements
    return Verdict.FAIL if any(d.verdict(entries) is Verdict.FAIL for d in disagreements) else Verdict.KNOWN


def test_populate_records_each_batch_as_sent_and_where_its_produce_answer_placed_it() -> None:
    sent, log = _written("model")
    assert sent.topic == "sent-ct" and sent.counts == {"accepted": len(sent.batches), "rejected": 0}
    lying = [b for b in sent.batches if b.max_timestamp != max(b.timestamps)]
    assert lying, "the workload sends headers whose MaxTimestamp lies"
    for batch in log.batches:
        as_sent = sent.batch_at(batch.base_offset, batch.last_offset)
        assert as_sent is not None, batch
        assert as_sent.timestamps == tuple(ts for _, ts in batch.records)  # CON-1: CreateTime reads as written
        assert batch.max_timestamp == max(as_sent.timestamps)  # the model recomputes every header (VAL-13)
    assert sent.batch_at(log.batches[0].base_offset, log.batches[0].last_offset + 1) is None  # not that batch
    assert _wrong_batch_max(log) == []
    assert stored_max_disagreements(log, [], sent) == []


def test_a_header_stored_as_sent_is_covered_by_an_observed_is_sent_entry(tmp_path: Path) -> None:
    sent, log = _written(STORES_AS_SENT)
    found = stored_max_disagreements(log, _wrong_batch_max(log), sent)
    assert found and {d.clause for d in found} == {CLAUSE}
    for d in found:
        (violation,) = d.violations
        seen = violation.observation
        assert seen.facts == {"sent": seen.observed} and seen.observed != seen.expected
        assert "as sent: MaxTimestamp" in d.evidence and "sent = " in d.describe(())
    assert _verdict(found, _entries(tmp_path, AS_SENT)) is Verdict.KNOWN
    # Another matcher does not match, nor does no entry.
    assert _verdict(found, _entries(tmp_path, OTHER_FACT)) is Verdict.FAIL
    assert _verdict(found, ()) is Verdict.FAIL


def test_the_fact_is_the_value_sent_not_just_its_presence(tmp_path: Path) -> None:
    # header-max-last-record stores neither the max nor the header as sent: the entry must not cover it.
    sent, log = _written(STORES_LAST)
    found = stored_max_disagreements(log, _wrong_batch_max(log), sent)
    assert any(v.observation.facts["sent"] != v.observation.observed for d in found for v in d.violations)
    assert _verdict(found, _entries(tmp_path, AS_SENT)) is Verdict.FAIL


def test_a_topic_the_audit_did_not_write_has_no_sent_fact(tmp_path: Path) -> None:
    # `audit --topic`: nothing was sent by the suite, so `observed_is = "sent"` covers nothing (as before).
    _, log = _written(STORES_AS_SENT)
    found = stored_max_disagreements(log, _wrong_batch_max(log), None)
    assert found and all(v.observation.facts == {} for d in found for v in d.violations)
    assert "as sent" not in found[0].evidence
    assert _verdict(found, _entries(tmp_path, AS_SENT)) is Verdict.FAIL


@pytest.mark.parametrize("shipped", ["tansu.toml", "noida.toml", "rdkafka-mock.toml"])
def test_the_shipped_header_stored_as_sent_entry_applies_in_audit_mode(shipped: str) -> None:
    # The brokers' own files: their entry for the lying header stored as sent covers the audit's departure too,
    # so the campaign matrix does not call FAIL what the same target's expectations call KNOWN.
    entries = load_expectations(REPO / "suites" / "expectations" / shipped)
    sent, log = _written(STORES_AS_SENT)
    found = stored_max_disagreements(log, _wrong_batch_max(log), sent)
    assert _verdict(found, entries) is Verdict.KNOWN
    (covering,) = {e.index for d in found for v in d.violations for e in entries if e.covers(v, None)} & {
        e.index for e in entries if e.observed_is == "sent"
    }
    assert covering


# ------------------------------------------------------------------------------------ on Spark (e2e)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark", reason="the campaign extra (pyspark) is not installed: tox -e campaign")
    from conformance.campaign.engine import spark_session

    session = spark_session("local[2]", app="audit sent tests")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.mark.e2e
def test_the_audit_of_the_model_knows_what_it_sent_and_finds_nothing(spark: Any, tmp_path: Path) -> None:
    from conformance.oracles.audit_job import audit_generated

    impl = _build("model")
    try:
        results = audit_generated(spark, impl, WORKLOAD, out=tmp_path, expectations=_entries(tmp_path, AS_SENT))
    finally:
        impl.close()
    for result in results:
        assert result.sent_batches > 0 and result.disagreements == []
        assert result.verdicts()[CLAUSE] is Verdict.PASS


@pytest.mark.e2e
def test_the_audit_matches_observed_is_sent_and_its_rows_say_known(spark: Any, tmp_path: Path) -> None:
    from conformance.oracles.audit_job import AuditTask, audit_generated, audit_partition, audit_rows, write_report

    impl = _build(STORES_AS_SENT)
    try:
        results = audit_generated(spark, impl, WORKLOAD, out=tmp_path, target_name=STORES_AS_SENT,
                                  expectations=_entries(tmp_path, AS_SENT))  # fmt: skip
        ct = next(r for r in results if r.topic.startswith("audit-ct"))
        # The same topic read as a user's (`audit --topic`): nothing known of what was sent.
        unsent = audit_partition(spark, impl, ct.topic, out=tmp_path / "topic", expectations=ct.expectations)
    finally:
        impl.close()
    assert ct.verdicts()[CLAUSE] is Verdict.KNOWN
    assert dataclasses.replace(ct, expectations=_entries(tmp_path, OTHER_FACT)).verdicts()[CLAUSE] is Verdict.FAIL
    assert unsent.sent_batches == 0 and unsent.verdicts()[CLAUSE] is Verdict.FAIL
    rows = audit_rows([ct], AuditTask(STORES_AS_SENT, "kafka-4.0"), campaign_id="c", seed=1)
    (row,) = [r for r in rows if r["clause"] == CLAUSE]
    assert row["verdict"] == Verdict.KNOWN.value and "sent = " in row["counterexample"]
    _, md = write_report([ct, unsent], tmp_path / "report")
    text = md.read_text(encoding="utf-8")
    assert f"| `{CLAUSE}` | KNOWN |" in text and f"| `{CLAUSE}` | FAIL |" in text
    assert "The audit did not write this topic" in text
