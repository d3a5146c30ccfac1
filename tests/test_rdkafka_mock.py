"""Meta tests of the `rdkafka-mock` managed target (issue 4, items 2 and 3): the ctypes binding of
librdkafka's mock cluster starts three loopback brokers, moves leaders, takes brokers down and up,
and frees everything on close. Checked from the outside, with a real client over TCP (confluent_kafka's
AdminClient/Producer/Consumer) or a plain socket, never by asking the binding what it did.

Skipped when confluent-kafka (which bundles librdkafka) is not installed: it is an optional extra
(`pip install .[targets]`)."""

from __future__ import annotations

import atexit
import ctypes.util
import re
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.targets.brokers import rdkafka_mock
from conformance.targets.brokers.process import probe_api_versions
from conformance.targets.brokers.rdkafka_mock import (
    INSTALL_HINT,
    LibrdkafkaNotFound,
    MockCluster,
    MockClusterError,
    find_librdkafka,
)

ck: Any = pytest.importorskip("confluent_kafka", reason="confluent-kafka (librdkafka) not installed")
admin_mod: Any = pytest.importorskip("confluent_kafka.admin")

TIMEOUT = 5.0  # every client call is bounded; a healthy mock answers in milliseconds
PRODUCE_VERSION_KEY, LIST_OFFSETS_KEY = 0, 2


@pytest.fixture
def cluster() -> Iterator[MockCluster]:
    with MockCluster(brokers=3) as mock:
        yield mock


def _admin(bootstrap: str) -> Any:
    return admin_mod.AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})


def _leader(admin: Any, topic: str, partition: int = 0) -> int:
    metadata = admin.list_topics(topic=topic, timeout=TIMEOUT)
    leader: int = metadata.topics[topic].partitions[partition].leader
    return leader


def _eventually(what: str, check: Callable[[], bool], within: float = TIMEOUT) -> None:
    """Metadata is cached by clients: poll briefly instead of sleeping a fixed time."""
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {within} s: {what}")
        time.sleep(0.05)


def _accepts_connections(address: tuple[str, int]) -> bool:
    try:
        with socket.create_connection(address, timeout=1.0):
            return True
    except OSError:
        return False


def test_starts_three_brokers_on_loopback(cluster: MockCluster) -> None:
    assert cluster.broker_ids == (1, 2, 3)
    assert cluster.bootstrap == ",".join(f"{h}:{p}" for h, p in cluster.addresses.values())
    metadata = _admin(cluster.bootstrap).list_topics(timeout=TIMEOUT)
    # What a real client sees matches the binding's view: ids and the address of each id.
    seen = {b.id: (b.host, b.port) for b in metadata.brokers.values()}
    assert seen == cluster.addresses
    assert {host for host, _ in seen.values()} == {"127.0.0.1"}
    # Each broker answers a Kafka request, and advertises the three APIs the suite needs most.
    for host, port in cluster.addresses.values():
        offered = probe_api_versions(host, port, TIMEOUT)
        assert {PRODUCE_VERSION_KEY, 1, LIST_OFFSETS_KEY} <= offered.keys()


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc/net/tcp")
def test_listening_sockets_bind_127_0_0_1_not_any(cluster: MockCluster) -> None:
    ports = {port for _, port in cluster.addresses.values()}
    listening: dict[int, str] = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, state = fields[1], fields[3]
        address, port = local.split(":")
        if state == "0A" and int(port, 16) in ports:  # 0A: TCP_LISTEN
            listening[int(port, 16)] = address
    # /proc/net/tcp writes the IPv4 address as a little-endian hex word: 127.0.0.1 is 0100007F.
    assert listening == dict.fromkeys(ports, "0100007F")


def test_leader_move_is_visible_in_metadata(cluster: MockCluster) -> None:
    cluster.create_topic("moves", partitions=2, replication_factor=3)
    admin = _admin(cluster.bootstrap)
    before = _leader(admin, "moves")
    target = next(b for b in cluster.broker_ids if b != before)
    cluster.set_leader("moves", 0, target)
    _eventually(f"leader of moves-0 becomes {target}", lambda: _leader(admin, "moves") == target)
    cluster.set_leader("moves", 0, None)
    _eventually("moves-0 becomes leaderless", lambda: _leader(admin, "moves") == -1)


def test_records_and_timestamps_survive_a_leader_move(cluster: MockCluster) -> None:
    """REP-1: a new leader serves the same bytes; offsets continue. Explicit CreateTime timestamps,
    out of order on purpose, come back unchanged from the new leader."""
    cluster.create_topic("failover", partitions=1, replication_factor=3)
    admin = _admin(cluster.bootstrap)
    before = _produce(cluster.bootstrap, "failover", [1_000, 5_000, 3_000])
    old = _leader(admin, "failover")
    new = next(b for b in cluster.broker_ids if b != old)
    cluster.set_leader("failover", 0, new)
    _eventually("the leader move is visible", lambda: _leader(admin, "failover") == new)
    after = _produce(cluster.bootstrap, "failover", [2_000])
    assert [offset for offset, _ in before + after] == [0, 1, 2, 3]
    assert _consume(cluster.bootstrap, "failover", 4) == [(0, 1_000), (1, 5_000), (2, 3_000), (3, 2_000)]


def test_broker_down_refuses_connections_and_up_restores_them(cluster: MockCluster) -> None:
    address = cluster.addresses[2]
    assert _accepts_connections(address)
    cluster.broker_down(2)
    assert not _accepts_connections(address)
    assert _accepts_connections(cluster.addresses[1])  # only broker 2 is down
    cluster.broker_up(2)
    assert _accepts_connections(address)
    assert LIST_OFFSETS_KEY in probe_api_versions(*address, TIMEOUT)


