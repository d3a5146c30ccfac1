"""The state machine's lookups where a segment without timestamps decides the answer (suites/machine.py; LO-2
with IDX-6), against the model and stand-ins for a broker whose files the suite's clock does not date.

A segment holding only timestamp -1 records is dated by its file's mtime (Kafka's LogSegment.largestTimestamp),
and a timestamp lookup searches only the first segment dated at or after the target. Apache Kafka on the
suite's clock (kafka_control) gets its mtimes from this machine's clock, not from the suite's: a three-broker
kafka:4.4 run failed LO.first-ge-target with "observed -1, the reference model expects 1" where such a segment
came before the target's record. The machine now leaves such a lookup uncompared on a target without
FILE_TIMES, and judges it under the clause that names the file date on a target with it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from conformance.judging.capabilities import Capability
from conformance.judging.checks import CheckRecord, recording
from conformance.judging.observables import Obs
from conformance.targets.libraries.model.model_broker import ModelFactory, ModelImplementation
from models.config import TopicConfig
from models.constants import Codec, IsolationLevel, TimestampType
from models.list_offsets import ListOffsetsAnswer
from models.records import RecordSpec, build_batches
from suites.machine import TOPIC, TimestampContractMachine, machine_for

PROFILE = "kafka-4.1"
MACHINE_NOW = 1_795_674_443_656  # what the OS dates a segment file with (2026), whatever the suite's clock says
TARGET = 1_700_000_000_788  # after the untimed segment's date on the suite's clock, long before MACHINE_NOW
LOOKUP_CLAUSES = ("LO.first-ge-target", "LO.not-found-minus-one", "IDX.largest-timestamp-mtime",
                  "LO.first-qualifying-segment")  # fmt: skip


class FilesOnMachineClock(ModelImplementation):
    """The model, except that a segment without timestamps is dated by this machine's clock, as Kafka on the
    suite's clock dates it; `file_times` says whether it claims FILE_TIMES all the same (a departure)."""

    def __init__(self, model: ModelImplementation, *, file_times: bool) -> None:
        super().__init__(model.cluster, name="files-on-machine-clock")
        if not file_times:
            self.capabilities = self.capabilities - {Capability.FILE_TIMES}

    def list_offsets(
        self,
        topic: str,
        partition: int,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> ListOffsetsAnswer:
        for segment in self.cluster.leader_log(topic, partition).segments:
            if not segment.is_empty() and segment.max_timestamp < 0:
                segment.last_modified = MACHINE_NOW
        return super().list_offsets(topic, partition, target, version=version, isolation=isolation)


@dataclass(frozen=True)
class FilesOnMachineClockFactory(ModelFactory):
    file_times: bool = False

    @property
    def name(self) -> str:
        return "files-on-machine-clock"

    def build(self) -> ModelImplementation:
        return FilesOnMachineClock(super().build(), file_times=self.file_times)


def untimed_then_timed(target_factory: ModelFactory) -> TimestampContractMachine:
    """The program the three-broker kafka:4.4 run shrank to: a timestamp -1 record, a leader move, the leader's
    clock 4.5 days on, LogAppendTime, one more record (a new segment, segment.ms). TARGET is then answered by
    offset 1 if the first segment's date is the suite's clock (the model), -1 if it is this machine's."""
    machine = machine_for(target_factory, ModelFactory(PROFILE))()
    produce_version = machine.profile.produce_versions[1]
    config = TopicConfig(before_max_ms=60_000, after_max_ms=67_108_864, compression_type="snappy",
                         segment_ms=3_600_000, index_interval_bytes=1)  # fmt: skip
    machine.create_topic(config)
    untimed = build_batches([RecordSpec(-1, b"k", b"v")], magic=2, codec=Codec.NONE)
    machine.twin.produce(TOPIC, untimed, produce_version=produce_version)
    machine.sent += [-1, TARGET]
    machine.twin.elect_leader(TOPIC, 1)
    machine.twin.set_clock(1, machine.twin.clock(1) + 391_052_992)
    machine.alter_config(replace(config, timestamp_type=TimestampType.LOG_APPEND_TIME))
    timed = build_batches([RecordSpec(1_700_391_052, b"k", b"v")], magic=2, codec=Codec.LZ4)
    machine.twin.produce(TOPIC, timed, produce_version=produce_version)
    return machine


def lookups(record: CheckRecord) -> set[str]:
    """The clauses a timestamp lookup's offset was compared under."""
    return {c for c, o in record.checked if o is Obs.LIST_OFFSETS_OFFSET and c in LOOKUP_CLAUSES}


def test_a_lookup_decided_by_a_file_date_the_target_does_not_set_is_not_compared() -> None:
    machine = untimed_then_timed(FilesOnMachineClockFactory(PROFILE))
    try:
        assert machine.twin.list_offsets(TOPIC, TARGET, version=10)[0].offset == -1  # the departure it was
        with recording(CheckRecord()) as record:
            machine.lookups_agree()
        assert lookups(record) == set()  # neither passed nor failed: left undecided (UNSUPPORTED)
        assert ("LO.max-timestamp-first-record", Obs.LIST_OFFSETS_OFFSET) in record.held  # the rest still is
        assert machine._lookup_clause(TARGET) == (False, "IDX.largest-timestamp-mtime")  # the list_offsets rule
    finally:
        machine.teardown()


def test_on_a_target_that_dates_its_files_by_the_suite_clock_the_lookup_is_judged_under_the_file_date() -> None:
    machine = untimed_then_timed(ModelFactory(PROFILE))
    try:
        with recording(CheckRecord()) as record:
            machine.lookups_agree()
        assert lookups(record) == {"IDX.largest-timestamp-mtime"}
        assert not record.lenient
        assert machine._lookup_clause(TARGET) == (True, "IDX.largest-timestamp-mtime")
    finally:
        machine.teardown()


def test_a_target_that_claims_file_times_and_dates_by_another_clock_departs_from_the_should_clause() -> None:
    machine = untimed_then_timed(FilesOnMachineClockFactory(PROFILE, file_times=True))
    try:
        with recording(CheckRecord()) as record:
            machine.lookups_agree()  # a SHOULD clause: recorded (NON-STRICT), not raised
        assert [(v.clause_id, v.observable) for v in record.lenient] == [
            ("IDX.largest-timestamp-mtime", Obs.LIST_OFFSETS_OFFSET)
        ]
        assert "LO.first-ge-target" not in {c for c, _ in record.checked}
    finally:
        machine.teardown()
