"""A Kafka cluster in miniature: brokers with their own clocks, replicated partitions, leader
failover (docs/rules.md, REP-1..4), and the request handlers a client sees (Produce, Fetch,
ListOffsets) on top of the pure validator and the partition log.

State lives here and in each replica's `PartitionLog`; time is never read from the system: each
broker has a clock the caller sets, advances or steps backwards (clock skew, NTP steps).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

from .codec import decode_batches, encode_batches
from .config import TopicConfig, check_config
from .constants import (
    CONSUMER_REPLICA_ID,
    NOT_SERVED,
    ErrorCode,
    IsolationLevel,
)
from .conversion import fetch_view
from .errors import CodecError, ModelError
from .list_offsets import ListOffsetsAnswer, list_offsets
from .log import PartitionLog
from .profiles import DEFAULT_PROFILE, Profile, RecordErrorsStyle
from .records import AnyBatch, ConsumerRecord, DefaultBatch, all_records
from .validator import (
    AppendOrigin,
    AppendRejected,
    RecordError,
    ValidatedAppend,
    check_produce_request,
    validate_and_assign,
)

PRODUCER_BATCHES_RETAINED = 5  # batch metadata a broker keeps per producer for duplicate detection


def find_duplicate(stored: Sequence[AnyBatch], incoming: Sequence[AnyBatch]) -> DefaultBatch | None:
    """VAL-12: the stored batch an idempotent retry duplicates, or None. A retry is a single v2 batch
    with a producer id whose (epoch, first sequence, last sequence) equals one of the last
    `PRODUCER_BATCHES_RETAINED` batches stored for that producer."""
    if len(incoming) != 1 or not isinstance(incoming[0], DefaultBatch):
        return None
    batch = incoming[0]
    if batch.producer_id < 0 or batch.base_sequence < 0:
        return None
    last_sequence = batch.base_sequence + batch.last_offset_delta
    seen = 0
    for candidate in reversed(stored):
        if not isinstance(candidate, DefaultBatch) or candidate.producer_id != batch.producer_id:
            continue
        if (
            candidate.producer_epoch == batch.producer_epoch
            and candidate.base_sequence == batch.base_sequence
            and candidate.base_sequence + candidate.last_offset_delta == last_sequence
        ):
            return candidate
        seen += 1
        if seen >= PRODUCER_BATCHES_RETAINED:
            break
    return None


class ClusterError(ModelError):
    """A cluster operation that cannot be carried out (unknown topic or broker, no live replica)."""



# The errors whose exceptions Kafka's ReplicaManager.appendToLocalLog answers with UNKNOWN_LOG_APPEND_INFO
# (log_start_offset -1): CorruptRecordException, RecordTooLargeException, RecordBatchTooLargeException (and the
# not-leader, unknown-partition and storage errors, which this model answers elsewhere). VAL-11.
_UNKNOWN_APPEND_INFO = frozenset(
    {ErrorCode.CORRUPT_MESSAGE, ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE}
)


@dataclass(frozen=True)
class ProduceResponse:
    """One partition's produce answer (VAL-11, VAL-12)."""

    error: ErrorCode
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    error_message: str | None = None
    record_errors: tuple[RecordError, ...] = ()

    def as_of_version(self, version: int) -> ProduceResponse:
        """The fields a ProduceResponse of `version` can carry: log_append_time from v2 (KIP-32),
        log_start_offset from v5, record_errors and error_message from v8 (KIP-467, VAL-11)."""
        return replace(
            self,
            log_append_time=self.log_append_time if version >= 2 else -1,
            log_start_offset=self.log_start_offset if version >= 5 else -1,
            error_message=self.error_message if version >= 8 else None,
            record_errors=self.record_errors if version >= 8 else (),
        )


@dataclass(frozen=True)
class FetchResponse:
    error: ErrorCode
    batches: tuple[AnyBatch, ...] = ()
    high_watermark: int = -1
    log_start_offset: int = -1

    def records(self) -> tuple[ConsumerRecord, ...]:
        """CON-1: what a consumer sees of the fetched batches."""
        return all_records(self.batches)

    def as_of_version(self, version: int) -> FetchResponse:
        """The fields a FetchResponse of `version` can carry: log_start_offset from v5 (KIP-107,
        FetchResponse.json "LogStartOffset" versions 5+)."""
        return self if version >= 5 else replace(self, log_start_offset=-1)


