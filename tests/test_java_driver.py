"""The Java driver (conformance/targets/routes/driver/java/kafkaclients/) and its build (java_build.py).

Fast: how `client:java` and `codec:java` are routed (in process without a version, the driver with one or with a
path), the build's refusals that need no Maven run (no JDK, no Maven, a path that is neither a kafka-clients jar nor
a Kafka checkout with one built), how Maven's failures read, and the cache keys. The e2e tests build the driver
(a JDK and Maven, with Maven Central or a warm ~/.m2) and run it through the protocol: the codec role needs no
broker, the client role runs against the reference broker.
"""

from __future__ import annotations

import base64
import os
import shutil
import time
import zipfile
from pathlib import Path

import pytest

from conformance.targets.brokers.reference_broker import ReferenceBroker
from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE
from conformance.targets.libraries import LIBRARIES
from conformance.targets.libraries.java import java_build
from conformance.targets.libraries.java.java_build import build_java_driver
from conformance.targets.registry import parse_target, spec_of
from conformance.targets.routes.driver import SOURCES, DriverUnavailable
from conformance.targets.routes.driver.driver_process import DriverAnswered, DriverProcess
from models.codec import decode_batches
from tests.conftest import three_records_topic

JAVA = LIBRARIES["java"]
JAVAC = shutil.which("javac")
needs_jdk = pytest.mark.skipif(JAVAC is None, reason="no JDK (javac) on PATH")
needs_maven = pytest.mark.skipif(JAVAC is None or shutil.which("mvn") is None, reason="no JDK or no Maven on PATH")


def test_the_java_row_pins_the_version_that_runs_in_process() -> None:
    from conformance.jvm.locate import KAFKA_CLIENTS_VERSION

    assert (JAVA.language, JAVA.package, JAVA.pinned) == (
        "java",
        "org.apache.kafka:kafka-clients",
        KAFKA_CLIENTS_VERSION,
    )
    assert JAVA.roles == {CLIENT_ROLE, CODEC_ROLE}
    assert sorted(p.name for p in (SOURCES / JAVA.source).glob("*.java"))


@pytest.mark.parametrize("kind", ["client", "codec"])
def test_java_without_a_version_stays_in_process_and_with_one_goes_through_the_driver(kind: str) -> None:
    assert not JAVA.uses_driver(kind, None, None)
    assert JAVA.uses_driver(kind, "3.7.2", None)
    assert JAVA.uses_driver(kind, None, "/some/kafka")
    row = spec_of(parse_target(f"{kind}:java"))
    assert row.versions and row.paths and row.expectations == f"{kind}-java.toml"
    versioned = parse_target(f"{kind}:java==4.1.1")
    assert (versioned.library, versioned.version, versioned.path) == ("java", "4.1.1", None)
    assert parse_target(f"{kind}:java=/some/kafka").path == "/some/kafka"


def test_no_jdk_names_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(DriverUnavailable, match=r"`java` is not on PATH: install a JDK 17 or newer"):
        build_java_driver(JAVA, version="3.9.1", path=None, timeout=10)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(DriverUnavailable, match=r"JAVA_HOME=.* has no bin/java: .*point JAVA_HOME at a JDK"):
        build_java_driver(JAVA, version="3.9.1", path=None, timeout=10)


@needs_jdk
def test_no_maven_names_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert JAVAC is not None
    monkeypatch.setenv("JAVA_HOME", str(Path(os.path.realpath(JAVAC)).parent.parent))
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without mvn
    monkeypatch.setattr(java_build, "CACHE", tmp_path / "cache")  # nothing fetched yet
    with pytest.raises(DriverUnavailable, match=r"`mvn` is not on PATH: install Maven 3\.8 or newer"):
        build_java_driver(JAVA, version="3.9.1", path=None, timeout=10)


def _jar(path: Path, *names: str) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, b"")
    return path


def test_a_path_is_a_kafka_clients_jar_or_a_checkout_with_one_built(tmp_path: Path) -> None:
    with pytest.raises(DriverUnavailable, match=r"does not exist: =PATH is a kafka-clients-\*\.jar or an Apache Kafka"):
        java_build.user_jar(str(tmp_path / "missing"))
    with pytest.raises(DriverUnavailable, match=r"neither a kafka-clients jar nor an Apache Kafka checkout"):
        java_build.user_jar(str(tmp_path))
    (tmp_path / "clients").mkdir()
    with pytest.raises(DriverUnavailable, match=r"checkout with no clients/build/libs/kafka-clients-\*\.jar: run "
                                                r"`\./gradlew :clients:jar` there first"):  # fmt: skip
        java_build.user_jar(str(tmp_path))
    not_a_jar = tmp_path / "notes.txt"
    not_a_jar.write_text("hello")
    other = _jar(tmp_path / "other.jar", "com/example/Thing.class")
    for wrong in (not_a_jar, other):
        with pytest.raises(DriverUnavailable, match=r"is not a kafka-clients jar \(it has no .*KafkaProducer\.class\)"):
            java_build.user_jar(str(wrong))
    libs = tmp_path / "clients" / "build" / "libs"
    libs.mkdir(parents=True)
    _jar(libs / "kafka-clients-4.2.0-SNAPSHOT-test.jar", java_build.PRODUCER_CLASS)
    built = _jar(libs / "kafka-clients-4.2.0-SNAPSHOT.jar", java_build.PRODUCER_CLASS)
    assert java_build.user_jar(str(tmp_path)) == built.resolve()
    assert java_build.user_jar(str(built)) == built.resolve()


