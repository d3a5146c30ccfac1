"""The `kafka` managed targets: Apache Kafka brokers from Maven Central on loopback, in KRaft mode from 3.9 and in
ZooKeeper mode before (each with a ZooKeeper of its own: conformance.targets.brokers.zookeeper).

`--target kafka` is the newest supported line, `kafka:4.0` (or `kafka==4.0`) a given one; each line is pinned to
one release (`KAFKA_LINES`), so a run is reproducible and the jars are fetched once.

ZooKeeper mode (a release before 3.9): ZooKeeper starts first, then each broker through our ZooKeeper-mode launcher
(kafka_control: `ClockedZkKafka`, the same clock and line protocol as the KRaft one), configured with its own line's
inter-broker protocol and message format (`KafkaRelease.protocol_version`), so topics that ask for an older
message.format.version store v0 or v1 batches; stopped brokers first, ZooKeeper last. Releases before KRaft get
log4j 2 (with its log4j 1 bridge) instead of their own logging libraries, JAXB (which Java 11 removed and 0.10-1.x
call) and the `--add-opens` their index files' unmapping needs on Java 17.

Obtaining a release: Maven resolves `org.apache.kafka:kafka_2.13:<version>` with its runtime dependencies plus a
log4j 2 binding for SLF4J 1.x (Kafka's own jars declare slf4j-api 1.7.36 and no binding, so without one the
broker would log nothing) into `<cache>/kafka-<version>/lib` (the cache of reports.allure: `KTS_CACHE`, default
~/.cache/kafka-timestamp-conformance), with `mvn dependency:copy-dependencies`. A complete download is marked
(`.complete`) and reused offline; concurrent runs take a file lock.

Starting a broker: one combined broker and controller (`process.roles=broker,controller`, node 1, a static
one-voter quorum on a second free loopback port), a fresh log directory formatted with `kafka.tools.StorageTool
format` and the broker started through our launcher (kafka_control) by one `sh -c "format && exec java ..."`, so
the format's errors land in the broker's log and the process group is the broker's. Topics are created by the
suites (`auto.create.topics.enable=false`); internal topics have replication factor 1. The JVM gets -Xmx512m and
the serial collector: a test broker on a two-core machine, not a production one.

Three nodes (`--brokers 3`, KAFKA_BROKERS): ids 1, 2, 3, each formatted with the same cluster id, in a static
three-voter quorum (every node's controller port in `controller.quorum.voters`), each through the launcher with its
own clock port, so each broker has its own clock as the model's brokers do. They are spawned together and waited
for together (a node answers only once a majority of voters is up), ready once every node's Metadata names all
three, and stopped together. Leaders move only when the control plane moves them (`auto.leader.rebalance.enable=
false`); topics created without a replication factor get three replicas.

Measured on the development machine (2 cores): 4.4.0 answers ApiVersions 2.7 s after spawn (format included),
about 340 MB resident (`tests/benchmarks/bench_kafka.py` prints both per line); three nodes of 4.0.2 about 11 s
after spawn, about 300 MB resident each.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import shlex
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.control.control_plane import ControlPlane
from conformance.errors import TargetError
from conformance.jvm.locate import JvmUnavailable
from conformance.jvm.locate import java_tool as locate_java_tool
from conformance.targets.brokers import maven, zookeeper
from conformance.targets.brokers.kafka_control import (
    LAUNCHER_CLASS,
    ZK_LAUNCHER_CLASS,
    KafkaControlled,
    LauncherClock,
    launcher_classes,
)
from conformance.targets.brokers.opening import wire_factory
from conformance.targets.brokers.process import (
    LOOPBACK,
    ManagedBroker,
    ManagedProcessError,
    free_loopback_port,
    start_together,
    stop_together,
    unused_log_path,
)
from conformance.targets.kinds.implementation import Kind
from conformance.targets.target import Opened, Opening, ServedBy, Target
from conformance.wire.client import WireClient
from conformance.wire.connection import WireError

KAFKA_ARTIFACT = "org.apache.kafka:kafka_2.13"
# The lines whose behaviour a profile describes (models.profiles; any release of them is a target), each
# with its profile: a line behaves as the profile of the newest change before it; from 4.2 on the profile is
# kafka-4.2. Each profile was decided on the line's last release (kafka:<line>, below): with no expectations file, or
# with its line's file of Kafka's own bugs only (_KNOWN_BUGS), it exits 0. What a profile adds to the one before, and
# in which release, is in models/profiles.py. The lines before 3.9 run in ZooKeeper mode (KafkaRelease.zookeeper),
# storing the message formats their profiles describe (v0 to v2 up to 2.8; IBP 3.0 on ignores
# message.format.version). A line of 0.x is named by three numbers (Kafka's own: 0.10.0, 0.10.1, 0.10.2), a later
# one by two.
# Not targets yet: 0.10.0 and 0.10.1. 0.10.1.1 dates ListOffsets v0's log end by the machine's clock
# (KafkaApis.fetchOffsetsBefore reads kafka.utils.SystemTime, which the launcher's clock does not reach; 0.10.2 reads
# the broker's Time); 0.10.0.1 has no CreateTopics (KIP-4 came in 0.10.1), so the suite cannot make its topics. Both
# start and run on the suite's clock in ZooKeeper mode.
_PROFILE_OF_LINE: dict[tuple[int, ...], str] = {
    (0, 10, 2): "kafka-0.10",
    (0, 11, 0): "kafka-0.11",
    (1, 0): "kafka-1.0",
    (1, 1): "kafka-1.0",
    (2, 0): "kafka-2.0",
    (2, 1): "kafka-2.1",
    (2, 2): "kafka-2.2",
    (2, 3): "kafka-2.3",
    (2, 4): "kafka-2.4",
    (2, 5): "kafka-2.5",
    (2, 6): "kafka-2.8",
    (2, 7): "kafka-2.8",
    (2, 8): "kafka-2.8",
    (3, 0): "kafka-3.0",
    (3, 1): "kafka-3.0",
    (3, 2): "kafka-3.2",
    (3, 3): "kafka-3.2",
    (3, 4): "kafka-3.2",
    (3, 5): "kafka-3.5",
    (3, 6): "kafka-3.6",
    (3, 7): "kafka-3.6",
    (3, 8): "kafka-3.8",
    (3, 9): "kafka-3.9",
    (4, 0): "kafka-4.0",
    (4, 1): "kafka-4.1",
}
_NEWEST_PROFILE = ((4, 2), "kafka-4.2")  # this line and every later one
# Each line a target names (kafka:<line>), pinned to its last release on Maven Central (newest first), so a run is
# reproducible and the jars are fetched once.
_PINNED = (
    "4.4.0", "4.3.2", "4.2.2", "4.1.2", "4.0.2", "3.9.1", "3.8.1", "3.7.2", "3.6.2", "3.5.2", "3.4.1", "3.3.2",
    "3.2.3", "3.1.2", "3.0.2", "2.8.2", "2.7.2", "2.6.3", "2.5.1", "2.4.1", "2.3.1", "2.2.2", "2.1.1", "2.0.1",
    "1.1.1", "1.0.2", "0.11.0.3", "0.10.2.2",
)
NODE_ID = 1  # the first node's broker (and controller) id; the others follow (2, 3)
# The cluster sizes a run may ask for (--brokers): a KRaft quorum of one voter, or of three, which keeps a majority
# when one is down; two voters would stop with either node and add nothing a leader move needs over three.
KAFKA_BROKERS = (1, 3)
_LOG4J = "2.24.3"  # log4j-slf4j-impl (the binding for SLF4J 1.x), log4j-core, log4j-1.2-api
_RESOLVE_TIMEOUT = 900.0  # a first download of about 45 jars (43 MB for 4.4.0)
_FORMAT_AND_START_TIMEOUT = 120.0
_PROBE_TIMEOUT = 5.0  # one Metadata request while the nodes find each other
_STOP_TIMEOUT = 30.0  # a controlled shutdown of a one-node KRaft cluster takes a few seconds
_JVM_OPTIONS = ("-Xms64m", "-Xmx512m", "-XX:+UseSerialGC", "-Djava.awt.headless=true")
# What releases built for Java 8 need on Java 17: the index files' unmapping reaches into sun.nio.ch.
_OLD_JVM_OPTIONS = ("--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED")
_CACHE = Path(os.environ.get("KTS_CACHE", Path.home() / ".cache" / "kafka-timestamp-conformance"))
_NEVER_MS = 10 * 365 * 24 * 3600 * 1000  # ten years: "not on its own"
# KRaft from 3.9 on: our KRaft launcher builds the broker through KafkaRaftServer(KafkaConfig, Time), which 3.9
# has (2.8-3.8 take a third argument); the releases before run in ZooKeeper mode, which every one of them has.
_FIRST_KRAFT = (3, 9)


def release_numbers(version: str) -> tuple[int, ...] | None:
    """The numbers of an exact release ("2.8.2" -> (2, 8, 2); "0.10.2.2" -> (0, 10, 2, 2)), None for anything else:
    a release of 0.x has four numbers, a later one three."""
    matched = _EXACT.match(version)
    if matched is None:
        return None
    numbers = tuple(int(g) for g in matched.groups() if g is not None)
    return numbers if len(numbers) == (4 if numbers[0] == 0 else 3) else None


def line_of(numbers: tuple[int, ...]) -> tuple[int, ...]:
    """A release's line: the first three numbers of a 0.x release, the first two of a later one."""
    return numbers[:3] if numbers[0] == 0 else numbers[:2]


