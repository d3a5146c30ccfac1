"""`kafka-conformance check-control URL` (issue 12): a deliberately broken control plane fails with one
verdict line naming what broke; the reference control plane passes; it does not reset a user's cluster
unless asked; bad URLs, an unreachable address and a missing schemathesis each get one line and exit 2."""

from __future__ import annotations

import io
import socket
import sys
import time
from collections.abc import Iterator

import pytest

from conformance.cli import main
from conformance.commands.check_control import INSTALL_HINT, ControlCheck, Finding, verdict_line
from conformance.control.control_plane import ControlPlane
from conformance.reference.served import ServedCluster
from conformance.targets.libraries.model.model_broker import ModelFactory
from models.config import TopicConfig
from tests.brokencontrol import BrokenControlPlane

BROKEN_OPERATIONS = ("GET /brokers/{broker}/clock", "PUT /brokers/{broker}/clock")


@pytest.fixture
def broken() -> Iterator[BrokenControlPlane]:
    plane = BrokenControlPlane().start()
    yield plane
    plane.stop()


@pytest.fixture
def served() -> ServedCluster:
    served = ServedCluster(ModelFactory())
    served.impl.create_topic("users-topic", TopicConfig())  # a user's topic, for --topic
    return served


@pytest.fixture
def reference(served: ServedCluster) -> Iterator[tuple[ControlPlane, io.StringIO]]:
    log = io.StringIO()
    with ControlPlane(served, log=log) as plane:
        yield plane, log


def check_control(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    code = main(["check-control", *args])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def verdict_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(("check-control: PASS", "check-control: FAIL"))]


def test_a_broken_control_plane_fails_with_one_line_naming_what_broke(
    broken: BrokenControlPlane, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines, _ = check_control(capsys, broken.url, "--max-examples", "20", "--seed", "7")
    assert code == 1
    assert verdict_lines(lines) == [lines[-1]], lines  # exactly one verdict, and it is the last line
    verdict = lines[-1]
    assert verdict.startswith("check-control: FAIL: ") and "requests broke the contract" in verdict
    assert "not_a_server_error on PUT /brokers/{broker}/clock" in verdict
    assert "response_schema_conformance on GET /brokers/{broker}/clock" in verdict
    # The blame is precise: the shim honours the contract everywhere else.
    blamed = {line.split(":")[0].removeprefix("  FAIL ") for line in lines if line.startswith("  FAIL ")}
    assert blamed == set(BROKEN_OPERATIONS), lines
    # Each failure comes with what came back and a curl command that reproduces it.
    assert any(line.strip().startswith("got: 500") for line in lines)
    assert any(line.strip().startswith("reproduce: curl -X PUT") and "/brokers/" in line for line in lines)
    replay = f"replay: kafka-conformance check-control {broken.url} --seed 7"
    assert any(line.strip().startswith(replay) for line in lines)


def test_the_reference_control_plane_passes_and_is_not_reset(
    reference: tuple[ControlPlane, io.StringIO], served: ServedCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    plane, log = reference
    code, lines, _ = check_control(capsys, plane.url, "--max-examples", "20", "--seed", "7", "--topic", "users-topic")
    assert code == 0, lines
    assert verdict_lines(lines) == [lines[-1]]
    requests = int(lines[-1].split()[2])
    assert lines[-1] == f"check-control: PASS: {requests} requests to {plane.url}, 0 failures"
    assert requests > 200 and plane.requests_served >= requests
    assert "left out: POST /retention (--include-retention), POST /reset (--include-reset)" in lines[0]
    # Nothing reset the cluster or ran retention: the user's topic is still there.
    assert " /reset " not in log.getvalue() and " /retention " not in log.getvalue()
    assert ("users-topic", 0) in served.cluster.partitions
    # --topic: the examples moved the leader of the user's topic, and the answer was checked.
    assert "PUT /topics/users-topic/partitions/0/leader 200" in log.getvalue()


def test_reset_and_retention_are_checked_when_asked(
    reference: tuple[ControlPlane, io.StringIO], capsys: pytest.CaptureFixture[str]
) -> None:
    plane, log = reference
    code, lines, _ = check_control(
        capsys, plane.url, "--max-examples", "5", "--seed", "7", "--include-reset", "--include-retention"
    )
    assert code == 0, lines
    assert "left out" not in lines[0]
    assert "POST /reset 200" in log.getvalue() and "POST /retention 200" in log.getvalue()


def test_an_unreachable_address_is_one_line_within_the_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens on it once closed
    started = time.monotonic()
    code, lines, _ = check_control(capsys, f"http://127.0.0.1:{port}", "--timeout", "2")
    assert code == 2 and len(lines) == 1
    assert lines[0].startswith(f"check-control: ERROR: cannot reach a control plane at http://127.0.0.1:{port}")
    assert "is it running?" in lines[0]
    assert time.monotonic() - started < 3


def test_a_control_plane_that_never_answers_is_one_line_within_the_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        code, lines, _ = check_control(capsys, url, "--timeout", "1")
    assert code == 2 and len(lines) == 1
    assert lines[0].startswith(f"check-control: ERROR: cannot reach a control plane at {url} within 1 s")
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("url", ["127.0.0.1:8080", "ftp://127.0.0.1:21", "http://", "http://host:port", "http://h:1/?x=1"])
def test_a_bad_url_is_a_usage_error(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = check_control(capsys, url)
    assert code == 2 and lines == []
    assert err.startswith("kafka-conformance: error: argument URL: ") and "http://HOST:PORT" in err


@pytest.mark.parametrize(("flag", "value"), [("--max-examples", "0"), ("--timeout", "-1"), ("--timeout", "soon")])
def test_bad_numbers_are_usage_errors(flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = check_control(capsys, "http://127.0.0.1:1", flag, value)
    assert code == 2 and f"{flag} must be a positive number" in err


def test_without_schemathesis_it_says_how_to_install_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "schemathesis", None)  # `import schemathesis` raises ImportError
    code, lines, _ = check_control(capsys, "http://127.0.0.1:1")
    assert code == 2
    assert lines == [f"check-control: ERROR: schemathesis is not installed: {INSTALL_HINT}"]


def test_help_warns_that_clocks_and_leaders_change(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-control", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "set and advance broker clocks and move partition leaders" in text
    assert "--include-reset" in text and "--include-retention" in text


def _finding(operation: str, check: str) -> Finding:
    return Finding(operation, check, "title", "message", "curl -X GET http://h/x", "500 text/plain boom")


def test_verdict_line() -> None:
    check = ControlCheck(url="http://127.0.0.1:9", requests=1234)
    assert verdict_line(check) == "check-control: PASS: 1234 requests to http://127.0.0.1:9, 0 failures"
    for n, operation in enumerate(["GET /a", "PUT /b", "GET /c", "POST /d", "GET /e", "GET /e"]):
        check.add(f"case-{n}", _finding(operation, "not_a_server_error"))
    assert verdict_line(check) == (
        "check-control: FAIL: 6 of 1234 requests broke the contract (not_a_server_error on GET /a, "
        "not_a_server_error on PUT /b, not_a_server_error on GET /c, not_a_server_error on POST /d, and 1 more)"
    )
    assert check.findings[("GET /e", "not_a_server_error", "title")].requests == 2
    stopped = ControlCheck(url="http://127.0.0.1:9", stopped="http://127.0.0.1:9 stopped answering")
    assert verdict_line(stopped) == (
        "check-control: FAIL: no request to http://127.0.0.1:9 was checked (http://127.0.0.1:9 stopped answering)"
    )
    assert not ControlCheck(url="u").passed  # no request checked is not a pass