@pytest.mark.parametrize(
    ("output", "says"),
    [
        ("[ERROR] Failed to execute goal on project kts-java-driver: Could not resolve dependencies for project "
         "kafka-conformance:kts-java-driver:jar:1: Could not find artifact org.apache.kafka:kafka-clients:jar:3.99.0 "
         "in central", "org.apache.kafka:kafka-clients:3.99.0 is not served by Maven Central: give a released version"),
        ("[ERROR] Failed to execute goal: Could not transfer artifact org.apache.kafka:kafka-clients:pom:3.99.0 "
         "from/to central: Connection refused",
         "Maven could not reach Maven Central for org.apache.kafka:kafka-clients:3.99.0"),
        ("[ERROR] something else broke\n[ERROR] more", "Maven could not fetch org.apache.kafka:kafka-clients:3.99.0 "
         "(something else broke)"),
    ],
)  # fmt: skip
def test_maven_s_failures_read_as_one_line(output: str, says: str) -> None:
    explained = java_build.explain_maven(output, "3.99.0", Path("/cache/mvn.log"))
    assert explained.startswith(says) and "\n" not in explained
    # The log is named where it stays: a version Maven Central does not serve leaves nothing in the cache.
    assert ("/cache/mvn.log" in explained) is not java_build.not_served(output, "3.99.0")


def test_the_pom_names_the_version_and_the_driver_s_libraries(tmp_path: Path) -> None:
    pom = java_build.pom("3.7.2")
    assert "<artifactId>kafka-clients</artifactId><version>3.7.2</version>" in pom
    assert all(f"<artifactId>{a}</artifactId><version>{v}</version>" in pom for _, a, v in java_build.EXTRAS)
    own = java_build.maven_command("mvn", tmp_path / "pom.xml", tmp_path / "lib", own_jar=True)
    assert "-DexcludeArtifactIds=kafka-clients" in own  # the user's jar stands in for the release's
    assert "-DexcludeArtifactIds=kafka-clients" not in java_build.maven_command(
        "mvn", tmp_path / "pom.xml", tmp_path / "lib", own_jar=False
    )


def test_the_cache_key_follows_the_sources_the_libraries_the_jar_and_the_jdk(tmp_path: Path) -> None:
    source = tmp_path / "kafkaclients"
    shutil.copytree(SOURCES / JAVA.source, source)
    key = java_build.build_key(source, "deps-1", "", "/usr/lib/jvm/17/bin/javac")
    assert key == java_build.build_key(source, "deps-1", "", "/usr/lib/jvm/17/bin/javac")
    assert key != java_build.build_key(source, "deps-2", "", "/usr/lib/jvm/17/bin/javac")
    assert key != java_build.build_key(source, "deps-1", "/k.jar:10:1", "/usr/lib/jvm/17/bin/javac")
    assert key != java_build.build_key(source, "deps-1", "", "/usr/lib/jvm/21/bin/javac")
    with (source / "ClientRole.java").open("a") as driver:
        driver.write("\n// a change to the driver's sources builds it afresh\n")
    assert key != java_build.build_key(source, "deps-1", "", "/usr/lib/jvm/17/bin/javac")


# -- e2e: the driver built and run through the protocol


@pytest.fixture(scope="module")
def built() -> list[str]:
    """The Java driver at the pinned kafka-clients (built into the user's cache, as a run builds it)."""
    if JAVAC is None or shutil.which("mvn") is None:
        pytest.skip("no JDK or no Maven on PATH")
    return build_java_driver(JAVA, version=None, path=None, timeout=900)


def _driver(argv: list[str], tmp_path: Path, timeout: float = 10.0) -> DriverProcess:
    return DriverProcess("the java driver", argv, target="client:java==3.9.1", log_path=tmp_path / "java.log",
                         timeout=timeout)  # fmt: skip


