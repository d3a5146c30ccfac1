"""The suite's control-plane client (conformance.control.control_client), the wire adapter's use of it and the
--control-url plumbing (issue 12).

The client runs against the reference broker's control plane on loopback (conformance.control.control_plane)
over a ServedCluster, and against a server of canned answers for answers outside the contract. The wire
adapter runs against `_StubKafka`, a stand-in for WireClient backed by the same ServedCluster, so that a
leader moved through the control plane shows in its Metadata as on a real broker.
"""

from __future__ import annotations

import io
import json
import re
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from conformance import cli
from conformance.control.control_client import ControlClient, ControlPlaneError
from conformance.control.control_plane import ControlPlane
from conformance.errors import EnvironmentFailure, TargetError
from conformance.judging.capabilities import Capability
from conformance.plugin.launcher import SuitesRun, pytest_command
from conformance.plugin.run_options import resolve_namespace
from conformance.reference.served import ServedCluster
from conformance.targets.kinds.implementation import UnsupportedOperation
from conformance.targets.libraries.model.model_broker import ModelFactory
from conformance.targets.registry import check_target, open_target
from conformance.targets.routes.wire_adapter.kafka_wire import WireImplementation, check_control
from conformance.wire.client import BrokerMetadata, ClusterMetadata, PartitionMetadata, TopicMetadata
from models.config import TopicConfig
from models.constants import ErrorCode
from models.errors import ConfigError
from models.profiles import get_profile

CONTROLLED = {Capability.CLOCK_CONTROL, Capability.LEADER_FAILOVER, Capability.RETENTION, Capability.IDEMPOTENCE,
              Capability.FILE_TIMES}


# --- control planes on loopback ----------------------------------------------------------------------


class _CannedHandler(BaseHTTPRequestHandler):
    """Answers each path with the (status, content type, body) canned for it: answers outside the contract."""

    server: Any
    timeout = 5

    def log_message(self, *args: object) -> None:  # quiet in the test output
        pass

    def do_GET(self) -> None:
        status, content_type, body = self.server.canned.get(self.path, (404, "text/plain", b"not canned"))
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _CannedControlPlane:
    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _CannedHandler)
        self.canned: dict[str, tuple[int, str, bytes]] = {}
        self.server.canned = self.canned  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)


@pytest.fixture
def served() -> ServedCluster:
    return ServedCluster(ModelFactory(profile="kafka-4.0"))


@pytest.fixture
def control(served: ServedCluster) -> Iterator[ControlPlane]:
    """The reference broker's control plane over `served`, on a free loopback port."""
    plane = ControlPlane(served, host="127.0.0.1", port=0, log=io.StringIO())
    plane.start()
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture
def odd() -> Iterator[_CannedControlPlane]:
    plane = _CannedControlPlane()
    plane.thread.start()
    try:
        yield plane
    finally:
        plane.server.shutdown()
        plane.server.server_close()


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text
    return text


# --- the client against a control plane ---------------------------------------------------------------


def test_the_client_drives_clocks_leaders_retention_and_reset(served: ServedCluster, control: ControlPlane) -> None:
    client = ControlClient(control.url, timeout=2.0)
    capabilities, brokers = client.capabilities()
    assert capabilities == CONTROLLED and brokers == (0, 1, 2)
    start = client.clock(1)
    assert start == served.clock(1)
    assert client.set_clock(1, start - 5_000) == start - 5_000 == served.clock(1)  # a clock may step back
    assert client.advance_clock(1, 7_000) == start + 2_000 == served.clock(1)
    served.impl.create_topic("orders", TopicConfig())
    leader, epoch = client.leader("orders", 0)
    partition = served.cluster.partition("orders", 0)
    assert (leader, epoch) == (partition.leader, partition.leader_epoch)
    moved, moved_epoch = client.move_leader("orders", 0, 2)
    assert moved == 2 == served.cluster.partition("orders", 0).leader and moved_epoch > epoch
    assert client.run_retention() == 0  # nothing old enough: no segment deleted
    client.reset()
    assert served.clock(1) == start and not served.cluster.partitions


