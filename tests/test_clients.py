"""Clients as implementations (issue 13): the client rules (conformance/targets/kinds/client_rules.py), the client
checks of the
client suites (suites/client_helpers.py), the `client:` targets, the wire tap, a witness for every client mutant,
and a client that is never blamed for a broker's fault.

The tests that need a broker share one reference broker serving the model (and one serving a broker mutant) per
module; the one that runs the client suites in a pytest child is marked e2e.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.errors import TargetError
from conformance.faults import MUTANTS
from conformance.faults.client_faults import CLIENT_FAULTS, client_fault
from conformance.judging.capabilities import Capability
from conformance.judging.checks import CheckRecord, ClauseViolation, recording
from conformance.judging.expectations import Expectation, load_expectations
from conformance.judging.verdicts import Verdict
from conformance.targets.kinds import client_rules as rules
from conformance.targets.kinds.client_library import (
    BATCH_FAILED,
    ClientFailed,
    ClientRefused,
    OffsetAndTimestamp,
    Outgoing,
    RecordMetadata,
    SendFailure,
    java_refusal_text,
)
from conformance.targets.kinds.client_target import ClientFactory
from conformance.targets.kinds.implementation import Kind
from conformance.targets.libraries import LIBRARIES
from conformance.targets.libraries.model.model_broker import ModelFactory
from conformance.targets.libraries.model.model_client import ReferenceClient
from conformance.targets.registry import check_target, open_target, parse_target, resolve_target, target_kind
from conformance.targets.routes.wire_adapter.tap import TappedLookup, TappedProduce
from conformance.wire.client import ListOffsetsResult, ProduceResult
from models.config import TopicConfig
from models.constants import Codec, ErrorCode, SpecialTarget, TimestampType
from models.records import AnyBatch, RecordSpec, build_legacy, build_v2, with_base_offset
from suites.client_helpers import (
    check_consumed,
    check_lookup,
    check_refusal,
    check_seek,
    check_sent,
    produce_response,
)
from suites.helpers import check_produce, consumer_view_clause

ROOT = Path(__file__).resolve().parents[1]
NOW = 1_790_000_000_000
CLIENT_MUTANTS = sorted(m for m, mutant in MUTANTS.items() if mutant.kind is Kind.CLIENT)


# ------------------------------------------------------------------------------------ the rules


def test_record_metadata_timestamp_is_log_append_time_unless_minus_one() -> None:
    assert rules.metadata_timestamp(NOW, NOW - 5) == NOW
    assert rules.metadata_timestamp(-1, NOW - 5) == NOW - 5
    assert rules.metadata_timestamp(None, NOW - 5) == NOW - 5  # Produce v0/v1 carry no log_append_time


def test_record_failures_split_as_the_java_sender_does() -> None:
    code = ErrorCode.INVALID_TIMESTAMP
    assert [f.kind for f in rules.record_failures(code, {}, None, 2)] == ["INVALID_TIMESTAMP"] * 2
    one = rules.record_failures(code, {1: "out of range"}, "top", 3)
    assert [f.kind for f in one] == [BATCH_FAILED, "INVALID_TIMESTAMP", BATCH_FAILED]
    assert one[1].message == "out of range" and one[0].message == rules.BATCH_FAILED_TEXT
    several = rules.record_failures(code, {0: None, 2: "b"}, "top", 3)
    assert [f.kind for f in several] == ["INVALID_RECORD", BATCH_FAILED, "INVALID_RECORD"]
    assert several[0].message == "top"  # a listed record without a message takes the answer's


def test_lookup_answer_is_null_for_minus_one_and_error_43() -> None:
    assert rules.lookup_answer(0, -1, -1) is None
    assert rules.lookup_answer(int(ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT), 5, 9) is None
    assert rules.lookup_answer(0, 3, NOW) == OffsetAndTimestamp(3, NOW)
    assert rules.lookup_min_version(0) == 1 and rules.lookup_min_version(1) == 2


# ------------------------------------------------------------------------------------ the client checks


def _tapped(batches: tuple[object, ...], *, error: int = 0, base: int = 10, lat: int | None = -1,
            record_errors: tuple[tuple[int, str | None], ...] = ()) -> TappedProduce:
    return TappedProduce("t", 0, 9, batches, error, base, lat, 0, record_errors, None, 0.0)  # type: ignore[arg-type]


def _raises(clause: str, call: object, *args: object, **kwargs: object) -> ClauseViolation:
    with pytest.raises(ClauseViolation) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    assert caught.value.clause_id == clause
    return caught.value


def test_record_metadata_is_judged_against_the_tapped_answer_not_the_model() -> None:
    batch = build_v2([RecordSpec(NOW - 2, b"a", b"v"), RecordSpec(NOW - 1, b"b", b"v")])
    records = [Outgoing(b"a", b"v", NOW - 2), Outgoing(b"b", b"v", None)]
    # CreateTime answer (-1): each record's own create time as the producer wrote it, offsets from the base.
    check_sent(records, [RecordMetadata(10, NOW - 2), RecordMetadata(11, NOW - 1)], [_tapped((batch,))], "ctx")
    # The broker answered a log_append_time: that is what a client reports, whatever the model would stamp.
    check_sent(records, [RecordMetadata(10, NOW), RecordMetadata(11, NOW)], [_tapped((batch,), lat=NOW)], "ctx")
    wrong = _raises("VAL.record-metadata-timestamp", check_sent, records,
                    [RecordMetadata(10, NOW - 2), RecordMetadata(11, NOW - 2)], [_tapped((batch,))], "ctx")
    assert wrong.observation.facts["batch-first-create-time"] == NOW - 2 and wrong.observation.facts["sent"] == NOW - 1
    _raises("VAL.record-metadata-timestamp", check_sent, records[:1], [RecordMetadata(10, NOW - 2)], [], "ctx")


def test_rejected_batch_failures_are_a_should() -> None:
    batch = build_v2([RecordSpec(NOW, b"a", b"v"), RecordSpec(NOW - 10**9, b"b", b"v")])
    answer = _tapped((batch,), error=int(ErrorCode.INVALID_TIMESTAMP), base=-1, record_errors=((1, "bad"),))
    records = [Outgoing(b"a", b"v", NOW), Outgoing(b"b", b"v", NOW - 10**9)]
    check_sent(records, [SendFailure(BATCH_FAILED), SendFailure("INVALID_TIMESTAMP")], [answer], "ctx")
    record = CheckRecord()
    with recording(record):
        check_sent(records, [SendFailure("INVALID_TIMESTAMP")] * 2, [answer], "ctx")
    assert [v.clause_id for v in record.lenient] == ["VAL.producer-future-exceptions"]  # NON-STRICT, not raised


def _lookup(target: int, offset: int, timestamp: int | None, *, version: int = 9) -> TappedLookup:
    return TappedLookup("t", 0, version, target, 0, 0, offset, timestamp, 0, 0.0)


def test_lookups_refusals_and_versions() -> None:
    check_lookup(OffsetAndTimestamp(3, NOW), [_lookup(NOW, 3, NOW)], NOW, "ctx")
    check_lookup(OffsetAndTimestamp(3, None), [_lookup(NOW, 3, NOW)], NOW, "ctx")  # an API reporting no timestamp
    check_lookup(None, [_lookup(NOW, -1, -1)], NOW, "ctx")
    _raises("LO.client-null-when-not-found", check_lookup, OffsetAndTimestamp(-1, -1), [_lookup(NOW, -1, -1)], NOW,
            "ctx")
    _raises("LO.client-offsets-for-times-answer", check_lookup, OffsetAndTimestamp(3, NOW - 1),
            [_lookup(NOW - 1, 3, NOW)], NOW - 1, "ctx")
    _raises("LO.client-offsets-for-times-answer", check_lookup, None, [], NOW, "ctx")  # answered without asking
    record = CheckRecord()
    with recording(record):
        check_lookup(OffsetAndTimestamp(3, NOW), [_lookup(NOW, 3, NOW, version=0)], NOW, "ctx")
    assert [v.clause_id for v in record.lenient] == ["LO.client-min-version"]
    refusal = ClientRefused("IllegalArgumentException", java_refusal_text("t", 0, -1))
    check_refusal(refusal, [], topic="t", target=-1, context="ctx")
    _raises("LO.client-rejects-negative-target", check_refusal, OffsetAndTimestamp(7, -1), [_lookup(-1, 7, -1)],
            topic="t", target=-1, context="ctx")
    _raises("LO.client-rejects-negative-target", check_refusal, ClientRefused("ValueError", "no"), [], topic="t",
            target=-1, context="ctx")


def _lookup_at(target: int, offset: int, timestamp: int | None, at: float, error: int = 0) -> TappedLookup:
    return TappedLookup("t", 0, 9, target, 0, error, offset, timestamp, 0, at)


def _covered(path: str, violation: ClauseViolation, test: str) -> bool:
    return any(e.covers(violation, f"suites/test_client_lookups.py::{test}") for e in load_expectations(path))


def test_lookup_entries_cover_each_librarys_reading_and_nothing_else() -> None:
    """FACTS "requested-timestamp" (kafka-go) and "end-offset" (franz-go): a by-time answer reported with the target
    as its timestamp, offset -1 included; nothing found reported as the end offset the library asked next. The same
    answers one off are new departures."""
    kafka_go, franz_go = "suites/expectations/client-kafka-go.toml", "suites/expectations/client-franz-go.toml"
    found, missing = _lookup_at(NOW - 5, 3, NOW - 4, 1.0), _lookup_at(NOW, -1, -1, 1.0)
    latest = _lookup_at(-1, 9, -1, 2.0)
    for answer, covered in ((OffsetAndTimestamp(3, NOW - 5), True), (OffsetAndTimestamp(3, NOW - 6), False)):
        wrong = _raises("LO.client-offsets-for-times-answer", check_lookup, answer, [found], NOW - 5, "ctx")
        assert _covered(kafka_go, wrong, "test_offsets_for_times") is covered
    for answer, covered in ((OffsetAndTimestamp(-1, NOW), True), (OffsetAndTimestamp(-1, NOW - 1), False)):
        wrong = _raises("LO.client-null-when-not-found", check_lookup, answer, [missing], NOW, "ctx")
        assert _covered(kafka_go, wrong, "test_offsets_for_times") is covered
    for answer, covered in ((OffsetAndTimestamp(9, -1), True), (OffsetAndTimestamp(8, -1), False)):
        wrong = _raises("LO.client-null-when-not-found", check_lookup, answer, [missing, latest], NOW, "ctx")
        assert _covered(franz_go, wrong, "test_offsets_for_times") is covered
    # Without the LATEST request the end offset is not known: not covered.
    wrong = _raises("LO.client-null-when-not-found", check_lookup, OffsetAndTimestamp(9, -1), [missing], NOW, "ctx")
    assert not _covered(franz_go, wrong, "test_offsets_for_times")


def test_kafkajs_not_found_entry_covers_the_high_watermark_it_asked_first_and_nothing_else() -> None:
    """FACTS "end-offset-asked-first": KafkaJS asks LATEST, then the by-time lookup, and answers the high watermark
    (an offset alone) where the broker found nothing; another offset, or an end offset it never asked, is new."""
    kafkajs = "suites/expectations/client-kafkajs.toml"
    latest, missing = _lookup_at(-1, 9, -1, 1.0), _lookup_at(NOW, -1, -1, 2.0)
    for answer, covered in ((OffsetAndTimestamp(9, None), True), (OffsetAndTimestamp(8, None), False)):
        wrong = _raises("LO.client-null-when-not-found", check_lookup, answer, [latest, missing], NOW, "ctx")
        assert _covered(kafkajs, wrong, "test_offsets_for_times") is covered
    wrong = _raises("LO.client-null-when-not-found", check_lookup, OffsetAndTimestamp(9, None), [missing], NOW, "ctx")
    assert not _covered(kafkajs, wrong, "test_offsets_for_times")


@pytest.mark.parametrize(
    ("target", "kafka_go", "franz_go"),
    [(-1, None, OffsetAndTimestamp(9, -1)), (-3, OffsetAndTimestamp(9, -1), OffsetAndTimestamp(9, NOW))],
)
def test_negative_target_entries_cover_the_target_sent_as_given(
    target: int, kafka_go: OffsetAndTimestamp | None, franz_go: OffsetAndTimestamp
) -> None:
    """FACTS "sent-as-given" (franz-go: the broker's answer as a by-time answer), "sent-as-given-requested-timestamp"
    (kafka-go: -1 and -2 filed as its LastOffset / FirstOffset, others with no time) and the failure with the broker's
    error; a refusal-less answer the broker did not give is a new departure."""
    tapped = [_lookup_at(target, 9, NOW if target == -3 else -1, 1.0)]
    entries = {"kafka-go": kafka_go, "franz-go": franz_go}
    for library, answer in entries.items():
        path = f"suites/expectations/client-{library}.toml"
        wrong = _raises("LO.client-rejects-negative-target", check_refusal, answer, tapped, topic="t", target=target,
                        context="ctx")
        assert _covered(path, wrong, "test_negative_target_refused")
        other = _raises("LO.client-rejects-negative-target", check_refusal, OffsetAndTimestamp(8, -1), tapped,
                        topic="t", target=target, context="ctx")
        assert not _covered(path, other, "test_negative_target_refused")
    unsupported = [_lookup_at(-7, -1, -1, 1.0, error=int(ErrorCode.UNSUPPORTED_VERSION))]
    for failure, covered in (("UNSUPPORTED_VERSION: the broker says no", True), ("TimeoutError: no answer", False)):
        wrong = _raises("LO.client-rejects-negative-target", check_refusal, ClientFailed(failure), unsupported,
                        topic="t", target=-7, context="ctx")
        assert _covered("suites/expectations/client-franz-go.toml", wrong, "test_negative_target_refused") is covered


def test_rejected_batch_entries_cover_the_partition_error_on_every_record() -> None:
    """FACTS "partition-error": kafka-go, franz-go and Sarama fail every record of a batch rejected with
    record_errors with the partition's error; a generic failure of a listed record is a new departure."""
    batch = build_v2([RecordSpec(NOW, b"a", b"v"), RecordSpec(NOW - 10**9, b"b", b"v")])
    answer = _tapped((batch,), error=int(ErrorCode.INVALID_TIMESTAMP), base=-1, record_errors=((1, "bad"),))
    records = [Outgoing(b"a", b"v", NOW), Outgoing(b"b", b"v", NOW - 10**9)]
    nodeid = "suites/test_client_produce.py::test_rejected_batch_failures"
    for outcomes, covered in (([SendFailure("INVALID_TIMESTAMP")] * 2, True),
                              ([SendFailure("INVALID_TIMESTAMP"), SendFailure(BATCH_FAILED)], False)):
        record = CheckRecord()
        with recording(record):
            check_sent(records, outcomes, [answer], "ctx")
        (violation,) = record.lenient
        for library in ("kafka-go", "franz-go", "sarama"):
            entries = load_expectations(f"suites/expectations/client-{library}.toml")
            assert any(e.covers(violation, nodeid) for e in entries) is covered, library


@pytest.mark.parametrize("library", ["kafka-go", "franz-go", "sarama"])
def test_lz4_v0_entries_cover_a_failure_that_leaves_an_lz4_batch_unread(library: str) -> None:
    """FACTS "unreadable-lz4": a consumer failing on a topic whose v0 LZ4 batch it did not deliver is covered, for the
    batches it failed with (one before it, as Sarama's whole-fetch decoding leaves); the same failure on a topic with
    no LZ4 batch, or a wrong record where nothing failed, is a new departure. In every test that consumes v0 LZ4 sets
    (test_consumer_codecs writes one in every kafka-2.8 run)."""
    entries = load_expectations(f"suites/expectations/client-{library}.toml")
    for nodeid in ("suites/test_client_consume.py::test_consumer_records",
                   "suites/test_client_consume.py::test_consumer_codecs"):
        _lz4_v0_entries_cover(entries, nodeid)


def _lz4_v0_entries_cover(entries: tuple[Expectation, ...], nodeid: str) -> None:
    snappy, lz4 = (build_legacy([RecordSpec(-1, b"k%d" % i, b"v")], magic=0, codec=codec)[0]
                   for i, codec in enumerate((Codec.SNAPPY, Codec.LZ4)))
    stored = (snappy, with_base_offset(lz4, 1))
    for batches, covered in ((stored, True), (stored[:1], False)):
        record = CheckRecord(cover=lambda _: 0)  # every violation kept, none raised
        with recording(record):
            check_consumed((), batches, start=0, until=len(batches), clause_of=consumer_view_clause, context="ctx",
                           typed=False, failure="lz4: invalid header checksum")
        violations = [v for v, _ in record.covered]
        assert len(violations) == 2 * len(batches)  # timestamps and payloads of each batch
        assert all(any(e.covers(v, nodeid) for e in entries) is covered for v in violations)
    wrong = (replace(snappy.records()[0], timestamp=0, timestamp_type=None),)
    violation = _raises("CON.v0-no-timestamp", check_consumed, wrong, stored[:1], start=0, until=1,
                        clause_of=consumer_view_clause, context="ctx", typed=False)
    assert not any(e.covers(violation, nodeid) for e in entries)


@pytest.mark.parametrize(
    ("stamps", "sarama_read"),
    [
        # A delta of about -9.2e18 ms: x 10^6 wraps to +1790000000808 ms, and the base plus that wraps past Long.MAX.
        ((9223372036854775000, NOW), (9223372036854775000, -9223370246854775808)),
        # A negative base is Go's zero time (year 1): the record at the base reads as no time, the next year 1 + delta.
        ((-1, NOW), (-1, -62_135_596_800_000 + NOW + 1)),
    ],
)
def test_sarama_delta_entry_covers_the_delta_added_as_a_go_duration(
    stamps: tuple[int, int], sarama_read: tuple[int, int]
) -> None:
    """FACTS "delta-nanosecond-wrapped": Sarama's reading of a CreateTime v2 batch (base as a time.Time, delta as a
    time.Duration) is covered by its entry; the same records 1 ms off are a new departure."""
    entries = load_expectations("suites/expectations/client-sarama.toml")
    nodeid = "suites/test_client_consume.py::test_consumer_records"
    stored = (build_v2([RecordSpec(t, b"k%d" % i, b"v") for i, t in enumerate(stamps)]),)
    for shift, covered in ((0, True), (1, False)):
        read = tuple(replace(r, timestamp=t + shift * i, timestamp_type=None)
                     for i, (r, t) in enumerate(zip(stored[0].records(), sarama_read, strict=True)))
        violation = _raises("CON.v2-createtime-base-plus-delta", check_consumed, read, stored, start=0, until=2,
                            clause_of=consumer_view_clause, context="ctx", typed=False)
        assert any(e.covers(violation, nodeid) for e in entries) is covered


def test_consumed_records_and_seek_are_judged_batch_by_batch_against_the_stored_bytes() -> None:
    v2 = build_v2([RecordSpec(NOW - 3, b"a", b"v"), RecordSpec(NOW - 1, b"b", b"v")])
    (wrapper,) = build_legacy([RecordSpec(NOW - 9, b"c", b"v"), RecordSpec(NOW - 8, b"d", b"v")], magic=1,
                              codec=Codec.GZIP, timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=NOW)
    stored = (v2, with_base_offset(wrapper, 2))
    read = tuple(r for b in stored for r in b.records())
    check_consumed(read, stored, start=0, until=4, clause_of=consumer_view_clause, context="ctx", typed=True)
    inner_own = read[:2] + tuple(r.__class__(r.offset, NOW - 9 + i, r.timestamp_type, r.key, r.value)
                                 for i, r in enumerate(read[2:]))
    _raises("CON.v1-wrapper-lat-wrapper-value", check_consumed, inner_own, stored, start=0, until=4,
            clause_of=consumer_view_clause, context="ctx", typed=True)
    failed = _raises("CON.v2-createtime-base-plus-delta", check_consumed, (), stored, start=0, until=4,
                     clause_of=consumer_view_clause, context="ctx", typed=True, failure="Boom: codec")
    assert failed.observation.observed == "the consumer failed: Boom: codec"
    check_seek(OffsetAndTimestamp(1, NOW - 1), read[1], stored, "ctx", typed=True)
    _raises("LO.client-seek-by-time", check_seek, OffsetAndTimestamp(1, NOW - 1), read[0], stored, "ctx", typed=True)
    check_seek(None, None, stored, "ctx", typed=True)


def _lat_v2_and_wrapper() -> tuple[AnyBatch, ...]:
    lat = build_v2([RecordSpec(NOW - 5, b"a", b"v"), RecordSpec(NOW - 3, b"b", b"v")],
                   timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=NOW)
    # As a broker stores a CreateTime wrapper on a LogAppendTime topic: the wrapper stamped, the inner ones kept.
    (wrapper,) = build_legacy([RecordSpec(NOW - 9, b"c", b"v"), RecordSpec(NOW - 8, b"d", b"v")], magic=1,
                              codec=Codec.GZIP)
    stamped = wrapper.with_header(timestamp_type=TimestampType.LOG_APPEND_TIME, max_timestamp=NOW)
    return lat, with_base_offset(stamped, 2)


def test_a_library_without_timestamp_types_is_judged_on_offsets_and_timestamps_only() -> None:
    """ClientCapability.TIMESTAMP_TYPE: a record with no type (a driver's null) reads right untyped; its timestamp is
    still judged, and a typed library's wrong type still fails."""
    stored = _lat_v2_and_wrapper()
    read = tuple(r for b in stored for r in b.records())
    untyped = tuple(replace(r, timestamp_type=None) for r in read)
    check_consumed(untyped, stored, start=0, until=4, clause_of=consumer_view_clause, context="ctx", typed=False)
    check_seek(OffsetAndTimestamp(1, NOW), untyped[1], stored, "ctx", typed=False)
    _raises("CON.v2-lat-max-timestamp", check_consumed, untyped, stored, start=0, until=4,
            clause_of=consumer_view_clause, context="ctx", typed=True)
    later = (replace(untyped[0], timestamp=NOW + 1), *untyped[1:])
    _raises("CON.v2-lat-max-timestamp", check_consumed, later, stored, start=0, until=4,
            clause_of=consumer_view_clause, context="ctx", typed=False)


@pytest.mark.parametrize("shift", [0, 1])
def test_kafka_go_create_time_entries_cover_the_create_times_and_nothing_else(shift: int) -> None:
    """FACTS "create-times": kafka-go's entries for LogAppendTime records read as their create times (v2 batch, v1
    wrapper, after a seek) cover exactly that reading; the same records 1 ms later are a new departure (FAIL)."""
    entries = load_expectations("suites/expectations/client-kafka-go.toml")
    stored = _lat_v2_and_wrapper()
    created = [NOW - 5, NOW - 3, NOW - 9, NOW - 8]
    read = tuple(replace(r, timestamp=t + shift, timestamp_type=None)
                 for r, t in zip((r for b in stored for r in b.records()), created, strict=True))
    consumed = "suites/test_client_consume.py::test_consumer_records"
    for batch, clause in zip(stored, ("CON.v2-lat-max-timestamp", "CON.v1-wrapper-lat-wrapper-value"), strict=True):
        mine = tuple(r for r in read if batch.base_offset <= r.offset <= batch.last_offset)
        violation = _raises(clause, check_consumed, mine, (batch,), start=0, until=4,
                            clause_of=consumer_view_clause, context="ctx", typed=False)
        nodeid = consumed if clause.startswith("CON.v2") else "suites/test_client_consume.py::test_v1_wrappers"
        assert any(e.covers(violation, nodeid) for e in entries) is (shift == 0)
        if clause.startswith("CON.v2"):  # a LogAppendTime v2 topic per codec in every run
            codecs = "suites/test_client_consume.py::test_consumer_codecs"
            assert any(e.covers(violation, codecs) for e in entries) is (shift == 0)
    seek = _raises("LO.client-seek-by-time", check_seek, OffsetAndTimestamp(1, NOW), read[1], stored, "ctx",
                   typed=False)
    assert any(e.covers(seek, "suites/test_client_lookups.py::test_seek_by_time") for e in entries) is (shift == 0)


# ------------------------------------------------------------------------------------ targets


def test_client_target_names() -> None:
    assert parse_target("client:kafka-python").served == "model"
    assert parse_target("client:java@reference:mutant:lat-ignored").served == "mutant:lat-ignored"
    assert parse_target("mutant:client-lookup-v0").seeded == "client-lookup-v0"
    assert target_kind("client:model") is Kind.CLIENT and target_kind("mutant:client-lookup-v0") is Kind.CLIENT
    in_process = {name for name, row in LIBRARIES.items() if row.adapter("client") is not None}
    assert {"model", "kafka-python", "aiokafka", "confluent-kafka", "java"} <= in_process
    for bad, said in (
        ("client:nope", "unknown client library"),
        ("client:model@tansu", "runs against the reference broker"),
        ("client:model@reference:mutant:client-lookup-v0", "not a broker mutant"),
        ("client:model@reference:mutant:nope", "not a broker mutant"),
    ):
        with pytest.raises(TargetError, match=said):
            check_target(bad, "kafka-4.0")
    with pytest.raises(TargetError, match="drop --bootstrap-servers"):
        check_target("client:model", "kafka-4.0", bootstrap="127.0.0.1:9092")
    with pytest.raises(TargetError, match="open_target"):
        resolve_target("client:model", "kafka-4.0")


# ------------------------------------------------------------------------------------ client mutant witnesses


def _witness(reference: ReferenceClient, mutant: ReferenceClient) -> bool:
    """Whether the mutant's changed step answers differently from the reference client's on a crafted input (the
    step the mutant overrides, called directly: no broker needed)."""
    lat = build_v2([RecordSpec(NOW - 5, b"a"), RecordSpec(NOW - 1, b"b")], timestamp_type=TimestampType.LOG_APPEND_TIME,
                   log_append_time=NOW)
    create = build_v2([RecordSpec(NOW - 5, b"a"), RecordSpec(NOW - 1, b"b")])
    legacy = build_legacy([RecordSpec(NOW - 9, b"c"), RecordSpec(NOW - 8, b"d")], magic=1, codec=Codec.GZIP)
    # A LogAppendTime wrapper stamped in place (CMP-3): its inner messages keep the producer's own timestamps.
    legacy_lat = tuple(b.with_header(timestamp_type=TimestampType.LOG_APPEND_TIME, max_timestamp=NOW) for b in legacy)
    plain_lat = build_legacy([RecordSpec(NOW - 9, b"c")], magic=1, timestamp_type=TimestampType.LOG_APPEND_TIME,
                             log_append_time=NOW)
    v0 = build_legacy([RecordSpec(NOW, b"e")], magic=0)
    rejected = ProduceResult(32, -1, -1, 0, [(1, "bad")], None)
    steps = {
        "metadata_timestamp": lambda c: c.metadata_timestamp(NOW, NOW - 5),
        "record_failures": lambda c: c.record_failures(rejected, 2),
        "read": lambda c: [c.read_batch(b) for b in (lat, create, *legacy, *legacy_lat, *plain_lat, *v0)],
        "delivered": lambda c: c.delivered(create.records(), 1),
        "lookup_answer": lambda c: c.lookup_answer(ListOffsetsResult(0, -1, -1, 0)),
        "spec_answer": lambda c: c.spec_answer(SpecialTarget.LATEST, ListOffsetsResult(0, -1, 4, 0)),
    }
    for step in steps.values():
        if step(reference) != step(mutant):
            return True
    # The lookup steps that talk to the broker, answered from a canned result.
    refused = []
    for client in (reference, mutant):
        try:
            client.check_target("t", 0, -1)
            refused.append(False)
        except ClientRefused:
            refused.append(True)
    if refused[0] != refused[1]:
        return True
    for client in (reference, mutant):
        client.wire.api_versions = lambda node_id=None: {2: (0, 9)}  # type: ignore[method-assign]
    if reference.lookup_version() != mutant.lookup_version():
        return True
    for client in (reference, mutant):
        client._list_offsets = lambda *a, **k: ListOffsetsResult(0, NOW + 7, 3, 0)  # type: ignore[method-assign]
        client.lookup_version = lambda: 9  # type: ignore[method-assign]
    return reference.offsets_for_times("t", 0, NOW) != mutant.offsets_for_times("t", 0, NOW)


@pytest.mark.parametrize("mutant_id", CLIENT_MUTANTS)
def test_every_client_mutant_changes_one_step_of_the_reference_client(mutant_id: str) -> None:
    mutant = MUTANTS[mutant_id]
    assert mutant.kind is Kind.CLIENT and mutant.clauses and mutant_id in CLIENT_FAULTS
    reference = ReferenceClient("127.0.0.1:1", timeout=1)
    faulty = client_fault(mutant_id)("127.0.0.1:1", timeout=1)
    try:
        assert _witness(reference, faulty), f"{mutant_id} answers as the reference client does"
    finally:
        reference.close()
        faulty.close()
    with pytest.raises(TargetError, match="reference broker"):
        mutant.build(None)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ against the reference broker


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClientFactory]:
    with open_target("client:model", "kafka-4.0", log_dir=tmp_path_factory.mktemp("logs")) as (factory, _):
        assert isinstance(factory, ClientFactory)
        yield factory


