"""The reference broker's Kafka side (issue 12, item 1): `conformance.reference.kafka_server` over a
`ServedCluster`, in process on free loopback ports, driven by the suite's own wire client, by raw
sockets for the failure paths, and by real clients (kafka-python, confluent-kafka, aiokafka where
installed); and `kafka-conformance serve` / `start_reference` as a real process for start, ready file
and SIGTERM.

What is checked here is the server (framing, routing, versions, field mapping, errors), not the model:
its answers are compared with an in-process `ModelImplementation` fed the same requests, so any
difference is the server's.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import signal
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.protocol.consumer import OffsetForLeaderEpochRequest
from kafka.protocol.metadata import ApiVersionsResponse, FindCoordinatorRequest
from kafka.protocol.producer import InitProducerIdRequest

from conformance.commands import serve
from conformance.reference.configs import ConfigProblem, describe, topic_config
from conformance.reference.kafka_server import KafkaServer, ServeError
from conformance.reference.served import ServedCluster
from conformance.targets.brokers.process import ManagedProcessError
from conformance.targets.brokers.reference_broker import start_reference
from conformance.targets.libraries.model.model_broker import ModelFactory, ModelImplementation
from conformance.targets.routes.wire_adapter.kafka_wire import kafka_configs
from conformance.wire.client import SUPPORTED_VERSIONS, WireClient
from conformance.wire.connection import KafkaConnection, WireError
from models.codec import encode_batches
from models.config import TopicConfig
from models.constants import MAGIC_V1, ErrorCode, TimestampType
from models.profiles import get_profile
from models.records import DefaultBatch, RecordSpec, build_legacy, build_v2
from strategies.configs import topic_configs

PRODUCE, FETCH, LIST_OFFSETS, METADATA, API_VERSIONS = 0, 1, 2, 3, 18
CREATE_TOPICS, DELETE_TOPICS, INIT_PRODUCER_ID, DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 19, 20, 22, 32, 44
TIMEOUT = 5.0
MAIN_PROFILES = ("kafka-4.0", "kafka-3.9", "kafka-2.8")


@contextlib.contextmanager
def serving(profile: str = "kafka-4.0", brokers: int = 3) -> Iterator[tuple[ServedCluster, KafkaServer]]:
    served = ServedCluster(ModelFactory(profile=profile, brokers=brokers))
    with KafkaServer(served) as server:
        yield served, server


@contextlib.contextmanager
def client(bootstrap: str, **kwargs: object) -> Iterator[WireClient]:
    wire = WireClient(bootstrap, timeout=TIMEOUT, **kwargs)  # type: ignore[arg-type]
    try:
        yield wire
    finally:
        wire.close()


def _batches(now: int) -> list[DefaultBatch]:
    """Batches whose timestamps are out of order, so that lookups and MaxTimestamp are not trivial."""
    offsets = ((-5_000, -1_000), (-9_000,), (-3_000, -7_000, -2_000), (-4_000,))
    return [
        build_v2([RecordSpec(now + delta, key=b"k", value=b"v%d" % i) for i, delta in enumerate(deltas)])
        for deltas in offsets
    ]


# ------------------------------------------------------------------------------------------------
# ApiVersions


@pytest.mark.parametrize("profile", MAIN_PROFILES)
def test_api_versions_offer_the_profile_ranges(profile: str) -> None:
    prof = get_profile(profile)
    with serving(profile) as (_, server), client(server.bootstrap) as wire:
        offered = wire.api_versions()
        # Produce from v0 on every profile: Kafka 4.0 still lists v0-v2 and closes on them (KAFKA-18659, CNV-1).
        for key, wanted in ((PRODUCE, (0, prof.produce_versions[1])), (FETCH, prof.fetch_versions),
                            (LIST_OFFSETS, prof.list_offsets_versions)):
            assert offered[key] == (wanted[0], min(wanted[1], SUPPORTED_VERSIONS[key][1])), key
        for key in (METADATA, API_VERSIONS, CREATE_TOPICS, DELETE_TOPICS, INIT_PRODUCER_ID, DESCRIBE_CONFIGS,
                    INCREMENTAL_ALTER_CONFIGS):
            assert key in offered, key
        # Every broker answers alike.
        assert all(wire.api_versions(node) == offered for node in (0, 1, 2))


# ------------------------------------------------------------------------------------------------
# Topics and configs


def test_create_describe_alter_delete_topic() -> None:
    with serving("kafka-4.0") as (served, server), client(server.bootstrap) as wire:
        configs = {"message.timestamp.type": "LogAppendTime", "retention.ms": "-1", "segment.bytes": "1000"}
        assert wire.create_topic("t", partitions=2, replication_factor=3, configs=configs) == (0, None)
        meta = wire.metadata(["t"]).topics["t"]
        assert meta.topic_id is not None
        assert {p: (m.leader, m.leader_epoch, m.replicas) for p, m in meta.partitions.items()} == {
            0: (0, 0, (0, 1, 2)), 1: (1, 0, (1, 2, 0))
        }
        described = wire.describe_configs("t")
        assert {k: described[k] for k in configs} == configs
        assert described["message.timestamp.after.max.ms"] == "3600000"  # KIP-1030 default on 4.0
        assert "message.timestamp.difference.max.ms" not in described  # removed in 4.0 (KIP-724)
        part = served.cluster.partition("t", 0)
        assert part.config.timestamp_type is TimestampType.LOG_APPEND_TIME and part.config.segment_bytes == 1000

        # IncrementalAlterConfigs changes what it names; AlterConfigs replaces every override.
        assert wire.alter_configs("t", {"message.timestamp.type": "CreateTime", "segment.bytes": None}) == (0, None)
        config = served.cluster.partition("t", 1).config
        assert (config.timestamp_type, config.retention_ms, config.segment_bytes) == (
            TimestampType.CREATE_TIME, -1, TopicConfig().segment_bytes
        )
        assert wire.alter_configs("t", {"retention.ms": "3600000"}, incremental=False) == (0, None)
        assert served.cluster.partition("t", 0).config.retention_ms == 3_600_000

        assert wire.create_topic("t").error_code == ErrorCode.TOPIC_ALREADY_EXISTS
        assert wire.delete_topics(["t", "absent"]) == {
            "t": (0, None),
            "absent": (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."),
        }
        assert not served.cluster.partitions
        assert wire.metadata(["t"]).topics["t"].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION  # no auto-create
        assert wire.create_topic("t") == (0, None)
        assert wire.metadata(["t"]).topics["t"].topic_id != meta.topic_id  # a new topic, a new id


@pytest.mark.parametrize(
    ("configs", "named"),
    [
        ({"message.timestamp.difference.max.ms": "1000"}, "message.timestamp.difference.max.ms"),  # not in 4.0
        ({"no.such.config": "1"}, "no.such.config"),
        ({"retention.ms": "soon"}, "retention.ms"),
        ({"message.timestamp.type": "WallClock"}, "message.timestamp.type"),
        ({"compression.type": "brotli"}, "compression.type"),
    ],
)
def test_refused_configs_are_invalid_config_naming_the_config(configs: dict[str, str], named: str) -> None:
    with serving("kafka-4.0") as (served, server), client(server.bootstrap) as wire:
        error, message = wire.create_topic("t", configs=configs)
        assert error == ErrorCode.INVALID_CONFIG and message is not None and named in message
        assert not served.cluster.partitions
        assert wire.create_topic("t") == (0, None)
        error, message = wire.alter_configs("t", configs)
        assert error == ErrorCode.INVALID_CONFIG and message is not None and named in message


def test_replication_factors() -> None:
    with serving("kafka-3.9") as (served, server), client(server.bootstrap) as wire:
        assert wire.create_topic("all", replication_factor=-1) == (0, None)
        assert wire.create_topic("one", partitions=3, replication_factor=1) == (0, None)
        assert len(served.cluster.partition("all", 0).replicas) == 3
        assert [list(served.cluster.partition("one", p).replicas) for p in range(3)] == [[0], [1], [2]]
        assert wire.create_topic("four", replication_factor=4).error_code == 38  # INVALID_REPLICATION_FACTOR
        assert wire.create_topic("zero", partitions=0).error_code == 37  # INVALID_PARTITIONS
        assert wire.create_topic("bad/name").error_code == 17  # INVALID_TOPIC_EXCEPTION
        # retention.ms=-1 (no time retention) and the difference config exist in 3.9.
        configs = {"retention.ms": "-1", "message.timestamp.difference.max.ms": "1000"}
        assert wire.create_topic("d", configs=configs) == (0, None)
        assert served.cluster.partition("d", 0).config.difference_max_ms == 1000


@pytest.mark.parametrize("profile", MAIN_PROFILES)
@settings(max_examples=40, deadline=None, database=None)
@given(data=st.data())
def test_configs_parse_what_the_wire_adapter_writes(profile: str, data: st.DataObject) -> None:
    """`topic_config` inverts `kafka_configs` (every key it writes, for configs the profile accepts),
    and DescribeConfigs shows each value as it was sent (the wire adapter's probe compares them)."""
    prof = get_profile(profile)
    config = data.draw(topic_configs(prof, message_format_magics=(0, 1, 2)), label="config")
    sent = kafka_configs(config)
    assert topic_config(sent, prof) == config
    described = {c.name: c.value for c in describe(config, prof)}
    assert {k: described[k] for k in sent} == sent


def test_configs_the_profile_lacks_are_refused() -> None:
    with pytest.raises(ConfigProblem) as refused:
        topic_config({"message.timestamp.before.max.ms": "1"}, get_profile("kafka-2.8"))  # KIP-937 is 3.6+
    assert refused.value.name == "message.timestamp.before.max.ms"


# ------------------------------------------------------------------------------------------------
# Produce, Fetch, ListOffsets: the served model answers as the model in process


@pytest.mark.parametrize("profile", MAIN_PROFILES)
def test_produce_fetch_list_offsets_agree_with_the_model(profile: str) -> None:
    prof = get_profile(profile)
    twin: ModelImplementation = ModelFactory(profile=profile).build()
    with serving(profile) as (served, server), client(server.bootstrap) as wire:
        now = served.impl.clock(0)
        for name, timestamp_type in (("c", "CreateTime"), ("l", "LogAppendTime")):
            configs = {"message.timestamp.type": timestamp_type, "retention.ms": "-1"}
            assert wire.create_topic(name, replication_factor=3, configs=configs) == (0, None)
            twin.create_topic(name, topic_config(configs, prof))
        produce_v, fetch_v = wire.max_version(PRODUCE, 13), wire.max_version(FETCH, 18)
        lookup_v = wire.max_version(LIST_OFFSETS, 11)
        for topic in ("c", "l"):
            for batch in _batches(now):
                got = wire.produce(topic, 0, encode_batches([batch]), version=produce_v)
                want = twin.produce(topic, 0, [batch], produce_version=produce_v)
                assert (got.error_code, got.base_offset, got.log_append_time, got.log_start_offset) == (
                    want.error, want.base_offset, want.log_append_time, want.log_start_offset
                )
            # A wrong CRC is the validator's (VAL-9); bytes that do not decode are refused by the server.
            bad = DefaultBatch(**{**_batches(now)[0].__dict__, "crc": 12345})
            got = wire.produce(topic, 0, encode_batches([bad]), version=produce_v)
            assert got.error_code == twin.produce(topic, 0, [bad], produce_version=produce_v).error != 0
            garbage = wire.produce(topic, 0, b"\x00" * 7, version=produce_v)
            assert garbage.error_code == ErrorCode.CORRUPT_MESSAGE

            fetched = wire.fetch(topic, 0, 0, version=fetch_v)
            want_fetch = twin.fetch(topic, 0, 0, fetch_version=fetch_v)
            assert fetched.records == encode_batches(want_fetch.batches)
            assert (fetched.error_code, fetched.high_watermark) == (want_fetch.error, want_fetch.high_watermark)

            targets = [-1, -2, now - 9_000, now - 4_500, now - 1_000, now + 1]
            if lookup_v >= 7:
                targets.append(-3)
            for version in sorted({1, lookup_v}):
                for target in targets:
                    got_lo = wire.list_offsets(topic, 0, target, version=version)
                    want_lo = twin.list_offsets(topic, 0, target, version=version)
                    assert (got_lo.error_code, got_lo.offset, got_lo.timestamp) == (
                        want_lo.error, want_lo.offset, want_lo.timestamp
                    ), (topic, version, target)
                    if version >= 4:
                        assert got_lo.leader_epoch == want_lo.leader_epoch
        if prof.list_offsets_versions[0] == 0:
            for target in (-1, -2, now - 4_500):
                old = wire.list_offsets("c", 0, target, version=0)
                assert old.offset == twin.list_offsets("c", 0, target, version=0).offset  # LO-7
                assert old.old_style_offsets == ((old.offset,) if old.offset >= 0 else ())
        if prof.produce_versions[0] <= 2:
            # Legacy produce (magic 1 at Produce v2) and down-converting fetches (Fetch v0..3, CNV-5).
            legacy = build_legacy([RecordSpec(now - 100, value=b"x"), RecordSpec(now - 50)], magic=MAGIC_V1)
            got = wire.produce("c", 0, encode_batches(legacy), version=2)
            want = twin.produce("c", 0, legacy, produce_version=2)
            assert (got.error_code, got.base_offset, got.log_append_time) == (
                want.error, want.base_offset, want.log_append_time
            )
            for version in (0, 3):
                fetched = wire.fetch("c", 0, 0, version=version)
                assert fetched.records == encode_batches(twin.fetch("c", 0, 0, fetch_version=version).batches)


def test_produce_v0_to_v2_listed_by_4_0_get_no_answer_and_store_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """CNV-1/CNV-7: kafka-4.0 lists Produce v0-v2 in ApiVersions (KAFKA-18659) and closes the connection on them,
    as Kafka's network layer does (NOT_SERVED): the client gets no answer, nothing is stored, the server goes
    on and the next request (on a new connection) is answered."""
    caplog.set_level(logging.INFO, logger="conformance.reference")
    with serving() as (served, server), client(server.bootstrap) as wire:
        assert wire.api_versions()[PRODUCE][0] == 0
        wire.create_topic("t", replication_factor=3)
        legacy = build_legacy([RecordSpec(served.impl.clock(0), value=b"x")], magic=MAGIC_V1)
        for version in (0, 1, 2):
            with pytest.raises(WireError):
                wire.produce("t", 0, encode_batches(legacy), version=version)
        assert wire.list_offsets("t", 0, -1, version=10).offset == 0
    closed = [r.getMessage() for r in caplog.records if "closing, as Kafka does" in r.getMessage()]
    assert [f"Produce v{v}" in line for v, line in zip((0, 1, 2), closed, strict=True)] == [True] * 3, closed


def test_acks_zero_gets_no_answer_but_appends() -> None:
    with serving() as (served, server), client(server.bootstrap) as wire:
        wire.create_topic("t", replication_factor=3)
        now = served.impl.clock(0)
        assert wire.produce("t", 0, encode_batches(_batches(now)[:1]), version=12, acks=0).base_offset == -1
        # The next request on the same connection is answered: no stray answer to the acks=0 request.
        assert wire.list_offsets("t", 0, -1, version=10).offset == 2


def test_old_leader_answers_not_leader_or_follower_after_a_move() -> None:
    with serving() as (served, server), client(server.bootstrap) as wire:
        wire.create_topic("t", replication_factor=3)
        now = served.impl.clock(0)
        assert wire.produce("t", 0, encode_batches(_batches(now)[:1]), version=12).error_code == 0
        assert served.leader("t", 0) == (0, 0)
        served.move_leader("t", 0, 2)
        # A client that does not refresh its metadata (no retries) still asks broker 0.
        with client(server.bootstrap, retries=0) as stale:
            stale.metadata(["t"])
            served.move_leader("t", 0, 1)
            assert stale.produce("t", 0, encode_batches(_batches(now)[1:2]), version=12).error_code == 6
            assert stale.fetch("t", 0, 0, version=17).error_code == 6
            assert stale.list_offsets("t", 0, -1, version=10).error_code == 6
        # One that refreshes finds the new leader, which answers with its epoch (REP-2).
        answer = wire.list_offsets("t", 0, -1, version=10)
        assert (answer.error_code, answer.offset, answer.leader_epoch) == (0, 2, 2)
        assert wire.metadata(["t"]).topics["t"].partitions[0].leader == 1


# ------------------------------------------------------------------------------------------------
# Robustness: bad requests close one connection, never the server


def _raw(server: KafkaServer) -> socket.socket:
    host, port = server.addresses[0]
    sock = socket.create_connection((host, port), timeout=TIMEOUT)
    sock.settimeout(TIMEOUT)
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def _request(api_key: int, version: int, body: bytes = b"", correlation_id: int = 7) -> bytes:
    header = struct.pack(">hhih", api_key, version, correlation_id, 4) + b"test"
    return struct.pack(">i", len(header) + len(body)) + header + body


def test_malformed_requests_close_the_connection_and_the_server_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="conformance.reference")
    with serving() as (_, server):
        bad = {
            "negative size": b"\xff\xff\xff\xff",
            "absurd size": b"HTTP/1.1 200 OK\r\n",
            "short header": struct.pack(">i", 3) + b"\x00\x03\x00",
            "unknown api key": _request(9999, 0),
            "api not served": _request(26, 3),  # EndTxn: no transactions here
            "version not offered": _request(FETCH, 3),  # Fetch v0-v3 are gone from kafka-4.0
            "undecodable body": _request(METADATA, 12, b"\xff\xff\xff\xff\xff"),
        }
        for what, payload in bad.items():
            with _raw(server) as sock:
                sock.sendall(payload)
                assert _closed_by_server(sock), what
        closed = [r.getMessage() for r in caplog.records if "connection closed" in r.getMessage()]
        assert len(closed) == len(bad), closed
        assert all("\n" not in line for line in closed)
        with client(server.bootstrap) as wire:
            assert wire.metadata().brokers


