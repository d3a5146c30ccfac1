"""Shared helpers of the client suites (suites/test_client_*.py).

A client target is the reference broker over the wire with a client library at `impl.client`, talking to the broker
through a wire tap (`impl.tap`, conformance.targets.routes.wire_adapter.tap). Each client test drives the library,
then judges twice:

1. the client: what the library reports against what the broker answered it (the tapped ProduceResponse and
   ListOffsets answers) and stored (the raw fetch, read by the model's codec as CON-1 says), under the client clauses
   (VAL.record-metadata-timestamp, VAL.producer-future-exceptions, LO.client-*) and the CON.* clauses. The
   expectation never comes from the model, so a broker's departure never shows as the client's;
2. the broker: the same exchanges replayed into the reference model, its answers and stored batches compared with the
   broker's under broker clauses (VAL.lat-response-time, CMP.*, LO.*). Against a served broker mutant these fail and
   the client's verdicts stay PASS.

The client checks run first, so a broker departure that ends the example has already left the client's verdicts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest

from conformance.judging.capabilities import ClientCapability
from conformance.judging.checks import check_equal, check_true
from conformance.judging.observables import Obs
from conformance.judging.verdicts import UNSUPPORTED_PREFIX
from conformance.targets.kinds import client_rules as rules
from conformance.targets.kinds.client_library import (
    ClientFailed,
    ClientLibrary,
    ClientRefused,
    OffsetAndTimestamp,
    Outgoing,
    RecordMetadata,
    SendFailure,
    SendOutcome,
    java_refusal_text,
)
from conformance.targets.kinds.implementation import Implementation
from conformance.targets.routes.wire_adapter.tap import TappedLookup, TappedProduce, WireTap
from models.cluster import FetchResponse, ProduceResponse
from models.config import TopicConfig
from models.constants import MAGIC_V2, Codec, ErrorCode, SpecialTarget, TimestampType
from models.list_offsets import ListOffsetsAnswer
from models.profiles import Profile
from models.records import AnyBatch, ConsumerRecord
from models.validator import RecordError

from .helpers import (
    Suite,
    Twin,
    check_fetch,
    check_list_offsets,
    check_produce,
    newest_fetch,
    reader_facts,
)


@dataclass(frozen=True)
class ClientUnderTest:
    """The library, the tap it talks through, and the broker's name for a suite topic."""

    library: ClientLibrary
    tap: WireTap
    topic_name: Callable[[str], str]

    def has(self, *capabilities: ClientCapability) -> bool:
        return all(c in self.library.capabilities for c in capabilities)

    @property
    def typed(self) -> bool:
        """Whether the library exposes a consumed record's timestamp type (CON-1's timestampType): where it does
        not, its records are compared without one (ClientCapability.TIMESTAMP_TYPE)."""
        return self.has(ClientCapability.TIMESTAMP_TYPE)


def client_under_test(impl: Implementation, *capabilities: ClientCapability) -> ClientUnderTest:
    """The client of a client target; the test is UNSUPPORTED where the library lacks a capability."""
    library: ClientLibrary = impl.client  # type: ignore[attr-defined]
    missing = [c for c in capabilities if c not in library.capabilities]
    if missing:
        pytest.skip(UNSUPPORTED_PREFIX + ", ".join(f"client {c.value}" for c in missing))
    return ClientUnderTest(library, impl.tap, impl.topic_name)  # type: ignore[attr-defined]


def client_twin(suite: Suite) -> Twin:
    """The twin with every broker's clock (the reference broker's, set through its control plane, and the model's) at
    this machine's clock: a producer stamps the records it is given no timestamp for with it, and the broker's
    validation bounds (4.0's 1 h after-bound) must judge them as a broker next to the producer would."""
    twin = suite.twin()
    now = time.time_ns() // 1_000_000
    for broker in twin.brokers():
        twin.set_clock(broker, now)
    return twin


# ------------------------------------------------------------------------------------ the client's side