def test_a_problem_answer_is_one_line_naming_the_url_the_operation_and_the_field(control: ControlPlane) -> None:
    client = ControlClient(control.url, timeout=2.0)
    with pytest.raises(ControlPlaneError) as caught:
        client.set_clock(99, 0)
    message = _one_line(caught.value)
    assert caught.value.status == 404 and caught.value.field == "path.broker"
    assert control.url in message and "PUT clock of broker 99" in message and "path.broker" in message
    assert "check-control" in message
    with pytest.raises(ControlPlaneError) as caught:
        client.leader("no-such-topic", 0)
    assert caught.value.field == "path.topic" and "no-such-topic" in _one_line(caught.value)


def test_an_unreachable_control_plane_fails_at_once_with_the_fix() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    started = time.monotonic()
    with pytest.raises(ControlPlaneError) as caught:
        ControlClient(url, timeout=2.0).capabilities()
    assert time.monotonic() - started < 2.0
    message = _one_line(caught.value)
    assert url in message and "GET /capabilities" in message
    assert "is the control plane running? pass --control-url URL or set KTS_CONTROL_URL" in message


def test_a_control_plane_that_never_answers_fails_within_the_timeout() -> None:
    with socket.socket() as listener:  # accepts connections (the kernel's backlog) and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(ControlPlaneError, match=r"no answer within 0\.3 s"):
            ControlClient(url, timeout=0.3).clock(0)
        assert time.monotonic() - started < 2.0


def test_answers_outside_the_contract_are_one_line_errors_and_unknown_capabilities_are_ignored(
    odd: _CannedControlPlane,
) -> None:
    odd.canned.update({
        "/brokers/0/clock": (200, "text/html", b"<html>hello</html>"),
        "/brokers/1/clock": (500, "text/plain", b"Traceback (most recent call last): ..."),
        "/brokers/2/clock": (200, "application/json", b'{"broker": 2, "now_ms": "soon"}'),
        "/capabilities": (200, "application/json",
                          b'{"capabilities": ["clock-control", "teleport", "zstd"], "brokers": [2, 0, 1]}'),
    })  # fmt: skip
    client = ControlClient(odd.url, timeout=2.0)
    with pytest.raises(ControlPlaneError, match=r"HTTP 200 with '<html>hello</html>', not a JSON object") as odd_body:
        client.clock(0)
    assert not isinstance(odd_body.value, EnvironmentFailure)
    with pytest.raises(ControlPlaneError, match=r"HTTP 500: 'Traceback .*' \(not problem\+json\)") as caught:
        client.clock(1)
    assert caught.value.status == 500 and "check-control" in _one_line(caught.value)
    # A control plane that broke is an environment failure (its test's clauses BLOCKED); one that answers outside
    # the contract is not.
    assert isinstance(caught.value, EnvironmentFailure)
    with pytest.raises(ControlPlaneError, match=r"breaks the contract: 'now_ms' is 'soon'"):
        client.clock(2)
    capabilities, brokers = client.capabilities()
    assert capabilities == {Capability.CLOCK_CONTROL, Capability.ZSTD} and brokers == (0, 1, 2)
    assert client.unknown_capabilities == ("teleport",)


def test_a_url_that_is_not_http_is_refused_before_any_call() -> None:
    with pytest.raises(ControlPlaneError, match="pass --control-url http://HOST:PORT"):
        ControlClient("127.0.0.1:8080")


# --- the wire adapter with and without a control plane ---------------------------------------------