def test_api_versions_at_an_unknown_version_answers_unsupported_version_v0() -> None:
    with serving() as (_, server), _raw(server) as sock:
        sock.sendall(_request(API_VERSIONS, 99, correlation_id=42))
        (size,) = struct.unpack(">i", sock.recv(4))
        frame = b""
        while len(frame) < size:
            frame += sock.recv(size - len(frame))
        answer = ApiVersionsResponse.decode(frame, version=0, header=True)
        assert answer.header.correlation_id == 42
        assert answer.error_code == ErrorCode.UNSUPPORTED_VERSION
        assert {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}[API_VERSIONS] == (0, 4)
        sock.sendall(_request(API_VERSIONS, 0, correlation_id=43))  # the connection stays open
        assert struct.unpack(">i", sock.recv(4))[0] > 0


def test_a_failing_handler_closes_its_connection_only(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with serving() as (served, server), client(server.bootstrap) as wire:
        wire.create_topic("t", replication_factor=3)

        def boom(*args: object, **kwargs: object) -> None:
            raise RuntimeError("boom")

        monkeypatch.setattr(served.impl, "list_offsets", boom)
        with client(server.bootstrap, retries=0) as victim, pytest.raises(WireError):
            victim.list_offsets("t", 0, -1, version=10)
        failures = [r for r in caplog.records if r.exc_info and "ListOffsets v10" in r.getMessage()]
        assert failures and "ListOffsetsRequest" in failures[0].getMessage()
        monkeypatch.undo()
        assert wire.list_offsets("t", 0, -1, version=10).error_code == 0


def test_host_must_be_loopback() -> None:
    served = ServedCluster(ModelFactory())
    for host in ("0.0.0.0", "10.0.0.1", "localhost"):
        with pytest.raises(ServeError, match="loopback"):
            KafkaServer(served, host=host)
    KafkaServer(served, host="127.0.0.2")  # any 127/8 address is loopback


# ------------------------------------------------------------------------------------------------
# `serve`: the command, its ready file, its exits


def _serve_args(tmp_path: Path, **overrides: object) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    serve.add_arguments(parser)
    args = parser.parse_args(["--ready-file", str(tmp_path / "ready.json"), "--log-file", str(tmp_path / "log")])
    for key, value in overrides.items():
        setattr(args, key, value)
    return args


def test_serve_writes_its_ready_file_and_stops_on_request(tmp_path: Path) -> None:
    args = _serve_args(tmp_path, profile="kafka-3.9", target="mutant:lookup-last-match")
    out, stop, codes = io.StringIO(), threading.Event(), []
    thread = threading.Thread(target=lambda: codes.append(serve.run(args, out, stop=stop)))
    thread.start()
    try:
        ready = tmp_path / "ready.json"
        deadline = time.monotonic() + TIMEOUT
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        facts = json.loads(ready.read_text())
        assert facts["pid"] == os.getpid() and facts["target"] == "mutant:lookup-last-match"
        assert facts["profile"] == "kafka-3.9" and facts["control_url"].startswith("http://127.0.0.1:")
        assert out.getvalue() == (
            f"serving mutant:lookup-last-match (kafka-3.9) on {facts['bootstrap']} control {facts['control_url']}\n"
        )
        with client(facts["bootstrap"]) as wire:
            assert wire.api_versions()[LIST_OFFSETS] == (0, 9)
    finally:
        stop.set()
        thread.join(TIMEOUT)
    assert codes == [0] and not ready.exists()
    assert "ApiVersions v3" in (tmp_path / "log").read_text()


def test_serve_port_in_use_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert serve.run(_serve_args(tmp_path, port=port), io.StringIO()) == 2
        assert serve.run(_serve_args(tmp_path, control_port=port), io.StringIO()) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and f"port {port}" in lines[0] and "--port 0" in lines[0]
    assert f"{port}" in lines[1] and "--control-port 0" in lines[1]
    assert serve.run(_serve_args(tmp_path, target="tansu"), io.StringIO()) == 2
    assert serve.run(_serve_args(tmp_path, host="192.168.1.1"), io.StringIO()) == 2


def test_started_reference_exits_0_on_sigterm(tmp_path: Path) -> None:
    with start_reference(tmp_path, profile="kafka-2.8", brokers=2, timeout=20) as reference:
        assert len(reference.bootstrap.split(",")) == 2 and reference.control_url.startswith("http://")
        with client(reference.bootstrap) as wire:
            assert wire.api_versions()[PRODUCE] == (0, 9)
        os.kill(reference.pid, signal.SIGTERM)
        deadline = time.monotonic() + 2.0
        while reference.exit_status() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert reference.exit_status() == 0
    assert reference.returncode == 0
    assert "serving model (kafka-2.8)" in reference.log_path.read_text()


def test_a_reference_that_cannot_start_raises_with_its_log(tmp_path: Path) -> None:
    with pytest.raises(ManagedProcessError, match="unknown mutant 'nope'"):
        start_reference(tmp_path, profile="kafka-4.0", target="mutant:nope", timeout=20)


# ------------------------------------------------------------------------------------------------
# Real clients: produce (acks=all with idempotence, acks=0), assign + seek, offsetsForTimes


def _created(server: KafkaServer) -> None:
    with client(server.bootstrap) as wire:
        assert wire.create_topic("t", replication_factor=3, configs={"retention.ms": "-1"}) == (0, None)


def test_kafka_python_producer_and_consumer() -> None:
    kafka = pytest.importorskip("kafka")
    with serving() as (served, server):
        _created(server)
        now = served.impl.clock(0)
        producer = kafka.KafkaProducer(
            bootstrap_servers=server.bootstrap, acks="all", enable_idempotence=True, request_timeout_ms=5000
        )
        try:
            for i in range(4):
                producer.send("t", b"v%d" % i, timestamp_ms=now - 1_000 + 100 * i).get(timeout=TIMEOUT)
        finally:
            producer.close(timeout=TIMEOUT)
        fire_and_forget = kafka.KafkaProducer(bootstrap_servers=server.bootstrap, acks=0)
        fire_and_forget.send("t", b"acks0", timestamp_ms=now)
        fire_and_forget.close(timeout=TIMEOUT)
        consumer = kafka.KafkaConsumer(
            bootstrap_servers=server.bootstrap, group_id=None, enable_auto_commit=False, consumer_timeout_ms=3000
        )
        try:
            tp = kafka.TopicPartition("t", 0)
            consumer.assign([tp])
            found = consumer.offsets_for_times({tp: now - 850})[tp]
            assert (found.offset, found.timestamp) == (2, now - 800)
            consumer.seek(tp, found.offset)
            got = [(m.offset, m.timestamp, m.value) for _, m in zip(range(3), consumer, strict=False)]
        finally:
            consumer.close()
    assert got == [(2, now - 800, b"v2"), (3, now - 700, b"v3"), (4, now, b"acks0")]
    log = served.cluster.leader_log("t")
    assert {b.producer_id for b in log.batches()[:4]} == {1000}  # InitProducerId's id, on every batch


def test_confluent_kafka_producer_and_consumer() -> None:
    confluent = pytest.importorskip("confluent_kafka")
    with serving() as (served, server):
        _created(server)
        now = served.impl.clock(0)
        producer = confluent.Producer(
            {"bootstrap.servers": server.bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 0}
        )
        for i in range(4):
            producer.produce("t", value=b"v%d" % i, timestamp=now - 1_000 + 100 * i)
            producer.flush(TIMEOUT)
        fire_and_forget = confluent.Producer({"bootstrap.servers": server.bootstrap, "acks": 0})
        fire_and_forget.produce("t", value=b"acks0", timestamp=now)
        assert fire_and_forget.flush(TIMEOUT) == 0 and producer.flush(TIMEOUT) == 0
        # librdkafka needs a group id, but with assign() it never joins a group.
        consumer = confluent.Consumer(
            {"bootstrap.servers": server.bootstrap, "group.id": "kts", "enable.auto.commit": False}
        )
        try:
            (found,) = consumer.offsets_for_times([confluent.TopicPartition("t", 0, now - 850)], timeout=TIMEOUT)
            assert found.offset == 2 and found.error is None
            consumer.assign([confluent.TopicPartition("t", 0, found.offset)])
            got = []
            deadline = time.monotonic() + TIMEOUT
            while len(got) < 3 and time.monotonic() < deadline:
                message = consumer.poll(0.5)
                if message is not None and message.error() is None:
                    got.append((message.offset(), message.timestamp()[1], message.value()))
        finally:
            consumer.close()
        del producer, fire_and_forget
    assert got == [(2, now - 800, b"v2"), (3, now - 700, b"v3"), (4, now, b"acks0")]


def test_aiokafka_producer_and_consumer() -> None:
    aiokafka = pytest.importorskip("aiokafka")
    import asyncio

    async def scenario(bootstrap: str, now: int) -> list[tuple[int, int, bytes]]:
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
        await producer.start()
        try:
            for i in range(4):
                await producer.send_and_wait("t", b"v%d" % i, timestamp_ms=now - 1_000 + 100 * i)
        finally:
            await producer.stop()
        consumer = aiokafka.AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        await consumer.start()
        try:
            tp = aiokafka.TopicPartition("t", 0)
            consumer.assign([tp])
            found = (await consumer.offsets_for_times({tp: now - 850}))[tp]
            consumer.seek(tp, found.offset)
            got = []
            while len(got) < 2:
                message = await asyncio.wait_for(consumer.getone(), TIMEOUT)
                got.append((message.offset, message.timestamp, message.value))
            return got
        finally:
            await consumer.stop()

    with serving() as (served, server):
        _created(server)
        now = served.impl.clock(0)
        got = asyncio.run(scenario(server.bootstrap, now))
    assert got == [(2, now - 800, b"v2"), (3, now - 700, b"v3")]


def test_offset_for_leader_epoch_and_epoch_fencing() -> None:
    """What a consumer checks its position with after a leader change (OffsetForLeaderEpoch, KIP-320), and
    the leader-epoch fencing of Fetch and ListOffsets requests that name an epoch."""
    request, topic_class = OffsetForLeaderEpochRequest, OffsetForLeaderEpochRequest.OffsetForLeaderTopic
    with serving() as (served, server), client(server.bootstrap) as wire:
        wire.create_topic("t", replication_factor=3)
        now = served.impl.clock(0)
        for batch in _batches(now)[:2]:  # offsets 0..2 in epoch 0
            assert wire.produce("t", 0, encode_batches([batch]), version=12).error_code == 0
        served.move_leader("t", 0, 1)
        assert wire.produce("t", 0, encode_batches(_batches(now)[3:]), version=12).base_offset == 3  # epoch 1

        def ask(broker: int, leader_epoch: int, current: int = -1) -> tuple[int, int, int]:
            wanted = topic_class.OffsetForLeaderPartition(
                partition=0, current_leader_epoch=current, leader_epoch=leader_epoch
            )
            with KafkaConnection(*server.addresses[broker], timeout=TIMEOUT) as conn:
                answer = conn.send(request(replica_id=-1, topics=[topic_class(topic="t", partitions=[wanted])]), 4)
            p = answer.topics[0].partitions[0]
            return p.error_code, p.leader_epoch, p.end_offset

        assert ask(1, 0) == (0, 0, 3)  # epoch 0 ends where epoch 1 starts
        assert ask(1, 1, current=1) == (0, 1, 4)  # the latest epoch ends at the log end
        assert ask(1, 7) == (0, -1, -1)  # an epoch the log has never seen
        assert ask(1, 1, current=0)[0] == ErrorCode.FENCED_LEADER_EPOCH
        assert ask(1, 1, current=2)[0] == ErrorCode.UNKNOWN_LEADER_EPOCH
        assert ask(0, 1)[0] == ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_init_producer_id_and_no_transaction_coordinator() -> None:
    with serving() as (_, server), KafkaConnection(*server.addresses[0], timeout=TIMEOUT) as conn:
        first = conn.send(InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60_000), 4)
        second = conn.send(InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60_000), 4)
        assert (first.error_code, first.producer_epoch, second.producer_id) == (0, 0, first.producer_id + 1)
        bumped = conn.send(
            InitProducerIdRequest(
                transactional_id=None, transaction_timeout_ms=60_000, producer_id=first.producer_id, producer_epoch=0
            ),
            4,
        )
        assert (bumped.producer_id, bumped.producer_epoch) == (first.producer_id, 1)  # KIP-360
        transactional = conn.send(InitProducerIdRequest(transactional_id="tx", transaction_timeout_ms=60_000), 4)
        assert transactional.error_code == ErrorCode.INVALID_REQUEST  # no transactions here
        coordinator = conn.send(FindCoordinatorRequest(key="tx", key_type=1), 3)
        assert coordinator.error_code == 15  # COORDINATOR_NOT_AVAILABLE: no transactions