def test_the_reference_client_through_the_tap(served: ClientFactory) -> None:
    impl = served.build()
    try:
        assert Capability.CLIENT in impl.capabilities and impl.client.name == "model"
        now = int(time.time() * 1000)
        for broker in impl.brokers():
            impl.set_clock(broker, now)
        impl.create_topic("lat", TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME))
        name = impl.topic_name("lat")
        mark = impl.tap.mark()
        sent = impl.client.send(name, 0, [Outgoing(b"a", b"v", now - 9), Outgoing(b"b", b"v")], codec=Codec.GZIP)
        assert sent == (RecordMetadata(0, now), RecordMetadata(1, now))  # VAL-12: the broker's append time
        (answer,) = impl.tap.produced(name, since=mark)
        assert (answer.error_code, answer.log_append_time, answer.batches[0].codec) == (0, now, Codec.GZIP)
        consumed = impl.client.consume(name, 0, 1, until=2)
        lat = TimestampType.LOG_APPEND_TIME
        assert [(r.offset, r.timestamp, r.timestamp_type) for r in consumed] == [(1, now, lat)]
        mark = impl.tap.mark()
        assert impl.client.offsets_for_times(name, 0, now + 1) is None
        assert impl.client.list_offsets(name, 0, SpecialTarget.LATEST) == OffsetAndTimestamp(2, -1)
        assert [(t.target, t.offset) for t in impl.tap.lookups(name, since=mark)] == [(now + 1, -1), (-1, 2)]
        with pytest.raises(ClientRefused, match="cannot be negative"):
            impl.client.offsets_for_times(name, 0, -2)
        assert impl.tap.errors == []
    finally:
        impl.close()