@dataclass(frozen=True)
class KafkaRelease:
    """One supported line: `line` as a target names it ("4.0"), the exact `version`, its behaviour `profile`;
    `path` a local build's folder (`kafka=PATH`) whose jars run instead of Maven Central's."""

    line: str
    version: str
    profile: str
    path: str | None = None

    @property
    def target(self) -> str:
        return f"kafka={self.path}" if self.path is not None else f"kafka:{self.line}"

    @property
    def numbers(self) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", self.version)[:4])

    @property
    def zookeeper(self) -> bool:
        """Whether this release runs in ZooKeeper mode (before 3.9) rather than KRaft."""
        return self.numbers[:2] < _FIRST_KRAFT

    @property
    def artifact(self) -> str:
        """Its Maven artifact: the newest Scala build Central has of it (2.13 from 2.4, 2.12 from 0.10.2)."""
        if self.numbers[:2] >= (2, 4):
            return KAFKA_ARTIFACT
        return "org.apache.kafka:kafka_2.12" if self.numbers[:3] >= (0, 10, 2) else "org.apache.kafka:kafka_2.11"

    @property
    def protocol_version(self) -> str:
        """Its own line as inter.broker.protocol.version and log.message.format.version take it ("2.8",
        "0.10.2"): the formats and protocol the line's profile describes."""
        return ".".join(str(n) for n in line_of(self.numbers))


# The exact releases a target may name: four numbers on 0.x, three after.
_EXACT = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:\.(\d+))?$")


def profile_of_release(numbers: tuple[int, ...]) -> str | None:
    """The behaviour profile of a release by its line (models.profiles), None for a line no profile describes."""
    first, newest = _NEWEST_PROFILE
    if numbers[:2] >= first:
        return newest
    return _PROFILE_OF_LINE.get(line_of(numbers))


def _pinned_line(exact: str) -> tuple[str, tuple[str, str]]:
    numbers = release_numbers(exact)
    assert numbers is not None, exact
    profile = profile_of_release(numbers)
    assert profile is not None, exact
    return ".".join(map(str, line_of(numbers))), (exact, profile)


# Each line a target names: its pinned release and its profile.
KAFKA_LINES: dict[str, tuple[str, str]] = dict(_pinned_line(exact) for exact in _PINNED)
NEWEST_LINE = next(iter(KAFKA_LINES))


