"""The reference broker's HTTP control plane (issue 12): what each route does to the served model, how it
refuses bad input (4xx problem+json naming the field, never a 5xx, never a hang), and schemathesis
against it: its pytest integration (positive and negative data from the examples, coverage and fuzzing
phases, then stateful sequences along the document's links) and its engine, as `check-control` runs it,
for at least 1,000 generated requests with no failure."""

from __future__ import annotations

import http.client
import io
import json
import logging
import socket
import time
from collections.abc import Iterator
from typing import Any

import jsonschema_rs
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from conformance.commands.check_control import check_control_plane, load_schema
from conformance.control.control_plane import MAX_BODY_BYTES, OPENAPI_PATH, ControlPlane
from conformance.reference.served import ServedCluster
from conformance.targets.libraries.model.model_broker import DEFAULT_START_TIME as T0
from conformance.targets.libraries.model.model_broker import ModelFactory
from models.config import TopicConfig
from models.records import RecordSpec, build_batches

TOPIC = "kts-control"  # the topic the OpenAPI document's examples name
PROBLEM = "application/problem+json"


@pytest.fixture
def served() -> ServedCluster:
    return ServedCluster(ModelFactory(profile="kafka-4.0", brokers=3))


@pytest.fixture
def log() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def plane(served: ServedCluster, log: io.StringIO) -> Iterator[ControlPlane]:
    with ControlPlane(served, log=log) as running:
        yield running


def call(plane: ControlPlane, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, str, Any, http.client.HTTPResponse]:
    """One request; (status, content type, decoded JSON body, response)."""
    host, port = plane.address
    connection = http.client.HTTPConnection(host, port, timeout=5)
    try:
        payload = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        sent = {"Content-Type": "application/json"} if payload is not None else {}
        connection.request(method, path, body=payload, headers={**sent, **(headers or {})})
        response = connection.getresponse()
        data = response.read()
        decoded = json.loads(data) if data else None
        return response.status, response.getheader("Content-Type", ""), decoded, response
    finally:
        connection.close()


def assert_problem(answer: tuple[int, str, Any, Any], status: int, field: str) -> None:
    got_status, content_type, problem, _ = answer
    assert (got_status, content_type) == (status, PROBLEM), f"expected {status} problem+json, got {answer[:3]}"
    assert problem["status"] == status and problem["field"] == field, problem
    assert problem["detail"] and problem["title"], problem


def produce(served: ServedCluster, topic: str, timestamp: int) -> None:
    batches = build_batches([RecordSpec(timestamp, None, b"v")], magic=2)
    assert served.impl.produce(topic, 0, batches, produce_version=9).error == 0


# --- what the routes do to the model ---------------------------------------------------------------


def test_capabilities_list_the_controls_and_the_brokers(plane: ControlPlane) -> None:
    status, _, body, _ = call(plane, "GET", "/capabilities")
    assert status == 200
    assert body == {
        "capabilities": ["clock-control", "leader-failover", "retention", "idempotence", "file-times"],
        "brokers": [0, 1, 2],
    }


def test_set_advance_and_read_a_clock_reach_the_model(plane: ControlPlane, served: ServedCluster) -> None:
    assert call(plane, "GET", "/brokers/1/clock")[2] == {"broker": 1, "now_ms": T0}
    assert call(plane, "PUT", "/brokers/1/clock", {"now_ms": T0 + 5_000})[2] == {"broker": 1, "now_ms": T0 + 5_000}
    assert served.impl.clock(1) == T0 + 5_000
    # REP-2: a clock may step back.
    stepped_back = call(plane, "POST", "/brokers/1/clock/advance", {"delta_ms": -7_000})
    assert stepped_back[2] == {"broker": 1, "now_ms": T0 - 2_000}
    assert served.impl.clock(1) == T0 - 2_000
    assert call(plane, "GET", "/brokers/1/clock")[2] == {"broker": 1, "now_ms": T0 - 2_000}
    assert served.impl.clock(0) == T0 and served.impl.clock(2) == T0  # only broker 1 moved