def test_stop_does_not_wait_for_clients() -> None:
    """A Fetch waiting for data (max_wait_ms) and an idle connection do not hold up stop()."""
    served = ServedCluster(ModelFactory())
    server = KafkaServer(served).start()
    outcome: list[object] = []
    with client(server.bootstrap) as wire:
        wire.create_topic("t", replication_factor=3)
        idle = _raw(server)

        def waiting_fetch() -> None:
            try:
                outcome.append(wire.fetch("t", 0, 0, version=17, max_wait_ms=30_000))
            except WireError as exc:
                outcome.append(exc)

        fetcher = threading.Thread(target=waiting_fetch)
        fetcher.start()
        time.sleep(0.1)  # the Fetch is waiting for an append
        started = time.monotonic()
        server.stop()
        stopped_in = time.monotonic() - started
        fetcher.join(TIMEOUT)
        assert _closed_by_server(idle)
        idle.close()
    assert stopped_in < 1.0 and not fetcher.is_alive() and len(outcome) == 1


# ------------------------------------------------------------------------------------------------
# Consumer groups (conformance/reference/groups.py behind the wire)


def _group_consumer(kafka: object, bootstrap: str, **extra: object) -> object:
    options: dict[str, object] = {
        "bootstrap_servers": bootstrap,
        "group_id": "g",
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
        "heartbeat_interval_ms": 100,
        "session_timeout_ms": 6_000,
        "consumer_timeout_ms": 5_000,
    }
    options.update(extra)
    return kafka.KafkaConsumer(**options)  # type: ignore[attr-defined]


