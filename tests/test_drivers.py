"""The driver protocol's suite side (conformance/targets/routes/driver, docs/driver-protocol.md): the Python driver
answers as the schema says, a driver's error values become the library's outcomes, and a broken driver (off the
protocol, dead, hung) is told apart with one line; `check-driver` passes the project's reference driver and fails broken
ones. The fast tests run tiny drivers written here in Python; the e2e ones start the reference broker."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.errors import TargetError
from conformance.targets.kinds.codec_library import BatchRequest
from conformance.targets.libraries import LIBRARIES
from conformance.targets.routes.driver import PROTOCOL_VERSION
from conformance.targets.routes.driver.driver_builds import driver_command, own_executable
from conformance.targets.routes.driver.driver_client import DriverClient
from conformance.targets.routes.driver.driver_process import (
    DriverAnswered,
    DriverBroken,
    DriverProcess,
    broken_driver_behind,
    schema_problem,
)
from conformance.targets.routes.driver.driver_values import batch_request_json, read_batch_of
from conformance.targets.routes.driver.python_driver import serve
from models.records import RecordSpec

REPO = Path(__file__).resolve().parents[1]
HELLO_OK = {"protocol": 1, "library": "tiny", "version": "0", "language": "python", "capabilities": ["send"],
            "codecs": ["none"]}  # fmt: skip


def _exchange(lines: list[dict[str, object] | str], library: str = "model") -> list[dict[str, object]]:
    source = io.StringIO("".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines))
    sink = io.StringIO()
    serve(library, source, sink)
    return [json.loads(line) for line in sink.getvalue().splitlines()]


def test_the_python_driver_answers_every_codec_request_as_the_schema_says() -> None:
    request = BatchRequest(2, (RecordSpec(1_700_000_000_000, b"\x00\xffk", None), RecordSpec(1_700_000_000_005)))
    hello = {"id": 0, "op": "hello", "protocol": PROTOCOL_VERSION, "role": "codec", "timeout_ms": 1000}
    answers = _exchange([hello, {"id": 1, "op": "build", **batch_request_json(request)}, "not json",
                         {"id": 2, "op": "no-such-op"}, {"id": 3, "op": "close"}])  # fmt: skip
    assert [a["id"] for a in answers] == [0, 1, 0, 2, 3]
    assert all(schema_problem("answer", a) is None for a in answers)
    assert schema_problem("ok/hello", answers[0]["ok"]) is None
    assert [a.get("error", {}).get("type") for a in answers] == [None, None, "bad-request", "bad-request", None]
    built = answers[1]["ok"]
    assert isinstance(built, dict) and schema_problem("ok/build", built) is None
    read = _exchange([hello, {"id": 1, "op": "read", "data": built["data"]}])[1]["ok"]
    assert isinstance(read, dict) and schema_problem("ok/read", read) is None
    (batch,) = (read_batch_of(b) for b in read["batches"])
    assert [(r.offset, r.timestamp, r.key) for r in batch.records] == [
        (0, 1_700_000_000_000, b"\x00\xffk"), (1, 1_700_000_000_005, None)]  # fmt: skip


def test_the_python_driver_refuses_another_protocol_and_a_role_its_library_does_not_play() -> None:
    wrong = _exchange([{"id": 0, "op": "hello", "protocol": 99, "role": "codec", "timeout_ms": 1000}])
    assert wrong[0]["error"]["type"] == "bad-request" and "protocol 1" in wrong[0]["error"]["message"]  # type: ignore[index]
    confluent = _exchange(
        [{"id": 0, "op": "hello", "protocol": 1, "role": "codec", "timeout_ms": 1000}], library="confluent-kafka"
    )
    assert confluent[0]["error"]["type"] == "unsupported"  # type: ignore[index]


def _tiny(tmp_path: Path, body: str) -> list[str]:
    """A driver written in a few lines of Python: answers hello, then does what `body` says with each request `r`."""
    script = tmp_path / "tiny_driver.py"
    script.write_text(textwrap.dedent(f"""
        import json, sys, time
        def say(x):
            print(json.dumps(x), flush=True)
        for line in sys.stdin:
            r = json.loads(line)
            if r["op"] == "hello":
                say({{"id": r["id"], "ok": {json.dumps(HELLO_OK)}}})
                continue
        """) + textwrap.indent(textwrap.dedent(body), "    "))
    return [sys.executable, str(script)]


def _started(tmp_path: Path, body: str, timeout: float = 5.0) -> DriverProcess:
    driver = DriverProcess("the tiny driver", _tiny(tmp_path, body), target="client:driver=tiny",
                           log_path=tmp_path / "tiny.log", timeout=timeout)  # fmt: skip
    driver.start("client", bootstrap="127.0.0.1:9")
    return driver


SEND = {"topic": "t", "partition": 0, "codec": "none", "records": [{"key": "aw==", "value": None, "timestamp": 5}]}


@pytest.mark.parametrize(("body", "said"), [
    ('say({"id": r["id"] + 1, "ok": {"outcomes": []}})', "with id 2, not 1"),
    ('print("hello there", flush=True)', "not a JSON object"),
    ('say({"id": r["id"], "ok": {"outcomes": [{"offset": "zero", "timestamp": 5}]}})', "against the protocol"),
    ('say({"id": r["id"], "error": {"type": "bad-request", "message": "what is send?"}})', "did not understand send"),
    ("sys.exit(7)", "exited before answering send (it exited with status 7)"),
])  # fmt: skip
def test_a_driver_off_the_protocol_is_broken_with_one_line_naming_it_its_log_and_the_check(
    tmp_path: Path, body: str, said: str
) -> None:
    driver = _started(tmp_path, body)
    try:
        with pytest.raises(DriverBroken) as broken:
            driver.request("send", **SEND)
        text = str(broken.value)
        assert said in text and "\n" not in text
        assert str(tmp_path / "tiny.log") in text and "check-driver --target client:driver=tiny" in text
        with pytest.raises(DriverBroken):  # and it stays broken: nothing it says after that is believed
            driver.request("send", **SEND)
    finally:
        driver.stop()
    assert not driver.alive()


def test_a_driver_that_does_not_answer_in_time_is_stopped(tmp_path: Path) -> None:
    driver = _started(tmp_path, "time.sleep(60)", timeout=0.1)
    driver_pid = driver.pid
    with pytest.raises(DriverBroken, match=r"did not answer send within 5.2 s"):
        driver.request("send", **SEND)
    assert driver_pid is not None and not Path(f"/proc/{driver_pid}").exists()


def test_error_values_are_the_library_s_outcomes_not_a_broken_driver(tmp_path: Path) -> None:
    driver = _started(tmp_path, """
        say({"id": r["id"], "error": {"type": "refused", "kind": "IllegalArgumentException", "message": "negative"}})
    """)
    try:
        with pytest.raises(DriverAnswered) as answered:
            driver.request("offsets_for_times", topic="t", partition=0, target=-5)
        assert (answered.value.type, answered.value.kind) == ("refused", "IllegalArgumentException")
        assert driver.broken is None
    finally:
        driver.stop()


def test_a_hypothesis_group_is_searched_for_the_broken_driver() -> None:
    broken = DriverBroken("the x driver died")
    group = BaseExceptionGroup("flaky", [ValueError("x"), ExceptionGroup("inner", [broken])])
    assert broken_driver_behind(group) is broken
    assert broken_driver_behind(ValueError("plain")) is None


def test_your_own_driver_must_be_an_executable_file(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="give its executable"):
        driver_command("driver", version=None, path=None)
    with pytest.raises(TargetError, match="is not a file"):
        own_executable("driver", str(tmp_path / "missing"))
    script = tmp_path / "driver.sh"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(TargetError, match="is not executable: chmod"):
        own_executable("driver", str(script))
    script.chmod(0o755)
    assert own_executable("driver", str(script)) == str(script.resolve())


@pytest.mark.parametrize("name", [d.name for d in LIBRARIES.values() if d.source])
def test_every_driver_of_the_table_ships_its_sources(name: str) -> None:
    source = REPO / "conformance" / "targets" / "routes" / "driver" / LIBRARIES[name].source
    assert source.is_dir() and any(source.iterdir()), f"the {name} driver's sources are not at {source}"


def test_a_driver_client_maps_refusals_and_failures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.targets.kinds.client_library import ClientFailed, ClientRefused

    argv = _tiny(tmp_path, """
        if r["op"] == "offsets_for_times":
            say({"id": r["id"], "error": {"type": "refused", "kind": "ValueError", "message": "negative target"}})
        elif r["op"] == "consume":
            rec = {"offset": 0, "timestamp": 5, "timestamp_type": "CreateTime", "key": None, "value": "AA=="}
            say({"id": r["id"], "error": {"type": "failed", "kind": "Timeout", "message": "t", "delivered": [rec]}})
        else:
            say({"id": r["id"], "ok": {}})
            break
    """)
    monkeypatch.setattr("conformance.targets.routes.driver.driver_process.driver_command", lambda *a, **k: argv)
    client = DriverClient("driver", "127.0.0.1:9", timeout=5, log_dir=tmp_path)
    try:
        with pytest.raises(ClientRefused) as refused:
            client.offsets_for_times("t", 0, -1)
        assert refused.value.kind == "ValueError"
        with pytest.raises(ClientFailed) as failed:
            client.consume("t", 0, 0, until=2)
        assert [(r.offset, r.value) for r in failed.value.delivered] == [(0, b"\x00")]
    finally:
        client.close()


# -- end to end: the reference broker, the suites


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, check=False)  # fmt: skip


@pytest.mark.e2e
@pytest.mark.parametrize("target", ["client:model", "codec:model"])
def test_check_driver_passes_the_reference_driver(tmp_path: Path, target: str) -> None:
    done = _cli("check-driver", "--target", target, "--log-dir", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout and done.stdout.splitlines()[-1].startswith(f"check-driver {target}: PASS")


@pytest.mark.e2e
def test_check_driver_fails_a_driver_that_ignores_what_it_does_not_know(tmp_path: Path) -> None:
    script = tmp_path / "quiet.sh"
    script.write_text("#!/bin/sh\n" + " ".join(_tiny(tmp_path, 'say({"id": r["id"], "ok": {}})')) + "\n")
    script.chmod(0o755)
    done = _cli("check-driver", "--target", f"client:driver={script}", "--log-dir", str(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL an unknown op: bad-request, same id" in done.stdout
    assert "FAIL send: one outcome per record" in done.stdout


@pytest.mark.e2e
def test_a_driver_that_dies_mid_run_stops_the_run_with_exit_2_and_its_clauses_blocked(tmp_path: Path) -> None:
    script = tmp_path / "dies.sh"
    script.write_text("#!/bin/sh\n" + " ".join(_tiny(tmp_path, "sys.exit(3)")) + "\n")
    script.chmod(0o755)
    done = _cli("run", "--target", f"client:driver={script}", "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stdout + done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("kafka-conformance: error: your driver (pid") and "exited before answering" in last
    verdicts = json.loads((tmp_path / "out" / "verdicts.json").read_text())
    assert "BLOCKED" in json.dumps(verdicts) and '"FAIL"' not in json.dumps(verdicts)
    assert (tmp_path / "out" / "allure-report").is_dir()


@pytest.mark.e2e
def test_a_python_library_at_another_version_runs_through_the_python_driver(tmp_path: Path) -> None:
    """client:kafka-python==3.0.11: pip installs it into the cache once, and the driver's hello says that version."""
    done = _cli("check-driver", "--target", "client:kafka-python==3.0.11", "--log-dir", str(tmp_path), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kafka-python 3.0.11 (python)" in done.stdout.splitlines()[0]
    refused = _cli("check-driver", "--target", "client:kafka-python==0.0.0.404", "--log-dir", str(tmp_path))
    assert refused.returncode == 2 and "is not served by PyPI" in refused.stderr