class _StubKafka:
    """What WireImplementation asks of a WireClient, answered from a ServedCluster (Metadata shows the
    served cluster's leaders; topics the adapter creates are created there). `configs` keeps what each
    CreateTopics sent, as each alter changed it (DescribeConfigs shows it at once); a manual replica placement
    is refused as the reference broker refuses it (INVALID_REQUEST) unless `places`, and then kept in `placed`."""

    timeout = 2.0

    def __init__(self, served: ServedCluster, *, broker_ids: tuple[int, ...] | None = None) -> None:
        self.served = served
        self.refused: set[str] = set()  # configs CreateTopics answers INVALID_CONFIG to
        self.bootstrap = f"stub-{uuid.uuid4().hex[:8]}:9092"  # the adapter caches its probe per address
        self.broker_ids = broker_ids if broker_ids is not None else served.broker_ids()
        self.configs: dict[str, dict[str, str]] = {}
        self.places = False
        self.placed: dict[str, dict[int, tuple[int, ...]]] = {}

    def api_versions(self) -> dict[int, tuple[int, int]]:
        return {0: (3, 11), 1: (4, 16), 2: (1, 8), 3: (0, 12), 19: (2, 7), 20: (1, 6), 32: (1, 4), 44: (0, 1)}

    def metadata(self, topics: list[str] | None = None) -> ClusterMetadata:
        described: dict[str, TopicMetadata] = {}
        for (topic, index), partition in self.served.cluster.partitions.items():
            meta = PartitionMetadata(index, 0, partition.leader, partition.leader_epoch, (), ())
            described.setdefault(topic, TopicMetadata(topic, 0, None)).partitions[index] = meta
        brokers = tuple(BrokerMetadata(b, "127.0.0.1", 9092) for b in self.broker_ids)
        return ClusterMetadata(brokers, None, None, described)

    def leader(self, topic: str, partition: int) -> int:
        return self.served.cluster.partition(topic, partition).leader

    def create_topic(
        self, name: str, partitions: int = 1, replication_factor: int = 1, configs: dict[str, str] | None = None,
        *, assignments: dict[int, tuple[int, ...]] | None = None,
    ) -> tuple[int, str | None]:  # fmt: skip
        if assignments is not None:
            if not self.places:
                return ErrorCode.INVALID_REQUEST, "manual replica assignments are not served"
            self.placed[name] = dict(assignments)
            partitions = len(assignments)
        if self.refused & set(configs or {}):
            return ErrorCode.INVALID_CONFIG, f"refused: {sorted(self.refused & set(configs or {}))}"
        self.configs[name] = dict(configs or {})
        self.served.impl.create_topic(name, TopicConfig(), partitions=partitions)
        return 0, None

    def describe_configs(self, topic: str, *, node: int | None = None) -> dict[str, str]:
        return self.configs[topic]

    def alter_configs(self, topic: str, configs: dict[str, str | None]) -> tuple[int, str | None]:
        if not topic.endswith("applied-mark"):  # the adapter's mark that the alter was applied (kafka_wire)
            self.altered = dict(configs)
        shown = self.configs.setdefault(topic, {})
        for key, value in configs.items():
            if value is None:
                shown.pop(key, None)
            else:
                shown[key] = value
        return 0, None

    def delete_topics(self, names: list[str]) -> dict[str, object]:
        return {}

    def close(self) -> None:
        pass


def _adapter(stub: _StubKafka, control_url: str | None = None, **kwargs: Any) -> WireImplementation:
    control = ControlClient(control_url, timeout=2.0) if control_url else None
    return WireImplementation(stub, get_profile("kafka-4.0"), control=control, **kwargs)  # type: ignore[arg-type]


def test_without_a_control_plane_the_adapter_is_as_before(served: ServedCluster) -> None:
    stub = _StubKafka(served)
    impl = _adapter(stub)
    # A wall clock dates the broker's files as it dates its appends (file-times): no control plane needed.
    assert CONTROLLED & impl.capabilities == {Capability.FILE_TIMES}
    assert impl.clock_tolerance_ms == 5
    with pytest.raises(UnsupportedOperation, match="clock-control"):
        impl.set_clock(0, 1)
    with pytest.raises(UnsupportedOperation, match="retention"):
        impl.retention_tick()
    impl.create_topic("plain", TopicConfig())
    assert stub.configs[impl.topic_prefix + "plain"]["retention.ms"] == "-1"


def test_a_config_the_profile_does_not_have_is_refused_as_the_model_refuses_it(served: ServedCluster) -> None:
    stub = _StubKafka(served)
    stub.refused = {"message.timestamp.difference.max.ms"}  # gone in 4.0 (KIP-724)
    impl = _adapter(stub)
    with pytest.raises(ConfigError, match=re.escape("refused as kafka-4.0 refuses it")):
        impl.create_topic("difference", TopicConfig(difference_max_ms=1_000))
    stub.refused = {"message.timestamp.before.max.ms"}  # a config 4.0 has: the broker lacks it
    with pytest.raises(UnsupportedOperation, match="kip-937-configs"):
        impl.create_topic("before", TopicConfig(before_max_ms=1_000))


