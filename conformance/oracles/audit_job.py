"""Audit mode: the broker's ListOffsets answers checked against ground truth that Spark
computes from the topic's own records.

For one partition of a topic on any implementation (a broker over the wire, the model, a mutant):

1. read every record from the log start offset to the high watermark, as a consumer reads it (CON-1:
   LogAppendTime records read their batch's MaxTimestamp), into a Parquet file and a Spark DataFrame;
2. compute the ground truth with Spark SQL: for many targets T the first offset whose timestamp is >= T
   (LO-2: the first segment whose largest timestamp reaches T holds the first such record, so the answer
   over the whole log is the answer Kafka's segment search gives), the MAX_TIMESTAMP answer (LO-6: the
   largest timestamp and the first record holding it, which lies in the earliest batch reaching it), the
   high watermark and log start offset (LO-4, LO-5), and each batch's stored max against the max of its
   record timestamps (VAL-13);
3. ask the implementation the same questions through ListOffsets and report every disagreement as a
   failure of the clause it breaks, with the records around the expected and the answered offsets, and
   one `ClauseViolation` per observable that differs (the answer's error, offset, timestamp and leader
   epoch; a batch's stored max), as the suites' checks record them.

A clause is KNOWN only where an expectations entry covers every violation under it (the same entries as
the suites: clause, observable, matchers; an entry scoped to one suite test describes that test's scenario
and does not apply here, an unscoped or `scope = "run"` one does), so a new departure never hides behind a
known one of the same clause; any other disagreement is FAIL. The violations are built by the suites' comparisons
(conformance.judging.checks: `departure`, `unmet`) and judged by the one judge (conformance.judging.judge, through
`clause_verdict`), as a test of the clause alone would be.

`populate` writes a workload built to make disagreements visible: out-of-order and repeated timestamps,
the maximum shared inside one batch and again in a later batch, compressed batches, producer headers whose
MaxTimestamp lies, and (with the capability) a LogAppendTime topic. It records what it sent (`Sent`: each
batch's MaxTimestamp as the producer wrote it, its record timestamps, where the produce answer placed it), and
the stored-max check gives the producer's MaxTimestamp to its violation as the fact "sent"
(conformance.judging.observables.FACTS), as the suites' checks do: an entry `observed_is = "sent"` (a header
stored as the producer wrote it) then covers it. A topic the audit did not write (`audit --topic`) has no
`Sent`: the fact is absent, and such an entry covers nothing there.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from conformance.judging.capabilities import Capability
from conformance.judging.checks import ClauseViolation, departure, unmet
from conformance.judging.expectations import Expectation, coverer
from conformance.judging.judge import Evidence, judge
from conformance.judging.observables import Obs
from conformance.judging.verdicts import NOT_APPLICABLE_PREFIX, TaskStatus, Verdict
from conformance.targets.kinds.implementation import Implementation, UnsupportedOperation
from models.config import TopicConfig
from models.constants import MAGIC_V2, Codec, ErrorCode, TimestampType
from models.list_offsets import ListOffsetsAnswer
from models.profiles import MaxTimestampLookup, Profile
from models.records import AnyBatch, DefaultBatch, RecordSpec, build_batches

LATEST, EARLIEST, MAX_TIMESTAMP = -1, -2, -3
PARTITION = 0
# One Fetch answer may stop short of the high watermark; this many empty rounds in a row is a broken log.
_EMPTY_FETCHES = 5
# Spark answers the targets in one query; the broker answers them one request each.
DEFAULT_MAX_TARGETS = 600
RETENTION_MS = 300_000  # the generated CreateTime topic's retention.ms where the suite drives retention
TAIL_BATCHES = 6  # written after retention ran


class AuditError(RuntimeError):
    """The topic cannot be audited (unreadable, empty where data was expected); the message says why."""


# ----------------------------------------------------------------------------------- what was sent


@dataclass(frozen=True)
class SentBatch:
    """One batch `populate` produced, as the producer wrote it, and where the produce answer placed it."""

    base_offset: int  # the produce answer's base offset (-1 where the batch was rejected)
    max_timestamp: int  # the header's MaxTimestamp (v2) or wrapper timestamp (v1) as sent, a lying one included
    timestamps: tuple[int, ...]  # each record's timestamp as sent
    accepted: bool

    @property
    def last_offset(self) -> int:
        return self.base_offset + len(self.timestamps) - 1


@dataclass(frozen=True)
class Sent:
    """What `populate` wrote into one topic, in the order it was sent: the producer's side of the records the
    audit reads back, which a stored batch may be compared with (observables.FACTS "sent")."""

    topic: str
    batches: tuple[SentBatch, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        accepted = sum(b.accepted for b in self.batches)
        return {"accepted": accepted, "rejected": len(self.batches) - accepted}

    def batch_at(self, base_offset: int, last_offset: int) -> SentBatch | None:
        """The accepted batch the produce answer placed at `base_offset` holding as many records as the stored
        batch [base_offset, last_offset]; None where no sent batch is known to be that one."""
        return next(
            (b for b in self.batches
             if b.accepted and b.base_offset == base_offset and b.last_offset == last_offset),
            None,
        )  # fmt: skip


def _sent_batches(batches: Sequence[AnyBatch], base_offset: int, accepted: bool) -> list[SentBatch]:
    """The batches of one produce request as sent, each placed after the records of the ones before it (v1
    entries of one request share its answer's base offset)."""
    out = []
    offset = base_offset
    for batch in batches:
        timestamps = tuple(r.timestamp for r in batch.records())
        out.append(SentBatch(offset if accepted else -1, batch.max_timestamp, timestamps, accepted))
        offset += len(timestamps)
    return out


# ----------------------------------------------------------------------------------- the topic's records


@dataclass(frozen=True)
class ObservedBatch:
    base_offset: int
    last_offset: int
    magic: int
    codec: str
    timestamp_type: str  # CreateTime / LogAppendTime / NoTimestampType
    max_timestamp: int  # as stored (header MaxTimestamp, v1 wrapper timestamp)
    leader_epoch: int
    records: tuple[tuple[int, int], ...]  # (offset, timestamp) as a consumer reads them (CON-1)


@dataclass
class ObservedLog:
    topic: str
    partition: int
    log_start_offset: int
    high_watermark: int
    batches: list[ObservedBatch] = field(default_factory=list)

    def records(self) -> list[tuple[int, int, int, int]]:
        """(offset, timestamp, batch index, leader epoch) of every record in [log start, high watermark)."""
        rows = []
        for index, batch in enumerate(self.batches):
            for offset, timestamp in batch.records:
                if self.log_start_offset <= offset < self.high_watermark:
                    rows.append((offset, timestamp, index, batch.leader_epoch))
        return rows

    def batch_of(self, offset: int) -> ObservedBatch | None:
        for batch in self.batches:
            if batch.base_offset <= offset <= batch.last_offset:
                return batch
        return None


def _observed(batch: AnyBatch) -> ObservedBatch:
    records = batch.records()
    return ObservedBatch(
        base_offset=batch.base_offset,
        last_offset=batch.last_offset,
        magic=batch.magic,
        codec=batch.codec.name.lower(),
        timestamp_type=batch.timestamp_type.name,
        max_timestamp=batch.max_timestamp,
        leader_epoch=batch.partition_leader_epoch,
        records=tuple((r.offset, r.timestamp) for r in records),
    )


def _log_start_by_fetch(impl: Implementation, topic: str, partition: int, fetch_version: int) -> int:
    """The log start offset a Fetch at the latest offset reports (Fetch v5+), or -1. For a broker whose EARLIEST
    names an offset below its log start (what the audit is there to find), whose Fetch there answers
    OFFSET_OUT_OF_RANGE, and Kafka's answer to a failed read carries no log start (ReplicaManager's
    LogReadResult for an error: leaderLogStartOffset -1)."""
    latest = impl.list_offsets(topic, partition, LATEST, version=1)
    if latest.error is not ErrorCode.NONE:
        return -1
    response = impl.fetch(topic, partition, latest.offset, fetch_version=fetch_version)
    return response.log_start_offset if response.error is ErrorCode.NONE else -1


def read_log(impl: Implementation, topic: str, *, partition: int = PARTITION, fetch_version: int) -> ObservedLog:
    """Every batch from the log start offset to the high watermark, through the implementation's Fetch."""
    start = impl.list_offsets(topic, partition, EARLIEST, version=1)
    if start.error is not ErrorCode.NONE:
        raise AuditError(f"ListOffsets EARLIEST on {topic}-{partition} answered {start.error.name}")
    offset = max(start.offset, 0)
    log: ObservedLog | None = None
    empty = 0
    while log is None or offset < log.high_watermark:
        response = impl.fetch(topic, partition, offset, fetch_version=fetch_version)
        if response.error is ErrorCode.OFFSET_OUT_OF_RANGE and log is None:
            start_of_log = _log_start_by_fetch(impl, topic, partition, fetch_version)
            if start_of_log > offset:
                offset = start_of_log
                continue
        if response.error is not ErrorCode.NONE:
            raise AuditError(f"Fetch {topic}-{partition} at offset {offset} answered {response.error.name}")
        if log is None:
            log_start = response.log_start_offset if response.log_start_offset >= 0 else start.offset
            log = ObservedLog(topic, partition, log_start, response.high_watermark)
        else:
            log.high_watermark = max(log.high_watermark, response.high_watermark)
        fresh = [b for b in response.batches if b.last_offset >= offset]
        if not fresh:
            empty += 1
            if empty >= _EMPTY_FETCHES:
                raise AuditError(
                    f"Fetch {topic}-{partition} at offset {offset} returned no records {empty} times although "
                    f"the high watermark is {log.high_watermark}"
                )
            continue
        empty = 0
        log.batches.extend(_observed(b) for b in fresh)
        offset = max(b.last_offset for b in fresh) + 1
    return log


def write_records(log: ObservedLog, path: Path) -> Path:
    """The log's records as Parquet (one row per record with its batch's stored fields): the evidence
    a reader can query, and what Spark reads."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns: dict[str, list[Any]] = {
        name: []
        for name in (
            "offset", "timestamp", "batch", "batch_base_offset", "batch_last_offset", "batch_max_timestamp",
            "timestamp_type", "magic", "codec", "leader_epoch", "visible",
        )
    }  # fmt: skip
    for index, batch in enumerate(log.batches):
        for offset, timestamp in batch.records:
            values = (
                offset, timestamp, index, batch.base_offset, batch.last_offset, batch.max_timestamp,
                batch.timestamp_type, batch.magic, batch.codec, batch.leader_epoch,
                log.log_start_offset <= offset < log.high_watermark,
            )  # fmt: skip
            for name, value in zip(columns, values, strict=True):
                columns[name].append(value)
    schema = pa.schema(
        [
            ("offset", pa.int64()), ("timestamp", pa.int64()), ("batch", pa.int64()),
            ("batch_base_offset", pa.int64()), ("batch_last_offset", pa.int64()),
            ("batch_max_timestamp", pa.int64()), ("timestamp_type", pa.string()), ("magic", pa.int32()),
            ("codec", pa.string()), ("leader_epoch", pa.int32()), ("visible", pa.bool_()),
        ]
    )  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns, schema=schema), path)
    return path


# ------------------------------------------------------------------------------------ the ground truth


@dataclass(frozen=True)
class Truth:
    """What a correct broker answers, computed by Spark from the records."""

    first_at_or_after: dict[int, tuple[int, int, int] | None]  # target -> (offset, timestamp, epoch)
    max_timestamp: tuple[int, int, int] | None  # (timestamp, offset, epoch) of LO-6, None on an empty log
    max_batches: int  # batches whose stored max equals the log's max (ties, LO.max-timestamp-earliest-on-ties)
    wrong_batch_max: list[dict[str, Any]]  # CreateTime batches whose stored max is not their record max


def targets_for(timestamps: Sequence[int], most: int = DEFAULT_MAX_TARGETS) -> list[int]:
    """The targets worth asking: every record timestamp and its neighbours (where an off-by-one or a
    `>` for `>=` shows), 0, and beyond the max; evenly thinned to `most`, keeping both ends."""
    seen = sorted({t for t in timestamps if t >= 0})
    wanted = {0}
    for t in seen:
        wanted.update((max(t - 1, 0), t, t + 1))
    if seen:
        wanted.update((seen[-1] + 1, seen[-1] + 1000))
    ordered = sorted(wanted)
    if len(ordered) <= most:
        return ordered
    step = (len(ordered) - 1) / (most - 1)
    return sorted({ordered[round(i * step)] for i in range(most)})


def ground_truth(spark: Any, records: Path, targets: Sequence[int]) -> Truth:
    """Spark SQL over the records' Parquet file (see the module doc for the rules)."""
    frame = spark.read.parquet(str(records))
    frame.createOrReplaceTempView("audit_records")
    spark.createDataFrame([(int(t),) for t in targets], "target long").createOrReplaceTempView("audit_targets")
    # LO-2: a record whose timestamp exceeds every earlier one ("a new maximum") is the first answer for
    # every target in (previous maximum, its timestamp]; the targets join that short list, not every record.
    first = spark.sql(
        """
        WITH visible AS (SELECT offset, timestamp, leader_epoch FROM audit_records WHERE visible),
        maxima AS (
            SELECT offset, timestamp, leader_epoch FROM (
                SELECT *, MAX(timestamp) OVER (ORDER BY offset ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                       AS earlier_max
                FROM visible)
            WHERE timestamp >= 0 AND (earlier_max IS NULL OR timestamp > earlier_max)),
        answers AS (
            SELECT t.target, MIN(m.offset) AS offset FROM audit_targets t
            LEFT JOIN maxima m ON m.timestamp >= t.target GROUP BY t.target)
        SELECT a.target, a.offset, v.timestamp, v.leader_epoch
        FROM answers a LEFT JOIN visible v ON v.offset = a.offset
        """
    ).collect()
    top = spark.sql(
        """
        WITH visible AS (SELECT * FROM audit_records WHERE visible),
        top AS (SELECT MAX(timestamp) AS timestamp FROM visible)
        SELECT top.timestamp, MIN(v.offset) AS offset,
               MIN_BY(v.leader_epoch, v.offset) AS leader_epoch,
               COUNT(DISTINCT v.batch) AS batches
        FROM top JOIN visible v ON v.timestamp = top.timestamp GROUP BY top.timestamp
        """
    ).collect()
    # VAL-13 / CMP-5: a CreateTime batch (v1 or v2) stores the max of its record timestamps.
    wrong = spark.sql(
        """
        SELECT batch, FIRST(batch_base_offset) AS base_offset, FIRST(batch_last_offset) AS last_offset,
               FIRST(batch_max_timestamp) AS stored_max, MAX(timestamp) AS record_max
        FROM audit_records WHERE timestamp_type = 'CREATE_TIME' AND magic >= 1
        GROUP BY batch HAVING FIRST(batch_max_timestamp) <> MAX(timestamp) ORDER BY batch
        """
    ).collect()
    answers: dict[int, tuple[int, int, int] | None] = {}
    for row in first:
        answers[int(row["target"])] = (
            None if row["offset"] is None else (int(row["offset"]), int(row["timestamp"]), int(row["leader_epoch"]))
        )
    max_ts = None
    batches = 0
    if top:
        row = top[0]
        max_ts = (int(row["timestamp"]), int(row["offset"]), int(row["leader_epoch"]))
        batches = int(row["batches"])
    return Truth(answers, max_ts, batches, [r.asDict() for r in wrong])


# -------------------------------------------------------------------------------- asking and comparing


# What the one judge (conformance.judging.judge) calls the evidence of an audit: it is no suite test.
AUDIT_EVIDENCE = "audit"


def covering(violation: ClauseViolation, entries: Sequence[Expectation]) -> Expectation | None:
    """The first entry that covers `violation` in an audit, or None (conformance.judging.expectations.coverer for
    no test: an entry scoped to one suite test, without `scope = "run"`, describes that test's scenario and does not
    apply)."""
    found = coverer(tuple(entries), None)(violation)
    return None if found is None else entries[found]


def clause_verdict(
    clause: str, violations: Sequence[ClauseViolation], entries: Sequence[Expectation], *, asked: bool, applies: bool
) -> Verdict:
    """The verdict of `clause` in an audit, by the one judge (conformance.judging.judge) as for a test of that clause
    alone: FAIL where a violation no entry covers departs (whatever the clause's level: audit mode lets no SHOULD
    through), KNOWN where entries cover every one, PASS where the clause was `asked` about and nothing departed,
    else N/A where it does not apply to the profile and UNSUPPORTED."""
    cover = coverer(tuple(entries), None)
    covered: list[tuple[ClauseViolation, int]] = []
    raised: list[ClauseViolation] = []
    for violation in violations:
        index = cover(violation)
        if index is None:
            raised.append(violation)
        else:
            covered.append((violation, index))
    evidence = Evidence(
        nodeid=AUDIT_EVIDENCE, clauses=(clause,), in_profile=frozenset({clause} if applies else ()),
        held=frozenset({clause} if asked else ()), covered=tuple(covered), raised=tuple(raised),
    )  # fmt: skip
    return judge(evidence, tuple(entries)).verdicts[clause]


@dataclass(frozen=True)
class Disagreement:
    clause: str
    question: str  # e.g. "ListOffsets v9 target 1700000000123"
    expected: str
    answered: str
    evidence: str  # the records around the expected and the answered offsets
    violations: tuple[ClauseViolation, ...]  # one per observable that differs (never empty)

    @property
    def observables(self) -> tuple[Obs, ...]:
        return tuple(v.observable for v in self.violations)

    def verdict(self, entries: Sequence[Expectation]) -> Verdict:
        """KNOWN where an entry covers each of its violations, else FAIL (`clause_verdict`)."""
        return clause_verdict(self.clause, self.violations, entries, asked=True, applies=True)

    def as_dict(self, entries: Sequence[Expectation] = ()) -> dict[str, Any]:
        data: dict[str, Any] = {
            "clause": self.clause,
            "observables": [o.id for o in self.observables],
            "verdict": self.verdict(entries).value,
            "question": self.question,
            "expected": self.expected,
            "answered": self.answered,
            "evidence": self.evidence,
        }
        data["violations"] = [_violation_dict(v, covering(v, entries)) for v in self.violations]
        return data

    def describe(self, entries: Sequence[Expectation]) -> str:
        """One line per observable: what was observed, what was expected and what the expectations say."""
        return "\n".join(_violation_line(v, covering(v, entries)) for v in self.violations)


def _json_value(value: object) -> object:
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, bool | int | str) or value is None:
        return value
    return repr(value)


