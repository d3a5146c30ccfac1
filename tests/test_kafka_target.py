"""The `kafka` managed targets (conformance.targets.brokers.kafka): names and versions, the usage checks, and (e2e)
a real Apache Kafka from Maven Central started, answering the Kafka protocol, and gone after stop."""

from __future__ import annotations

import os
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.control.control_client import ControlClient
from conformance.errors import TargetError
from conformance.targets.brokers.kafka import (
    KAFKA_LINES,
    NEWEST_LINE,
    KafkaNode,
    KafkaRelease,
    cluster_nodes,
    kafka_cluster,
    local_build,
    local_jars,
    local_runtime,
    quorum_voters,
    release,
    server_properties,
)
from conformance.targets.brokers.kafka_control import (
    LAUNCHER_CLASS,
    ZK_LAUNCHER_CLASS,
    LauncherClock,
    authorizer_for,
    launcher_sources,
)
from conformance.targets.brokers.process import probe_api_versions
from conformance.targets.brokers.zookeeper import ZOOKEEPER_MAIN
from conformance.targets.registry import check_target, default_profile, open_target, parse_target
from conformance.targets.routes.wire_adapter.kafka_wire import WireFactory
from conformance.wire.client import WireClient
from models.codec import encode_batches
from models.records import RecordSpec, build_v2
from tests.test_managed_processes import assert_gone
from tests.test_run_stopped import _descendants

OLDEST = next(reversed(KAFKA_LINES))  # the oldest line a target names
PRODUCE, LIST_OFFSETS = 0, 2


@pytest.mark.parametrize(
    ("name", "shown", "version"),
    [("kafka", "kafka", None), ("kafka:4.0", "kafka:4.0", "4.0"), ("kafka==3.9", "kafka:3.9", "3.9"),
     ("kafka:4.0.2", "kafka:4.0.2", "4.0.2")],
)  # fmt: skip
def test_a_kafka_target_names_a_line_or_its_release(name: str, shown: str, version: str | None) -> None:
    target = parse_target(name)
    assert (str(target), target.implementation, target.version) == (shown, "kafka", version)


def test_each_line_is_pinned_to_one_release_and_its_profile() -> None:
    assert release(None) == release(NEWEST_LINE)
    assert release("4.0").version == release("4.0.2").version == "4.0.2"
    assert {release(line).profile for line in ("3.9", "4.0")} == {"kafka-3.9", "kafka-4.0"}
    assert set(KAFKA_LINES) >= {"3.9", "4.0"}


def test_any_exact_release_of_a_profiled_line_runs_under_its_profile() -> None:
    exact = ("4.1.1", "4.3.0", "4.0.0", "3.9.0", "3.8.0", "3.7.1", "3.5.1", "3.3.1", "3.1.0", "2.8.1", "2.6.0")
    assert [(r.version, r.profile) for r in map(release, exact)] == [
        ("4.1.1", "kafka-4.1"), ("4.3.0", "kafka-4.2"), ("4.0.0", "kafka-4.0"), ("3.9.0", "kafka-3.9"),
        ("3.8.0", "kafka-3.8"), ("3.7.1", "kafka-3.6"), ("3.5.1", "kafka-3.5"), ("3.3.1", "kafka-3.2"),
        ("3.1.0", "kafka-3.0"), ("2.8.1", "kafka-2.8"), ("2.6.0", "kafka-2.8")]  # fmt: skip
    assert str(parse_target("kafka==4.1.1")) == "kafka:4.1.1"
    # 0.10.0 and 0.10.1 are not targets yet (kafka.py says why). A 0.x release has four numbers, a later one
    # three.
    span = re.escape(f"choose a line, kafka:{OLDEST} to kafka:{NEWEST_LINE} (each its last release), or")
    for older in ("0.10.1.1", "0.10.0.1", "0.9.0.1", "4.x", "2.8.2.1", "0.10"):
        with pytest.raises(TargetError, match=span):
            release(older)


