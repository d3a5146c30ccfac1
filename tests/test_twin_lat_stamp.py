"""The twin's `now` for a LogAppendTime append on a wall-clock target (suites.helpers.Twin, the
clock bracket): Produce v0/v1 answers carry no log_append_time (ProduceResponse.json: "2+"), so the twin reads the
broker's stamp back from the stored batch, which Kafka writes with the same one reading (VAL-2, VAL-12).

The stand-in is the model with a wall clock of its own: every reading advances it, so the append happens at a
`now` a few milliseconds past the twin's first reading, as on a real broker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from conformance.judging.capabilities import Capability
from conformance.targets.libraries.model.model_broker import ModelFactory, ModelImplementation
from models.cluster import FetchResponse, ProduceResponse
from models.config import TopicConfig
from models.constants import MAGIC_V0, MAGIC_V1, Codec, ErrorCode, TimestampType
from models.records import AnyBatch, LegacyBatch, RecordSpec, build_legacy
from suites.helpers import Twin

PROFILE = "kafka-3.9"
LAT = TimestampType.LOG_APPEND_TIME
READING_STEP_MS = 3  # each clock reading of the stand-in moves its clock on
APPEND_DELAY_MS = 4  # the append reads its `now` this long after the twin's first reading


class WallClockModel(ModelImplementation):
    """The model as a wall-clock broker: no CLOCK_CONTROL, a clock that moves on by itself, and an append `now`
    the caller does not know (shifted by `stamp_skew_ms` to play a broker that stamps outside the bracket)."""

    def __init__(self, *, stamp_skew_ms: int = 0) -> None:
        super().__init__(ModelFactory(PROFILE, brokers=1).build().cluster, name="wall-clock")
        self.capabilities = self.capabilities - {Capability.CLOCK_CONTROL}
        self.wall = self.cluster.clock(0)
        self.stamp_skew_ms = stamp_skew_ms
        self.fetches: list[int] = []
        self.stamps: list[int] = []  # the `now` of each append

    def clock(self, broker: int) -> int:
        self.wall += READING_STEP_MS
        self.cluster.set_clock(broker, self.wall)
        return self.wall

    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        self.wall += APPEND_DELAY_MS
        self.stamps.append(self.wall + self.stamp_skew_ms)
        self.cluster.set_clock(self.leader(topic, partition), self.stamps[-1])
        return super().produce(topic, partition, batches, produce_version=produce_version)

    def fetch(self, topic: str, partition: int, offset: int, *, fetch_version: int) -> FetchResponse:
        self.fetches.append(offset)
        return super().fetch(topic, partition, offset, fetch_version=fetch_version)


def _twin(impl: ModelImplementation, ts_type: TimestampType = LAT) -> Twin:
    twin = Twin(impl, ModelFactory(PROFILE, brokers=1))
    twin.create_topic("t", TopicConfig(timestamp_type=ts_type))
    return twin


def _sent(magic: int, now: int, codec: Codec = Codec.NONE) -> tuple[LegacyBatch, ...]:
    return build_legacy([RecordSpec(now - 1000, b"k1", b"v"), RecordSpec(now - 500, b"k2", b"v")], magic=magic,
                        codec=codec)


@pytest.mark.parametrize("produce_version", [0, 1])
@pytest.mark.parametrize(("magic", "codec"), [(MAGIC_V0, Codec.NONE), (MAGIC_V1, Codec.NONE), (MAGIC_V1, Codec.GZIP)])
def test_produce_v0_v1_on_a_lat_topic_takes_the_stored_stamp(produce_version: int, magic: int, codec: Codec) -> None:
    impl = WallClockModel()
    twin = _twin(impl)
    now = twin.leader_clock("t")
    twin.produce("t", _sent(magic, now, codec), produce_version=produce_version)  # an earlier append, offsets 0-1
    observed, expected = twin.produce("t", _sent(magic, now, codec), produce_version=produce_version)
    assert (observed.error, observed.log_append_time, expected.base_offset) == (ErrorCode.NONE, -1, 2)
    assert impl.fetches[-1] == observed.base_offset == 2
    got, want = twin.fetch("t", fetch_version=17)
    assert [(b.base_offset, b.timestamp_type, b.max_timestamp) for b in got.batches] == [
        (b.base_offset, b.timestamp_type, b.max_timestamp) for b in want.batches
    ]
    assert got.batches[-1].max_timestamp == impl.stamps[-1]  # the broker's own `now`, not the reading before it
    assert [(r.offset, r.timestamp) for r in got.records()] == [(r.offset, r.timestamp) for r in want.records()]


def test_a_stamp_outside_the_bracket_still_differs() -> None:
    impl = WallClockModel(stamp_skew_ms=60_000)
    twin = _twin(impl)
    now = twin.leader_clock("t")
    twin.produce("t", _sent(MAGIC_V0, now), produce_version=0)
    got, want = twin.fetch("t", fetch_version=17)
    assert got.batches[0].max_timestamp - want.batches[0].max_timestamp > 60_000 - READING_STEP_MS


@pytest.mark.parametrize(("ts_type", "produce_version"), [(LAT, 2), (TimestampType.CREATE_TIME, 0)])
def test_no_read_back_where_the_answer_tells_or_nothing_is_stamped(
    ts_type: TimestampType, produce_version: int
) -> None:
    impl = WallClockModel()
    twin = _twin(impl, ts_type)
    now = twin.leader_clock("t")
    twin.produce("t", _sent(MAGIC_V1, now), produce_version=produce_version)
    assert impl.fetches == []
    got, want = twin.fetch("t", fetch_version=17)
    assert [b.max_timestamp for b in got.batches] == [b.max_timestamp for b in want.batches]


def test_no_read_back_on_a_rejection() -> None:
    impl = WallClockModel()
    twin = _twin(impl)
    now = twin.leader_clock("t")
    (wrapper,) = _sent(MAGIC_V1, now, Codec.GZIP)
    zstd = replace(wrapper, message=replace(wrapper.message, attributes=int(Codec.ZSTD)))  # FMT-4: refused
    observed, expected = twin.produce("t", (zstd,), produce_version=0)
    assert observed.error is expected.error is ErrorCode.INVALID_RECORD
    assert impl.fetches == []


def test_a_target_with_clock_control_is_never_read_back() -> None:
    impl = ModelFactory(PROFILE, brokers=1).build()
    fetches: list[int] = []
    original = impl.fetch

    def counted(topic: str, partition: int, offset: int, *, fetch_version: int) -> FetchResponse:
        fetches.append(offset)
        return original(topic, partition, offset, fetch_version=fetch_version)

    impl.fetch = counted  # type: ignore[method-assign]
    twin = _twin(impl)
    twin.produce("t", _sent(MAGIC_V0, twin.leader_clock("t")), produce_version=0)
    assert fetches == []