def _violation_dict(violation: ClauseViolation, entry: Expectation | None) -> dict[str, Any]:
    seen = violation.observation
    return {
        "observable": seen.observable.id,
        "observed": _json_value(seen.observed),
        "expected": _json_value(seen.expected),
        "facts": {name: _json_value(value) for name, value in seen.facts.items()},
        "verdict": (Verdict.KNOWN if entry is not None else Verdict.FAIL).value,
        "entry": None if entry is None else entry.index,
    }


def _violation_line(violation: ClauseViolation, entry: Expectation | None) -> str:
    seen = violation.observation
    shown = {"observed": seen.observed, "expected": seen.expected}
    text = ", ".join(f"{k} {v.name if isinstance(v, Enum) else v}" for k, v in shown.items())
    facts = "".join(f", {name} = {value}" for name, value in seen.facts.items())
    if entry is None:
        return f"{seen.observable.id}: {text}{facts}: {Verdict.FAIL.value}"
    return f"{seen.observable.id}: {text}{facts}: {Verdict.KNOWN.value} (entry {entry.index}: {entry.reason})"


@dataclass
class AuditResult:
    target: str
    profile: str
    topic: str
    list_offsets_version: int
    records: int
    batches: int
    high_watermark: int
    log_start_offset: int
    questions: dict[str, int] = field(default_factory=dict)  # clause -> questions asked about it
    disagreements: list[Disagreement] = field(default_factory=list)
    not_asked: dict[str, str] = field(default_factory=dict)  # clause -> why it was not checked
    # target -> (error, offset, timestamp, epoch) as answered, for every question asked
    answers: dict[int, tuple[int, int, int, int]] = field(default_factory=dict)
    record_digest: str = ""  # sha1 of the visible (offset, timestamp, epoch) rows: same digest, same records
    seconds: float = 0.0
    # The target's expectations entries, which the verdicts are judged against (conformance.judging.expectations).
    expectations: tuple[Expectation, ...] = ()
    # Batches the audit itself sent into the topic (0: a topic it did not write, where no "sent" fact is known).
    sent_batches: int = 0

    def verdicts(self) -> dict[str, Verdict]:
        """Clause -> FAIL (a disagreement on an observable no entry covers) / KNOWN (every disagreement of the
        clause covered) / PASS / UNSUPPORTED / N/A. An expected failure that the audit does not see stays
        PASS here: the audit asks narrower questions than the suites, so its silence does not make an
        expectation stale."""
        violations: dict[str, list[ClauseViolation]] = {}
        for d in self.disagreements:
            violations.setdefault(d.clause, []).extend(d.violations)
        return {
            clause: clause_verdict(
                clause, violations.get(clause, ()), self.expectations, asked=bool(self.questions.get(clause)),
                applies=not self.not_asked.get(clause, "").startswith(NOT_APPLICABLE_PREFIX),
            )
            for clause in sorted(set(self.questions) | set(violations) | set(self.not_asked))
        }  # fmt: skip

    def flagged_targets(self) -> set[int]:
        return {int(d.question.rsplit(" ", 1)[1]) for d in self.disagreements if d.question.startswith("ListOffsets")}

    def as_dict(self) -> dict[str, Any]:
        data = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in ("disagreements", "expectations", "answers")
        }
        data["answers"] = {str(k): v for k, v in self.answers.items()}
        data["disagreements"] = [d.as_dict(self.expectations) for d in self.disagreements]
        data["verdicts"] = {clause: v.value for clause, v in self.verdicts().items()}
        return data


