"""Apache Kafka on a clock the suite drives: the launchers (our own Java, `java/kts/kafka/`: ClockedKafka.java for
KRaft, ClockedZkKafka.java for ZooKeeper mode, sharing SuiteClock.java and ClockControl.java), their
line protocol, and the control plane's view of such a broker (`KafkaControlled`, served by
conformance.control.control_plane with the project's OpenAPI document).

The launcher starts the broker as `kafka.Kafka` does, through KafkaRaftServer's public constructor
`KafkaRaftServer(KafkaConfig, Time)`, with a `Time` whose wall clock the suite reads, freezes at a value and
advances. Only the log layer (classes of kafka.log and org.apache.kafka.storage.internals.log, found by the
caller's class) reads the suite's clock; the network clients, KRaft and the controller read the machine's, so
heartbeats, reconnect backoff and request timeouts work whatever the suite does. Retention now goes
through two internals, by reflection: KafkaRaftServer's private field `broker` and, through the public
`BrokerServer.logManager()`, every log's public `deleteOldSegments()` (the loop of LogManager's private
`cleanupLogs()`); both exist under these names in 3.9, 4.0 and 4.4.

Compiled with javac on first use against the release's own jars, into `<cache>/kafka-<version>/launcher-<key>`
(`<key>` hashes the source), and reused after. Retention runs only when asked: the broker's own retention task
is put ten years out (`log.retention.check.interval.ms`, `log.initial.task.delay.ms`).

File times: the operating system dates segment files with the machine's clock, and Kafka dates a segment without
timestamps by its file's time (IDX-6). The launcher dates them by the suite's clock instead (FileDates.java): a
frozen clock does not move between two of the suite's moves, so whatever was written since the last one was
written at the clock's present value, which the launcher gives every changed segment file before each clock move,
each retention run and each ListOffsets request (DatingAuthorizer.java, an allow-all authorizer: Kafka asks it
before it reads a time; before 2.4, whose brokers have only the Scala authorizer interface that is not told the
request, LegacyDatingAuthorizer.java dates a topic's files whenever Kafka asks to describe the topic).
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import socket
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path

from conformance.control.controlled import ControlError, checked_clock
from conformance.jvm.build import JavacFailed, compile_java
from conformance.targets.brokers.process import LOOPBACK, ManagedProcessError
from conformance.wire.client import ApiResult, PartitionMetadata, WireClient, error_name
from conformance.wire.connection import WireError


def partition_metadata(client: WireClient, topic: str, partition: int) -> PartitionMetadata:
    """A partition as Metadata through `client` (closed after) shows it, for a control plane over a real cluster: a
    ControlError 404 naming the field for an unknown topic or partition, or a Metadata request that failed."""
    try:
        found = client.metadata([topic]).topics.get(topic)
    except WireError as exc:
        raise ControlError(404, "path.topic", f"Metadata for {topic!r} failed ({exc})") from None
    finally:
        client.close()
    if found is None or not found.partitions:
        raise ControlError(404, "path.topic", f"no topic {topic!r}: create it over the Kafka protocol first")
    part = found.partitions.get(partition)
    if part is None:
        raise ControlError(
            404, "path.partition", f"topic {topic!r} has partitions 0..{len(found.partitions) - 1}, not {partition}"
        )
    return part


_LAUNCHER_SOURCES = Path(__file__).parent / "java" / "kts" / "kafka"
LAUNCHER_CLASS = "kts.kafka.ClockedKafka"  # KRaft
ZK_LAUNCHER_CLASS = "kts.kafka.ClockedZkKafka"  # ZooKeeper mode
_COMPILE_TIMEOUT = 180.0
_AUTHORIZER_CLASS = "org/apache/kafka/server/authorizer/Authorizer.class"
_LEGACY_AUTHORIZER_CLASS = "kafka/security/auth/Authorizer.class"
# What the control plane offers on Apache Kafka: its clock, retention when asked, and the claim that the broker
# takes idempotent batches from producer ids it did not allocate (Kafka does); leader-failover besides where there
# are several nodes (KafkaControlled.capabilities).
KAFKA_CONTROL_CAPABILITIES = ("clock-control", "retention", "idempotence")
_PREFERRED = 0  # ElectLeaders election_type
_LIST_OFFSETS, _LATEST = 2, -1  # ListOffsets' API key and its LATEST target (the high watermark)
_ELECTION_NOT_NEEDED = 84


def launcher_class(zookeeper: bool) -> str:
    """The launcher's main class for a broker in ZooKeeper mode or KRaft."""
    return ZK_LAUNCHER_CLASS if zookeeper else LAUNCHER_CLASS