@dataclass(frozen=True)
class SentRecord:
    """One record as it went out in a tapped Produce request, and the answer it got."""

    create_time: int  # the timestamp the producer wrote (read from its CreateTime batch)
    batch_first_create_time: int  # ... for the first record of the same batch
    relative_offset: int  # its offset in the request (the producer writes a batch at base offset 0)
    batch_index: int  # its position in its batch (a record error's batch_index)
    batch_size: int
    answer: TappedProduce


def sent_records(produced: Sequence[TappedProduce]) -> dict[bytes | None, SentRecord]:
    """Each key the tapped Produce requests carried, with the last request that carried it (a retry replaces)."""
    out: dict[bytes | None, SentRecord] = {}
    for answer in produced:
        for batch in answer.batches:
            records = batch.records()
            for index, record in enumerate(records):
                out[record.key] = SentRecord(record.timestamp, records[0].timestamp, record.offset, index,
                                             len(records), answer)
    return out


def expected_outcome(sent: SentRecord) -> SendOutcome:
    """What the producer must report for a record, from the broker's answer to it (VAL-12, VAL-11)."""
    answer = sent.answer
    if answer.error_code == ErrorCode.NONE:
        timestamp = rules.metadata_timestamp(answer.log_append_time, sent.create_time)
        return RecordMetadata(answer.base_offset + sent.relative_offset, timestamp)
    failures = rules.record_failures(answer.error_code, dict(answer.record_errors), answer.error_message,
                                     sent.batch_size)
    return failures[sent.batch_index]


def _shown(outcome: SendOutcome) -> object:
    return outcome if isinstance(outcome, SendFailure) else outcome.offset


def check_sent(
    records: Sequence[Outgoing], outcomes: Sequence[SendOutcome], produced: Sequence[TappedProduce], context: str
) -> None:
    """VAL.record-metadata-timestamp: each accepted record's RecordMetadata is the broker's base offset plus its
    position and the answer's log_append_time, or the create time the producer wrote where that is -1 (VAL-12);
    VAL.producer-future-exceptions: the records of a rejected batch fail as Sender.failBatch fails them (VAL-11)."""
    check_equal("VAL.record-metadata-timestamp", Obs.CLIENT_METADATA_OFFSET, len(outcomes), len(records),
                f"{context}: one outcome per record sent")
    by_key = sent_records(produced)
    failed: list[tuple[str, str]] = []
    for record, outcome in zip(records, outcomes, strict=True):
        where = f"{context} record {record.key!r}"
        sent = by_key.get(record.key)
        if sent is None:
            check_true("VAL.record-metadata-timestamp", Obs.CLIENT_METADATA_OFFSET, False, _shown(outcome), where,
                       expectation="a Produce request that carried the record")
            continue
        expected = expected_outcome(sent)
        if isinstance(expected, RecordMetadata):
            if not check_equal("VAL.record-metadata-timestamp", Obs.CLIENT_METADATA_OFFSET, _shown(outcome),
                               expected.offset, where):
                continue
            assert isinstance(outcome, RecordMetadata)
            check_equal("VAL.record-metadata-timestamp", Obs.CLIENT_METADATA_TIMESTAMP, outcome.timestamp,
                        expected.timestamp, where, sent=sent.create_time,
                        facts={"batch-first-create-time": sent.batch_first_create_time})
        else:
            seen = outcome.kind if isinstance(outcome, SendFailure) else f"accepted at offset {outcome.offset}"
            failed.append((seen, expected.kind, ErrorCode(sent.answer.error_code).name))
    if failed:
        # FACTS "partition-error": every record failed with the partition's error, record_errors ignored.
        check_equal("VAL.producer-future-exceptions", Obs.CLIENT_SEND_FAILURES, [seen for seen, _, _ in failed],
                    [kind for _, kind, _ in failed], f"{context}: the failure of each record of the rejected batch",
                    facts={"partition-error": [code for _, _, code in failed]})