# Apache Kafka's own timestamp bugs, as KNOWN entries of a shipped expectations file (suites/expectations/), by the
# lines that shipped them: a bug is a departure from the line's profile with its JIRA, never a profile of its own.
# KAFKA-16310 (with KAFKA-16342): from 3.0 (KIP-734) to 3.7 MAX_TIMESTAMP answers the offset the segment cached for
# its max timestamp (a batch's last offset), not the first record holding it; fixed in 3.8.
# KAFKA-7568: 2.1's ListOffsets v4 (KIP-320) answers leader epoch -1 everywhere; fixed in 2.2.
# 0.10: a LogAppendTime set rebuilt into an uncompressed one keeps the producer's CreateTime messages (the builder
# copies them as written); gone with 0.11's record builder (KAFKA-4816).
# KAFKA-6739: 0.11 (and 1.0.0-1.0.1, 1.1.0) fails a fetch below v4 of v2 records with headers (UNKNOWN_SERVER_ERROR)
# instead of down-converting them without; fixed in 1.0.2, 1.1.1, 2.0.0.
# A bug of one release is keyed by the release (its file repeats its line's entries): KAFKA-7549, 2.1.0 closes the
# connection on a Produce v3+ request failing the request-level checks; fixed in 2.1.1.
_KNOWN_BUGS: dict[tuple[int, ...], str] = {
    (0, 10, 2): "kafka-0.10.toml",
    (0, 11, 0): "kafka-0.11.0.toml",
    (2, 1, 0): "kafka-2.1.0.toml",
    (2, 1): "kafka-2.1.toml",
    **{(3, n): "kafka-3.0-3.7.toml" for n in range(8)},
}


# The releases a history campaign runs besides each line's last (HISTORY_TARGETS): the first to ship each bug above
# and the first without it.
_BUG_BOUNDARIES = ("2.1.0", "2.2.0", "3.0.0", "3.8.0")  # 2.1.1, the first without KAFKA-7549, is kafka:2.1
# Kafka's history as targets (`campaign --targets kafka-history`, tox -e kafka-history): every line's last release,
# oldest first, then the bug boundaries.
HISTORY_TARGETS: tuple[str, ...] = tuple(f"kafka:{line}" for line in reversed(KAFKA_LINES)) + tuple(
    f"kafka=={version}" for version in _BUG_BOUNDARIES
)


def kafka_expectations(target: Target) -> str | None:
    """The shipped expectations file of the Kafka `target` names: its release's known bugs, else its line's
    (_KNOWN_BUGS), None for a line without any."""
    numbers = kafka_release(target).numbers
    return _KNOWN_BUGS.get(numbers) or _KNOWN_BUGS.get(line_of(numbers))


def _lines_span() -> str:
    """The lines a target may name, oldest to newest: "kafka:2.6 to kafka:4.4"."""
    return f"kafka:{next(reversed(KAFKA_LINES))} to kafka:{NEWEST_LINE}"


def release(version: str | None) -> KafkaRelease:
    """The release `--target kafka[:VERSION]` names: the newest line without one; a line ("4.0") or its pinned
    release ("4.0.2"); any other exact release of a line a profile describes (`kafka==4.1.1`, `kafka==2.8.1`: Maven
    Central must serve it) under its line's profile; anything else a TargetError listing the choices."""
    if version is None:
        line = NEWEST_LINE
    else:
        line = next((ln for ln, (exact, _) in KAFKA_LINES.items() if version in (ln, exact)), "")
    if line:
        exact, profile = KAFKA_LINES[line]
        return KafkaRelease(line, exact, profile)
    numbers = release_numbers(version or "")
    profile = profile_of_release(numbers) if numbers is not None else None
    if numbers is not None and profile is not None:
        return KafkaRelease(str(version), str(version), profile)
    raise TargetError(
        f"Apache Kafka {version} is not a supported target: choose a line, {_lines_span()} (each its last release), "
        f"or an exact release of one (kafka==4.1.1, kafka==2.8.1)"
    )


def kafka_release(target: Target) -> KafkaRelease:
    """The release a `kafka` target names: `kafka[:VERSION]` (release) or a local build, `kafka=PATH` (local_build)."""
    return local_build(target.path) if target.path is not None else release(target.version)


def kafka_profile(target: Target) -> str:
    """The behaviour profile of the Kafka `target` names (its default --profile)."""
    return kafka_release(target).profile


# --- a local build (kafka=PATH) -------------------------------------------------------------------------------

_KAFKA_JAR = re.compile(r"^kafka_2\.13-((\d+)\.(\d+)\.\d+(?:-SNAPSHOT)?)\.jar$")
_NOT_RUNTIME = re.compile(r"-(test|tests|sources|javadoc|scaladoc|test-sources)\.jar$")


def local_jars(path: str) -> tuple[str, list[Path]]:
    """The Kafka version and the runtime jars of a local build at `path`: an unpacked distribution (its `libs/`,
    as `./gradlew releaseTarGz` makes it) or a source checkout after `./gradlew jar` (every module's
    `build/libs/` and core's `build/dependant-libs-*`, as bin/kafka-run-class.sh puts them on the classpath); a
    TargetError naming the fix otherwise."""
    root = Path(path).expanduser().resolve()
    if not root.is_dir():
        raise TargetError(
            f"kafka={path}: {root} {'is not a folder' if root.exists() else 'does not exist'}: give an unpacked Kafka "
            "distribution or a built checkout"
        )
    if any(_KAFKA_JAR.match(j.name) for j in (root / "libs").glob("kafka_2.13-*.jar")):
        jars = sorted((root / "libs").glob("*.jar"))
    elif any(_KAFKA_JAR.match(j.name) for j in (root / "core" / "build" / "libs").glob("kafka_2.13-*.jar")):
        built = [*root.glob("*/build/libs/*.jar"), *root.glob("*/*/build/libs/*.jar")]
        jars = sorted({*built, *root.glob("core/build/dependant-libs-*/*.jar")})
    else:
        raise TargetError(
            f"kafka={path}: {root} has neither libs/kafka_2.13-*.jar (an unpacked distribution) nor "
            "core/build/libs/kafka_2.13-*.jar (a built checkout): run `./gradlew jar` in the checkout first"
        )
    jars = [j for j in jars if not _NOT_RUNTIME.search(j.name)]
    versions = sorted({m.group(1) for j in jars if (m := _KAFKA_JAR.match(j.name))})
    if len(versions) > 1:
        raise TargetError(
            f"kafka={path}: kafka_2.13 jars of {', '.join(versions)} in one build: run `./gradlew clean jar` there"
        )
    return versions[0], jars


