"""A Spark standalone cluster on this machine's loopback: one master and N workers from the Spark that PySpark
runs (`SPARK_HOME`, else the pip package's own distribution), for `--master spark://127.0.0.1:PORT` where no
cluster is at hand. tests/test_spark_standalone.py runs a campaign on it and on `local[2]` and compares the rows.

A pip-installed PySpark ships `bin/spark-class` and `jars/` but not `sbin/start-master.sh`, so each daemon is
`bin/spark-class org.apache.spark.deploy.master.Master` (or `...worker.Worker`) run directly, in the foreground,
as a `ManagedBroker` (conformance/targets/brokers/process.py): its own process group, its output in a log file,
stopped by PID on every path (the `with` block, an error or Ctrl-C during start-up, interpreter exit), SIGTERM
then SIGKILL to the group. A worker's executors and their Python workers are children in its group and go with
it. A daemon is ready once the master's web UI JSON (`http://127.0.0.1:<ui>/json/`) says so: the master when it
answers ALIVE, a worker when the master lists it ALIVE, so the cluster is ready when every worker has registered.

Network: every daemon binds 127.0.0.1 (`--host`, SPARK_LOCAL_IP, which the executors inherit) on ports picked
free here; `spark.port.maxRetries=0` makes a port taken in between a start-up failure ("Address already in use",
retried on fresh ports) rather than a silent move to the next port; the master's REST submission server (a
fixed port, 6066) is off. Configuration: an empty SPARK_CONF_DIR of our own, so no spark-env.sh or
spark-defaults.conf of the machine's applies. Workers run Python tasks with this interpreter (PYSPARK_PYTHON).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.jvm.locate import JvmUnavailable
from conformance.jvm.session import check_java
from conformance.targets.brokers.process import (
    LOOPBACK,
    ManagedBroker,
    ManagedProcessError,
    NotReady,
    free_loopback_port,
    start_together,
    stop_together,
)

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
DEFAULT_TIMEOUT = 120.0  # a daemon's JVM start and a worker's registration, on a busy two-core machine
_STOP_TIMEOUT = 15.0  # a worker stops its executors on SIGTERM before it exits
_DAEMON_OPTS = "-Dspark.port.maxRetries=0 -Dspark.master.rest.enabled=false"
_JSON_TIMEOUT = 5.0


class StandaloneError(RuntimeError):
    """The cluster could not be started or asked; the message names the cause and the fix."""


def spark_home() -> Path:
    """The Spark distribution PySpark's driver runs, which the daemons must match: SPARK_HOME when set, else the
    installed pyspark package (its bin/ and jars/); a StandaloneError naming the fix when it lacks them."""
    home = os.environ.get("SPARK_HOME")
    if not home:
        try:
            import pyspark
        except ImportError:
            raise StandaloneError(
                "PySpark is not installed: pip install 'kafka-timestamp-conformance[campaign]'"
            ) from None
        home = str(Path(pyspark.__file__).parent)
    found = Path(home)
    for needed in ("bin/spark-class", "jars"):
        if not (found / needed).exists():
            raise StandaloneError(
                f"{found} has no {needed}: a standalone cluster runs Spark's own daemons from it; reinstall PySpark "
                "(pip install --force-reinstall pyspark) or point SPARK_HOME at a Spark distribution"
            )
    return found


def master_state(web_ui: str, timeout: float = _JSON_TIMEOUT) -> dict[str, Any]:
    """The master's state from its web UI (`<web_ui>/json/`: status, workers, active and completed applications),
    or NotReady saying what answered instead."""
    url = f"{web_ui}/json/"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            state = json.loads(answer.read().decode("utf-8"))
    except (OSError, urllib.error.URLError) as exc:  # refused, reset, timed out, HTTP error
        raise NotReady(f"{url} did not answer: {getattr(exc, 'reason', exc)}") from None
    except ValueError as exc:
        raise NotReady(f"{url} answered something that is not JSON: {exc}") from None
    if not isinstance(state, dict):
        raise NotReady(f"{url} answered {type(state).__name__}, not the master's state")
    return state


class SparkDaemon(ManagedBroker):
    """One Spark daemon (`daemon_class` run by `spark-class`) on 127.0.0.1: its RPC port is ManagedBroker's port,
    its web UI port is picked afresh with each attempt; ready when `ready(daemon, timeout)` returns (it raises
    NotReady until then)."""

    def __init__(
        self,
        name: str,
        daemon_class: str,
        home: Path,
        log_dir: Path,
        *,
        arguments: tuple[str, ...],
        env: Mapping[str, str],
        ready: Callable[[SparkDaemon, float], None],
        ready_timeout: float,
    ) -> None:
        self.web_ui_port = 0
        self._ready = ready

        def command(port: int) -> list[str]:
            self.web_ui_port = free_loopback_port()
            # Through bash: spark-class is a bash script, and a wheel may not keep its executable bit. It execs
            # the JVM, so the PID (and process group) stays the daemon's.
            return ["bash", str(home / "bin" / "spark-class"), daemon_class, "--host", LOOPBACK, "--port", str(port),
                    "--webui-port", str(self.web_ui_port), *arguments]  # fmt: skip

        super().__init__(
            name, command, log_dir, env=env, ready_timeout=ready_timeout, stop_timeout=_STOP_TIMEOUT,
            description=f"the Spark standalone {name}",
        )  # fmt: skip

    @property
    def web_ui(self) -> str:
        return f"http://{LOOPBACK}:{self.web_ui_port}"

    def _probe(self, timeout: float) -> None:
        self._ready(self, timeout)

    def _failure(self, what: str) -> ManagedProcessError:
        problem = super()._failure(what)
        return ManagedProcessError(
            f"{problem}; Spark needs Java 17 or newer (java on PATH, or JAVA_HOME); on a busy machine pass a longer "
            "timeout (standalone_cluster(timeout=...))"
        )


@dataclass(frozen=True)
class StandaloneCluster:
    """A running master and its workers; `master_url` is what `--master` takes."""

    master: SparkDaemon
    workers: tuple[SparkDaemon, ...]
    directory: Path  # logs/ (each daemon's output), work/<worker>/ (the executors' directories), conf/

    @property
    def master_url(self) -> str:
        return f"spark://{LOOPBACK}:{self.master.port}"

    @property
    def web_ui(self) -> str:
        return self.master.web_ui

    @property
    def pids(self) -> tuple[int, ...]:
        """The daemons' PIDs, each also its process group id (the executors are in their worker's group)."""
        return (self.master.pid, *(worker.pid for worker in self.workers))

    def state(self) -> dict[str, Any]:
        """The master's state now (master_state), or StandaloneError when the master does not answer."""
        try:
            return master_state(self.web_ui)
        except NotReady as exc:
            raise StandaloneError(f"the Spark master ({self.master_url}) stopped answering: {exc}") from None

    def work_dir(self, worker: SparkDaemon) -> Path:
        return self.directory / "work" / worker.name


