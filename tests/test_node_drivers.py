"""The Node drivers (conformance/targets/routes/driver/node_build.py, node/kafkajs/driver.js): what the install refuses
and why, in one line naming the fix (fast: no npm involved), and, end to end, the KafkaJS driver installed from npm
and spoken to in JSON lines against the reference broker (a malformed line and an unknown op included)."""

from __future__ import annotations

import base64
import contextlib
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.reference.kafka_server import KafkaServer
from conformance.reference.served import ServedCluster
from conformance.targets.libraries import LIBRARIES
from conformance.targets.libraries.model.model_broker import ModelFactory
from conformance.targets.routes.driver import PROTOCOL_VERSION, DriverUnavailable, node_build
from conformance.targets.routes.driver.node_build import install_node_driver
from models.config import TopicConfig
from models.constants import TimestampType

KAFKAJS = LIBRARIES["kafkajs"]
INSTALL_TIMEOUT = 300.0


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setattr(node_build, "CACHE", folder)
    return folder


def _tools(folder: Path, **scripts: str) -> str:
    """A PATH of one folder holding a shell script for each named tool (their output, or a real tool's path)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in scripts.items():
        tool = folder / name
        tool.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        tool.chmod(0o755)
    return str(folder)


# ------------------------------------------------------------------------------------ refusals, without npm


def test_no_node_on_path_names_the_fix(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", _tools(tmp_path / "bin"))
    with pytest.raises(DriverUnavailable, match=r"node is not on PATH: .*Node\.js 14 or later with npm"):
        install_node_driver(KAFKAJS, version=None, path=None, timeout=INSTALL_TIMEOUT)
    assert not cache.exists()


def test_no_npm_on_path_names_the_fix(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", _tools(tmp_path / "bin", node="echo v20.1.0"))
    with pytest.raises(DriverUnavailable, match=r"npm is not on PATH"):
        install_node_driver(KAFKAJS, version=None, path=None, timeout=INSTALL_TIMEOUT)


def test_an_old_node_is_refused(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", _tools(tmp_path / "bin", node="echo v12.22.0", npm="exit 1"))
    with pytest.raises(DriverUnavailable, match=r"Node\.js v12\.22\.0: the Node drivers need 14 or later"):
        install_node_driver(KAFKAJS, version=None, path=None, timeout=INSTALL_TIMEOUT)


@pytest.mark.parametrize("manifest", [None, '{"name": "not-kafkajs"}', "not json"], ids=["none", "other", "broken"])
def test_a_path_that_is_not_a_kafkajs_checkout_is_refused(cache: Path, tmp_path: Path, manifest: str | None) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    if manifest is not None:
        (checkout / "package.json").write_text(manifest, encoding="utf-8")
    with pytest.raises(DriverUnavailable, match=r"is not a checkout of kafkajs: its package.json does not name it"):
        install_node_driver(KAFKAJS, version=None, path=str(checkout), timeout=INSTALL_TIMEOUT)
    assert not cache.exists()


def test_a_failed_install_names_npms_first_error_and_its_log(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    npm = "echo 'npm error code ECONNREFUSED'; echo 'npm error request to https://registry.example failed'; exit 1"
    monkeypatch.setenv("PATH", _tools(tmp_path / "bin", node="echo v20.1.0", npm=npm))
    with pytest.raises(DriverUnavailable) as caught:
        install_node_driver(KAFKAJS, version=None, path=None, timeout=INSTALL_TIMEOUT)
    text = str(caught.value)
    assert text.startswith("npm install kafkajs@2.2.4 failed (request to https://registry.example failed): see ")
    assert text.endswith(node_build.NPM_LOG) and Path(text.split("see ")[-1]).is_file()
    assert not list(cache.rglob(".complete"))


def test_a_version_npm_does_not_serve_is_named(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    npm = "echo 'npm error code ETARGET'; echo 'npm error notarget No matching version for kafkajs@0.0.1.'; exit 1"
    monkeypatch.setenv("PATH", _tools(tmp_path / "bin", node="echo v20.1.0", npm=npm))
    with pytest.raises(DriverUnavailable, match=r"^kafkajs@0\.0\.1 is not served by npm: `npm view kafkajs versions`"):
        install_node_driver(KAFKAJS, version="0.0.1", path=None, timeout=INSTALL_TIMEOUT)


# ------------------------------------------------------------------------------------ end to end: npm and the broker


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The pinned KafkaJS driver, installed from npm once for the module (into a cache of its own)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(node_build, "CACHE", tmp_path_factory.mktemp("node-cache"))
        try:
            return install_node_driver(KAFKAJS, version=None, path=None, timeout=INSTALL_TIMEOUT)
        except DriverUnavailable as exc:
            pytest.skip(f"UNSUPPORTED: {exc}")


@contextlib.contextmanager
def _reference_broker(*topics: tuple[str, TopicConfig]) -> Iterator[str]:
    served = ServedCluster(ModelFactory(brokers=1))
    now = int(time.time() * 1000)
    for broker in served.impl.brokers():
        served.impl.set_clock(broker, now)
    for name, config in topics:
        served.impl.create_topic(name, config)
    with KafkaServer(served) as server:
        yield server.bootstrap


def _converse(argv: list[str], lines: list[str], timeout: float = 60.0) -> tuple[list[dict[str, Any]], int]:
    """Every answer the driver writes for `lines` (its stdin closed after them), and its exit status."""
    done = subprocess.run(argv, input="".join(line + "\n" for line in lines), capture_output=True, text=True,
                          timeout=timeout, check=False)  # fmt: skip
    return [json.loads(line) for line in done.stdout.splitlines()], done.returncode


def _hello(bootstrap: str) -> str:
    return json.dumps({"id": 0, "op": "hello", "protocol": PROTOCOL_VERSION, "role": "client", "bootstrap": bootstrap,
                       "timeout_ms": 10_000})  # fmt: skip


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@pytest.mark.e2e
def test_a_version_npm_does_not_serve_is_named_by_npm(cache: Path) -> None:
    with pytest.raises(DriverUnavailable, match=r"^kafkajs@0\.0\.0-none is not served by npm: `npm view kafkajs"):
        install_node_driver(KAFKAJS, version="0.0.0-none", path=None, timeout=INSTALL_TIMEOUT)


@pytest.mark.e2e
def test_the_install_is_cached_and_reports_its_version(installed: list[str]) -> None:
    driver = Path(installed[1])
    assert (driver.parent / ".complete").is_file() and driver.is_file()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(node_build, "CACHE", driver.parents[2])
        started = time.monotonic()
        assert install_node_driver(KAFKAJS, version=None, path=None, timeout=INSTALL_TIMEOUT) == installed
        assert time.monotonic() - started < 5.0
    answers, status = _converse(installed, [json.dumps({"id": 0, "op": "hello", "protocol": PROTOCOL_VERSION,
                                                        "role": "codec", "timeout_ms": 1000})])  # fmt: skip
    assert status == 0 and answers[0]["error"]["type"] == "unsupported"


@pytest.mark.e2e
def test_a_checkout_is_linked_and_its_path_is_the_version(installed: list[str], cache: Path) -> None:
    checkout = Path(installed[1]).parent / "node_modules" / "kafkajs"
    argv = install_node_driver(KAFKAJS, version=None, path=str(checkout), timeout=INSTALL_TIMEOUT)
    with _reference_broker() as bootstrap:
        answers, status = _converse(argv, [_hello(bootstrap)])
    assert status == 0 and answers[0]["ok"]["version"] == str(checkout.resolve())


@pytest.mark.e2e
def test_the_kafkajs_driver_speaks_the_protocol_against_the_reference_broker(installed: list[str]) -> None:
    now = int(time.time() * 1000)
    lat = TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME)
    with _reference_broker(("create", TopicConfig()), ("append", lat)) as bootstrap:
        records = [{"key": _b64(b"k0"), "value": _b64(b"v"), "timestamp": now - 10},
                   {"key": _b64(b"k1"), "value": None, "timestamp": None}]  # fmt: skip
        lines = [
            _hello(bootstrap),
            json.dumps({"id": 1, "op": "send", "topic": "create", "partition": 0, "codec": "gzip", "records": records}),
            json.dumps({"id": 2, "op": "send", "topic": "append", "partition": 0, "codec": "none", "records": records}),
            json.dumps({"id": 3, "op": "offsets_for_times", "topic": "create", "partition": 0, "target": now - 10}),
            json.dumps({"id": 4, "op": "offsets_for_times", "topic": "create", "partition": 0, "target": now + 10**6}),
            json.dumps({"id": 5, "op": "list_offsets", "topic": "create", "partition": 0, "spec": "latest"}),
            json.dumps({"id": 6, "op": "list_offsets", "topic": "create", "partition": 0, "spec": "max-timestamp"}),
            json.dumps({"id": 7, "op": "consume", "topic": "create", "partition": 0, "offset": 0, "until": 2}),
            json.dumps({"id": 8, "op": "send", "topic": "create", "partition": 0, "codec": "zstd", "records": records}),
            "this is not JSON",
            json.dumps({"id": 9, "op": "no-such-op"}),
            json.dumps({"id": 10, "op": "close"}),
        ]
        answers, status = _converse(installed, lines)
    assert status == 0
    by_id = {a["id"]: a for a in answers if a["id"] != 0 or "ok" in a}
    hello = by_id[0]["ok"]
    assert (hello["library"], hello["version"], hello["language"]) == ("kafkajs", KAFKAJS.pinned, "javascript")
    assert hello["codecs"] == ["none", "gzip"]  # KafkaJS ships gzip; the others need codec packages
    # KafkaJS's consumer needs a group coordinator: the reference broker has one.
    assert set(hello["capabilities"]) == {
        "send", "record-errors", "offsets-for-times", "earliest", "latest", "consume", "seek-by-time", "timestamp-type"
    }  # fmt: skip
    # CreateTime: the timestamp the application set, and -1 for the one KafkaJS stamped itself (it does not say).
    assert by_id[1]["ok"]["outcomes"] == [{"offset": 0, "timestamp": now - 10}, {"offset": 1, "timestamp": -1}]
    appended = by_id[2]["ok"]["outcomes"]
    assert [o["offset"] for o in appended] == [0, 1] and appended[0]["timestamp"] == appended[1]["timestamp"] >= now
    assert by_id[3]["ok"] == {"answer": {"offset": 0, "timestamp": None}}
    # No record at or after the target: KafkaJS answers the high watermark, not "none".
    assert by_id[4]["ok"] == {"answer": {"offset": 2, "timestamp": None}}
    assert by_id[5]["ok"] == {"offset": 2, "timestamp": None}
    assert [r["offset"] for r in by_id[7]["ok"]["records"]] == [0, 1]  # through a fresh group, after a seek
    assert [by_id[i]["error"]["type"] for i in (6, 8)] == ["unsupported"] * 2
    malformed = answers[lines.index("this is not JSON")]
    assert (malformed["id"], malformed["error"]["type"]) == (0, "bad-request")
    assert by_id[9]["error"]["type"] == "bad-request" and by_id[10] == {"id": 10, "ok": {}}


@pytest.mark.e2e
def test_the_driver_exits_at_end_of_input(installed: list[str]) -> None:
    with _reference_broker() as bootstrap:
        answers, status = _converse(installed, [_hello(bootstrap)], timeout=30.0)
    assert status == 0 and [a["id"] for a in answers] == [0]
    assert _converse(installed, [], timeout=30.0) == ([], 0)