def test_leader_move_changes_the_leader_and_bumps_the_epoch(plane: ControlPlane, served: ServedCluster) -> None:
    served.impl.create_topic("moves", TopicConfig(), partitions=2)
    before = served.cluster.partition("moves", 1)
    assert call(plane, "GET", "/topics/moves/partitions/1/leader")[2] == {
        "topic": "moves", "partition": 1, "leader": before.leader, "leader_epoch": 0,
    }
    target = next(b for b in (0, 1, 2) if b != before.leader)
    status, _, body, _ = call(plane, "PUT", "/topics/moves/partitions/1/leader", {"broker": target})
    assert status == 200
    assert body == {"topic": "moves", "partition": 1, "leader": target, "leader_epoch": 1}
    assert served.cluster.partition("moves", 1).leader == target
    assert served.cluster.partition("moves", 1).leader_epoch == 1
    assert served.cluster.partition("moves", 0).leader_epoch == 0  # the other partition did not move


def test_retention_deletes_a_segment_older_than_retention_ms(plane: ControlPlane, served: ServedCluster) -> None:
    """IDX-10: after the clocks pass retention.ms beyond a segment's largest timestamp, POST /retention
    deletes it (on every replica) and the log start offset moves past it; a younger segment stays."""
    served.impl.create_topic("old", TopicConfig(retention_ms=60_000, segment_ms=1_000))
    produce(served, "old", T0)  # offset 0, in the first segment
    for broker in (0, 1, 2):
        assert call(plane, "POST", f"/brokers/{broker}/clock/advance", {"delta_ms": 10_000})[0] == 200
    produce(served, "old", T0 + 10_000)  # offset 1: segment.ms has passed, so a second segment
    assert call(plane, "POST", "/retention")[2] == {"segments_deleted": 0}  # nothing is old enough yet
    for broker in (0, 1, 2):
        call(plane, "POST", f"/brokers/{broker}/clock/advance", {"delta_ms": 55_000})  # T0 + 65 s
    status, _, body, _ = call(plane, "POST", "/retention", {})
    assert (status, body) == (200, {"segments_deleted": 3})  # the first segment, on each of three replicas
    for log in served.cluster.partition("old", 0).replicas.values():
        assert log.log_start_offset == 1 and len(log.segments) == 1


def test_reset_empties_the_topics_and_restarts_the_clocks(plane: ControlPlane, served: ServedCluster) -> None:
    served.impl.create_topic("gone", TopicConfig())
    call(plane, "PUT", "/brokers/2/clock", {"now_ms": 5})
    assert call(plane, "POST", "/reset")[:3] == (200, "application/json", {"reset": True})
    assert served.cluster.partitions == {}
    assert served.impl.clock(2) == T0
    assert_problem(call(plane, "GET", "/topics/gone/partitions/0/leader"), 404, "path.topic")


def test_the_served_document_is_the_shipped_one(plane: ControlPlane) -> None:
    status, content_type, body, _ = call(plane, "GET", "/openapi.json")
    assert (status, content_type) == (200, "application/json")
    assert body == json.loads(OPENAPI_PATH.read_text(encoding="utf-8"))
    assert body["openapi"].startswith("3.1.")