def consume(client: ClientUnderTest, topic: str, *, start: int, until: int) -> tuple[tuple[ConsumerRecord, ...], str]:
    """What the library delivers of a suite topic from `start` up to `until`, and its failure ("" for none): a
    consumer that fails part-way (a batch it cannot read) is judged on the records it could not deliver."""
    try:
        return client.library.consume(client.topic_name(topic), 0, start, until=until), ""
    except ClientFailed as exc:
        return exc.delivered, str(exc)


def check_consumed(
    records: Sequence[ConsumerRecord],
    stored: Sequence[AnyBatch],
    *,
    start: int,
    until: int,
    clause_of: Callable[[AnyBatch], str],
    context: str,
    typed: bool,
    failure: str = "",
) -> None:
    """CON-1: the records a consumer delivers from `start` up to `until`, batch by batch, against the stored batches
    (the broker's bytes read by the model's codec), each under the CON clause of its stored form (`clause_of`): each
    record's offset and timestamp, and its timestamp type where the library exposes one (`typed`). Where the consumer
    failed (`failure`), a batch it did not deliver whole shows the failure as what it read."""
    # FACTS "unreadable-lz4": a consumer that cannot read an LZ4 batch fails the batches read with it too (those of
    # the same fetch before it, where a library decodes a fetch whole, and every one after it).
    delivered = {r.offset for r in records}
    lz4_offsets = [r.offset for b in stored if b.codec is Codec.LZ4 for r in b.records() if start <= r.offset < until]
    lz4_undelivered = bool(failure) and any(offset not in delivered for offset in lz4_offsets)
    for batch in stored:
        want = [r for r in batch.records() if start <= r.offset < until]
        if not want:
            continue
        first, last = batch.base_offset, batch.last_offset
        got = [r for r in records if first <= r.offset <= last]
        where = f"{context} stored batch at offset {batch.base_offset} (magic {batch.magic}, {batch.codec.name})"
        clause = clause_of(batch)
        read: object = [_read(r, typed) for r in got]
        payloads: object = [(r.key, r.value) for r in got]
        timestamp_facts: dict[str, object] = dict(reader_facts(want, stored, typed=typed))
        payload_facts: dict[str, object] = {"empty-as-null": [(r.key or None, r.value or None) for r in want]}
        if failure and len(got) < len(want):
            read = payloads = f"the consumer failed: {failure}"
            if lz4_undelivered:
                timestamp_facts["unreadable-lz4"] = payload_facts["unreadable-lz4"] = read
        check_equal(clause, Obs.RECORD_TIMESTAMPS, read, [_read(r, typed) for r in want], where,
                    facts=timestamp_facts)
        check_equal(clause, Obs.RECORD_PAYLOADS, payloads, [(r.key, r.value) for r in want], where,
                    facts=payload_facts)


def _read(record: ConsumerRecord | None, typed: bool) -> tuple[object, ...] | None:
    """A record as the client suites compare it: (offset, timestamp, type), or (offset, timestamp) for a library
    that exposes no timestamp type."""
    if record is None:
        return None
    if typed:
        return record.offset, record.timestamp, record.timestamp_type
    return record.offset, record.timestamp


def _asked(tapped: Sequence[TappedLookup], target: int) -> list[TappedLookup]:
    return [t for t in tapped if t.target == target and t.partition == 0]