def local_build(path: str) -> KafkaRelease:
    """`kafka=PATH`: the local build's version (from its kafka_2.13 jar) under its line's profile; a build older than
    3.9 (the first line our KRaft launcher runs: a local build runs in KRaft mode) is refused."""
    version, _ = local_jars(path)
    major, minor = (int(n) for n in version.split(".")[:2])
    profile = profile_of_release((major, minor))
    if (major, minor) < _FIRST_KRAFT or profile is None:
        oldest = ".".join(str(n) for n in _FIRST_KRAFT)
        raise TargetError(f"kafka={path} is Apache Kafka {version}: a local build must be {oldest} or newer")
    return KafkaRelease(f"{major}.{minor}", version, profile, path=path)


def local_runtime(jars: Sequence[Path], cache: Path = _CACHE) -> Path:
    """A folder of links to `jars` (the classpath is `lib/*`), keyed by their paths, sizes and times, so a
    rebuild gets a launcher compiled anew; under `<cache>/kafka-local-<key>/`."""
    digest = hashlib.sha256()
    for jar in jars:
        stat = jar.stat()
        digest.update(f"{jar}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    home = cache / f"kafka-local-{digest.hexdigest()[:12]}"
    lib = home / "lib"
    if not (home / ".complete").is_file():
        home.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix="lib-", dir=home))
        for n, jar in enumerate(jars):  # two modules may build jars of one name: numbered, never overwritten
            (staging / f"{n:03d}-{jar.name}").symlink_to(jar)
        shutil.rmtree(lib, ignore_errors=True)
        staging.rename(lib)
        (home / ".complete").write_text("\n".join(str(j) for j in jars) + "\n", encoding="utf-8")
    return home


def check_kafka(target: Target, opening: Opening) -> None:
    """Before anything starts: a supported version, the profile it behaves as, and Java and Maven on PATH."""
    found = kafka_release(target)
    if opening.profile != found.profile:
        raise TargetError(
            f"Apache Kafka {found.version} behaves as profile {found.profile}, not {opening.profile}: pass --profile "
            f"{found.profile} or none (env KTS_PROFILE)"
        )
    _tool("java", "a JDK 17 or newer (apt-get install openjdk-17-jdk-headless), or set JAVA_HOME")
    if found.path is None and not _runtime_complete(found.version):
        _tool("mvn", "Maven 3.8 or newer (apt-get install maven): it fetches Apache Kafka from Maven Central once")


def _tool(name: str, fix: str) -> str:
    """`name` found for an Apache Kafka target, or TargetError naming `fix`. java and javac as the JVM bridge finds
    them (conformance.jvm.locate: JAVA_HOME where it is set, else PATH), so both come from one JDK."""
    if name in ("java", "javac"):
        try:
            return str(locate_java_tool(name))
        except JvmUnavailable as exc:
            if os.environ.get("JAVA_HOME"):
                raise TargetError(str(exc)) from None
    elif (found := shutil.which(name)) is not None:
        return found
    raise TargetError(f"{name} not found, and Apache Kafka targets need it: install {fix}")


# --- obtaining a release ------------------------------------------------------------------------------------


def runtime_dir(version: str, cache: Path = _CACHE) -> Path:
    return cache / f"kafka-{version}"


def _runtime_complete(version: str, cache: Path = _CACHE) -> bool:
    return maven.complete(runtime_dir(version, cache))


def artifact_of(version: str) -> str:
    """Apache Kafka `version`'s Maven artifact (KafkaRelease.artifact)."""
    return KafkaRelease(version, version, "").artifact


# What a release before KRaft gets instead of its own logging libraries: Kafka's log4j 1 calls (0.10 logs through
# log4j 1 directly) go through log4j 2's bridge, so one log4j 2 configuration serves every release; JAXB, which
# Java 11 dropped and 0.10-1.x call; an SLF4J API the log4j 2 binding was built for (0.10.0 brings 1.6.1).
_OLD_LOGGING = ("log4j:log4j", "org.slf4j:slf4j-log4j12", "ch.qos.reload4j:reload4j", "org.slf4j:slf4j-reload4j")
_OLD_EXTRAS = (
    maven.Dependency("org.apache.logging.log4j", "log4j-1.2-api", _LOG4J),
    maven.Dependency("org.slf4j", "slf4j-api", "1.7.36"),
    maven.Dependency("javax.xml.bind", "jaxb-api", "2.3.1"),
)


# The ZooKeeper client of 2.0-2.3 (3.4.13 and 3.4.14) cannot reach any server on Java 14 and later: it parses the
# address InetSocketAddress prints, whose form Java 14 changed ("Unable to canonicalize address
# 127.0.0.1/<unresolved>:PORT because it's not resolvable", ZOOKEEPER-3779, fixed in 3.5.8). Those releases get the
# client of the suite's ZooKeeper instead, whose API is a superset of what they call (2.4 moved to 3.5 unchanged).
_ZOOKEEPER_CLIENT_REPLACED = ((2, 0), (2, 4))


def _pom(version: str) -> str:
    found = KafkaRelease(version, version, "")
    group, artifact = found.artifact.split(":")
    excluded = _OLD_LOGGING if found.zookeeper else ()
    first, end = _ZOOKEEPER_CLIENT_REPLACED
    client = first <= found.numbers[:2] < end
    if client:
        excluded = (*excluded, "org.apache.zookeeper:zookeeper")
    dependencies = (
        maven.Dependency(group, artifact, version, excluded),
        maven.Dependency("org.apache.logging.log4j", "log4j-slf4j-impl", _LOG4J),
        maven.Dependency("org.apache.logging.log4j", "log4j-core", _LOG4J),
        *(_OLD_EXTRAS if found.zookeeper else ()),
        *(zookeeper.client_dependencies() if client else ()),
    )
    return maven.pom("kafka-runtime", version, dependencies)


