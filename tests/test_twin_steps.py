"""The Twin's steps (suites.helpers: new_topic, produce_checked, read_back, produce_and_read) send the same requests
and run the same checks as the calls they stand for written out, so a suite test that uses them keeps its verdicts
and its examples; and a departure they find is named by the clauses the test gives them.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from conformance.judging.checks import CheckRecord, ClauseViolation, recording
from conformance.targets.libraries.model.model_broker import ModelFactory, ModelImplementation
from models.cluster import FetchResponse, ProduceResponse
from models.config import TopicConfig
from models.constants import MAGIC_V1, MAGIC_V2, Codec, TimestampType
from models.profiles import get_profile
from models.records import AnyBatch, RecordSpec, build_batches
from suites.helpers import (
    LEGACY_PRODUCE_VERSION,
    Twin,
    check_fetch,
    check_produce,
    newest_fetch,
    produce_version_for,
    v2_produce_version,
)

PROFILE = get_profile("kafka-2.8")  # stores v1 where a topic's message format says so


class Recording(ModelImplementation):
    """The model, noting every produce and fetch it is asked (topic, version, and the magics or the offset);
    `shift_ms` moves the timestamp of every record it serves (a reader's fault)."""

    def __init__(self, *, shift_ms: int = 0) -> None:
        super().__init__(ModelFactory(PROFILE.name).build().cluster, name="recording")
        self.calls: list[tuple[object, ...]] = []
        self.shift_ms = shift_ms

    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        self.calls.append(("produce", topic, produce_version, tuple(b.magic for b in batches)))
        return super().produce(topic, partition, batches, produce_version=produce_version)

    def fetch(self, topic: str, partition: int, offset: int, *, fetch_version: int) -> FetchResponse:
        self.calls.append(("fetch", topic, offset, fetch_version))
        answer = super().fetch(topic, partition, offset, fetch_version=fetch_version)
        if not self.shift_ms:
            return answer
        shifted = tuple(
            b.with_header(timestamp_type=b.timestamp_type, max_timestamp=b.max_timestamp + self.shift_ms)
            for b in answer.batches
        )
        return FetchResponse(answer.error, shifted, answer.high_watermark, answer.log_start_offset)


def _twin(impl: Recording | None = None) -> tuple[Twin, Recording]:
    impl = impl or Recording()
    return Twin(impl, ModelFactory(PROFILE.name)), impl


def _batches(magic: int, now: int, index: int = 0) -> tuple[AnyBatch, ...]:
    specs = [RecordSpec(now - 3_000 + i * 1_000, b"k%d-%d" % (index, i), b"v") for i in range(3)]
    return build_batches(specs, magic=magic, codec=Codec.GZIP if magic == MAGIC_V1 else Codec.NONE)


def test_new_topic_is_fresh_created_on_both_sides_and_dated_by_its_leader() -> None:
    twin, impl = _twin()
    config = TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME)
    first, now = twin.new_topic("steps", config)
    second, _ = twin.new_topic("steps", config)
    assert first != second and first.startswith("steps-")
    assert twin.configs[first] == config
    assert now == twin.clock(twin.leader(first)) == impl.clock(impl.leader(first, 0))


@pytest.mark.parametrize(("magic", "version"), [(MAGIC_V2, v2_produce_version(PROFILE)), (MAGIC_V1, 2)])
def test_produce_checked_asks_the_version_for_the_magic_unless_told(magic: int, version: int) -> None:
    twin, impl = _twin()
    topic, now = twin.new_topic("steps", TopicConfig())
    twin.produce_checked(topic, _batches(magic, now), profile=PROFILE, error_clause="CNV.stored-magic")
    twin.produce_checked(topic, _batches(MAGIC_V1, now, 1), profile=PROFILE, error_clause="CNV.stored-magic",
                         produce_version=LEGACY_PRODUCE_VERSION - 1)  # fmt: skip
    assert [c[2] for c in impl.calls if c[0] == "produce"] == [version, LEGACY_PRODUCE_VERSION - 1]


@pytest.mark.parametrize("timestamp_type", [TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME])
@pytest.mark.parametrize("magic", [MAGIC_V1, MAGIC_V2])
@pytest.mark.parametrize("fmt", [MAGIC_V1, MAGIC_V2])
def test_the_steps_send_and_check_what_the_calls_written_out_do(
    timestamp_type: TimestampType, magic: int, fmt: int
) -> None:
    config = TopicConfig(timestamp_type=timestamp_type, message_format_magic=fmt)

    def record_clause(batch: AnyBatch) -> str:
        lat = batch.timestamp_type is TimestampType.LOG_APPEND_TIME
        return "CMP.lat-every-record-reads-now" if lat else "CON.v1-uncompressed-own"

    written_out, by_steps = CheckRecord(), CheckRecord()
    twin, impl = _twin()
    with recording(written_out):
        topic, now = twin.new_topic("steps", config)
        for index in range(2):
            sent = _batches(magic, now, index)
            observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(magic, PROFILE))
            check_produce(observed, expected, config=config, error_clause="CNV.stored-magic", context="c")
        got, want = twin.fetch(topic, fetch_version=newest_fetch(PROFILE))
        check_fetch(got, want, config=config, profile=PROFILE, stored_clause="CNV.stored-magic",
                    record_clause=record_clause, sent=twin.sent.get(topic), context="c")  # fmt: skip
    twin_2, impl_2 = _twin()
    with recording(by_steps):
        topic_2, now_2 = twin_2.new_topic("steps", config)
        twin_2.produce_checked(topic_2, _batches(magic, now_2, 0), profile=PROFILE, error_clause="CNV.stored-magic",
                               context="c")  # fmt: skip
        got_2, want_2 = twin_2.produce_and_read(topic_2, _batches(magic, now_2, 1), profile=PROFILE,
                                                error_clause="CNV.stored-magic", record_clause=record_clause,
                                                as_sent=True, context="c")  # fmt: skip
    assert [c[:1] + c[2:] for c in impl_2.calls] == [c[:1] + c[2:] for c in impl.calls]
    assert (got_2.batches, want_2.batches) == (got.batches, want.batches)
    assert by_steps.checked == written_out.checked and by_steps.held == written_out.held


def test_a_departure_read_back_is_named_by_the_clauses_given() -> None:
    twin, _ = _twin(Recording(shift_ms=1))
    topic, now = twin.new_topic("steps", TopicConfig())
    twin.produce_checked(topic, _batches(MAGIC_V2, now), profile=PROFILE, error_clause="CNV.stored-magic")
    with pytest.raises(ClauseViolation) as caught:
        twin.read_back(topic, profile=PROFILE, header_clause=lambda b: "REP.follower-no-restamp", context="here")
    assert caught.value.clause_id == "REP.follower-no-restamp" and caught.value.context.startswith("here")