def _master_ready(master: SparkDaemon, timeout: float) -> None:
    state = master_state(master.web_ui, timeout)
    if state.get("status") != "ALIVE":
        raise NotReady(f"the master's status is {state.get('status')!r}, not ALIVE")


def _registered_with(master: SparkDaemon) -> Callable[[SparkDaemon, float], None]:
    def ready(worker: SparkDaemon, timeout: float) -> None:
        state = master_state(master.web_ui, timeout)
        listed = [w for w in state.get("workers", []) if w.get("port") == worker.port and w.get("host") == LOOPBACK]
        if not any(w.get("state") == "ALIVE" for w in listed):
            raise NotReady(f"not yet registered with the master ({master.web_ui} lists {len(state.get('workers', []))} "
                           "worker(s), not this one ALIVE)")  # fmt: skip

    return ready


def _daemon_env(home: Path, directory: Path, *, daemon_memory: str) -> dict[str, str]:
    return {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_CONF_DIR": str(directory / "conf"),
        "SPARK_LOG_DIR": str(directory / "logs"),
        "SPARK_LOCAL_IP": LOOPBACK,
        "SPARK_MASTER_HOST": LOOPBACK,
        "SPARK_PUBLIC_DNS": LOOPBACK,  # the addresses the web UIs show
        "SPARK_DAEMON_MEMORY": daemon_memory,
        "SPARK_MASTER_OPTS": _DAEMON_OPTS,
        "SPARK_WORKER_OPTS": _DAEMON_OPTS,
        "PYSPARK_PYTHON": sys.executable,
    }


@contextlib.contextmanager
def standalone_cluster(
    directory: Path,
    *,
    workers: int = 2,
    cores: int = 1,
    memory: str = "1g",
    daemon_memory: str = "256m",
    timeout: float = DEFAULT_TIMEOUT,
) -> Iterator[StandaloneCluster]:
    """A master and `workers` workers (each `cores` cores and `memory` for executors; an executor takes 1g unless
    the application asks otherwise) on 127.0.0.1, ready (every worker registered, within `timeout` s per daemon),
    with logs and work directories under `directory`; every daemon stopped by PID on the way out."""
    if workers < 1 or cores < 1:
        raise StandaloneError(f"a cluster needs at least one worker with one core (workers={workers}, cores={cores})")
    home = spark_home()
    try:
        check_java()
    except JvmUnavailable as exc:
        raise StandaloneError(str(exc)) from None
    for sub in ("conf", "logs", "work"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    env = _daemon_env(home, directory, daemon_memory=daemon_memory)
    logs = directory / "logs"
    master = SparkDaemon(
        "spark-master", MASTER_CLASS, home, logs, arguments=(), env=env, ready=_master_ready, ready_timeout=timeout
    )
    with master:
        started = [
            SparkDaemon(
                name, WORKER_CLASS, home, logs, env=env, ready=_registered_with(master), ready_timeout=timeout,
                arguments=("--cores", str(cores), "--memory", memory, "--work-dir", str(directory / "work" / name),
                           f"spark://{LOOPBACK}:{master.port}"),
            )
            for name in (f"spark-worker-{index}" for index in range(1, workers + 1))
        ]  # fmt: skip
        start_together(started)  # every worker stopped again if one fails
        try:
            yield StandaloneCluster(master, tuple(started), directory)
        finally:
            stop_together(started)