def test_kafka_python_consumer_group_subscribe_poll_commit_committed() -> None:
    kafka = pytest.importorskip("kafka")
    with serving() as (served, server):
        _created(server)
        now = served.impl.clock(0)
        producer = kafka.KafkaProducer(bootstrap_servers=server.bootstrap, request_timeout_ms=5000)
        try:
            for i in range(3):
                producer.send("t", b"v%d" % i, timestamp_ms=now).get(timeout=TIMEOUT)
        finally:
            producer.close(timeout=TIMEOUT)
        tp = kafka.TopicPartition("t", 0)
        consumer = _group_consumer(kafka, server.bootstrap)
        try:
            consumer.subscribe(["t"])
            got = [m.value for _, m in zip(range(3), consumer, strict=False)]
            consumer.commit()
            committed = consumer.committed(tp)
            assignment = consumer.assignment()
        finally:
            consumer.close()
        # A second consumer of the group starts from the committed offset.
        again = _group_consumer(kafka, server.bootstrap, consumer_timeout_ms=500)
        try:
            again.subscribe(["t"])
            rest = [m.value for m in again]
            position = again.committed(tp)
        finally:
            again.close()
    assert got == [b"v0", b"v1", b"v2"] and committed == 3 and assignment == {tp}
    assert rest == [] and position == 3