def launcher_sources(zookeeper: bool, *, authorizer: str | None = "DatingAuthorizer") -> list[Path]:
    """The launcher's sources: its main class, the clock, file dates and line protocol both launchers share, and
    the authorizer that dates files before Kafka reads them (`authorizer`: the one the release's interface takes,
    authorizer_for; None where it has none)."""
    main = launcher_class(zookeeper).rpartition(".")[2]
    names = ["SuiteClock", "FileDates", "ClockControl", main] + ([authorizer] if authorizer else [])
    return [_LAUNCHER_SOURCES / f"{name}.java" for name in names]


def authorizer_for(lib: Path) -> str | None:
    """The launcher's authorizer for the release whose jars are in `lib`: DatingAuthorizer where kafka-clients has
    org.apache.kafka.server.authorizer.Authorizer (Kafka 2.4+, KIP-504), LegacyDatingAuthorizer where only the
    broker's Scala kafka.security.auth.Authorizer exists (0.9 to 2.3), None where neither is found."""
    if _has_class(lib, "kafka-clients-*.jar", _AUTHORIZER_CLASS):
        return "DatingAuthorizer"
    if _has_class(lib, "kafka_*.jar", _LEGACY_AUTHORIZER_CLASS):
        return "LegacyDatingAuthorizer"
    return None


def _has_class(lib: Path, jars: str, entry: str) -> bool:
    for jar in sorted(lib.glob(jars)):
        with contextlib.suppress(OSError, zipfile.BadZipFile), zipfile.ZipFile(jar) as archive:
            if entry in archive.namelist():
                return True
    return False


def launcher_classes(javac: str, lib: Path, home: Path, *, zookeeper: bool = False) -> Path:
    """The launcher (ZooKeeper mode or KRaft) compiled against `lib` (the release's jars) under `home`, built on
    first use; a ManagedProcessError naming the fix when javac fails."""
    sources = launcher_sources(zookeeper, authorizer=authorizer_for(lib))
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    key = digest.hexdigest()[:12]
    classes = home / f"launcher-{key}"
    if (classes / (launcher_class(zookeeper).replace(".", "/") + ".class")).is_file():
        return classes
    work = Path(tempfile.mkdtemp(prefix="launcher-", dir=home))
    try:
        try:
            compile_java(javac, f"{lib}/*", work, sources, _COMPILE_TIMEOUT)
        except JavacFailed as failed:
            if failed.status is None:
                raise ManagedProcessError(
                    f"javac did not compile the Kafka launcher within {_COMPILE_TIMEOUT:.0f} s: is the machine "
                    "overloaded? run again"
                ) from None
            first = failed.first or f"exit {failed.status}"
            raise ManagedProcessError(
                f"javac could not compile the Kafka launcher against {lib} ({first[:300]}): the jars of this "
                "release may be incomplete; remove the folder and run again"
            ) from None
        with contextlib.suppress(OSError):  # another run built it meanwhile: keep theirs
            work.rename(classes)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return classes


class LauncherClock:
    """The launcher's line protocol on 127.0.0.1:`port`, one connection, every exchange within `timeout`."""

    def __init__(self, port: int, *, timeout: float = 10.0) -> None:
        self.address = (LOOPBACK, port)
        self.timeout = timeout
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._reader = None

    def _ask(self, line: str) -> int:
        with self._lock:
            for attempt in (1, 2):  # a connection the launcher dropped is opened again once
                try:
                    if self._socket is None:
                        self._socket = socket.create_connection(self.address, timeout=self.timeout)
                        self._reader = self._socket.makefile("r", encoding="utf-8", newline="\n")
                    self._socket.sendall(f"{line}\n".encode())
                    assert self._reader is not None
                    answer = self._reader.readline().strip()
                    if not answer:
                        raise ConnectionError("the launcher closed the connection")
                    break
                except OSError as exc:
                    self.close_connection()
                    if attempt == 2:
                        raise ManagedProcessError(
                            f"the Kafka launcher's clock control at {LOOPBACK}:{self.address[1]} did not answer "
                            f"{line!r} ({exc}): is the broker still running? see its log"
                        ) from None
        word, _, value = answer.partition(" ")
        if word != "OK":
            raise ManagedProcessError(f"the Kafka launcher refused {line!r}: {value}")
        return int(value)

    def close_connection(self) -> None:
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.close()
        self._socket = None
        self._reader = None

    def now(self) -> int:
        return self._ask("CLOCK")

    def set(self, now_ms: int) -> int:
        return self._ask(f"SET {now_ms}")

    def advance(self, delta_ms: int) -> int:
        return self._ask(f"ADVANCE {delta_ms}")

    def wall(self) -> int:
        return self._ask("WALL")

    def retention(self) -> int:
        return self._ask("RETENTION")

    def dates_files(self) -> bool:
        """Whether the launcher dates segment files by this clock (it was built with an authorizer for its release:
        kafka_control.authorizer_for)."""
        return self._ask("FILES") == 1