def _newest_version(impl: Implementation, topic: str, partition: int, profile: Profile) -> int:
    """The newest ListOffsets version of the profile this implementation serves (a broker may offer less)."""
    low, high = profile.list_offsets_versions
    for version in range(high, max(low, 1) - 1, -1):
        try:
            impl.list_offsets(topic, partition, LATEST, version=version)
        except UnsupportedOperation:
            continue
        return version
    raise AuditError(f"{impl.name} serves no ListOffsets version with timestamps (v1+) of {profile.name}")


def _describe(log: ObservedLog, offsets: Sequence[int], around: int = 2) -> str:
    """The records near `offsets` as lines a reader can check by eye."""
    wanted = sorted({o for o in offsets if o >= 0})
    lines = []
    for index, batch in enumerate(log.batches):
        near = [o for o in wanted if batch.base_offset - around <= o <= batch.last_offset + around]
        if not near:
            continue
        shown = ", ".join(f"{offset}:{ts}" for offset, ts in batch.records)
        lines.append(
            f"batch {index} offsets {batch.base_offset}-{batch.last_offset} {batch.timestamp_type} v{batch.magic} "
            f"{batch.codec} stored max {batch.max_timestamp} epoch {batch.leader_epoch}: offset:timestamp {shown}"
        )
    return "\n".join(lines[:12]) or "(no records near these offsets)"