def test_the_document_is_valid_openapi_3_1_and_complete() -> None:
    schema = load_schema("http://127.0.0.1:1")
    schema.validate()  # against the OpenAPI 3.1 meta-schema
    broken = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": 5}
    with pytest.raises(jsonschema_rs.ValidationError, match="paths"):  # the validation can fail
        schemathesis.openapi.from_dict(broken).validate()
    document = json.loads(OPENAPI_PATH.read_text(encoding="utf-8"))
    operation_ids = set()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            operation_ids.add(operation["operationId"])
            for status, response in operation["responses"].items():
                if status.startswith("4"):
                    name = response["$ref"].rsplit("/", 1)[1]
                    content = document["components"]["responses"][name]["content"]
                    assert list(content) == [PROBLEM], (path, method, status)
    assert len(operation_ids) == 9
    for schema_name in ("ClockSet", "ClockAdvance", "LeaderMove", "Empty", "Clock", "Leader", "Capabilities"):
        assert document["components"]["schemas"][schema_name]["additionalProperties"] is False
    links = [
        link
        for item in document["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict)
        for response in operation.get("responses", {}).values()
        for link in response.get("links", {}).values()
    ]
    assert links and all(link["operationId"] in operation_ids for link in links)


def test_a_constraint_the_server_cannot_enforce_stops_it(
    tmp_path: Any, served: ServedCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server reads its request constraints from the document: a keyword its validator does not know
    would be a constraint schemathesis checks and the server ignores, so it refuses to start."""
    document = json.loads(OPENAPI_PATH.read_text(encoding="utf-8"))
    document["components"]["schemas"]["ClockMs"]["multipleOf"] = 1000
    changed = tmp_path / "openapi.json"
    changed.write_text(json.dumps(document), encoding="utf-8")
    monkeypatch.setattr("conformance.control.control_plane.OPENAPI_PATH", changed)
    with pytest.raises(ValueError, match="multipleOf"):
        ControlPlane(served)


# --- bad input: 4xx problem+json naming the field ------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "field"),
    [
        ("GET", "/brokers/x/clock", None, 400, "path.broker"),
        ("GET", "/brokers/-1/clock", None, 400, "path.broker"),
        ("GET", "/brokers/99999999999999999999/clock", None, 400, "path.broker"),
        ("GET", "/brokers/7/clock", None, 404, "path.broker"),
        ("PUT", "/brokers/7/clock", {"now_ms": 1}, 404, "path.broker"),
        ("PUT", "/brokers/0/clock", None, 400, "body"),
        ("PUT", "/brokers/0/clock", [1], 400, "body"),
        ("PUT", "/brokers/0/clock", {}, 400, "body.now_ms"),
        ("PUT", "/brokers/0/clock", {"now_ms": "1"}, 400, "body.now_ms"),
        ("PUT", "/brokers/0/clock", {"now_ms": True}, 400, "body.now_ms"),
        ("PUT", "/brokers/0/clock", {"now_ms": 1.5}, 400, "body.now_ms"),
        ("PUT", "/brokers/0/clock", {"now_ms": -1}, 422, "body.now_ms"),
        ("PUT", "/brokers/0/clock", {"now_ms": 2**53}, 422, "body.now_ms"),
        ("PUT", "/brokers/0/clock", {"now_ms": 1, "delta_ms": 2}, 400, "body.delta_ms"),
        ("POST", "/brokers/0/clock/advance", {"delta_ms": None}, 400, "body.delta_ms"),
        ("POST", "/brokers/0/clock/advance", {"delta_ms": -(T0 + 1)}, 422, "body.delta_ms"),
        ("GET", "/topics/nope/partitions/0/leader", None, 404, "path.topic"),
        ("GET", "/topics/a%2Fb/partitions/0/leader", None, 400, "path.topic"),
        ("GET", f"/topics/{TOPIC}/partitions/1/leader", None, 404, "path.partition"),
        ("PUT", f"/topics/{TOPIC}/partitions/0/leader", {"broker": 7}, 422, "body.broker"),
        ("PUT", f"/topics/{TOPIC}/partitions/0/leader", {"broker": "1"}, 400, "body.broker"),
        ("PUT", "/topics/single/partitions/0/leader", {"broker": 2}, 409, "body.broker"),
        ("POST", "/reset", {"all": True}, 400, "body.all"),
        ("POST", "/retention", "now", 400, "body"),
        ("GET", "/brokers", None, 404, "path"),
        ("GET", "/", None, 404, "path"),
    ],
)
def test_bad_input_is_a_4xx_problem_naming_the_field(
    plane: ControlPlane, served: ServedCluster, method: str, path: str, body: Any, status: int, field: str
) -> None:
    served.impl.create_topic(TOPIC, TopicConfig())
    served.cluster.create_topic("single", TopicConfig(), replication_factor=1)  # replicas: broker 0 only
    assert_problem(call(plane, method, path, body), status, field)


def test_a_body_that_is_not_json_or_not_json_typed_is_refused(plane: ControlPlane) -> None:
    assert_problem(call(plane, "PUT", "/brokers/0/clock", raw=b'{"now_ms": '), 400, "body")
    assert_problem(call(plane, "PUT", "/brokers/0/clock", raw=b'{"now_ms": NaN}'), 400, "body")
    assert_problem(call(plane, "PUT", "/brokers/0/clock", raw=b"\xff\xfe"), 400, "body")
    assert_problem(call(plane, "PUT", "/brokers/0/clock", raw=b"[" * 3000), 400, "body")
    text = call(plane, "PUT", "/brokers/0/clock", raw=b'{"now_ms": 1}', headers={"Content-Type": "text/plain"})
    assert_problem(text, 415, "header.content-type")


def test_an_integral_float_is_a_json_schema_integer(plane: ControlPlane, served: ServedCluster) -> None:
    # JSON Schema (and so schemathesis' positive data): 5.0 is an integer.
    answer = call(plane, "PUT", "/brokers/0/clock", {"now_ms": 5.0})
    assert answer[:3] == (200, "application/json", {"broker": 0, "now_ms": 5})
    assert served.impl.clock(0) == 5


def test_another_method_is_405_with_allow(plane: ControlPlane) -> None:
    answer = call(plane, "DELETE", "/brokers/0/clock")
    assert_problem(answer, 405, "method")
    assert answer[3].getheader("Allow") == "GET, PUT"
    for method in ("PATCH", "TRACE", "OPTIONS", "BREW"):
        assert_problem(call(plane, method, "/reset"), 405, "method")
    head = call(plane, "HEAD", "/capabilities")
    assert head[0] == 405 and head[3].getheader("Allow") == "GET"


def _raw_exchange(plane: ControlPlane, request: bytes, *, timeout: float = 5.0) -> tuple[bytes, float]:
    started = time.monotonic()
    with socket.create_connection(plane.address, timeout=timeout) as sock:
        sock.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer, time.monotonic() - started


def _problem_of(answer: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"Content-Type: application/problem+json" in head, head
    return int(head.split()[1]), json.loads(body)


def test_a_content_length_that_lies_gets_a_4xx_not_a_hang(served: ServedCluster) -> None:
    with ControlPlane(served, log=io.StringIO(), read_timeout=0.5) as quick:
        request = b"PUT /brokers/0/clock HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        answer, seconds = _raw_exchange(quick, request + b'Content-Length: 100\r\n\r\n{"now_ms": 1}')
        status, problem = _problem_of(answer)
        assert (status, problem["field"]) == (408, "body") and seconds < 3
        answer, _ = _raw_exchange(quick, request + b"Content-Length: ten\r\n\r\n")
        assert _problem_of(answer)[0] == 400
        too_large = request + f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n".encode()
        answer, seconds = _raw_exchange(quick, too_large)  # refused before the body is read
        assert _problem_of(answer)[1]["field"] == "body" and _problem_of(answer)[0] == 413 and seconds < 1
        for garbage in (b"NOT A REQUEST\r\n\r\n", b"GET /capabilities HTTP/2.0\r\n\r\n"):
            answer, _ = _raw_exchange(quick, garbage)
            assert _problem_of(answer)[:1] == (400,) and _problem_of(answer)[1]["field"] == "request"
        answer, _ = _raw_exchange(quick, b"GET /capabilities HTTP/1.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n")
        assert _problem_of(answer)[0] == 431


def test_an_idle_connection_is_closed_by_the_read_timeout(served: ServedCluster) -> None:
    with (
        ControlPlane(served, log=io.StringIO(), read_timeout=0.3) as quick,
        socket.create_connection(quick.address, timeout=5) as sock,
    ):
        started = time.monotonic()
        assert sock.recv(1) == b""  # the server hung up
        assert time.monotonic() - started < 2


def test_an_unexpected_exception_is_a_logged_500(
    plane: ControlPlane, served: ServedCluster, log: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path the schemathesis tests must never reach: a bug answers 500 problem+json, logged with its
    traceback, and the server goes on serving."""

    def broken(broker: int) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(served, "clock", broken)
    assert_problem(call(plane, "GET", "/brokers/0/clock"), 500, "server")
    assert "RuntimeError: a bug" in log.getvalue()
    assert call(plane, "GET", "/capabilities")[0] == 200


def test_one_log_line_per_request(plane: ControlPlane, log: io.StringIO) -> None:
    call(plane, "GET", "/capabilities")
    call(plane, "PUT", "/brokers/0/clock", {"now_ms": 1})
    call(plane, "GET", "/nope")
    lines = log.getvalue().splitlines()
    assert len(lines) == 3
    expected = [("GET", "/capabilities", "200"), ("PUT", "/brokers/0/clock", "200"), ("GET", "/nope", "404")]
    for line, (method, path, status) in zip(lines, expected, strict=True):
        words = line.split()
        assert words[:4] == ["control:", method, path, status] and words[5] == "ms" and float(words[4]) >= 0
    assert plane.requests_served == 3


def test_log_lines_go_to_a_logger(served: ServedCluster, caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("test.control")
    with caplog.at_level(logging.INFO, logger="test.control"), ControlPlane(served, log=logger) as running:
        call(running, "GET", "/capabilities")
    assert [r.getMessage().split()[:4] for r in caplog.records] == [["control:", "GET", "/capabilities", "200"]]


def test_stop_closes_within_a_second_with_a_keep_alive_connection_open(served: ServedCluster) -> None:
    running = ControlPlane(served, log=io.StringIO()).start()
    host, port = running.address
    connection = http.client.HTTPConnection(host, port, timeout=5)
    connection.request("GET", "/capabilities")
    assert connection.getresponse().read()  # the connection stays open (HTTP/1.1 keep-alive)
    started = time.monotonic()
    running.stop()
    assert time.monotonic() - started < 1.0
    with pytest.raises(OSError):
        socket.create_connection((host, port), timeout=1).close()
    connection.close()


# --- schemathesis ------------------------------------------------------------------------------------


def _contract_cluster() -> ServedCluster:
    """The cluster behind the schemathesis runs: the topic the document's examples name, with partitions
    0 and 1, so generated leader moves also succeed."""
    served = ServedCluster(ModelFactory(profile="kafka-4.0", brokers=3))
    served.impl.create_topic(TOPIC, TopicConfig(), partitions=2)
    return served


@pytest.fixture
def contract_plane(request: pytest.FixtureRequest) -> Iterator[ControlPlane]:
    """A control plane for one schemathesis test; on teardown, the requests it served are counted (a
    failure would have failed the test already)."""
    with ControlPlane(_contract_cluster(), log=io.StringIO()) as running:
        yield running
    print(f"{request.node.name}: {running.requests_served} requests served")
    assert running.requests_served >= 200, f"only {running.requests_served} requests: the contract test barely ran"


def _operations(url: str) -> list[Any]:
    schema = load_schema(url, max_examples=25, timeout=5, seed=20240612)
    return [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=lambda m: m.value)
def test_contract_every_operation_with_schemathesis(contract_plane: ControlPlane, mode: GenerationMode) -> None:
    """Every operation, positive or negative data from schemathesis' strategies, every standard check
    (not_a_server_error, status code, content type and response schema conformance, negative_data_rejection,
    positive_data_acceptance, ...). Driven by Hypothesis directly rather than through schemathesis' pytest
    plugin: the plugin of schemathesis 4.32.5 breaks on pytest 9.2 ('Function' object has no attribute
    '_nodeid')."""
    negated = 0
    for operation in _operations(contract_plane.url):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=50, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        def check(case: Any) -> None:
            case.call_and_validate()

        try:
            check()
        except Unsatisfiable:
            # No negative data exists for an operation without parameters or body (GET /capabilities).
            assert mode is GenerationMode.NEGATIVE, operation.label
            continue
        negated += 1
    assert negated >= 5, f"only {negated} operations were checked with {mode.value} data"


def test_contract_stateful_with_schemathesis(contract_plane: ControlPlane) -> None:
    """Sequences along the document's links: set a clock then read it back, capabilities then a broker's
    clock, a leader move then the leader; every response checked."""
    schema = load_schema(contract_plane.url, timeout=5, seed=20240612)
    before = contract_plane.requests_served
    schema.as_state_machine().run(
        settings=settings(max_examples=40, stateful_step_count=6, deadline=None, database=None, derandomize=True)
    )
    assert contract_plane.requests_served - before >= 40


@pytest.mark.e2e  # about 7 s: the fast tests stay within their 90 s (tox -e py); the default tox runs it (e2e)
def test_contract_engine_at_least_1000_requests() -> None:
    """schemathesis' engine, as `kafka-conformance check-control` drives it, over every operation (reset and
    retention included): at least 1,000 generated requests, and not one breaks the contract."""
    with ControlPlane(_contract_cluster(), log=io.StringIO()) as running:
        schema = load_schema(running.url, max_examples=100, timeout=5, seed=20240612)
        started = time.monotonic()
        check = check_control_plane(schema, running.url, progress=print)
        seconds = time.monotonic() - started
        served_count = running.requests_served
    print(f"schemathesis (engine): {check.requests} requests in {seconds:.1f} s, {len(check.findings)} failures")
    broken = [f"{f.operation}: {f.check}: {f.title}: {f.reproduction}" for f in check.findings.values()]
    assert not broken, broken
    assert not check.stopped, check.stopped
    assert check.requests >= 1000
    assert served_count >= check.requests  # what schemathesis counted reached the server
