"""Meta tests of the `rdkafka-mock` target through the suite's own path (issue 4, items 2, 3 and 5):
`open_target` starts the mock cluster, the wire adapter creates topics through the cluster's C API (the
mock offers no CreateTopics), reads a log the mock serves one batch per Fetch answer, and moves leaders
for real; `--fault-hook` runs the user's command; the run-level options fail as one-line usage errors.
Skipped without confluent-kafka (the `targets` extra)."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

import pytest

from conformance.judging.capabilities import Capability
from conformance.targets.kinds.implementation import UnsupportedOperation
from conformance.targets.registry import TargetError, open_target
from conformance.targets.routes.wire_adapter.fault_hook import FaultHook, FaultHookError
from conformance.targets.routes.wire_adapter.kafka_wire import WireImplementation
from models.config import TopicConfig
from models.constants import ErrorCode, TimestampType
from models.records import RecordSpec, build_batches

pytest.importorskip("confluent_kafka", reason="confluent-kafka (librdkafka) not installed")


def _batch(ts: int, key: bytes) -> tuple[object, ...]:
    return tuple(build_batches([RecordSpec(ts, key, b"v")], magic=2))


def test_the_mock_target_creates_topics_reads_every_batch_and_moves_leaders(tmp_path: Path) -> None:
    with open_target("rdkafka-mock", "kafka-4.0", log_dir=tmp_path, timeout=5.0) as (factory, _):
        impl = factory.build()
        assert isinstance(impl, WireImplementation)
        try:
            assert Capability.LEADER_FAILOVER in impl.capabilities
            assert Capability.LOG_APPEND_TIME not in impl.capabilities  # no topic configs on the mock
            impl.create_topic("t", TopicConfig())
            assert impl.leader("t", 0) == 0  # aligned with the model's first replica
            now = int(time.time() * 1000)
            for i in range(3):
                answer = impl.produce("t", 0, _batch(now + i, b"k%d" % i), produce_version=7)
                assert (answer.error, answer.base_offset) == (ErrorCode.NONE, i)
            # The mock answers one batch per Fetch; the adapter reads on to the high watermark.
            served = impl.fetch("t", 0, 0, fetch_version=11)
            assert [b.base_offset for b in served.batches] == [0, 1, 2]
            impl.elect_leader("t", 0, 2)
            assert impl.leader("t", 0) == 2
            after = impl.fetch("t", 0, 0, fetch_version=11)
            assert [r.timestamp for b in after.batches for r in b.records()] == [now, now + 1, now + 2]
            # A topic config the mock cannot hold is UNSUPPORTED with the capability it needs.
            with pytest.raises(UnsupportedOperation) as raised:
                impl.create_topic("lat", TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME))
            assert raised.value.capability is Capability.LOG_APPEND_TIME
        finally:
            impl.close()


def _hook(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "hook.sh"
    script.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_the_fault_hook_gets_the_move_as_arguments_and_its_failure_is_reported(tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    FaultHook(str(_hook(tmp_path, f'echo "$@" > {seen}'))).move_leader("kts-x-t", 0, 3)
    assert seen.read_text().split() == ["move-leader", "kts-x-t", "0", "3"]
    failing = _hook(tmp_path, 'echo "no such broker" >&2; exit 3')
    with pytest.raises(FaultHookError, match="exited with 3: no such broker"):
        FaultHook(str(failing)).move_leader("t", 0, 1)
    with pytest.raises(FaultHookError, match="ran past"):
        FaultHook(f"{sys.executable} -c 'import time; time.sleep(5)'", timeout=0.5).move_leader("t", 0, 1)


def test_fault_hook_needs_allow_disruptive_the_broker_target_and_a_command(tmp_path: Path) -> None:
    hook = str(_hook(tmp_path, "exit 0"))
    cases = [
        ("--allow-disruptive", {"name": "broker", "bootstrap": "127.0.0.1:9", "fault_hook": hook}),
        ("for --target broker", {"name": "tansu", "fault_hook": hook, "allow_disruptive": True}),
        ("not an executable", {"name": "broker", "bootstrap": "127.0.0.1:9", "fault_hook": "/nonexistent/hook",
                               "allow_disruptive": True}),
    ]
    for message, kwargs in cases:
        name = kwargs.pop("name")
        opened = open_target(str(name), "kafka-4.0", **kwargs)  # type: ignore[arg-type]
        with pytest.raises(TargetError, match=message):
            opened.__enter__()


def test_cli_refuses_a_fault_hook_without_allow_disruptive(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--target", "broker", "--bootstrap-servers",
         "127.0.0.1:9", "--fault-hook", "true", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False, cwd=Path(__file__).parents[1],
        env={**os.environ, "KTS_ALLOW_DISRUPTIVE": ""},
    )
    assert done.returncode == 2
    assert "--allow-disruptive" in done.stderr and "Traceback" not in done.stderr