def test_a_client_is_never_blamed_for_a_brokers_fault(tmp_path: Path) -> None:
    """The broker answers log_append_time -1 on a LogAppendTime topic (lat-response-minus-one): a client that then
    reports its records' create times does what VAL-12 says, given that answer, and passes; the broker's answer,
    compared with the model's, fails VAL.lat-response-time."""
    with open_target("client:model@reference:mutant:lat-response-minus-one", "kafka-4.0",
                     log_dir=tmp_path) as (factory, _):
        impl = factory.build()
        try:
            model = ModelFactory(profile="kafka-4.0").build()
            now = int(time.time() * 1000)
            for broker in impl.brokers():
                impl.set_clock(broker, now)
                model.set_clock(broker, now)
            config = TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME)
            impl.create_topic("lat", config)
            model.create_topic("lat", config)
            name = impl.topic_name("lat")
            records = [Outgoing(b"a", b"v", now - 9)]
            mark = impl.tap.mark()
            outcomes = impl.client.send(name, 0, records)
            produced = impl.tap.produced(name, since=mark)
            assert outcomes == (RecordMetadata(0, now - 9),) and produced[0].log_append_time == -1
            check_sent(records, outcomes, produced, "client")  # the client's clause holds
            expected = model.produce("lat", 0, produced[0].batches, produce_version=produced[0].version)
            _raises("VAL.lat-response-time", check_produce, produce_response(produced[0]), expected, config=config,
                    error_clause="VAL.lat-response-time")
        finally:
            impl.close()