def test_a_config_back_at_its_default_is_deleted_not_left_as_it_was(served: ServedCluster) -> None:
    stub = _StubKafka(served)
    impl = _adapter(stub)
    impl.create_topic("codec", TopicConfig(compression_type="gzip"))
    impl.alter_config("codec", TopicConfig())  # compression.type back to `producer`, Kafka's default
    assert stub.altered["compression.type"] is None  # IncrementalAlterConfigs DELETE: back to the default
    assert stub.altered["message.timestamp.type"] == "CreateTime" and stub.altered["retention.ms"] == "-1"


def test_a_control_plane_turns_on_what_it_declares(served: ServedCluster, control: ControlPlane) -> None:
    stub = _StubKafka(served)
    impl = _adapter(stub, control.url)
    assert impl.capabilities >= CONTROLLED
    assert impl.clock_tolerance_ms == 0
    impl.set_clock(1, 1_700_000_123_456)  # broker index 1 is the second broker id
    assert served.clock(served.broker_ids()[1]) == 1_700_000_123_456 == impl.clock(1)
    impl.create_topic("ruled", TopicConfig())
    name = impl.topic_prefix + "ruled"
    assert "retention.ms" not in stub.configs[name]  # retention runs only when the suite asks
    impl.elect_leader("ruled", 0, 2)
    assert served.cluster.partition(name, 0).leader == 2 and impl.leader("ruled", 0) == 2
    impl.retention_tick()


def test_a_control_plane_leads_new_partitions_from_the_first_broker_as_the_model_does(
    served: ServedCluster, control: ControlPlane
) -> None:
    stub = _StubKafka(served)
    impl = _adapter(stub, control.url)
    original = stub.create_topic

    def create_led_by_broker_2(name: str, partitions: int = 1, replication_factor: int = 1,
                               configs: dict[str, str] | None = None, *,
                               assignments: dict[int, tuple[int, ...]] | None = None,
                               ) -> tuple[int, str | None]:  # fmt: skip
        answer = original(name, partitions, replication_factor, configs, assignments=assignments)
        if answer[0] != 0:
            return answer
        for partition in range(partitions):
            served.move_leader(name, partition, 2)
        return answer

    stub.create_topic = create_led_by_broker_2  # type: ignore[method-assign]
    impl.create_topic("moved", TopicConfig(), partitions=2)
    assert [served.cluster.partition(impl.topic_prefix + "moved", p).leader for p in (0, 1)] == [0, 0]


def test_where_leaders_move_new_partitions_are_placed_first_broker_first(
    served: ServedCluster, control: ControlPlane
) -> None:
    """A broker that takes a manual placement gets every partition's replicas first broker first: led by it from
    the start, at leader epoch 0 as in the model, with no move (a move would put its epochs one ahead)."""
    stub = _StubKafka(served)
    stub.places = True
    impl = _adapter(stub, control.url)
    impl.create_topic("placed", TopicConfig(), partitions=2)
    assert stub.placed[impl.topic_prefix + "placed"] == {0: (0, 1, 2), 1: (0, 1, 2)}
    impl.create_topic("one", TopicConfig())  # the stub's model places partition p on broker p: one partition
    assert served.leader(impl.topic_prefix + "one", 0) == (0, 0)


def test_the_control_plane_is_preferred_to_a_fault_hook(served: ServedCluster, control: ControlPlane) -> None:
    moves: list[tuple[str, int, int]] = []
    impl = _adapter(_StubKafka(served), control.url, failover=lambda *move: moves.append(move))
    impl.create_topic("hooked", TopicConfig())
    impl.elect_leader("hooked", 0, 1)
    assert not moves and served.cluster.partition(impl.topic_prefix + "hooked", 0).leader == 1
    assert any("fault hook is not used" in note for note in impl.notes)


def test_other_brokers_than_metadata_names_are_one_line_naming_both(
    served: ServedCluster, control: ControlPlane
) -> None:
    with pytest.raises(TargetError) as caught:
        _adapter(_StubKafka(served, broker_ids=(1, 2, 3)), control.url)
    message = _one_line(caught.value)
    assert "names brokers [0, 1, 2] but Metadata" in message and "[1, 2, 3]" in message