# What Maven says when Central has no such artifact, and when it cannot reach Central at all.
_NOT_ON_CENTRAL = re.compile(r"Could not find artifact|Failure to find|was not found in")
_UNREACHABLE = re.compile(
    r"Could not transfer|Connection refused|Unknown host|UnknownHostException|timed out|Network is unreachable"
)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _released_examples() -> str:
    """The pinned releases, which Maven Central serves: "kafka==4.4.0, or a line from kafka:2.6 to kafka:4.4"."""
    return f"kafka=={KAFKA_LINES[NEWEST_LINE][0]}, or a line from {_lines_span()}"


def maven_failure(output: str, version: str) -> str:
    """One line for a failed fetch of Apache Kafka `version`: a release Maven Central does not have, a Central that
    cannot be reached, or Maven's first error; without the colour codes Maven puts around its messages (even in
    batch mode, and with style.color=never)."""
    plain = _ANSI.sub("", output)
    artifact = f"{artifact_of(version)}:{version}"
    # Maven names the missing artifact group:name:type:version ("org.apache.kafka:kafka_2.13:jar:4.1.99").
    missing = re.escape(artifact_of(version)) + rf":(jar|pom):{re.escape(version)}\b"
    if _NOT_ON_CENTRAL.search(plain) and re.search(missing, plain):
        return (
            f"Apache Kafka {version} is not on Maven Central ({artifact}): choose a released version, e.g. "
            f"{_released_examples()}"
        )
    errors = [" ".join(line.replace("[ERROR]", "").split()) for line in plain.splitlines() if "ERROR" in line]
    first = next((e for e in errors if e), "").removesuffix("-> [Help 1]").strip()
    # Maven nests its causes ("Failed to execute goal ...: Could not resolve ...: Could not transfer ...: Unknown
    # host ..."): the innermost two say what went wrong.
    why = ": ".join(first.split(": ")[-2:])[-300:] or "no error message"
    if _UNREACHABLE.search(plain):
        return (
            f"Maven could not reach Maven Central to fetch {artifact} ({why}): check the network, or a proxy or "
            "mirror in ~/.m2/settings.xml"
        )
    return f"Maven could not fetch {artifact} ({why}): check the version and that Maven Central is reachable"


def resolve_runtime(version: str, cache: Path = _CACHE, *, timeout: float = _RESOLVE_TIMEOUT) -> Path:
    """The folder of jars of Apache Kafka `version` (its `lib/`), fetched with Maven on first use; a
    ManagedProcessError naming the fix when Maven is missing or cannot resolve it (and no folder left behind in the
    cache for a release that could not be had)."""
    scala = artifact_of(version).rpartition(":")[2]
    return maven.resolve(
        runtime_dir(version, cache),
        _pom(version),
        what=f"Apache Kafka {version}",
        marker=f"{scala}-*.jar",
        mvn=_maven,
        failure=lambda output: maven_failure(output, version),
        timeout=timeout,
    )


def _maven() -> str:
    try:
        return _tool("mvn", "Maven 3.8 or newer (apt-get install maven): it fetches Apache Kafka from Maven Central")
    except TargetError as exc:
        raise ManagedProcessError(str(exc)) from None


# --- starting a broker ----------------------------------------------------------------------------------------

_LOG4J2 = """\
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
logger.state.name = state.change.logger
logger.state.level = WARN
"""


@dataclass(frozen=True)
class SecureListener:
    """A second client listener of a one-node cluster, SASL_SSL on loopback (the project's tests of TLS and SASL:
    tests/test_tls_sasl.py), beside the PLAINTEXT one the suite's own probes and control plane use; the controller
    and inter-broker listeners stay PLAINTEXT. `keystore`: the broker's PEM key and certificate chain in one file
    (ssl.keystore.type=PEM); PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 are enabled, `users` (name, password) get
    SCRAM credentials of both kinds at format time and a PLAIN login."""

    port: int
    keystore: Path
    users: tuple[tuple[str, str], ...]

    def properties(self) -> dict[str, str]:
        """The listener's broker settings (its port is added to `listeners` by server_properties)."""
        prefix = "listener.name.sasl_ssl."
        plain_users = " ".join(f'user_{name}="{password}"' for name, password in self.users)
        scram = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
        return {
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
            f"{prefix}ssl.keystore.type": "PEM",
            f"{prefix}ssl.keystore.location": str(self.keystore),
            f"{prefix}plain.sasl.jaas.config":
                f"org.apache.kafka.common.security.plain.PlainLoginModule required {plain_users};",
            f"{prefix}scram-sha-256.sasl.jaas.config": scram,
            f"{prefix}scram-sha-512.sasl.jaas.config": scram,
        }  # fmt: skip

    def format_arguments(self) -> list[str]:
        """StorageTool format's --add-scram arguments: each user's credentials of both SCRAM kinds."""
        return [
            f"--add-scram={kind}=[name={name},password={password}]"
            for name, password in self.users
            for kind in ("SCRAM-SHA-256", "SCRAM-SHA-512")
        ]


@dataclass(frozen=True)
class KafkaNode:
    """One node of a managed cluster, as its configuration names it: its id (broker and controller), its
    controller port (the quorum's voters list every node's), and the loopback port of its launcher's clock."""

    node_id: int
    controller_port: int
    clock_port: int


def cluster_nodes(count: int) -> tuple[KafkaNode, ...]:
    """`count` nodes with ids 1..count, each with its own free controller and clock port."""
    return tuple(KafkaNode(NODE_ID + i, free_loopback_port(), free_loopback_port()) for i in range(count))


def quorum_voters(nodes: Sequence[KafkaNode]) -> str:
    """controller.quorum.voters: a static quorum of every node ("1@127.0.0.1:P1,2@127.0.0.1:P2,...")."""
    return ",".join(f"{n.node_id}@{LOOPBACK}:{n.controller_port}" for n in nodes)


