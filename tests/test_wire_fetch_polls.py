"""The kafka-wire adapter's fetch polls again when a broker serves nothing below its high watermark (its wait ran
out before it read the log: Tansu on a loaded machine answered a main-job fetch with no batch, which read as a FAIL
of CNV.stored-magic), and compares what a broker that never serves the records answered."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from conformance.reference.kafka_server import KafkaServer
from conformance.reference.served import ServedCluster
from conformance.targets.libraries.model.model_broker import ModelFactory
from conformance.targets.routes.wire_adapter import kafka_wire
from conformance.targets.routes.wire_adapter.kafka_wire import WireFactory, WireImplementation
from conformance.wire.client import WireClient
from models.config import TopicConfig
from models.constants import ErrorCode
from models.records import RecordSpec, build_v2


@pytest.fixture
def impl(monkeypatch: pytest.MonkeyPatch) -> Iterator[WireImplementation]:
    monkeypatch.setattr(kafka_wire, "_EMPTY_POLL_PAUSE", 0.0)
    served = ServedCluster(ModelFactory(brokers=1))
    with KafkaServer(served) as server:
        implementation = WireFactory(server.bootstrap).build()
        implementation.create_topic("polled", TopicConfig())
        batch = build_v2([RecordSpec(1_700_000_000_000 + i, b"k", b"v") for i in range(3)])
        assert implementation.produce("polled", 0, [batch], produce_version=9).error is ErrorCode.NONE
        try:
            yield implementation
        finally:
            implementation.close()


def _serving_nothing(monkeypatch: pytest.MonkeyPatch, times: int) -> list[int]:
    """Make the broker's first `times` answers carry no records (their high watermark kept); returns the count of
    fetches sent."""
    sent = [0]
    real = WireClient.fetch

    def fetch(self: WireClient, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        sent[0] += 1
        answer = real(self, *args, **kwargs)  # type: ignore[arg-type]
        return replace(answer, records=b"") if sent[0] <= times else answer

    monkeypatch.setattr(WireClient, "fetch", fetch)
    return sent


def test_an_answer_with_nothing_below_the_high_watermark_is_polled_again(
    impl: WireImplementation, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = _serving_nothing(monkeypatch, times=2)
    fetched = impl.fetch("polled", 0, 0, fetch_version=12)
    assert [r.offset for r in fetched.records()] == [0, 1, 2]
    assert sent[0] == 3
    assert any("nothing served below the high watermark 3" in note for note in impl.notes)


def test_a_broker_that_never_serves_the_records_is_compared_as_it_answered(
    impl: WireImplementation, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = _serving_nothing(monkeypatch, times=1000)
    fetched = impl.fetch("polled", 0, 0, fetch_version=12)
    assert (fetched.error, fetched.batches, fetched.high_watermark) == (ErrorCode.NONE, (), 3)
    assert sent[0] == kafka_wire._EMPTY_POLLS + 1