def test_a_release_before_3_9_runs_in_zookeeper_mode_with_its_own_formats() -> None:
    old, new = release("2.8"), release("4.0")
    assert (old.zookeeper, old.artifact, old.protocol_version) == (True, "org.apache.kafka:kafka_2.13", "2.8")
    assert (new.zookeeper, new.artifact) == (False, "org.apache.kafka:kafka_2.13")
    # The 0.10 lines' releases, for the launcher (tests/test_kafka_target.py's e2e start of 0.10.0.1).
    zero_ten_two, zero_ten_zero = KafkaRelease("0.10.2", "0.10.2.2", ""), KafkaRelease("0.10.0", "0.10.0.1", "")
    assert [(r.zookeeper, r.artifact, r.protocol_version) for r in (zero_ten_two, zero_ten_zero)] == [
        (True, "org.apache.kafka:kafka_2.12", "0.10.2"), (True, "org.apache.kafka:kafka_2.11", "0.10.0")]  # fmt: skip
    assert list(KAFKA_LINES)[:5] == ["4.4", "4.3", "4.2", "4.1", "4.0"]
    assert list(KAFKA_LINES)[-4:] == ["1.1", "1.0", "0.11.0", "0.10.2"]
    # KRaft from 3.9, ZooKeeper mode before, and a line for every minor release between the oldest and the newest.
    numbers = [tuple(int(n) for n in line.split(".")) for line in KAFKA_LINES]
    assert all(release(line).zookeeper is (n < (3, 9)) for line, n in zip(KAFKA_LINES, numbers, strict=True))
    assert len(numbers) == len(set(numbers)) == 28


def test_a_zookeeper_mode_broker_is_configured_for_its_lines_formats(tmp_path: Path) -> None:
    from conformance.targets.brokers.kafka import KafkaNode, zookeeper_properties

    found = KafkaRelease("0.10.2", "0.10.2.2", "kafka-0.10")
    text = zookeeper_properties(9092, KafkaNode(1, 0, 9999), "127.0.0.1:2181", tmp_path, found)
    settings = dict(line.split("=", 1) for line in text.splitlines())
    assert {k: settings[k] for k in ("broker.id", "zookeeper.connect", "inter.broker.protocol.version",
                                     "log.message.format.version", "delete.topic.enable", "log.cleaner.enable")} == {
        "broker.id": "1", "zookeeper.connect": "127.0.0.1:2181", "inter.broker.protocol.version": "0.10.2",
        "log.message.format.version": "0.10.2", "delete.topic.enable": "true",
        "log.cleaner.enable": "false"}  # fmt: skip
    assert "process.roles" not in settings


def test_a_release_before_kraft_gets_log4j_2_and_jaxb_instead_of_its_own_logging() -> None:
    from conformance.targets.brokers.kafka import _pom

    old, new = _pom("0.10.2.2"), _pom("4.0.2")
    assert "<artifactId>kafka_2.12</artifactId><version>0.10.2.2</version><exclusions>" in old
    assert all(a in old for a in ("<artifactId>slf4j-log4j12</artifactId>", "log4j-1.2-api", "jaxb-api"))
    assert "<exclusions>" not in new and "jaxb-api" not in new


def _jar(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"PK")
    return path


def test_a_local_distribution_runs_its_libs_under_its_lines_profile(tmp_path: Path) -> None:
    dist = tmp_path / "kafka_2.13-4.1.0"
    for name in ("kafka_2.13-4.1.0.jar", "kafka-clients-4.1.0.jar", "zstd-jni-1.5.6-6.jar",
                 "kafka_2.13-4.1.0-test.jar"):  # fmt: skip
        _jar(dist / "libs" / name)
    version, jars = local_jars(str(dist))
    assert version == "4.1.0" and [j.name for j in jars] == [
        "kafka-clients-4.1.0.jar", "kafka_2.13-4.1.0.jar", "zstd-jni-1.5.6-6.jar"]  # fmt: skip
    found = local_build(str(dist))
    assert (found.line, found.version, found.profile, found.target) == ("4.1", "4.1.0", "kafka-4.1", f"kafka={dist}")
    target = parse_target(f"kafka={dist}")
    assert (target.path, default_profile(target)) == (str(dist), "kafka-4.1")