@pytest.mark.e2e
def test_client_suites_against_a_served_broker_mutant_fail_only_broker_clauses(tmp_path: Path) -> None:
    out = tmp_path / "verdicts.json"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "suites/test_client_produce.py", "suites/test_client_lookups.py",
         "--target", "client:model@reference:mutant:lookup-last-match", "--profile", "kafka-4.0",
         "--hypothesis-profile", "fast", "--verdicts-json", str(out), "--log-dir", str(tmp_path), "-q",
         "-p", "no:cacheprovider", "-p", "no:schemathesis"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    verdicts = json.loads(out.read_text(encoding="utf-8"))["clauses"]
    assert run.returncode == 1, run.stdout[-2000:]
    assert verdicts["LO.first-ge-target"] == Verdict.FAIL.value
    client = {cid: v for cid, v in verdicts.items() if cid.startswith(("LO.client-", "VAL.record-metadata"))}
    assert client and all(v in (Verdict.PASS.value, Verdict.NOT_APPLICABLE.value) for v in client.values()), client


# --- the tap: every broker address a client connects to next passes through it ------------------------------------


_UPSTREAM = ("127.0.0.1", 1)  # never connected to: the tap only listens for it


def _framed(response: object) -> bytes:
    response.with_header(correlation_id=7)  # type: ignore[attr-defined]
    return bytes(response.encode(header=True, framed=True))  # type: ignore[attr-defined]


