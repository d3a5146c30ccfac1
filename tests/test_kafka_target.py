"""The `kafka` managed targets (conformance.targets.managed.kafka): names and versions, the usage checks, and (e2e)
a real Apache Kafka from Maven Central started, answering the Kafka protocol, and gone after stop."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.errors import TargetError
from conformance.targets.managed.kafka import KAFKA_LINES, NEWEST_LINE, release, server_properties
from conformance.targets.managed.process import ManagedProcessError, probe_api_versions
from conformance.targets.registry import check_target, default_profile, parse_target
from tests.test_managed_processes import assert_gone

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


def test_an_unsupported_version_and_a_wrong_profile_are_one_line_naming_the_fix() -> None:
    with pytest.raises(TargetError, match=r"Apache Kafka 2\.8 is not a supported target: choose one of kafka:"):
        check_target("kafka:2.8", "kafka-2.8")
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


def test_a_missing_java_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    with pytest.raises(TargetError, match=r"java not found, and Apache Kafka targets need it: install a JDK 17"):
        check_target("kafka:4.0", "kafka-4.0")


def test_the_broker_is_one_combined_node_on_loopback(tmp_path: Path) -> None:
    config = dict(line.split("=", 1) for line in server_properties(9092, 9093, tmp_path).splitlines())
    assert config["process.roles"] == "broker,controller"
    assert config["controller.quorum.voters"] == "1@127.0.0.1:9093"
    assert config["listeners"] == "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
    assert config["advertised.listeners"] == "PLAINTEXT://127.0.0.1:9092"
    assert config["auto.create.topics.enable"] == "false"  # the suites create their topics


@pytest.mark.e2e
def test_apache_kafka_starts_answers_kafka_and_is_gone_after_stop(tmp_path: Path) -> None:
    """The newest line from Maven Central (fetched once into the cache), formatted and started on loopback."""
    from conformance.targets.managed.kafka import start_kafka

    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip("needs java and mvn on PATH")
    found = release(None)
    try:
        broker = start_kafka(found, tmp_path / "logs", tmp_path / "work")
    except ManagedProcessError as exc:
        if "could not fetch" in str(exc) or "did not fetch" in str(exc):
            pytest.skip(f"Maven Central not reachable: {exc}")
        raise
    pid = broker.pid
    try:
        versions = probe_api_versions("127.0.0.1", broker.port)
        assert versions[PRODUCE][1] >= 9 and versions[LIST_OFFSETS][1] >= 8, versions
        assert broker.startup_seconds is not None
        log = broker.log_path.read_text()
        assert f"# kafka-conformance: Apache Kafka {found.version} answered ApiVersions" in log, log[-2000:]
    finally:
        broker.stop()
    assert_gone(pid)