def _fmt(answer: ListOffsetsAnswer) -> str:
    epoch = answer.leader_epoch
    return f"error {answer.error.name}, offset {answer.offset}, timestamp {answer.timestamp}, epoch {epoch}"


# The field of a ListOffsets answer each observable names.
_ANSWER_FIELD = {
    Obs.LIST_OFFSETS_ERROR: "error",
    Obs.LIST_OFFSETS_OFFSET: "offset",
    Obs.LIST_OFFSETS_TIMESTAMP: "timestamp",
    Obs.LIST_OFFSETS_EPOCH: "leader_epoch",
}


def log_facts(log: ObservedLog) -> dict[str, object]:
    """Values from the records read that a known ListOffsets offset departure may equal (observables.FACTS; what
    the producer sent is a fact of the stored batches only, `stored_max_disagreements`)."""
    return {"last-batch-base-plus-one": log.batches[-1].base_offset + 1} if log.batches else {}


@dataclass
class _Asker:
    """The questions put to one partition: each asks the implementation, counts the question under its clause
    and records a disagreement where the answer departs from what the records say."""

    impl: Implementation
    topic: str
    partition: int
    version: int
    log: ObservedLog
    result: AuditResult
    sent: Sent | None = None  # what the audit wrote into the topic, where it did

    @property
    def with_epoch(self) -> bool:
        return self.version >= 4  # KIP-320: v1-v3 carry no epoch

    def ask(self, target: int) -> ListOffsetsAnswer:
        answer = self.impl.list_offsets(self.topic, self.partition, target, version=self.version)
        self.result.answers[target] = (int(answer.error), answer.offset, answer.timestamp, answer.leader_epoch)
        return answer

    def question(self, target: int) -> str:
        return f"ListOffsets v{self.version} target {target}"

    def count(self, clause: str) -> None:
        self.result.questions[clause] = self.result.questions.get(clause, 0) + 1

    def compare(
        self,
        clause: str,
        target: int,
        answer: ListOffsetsAnswer,
        wanted: Mapping[Obs, object],
        expected: str,
        offsets: Sequence[int],
        other: Sequence[ClauseViolation] = (),
    ) -> bool:
        """Whether `answer` has the value each observable must have (`wanted`); a disagreement otherwise."""
        asked = self.question(target)
        facts = log_facts(self.log)
        departed = (
            departure(clause, obs, getattr(answer, _ANSWER_FIELD[obs]), value, asked,
                      facts=facts if obs is Obs.LIST_OFFSETS_OFFSET else None)
            for obs, value in wanted.items()
        )  # fmt: skip
        violations = [v for v in departed if v is not None] + list(other)
        if violations:
            self.result.disagreements.append(
                Disagreement(clause, asked, expected, _fmt(answer), _describe(self.log, offsets), tuple(violations))
            )
        return not violations