def check_lookup(
    answer: OffsetAndTimestamp | None, tapped: Sequence[TappedLookup], target: int, context: str
) -> TappedLookup | None:
    """LO-9: offsetsForTimes asked ListOffsets v1+ (LO.client-min-version) and reports the broker's answer to it:
    null for offset -1 or error 43 (LO.client-null-when-not-found), else its offset and timestamp
    (LO.client-offsets-for-times-answer). Returns the tapped answer the report was compared with."""
    asked = _asked(tapped, target)
    where = f"{context} target {target}"
    if not asked:
        check_true("LO.client-offsets-for-times-answer", Obs.CLIENT_LOOKUP, False, answer, where,
                   expectation=f"the answer to a ListOffsets request for target {target}")
        return None
    for request in asked:
        minimum = rules.lookup_min_version(request.isolation_level)
        check_true("LO.client-min-version", Obs.CLIENT_REQUEST_VERSION, request.version >= minimum, request.version,
                   where, expectation=f"ListOffsets v{minimum} or later")
    last = asked[-1]
    expected = rules.lookup_answer(last.error_code, last.offset, last.timestamp)
    if expected is not None and answer is not None and answer.timestamp is None:
        expected = OffsetAndTimestamp(expected.offset, None)  # the library's call reports an offset only
    clause = "LO.client-null-when-not-found" if expected is None else "LO.client-offsets-for-times-answer"
    check_equal(clause, Obs.CLIENT_LOOKUP, answer, expected, f"{where} (broker answered error "
                f"{ErrorCode(last.error_code).name}, offset {last.offset}, timestamp {last.timestamp})",
                facts=_lookup_facts(tapped, last))
    return last


def _lookup_facts(tapped: Sequence[TappedLookup], last: TappedLookup) -> dict[str, object]:
    """What known departures of libraries make of the broker's answer `last` to a by-time lookup (FACTS of
    conformance.judging.observables): its offset with the requested target as the timestamp; the broker's answer
    to a LATEST request the library sent after it, or before it (its offset alone), where it sent one."""
    facts: dict[str, object] = {"requested-timestamp": OffsetAndTimestamp(last.offset, last.target)}
    later = [t for t in tapped if t.partition == 0 and t.at > last.at and t.target == SpecialTarget.LATEST]
    if later and later[-1].error_code == ErrorCode.NONE:
        end = later[-1]
        facts["end-offset"] = OffsetAndTimestamp(end.offset, -1 if end.timestamp is None else end.timestamp)
    earlier = [t for t in tapped if t.partition == 0 and t.at < last.at and t.target == SpecialTarget.LATEST]
    if earlier and earlier[-1].error_code == ErrorCode.NONE:
        facts["end-offset-asked-first"] = OffsetAndTimestamp(earlier[-1].offset, None)
    return facts


def check_special(
    answer: OffsetAndTimestamp, tapped: Sequence[TappedLookup], target: int, context: str
) -> TappedLookup | None:
    """LO.client-special-target-answer: the library reports the broker's answer to EARLIEST, LATEST or
    MAX_TIMESTAMP: its offset, and its timestamp where the library's call reports one."""
    asked = _asked(tapped, target)
    where = f"{context} target {target}"
    if not asked:
        check_true("LO.client-special-target-answer", Obs.CLIENT_LOOKUP, False, answer, where,
                   expectation=f"the answer to a ListOffsets request for target {target}")
        return None
    last = asked[-1]
    timestamp = None if answer.timestamp is None else (-1 if last.timestamp is None else last.timestamp)
    expected: object = OffsetAndTimestamp(last.offset, timestamp)
    if last.error_code != ErrorCode.NONE:
        expected = f"the error {ErrorCode(last.error_code).name} the broker answered"
    check_equal("LO.client-special-target-answer", Obs.CLIENT_LOOKUP, answer, expected, where)
    return last


# The FACTS a negative target sent as given may show, by how the library reports the broker's answer.
_SENT_AS_GIVEN = ("sent-as-given", "sent-as-given-requested-timestamp", "sent-as-given-offset-only")