@dataclass
class Broker:
    broker_id: int
    clock: int
    alive: bool = True


@dataclass
class Partition:
    topic: str
    index: int
    config: TopicConfig
    replicas: dict[int, PartitionLog]
    leader: int
    leader_epoch: int = 0
    # Followers that have copied everything the leader has; only they may become leader cleanly.
    isr: set[int] = field(default_factory=set)


class Cluster:
    """Brokers, topics and partitions. Produce goes to the leader, which validates with its own clock
    (VAL-2, REP-2); followers copy the leader's batches verbatim (REP-1); `elect_leader` moves
    leadership, bumps the leader epoch and truncates diverging replicas (IDX-14).

    The seams below (`log_class` and the four produce-path methods) are identities here. They exist so
    that a seeded fault (conformance/faults/) overrides one step of the leader's produce
    path, the way a real implementation gets one step wrong, without restating the rest of it."""

    log_class: ClassVar[type[PartitionLog]] = PartitionLog

    def __init__(
        self,
        *,
        profile: Profile = DEFAULT_PROFILE,
        broker_ids: Sequence[int] = (0, 1, 2),
        start_time: int = 0,
        auto_replicate: bool = True,
    ) -> None:
        if not broker_ids:
            raise ClusterError("a cluster needs at least one broker")
        self.profile = profile
        self.brokers: dict[int, Broker] = {b: Broker(b, start_time) for b in broker_ids}
        self.partitions: dict[tuple[str, int], Partition] = {}
        # acks=all producers: replicate to every live in-sync follower before answering.
        self.auto_replicate = auto_replicate

    # ---------------------------------------------------------------- clocks (REP-2, REP-3)

    def clock(self, broker_id: int) -> int:
        return self._broker(broker_id).clock

    def set_clock(self, broker_id: int, now: int) -> None:
        """Set a broker's wall clock; may step backwards (nothing clamps it, REP-2)."""
        self._broker(broker_id).clock = now

    def advance_clock(self, broker_id: int, delta_ms: int) -> None:
        self._broker(broker_id).clock += delta_ms

    def advance_all_clocks(self, delta_ms: int) -> None:
        for b in self.brokers.values():
            b.clock += delta_ms

    # ---------------------------------------------------------------- topics

    def create_topic(
        self,
        topic: str,
        config: TopicConfig | None = None,
        *,
        partitions: int = 1,
        replication_factor: int | None = None,
    ) -> None:
        config = config or TopicConfig()
        check_config(config, self.profile)
        if any(t == topic for t, _ in self.partitions):
            raise ClusterError(f"topic {topic!r} already exists")
        ids = sorted(self.brokers)
        rf = len(ids) if replication_factor is None else replication_factor
        if not 1 <= rf <= len(ids):
            raise ClusterError(f"replication factor {rf} needs 1..{len(ids)} brokers")
        for p in range(partitions):
            replica_ids = [ids[(p + i) % len(ids)] for i in range(rf)]
            logs = {
                b: self.log_class(config, self.profile, now=self.brokers[b].clock) for b in replica_ids
            }
            leader = replica_ids[0]
            part = Partition(topic, p, config, logs, leader, 0, set(replica_ids))
            logs[leader].assign_epoch(0, 0)
            self.partitions[(topic, p)] = part

    def alter_config(self, topic: str, config: TopicConfig) -> None:
        check_config(config, self.profile)
        for (t, _), part in self.partitions.items():
            if t == topic:
                part.config = config
                for log in part.replicas.values():
                    log.config = config

    def partition(self, topic: str, index: int = 0) -> Partition:
        try:
            return self.partitions[(topic, index)]
        except KeyError:
            raise ClusterError(f"unknown topic-partition {topic}-{index}") from None

    def leader_log(self, topic: str, index: int = 0) -> PartitionLog:
        part = self.partition(topic, index)
        return part.replicas[part.leader]

    # ---------------------------------------------------------------- produce (VAL-*, CMP-*)

    def produce(
        self,
        topic: str,
        index: int,
        batches: Sequence[AnyBatch],
        *,
        produce_version: int | None = None,
        origin: AppendOrigin = AppendOrigin.CLIENT,
    ) -> ProduceResponse:
        """A produce request for one partition, answered by the leader with its own clock. With a
        `produce_version` the request-level checks run (VAL-14, CNV-1) and the response carries only
        the fields of that version."""
        response = self._produce(topic, index, batches, produce_version=produce_version, origin=origin)
        return response if produce_version is None else response.as_of_version(produce_version)

    def _produce(
        self,
        topic: str,
        index: int,
        batches: Sequence[AnyBatch],
        *,
        produce_version: int | None,
        origin: AppendOrigin,
    ) -> ProduceResponse:
        part = self.partition(topic, index)
        leader = self.brokers[part.leader]
        log = part.replicas[part.leader]
        if not leader.alive:
            return ProduceResponse(ErrorCode.LEADER_NOT_AVAILABLE, log_start_offset=log.log_start_offset)
        if produce_version is not None:
            rejected = self.request_refusal(batches, produce_version)
            if rejected is not None:  # refused before the log is reached: no log start offset (VAL-11)
                return self._rejection(rejected, log, request_level=True)
        now = self.append_time(part, leader.clock)  # VAL-2: one reading for the whole partition append
        prepared = self.pre_validate(part, batches, now)
        if isinstance(prepared, AppendRejected):
            return self._rejection(prepared, log)
        config, profile = self.validation_inputs(part)
        outcome = validate_and_assign(
            prepared,
            config=config,
            profile=profile,
            now=now,
            next_offset=log.log_end_offset,
            leader_epoch=part.leader_epoch,
            origin=origin,
            topic_partition=f"{topic}-{index}",
        )
        if isinstance(outcome, AppendRejected):
            return self._rejection(outcome, log)
        outcome = self.post_validate(part, outcome, batches, now)
        too_large = self.segment_overflow(outcome, config, f"{topic}-{index}")
        if too_large is not None:
            return self._rejection(too_large, log)
        # VAL-12: duplicate detection runs after validation, so a retried duplicate that is now out of
        # range is rejected above instead of being de-duplicated here.
        duplicate_answer = self.duplicate_answer(part, outcome.batches, now)
        if duplicate_answer is not None:
            return duplicate_answer
        log.append(
            outcome.batches,
            now=now,
            max_timestamp=outcome.max_timestamp,
            offset_of_max_timestamp=outcome.offset_of_max_timestamp,
        )
        if self.auto_replicate:
            self.replicate(topic, index)
        self._advance_high_watermark(part)
        return ProduceResponse(
            ErrorCode.NONE,
            base_offset=outcome.first_offset,
            # VAL-12: the append's `now` on LogAppendTime topics, -1 on CreateTime topics.
            log_append_time=outcome.log_append_time,
            log_start_offset=log.log_start_offset,
        )

    # ---------------------------------------------------------------- seams of the produce path

    def segment_overflow(
        self, outcome: ValidatedAppend, config: TopicConfig, topic_partition: str
    ) -> AppendRejected | None:
        """The validated records of one append must fit in a segment (a request-level limit beside VAL-14's, with
        VAL-11's answer; not in the rule digest). Kafka's UnifiedLog.append, after
        validation and before duplicate detection: `validRecords.sizeInBytes > config.segmentSize` throws
        RecordBatchTooLargeException, answered RECORD_LIST_TOO_LARGE with no message and log start offset -1
        (ReplicaManager.appendToLocalLog). Sizes are this codec's encoding: a batch recompressed to the topic's
        codec may differ from Kafka's by the compressor's output, so only a size at the very limit can differ."""
        size = len(encode_batches(outcome.batches))
        if size <= config.segment_bytes:
            return None
        return AppendRejected(
            ErrorCode.RECORD_LIST_TOO_LARGE,
            None,
            (),
            f"Message batch size is {size} bytes in append to partition {topic_partition}, which exceeds the "
            f"maximum configured segment size of {config.segment_bytes}.",
        )

    def request_refusal(self, batches: Sequence[AnyBatch], produce_version: int) -> AppendRejected | None:
        """The request-level checks before the log (VAL-14, CNV-1): a version the profile does not serve
        (NOT_SERVED), then the v3+ shape of the records."""
        return check_produce_request(batches, produce_version=produce_version, profile=self.profile)

    def append_time(self, part: Partition, clock: int) -> int:
        """The leader's `now` for this append: its clock reading (VAL-2)."""
        return clock

    def pre_validate(
        self, part: Partition, batches: Sequence[AnyBatch], now: int
    ) -> Sequence[AnyBatch] | AppendRejected:
        """What the validator is given: the batches as sent."""
        return batches

    def validation_inputs(self, part: Partition) -> tuple[TopicConfig, Profile]:
        """The topic configuration and behaviour profile the validator applies."""
        return part.config, self.profile

    def post_validate(
        self, part: Partition, outcome: ValidatedAppend, sent: Sequence[AnyBatch], now: int
    ) -> ValidatedAppend:
        """What is stored and answered: the validator's outcome."""
        return outcome

    def duplicate_answer(self, part: Partition, batches: Sequence[AnyBatch], now: int) -> ProduceResponse | None:
        """VAL-12: the answer to an idempotent retry of a batch already in the leader's log (None for a new
        append): the cached batch's base offset and MaxTimestamp, even on a CreateTime topic."""
        # Only an idempotent producer's batch can be a duplicate: skip listing the log otherwise.
        if not any(isinstance(b, DefaultBatch) and b.producer_id >= 0 for b in batches):
            return None
        log = part.replicas[part.leader]
        duplicate = find_duplicate(log.batches(), batches)
        if duplicate is None:
            return None
        return ProduceResponse(
            ErrorCode.NONE,
            base_offset=duplicate.base_offset,
            log_append_time=duplicate.max_timestamp,
            log_start_offset=log.log_start_offset,
        )

    def produce_bytes(
        self, topic: str, index: int, data: bytes, *, produce_version: int | None = None
    ) -> ProduceResponse:
        """A produce request carrying raw record-set bytes, as a broker receives them. CRCs are
        checked by the validator (VAL-9); bytes that do not decode at all are CORRUPT_MESSAGE. A v2
        RecordsCount that disagrees with the whole records held decodes: Kafka refuses it in the validator's
        record iterator with INVALID_RECORD, after the CRC and batch checks (VAL-14)."""
        try:
            batches = decode_batches(data, verify_crc=False, legacy_zstd=True, keep_count_lies=True)
        except CodecError:
            # Kafka: a CorruptRecordException from ByteBufferLogInputStream, answered as UNKNOWN_LOG_APPEND_INFO
            # (log_start_offset -1) with no custom message (VAL-11, ReplicaManager.appendToLocalLog).
            return ProduceResponse(ErrorCode.CORRUPT_MESSAGE, base_offset=-1, log_append_time=-1, log_start_offset=-1)
        return self.produce(topic, index, batches, produce_version=produce_version)

    def _rejection(
        self, rejected: AppendRejected, log: PartitionLog, *, request_level: bool = False
    ) -> ProduceResponse:
        """VAL-11: base_offset -1, log_append_time -1; nothing written. log_start_offset is the partition's for a
        rejection the log's validation raised (Kafka's ReplicaManager.appendToLocalLog: RecordValidationException
        and any other exception go through processFailedRecord), and -1 where Kafka answers UNKNOWN_LOG_APPEND_INFO:
        a request refused before the log (KafkaApis: ProduceRequest.validateRecords, a PartitionResponse with
        only the error), a CorruptRecordException (a CRC that does not match), a record or batch too large.
        Before KIP-467 (2.4; a profile with no record errors) INVALID_RECORD (87) did not exist: an
        InvalidRecordException was a CorruptRecordException, answered CORRUPT_MESSAGE (2); and an
        InvalidTimestampException was among the exceptions answered UNKNOWN_LOG_APPEND_INFO (ReplicaManager
        .appendToLocalLog's first case before 2.4), so it carries log_start_offset -1 too. Measured: 2.3.1 and 2.1.1
        answer a v3 produce of a magic 0 set, a RecordsCount lie and a v0 zstd message CORRUPT_MESSAGE, and an
        out-of-range timestamp INVALID_TIMESTAMP with log_start_offset -1, where 2.4.1 answers INVALID_RECORD and
        the log start offset; 2.2.2 answers an idempotent batch on a v1-format topic with the log start offset."""
        error = rejected.error
        before_record_errors = self.profile.record_errors is RecordErrorsStyle.NONE
        if before_record_errors and error is ErrorCode.INVALID_RECORD:
            error = ErrorCode.CORRUPT_MESSAGE
        unknown = (
            request_level
            or error in _UNKNOWN_APPEND_INFO
            or (before_record_errors and error is ErrorCode.INVALID_TIMESTAMP)
        )
        return ProduceResponse(
            error,
            base_offset=-1,
            log_append_time=-1,
            log_start_offset=-1 if unknown else log.log_start_offset,
            error_message=rejected.error_message,
            record_errors=rejected.record_errors,
        )

    # ---------------------------------------------------------------- replication (REP-1)

    def replicate(self, topic: str, index: int = 0) -> None:
        """Every live follower fetches what it lacks from the leader and appends it verbatim."""
        part = self.partition(topic, index)
        leader_log = part.replicas[part.leader]
        # LO-3: a follower learns the high watermark carried by the fetch response, i.e. the leader's
        # value *before* this fetch round advances it; it catches up on its next fetch. This lag is
        # what lets a newly elected leader start with HW < its epoch start offset (the "fresh leader"
        # of LO-3). Before this fix followers were set to the advanced value at once, so a fresh
        # leader could never arise in the cluster.
        hw_in_response = leader_log.high_watermark
        for broker_id, log in part.replicas.items():
            if broker_id == part.leader or not self.brokers[broker_id].alive:
                continue
            missing = leader_log.fetch(log.log_end_offset)
            if missing:
                # REP-1: the follower stores the leader's batches as they are: no validation, no
                # re-stamping; its own clock only dates the segment files.
                log.append_as_follower(missing, now=self.brokers[broker_id].clock)
            log.high_watermark = min(max(log.high_watermark, hw_in_response), log.log_end_offset)
            part.isr.add(broker_id)
        self._advance_high_watermark(part)

    def _advance_high_watermark(self, part: Partition) -> None:
        leader_log = part.replicas[part.leader]
        in_sync = [
            part.replicas[b].log_end_offset
            for b in part.isr
            if self.brokers[b].alive or b == part.leader
        ]
        hw = min(in_sync) if in_sync else leader_log.log_end_offset
        leader_log.high_watermark = max(leader_log.high_watermark, min(hw, leader_log.log_end_offset))
        # Followers learn the leader's high watermark only through fetch responses (`replicate`).
        for b, log in part.replicas.items():
            if b != part.leader:
                log.high_watermark = min(log.high_watermark, log.log_end_offset)

    # ---------------------------------------------------------------- failover (REP-2, REP-4)

    def elect_leader(self, topic: str, index: int, broker_id: int) -> None:
        """Move leadership to `broker_id` (a live replica). The epoch goes up; replicas with offsets
        beyond the new leader's log end are truncated to it (IDX-14). The new leader stamps
        LogAppendTime with its own clock from now on (REP-2)."""
        part = self.partition(topic, index)
        if broker_id not in part.replicas:
            raise ClusterError(f"broker {broker_id} holds no replica of {topic}-{index}")
        if not self.brokers[broker_id].alive:
            raise ClusterError(f"broker {broker_id} is down and cannot lead {topic}-{index}")
        new_log = part.replicas[broker_id]
        part.leader = broker_id
        part.leader_epoch += 1
        new_log.assign_epoch(part.leader_epoch, new_log.log_end_offset)
        for b, log in part.replicas.items():
            if b != broker_id and log.log_end_offset > new_log.log_end_offset:
                log.truncate_to(new_log.log_end_offset, now=self.brokers[b].clock)
        part.isr = {b for b, log in part.replicas.items() if log.log_end_offset == new_log.log_end_offset}
        part.isr.add(broker_id)
        # LO-3: the new leader keeps the high watermark it had as a follower until the in-sync
        # followers fetch from it (it does not know their log end offsets yet); alone in the ISR it
        # may advance at once. Before this fix the HW jumped to the log end offset on election.
        if self.auto_replicate:
            self.replicate(topic, index)
        elif part.isr == {broker_id}:
            self._advance_high_watermark(part)

    def broker_down(self, broker_id: int) -> None:
        """Stop a broker. Partitions it led move to another live in-sync replica if there is one."""
        self._broker(broker_id).alive = False
        for (topic, index), part in self.partitions.items():
            part.isr.discard(broker_id)
            if part.leader == broker_id:
                candidates = [b for b in sorted(part.isr) if self.brokers[b].alive]
                if candidates:
                    self.elect_leader(topic, index, candidates[0])

    def broker_up(self, broker_id: int) -> None:
        self._broker(broker_id).alive = True
        if self.auto_replicate:
            for (topic, index), part in self.partitions.items():
                if broker_id in part.replicas and self.brokers[part.leader].alive:
                    self.replicate(topic, index)

    # ---------------------------------------------------------------- reads

    def fetch(
        self, topic: str, index: int, offset: int, *, fetch_version: int = 12, replica: bool = False
    ) -> FetchResponse:
        """A fetch from the leader at `fetch_version`, with down-conversion where the profile has it
        (CNV-2, CNV-5, CNV-7). Consumers see only offsets below the high watermark. An offset below the log
        start offset (after retention or DeleteRecords) or past the log end offset is OFFSET_OUT_OF_RANGE, with
        high watermark and log start offset -1: Kafka's UnifiedLog.read throws OffsetOutOfRangeException and
        ReplicaManager.readFromLog answers it with UnifiedLog.UnknownOffset for both (observed on 4.0.2)."""
        part = self.partition(topic, index)
        log = part.replicas[part.leader]
        if not self.profile.supports_fetch_version(fetch_version):
            # CNV-7: a removed version is refused while the request header is parsed, before any partition is
            # looked at (SocketServer's Processor.parseRequestHeader): no answer, even at an out-of-range offset.
            return FetchResponse(NOT_SERVED)
        if not self.brokers[part.leader].alive:
            return FetchResponse(ErrorCode.LEADER_NOT_AVAILABLE)
        gate, _ = self.fetch_view(part, (), fetch_version=fetch_version, replica=replica, fetch_offset=offset)
        if gate is not ErrorCode.NONE:
            # CNV-5: the refusals that do not depend on the records (a zstd topic below Fetch v10; down-conversion
            # disabled on the 3.0+ conversion path) come first: KafkaApis.maybeConvertFetchedData runs on every
            # partition's answer, an out-of-range one too (2.8, 3.9; seen on 3.9.1 by the broker differential).
            return FetchResponse(gate)
        if not log.log_start_offset <= offset <= log.log_end_offset:
            return FetchResponse(ErrorCode.OFFSET_OUT_OF_RANGE)
        batches = log.fetch(offset)
        if not replica:
            batches = tuple(b for b in batches if b.base_offset < log.high_watermark)
        error, view = self.fetch_view(part, batches, fetch_version=fetch_version, replica=replica, fetch_offset=offset)
        if error is not ErrorCode.NONE:
            # An error answer carries no offsets: FetchResponse.partitionResponse(tp, error) leaves the high
            # watermark and the log start offset at -1 (3.9; 2.8's errorResponse alike).
            return FetchResponse(error)
        return FetchResponse(error, view, log.high_watermark, log.log_start_offset).as_of_version(fetch_version)

    def fetch_view(
        self, part: Partition, batches: Sequence[AnyBatch], *, fetch_version: int, replica: bool, fetch_offset: int
    ) -> tuple[ErrorCode, tuple[AnyBatch, ...]]:
        """CNV-2, CNV-5, CNV-7: what a fetch at `fetch_version` shows of the stored `batches`: down-converted
        where the profile has it, UNSUPPORTED_COMPRESSION_TYPE for a zstd batch a consumer cannot read."""
        return fetch_view(
            batches,
            fetch_version=fetch_version,
            profile=self.profile,
            config=part.config,
            replica=replica,
            fetch_offset=fetch_offset,
        )

    def list_offsets(
        self,
        topic: str,
        index: int,
        target: int,
        *,
        version: int = 10,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
        replica_id: int = CONSUMER_REPLICA_ID,
    ) -> ListOffsetsAnswer:
        part = self.partition(topic, index)
        if not self.profile.supports_list_offsets_version(version):
            return ListOffsetsAnswer(NOT_SERVED, -1, -1, -1)  # as a removed Fetch version (above): before anything
        if not self.brokers[part.leader].alive:
            return ListOffsetsAnswer(ErrorCode.LEADER_NOT_AVAILABLE, -1, -1, -1)
        return list_offsets(
            part.replicas[part.leader],
            target,
            version=version,
            profile=self.profile,
            isolation=isolation,
            replica_id=replica_id,
            now=self.brokers[part.leader].clock,
        )

    # ---------------------------------------------------------------- housekeeping (IDX-10)

    def tick(self) -> int:
        """Run time-based retention on every replica with its broker's clock; returns segments deleted."""
        deleted = 0
        for part in self.partitions.values():
            for b, log in part.replicas.items():
                if self.brokers[b].alive:
                    deleted += log.delete_retention_breached_segments(self.brokers[b].clock)
        return deleted

    def _broker(self, broker_id: int) -> Broker:
        try:
            return self.brokers[broker_id]
        except KeyError:
            raise ClusterError(f"unknown broker {broker_id}") from None

