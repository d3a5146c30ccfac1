"""`kafka-conformance up` (conformance.commands.up): bad input is one line naming the fix and starts nothing; a
started target prints one JSON line on stdout, answers the Kafka protocol (and its control plane, where it has
one), and is gone, with every process it started, after SIGTERM or Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.control.control_client import ControlClient
from conformance.wire.client import WireClient
from tests.test_broker_dies import _gone
from tests.test_run_stopped import _descendants

BOUND = 120  # seconds for the reference broker to serve on a loaded machine


def _up(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", "up", *args], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("model",), "is not a broker the suite starts: up starts tansu, kafka"),
        (("client:kafka-python",), "is not a broker the suite starts"),
        (("broker",), "is not a broker the suite starts"),
        (("kafka:0.10.1",), "Apache Kafka 0.10.1 is not a supported target: choose a line, kafka:"),
        (("kafka:4.0", "--profile", "kafka-3.9"), "pass --profile kafka-4.0 or none"),
        (("tansu", "--brokers", "3"), "target 'tansu' runs one broker: drop --brokers 3"),
        (("reference", "--brokers", "0"), "--brokers 0: target 'reference' runs 1..64 brokers"),
        (("reference", "--profile", "kafka-9"), "unknown profile 'kafka-9'"),
        (("reference", "--timeout", "0"), "--timeout 0: give a positive number of seconds"),
    ],
)
def test_bad_input_is_one_line_naming_the_fix_and_starts_nothing(args: tuple[str, ...], says: str) -> None:
    done = _up(*args)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kafka-conformance: error: ") and says in lines[0], done.stderr


@pytest.mark.e2e
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="follows the started processes through /proc")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_up_prints_one_json_line_serves_and_stops_everything_on_a_signal(tmp_path: Path, stop: signal.Signals) -> None:
    up = subprocess.Popen(
        [sys.executable, "-m", "conformance", "up", "reference", "--brokers", "2", "--log-dir", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert up.stdout is not None
        first = up.stdout.readline()  # blocks until the target answers (or the command ends)
        assert first, up.communicate(timeout=BOUND)
        facts = json.loads(first)
        assert facts["target"] == "reference" and facts["profile"] == "kafka-4.0" and facts["brokers"] == 2
        assert facts["pid"] == up.pid and all(Path(p).is_file() for p in facts["logs"])
        client = WireClient(facts["bootstrap_servers"], timeout=10)
        try:
            assert len(client.metadata().brokers) == 2
        finally:
            client.close()
        assert ControlClient(facts["control_url"], timeout=10).capabilities()
        started = _descendants(up.pid)
        assert started, "no broker process below `up`"
        up.send_signal(stop)
        out, err = up.communicate(timeout=BOUND)
    finally:
        if up.poll() is None:
            up.kill()
            up.communicate()
    assert up.returncode == 0, err
    assert out == "", "stdout carries the one JSON line only"
    assert err.rstrip().endswith("reference stopped") and "Traceback" not in err, err
    deadline = time.monotonic() + 10
    while not all(_gone(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in started if not _gone(pid)] == []