def test_a_built_checkout_runs_every_modules_jars_and_cores_dependencies(tmp_path: Path) -> None:
    # As bin/kafka-run-class.sh puts a checkout on the classpath after ./gradlew jar.
    for name in ("core/build/libs/kafka_2.13-4.2.0-SNAPSHOT.jar", "clients/build/libs/kafka-clients-4.2.0-SNAPSHOT.jar",
                 "clients/build/libs/kafka-clients-4.2.0-SNAPSHOT-test.jar",
                 "group-coordinator/group-coordinator-api/build/libs/kafka-group-coordinator-api-4.2.0-SNAPSHOT.jar",
                 "core/build/dependant-libs-2.13.16/scala-library-2.13.16.jar"):  # fmt: skip
        _jar(tmp_path / name)
    version, jars = local_jars(str(tmp_path))
    assert version == "4.2.0-SNAPSHOT" and len(jars) == 4
    assert local_build(str(tmp_path)).profile == "kafka-4.2"
    home = local_runtime(jars, cache=tmp_path / "cache")
    assert sorted(p.resolve() for p in (home / "lib").iterdir()) == sorted(j.resolve() for j in jars)
    assert local_runtime(jars, cache=tmp_path / "cache") == home  # kept while the jars are unchanged
    (tmp_path / "core/build/libs/kafka_2.13-4.2.0-SNAPSHOT.jar").write_bytes(b"PK rebuilt")
    assert local_runtime(jars, cache=tmp_path / "cache") != home  # a rebuild gets its own launcher


def test_a_path_that_is_no_kafka_build_or_too_old_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match=r"does not exist: give an unpacked Kafka distribution or a built checkout"):
        local_build(str(tmp_path / "missing"))
    (tmp_path / "a-file").write_text("")
    with pytest.raises(TargetError, match=r"is not a folder: give an unpacked Kafka distribution or a built checkout"):
        local_build(str(tmp_path / "a-file"))
    with pytest.raises(TargetError, match=r"has neither libs/kafka_2\.13-\*\.jar .* run `\./gradlew jar`"):
        check_target(f"kafka={tmp_path}", "kafka-4.2")
    _jar(tmp_path / "old" / "libs" / "kafka_2.13-3.8.1.jar")
    with pytest.raises(TargetError, match=r"is Apache Kafka 3\.8\.1: a local build must be 3\.9 or newer"):
        local_build(str(tmp_path / "old"))
    _jar(tmp_path / "two" / "libs" / "kafka_2.13-4.0.0.jar")
    _jar(tmp_path / "two" / "libs" / "kafka_2.13-4.1.0.jar")
    with pytest.raises(TargetError, match=r"jars of 4\.0\.0, 4\.1\.0 in one build: run `\./gradlew clean jar`"):
        local_build(str(tmp_path / "two"))


def test_an_unsupported_version_and_a_wrong_profile_are_one_line_naming_the_fix() -> None:
    unsupported = rf"Apache Kafka 0\.10\.1 is not a supported target: choose a line, kafka:{OLDEST}"
    with pytest.raises(TargetError, match=unsupported):
        check_target("kafka:0.10.1", "kafka-0.10")
    with pytest.raises(TargetError, match=r"behaves as profile kafka-4\.0, not kafka-4\.1: pass --profile kafka-4\.0"):
        check_target("kafka:4.0", "kafka-4.1")