def audit_partition(
    spark: Any,
    impl: Implementation,
    topic: str,
    *,
    out: Path,
    partition: int = PARTITION,
    max_targets: int = DEFAULT_MAX_TARGETS,
    target_name: str | None = None,
    expectations: Sequence[Expectation] = (),
    sent: Sent | None = None,
) -> AuditResult:
    """Read `topic`, compute the ground truth with Spark, ask the implementation and compare; the verdicts
    are judged against `expectations` (the target's known departures). `sent`: what `populate` wrote into the
    topic, None for a topic the audit did not write (nothing is known of what its producers sent)."""
    began = time.monotonic()
    profile = impl.profile
    log = read_log(impl, topic, partition=partition, fetch_version=profile.fetch_versions[1])
    records_file = write_records(log, out / f"records-{_slug(topic)}-{partition}.parquet")
    visible = log.records()
    targets = targets_for([ts for _, ts, _, _ in visible], max_targets)
    truth = ground_truth(spark, records_file, targets)
    version = _newest_version(impl, topic, partition, profile)
    result = AuditResult(
        target=target_name or impl.name, profile=profile.name, topic=topic, list_offsets_version=version,
        records=len(visible), batches=len(log.batches), high_watermark=log.high_watermark,
        log_start_offset=log.log_start_offset,
        record_digest=hashlib.sha1(repr([(o, t, e) for o, t, _, e in visible]).encode()).hexdigest(),
        expectations=tuple(expectations), sent_batches=len(sent.batches) if sent is not None else 0,
    )  # fmt: skip
    asker = _Asker(impl, topic, partition, version, log, result, sent)
    _ask_timestamps(asker, targets, truth)
    _ask_latest(asker)
    _ask_earliest(asker)
    _ask_max_timestamp(asker, truth)
    _check_stored_max(asker, truth)
    result.seconds = round(time.monotonic() - began, 3)
    return result


def _ask_timestamps(asker: _Asker, targets: Sequence[int], truth: Truth) -> None:
    """LO-1/LO-2: each target answers the first record at or after it, with its own timestamp and its batch's
    epoch; a target past every record answers -1."""
    ok = ErrorCode.NONE
    for target in targets:
        answer = asker.ask(target)
        found = truth.first_at_or_after.get(target)
        if found is None:
            asker.count("LO.not-found-minus-one")
            asker.compare("LO.not-found-minus-one", target, answer,
                          {Obs.LIST_OFFSETS_ERROR: ok, Obs.LIST_OFFSETS_OFFSET: -1, Obs.LIST_OFFSETS_TIMESTAMP: -1},
                          "error NONE, offset -1, timestamp -1 (no record at or after the target)",
                          [answer.offset])  # fmt: skip
            continue
        offset, timestamp, epoch = found
        asker.count("LO.first-ge-target")
        if not asker.compare("LO.first-ge-target", target, answer,
                             {Obs.LIST_OFFSETS_ERROR: ok, Obs.LIST_OFFSETS_OFFSET: offset},
                             f"offset {offset} (the first record with timestamp >= {target}: {timestamp})",
                             [offset, answer.offset]):  # fmt: skip
            continue  # another record was answered: its timestamp and epoch say nothing about this one
        asker.count("LO.record-own-timestamp")
        asker.compare("LO.record-own-timestamp", target, answer, {Obs.LIST_OFFSETS_TIMESTAMP: timestamp},
                      f"timestamp {timestamp} (offset {offset}'s own)", [offset])  # fmt: skip
        if asker.with_epoch:
            asker.count("LO.epoch-of-found-batch")
            asker.compare("LO.epoch-of-found-batch", target, answer, {Obs.LIST_OFFSETS_EPOCH: epoch},
                          f"epoch {epoch} (the batch holding offset {offset})", [offset])  # fmt: skip


def _ask_latest(asker: _Asker) -> None:
    log = asker.log
    latest = asker.ask(LATEST)
    asker.count("LO.latest-is-high-watermark")
    # LO-4: the current leader epoch, which is at least the epoch of the newest batch (epochs never go back):
    # a bound, not a value, so it is checked as the suites' check_true is (observed, and the rule in words).
    newest_epoch = max((b.leader_epoch for b in log.batches), default=-1)
    epoch_rule = f"epoch >= {newest_epoch} (the newest batch's)"
    epoch_wrong = unmet("LO.latest-is-high-watermark", Obs.LIST_OFFSETS_EPOCH, latest.leader_epoch >= newest_epoch,
                        latest.leader_epoch, asker.question(LATEST), expectation=epoch_rule)  # fmt: skip
    wanted = {
        Obs.LIST_OFFSETS_ERROR: ErrorCode.NONE, Obs.LIST_OFFSETS_OFFSET: log.high_watermark,
        Obs.LIST_OFFSETS_TIMESTAMP: -1,
    }  # fmt: skip
    asker.compare("LO.latest-is-high-watermark", LATEST, latest, wanted,
                  f"offset {log.high_watermark} (the high watermark Fetch reported), timestamp -1"
                  + (f", {epoch_rule}" if asker.with_epoch else ""), [log.high_watermark - 1],
                  [epoch_wrong] if asker.with_epoch and epoch_wrong is not None else [])  # fmt: skip