def _shared_properties(brokers: int) -> dict[str, str]:
    """The settings a node has in either mode: the suite's topics, clock and retention (see the module doc)."""
    return {
        "num.partitions": "1",
        "auto.create.topics.enable": "false",
        # The suite names the replication factor of its topics (kafka_wire: min(3, brokers)); a topic created
        # without one gets every node, as the model's topics have.
        "default.replication.factor": str(brokers),
        # The internal topics stay on one replica: the suites never read them or move their leaders, and 50
        # offsets partitions replicated three times would only load a two-core machine.
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        # Leaders move when the suite moves them (kafka_control.KafkaControlled.move_leader), never back to a
        # preferred replica on the controller's own schedule.
        "auto.leader.rebalance.enable": "false",
        # Stopped as a whole and its data removed: no controlled shutdown, which on the last nodes of a quorum
        # would wait for controllers already gone.
        "controlled.shutdown.enable": "false",
        # The suite's clock (kafka_control): retention runs when the suite asks (POST /retention), never on the
        # broker's own schedule.
        "log.retention.check.interval.ms": str(_NEVER_MS),
        "log.initial.task.delay.ms": str(_NEVER_MS),
        # No log cleaner: compaction is not part of the timestamp contract and the model has none, and the cleaner
        # rewrites a compacted topic's segments on its own schedule, so a roll test on one read differently from
        # run to run (IDX.compacted-roll-max-lag NON-STRICT in 1 of 3 runs of 4.4.0). The roll a compaction lag
        # forces (IDX-9) is decided at append and stays.
        "log.cleaner.enable": "false",
    }


def server_properties(
    port: int, node: KafkaNode, voters: str, log_dir: Path, *, brokers: int = 1, secure: SecureListener | None = None
) -> str:
    """A node's configuration: a combined broker and controller on loopback in a static quorum of `voters`
    (see the module doc); `brokers` nodes in all; with `secure`, its SASL_SSL listener as well."""
    extra = f",SASL_SSL://{LOOPBACK}:{secure.port}" if secure is not None else ""
    settings = {
        "process.roles": "broker,controller",
        "node.id": str(node.node_id),
        "controller.quorum.voters": voters,
        "listeners": f"PLAINTEXT://{LOOPBACK}:{port}{extra},CONTROLLER://{LOOPBACK}:{node.controller_port}",
        "advertised.listeners": f"PLAINTEXT://{LOOPBACK}:{port}{extra}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(log_dir),
        # The quorum appends a metadata change at once, not after waiting up to 25 ms (the default) for more to
        # batch with it: a topic's creation, deletion or config change answered in a few ms, not about 50 (the
        # suites create a topic or more per example; bench_kafka_suite measures it). What a change does is the
        # same; only when it is committed moves.
        "controller.quorum.append.linger.ms": "0",
        **_shared_properties(brokers),
        **(secure.properties() if secure is not None else {}),
    }
    return "".join(f"{key}={value}\n" for key, value in settings.items())


def zookeeper_properties(
    port: int, node: KafkaNode, zookeeper_connect: str, log_dir: Path, found: KafkaRelease, *, brokers: int = 1
) -> str:
    """A broker's configuration in ZooKeeper mode: its id, its PLAINTEXT listener on loopback, its ZooKeeper; the
    inter-broker protocol and the default message format of its own line, so its topics store the formats its
    profile describes (a topic's message.format.version takes an older one: CNV-3); topics deletable (0.10
    keeps them otherwise)."""
    settings = {
        "broker.id": str(node.node_id),
        "listeners": f"PLAINTEXT://{LOOPBACK}:{port}",
        "advertised.listeners": f"PLAINTEXT://{LOOPBACK}:{port}",
        "zookeeper.connect": zookeeper_connect,
        "inter.broker.protocol.version": found.protocol_version,
        "log.message.format.version": found.protocol_version,
        "delete.topic.enable": "true",
        "log.dirs": str(log_dir),
        **_shared_properties(brokers),
    }
    return "".join(f"{key}={value}\n" for key, value in settings.items())


def _node_folder(work: Path, node: KafkaNode, port: int, properties: Callable[[Path], str]) -> tuple[Path, Path]:
    """A node's private folder under `work` with its data folder, its configuration (`properties` of the data
    folder) and its log4j 2 configuration: the folder and the configuration file."""
    run = Path(tempfile.mkdtemp(prefix=f"node-{node.node_id}-{port}-", dir=work))
    (run / "data").mkdir()
    config = run / "server.properties"
    config.write_text(properties(run / "data"), encoding="utf-8")
    (run / "log4j2.properties").write_text(_LOG4J2, encoding="utf-8")
    return run, config


def kafka_command(
    java: str, lib: Path, launcher: Path, work: Path, port: int, node: KafkaNode, voters: str, cluster_id: str,
    *, brokers: int = 1, secure: SecureListener | None = None,
) -> list[str]:
    """The argv that formats a fresh log directory of `node` under `work` (the cluster's `cluster_id`) and then
    runs it, its broker on `port`, through our launcher (`launcher`: its classes), whose clock control listens
    on the node's clock port, as one shell whose `exec` makes the broker the process group's leader."""
    run, config = _node_folder(
        work, node, port, lambda data: server_properties(port, node, voters, data, brokers=brokers, secure=secure)
    )
    jvm = [java, *_JVM_OPTIONS, f"-Dlog4j2.configurationFile={run / 'log4j2.properties'}", "-cp", f"{lib}/*"]
    # `--cluster-id=ID`, not `-t ID`: a base64 id may start with "-", which the tool's parser reads as an option.
    fmt = [*jvm, "kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id}", "-c", str(config),
           "--ignore-formatted"]  # fmt: skip
    if secure is not None:
        # The SCRAM passwords go in a script of the node's private folder, not on the command line that the
        # broker's log shows.
        script = run / "format.sh"
        script.write_text(shlex.join([*fmt, *secure.format_arguments()]) + "\n", encoding="utf-8")
        script.chmod(0o600)
        fmt = ["/bin/sh", str(script)]
    broker = [java, *_JVM_OPTIONS, f"-Dlog4j2.configurationFile={run / 'log4j2.properties'}", "-cp",
              f"{lib}/*:{launcher}", LAUNCHER_CLASS, str(config), str(node.clock_port)]  # fmt: skip
    return ["/bin/sh", "-c", f"{shlex.join(fmt)} && exec {shlex.join(broker)}"]


