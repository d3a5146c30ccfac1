"""Ports for managed brokers (conformance/targets/brokers/ports.py): picked where bind(0) cannot take them,
claimed against another run's pick, and a broker ready only once the listener that answered is its own.

The race these guard against was seen in CI: a Kafka node's port, picked with bind(0) and released, went to a
reference broker of a parallel tox env before the JVM bound it; the reference broker answered ApiVersions and
the run was pointed at the wrong cluster. The last test replays that with real processes.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import pytest

from conformance.reference.kafka_server import KafkaServer
from conformance.reference.served import ServedCluster
from conformance.targets.brokers import ports
from conformance.targets.brokers.process import (
    ManagedBroker,
    ManagedProcessError,
    probe_api_versions,
    process_group_members,
)
from conformance.targets.libraries.model.model_broker import ModelFactory

needs_proc = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc")


@pytest.fixture
def claims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "claims"
    monkeypatch.setattr(ports, "_claims", lambda: folder)
    return folder


@needs_proc
def test_picked_ports_are_below_the_ephemeral_range_distinct_and_bindable(claims: Path) -> None:
    low, _high = ports._ephemeral_range() or (0, 0)
    picked = [ports.free_loopback_port() for _ in range(200)]
    assert len(set(picked)) == len(picked)
    if ports._candidates() is not None and low - 10000 >= 2048:
        assert all(10000 <= port < low for port in picked), picked
    for port in picked[:20]:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))
    assert sorted(int(path.name) for path in claims.iterdir()) == sorted(picked)


def test_a_port_another_run_claimed_lately_is_not_picked_and_an_old_claim_is_taken_over(
    claims: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as a, socket.socket() as b:  # two ports free now, to offer as the only candidates
        a.bind(("127.0.0.1", 0))
        b.bind(("127.0.0.1", 0))
        first, second = a.getsockname()[1], b.getsockname()[1]
    monkeypatch.setattr(ports, "_candidates", lambda: [first, second])
    claims.mkdir()
    (claims / str(first)).touch()
    assert {ports.free_loopback_port() for _ in range(20)} != {first}  # never `first` while its claim is fresh
    (claims / str(second)).unlink()
    assert ports.free_loopback_port() == second
    old = time.time() - 3600
    os.utime(claims / str(first), (old, old))
    assert ports.free_loopback_port() == first  # an hour-old claim: its broker bound long ago or never will


def test_with_every_candidate_claimed_the_kernel_picks(claims: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ports, "_candidates", lambda: [1])  # claimed below: never handed out
    claims.mkdir()
    (claims / "1").touch()
    port = ports.free_loopback_port()
    assert port != 1
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


@needs_proc
def test_the_listener_of_a_port_is_told_by_its_process() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        assert ports.listener_pids(port) == {os.getpid()}
        assert ports.listener_pids(port, among=[str(os.getpid())]) == {os.getpid()}
        assert ports.listener_pids(port, among=[]) == set()
        assert str(os.getpid()) in process_group_members(os.getpgid(0))
    assert ports.listener_pids(port) is None  # nobody listens any more


def _reference_broker_on(port: int) -> list[str]:
    return [sys.executable, "-m", "conformance", "serve", "--target", "model", "--profile", "kafka-4.0",
            "--brokers", "1", "--host", "127.0.0.1", "--port", str(port), "--control-port", "0"]  # fmt: skip


@needs_proc
def test_a_broker_whose_port_another_process_answers_on_is_started_again_on_a_fresh_port(tmp_path: Path) -> None:
    with KafkaServer(ServedCluster(ModelFactory(profile="kafka-4.0", brokers=1))) as stranger:
        stolen = stranger.addresses[0][1]
        picks = iter([stolen, ports.free_loopback_port()])
        # On the stolen port the child is a broker still starting (alive, not yet bound): the stranger answers.
        with ManagedBroker(
            "slow-broker",
            lambda port: ["sleep", "60"] if port == stolen else _reference_broker_on(port),
            tmp_path,
            pick_port=lambda: next(picks),
        ) as broker:
            assert broker.port != stolen
            assert probe_api_versions("127.0.0.1", broker.port)
            assert ports.listener_pids(broker.port) == {broker.pid}
        assert len(list(tmp_path.glob("slow-broker-*.log"))) == 2  # the first attempt's log is kept


@needs_proc
def test_with_no_attempt_left_the_failure_names_the_process_answering_instead(tmp_path: Path) -> None:
    with KafkaServer(ServedCluster(ModelFactory(profile="kafka-4.0", brokers=1))) as stranger:
        stolen = stranger.addresses[0][1]
        broker = ManagedBroker("slow-broker", lambda port: ["sleep", "60"], tmp_path, pick_port=lambda: stolen,
                               port_attempts=1)  # fmt: skip
        with pytest.raises(ManagedProcessError) as failure:
            broker.start()
    message = str(failure.value)
    assert f"slow-broker on 127.0.0.1:{stolen} was not the one answering" in message
    assert f"another process (pid {os.getpid()}," in message
    assert broker.returncode is not None  # stopped