class KafkaControlled:
    """Apache Kafka nodes under the control plane: `clocks` maps each node id (Metadata's broker id) to its
    launcher's clock control, `addresses` each node id to its listener. Topic and leader facts come from
    Metadata; a leader moves as an operator moves one (`move_leader`)."""

    def __init__(
        self, clocks: Mapping[int, LauncherClock], addresses: Mapping[int, str], *, timeout: float = 10.0
    ) -> None:
        if sorted(clocks) != sorted(addresses):
            raise ValueError(f"clocks for nodes {sorted(clocks)} but listeners for nodes {sorted(addresses)}")
        self.clocks = dict(clocks)
        self.addresses = dict(addresses)
        self.bootstrap = ",".join(addresses.values())
        self.timeout = timeout
        self._file_times: bool | None = None

    def capabilities(self) -> tuple[str, ...]:
        if self._file_times is None:
            self._file_times = all(clock.dates_files() for clock in self.clocks.values())
        return (
            KAFKA_CONTROL_CAPABILITIES
            + (("leader-failover",) if len(self.clocks) > 1 else ())
            + (("file-times",) if self._file_times else ())
        )

    def broker_ids(self) -> tuple[int, ...]:
        return tuple(sorted(self.clocks))

    def _known(self) -> str:
        return ", ".join(str(b) for b in self.broker_ids())

    def _clock(self, broker: int) -> LauncherClock:
        found = self.clocks.get(broker)
        if found is None:
            raise ControlError(404, "path.broker", f"no broker {broker}: the brokers are {self._known()}")
        return found

    def clock(self, broker: int) -> int:
        return self._clock(broker).now()

    def set_clock(self, broker: int, now_ms: int) -> int:
        return self._clock(broker).set(checked_clock(now_ms))

    def advance_clock(self, broker: int, delta_ms: int) -> int:
        clock = self._clock(broker)
        return clock.set(checked_clock(clock.now(), delta_ms=delta_ms))

    def _client(self, bootstrap: str | None = None) -> WireClient:
        return WireClient(bootstrap or self.bootstrap, timeout=self.timeout)

    def _partition(self, topic: str, partition: int, bootstrap: str | None = None) -> PartitionMetadata:
        """The partition as Metadata (from `bootstrap`, default any node) shows it; 404 for an unknown one."""
        return partition_metadata(self._client(bootstrap), topic, partition)

    def leader(self, topic: str, partition: int) -> tuple[int, int]:
        part = self._partition(topic, partition)
        return part.leader, part.leader_epoch if part.leader_epoch is not None else -1

    def move_leader(self, topic: str, partition: int, broker: int) -> tuple[int, int]:
        """As an operator moves a leader: `broker` first in the replica list (AlterPartitionReassignments, the
        same replicas in a new order), then a preferred-leader election (ElectLeaders), each waited for in
        Metadata. Answers once every node's Metadata names `broker` the leader (the old leader then answers
        NOT_LEADER_OR_FOLLOWER) and the new leader's high watermark is back where the old leader's was: a leader
        fresh from being a follower holds its last known one until the followers fetch from it, and would serve
        fewer records than the model's leader, whose election replicates (models.cluster.elect_leader). 422 for an
        unknown broker, 409 for one without a replica or a move that fails."""
        part = self._partition(topic, partition)
        if broker not in self.clocks:
            raise ControlError(422, "body.broker", f"no broker {broker}: the brokers are {self._known()}")
        if broker not in part.replicas:
            replicas = ", ".join(str(b) for b in sorted(part.replicas))
            raise ControlError(
                409, "body.broker", f"broker {broker} holds no replica of {topic}-{partition} (replicas: {replicas})"
            )
        if part.leader == broker:
            return part.leader, part.leader_epoch if part.leader_epoch is not None else -1
        wanted = (broker, *(r for r in part.replicas if r != broker))
        client = self._client()
        try:
            high_watermark = self._high_watermark(client, topic, partition)
            if part.replicas[0] != broker:
                self._done(topic, partition, "AlterPartitionReassignments",
                           client.alter_partition_reassignments(topic, partition, wanted))  # fmt: skip
                self._await(topic, partition, lambda p: p.replicas == wanted, f"the replica order {list(wanted)}")
            elected = client.elect_leaders(topic, partition, election_type=_PREFERRED)
            if elected.error_code != _ELECTION_NOT_NEEDED:  # the controller moved it meanwhile: fine
                self._done(topic, partition, "ElectLeaders", elected)
        except WireError as exc:
            raise ControlError(409, "body.broker", f"moving {topic}-{partition} to broker {broker}: {exc}") from None
        finally:
            client.close()
        for node in self.broker_ids():  # every node, the old leader and the new one first of all, knows the move
            moved = self._await(topic, partition, lambda p: p.leader == broker, f"broker {broker} leading", node)
        self._await_high_watermark(topic, partition, high_watermark, broker)
        return moved.leader, moved.leader_epoch if moved.leader_epoch is not None else -1

    @staticmethod
    def _high_watermark(client: WireClient, topic: str, partition: int) -> int:
        """The leader's high watermark (ListOffsets LATEST, read uncommitted); -1 where it answers an error."""
        answer = client.list_offsets(topic, partition, _LATEST, version=client.max_version(_LIST_OFFSETS, 7))
        return answer.offset if answer.error_code == 0 else -1

    def _await_high_watermark(self, topic: str, partition: int, wanted: int, broker: int) -> None:
        deadline = time.monotonic() + self.timeout
        client = self._client(self.addresses[broker])
        try:
            while (now := self._high_watermark(client, topic, partition)) < wanted:
                if time.monotonic() >= deadline:
                    raise ControlError(
                        409, "body.broker",
                        f"broker {broker} leads {topic}-{partition} but its high watermark stayed at {now}, not "
                        f"{wanted} as before the move, for {self.timeout:g} s: see the brokers' logs",
                    )  # fmt: skip
                time.sleep(0.02)
        except WireError as exc:
            raise ControlError(409, "body.broker", f"after moving {topic}-{partition} to {broker}: {exc}") from None
        finally:
            client.close()

    @staticmethod
    def _done(topic: str, partition: int, what: str, result: ApiResult) -> None:
        if result.error_code != 0:
            why = f"{error_name(result.error_code)} {result.error_message or ''}".strip()
            raise ControlError(409, "body.broker", f"{what} for {topic}-{partition} failed: {why}")

    def _await(
        self, topic: str, partition: int, done: Callable[[PartitionMetadata], bool], what: str, node: int | None = None
    ) -> PartitionMetadata:
        """The partition once Metadata (from `node`, default any) shows `what`, polled within the timeout; a 409
        naming what was last seen otherwise."""
        deadline = time.monotonic() + self.timeout
        address = self.addresses[node] if node is not None else None
        pause = 0.005  # doubled up to 50 ms: a move shows within tens of milliseconds, a fixed 50 ms overslept it
        while True:
            part = self._partition(topic, partition, address)
            if done(part):
                return part
            if time.monotonic() >= deadline:
                where = f"broker {node}'s" if node is not None else "the"
                raise ControlError(
                    409, "body.broker",
                    f"{where} Metadata did not show {what} for {topic}-{partition} within {self.timeout:g} s (leader "
                    f"{part.leader}, replicas {list(part.replicas)}): see the brokers' logs",
                )  # fmt: skip
            time.sleep(pause)
            pause = min(2 * pause, 0.05)

    def run_retention(self) -> int:
        """Retention on every node with its own clock, as the model runs it on every replica (IDX-10)."""
        return sum(self.clocks[node].retention() for node in self.broker_ids())

    def reset(self) -> None:
        """Every topic deleted and every clock back to the machine's."""
        client = self._client()
        try:  # a broker that cannot delete its topics is the control plane's failure (500), not the caller's
            topics = [t for t in client.metadata(None).topics if not t.startswith("__")]
            if topics:
                client.delete_topics(topics)
        finally:
            client.close()
        for node in self.broker_ids():
            self.clocks[node].wall()