def _sent_as_given_facts(asked: Sequence[TappedLookup], target: int, shown: str) -> dict[str, object]:
    """What a library that sends a negative target as given shows (FACTS of conformance.judging.observables): the
    broker's answer reported as a by-time answer ("sent-as-given"), or as kafka-go's Client.ListOffsets files it
    ("sent-as-given-requested-timestamp"), or as its offset alone ("sent-as-given-offset-only", Sarama's
    Client.GetOffset); an error answer, where the library failed with that error (`shown`, the failure, names it
    first), under each."""
    if not asked:
        return {}
    last = asked[-1]
    if last.error_code != ErrorCode.NONE:
        if not shown.startswith(f"failed after asking: {ErrorCode(last.error_code).name}"):
            return {}
        return {name: (shown, len(asked)) for name in _SENT_AS_GIVEN}
    reported = {
        "sent-as-given": rules.lookup_answer(last.error_code, last.offset, last.timestamp),
        "sent-as-given-requested-timestamp": None if target in (SpecialTarget.LATEST, SpecialTarget.EARLIEST)
        else OffsetAndTimestamp(last.offset, -1),
        "sent-as-given-offset-only": OffsetAndTimestamp(last.offset, None),
    }  # fmt: skip
    return {name: (f"answered {answer!r}", len(asked)) for name, answer in reported.items()}


def check_refusal(
    outcome: OffsetAndTimestamp | ClientRefused | ClientFailed | None,
    tapped: Sequence[TappedLookup],
    *,
    topic: str,
    target: int,
    context: str,
) -> None:
    """LO.client-rejects-negative-target: offsetsForTimes refuses a negative target before any request, with Java's
    text (LO-9)."""
    sent = len(_asked(tapped, target))
    if isinstance(outcome, ClientRefused):
        shown = "refused"
    elif isinstance(outcome, ClientFailed):
        shown = f"failed after asking: {outcome}"
    else:
        shown = f"answered {outcome!r}"
    where = f"{context} target {target}"
    refused = check_equal("LO.client-rejects-negative-target", Obs.CLIENT_REFUSAL, (shown, sent), ("refused", 0),
                          f"{where} (refusal, ListOffsets requests sent for the target)",
                          facts=_sent_as_given_facts(_asked(tapped, target), target, shown))
    if refused and isinstance(outcome, ClientRefused):
        check_equal("LO.client-rejects-negative-target", Obs.CLIENT_REFUSAL_MESSAGE, outcome.detail,
                    java_refusal_text(topic, 0, target), where)


def check_seek(
    found: OffsetAndTimestamp | None,
    first: ConsumerRecord | None,
    stored: Sequence[AnyBatch],
    context: str,
    *,
    typed: bool,
) -> None:
    """LO.client-seek-by-time: after a seek to the offset offsetsForTimes found, the first record delivered is the
    stored record at that offset, read as CON-1 says (nothing at all when nothing was found); its timestamp type
    compared where the library exposes one (`typed`)."""
    by_offset = {r.offset: r for batch in stored for r in batch.records()}
    want = by_offset.get(found.offset) if found is not None else None
    where = f"{context} seek to {found.offset if found is not None else None}"
    facts = None
    if want is not None:
        facts = {k: v[0] for k, v in reader_facts([want], stored, typed=typed).items()}
    check_equal("LO.client-seek-by-time", Obs.RECORD_TIMESTAMPS, _read(first, typed), _read(want, typed), where,
                facts=facts)
    check_equal("LO.client-seek-by-time", Obs.RECORD_PAYLOADS, None if first is None else (first.key, first.value),
                None if want is None else (want.key, want.value), where)


def check_failed_seek(
    failure: str, tapped: Sequence[TappedLookup], target: int, stored: Sequence[AnyBatch], context: str, *, typed: bool
) -> None:
    """LO.client-seek-by-time for a library whose seek failed: the record at the offset the broker answered its
    lookup with (none where it answered none) against the failure, so that the departure is judged, and covered by
    an expectation as narrow as any other, instead of ending the test."""
    asked = _asked(tapped, target)
    answer = rules.lookup_answer(asked[-1].error_code, asked[-1].offset, asked[-1].timestamp) if asked else None
    by_offset = {r.offset: r for batch in stored for r in batch.records()}
    want = by_offset.get(answer.offset) if answer is not None else None
    where = f"{context} seek to {answer.offset if answer is not None else None} (the broker's answer)"
    check_equal("LO.client-seek-by-time", Obs.RECORD_TIMESTAMPS, f"the client failed: {failure}", _read(want, typed),
                where)