@pytest.mark.parametrize("version", [2, 3, 4, 6])
def test_the_tap_readdresses_a_find_coordinator_answer(version: int) -> None:
    """librdkafka follows FindCoordinator's address (its consumer has a group.id); against Kafka 4.0.2 that address
    was the broker's own port, so every later ListOffsets went around the tap and offsetsForTimes looked unasked."""
    from kafka.protocol.metadata.find_coordinator import FindCoordinatorResponse

    from conformance.targets.routes.wire_adapter.tap import FIND_COORDINATOR, WireTap
    from conformance.wire.relay import LOOPBACK, Asked

    with WireTap(f"{_UPSTREAM[0]}:{_UPSTREAM[1]}") as tap:
        if version >= 4:
            coordinator = FindCoordinatorResponse.Coordinator(key="g", node_id=1, host=_UPSTREAM[0],
                                                              port=_UPSTREAM[1], error_code=0, error_message=None)
            answer = FindCoordinatorResponse(throttle_time_ms=0, coordinators=[coordinator], version=version)
        else:
            answer = FindCoordinatorResponse(throttle_time_ms=0, error_code=0, error_message=None, node_id=1,
                                             host=_UPSTREAM[0], port=_UPSTREAM[1], version=version)
        out = tap._answer(Asked(FIND_COORDINATOR, version, None), _framed(answer))
        got = FindCoordinatorResponse.decode(out, version=version, header=True, framed=True)
        where = got.coordinators[0] if version >= 4 else got
        assert (where.host, where.port) == (LOOPBACK, tap._relay.listen(_UPSTREAM))


def test_the_tap_readdresses_a_describe_cluster_answer() -> None:
    from kafka.protocol.admin.cluster import DescribeClusterResponse

    from conformance.targets.routes.wire_adapter.tap import DESCRIBE_CLUSTER, WireTap
    from conformance.wire.relay import LOOPBACK, Asked

    with WireTap(f"{_UPSTREAM[0]}:{_UPSTREAM[1]}") as tap:
        broker = DescribeClusterResponse.DescribeClusterBroker(broker_id=1, host=_UPSTREAM[0], port=_UPSTREAM[1],
                                                               rack=None)
        answer = DescribeClusterResponse(throttle_time_ms=0, error_code=0, error_message=None, cluster_id="c",
                                         controller_id=1, brokers=[broker], version=1)
        out = tap._answer(Asked(DESCRIBE_CLUSTER, 1, None), _framed(answer))
        got = DescribeClusterResponse.decode(out, version=1, header=True, framed=True)
        assert [(b.host, b.port) for b in got.brokers] == [(LOOPBACK, tap._relay.listen(_UPSTREAM))]