def test_declared_capabilities_beyond_the_controls_are_ignored_and_noted(odd: _CannedControlPlane) -> None:
    declared = b'{"capabilities": ["clock-control", "teleport", "log-append-time"], "brokers": [0, 1, 2]}'
    odd.canned["/capabilities"] = (200, "application/json", declared)
    impl = _adapter(_StubKafka(ServedCluster(ModelFactory())), odd.url)
    assert Capability.CLOCK_CONTROL in impl.capabilities
    assert not {Capability.LEADER_FAILOVER, Capability.RETENTION, Capability.IDEMPOTENCE} & impl.capabilities
    assert any("'teleport'" in note for note in impl.notes)
    assert any("'log-append-time'" in note for note in impl.notes)


# --- option plumbing ----------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["model", "mutant:lookup-last-match", "tansu", "reference"])
def test_control_url_with_a_target_that_is_not_a_users_cluster_is_a_usage_error(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["run", "--target", target, "--control-url", "http://127.0.0.1:1", "--no-html"])
    err = capsys.readouterr().err.strip()
    assert code == cli.EXIT_USAGE and "\n" not in err
    assert re.search(r"--control-url is for --target broker; target .* drop --control-url", err)


def test_control_url_from_the_environment_reaches_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KTS_CONTROL_URL", "http://127.0.0.1:1")
    args = cli.build_parser().parse_args(["run", "--target", "broker", "--bootstrap-servers", "127.0.0.1:1"])
    resolve_namespace(args, SuitesRun)  # what `run` does first: each option, else its variable, else its default
    assert args.control_url == "http://127.0.0.1:1"


def test_the_pytest_command_carries_the_control_url() -> None:
    cmd = pytest_command(SuitesRun("broker", "kafka-4.0", "broker", bootstrap_servers="h:1", control_url="http://c:2"))
    assert json.loads(cmd[cmd.index("--run-settings") + 1])["control_url"] == "http://c:2"
    model = pytest_command(SuitesRun("model", "kafka-4.0", "ci"))
    assert "control_url" not in json.loads(model[model.index("--run-settings") + 1])


def test_a_control_plane_that_does_not_answer_stops_the_run_before_it_starts() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    check_target("broker", "kafka-4.0", bootstrap="127.0.0.1:9092", control_url=url)  # a valid choice
    with pytest.raises(TargetError, match=re.escape(f"control plane at {url}: GET /capabilities failed")):
        check_control("127.0.0.1:9092", url, timeout=1.0)
    with pytest.raises(TargetError, match="--control-url is for --target broker"), open_target(
        "model", "kafka-4.0", control_url=url
    ):
        pass


def test_reference_mutant_targets_are_checked_like_mutants() -> None:
    from conformance.campaign.tasks import profile_for
    from conformance.faults import MUTANTS

    check_target("reference", "kafka-4.0")
    mutant = sorted(MUTANTS)[0]
    check_target(f"reference:mutant:{mutant}", "kafka-4.0")
    with pytest.raises(TargetError, match=r"unknown mutant 'nope'.*--target reference:mutant:"):
        check_target("reference:mutant:nope", "kafka-4.0")
    with pytest.raises(TargetError, match="drop --bootstrap-servers"):
        check_target("reference", "kafka-4.0", bootstrap="127.0.0.1:9092")
    for m in MUTANTS.values():
        assert profile_for(f"reference:mutant:{m.id}", "kafka-2.8") == profile_for(f"mutant:{m.id}", "kafka-2.8")


@pytest.mark.e2e
def test_the_managed_reference_target_comes_with_its_control_plane(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with open_target("reference", "kafka-4.0", log_dir=tmp_path, timeout=5.0) as (factory, logs):
        assert factory.control_url  # type: ignore[attr-defined]
        impl = factory.build()
        try:
            assert impl.capabilities >= CONTROLLED and impl.clock_tolerance_ms == 0  # type: ignore[attr-defined]
            impl.set_clock(2, 1_700_000_999_000)
            assert impl.clock(2) == 1_700_000_999_000
            impl.create_topic("e2e", TopicConfig())
            impl.elect_leader("e2e", 0, 1)
            assert impl.leader("e2e", 0) == 1  # Metadata over the wire shows the move
        finally:
            impl.close()
        assert logs and logs[0].is_file()