def _ask_earliest(asker: _Asker) -> None:
    log = asker.log
    earliest = asker.ask(EARLIEST)
    asker.count("LO.earliest-is-log-start")
    # LO-5: the epoch of the batch at the log start offset (the epoch cache is truncated to it).
    first_batch = log.batch_of(log.log_start_offset)
    start_epoch = first_batch.leader_epoch if first_batch is not None else None
    wanted: dict[Obs, object] = {
        Obs.LIST_OFFSETS_ERROR: ErrorCode.NONE, Obs.LIST_OFFSETS_OFFSET: log.log_start_offset,
        Obs.LIST_OFFSETS_TIMESTAMP: -1,
    }  # fmt: skip
    if asker.with_epoch and start_epoch is not None:
        wanted[Obs.LIST_OFFSETS_EPOCH] = start_epoch
    asker.compare("LO.earliest-is-log-start", EARLIEST, earliest, wanted,
                  f"offset {log.log_start_offset} (the log start offset Fetch reported), timestamp -1"
                  + (f", epoch {start_epoch} (its batch's)" if Obs.LIST_OFFSETS_EPOCH in wanted else ""),
                  [log.log_start_offset])  # fmt: skip


def _check_stored_max(asker: _Asker, truth: Truth) -> None:
    asker.count("VAL.header-max-recomputed")
    asker.result.disagreements += stored_max_disagreements(asker.log, truth.wrong_batch_max, asker.sent)


def stored_max_disagreements(
    log: ObservedLog, wrong_batch_max: Sequence[Mapping[str, Any]], sent: Sent | None
) -> list[Disagreement]:
    """VAL-4 / VAL-13: a CreateTime batch is stored with the largest of its records' timestamps as its max.
    One disagreement per batch of `wrong_batch_max` (Truth.wrong_batch_max: base_offset, last_offset,
    stored_max, record_max), whose violation knows the producer's MaxTimestamp ("sent") where the audit sent
    that batch itself."""
    out = []
    for wrong in wrong_batch_max:
        base, last = int(wrong["base_offset"]), int(wrong["last_offset"])
        asked = f"Fetch batch {base}-{last}"
        stored, record_max = int(wrong["stored_max"]), int(wrong["record_max"])
        as_sent = sent.batch_at(base, last) if sent is not None else None
        evidence = _describe(log, [base], around=0)
        facts: dict[str, object] = {}
        if as_sent is not None:
            facts["sent"] = as_sent.max_timestamp  # FACTS "sent": what the producer wrote in this field
            shown = ", ".join(map(str, as_sent.timestamps))
            evidence += f"\nas sent: MaxTimestamp {as_sent.max_timestamp}, record timestamps {shown}"
        violation = departure("VAL.header-max-recomputed", Obs.BATCH_MAX_TIMESTAMP, stored, record_max, asked,
                              facts=facts)  # fmt: skip
        if violation is None:  # Truth.wrong_batch_max holds only batches whose stored max differs
            continue
        expected = f"stored max timestamp {record_max} (the largest record timestamp of a CreateTime batch)"
        out.append(
            Disagreement(
                "VAL.header-max-recomputed", asked, expected, f"stored max timestamp {stored}", evidence, (violation,)
            )
        )
    return out


def _ask_max_timestamp(asker: _Asker, truth: Truth) -> None:
    impl, version, log, result = asker.impl, asker.version, asker.log, asker.result
    clauses = ("LO.max-timestamp-first-record", "LO.max-timestamp-lat-batch-first-record",
               "LO.max-timestamp-earliest-on-ties", "LO.max-timestamp-empty")  # fmt: skip
    if impl.profile.max_timestamp_lookup is not MaxTimestampLookup.EXACT:
        for clause in clauses:
            result.not_asked[clause] = (
                f"{NOT_APPLICABLE_PREFIX}{impl.profile.name} does not answer MAX_TIMESTAMP exactly (LO-6)"
            )
        return
    if Capability.MAX_TIMESTAMP_LOOKUP not in impl.capabilities or version < 7:
        for clause in clauses:
            result.not_asked[clause] = f"MAX_TIMESTAMP needs ListOffsets v7 (KIP-734); {impl.name} serves v{version}"
        return
    if any(b.magic == 0 for b in log.batches):
        for clause in clauses:
            result.not_asked[clause] = "the log holds v0 batches, whose answer LO-6 leaves to the segment"
        return
    answer = asker.ask(MAX_TIMESTAMP)
    ok = ErrorCode.NONE
    if truth.max_timestamp is None:
        asker.count("LO.max-timestamp-empty")
        asker.compare("LO.max-timestamp-empty", MAX_TIMESTAMP, answer,
                      {Obs.LIST_OFFSETS_ERROR: ok, Obs.LIST_OFFSETS_OFFSET: -1, Obs.LIST_OFFSETS_TIMESTAMP: -1},
                      "offset -1, timestamp -1 (empty log)", [], ())  # fmt: skip
        return
    timestamp, offset, epoch = truth.max_timestamp
    batch = log.batch_of(offset)
    if batch is not None and batch.timestamp_type == TimestampType.LOG_APPEND_TIME.name:
        clause = "LO.max-timestamp-lat-batch-first-record"
    else:
        clause = "LO.max-timestamp-first-record"
    wanted: dict[Obs, object] = {
        Obs.LIST_OFFSETS_ERROR: ok, Obs.LIST_OFFSETS_OFFSET: offset, Obs.LIST_OFFSETS_TIMESTAMP: timestamp,
    }  # fmt: skip
    if version >= 4:
        wanted[Obs.LIST_OFFSETS_EPOCH] = epoch
    answered_in = log.batch_of(answer.offset)
    if answered_in is not None and answered_in is not batch and answered_in.max_timestamp == timestamp:
        clause = "LO.max-timestamp-earliest-on-ties"  # a later batch reaching the same max was answered
    asker.count(clause)
    expected = (
        f"timestamp {timestamp} at offset {offset} epoch {epoch} (the first record holding the log's largest "
        f"timestamp, in the earliest of {truth.max_batches} batch(es) reaching it)"
    )
    agreed = asker.compare(clause, MAX_TIMESTAMP, answer, wanted, expected, [offset, answer.offset])
    if truth.max_batches > 1 and agreed:
        asker.count("LO.max-timestamp-earliest-on-ties")  # ties resolved rightly (a wrong tie is counted above)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