def zookeeper_kafka_command(
    java: str, lib: Path, launcher: Path, work: Path, port: int, node: KafkaNode, zookeeper_connect: str,
    found: KafkaRelease, *, brokers: int = 1,
) -> list[str]:
    """The argv that runs `node` of a ZooKeeper-mode cluster of `found`, its broker on `port`, through our launcher
    for ZooKeeper mode (`launcher`: its classes), whose clock control listens on the node's clock port."""
    run, config = _node_folder(
        work, node, port, lambda data: zookeeper_properties(port, node, zookeeper_connect, data, found, brokers=brokers)
    )
    return [java, *_JVM_OPTIONS, *_OLD_JVM_OPTIONS, f"-Dlog4j2.configurationFile={run / 'log4j2.properties'}",
            "-cp", f"{lib}/*:{launcher}", ZK_LAUNCHER_CLASS, str(config), str(node.clock_port)]  # fmt: skip


def new_cluster_id() -> str:
    """A KRaft cluster id (a base64 UUID without padding), the same formatted on every node."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def resident_megabytes(pid: int) -> float | None:
    """The resident memory of `pid` in MB (VmRSS), None where /proc does not tell."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _java_and_launcher(found: KafkaRelease) -> tuple[str, Path, Path]:
    """java, the release's jars and our launcher (for its mode) compiled against them; a ManagedProcessError naming
    the fix."""
    try:
        java = _tool("java", "a JDK 17 or newer (apt-get install openjdk-17-jdk-headless), or set JAVA_HOME")
        javac = _tool("javac", "a JDK 17 or newer with javac (apt-get install openjdk-17-jdk-headless)")
    except TargetError as exc:
        raise ManagedProcessError(str(exc)) from None
    if found.path is not None:
        home = local_runtime(local_jars(found.path)[1])
        return java, home / "lib", launcher_classes(javac, home / "lib", home)
    lib = resolve_runtime(found.version)
    if found.zookeeper:
        zookeeper.resolve_zookeeper(_CACHE, _maven())
    return java, lib, launcher_classes(javac, lib, runtime_dir(found.version), zookeeper=found.zookeeper)


def kafka_nodes(
    found: KafkaRelease, log_dir: Path, work: Path, nodes: Sequence[KafkaNode], *,
    ready_timeout: float = _FORMAT_AND_START_TIMEOUT, secure: SecureListener | None = None,
    zookeeper_connect: Callable[[], str] | None = None,
) -> list[ManagedBroker]:
    """The managed processes of one cluster of `found` (not started): one per node; in KRaft formatted with one
    cluster id, in a static quorum of them all, in ZooKeeper mode on the ZooKeeper `zookeeper_connect` names
    when the node starts; configuration and data under `work`, logs in `log_dir`; `secure` (one KRaft node only)
    its SASL_SSL listener."""
    if secure is not None and (len(nodes) != 1 or found.zookeeper):
        raise ValueError("a SASL_SSL listener is offered on a one-node KRaft cluster only")
    java, lib, launcher = _java_and_launcher(found)
    log_dir.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    voters, cluster_id = quorum_voters(nodes), new_cluster_id()

    def command(port: int, node: KafkaNode) -> list[str]:
        if found.zookeeper:
            if zookeeper_connect is None:
                raise ValueError(f"Apache Kafka {found.version} runs in ZooKeeper mode: name its ZooKeeper")
            return zookeeper_kafka_command(
                java, lib, launcher, work, port, node, zookeeper_connect(), found, brokers=len(nodes)
            )
        return kafka_command(
            java, lib, launcher, work, port, node, voters, cluster_id, brokers=len(nodes), secure=secure
        )

    mode = "ZooKeeper mode" if found.zookeeper else "KRaft"
    shape = "one node" if len(nodes) == 1 else f"node {{}} of {len(nodes)}"
    return [
        ManagedBroker(
            "kafka" if len(nodes) == 1 else f"kafka-node{node.node_id}",
            lambda port, node=node: command(port, node),  # type: ignore[misc]
            log_dir,
            ready_timeout=ready_timeout,
            stop_timeout=_STOP_TIMEOUT,
            description=f"Apache Kafka {found.version} ({mode}, {shape.format(node.node_id)})",
        )
        for node in nodes
    ]


def _note_startup(found: KafkaRelease, broker: ManagedBroker) -> None:
    rss = resident_megabytes(broker.pid)
    memory = f", {rss:.0f} MB resident" if rss is not None else ""
    started = "(format included)" if not found.zookeeper else "(ZooKeeper mode)"
    with broker.log_path.open("a", encoding="utf-8") as log:  # the figures where a reader of the log sees them
        log.write(
            f"# kafka-conformance: Apache Kafka {found.version} answered ApiVersions {broker.startup_seconds:.1f} s "
            f"after spawn {started}{memory}\n"
        )


@contextlib.contextmanager
def _zookeeper_for(found: KafkaRelease, log_dir: Path, work: Path) -> Iterator[zookeeper.ZooKeeperProcess | None]:
    """The cluster's own ZooKeeper, started and ready, where `found` runs in ZooKeeper mode (None in KRaft);
    stopped on the way out, after the brokers."""
    if not found.zookeeper:
        yield None
        return
    java = _tool("java", "a JDK 17 or newer (apt-get install openjdk-17-jdk-headless), or set JAVA_HOME")
    lib = zookeeper.resolve_zookeeper(_CACHE, _maven())
    with zookeeper.ZooKeeperProcess(java, lib, work, log_dir) as keeper:
        yield keeper