def test_two_kafka_python_consumers_rebalance_the_partitions() -> None:
    kafka = pytest.importorskip("kafka")
    with serving() as (_, server):
        with client(server.bootstrap) as wire:
            assert wire.create_topic("two", partitions=2, replication_factor=1) == (0, None)
        first = _group_consumer(kafka, server.bootstrap, group_id="pair")
        second = _group_consumer(kafka, server.bootstrap, group_id="pair")
        try:
            first.subscribe(["two"])
            first.poll(timeout_ms=1000)
            assert len(first.assignment()) == 2  # alone: both partitions
            second.subscribe(["two"])
            deadline = time.monotonic() + 30  # a loaded two-core CI once took longer than 10 s
            while time.monotonic() < deadline and not (len(first.assignment()) == len(second.assignment()) == 1):
                first.poll(timeout_ms=100)
                second.poll(timeout_ms=100)
            assert len(first.assignment()) == len(second.assignment()) == 1
            assert first.assignment() | second.assignment() == {kafka.TopicPartition("two", p) for p in (0, 1)}
        finally:
            second.close()
            first.close()


def test_group_requests_to_another_broker_are_not_coordinator_and_reset_forgets_groups() -> None:
    from kafka.protocol.consumer import HeartbeatRequest, OffsetCommitRequest, OffsetFetchRequest

    topic_class = OffsetCommitRequest.OffsetCommitRequestTopic
    commit = OffsetCommitRequest(
        group_id="simple", generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
        topics=[topic_class(name="t", partitions=[topic_class.OffsetCommitRequestPartition(
            partition_index=0, committed_offset=7, committed_leader_epoch=-1, committed_metadata="")])],
    )  # fmt: skip
    fetch = OffsetFetchRequest(group_id="simple", topics=None)
    with serving() as (served, server):
        _created(server)
        with KafkaConnection(*server.addresses[0], timeout=TIMEOUT) as conn:
            found = conn.send(FindCoordinatorRequest(key="simple", key_type=0), 3)
            assert (found.error_code, found.node_id) == (0, 0)
            assert conn.send(commit, 8).topics[0].partitions[0].error_code == 0
            assert conn.send(fetch, 7).topics[0].partitions[0].committed_offset == 7
            beat = conn.send(HeartbeatRequest(group_id="simple", generation_id=0, member_id="nobody"), 4)
            assert beat.error_code == 25  # UNKNOWN_MEMBER_ID
        with KafkaConnection(*server.addresses[1], timeout=TIMEOUT) as conn:
            assert conn.send(fetch, 7).error_code == 16  # NOT_COORDINATOR
        served.reset()
        _created(server)
        with KafkaConnection(*server.addresses[0], timeout=TIMEOUT) as conn:
            assert conn.send(fetch, 7).topics == []  # a reset forgets every group and offset