# ------------------------------------------------------------------------------------ the workload


@dataclass(frozen=True)
class Workload:
    """A seeded workload for `populate`; the same seed writes the same batches (and, on an implementation
    with clock control, at the same broker times)."""

    seed: int = 1
    batches: int = 60
    start_ms: int = 1_700_000_000_000  # broker time where the suite sets the clock


def _record_specs(rng: random.Random, now: int, pool: list[int], size: int) -> list[RecordSpec]:
    specs = []
    for _ in range(size):
        if pool and rng.random() < 0.35:
            timestamp = rng.choice(pool)  # a repeat: where first-vs-last and ties show
        else:
            timestamp = now - rng.randrange(0, 600_000)  # the past ten minutes, out of order
            pool.append(timestamp)
        specs.append(RecordSpec(timestamp=timestamp, key=b"k%d" % rng.randrange(10), value=b"v" * rng.randrange(1, 40)))
    return specs


def populate(
    impl: Implementation,
    topic: str,
    workload: Workload,
    *,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
) -> Sent:
    """Create `topic` and write the workload into it; returns what was sent, batch by batch (`Sent.counts`: how
    many batches were accepted and rejected)."""
    profile = impl.profile
    caps = impl.capabilities
    rng = random.Random(f"{workload.seed}-{timestamp_type.name}")
    clocked = Capability.CLOCK_CONTROL in caps
    # Small segments and an index entry per append where the suite runs the broker's log (the model and
    # mutants): lookups then cross segments and time-index entries (IDX-4, IDX-8). A real broker keeps its
    # own segment sizes (Kafka 4.0 refuses segment.bytes below 1 MiB).
    config = TopicConfig(timestamp_type=timestamp_type, retention_ms=-1)
    if clocked:
        config = dataclasses.replace(config, segment_bytes=2048, index_interval_bytes=1)
    # Where the suite drives the clock and retention, the CreateTime topic loses the segments before the
    # one holding the peak (IDX-10: the peak's future timestamp shields it and every later segment), so
    # the log start offset moves and EARLIEST is worth asking (LO-5).
    retain = clocked and Capability.RETENTION in caps and timestamp_type is TimestampType.CREATE_TIME
    if retain:
        config = dataclasses.replace(config, retention_ms=RETENTION_MS)
    impl.create_topic(topic, config)
    magic = profile.max_magic
    codecs = [Codec.NONE, Codec.NONE]
    if Capability.COMPRESSION in caps:
        codecs += [Codec.GZIP, Codec.LZ4, Codec.SNAPPY]
    if Capability.ZSTD in caps and magic == MAGIC_V2:
        codecs.append(Codec.ZSTD)
    produce_version = profile.produce_versions[1] if magic == MAGIC_V2 else 2
    now = workload.start_ms if clocked else impl.clock(0)
    # Ten minutes ahead of the first batch: above every other record, inside the 1 h after-bound (KIP-1030).
    peak = now + 600_000
    pool: list[int] = []
    # Twice in a row (a tie of the segment max inside one segment, IDX-3/IDX-5) and once much later.
    peak_at = {workload.batches // 3, workload.batches // 3 + 1, (2 * workload.batches) // 3}
    sent: list[SentBatch] = []
    for index in range(workload.batches + (TAIL_BATCHES if retain else 0)):
        if retain and index == workload.batches:
            # Every segment before the peak's is now older than retention.ms; a few young batches follow,
            # so the log keeps records even where retention took more than it should.
            now += RETENTION_MS + 1_000
            for broker in impl.brokers():
                impl.set_clock(broker, now)
            impl.retention_tick()
        if clocked:
            now += rng.randrange(1, 50)
            for broker in impl.brokers():
                impl.set_clock(broker, now)
        else:
            now = impl.clock(0)
        specs = _record_specs(rng, now, pool, rng.choice((1, 1, 2, 3, 5)))
        if index in peak_at:
            # The log's largest timestamp twice in one batch and again in a later one (LO-6: the first
            # record of the earliest batch; KAFKA-16310 answered a batch's last offset).
            specs[1:1] = [RecordSpec(peak, b"peak", b"1"), RecordSpec(peak, b"peak", b"2")]
        codec = rng.choice(codecs)
        batches = build_batches(specs, magic=magic, codec=codec, timestamp_type=TimestampType.CREATE_TIME)
        lowest = min(spec.timestamp for spec in specs)
        if magic == MAGIC_V2 and lowest < max(spec.timestamp for spec in specs) and rng.random() < 0.4:
            # A producer whose header MaxTimestamp lies (its smallest record timestamp): a CreateTime broker
            # recomputes it (VAL-13).
            first = batches[0]
            assert isinstance(first, DefaultBatch)
            batches = (dataclasses.replace(first, max_timestamp=lowest, crc=None),)
        response = impl.produce(topic, PARTITION, batches, produce_version=produce_version)
        sent += _sent_batches(batches, response.base_offset, response.error is ErrorCode.NONE)
    return Sent(topic, tuple(sent))


def build(factory: Any) -> Implementation:
    """The implementation of `factory`, its profile's API versions narrowed to what it offers (as the pytest
    plugin does: a client negotiates through ApiVersions and asks only versions both sides serve)."""
    from models.profiles import narrow_versions

    impl: Implementation = factory.build()
    offered = getattr(factory, "offered_versions", None)
    if callable(offered):
        impl.profile = narrow_versions(impl.profile, offered())
    return impl


def audit_generated(
    spark: Any,
    impl: Implementation,
    workload: Workload,
    *,
    out: Path,
    target_name: str | None = None,
    max_targets: int = DEFAULT_MAX_TARGETS,
    expectations: Sequence[Expectation] = (),
) -> list[AuditResult]:
    """Populate a CreateTime topic (and a LogAppendTime one where the implementation has them) with
    `workload` and audit each, judged against `expectations`; each stored batch is compared with what was sent
    too (an entry `observed_is = "sent"` applies)."""
    kinds = [TimestampType.CREATE_TIME]
    if Capability.LOG_APPEND_TIME in impl.capabilities:
        kinds.append(TimestampType.LOG_APPEND_TIME)
    results = []
    for kind in kinds:
        topic = f"audit-{'lat' if kind is TimestampType.LOG_APPEND_TIME else 'ct'}-{workload.seed}"
        sent = populate(impl, topic, workload, timestamp_type=kind)
        if not sent.counts["accepted"]:
            raise AuditError(f"{impl.name} rejected every batch of the workload on {topic}: nothing to audit")
        results.append(audit_partition(spark, impl, topic, out=out, target_name=target_name, max_targets=max_targets,
                                       expectations=expectations, sent=sent))  # fmt: skip
    return results


# ------------------------------------------------------------------------------------- reports


def triage(disagreements: Sequence[Disagreement], entries: Sequence[Expectation]) -> list[Disagreement]:
    """What needs action first: the disagreements no entry covers, then the known ones; within each, the
    first of every (clause, observables) kind before the second of any, so a short list shows every kind."""
    seen: dict[tuple[str, tuple[Obs, ...]], int] = {}
    keyed = []
    for d in disagreements:
        kind = (d.clause, d.observables)
        seen[kind] = seen.get(kind, 0) + 1
        keyed.append((d.verdict(entries) is not Verdict.FAIL, seen[kind], d))
    return [d for *_, d in sorted(keyed, key=lambda k: k[:2])]


def _sent_note(result: AuditResult) -> str:
    if result.sent_batches:
        return f"The audit wrote this topic ({result.sent_batches} batches): what the producer sent is known."
    return 'The audit did not write this topic: what its producers sent is not known (no "sent" fact).'


def write_report(results: Sequence[AuditResult], out: Path) -> tuple[Path, Path]:
    """audit.json (everything, for tools) and audit.md (for people): per topic the clause verdicts and
    every disagreement with its observables, each judged against the result's expectations, and its
    evidence."""
    out.mkdir(parents=True, exist_ok=True)
    data = [r.as_dict() for r in results]
    json_path = out / "audit.json"
    json_path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    lines = ["# Audit: ListOffsets answers against the records (Spark ground truth)", ""]
    for r in results:
        lines += [
            f"## {r.target} ({r.profile}), topic `{r.topic}`",
            "",
            f"{r.records} records in {r.batches} batches, log start {r.log_start_offset}, high watermark "
            f"{r.high_watermark}; ListOffsets v{r.list_offsets_version}; {sum(r.questions.values())} questions, "
            f"{len(r.disagreements)} disagreement(s), {r.seconds:.1f} s. {_sent_note(r)}",
            "",
            "| Clause | Verdict | Questions | Disagreements |",
            "|---|---|---|---|",
        ]
        for clause, verdict in r.verdicts().items():
            wrong = [d for d in r.disagreements if d.clause == clause]
            note = f" ({r.not_asked[clause]})" if clause in r.not_asked else ""
            departed = ", ".join(dict.fromkeys(o.id for d in wrong for o in d.observables))
            shown = f"{len(wrong)} ({departed})" if wrong else "0"
            lines.append(f"| `{clause}` | {verdict.value}{note} | {r.questions.get(clause, 0)} | {shown} |")
        for d in triage(r.disagreements, r.expectations)[:50]:
            observables = ", ".join(o.id for o in d.observables)
            lines += ["", f"### {d.verdict(r.expectations).value} {d.clause} on {observables}: {d.question}", "",
                      f"- expected: {d.expected}", f"- answered: {d.answered}",
                      *(f"- {line}" for line in d.describe(r.expectations).splitlines()),
                      "", "```", d.evidence, "```"]  # fmt: skip
        if len(r.disagreements) > 50:
            lines += ["", f"... and {len(r.disagreements) - 50} more in audit.json"]
        lines.append("")
    md_path = out / "audit.md"
    md_path.write_text("\n".join(lines), encoding="utf-8")
    return json_path, md_path


@dataclass(frozen=True)
class AuditTask:
    """One target's audit in a campaign's rows: `engine.write_rows` files its rows under `task_id`, which is
    also every row's task_id (what --resume and the matrix's task list key on)."""

    target: str
    profile: str

    @property
    def task_id(self) -> str:
        return "audit-" + _slug(f"{self.target}-{self.profile}")


def _row(task: AuditTask, campaign_id: str, seed: int, **fields: Any) -> dict[str, Any]:
    base = {"campaign_id": campaign_id, "task_id": task.task_id, "target": task.target, "machine": "audit",
            "profile": task.profile, "seed": seed, "replay": "", "finished_at": time.time()}  # fmt: skip
    return base | fields


def audit_rows(
    results: Sequence[AuditResult], task: AuditTask, *, campaign_id: str, seed: int,
    implementation_version: str | None = None,
) -> list[dict[str, Any]]:
    """The audits of one target as campaign rows (conformance.campaign.rows.ROW_FIELDS), one per clause
    and topic: the matrix and the Allure results show audits beside the Hypothesis tasks (suite "audit").
    A row's counterexample lists its disagreements, those no entry covers first, each with its observables.
    `implementation_version`: the version the audited implementation said it is."""
    rows = []
    for result in results:
        for clause, verdict in result.verdicts().items():
            wrong = triage([d for d in result.disagreements if d.clause == clause], result.expectations)
            text = "\n\n".join(
                f"{d.question} on {', '.join(o.id for o in d.observables)}: {d.verdict(result.expectations).value}\n"
                f"expected: {d.expected}\nanswered: {d.answered}\n{d.describe(result.expectations)}\n{d.evidence}"
                for d in wrong[:20]
            ) or result.not_asked.get(clause, "")
            rows.append(_row(
                task, campaign_id, seed, clause=clause, verdict=verdict.value, status=TaskStatus.OK.value, tests=1,
                examples=result.questions.get(clause, 0), task_examples=sum(result.questions.values()),
                counterexample=f"topic {result.topic}\n{text}"[:20_000],
                first_failure_s=result.seconds if wrong else None, task_seconds=result.seconds,
                implementation_version=implementation_version,
            ))  # fmt: skip
    return rows


def crash_row(task: AuditTask, campaign_id: str, seed: int, text: str) -> dict[str, Any]:
    """The row of an audit that could not run (the target did not start, the topic was unreadable)."""
    return _row(task, campaign_id, seed, clause="*", verdict=Verdict.CRASHED.value, status=TaskStatus.CRASHED.value,
                tests=0, examples=0, task_examples=0, counterexample=text, first_failure_s=None,
                task_seconds=0.0)  # fmt: skip