@contextlib.contextmanager
def kafka_cluster(
    found: KafkaRelease, log_dir: Path, work: Path, nodes: Sequence[KafkaNode], *,
    ready_timeout: float = _FORMAT_AND_START_TIMEOUT, secure: SecureListener | None = None,
) -> Iterator[list[ManagedBroker]]:
    """A fresh Apache Kafka of `found` on `nodes` (in ZooKeeper mode with a ZooKeeper of its own, started first and
    stopped last), started side by side and ready (each answered ApiVersions, which a node of a quorum does once a
    majority of voters is up); every node stopped on the way out. `secure`: a SASL_SSL listener beside the
    PLAINTEXT one (one KRaft node only)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    with _zookeeper_for(found, log_dir, work) as keeper:
        connect = (lambda: keeper.connect) if keeper is not None else None
        brokers = kafka_nodes(
            found, log_dir, work, nodes, ready_timeout=ready_timeout, secure=secure, zookeeper_connect=connect
        )
        start_together(brokers)
        try:
            # In ZooKeeper mode even one node: a broker answers ApiVersions before the controller's first
            # UpdateMetadata tells it who is alive, and its Metadata names no broker until then (0.10.2.2).
            _await_every_node_known(
                brokers, [n.node_id for n in nodes], timeout=ready_timeout, single=found.zookeeper
            )
            for broker in brokers:
                _note_startup(found, broker)
            yield brokers
        finally:
            stop_together(brokers)


def _await_every_node_known(
    brokers: Sequence[ManagedBroker], node_ids: Sequence[int], *, timeout: float, single: bool = False
) -> None:
    """Until each node's Metadata names every node: a node answers ApiVersions before the others' registrations
    reach it, and a run that asked Metadata then would see fewer brokers than the control plane names. A one-node
    cluster is awaited too where `single` says so (ZooKeeper mode)."""
    if len(brokers) < 2 and not single:
        return
    deadline = time.monotonic() + timeout
    for broker in brokers:
        seen: list[int] = []
        while True:
            client = WireClient(broker.bootstrap, timeout=min(_PROBE_TIMEOUT, timeout))
            try:
                seen = sorted(b.node_id for b in client.metadata([]).brokers)
            except WireError:
                seen = []
            finally:
                client.close()
            if seen == sorted(node_ids):
                break
            if time.monotonic() >= deadline or not broker.alive():
                raise ManagedProcessError(
                    f"Apache Kafka at {broker.bootstrap} named brokers {seen}, not {sorted(node_ids)}, within "
                    f"{timeout:g} s of start: see its log {broker.log_path}"
                )
            time.sleep(0.1)


@dataclass(frozen=True)
class RunningKafka:
    """A started Apache Kafka on the suite's clock: where it listens, its control plane, its nodes' logs."""

    bootstrap: str
    control_url: str
    log_paths: list[Path]


@contextlib.contextmanager
def kafka_on_the_suites_clock(
    found: KafkaRelease, opening: Opening, *, secure: SecureListener | None = None
) -> Iterator[RunningKafka]:
    """A fresh Apache Kafka of `found` (`opening.brokers` nodes, default one) through our launcher, with the
    project's control plane over it (kafka_control), stopped on the way out (also on errors); its configuration and
    data in a temporary folder, removed after it stops. `secure`: a SASL_SSL listener as well (one node; its
    address is not in `bootstrap`, which stays the PLAINTEXT listener's)."""
    work = Path(tempfile.mkdtemp(prefix=f"kts-kafka-{found.version}-"))
    nodes = cluster_nodes(opening.brokers or 1)
    try:
        with kafka_cluster(found, opening.log_dir, work, nodes, secure=secure) as brokers:
            clocks = {n.node_id: LauncherClock(n.clock_port, timeout=opening.timeout) for n in nodes}
            addresses = {n.node_id: b.bootstrap for n, b in zip(nodes, brokers, strict=True)}
            controlled = KafkaControlled(clocks, addresses, timeout=opening.timeout)
            # The control plane's own log beside the brokers': a request it failed on is there with its traceback.
            first_port = addresses[nodes[0].node_id].rpartition(":")[2]
            Path(opening.log_dir).mkdir(parents=True, exist_ok=True)
            control_log = unused_log_path(Path(opening.log_dir), f"kafka-control-{first_port}")
            with control_log.open("w", encoding="utf-8") as log:
                control = ControlPlane(controlled, host=LOOPBACK, log=log).start()
                try:
                    logs = [Path(b.log_path) for b in brokers]
                    yield RunningKafka(",".join(addresses.values()), control.url, [*logs, control_log])
                finally:
                    control.stop()
                    for clock in clocks.values():
                        clock.close_connection()
    finally:
        shutil.rmtree(work, ignore_errors=True)  # its data: the brokers are stopped


def obtain_kafka(target: Target, opening: Opening) -> None:
    """`--target kafka[:VERSION]` or `kafka=PATH` before anything starts: the release's jars fetched from Maven
    Central (once, into the cache) or the local build's linked, and our launcher compiled against them; a TargetError
    naming the fix when they cannot be had (a release Maven Central does not have, Maven or javac failing)."""
    obtain_release(kafka_release(target))


def obtain_release(found: KafkaRelease) -> None:
    """What `obtain_kafka` does, for a release already read (a client's `@kafka:<line>`, too)."""
    try:
        _java_and_launcher(found)
    except ManagedProcessError as exc:
        raise TargetError(str(exc)) from None


def check_kafka_line(line: str, opening: Opening) -> KafkaRelease:
    """`check_kafka` for the Kafka a client runs against (`client:<library>@kafka:<line>`); the release."""
    found = release(line.partition(":")[2] or None)
    check_kafka(Target(Kind.BROKER, "kafka", ServedBy.MANAGED, version=found.line), opening)
    return found


@contextlib.contextmanager
def open_kafka(target: Target, opening: Opening) -> Iterator[Opened]:
    """`--target kafka[:VERSION]`: a fresh Apache Kafka for the run on the suite's clock (`opening.brokers` nodes,
    default one), stopped on the way out (also on errors)."""
    found = kafka_release(target)
    with kafka_on_the_suites_clock(found, opening) as kafka:
        yield (
            wire_factory(
                target, opening, kafka.bootstrap, control_url=kafka.control_url, marks_by_produce=found.zookeeper
            ),
            kafka.log_paths,
        )