# ------------------------------------------------------------------------------------ the broker's side


class BrokerChecks:
    """Broker comparisons held back until the client's checks have run: a broker departure ends the example, and
    the client's verdicts must not depend on it (the module doc). `later(check, ...)` keeps one, `run()` runs them
    in the order kept."""

    def __init__(self) -> None:
        self._pending: list[Callable[[], None]] = []

    def later(self, check: Callable[..., None], *args: object, **kwargs: object) -> None:
        self._pending.append(lambda: check(*args, **kwargs))

    def run(self) -> None:
        pending, self._pending = self._pending, []
        for check in pending:
            check()


def broker_record_clause(config: TopicConfig) -> Callable[[AnyBatch], str]:
    """The broker clause of a stored record read differently from the model's: what the broker wrote, not how a
    reader reads it (the CON.* clauses are the client's in these suites). A stored v0/v1 batch of a topic in an old
    format may have been converted on append (CMP-5)."""
    lat = config.timestamp_type is TimestampType.LOG_APPEND_TIME

    def clause(batch: AnyBatch) -> str:
        if lat and batch.magic > 0:
            return "CMP.lat-every-record-reads-now"
        return "CMP.inplace-createtime-untouched" if batch.magic == MAGIC_V2 else "CMP.rebuild-createtime-copies"

    return clause


def produce_response(tapped: TappedProduce) -> ProduceResponse:
    """A tapped Produce answer as the model writes one (fields the version lacks at their defaults)."""
    return ProduceResponse(
        ErrorCode(tapped.error_code),
        base_offset=tapped.base_offset,
        log_append_time=-1 if tapped.log_append_time is None else tapped.log_append_time,
        log_start_offset=-1 if tapped.log_start_offset is None else tapped.log_start_offset,
        error_message=tapped.error_message,
        record_errors=tuple(RecordError(index, message) for index, message in tapped.record_errors),
    )


def check_broker_produced(
    twin: Twin, topic: str, produced: Sequence[TappedProduce], *, config: TopicConfig, error_clause: str, context: str
) -> None:
    """The broker's answers to the library's Produce requests against the model's for the same batches (replayed into
    the twin's model only: the broker already has them), under broker clauses (check_produce)."""
    for tapped in produced:
        expected = twin.ref.produce(topic, 0, tapped.batches, produce_version=tapped.version)
        check_produce(produce_response(tapped), expected.as_of_version(tapped.version), config=config,
                      error_clause=error_clause, context=f"{context} Produce v{tapped.version}")


def raw_fetch(twin: Twin, topic: str, profile: Profile) -> tuple[FetchResponse, FetchResponse]:
    """The broker's stored batches (the suites' own Fetch, read by the model's codec) and the model's."""
    return twin.fetch(topic, fetch_version=newest_fetch(profile))


def compare_stored(
    raw: FetchResponse, model: FetchResponse, *, config: TopicConfig, profile: Profile, context: str
) -> None:
    """The broker's stored batches against the model's, under broker clauses (check_fetch)."""
    check_fetch(raw, model, config=config, profile=profile, record_clause=broker_record_clause(config),
                context=context)


def check_broker_lookup(twin: Twin, topic: str, tapped: TappedLookup, profile: Profile, context: str) -> None:
    """The broker's answer to the library's ListOffsets request against the model's at the same version, under the
    LO.* broker clauses (check_list_offsets)."""
    observed = ListOffsetsAnswer(
        ErrorCode(tapped.error_code),
        tapped.offset,
        -1 if tapped.timestamp is None else tapped.timestamp,
        -1 if tapped.leader_epoch is None else tapped.leader_epoch,
    )
    expected = twin.ref.list_offsets(topic, 0, tapped.target, version=tapped.version)
    check_list_offsets(observed, expected, target=tapped.target, version=tapped.version, profile=profile,
                       context=context, facts=twin.list_offsets_facts(topic))
