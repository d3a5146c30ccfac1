"""Spark beyond one process (issue 20): a campaign with an Apache Kafka target run through `--master spark://...` on
a standalone cluster (a master and two one-core workers on loopback, from PySpark's own distribution:
conformance/campaign/standalone.py) gives the same rows as on `local[2]`; its tasks ran on the workers' executors, not
in the driver; and no Spark or Kafka JVM it started is left afterwards, checked PID by PID.

Needs the campaign extra (pyspark, pyarrow, matplotlib), Java 17+ for Spark, and javac and mvn for Apache Kafka
(its jars are fetched with Maven into ~/.cache/kafka-timestamp-conformance on first use)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from conformance.campaign.rows import ROW_FIELDS
from conformance.campaign.standalone import StandaloneError, master_state, spark_home, standalone_cluster
from conformance.jvm.locate import JvmUnavailable
from conformance.jvm.masters import on_loopback
from conformance.jvm.session import check_java
from conformance.targets.brokers.kafka import resident_megabytes
from conformance.targets.brokers.process import ManagedProcessError, NotReady, free_loopback_port
from tests.test_managed_processes import assert_gone
from tests.test_run_stopped import _descendants

REPO = Path(__file__).resolve().parents[1]
KAFKA_LAUNCHER = "kts.kafka.ClockedKafka"  # the main class of every Apache Kafka a task starts
EXECUTOR = "CoarseGrainedExecutorBackend"
# Two suites, so that the campaign has two tasks for the two workers; each starts its own Kafka 4.0.2 and takes
# about 20 s with the fast Hypothesis budget (derandomized: the same examples wherever the task runs).
CAMPAIGN = ["--targets", "kafka:4.0", "--machines", "list_offsets,time_index_lookups", "--seeds", "1",
            "--hypothesis-profile", "fast", "--budget", "300s"]  # fmt: skip
TASKS = 2
CAMPAIGN_TIMEOUT = 600  # seconds; each takes under a minute

# The columns that are a function of the work (the task and what its suites found), which must not depend on where
# the task ran: the task's identity, each clause's verdict, how many tests and Hypothesis examples decided it (the
# fast budget is derandomized), a failure's counterexample and replay command (empty here: Kafka 4.0.2 passes
# these suites; a task that crashed or timed out would name its scratch directory there), and the version the
# implementation said it is.
COMPARED = ("task_id", "target", "machine", "profile", "seed", "clause", "verdict", "status", "tests", "examples",
            "task_examples", "counterexample", "replay", "implementation_version")  # fmt: skip
# Left out: the campaign's id (a fresh one per campaign) and the timings (when and how long), which differ from one
# run to the next wherever it runs. No column holds a host name or a PID.
LEFT_OUT = ("campaign_id", "first_failure_s", "task_seconds", "finished_at")

needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="follows the processes through /proc")


def _need_spark_java_and_kafka() -> None:
    pytest.importorskip("pyspark", reason="the campaign extra (pyspark) is not installed: tox -e campaign")
    pytest.importorskip("pyarrow", reason="the campaign extra (pyarrow) is not installed: tox -e campaign")
    try:
        spark_home()
        check_java()
    except (StandaloneError, JvmUnavailable) as exc:
        pytest.skip(f"a Spark standalone cluster cannot run here: {exc}")
    if shutil.which("javac") is None or shutil.which("mvn") is None:
        pytest.skip("Apache Kafka (the kafka:4.0 target) needs javac and mvn on PATH")


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


class Watched:
    """The JVMs seen below some processes while a campaign ran (polled through /proc): PID -> (the root it was found
    under, its command line)."""

    def __init__(self) -> None:
        self.jvms: dict[int, tuple[int, str]] = {}
        self.peak_rss: dict[int, float] = {}

    def look(self, roots: Iterable[int]) -> None:
        for root in roots:
            for pid in _descendants(root):
                line = self.jvms[pid][1] if pid in self.jvms else _command_line(pid)
                if KAFKA_LAUNCHER in line or EXECUTOR in line or "org.apache.spark" in line:
                    self.jvms[pid] = (root, line)
                    rss = resident_megabytes(pid)
                    if rss is not None:
                        self.peak_rss[pid] = max(rss, self.peak_rss.get(pid, 0.0))

    def kafkas(self, under: Iterable[int] | None = None) -> set[int]:
        roots = None if under is None else set(under)
        return {pid for pid, (root, line) in self.jvms.items()
                if KAFKA_LAUNCHER in line and (roots is None or root in roots)}  # fmt: skip

    def executor_peak_rss(self) -> dict[str, float]:
        """Each executor's peak resident MB, by its id (a process the executor JVM forks carries its command line
        until it execs, so PIDs alone would count it twice)."""
        peaks: dict[str, float] = {}
        for pid, (_root, line) in self.jvms.items():
            if EXECUTOR in line and "--executor-id" in line:
                executor = line.split("--executor-id", 1)[1].split()[0]
                peaks[executor] = max(peaks.get(executor, 0.0), self.peak_rss.get(pid, 0.0))
        return peaks


def _campaign(
    master: str, out: Path, watched: Watched, roots: Callable[[int], list[int]]
) -> tuple[int, str, float]:
    """Run the campaign on `master` into `out`, polling the JVMs below `roots(campaign pid)`; (the campaign's pid, its
    output, seconds)."""
    cmd = [sys.executable, "-m", "conformance.cli", "campaign", *CAMPAIGN, "--master", master, "--out", str(out)]
    log = out.parent / f"{out.name}.log"
    began = time.monotonic()
    with log.open("w", encoding="utf-8") as output:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=output, stderr=subprocess.STDOUT, text=True)
        try:
            while proc.poll() is None and time.monotonic() - began < CAMPAIGN_TIMEOUT:
                watched.look(roots(proc.pid))
                time.sleep(0.5)
        finally:
            if proc.poll() is None:
                proc.terminate()  # as Ctrl-C: the campaign cancels its Spark jobs and stops its session
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
            proc.wait()
    seconds = time.monotonic() - began
    text = log.read_text(encoding="utf-8")
    assert seconds < CAMPAIGN_TIMEOUT, f"{' '.join(cmd)} did not finish within {CAMPAIGN_TIMEOUT} s:\n{text[-4000:]}"
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}:\n{text[-4000:]}"
    return proc.pid, text, seconds


def _rows(out: Path) -> list[tuple[object, ...]]:
    import pyarrow.parquet as pq

    rows = [row for path in sorted((out / "rows").glob("*.parquet")) for row in pq.read_table(path).to_pylist()]
    return sorted(tuple(row[name] for name in COMPARED) for row in rows)


@pytest.mark.e2e
@needs_proc
def test_a_kafka_campaign_on_a_standalone_cluster_gives_the_rows_of_local_2(tmp_path: Path) -> None:
    _need_spark_java_and_kafka()
    assert sorted(COMPARED + LEFT_OUT) == sorted(ROW_FIELDS), "a new row field: compare it, or say why not"
    watched = Watched()
    _, _, local_s = _campaign("local[2]", tmp_path / "local", watched, lambda campaign: [campaign])
    on_the_driver = watched.kafkas()
    assert len(on_the_driver) == TASKS, watched.jvms  # local[2]: every task's Kafka below the campaign's process

    began = time.monotonic()
    with standalone_cluster(tmp_path / "cluster") as cluster:
        start_s = time.monotonic() - began
        daemons = {cluster.master.pid: "master", **{w.pid: w.name for w in cluster.workers}}
        workers = [w.pid for w in cluster.workers]
        driver, output, standalone_s = _campaign(cluster.master_url, tmp_path / "standalone", watched,
                                                 lambda campaign: [campaign, *workers])  # fmt: skip
        state = cluster.state()
        daemon_rss = {name: resident_megabytes(pid) for pid, name in daemons.items()}
        stopping = time.monotonic()
    stop_s = time.monotonic() - stopping

    assert f"task(s) on {cluster.master_url}" in output, output
    assert _rows(tmp_path / "standalone") == _rows(tmp_path / "local")
    assert len({row[0] for row in _rows(tmp_path / "standalone")}) == TASKS

    # The tasks ran on the cluster: the master saw the campaign as an application, each worker launched an executor
    # for it, and every task's Kafka ran below a worker (its executor's Python worker's pytest child), none below the
    # driver's process.
    (app,) = [a for a in state["completedapps"] if a["name"] == "kafka-conformance campaign"]
    assert app["state"] == "FINISHED", app
    for worker in cluster.workers:
        assert list((cluster.work_dir(worker) / app["id"]).glob("*/stderr")), f"{worker.name} ran no executor"
    assert len(watched.kafkas(under=workers)) == TASKS and not watched.kafkas(under=[driver]), watched.jvms

    # Nothing is left: the daemons, the executors and every Kafka of both campaigns, PID by PID.
    for pid in [*daemons, *watched.jvms]:
        assert_gone(pid)

    split = {name: len(watched.kafkas(under=[pid])) for pid, name in daemons.items() if pid in workers}
    executors = ", ".join(f"{rss:.0f}" for _id, rss in sorted(watched.executor_peak_rss().items()))
    print(
        f"\ncampaign on local[2] {local_s:.1f} s, on {cluster.master_url} {standalone_s:.1f} s; the cluster started in "
        f"{start_s:.1f} s and stopped in {stop_s:.1f} s; tasks per worker {split}; resident MB: "
        + ", ".join(f"{name} {rss:.0f}" for name, rss in daemon_rss.items() if rss is not None)
        + f", executors (peak) {executors}"
    )


def _started_by(cluster_directory: Path) -> list[int]:
    """The live processes whose environment names the cluster's own configuration directory: its daemons and
    everything they started (executors, Python workers, tasks and their Kafkas inherit it)."""
    needle = f"SPARK_CONF_DIR={cluster_directory / 'conf'}\0".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return [pid for pid in found if not _gone(pid)]


def _gone(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) == "Z"
    except OSError:
        return True


@pytest.mark.e2e
@needs_proc
def test_a_cluster_is_stopped_by_pid_after_an_error_in_its_block_and_after_a_start_that_times_out(
    tmp_path: Path,
) -> None:
    _need_spark_java_and_kafka()
    with pytest.raises(RuntimeError, match="inside"), standalone_cluster(tmp_path / "a", workers=1) as cluster:
        pids = cluster.pids
        assert len(_started_by(tmp_path / "a")) >= len(pids)
        raise RuntimeError("an error inside the block")
    for pid in pids:
        assert_gone(pid)
    assert _started_by(tmp_path / "a") == []
    slow = r"spark-master on 127\.0\.0\.1:\d+ not ready within 0\.5 s .*Java 17 or newer .*JAVA_HOME.*longer timeout"
    with pytest.raises(ManagedProcessError, match=slow), standalone_cluster(tmp_path / "b", timeout=0.5):
        pytest.fail("the cluster cannot be ready within half a second")
    assert _started_by(tmp_path / "b") == []


def test_the_driver_binds_loopback_only_where_every_executor_is_on_this_machine() -> None:
    assert on_loopback("local[2]") and on_loopback("local[*]") and on_loopback("local-cluster[2,1,1024]")
    assert on_loopback("spark://127.0.0.1:7077") and on_loopback("spark://localhost:7077")
    assert not on_loopback("spark://10.0.0.5:7077") and not on_loopback("spark://127.0.0.1:7077,10.0.0.5:7077")
    assert not on_loopback("yarn") and not on_loopback("k8s://https://10.0.0.1:6443")


def test_a_spark_home_without_spark_s_daemons_is_one_line_naming_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    with pytest.raises(StandaloneError, match=r"has no bin/spark-class: .*pip install --force-reinstall pyspark.*"
                                              r"SPARK_HOME"):  # fmt: skip
        spark_home()


def test_a_master_that_does_not_answer_is_not_ready_with_its_url() -> None:
    port = free_loopback_port()
    with pytest.raises(NotReady, match=rf"^http://127\.0\.0\.1:{port}/json/ did not answer: "):
        master_state(f"http://127.0.0.1:{port}", timeout=2.0)
