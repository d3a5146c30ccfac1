"""ZooKeeper for the Apache Kafka brokers that run in ZooKeeper mode (every release before KRaft was the suite's
way: conformance.targets.brokers.kafka), started and stopped by the suite like every managed process.

One ZooKeeper release, pinned (`ZOOKEEPER`), serves every Kafka line: ZooKeeper keeps its wire protocol for old
clients, and 3.8.4 was measured serving the brokers of 0.10.0.1, 0.10.2.2 and 2.8.2 (whose own client libraries
are ZooKeeper 3.4.6, 3.4.9 and 3.5.9). It is fetched once from Maven Central (`org.apache.zookeeper:zookeeper`)
into the suite's cache with two libraries its pom leaves to the user (`provided`) that its server loads all the
same: Dropwizard metrics (its default metrics provider) and snappy-java (its snapshot format).

A ZooKeeper runs standalone on a free loopback port with its data in the run's work folder, no admin server (it
would take port 8080), and answers the four-letter word `srvr`, which says whether it serves ("Mode:
standalone"): the readiness probe. Each Kafka cluster gets its own, stopped after the last broker.
"""

from __future__ import annotations

import socket
import tempfile
from pathlib import Path

from conformance.targets.brokers import maven
from conformance.targets.brokers.process import LOOPBACK, ManagedBroker, NotReady

ZOOKEEPER = "3.8.4"
_PROVIDED = (
    maven.Dependency("io.dropwizard.metrics", "metrics-core", "4.1.12.1"),
    maven.Dependency("org.xerial.snappy", "snappy-java", "1.1.10.5"),
)
_RESOLVE_TIMEOUT = 600.0
_READY_TIMEOUT = 60.0
_STOP_TIMEOUT = 10.0
_JVM_OPTIONS = ("-Xms16m", "-Xmx128m", "-XX:+UseSerialGC", "-Djava.awt.headless=true")
ZOOKEEPER_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
_LOGBACK = """\
<configuration>
  <appender name="out" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>[%d] %level %msg (%logger)%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="out"/></root>
</configuration>
"""


def client_dependencies() -> tuple[maven.Dependency, ...]:
    """This ZooKeeper's client for a Kafka runtime whose own cannot run here (kafka._ZOOKEEPER_CLIENT_REPLACED):
    without its logging, which the runtime's log4j 2 binding serves."""
    logging = ("ch.qos.logback:logback-classic", "ch.qos.logback:logback-core")
    return (maven.Dependency("org.apache.zookeeper", "zookeeper", ZOOKEEPER, logging),)


def runtime_home(cache: Path) -> Path:
    return cache / f"zookeeper-{ZOOKEEPER}"


def resolve_zookeeper(cache: Path, mvn: str, *, timeout: float = _RESOLVE_TIMEOUT) -> Path:
    """ZooKeeper's `lib/` folder, fetched on first use; a ManagedProcessError naming the fix when Maven cannot."""
    artifact = f"org.apache.zookeeper:zookeeper:{ZOOKEEPER}"
    dependencies = (maven.Dependency("org.apache.zookeeper", "zookeeper", ZOOKEEPER), *_PROVIDED)
    return maven.resolve(
        runtime_home(cache),
        maven.pom("zookeeper-runtime", ZOOKEEPER, dependencies),
        what=f"ZooKeeper {ZOOKEEPER}",
        marker=f"zookeeper-{ZOOKEEPER}.jar",
        mvn=lambda: mvn,
        failure=lambda output: (
            f"Maven could not fetch {artifact}: check that Maven Central is reachable "
            f"({' '.join(output.split())[-200:] or 'no output'})"
        ),
        timeout=timeout,
    )


def probe_srvr(port: int, timeout: float) -> str:
    """ZooKeeper's answer to `srvr` on `port`; NotReady until it serves (its answer names its Mode)."""
    try:
        with socket.create_connection((LOOPBACK, port), timeout=timeout) as conn:
            conn.sendall(b"srvr")
            answer = b""
            while chunk := conn.recv(4096):
                answer += chunk
    except OSError as exc:
        raise NotReady(f"ZooKeeper did not answer srvr ({exc})") from None
    text = answer.decode("utf-8", "replace")
    if "Mode:" not in text:
        raise NotReady(f"ZooKeeper does not serve yet ({' '.join(text.split())[:120] or 'no answer'})")
    return text


class ZooKeeperProcess(ManagedBroker):
    """A standalone ZooKeeper on a free loopback port, its data and configuration under `work`, its log in
    `log_dir`; ready once it answers `srvr` as serving."""

    def __init__(self, java: str, lib: Path, work: Path, log_dir: Path, *, ready_timeout: float = _READY_TIMEOUT):
        def command(port: int) -> list[str]:
            run = Path(tempfile.mkdtemp(prefix=f"zookeeper-{port}-", dir=work))
            (run / "data").mkdir()
            config = run / "zoo.cfg"
            config.write_text(
                "tickTime=2000\n"
                f"dataDir={run / 'data'}\n"
                f"clientPort={port}\n"
                f"clientPortAddress={LOOPBACK}\n"
                "admin.enableServer=false\n"
                "4lw.commands.whitelist=srvr\n"
                "maxClientCnxns=0\n",
                encoding="utf-8",
            )
            (run / "logback.xml").write_text(_LOGBACK, encoding="utf-8")
            return [java, *_JVM_OPTIONS, f"-Dlogback.configurationFile={run / 'logback.xml'}", "-cp", f"{lib}/*",
                    ZOOKEEPER_MAIN, str(config)]  # fmt: skip

        super().__init__(
            "zookeeper", command, log_dir, ready_timeout=ready_timeout, stop_timeout=_STOP_TIMEOUT,
            description=f"ZooKeeper {ZOOKEEPER}",
        )  # fmt: skip

    @property
    def connect(self) -> str:
        """zookeeper.connect for a broker of this ZooKeeper."""
        return f"{LOOPBACK}:{self.port}"

    def _probe(self, timeout: float) -> None:
        probe_srvr(self.port, timeout)