def test_close_frees_the_cluster_and_is_idempotent() -> None:
    first = MockCluster(brokers=3)
    addresses = list(first.addresses.values())
    first.close()
    first.close()
    assert first.closed
    assert not any(_accepts_connections(a) for a in addresses)
    with pytest.raises(MockClusterError, match="closed"):
        first.set_leader("t", 0, 1)
    with MockCluster(brokers=3) as second:  # a new cluster starts after the first is gone
        assert _accepts_connections(second.addresses[1])
    assert second.closed


def test_close_is_registered_at_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    registered: list[Callable[[], None]] = []
    unregistered: list[Callable[[], None]] = []
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(atexit, "unregister", unregistered.append)
    mock = MockCluster(brokers=1)
    assert registered == [mock.close]
    mock.close()
    assert unregistered == [mock.close]


def test_commands_check_their_return_codes(cluster: MockCluster) -> None:
    cluster.create_topic("codes", partitions=1, replication_factor=3)
    with pytest.raises(MockClusterError, match="OFFSET_OUT_OF_RANGE") as raised:
        cluster.delete_records("codes", 0, 5)  # the log is empty: offset 5 is beyond its end
    assert raised.value.code == 1
    with pytest.raises(MockClusterError, match="no broker 7"):
        cluster.set_leader("codes", 0, 7)
    with pytest.raises(MockClusterError, match="no broker 9"):
        cluster.broker_down(9)
    implemented = cluster.implemented_versions[LIST_OFFSETS_KEY]
    with pytest.raises(MockClusterError, match="outside what the mock implements"):
        cluster.set_api_version(LIST_OFFSETS_KEY, 0, implemented[1] + 1)


def test_set_api_version_narrows_what_every_broker_advertises(cluster: MockCluster) -> None:
    cluster.set_api_version(LIST_OFFSETS_KEY, 0, 5)  # play a broker without MAX_TIMESTAMP (LO-1)
    assert {cluster.api_versions(b)[LIST_OFFSETS_KEY] for b in cluster.broker_ids} == {(0, 5)}
    cluster.disable_api(LIST_OFFSETS_KEY)
    assert LIST_OFFSETS_KEY not in cluster.api_versions(1)


def test_request_tracking_shows_which_broker_served(cluster: MockCluster) -> None:
    cluster.create_topic("tracked", partitions=1, replication_factor=3)
    cluster.set_leader("tracked", 0, 3)
    cluster.start_tracking()
    _produce(cluster.bootstrap, "tracked", [42])
    assert [r.broker_id for r in cluster.requests() if r.api_key == PRODUCE_VERSION_KEY] == [3]
    cluster.clear_requests()
    assert cluster.requests() == []
    _produce(cluster.bootstrap, "tracked", [43])
    tracked = cluster.stop_tracking()
    assert [r.broker_id for r in tracked if r.api_key == PRODUCE_VERSION_KEY] == [3]
    assert cluster.requests() == []  # tracking is off (and 2.16.0 dropped the list when it stopped)


def test_missing_library_names_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(rdkafka_mock.ENV_LIBRARY, raising=False)
    monkeypatch.setattr(rdkafka_mock, "_wheel_candidates", list)
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    with pytest.raises(LibrdkafkaNotFound, match=re.escape(INSTALL_HINT)):
        find_librdkafka()
    monkeypatch.setenv(rdkafka_mock.ENV_LIBRARY, str(tmp_path / "nope.so"))
    with pytest.raises(LibrdkafkaNotFound, match=rdkafka_mock.ENV_LIBRARY):
        find_librdkafka()


def test_a_library_without_the_mock_api_is_refused(tmp_path: Path) -> None:
    # libc loads fine but has no rd_kafka_* symbols: the error says so instead of crashing later.
    libc = "libc.so.6" if sys.platform.startswith("linux") else None
    if libc is None:
        pytest.skip("needs a Linux libc to stand in for a foreign library")
    with pytest.raises(LibrdkafkaNotFound, match="no mock-cluster API"):
        rdkafka_mock.load_librdkafka(libc)


# -- real clients


def _produce(bootstrap: str, topic: str, timestamps: list[int]) -> list[tuple[int, int]]:
    """Produce one record per timestamp (CreateTime, set explicitly); return (offset, error code)."""
    producer = ck.Producer(
        {"bootstrap.servers": bootstrap, "message.timeout.ms": int(TIMEOUT * 1000), "linger.ms": 0, "log_level": 0}
    )
    reports: list[tuple[int, int]] = []

    def delivered(err: Any, msg: Any) -> None:
        reports.append((msg.offset(), 0 if err is None else err.code()))

    for ts in timestamps:
        producer.produce(topic, value=b"v", partition=0, timestamp=ts, on_delivery=delivered)
        producer.flush(TIMEOUT)  # one request per record: their order is the offsets' order
    assert producer.flush(TIMEOUT) == 0
    assert [code for _, code in reports] == [0] * len(timestamps), reports
    return reports


def _consume(bootstrap: str, topic: str, count: int) -> list[tuple[int, int]]:
    consumer = ck.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "kts-meta", "enable.auto.commit": False, "log_level": 0}
    )
    try:
        consumer.assign([ck.TopicPartition(topic, 0, 0)])
        seen: list[tuple[int, int]] = []
        deadline = time.monotonic() + TIMEOUT
        while len(seen) < count and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None or message.error():
                continue
            _kind, timestamp = message.timestamp()
            seen.append((message.offset(), timestamp))
        return seen
    finally:
        consumer.close()