def test_a_run_without_a_profile_takes_the_lines_own(pytester: pytest.Pytester) -> None:
    """`--profile` defaults to the target's own: a Kafka line's profile (every other target's is kafka-4.0)."""
    assert [default_profile(t) for t in ("kafka", "kafka:4.0", "kafka==3.9", "tansu")] == [
        release(None).profile, "kafka-4.0", "kafka-3.9", "kafka-4.0"
    ]
    pytester.makepyfile(test_profile="""
def test_profile(pytestconfig):
    assert pytestconfig.getoption("--profile") == "kafka-3.9"
""")
    result = pytester.runpytest_subprocess(
        "-p", "conformance.plugin", "-p", "no:cacheprovider", "-p", "no:schemathesis", "--target", "kafka:3.9", "-q",
    )
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("jars", "authorizer"),
    [
        ({"kafka-clients-2.4.1.jar": "org/apache/kafka/server/authorizer/Authorizer.class",
          "kafka_2.12-2.4.1.jar": "kafka/security/auth/Authorizer.class"}, "DatingAuthorizer"),
        ({"kafka-clients-2.3.1.jar": "org/apache/kafka/common/Configurable.class",
          "kafka_2.12-2.3.1.jar": "kafka/security/auth/Authorizer.class"}, "LegacyDatingAuthorizer"),
        ({"kafka-clients-0.9.0.1.jar": "org/apache/kafka/common/Configurable.class"}, None),
    ],
)  # fmt: skip
def test_the_launcher_dates_files_through_the_authorizer_interface_the_release_has(
    tmp_path: Path, jars: dict[str, str], authorizer: str | None
) -> None:
    """Kafka's Authorizer interface from 2.4 (KIP-504), the broker's Scala one before; a release with neither gets
    a launcher without the hook (its control plane then answers that it does not date files)."""
    for name, entry in jars.items():
        with zipfile.ZipFile(tmp_path / name, "w") as jar:
            jar.writestr(entry, b"")
    assert authorizer_for(tmp_path) == authorizer
    names = [p.stem for p in launcher_sources(True, authorizer=authorizer)]
    assert names == ["SuiteClock", "FileDates", "ClockControl", "ClockedZkKafka", *([authorizer] if authorizer else [])]


def test_a_missing_java_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    with pytest.raises(TargetError, match=r"java not found, and Apache Kafka targets need it: install a JDK 17"):
        check_target("kafka:4.0", "kafka-4.0")


def test_java_and_javac_come_from_one_jdk_java_home_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.targets.brokers import kafka

    jdk = tmp_path / "jdk"
    (jdk / "bin").mkdir(parents=True)
    for name in ("java", "javac"):
        (jdk / "bin" / name).write_text("#!/bin/sh\n")
        (jdk / "bin" / name).chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(jdk))
    # Where PATH has another JDK's javac, the launcher must not be compiled by it and run by JAVA_HOME's java.
    assert kafka._tool("javac", "a JDK") == str(jdk / "bin" / "javac")
    assert kafka._tool("java", "a JDK") == str(jdk / "bin" / "java")
    (jdk / "bin" / "javac").unlink()
    with pytest.raises(TargetError, match=r"JAVA_HOME=.* has no bin/javac: point JAVA_HOME at a JDK 17"):
        kafka._tool("javac", "a JDK")


def _config(port: int, node: KafkaNode, voters: str, log_dir: Path, brokers: int) -> dict[str, str]:
    text = server_properties(port, node, voters, log_dir, brokers=brokers)
    return dict(line.split("=", 1) for line in text.splitlines())


def test_the_broker_is_one_combined_node_on_loopback(tmp_path: Path) -> None:
    node = KafkaNode(1, 9093, 9094)
    config = _config(9092, node, quorum_voters([node]), tmp_path, 1)
    assert config["process.roles"] == "broker,controller"
    assert config["controller.quorum.voters"] == "1@127.0.0.1:9093"
    assert config["listeners"] == "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
    assert config["advertised.listeners"] == "PLAINTEXT://127.0.0.1:9092"
    assert config["auto.create.topics.enable"] == "false"  # the suites create their topics
    # A metadata change is committed at once, not after Kafka's 25 ms of batching (bench_kafka_suite: topic creation).
    assert config["controller.quorum.append.linger.ms"] == "0"


def test_three_nodes_form_one_static_quorum_and_move_leaders_only_when_told(tmp_path: Path) -> None:
    nodes = [KafkaNode(1, 9101, 9201), KafkaNode(2, 9102, 9202), KafkaNode(3, 9103, 9203)]
    voters = quorum_voters(nodes)
    assert voters == "1@127.0.0.1:9101,2@127.0.0.1:9102,3@127.0.0.1:9103"
    config = _config(9002, nodes[1], voters, tmp_path, 3)
    assert (config["node.id"], config["controller.quorum.voters"]) == ("2", voters)
    assert config["listeners"] == "PLAINTEXT://127.0.0.1:9002,CONTROLLER://127.0.0.1:9102"
    assert config["default.replication.factor"] == "3"
    assert config["auto.leader.rebalance.enable"] == "false"  # only the control plane moves leaders