@pytest.mark.e2e
def test_a_built_driver_is_cached_and_says_its_version(built: list[str], tmp_path: Path) -> None:
    started = time.monotonic()
    assert build_java_driver(JAVA, version=None, path=None, timeout=60) == built
    assert time.monotonic() - started < 2.0  # a hash of the sources and two stats
    with _driver(built, tmp_path) as driver:
        hello = driver.start(CLIENT_ROLE, bootstrap="127.0.0.1:1")  # no library call connects before an operation
    assert (hello["library"], hello["version"], hello["language"]) == ("java", "3.9.1", "java")
    assert set(hello["capabilities"]) == {"send", "record-errors", "consume", "offsets-for-times", "earliest", "latest",
                                          "max-timestamp", "seek-by-time", "timestamp-type"}  # fmt: skip


@pytest.mark.e2e
def test_a_jar_path_runs_that_jar_and_says_its_path(built: list[str], tmp_path: Path) -> None:
    """`=PATH` with the pinned release's own jar (from the cache's libraries): the driver runs it and reports the
    path as its version."""
    jar = next(Path(built[built.index("-cp") + 1].split(os.pathsep)[-1]).parent.glob("kafka-clients-*.jar"))
    argv = build_java_driver(JAVA, version=None, path=str(jar), timeout=900)
    with _driver(argv, tmp_path) as driver:
        hello = driver.start(CODEC_ROLE)
    assert hello["version"] == str(jar)


@pytest.mark.e2e
def test_the_codec_role_builds_reads_converts_and_refuses(built: list[str], tmp_path: Path) -> None:
    records = [{"timestamp": 1_764_000_000_000 + d, "key": "aw==", "value": base64.b64encode(b"v" * 200).decode(),
                "headers": []} for d in (0, -5, 9)]  # fmt: skip
    with _driver(built, tmp_path) as driver:
        hello = driver.start(CODEC_ROLE)
        assert hello["build_magics"] == hello["read_magics"] == [0, 1, 2]
        assert "down-convert" in hello["capabilities"]  # MemoryRecords.downConvert: kafka-clients before 4.0
        for magic, codec in [(0, "gzip"), (1, "snappy"), (2, "zstd"), (2, "none")]:
            data = driver.request("build", magic=magic, codec=codec, timestamp_type="CreateTime", log_append_time=None,
                                  base_offset=0, records=records)["data"]  # fmt: skip
            assert [(b.magic, b.codec.name.lower()) for b in decode_batches(base64.b64decode(data))] == [(magic, codec)]
            read = driver.request("read", data=data)["batches"]
            want = [(i, -1 if magic == 0 else r["timestamp"]) for i, r in enumerate(records)]
            assert [(r["offset"], r["timestamp"]) for b in read for r in b["records"]] == want
        v2 = driver.request("build", magic=2, codec="none", timestamp_type="CreateTime", log_append_time=None,
                            base_offset=0, records=records)["data"]  # fmt: skip
        v1 = driver.request("convert", data=v2, to_magic=1, first_offset=0)["data"]
        # uncompressed: one legacy entry per record
        assert [b.magic for b in decode_batches(base64.b64decode(v1))] == [1, 1, 1]
        with pytest.raises(DriverAnswered, match="IllegalArgumentException"):  # a timestamp below -1 (FMT-4)
            driver.request("build", magic=2, codec="none", timestamp_type="CreateTime", log_append_time=None,
                           base_offset=0, records=[{**records[0], "timestamp": -5}])  # fmt: skip


@pytest.mark.e2e
def test_the_client_role_sends_consumes_and_looks_up(
    built: list[str], reference_at_now: ReferenceBroker, tmp_path: Path
) -> None:
    topic, now, sent = three_records_topic(reference_at_now.bootstrap, "java")
    with _driver(built, tmp_path) as driver:
        driver.start(CLIENT_ROLE, bootstrap=reference_at_now.bootstrap)
        outcomes = driver.request("send", topic=topic, partition=0, codec="gzip", records=sent)["outcomes"]
        assert [o["offset"] for o in outcomes] == [0, 1, 2]
        records = driver.request("consume", topic=topic, partition=0, offset=0, until=3)["records"]
        assert [(r["offset"], r["key"], r["value"]) for r in records] == [(i, s["key"], s["value"])
                                                                          for i, s in enumerate(sent)]  # fmt: skip
        assert driver.request("offsets_for_times", topic=topic, partition=0, target=now - 1000)["answer"] == {
            "offset": 0, "timestamp": now - 1000}  # fmt: skip
        assert driver.request("list_offsets", topic=topic, partition=0, spec="latest")["offset"] == 3
        with pytest.raises(DriverAnswered, match="refused IllegalArgumentException"):  # LO-9: before any request
            driver.request("offsets_for_times", topic=topic, partition=0, target=-5)