@pytest.mark.parametrize("brokers", [2, 4, 0])
def test_kafka_runs_one_or_three_brokers(brokers: int) -> None:
    with pytest.raises(TargetError, match=rf"^--brokers {brokers}: target 'kafka:4.0' runs 1 or 3 brokers$"):
        check_target("kafka:4.0", "kafka-4.0", brokers=brokers)
    assert str(check_target("kafka:4.0", "kafka-4.0", brokers=3)) == "kafka:4.0"


@pytest.mark.parametrize("command", ["run", "up"])
def test_brokers_2_is_one_usage_line_of_run_and_up(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    target = ["--target", "kafka:4.0"] if command == "run" else ["kafka:4.0"]
    assert main([command, *target, "--brokers", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["kafka-conformance: error: --brokers 2: target 'kafka:4.0' runs 1 or 3 brokers"], err


# What Maven 3.8 prints (with -q -B, on stdout) when Central lacks the release, with the colour codes it puts around
# its messages even in batch mode; and when it cannot reach Central at all.
_NOT_ON_CENTRAL = (
    "\x1b[1;31m[ERROR]\x1b[m \x1b[0mFailed to execute goal on project kafka-runtime: Could not resolve dependencies "
    "for project kafka-conformance:kafka-runtime:jar:{v}: Could not find artifact org.apache.kafka:kafka_2.13:jar:{v} "
    "in central (https://repo.maven.apache.org/maven2) -> [Help 1]\n[ERROR] \n[ERROR] To see the full stack trace...\n"
)
_UNREACHABLE = (
    "[ERROR] Failed to execute goal on project kafka-runtime: Could not resolve dependencies for project "
    "kafka-conformance:kafka-runtime:jar:{v}: Failed to collect dependencies at org.apache.kafka:kafka_2.13:jar:{v}: "
    "Could not transfer artifact org.apache.kafka:kafka_2.13:pom:{v} from/to central "
    "(https://repo.maven.apache.org/maven2): Unknown host repo.maven.apache.org -> [Help 1]\n"
)


@pytest.mark.parametrize(
    ("output", "says"),
    [
        (_NOT_ON_CENTRAL, r"^Apache Kafka 4\.1\.99 is not on Maven Central \(org\.apache\.kafka:kafka_2\.13:4\.1\.99\)"
         r": choose a released version, e\.g\. kafka==4\.4\.0, or a line from kafka:" + re.escape(OLDEST)
         + r" to kafka:4\.4$"),
        (_UNREACHABLE, r"^Maven could not reach Maven Central to fetch org\.apache\.kafka:kafka_2\.13:4\.1\.99 "
         r"\(Could not transfer artifact .*: Unknown host repo\.maven\.apache\.org\): check the network, or a "
         r"proxy or mirror in ~/\.m2/settings\.xml$"),
        ("[ERROR] The goal you specified requires a project to execute\n", r"^Maven could not fetch "
         r"org\.apache\.kafka:kafka_2\.13:4\.1\.99 \(The goal you specified .*\): check the version"),
    ],
)  # fmt: skip
def test_a_failed_fetch_is_one_line_naming_the_fix(output: str, says: str) -> None:
    from conformance.targets.brokers.kafka import maven_failure

    line = maven_failure(output.format(v="4.1.99"), "4.1.99")
    assert re.search(says, line), line
    assert "\x1b" not in line and "\n" not in line


def test_a_release_central_lacks_stops_run_before_pytest_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run --target kafka==V` for a V Maven Central does not have (a stand-in mvn answers as Maven does): exit 2 and
    the one line, before pytest starts (no test, no verdicts.json), and no folder of V left in the cache."""
    from conformance.targets.brokers import kafka

    if shutil.which("java") is None:
        pytest.skip("needs java on PATH (Apache Kafka targets check for it first)")
    version = "4.1.97"
    mvn = tmp_path / "bin" / "mvn"
    mvn.parent.mkdir()
    mvn.write_text(f"#!/bin/sh\nprintf '%s' '{_NOT_ON_CENTRAL.format(v=version)}'\nexit 1\n")
    mvn.chmod(0o755)
    monkeypatch.setenv("PATH", f"{mvn.parent}{os.pathsep}{os.environ['PATH']}")
    assert main(["run", "--target", f"kafka=={version}", "--no-html", "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "", captured.out  # no "$ pytest ...": pytest never started
    # The fetch's progress line (conformance/progress.py), then the one error line.
    assert captured.err.splitlines() == [
        f"fetching Apache Kafka {version} from Maven Central...",
        f"kafka-conformance: error: Apache Kafka {version} is not on Maven Central (org.apache.kafka:kafka_2.13:"
        f"{version}): choose a released version, e.g. kafka==4.4.0, or a line from kafka:{OLDEST} to kafka:4.4",
    ]
    assert not (tmp_path / "out" / "verdicts.json").exists()
    assert not kafka.runtime_dir(version).exists()


def _need_kafka() -> None:
    if shutil.which("java") is None or shutil.which("javac") is None or shutil.which("mvn") is None:
        pytest.skip("needs java, javac and mvn on PATH")


@pytest.mark.e2e
def test_apache_kafka_starts_on_the_suites_clock_and_is_gone_after_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The newest line from Maven Central (fetched once into the cache), formatted and started on loopback through
    our launcher: it answers the Kafka protocol; its control plane sets, advances and reads the broker's clock, which
    LogAppendTime then reads exactly; retention runs when asked; check-control passes against it; and the broker is
    gone after stop."""
    _need_kafka()
    found = release(None)
    with open_target("kafka", found.profile, log_dir=tmp_path / "logs") as (factory, logs):
        assert isinstance(factory, WireFactory) and factory.control_url is not None
        host, port = factory.bootstrap.split(":")
        versions = probe_api_versions(host, int(port))
        assert versions[PRODUCE][1] >= 9 and versions[LIST_OFFSETS][1] >= 8, versions
        log = logs[0].read_text()
        assert f"# kafka-conformance: Apache Kafka {found.version} answered ApiVersions" in log, log[-2000:]
        control = ControlClient(factory.control_url, timeout=10)
        capabilities, brokers = control.capabilities()
        assert {c.value for c in capabilities} == {"clock-control", "retention", "idempotence", "file-times"}
        assert brokers == (1,)
        t0 = 1_700_000_000_000
        assert control.set_clock(1, t0) == t0 and control.clock(1) == t0  # frozen until told
        client = WireClient(factory.bootstrap, timeout=10)
        try:
            client.create_topic("lat", replication_factor=1, configs={
                "message.timestamp.type": "LogAppendTime", "retention.ms": "60000"})  # fmt: skip
            stamped = client.produce("lat", 0, encode_batches([build_v2([RecordSpec(5)])]), version=9)
            assert (stamped.error_code, stamped.log_append_time) == (0, t0)
            assert control.advance_clock(1, 61_000) == t0 + 61_000
            again = client.produce("lat", 0, encode_batches([build_v2([RecordSpec(5)])]), version=9)
            assert (again.error_code, again.log_append_time) == (0, t0 + 61_000)
            assert control.advance_clock(1, 60_001) == t0 + 121_001
            # Both records are older than retention.ms now, in one (active) segment: deleted, as Kafka deletes
            # an expired active segment (a new empty one is rolled).
            assert control.run_retention() >= 1
            assert client.list_offsets("lat", 0, -2, version=9).offset == 2
            _assert_untimed_segments_dated_by_the_suites_clock(client, control, t0, produce=9, lookup=9)
        finally:
            client.close()
        code = main(["check-control", factory.control_url, "--max-examples", "10", "--seed", "7", "--topic", "lat"])
        lines = capsys.readouterr().out.splitlines()
        assert code == 0 and lines[-1].startswith("check-control: PASS"), lines
        launchers = _launcher_pids()
        assert len(launchers) == 1, launchers
    assert_gone(launchers[0])


def _assert_untimed_segments_dated_by_the_suites_clock(
    client: WireClient, control: ControlClient, t0: int, *, produce: int, lookup: int
) -> None:
    """file-times: a segment without timestamps is dated by its file (IDX-6), and the launcher dates the file by
    the suite's clock. The untimed segment written at t0 is rolled two hours later (segment.ms counts from its
    creation); a lookup of t0 + 1 h passes it (dated t0) and finds the next segment's record. Dated by the
    machine's clock (years after t0), the untimed segment would be searched, and the answer would be -1."""
    assert control.set_clock(1, t0) == t0
    client.create_topic("untimed", replication_factor=1, configs={"segment.ms": "3600000"})
    untimed = client.produce("untimed", 0, encode_batches([build_v2([RecordSpec(-1)])]), version=produce)
    assert untimed.error_code == 0, untimed
    assert control.advance_clock(1, 7_200_000) == t0 + 7_200_000
    timed = client.produce("untimed", 0, encode_batches([build_v2([RecordSpec(t0 + 7_200_000)])]), version=produce)
    assert (timed.error_code, timed.base_offset) == (0, 1), timed
    found = client.list_offsets("untimed", 0, t0 + 3_600_000, version=lookup)
    assert (found.error_code, found.offset, found.timestamp) == (0, 1, t0 + 7_200_000), found


@pytest.mark.e2e
def test_kafka_2_8_runs_in_zookeeper_mode_on_the_suites_clock_and_is_gone_after_stop(tmp_path: Path) -> None:
    """kafka:2.8: a ZooKeeper of its own and the broker through the ZooKeeper-mode launcher; LogAppendTime reads the
    suite's clock, a v0 topic stores v0 and answers EARLIEST with epoch -1 (no leader-epoch cache, LO-5) and LATEST
    with the partition's epoch, retention runs when asked; the broker and ZooKeeper are gone after stop."""
    _need_kafka()
    found = release("2.8")
    with open_target("kafka:2.8", found.profile, log_dir=tmp_path / "logs") as (factory, _logs):
        assert isinstance(factory, WireFactory) and factory.control_url is not None and factory.marks_by_produce
        names = sorted(p.name.rsplit("-", 1)[0] for p in (tmp_path / "logs").iterdir())
        assert names == ["kafka", "kafka-control", "zookeeper"]  # the broker's, its control plane's, ZooKeeper's
        control = ControlClient(factory.control_url, timeout=10)
        t0 = 1_700_000_000_000
        assert control.set_clock(1, t0) == t0 and control.clock(1) == t0
        client = WireClient(factory.bootstrap, timeout=10)
        try:
            client.create_topic("lat", configs={"message.timestamp.type": "LogAppendTime", "retention.ms": "60000"})
            stamped = client.produce("lat", 0, encode_batches([build_v2([RecordSpec(5)])]), version=8)
            assert (stamped.error_code, stamped.log_append_time) == (0, t0)
            client.create_topic("v0", configs={"message.format.version": "0.9.0"})
            assert client.produce("v0", 0, encode_batches([build_v2([RecordSpec(5)])]), version=8).error_code == 0
            earliest = client.list_offsets("v0", 0, -2, version=4)
            latest = client.list_offsets("v0", 0, -1, version=4)
            assert (earliest.offset, earliest.leader_epoch, latest.offset, latest.leader_epoch) == (0, -1, 1, 0)
            assert control.advance_clock(1, 61_000) == t0 + 61_000
            assert control.run_retention() >= 1
            assert client.list_offsets("lat", 0, -2, version=4).offset == 1
            assert "file-times" in {c.value for c in control.capabilities()[0]}
            _assert_untimed_segments_dated_by_the_suites_clock(client, control, t0, produce=8, lookup=4)
        finally:
            client.close()
        launchers, keepers = _launcher_pids(ZK_LAUNCHER_CLASS), _launcher_pids(ZOOKEEPER_MAIN)
        assert len(launchers) == 1 and len(keepers) == 1, (launchers, keepers)
    assert_gone(launchers[0])
    assert_gone(keepers[0])


@pytest.mark.e2e
def test_the_zookeeper_mode_launcher_runs_kafka_0_10_0(tmp_path: Path) -> None:
    """The oldest release's constructor (KafkaServer(KafkaConfig, kafka.utils.Time, Option)) and its retention
    (LogManager.cleanupLogs) through the same launcher: 0.10.0.1 starts on Java 17, its clock is the suite's, and
    it stops with its ZooKeeper."""
    _need_kafka()
    found = KafkaRelease("0.10.0", "0.10.0.1", "kafka-0.10.0")
    nodes = cluster_nodes(1)
    with kafka_cluster(found, tmp_path / "logs", tmp_path / "work", nodes) as (broker,):
        assert broker.api_versions[PRODUCE] == (0, 2)
        clock = LauncherClock(nodes[0].clock_port)
        try:
            assert clock.set(1_000) == 1_000 and clock.now() == 1_000 and clock.retention() == 0
        finally:
            clock.close_connection()
        launchers = _launcher_pids(ZK_LAUNCHER_CLASS)
        assert len(launchers) == 1, launchers
    assert_gone(launchers[0])


def _launcher_pids(main_class: str = LAUNCHER_CLASS) -> list[int]:
    """The JVMs of `main_class` below this process (the broker started through sh and setpriv)."""
    found = []
    for pid in _descendants(os.getpid()):
        try:
            if main_class.encode() in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                found.append(pid)
        except OSError:
            continue
    return found


@pytest.mark.e2e
def test_three_kafka_nodes_each_on_its_own_clock_move_leaders_and_are_gone_after_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--brokers 3`: three combined nodes in one static quorum, each through our launcher with its own clock. Metadata
    names the three; each clock is set apart from the others; a leader moved through the control plane is the one
    Metadata names, at the next leader epoch, and LogAppendTime then reads the new leader's clock; check-control
    passes (leader moves included); and every launcher JVM is gone after stop."""
    _need_kafka()
    with open_target("kafka:4.0", "kafka-4.0", log_dir=tmp_path / "logs", brokers=3) as (factory, logs):
        # Each node's log and the control plane's.
        assert isinstance(factory, WireFactory) and factory.control_url is not None and len(logs) == 4
        control = ControlClient(factory.control_url, timeout=10)
        capabilities, brokers = control.capabilities()
        assert "leader-failover" in {c.value for c in capabilities} and brokers == (1, 2, 3)
        clocks = {1: 1_700_000_000_000, 2: 1_600_000_000_000, 3: 1_500_000_000_000}
        for node, now in clocks.items():
            assert control.set_clock(node, now) == now
        assert {node: control.clock(node) for node in clocks} == clocks  # each its own
        client = WireClient(factory.bootstrap, timeout=10)
        try:
            assert sorted(b.node_id for b in client.metadata().brokers) == [1, 2, 3]
            assert client.create_topic("lat", configs={"message.timestamp.type": "LogAppendTime"},
                                       assignments={0: (1, 2, 3)}).error_code == 0  # fmt: skip
            first = client.produce("lat", 0, encode_batches([build_v2([RecordSpec(5)])]), version=9)
            assert (first.error_code, first.log_append_time) == (0, clocks[1])
            assert control.leader("lat", 0) == (1, 0)
            assert control.move_leader("lat", 0, 3) == (3, 1)
            shown = client.metadata(["lat"]).topics["lat"].partitions[0]
            assert (shown.leader, shown.leader_epoch, shown.replicas[0]) == (3, 1, 3)
            moved = client.produce("lat", 0, encode_batches([build_v2([RecordSpec(5)])]), version=9)
            assert (moved.error_code, moved.log_append_time) == (0, clocks[3])  # the new leader's clock
        finally:
            client.close()
        code = main(["check-control", factory.control_url, "--max-examples", "10", "--seed", "7", "--topic", "lat"])
        lines = capsys.readouterr().out.splitlines()
        assert code == 0 and lines[-1].startswith("check-control: PASS"), lines
        launchers = _launcher_pids()
        assert len(launchers) == 3, launchers
    for pid in launchers:
        assert_gone(pid)
