"""The Go drivers (conformance/targets/routes/driver/go/) and their build (go_build.py).

Fast: the build's refusals that need no compiler run (no `go` on PATH, a path that is not a checkout of the
library), how it reads go's failures (a version the proxy does not serve, a Go too old, a compile error), which of
a checkout's modules replace the driver's, and the cache key. The e2e tests build each driver (Go and the Go module
proxy needed) and run it through the protocol: the codec role of franz-go needs no broker, the client roles run
against the reference broker.
"""

from __future__ import annotations

import base64
import shutil
import time
from pathlib import Path

import pytest

from conformance.targets.brokers.reference_broker import ReferenceBroker
from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE
from conformance.targets.libraries import LIBRARIES
from conformance.targets.routes.driver import SOURCES, DriverUnavailable, go_build
from conformance.targets.routes.driver.driver_process import DriverProcess
from conformance.targets.routes.driver.go_build import build_go_driver
from models.codec import decode_batches
from tests.conftest import three_records_topic

GO_DRIVERS = sorted(name for name, spec in LIBRARIES.items() if spec.language == "go")
needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="Go is not installed")


def test_every_go_driver_has_its_sources() -> None:
    for name in GO_DRIVERS:
        folder = SOURCES / LIBRARIES[name].source
        go_mod = (folder / "go.mod").read_text()
        assert f"\t{LIBRARIES[name].package} {LIBRARIES[name].pinned}\n" in go_mod, name  # the pinned version
        assert "replace kts.local/driverkit => ../driverkit" in go_mod, name
        assert list(folder.glob("*.go")), name


def test_no_go_on_path_names_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(DriverUnavailable, match=r"`go` is not on PATH: install Go 1\.26\+"):
        build_go_driver(LIBRARIES["franz-go"], version=None, path=None, timeout=10)


@needs_go
def test_a_folder_without_the_module_is_not_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(DriverUnavailable, match=r"is not a checkout of github.com/twmb/franz-go \(it has no go.mod\)"):
        build_go_driver(LIBRARIES["franz-go"], version=None, path=str(tmp_path), timeout=10)
    (tmp_path / "go.mod").write_text("module github.com/IBM/sarama\n\ngo 1.22\n")
    with pytest.raises(DriverUnavailable, match=r"its go.mod names github.com/IBM/sarama\): pass the folder"):
        build_go_driver(LIBRARIES["franz-go"], version=None, path=str(tmp_path), timeout=10)


def _explained(output: str, *, step: str = "get", version: str | None = "v1.99.0") -> str:
    steps = go_build._Steps("go", Path("."), {}, 0.0, Path("/cache/build.log"), LIBRARIES["franz-go"])
    return steps._explain(go_build._GoFailed(step, output), version)


@pytest.mark.parametrize(
    "output",
    [
        "go: github.com/twmb/franz-go@v1.99.0: invalid version: unknown revision v1.99.0",
        "go: github.com/twmb/franz-go@v1.99.0: reading https://proxy.golang.org/github.com/twmb/franz-go/@v/"
        "v1.99.0.info: 404 Not Found",
        "go: github.com/twmb/franz-go@nonsense: invalid version: reading https://proxy.golang.org/...: 403 Forbidden"
        "\n\tserver response: This module version is not available.",
    ],
)
def test_a_version_the_proxy_does_not_serve(output: str) -> None:
    assert _explained(output) == (
        "github.com/twmb/franz-go@v1.99.0 is not served by the Go module proxy: pick one of "
        "`go list -m -versions github.com/twmb/franz-go`"
    )


def test_a_go_too_old_names_the_version_it_needs() -> None:
    said = "go: go.mod requires go >= 1.26.0 (running go 1.22.5; GOTOOLCHAIN=local)"
    assert _explained(said, step="mod", version=None) == (
        "the franz-go driver needs Go 1.26.0 or later and `go` is 1.22.5: install Go 1.26+ (https://go.dev/dl/) "
        "or put it on PATH"
    )


def test_a_compile_error_is_its_first_line_and_the_log() -> None:
    said = "# github.com/twmb/franz-go/pkg/kgo\n/src/kgo/broken.go:2:17: undefined: nothing\n/src/kgo/x.go:3:1: more\n"
    assert _explained(said, step="build", version=None) == (
        "`go build` of the franz-go driver failed: /src/kgo/broken.go:2:17: undefined: nothing "
        "(full log: /cache/build.log)"
    )


def test_a_checkout_replaces_the_driver_modules_it_holds(tmp_path: Path) -> None:
    """franz-go's kadm and kmsg are modules of their own in the same repository: a checkout replaces each the
    driver requires, and nothing else (its examples, a module the driver does not use)."""
    for folder, module in [("", "github.com/twmb/franz-go"), ("pkg/kmsg", "github.com/twmb/franz-go/pkg/kmsg"),
                           ("pkg/kadm", "github.com/twmb/franz-go/pkg/kadm"),
                           ("pkg/kfake", "github.com/twmb/franz-go/pkg/kfake"),
                           ("examples", "github.com/twmb/franz-go/examples")]:  # fmt: skip
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "go.mod").write_text(f"module {module}\n")
    replaced = go_build._replacements("github.com/twmb/franz-go", tmp_path, SOURCES / "go" / "franzgo" / "go.mod")
    assert replaced == [
        ("github.com/twmb/franz-go", tmp_path),
        ("github.com/twmb/franz-go/pkg/kadm", tmp_path / "pkg" / "kadm"),
        ("github.com/twmb/franz-go/pkg/kmsg", tmp_path / "pkg" / "kmsg"),
    ]


def test_the_cache_key_follows_the_sources_and_the_version(tmp_path: Path) -> None:
    drivers = tmp_path / "go"
    shutil.copytree(SOURCES / "go" / "kafkago", drivers / "kafkago")
    shutil.copytree(SOURCES / "go" / "driverkit", drivers / "driverkit")
    key = go_build.build_key(drivers / "kafkago", "github.com/segmentio/kafka-go", "v0.4.51", "", "go1.26.0")
    assert key == go_build.build_key(drivers / "kafkago", "github.com/segmentio/kafka-go", "v0.4.51", "", "go1.26.0")
    assert key != go_build.build_key(drivers / "kafkago", "github.com/segmentio/kafka-go", "v0.4.50", "", "go1.26.0")
    assert key != go_build.build_key(drivers / "kafkago", "github.com/segmentio/kafka-go", "v0.4.51", "", "go1.26.1")
    with (drivers / "driverkit" / "serve.go").open("a") as kit:
        kit.write("\n// a change to driverkit builds every driver afresh\n")
    assert key != go_build.build_key(drivers / "kafkago", "github.com/segmentio/kafka-go", "v0.4.51", "", "go1.26.0")


# -- e2e: each driver built and run through the protocol


@pytest.fixture(scope="module")
def built() -> dict[str, list[str]]:
    """Each Go driver at its pinned version (built into the user's cache, as a run builds it)."""
    if shutil.which("go") is None:
        pytest.skip("Go is not installed")
    return {name: build_go_driver(LIBRARIES[name], version=None, path=None, timeout=900) for name in GO_DRIVERS}


def _driver(name: str, argv: list[str], tmp_path: Path, timeout: float = 10.0) -> DriverProcess:
    return DriverProcess(f"the {name} driver", argv, target=f"client:{name}", log_path=tmp_path / f"{name}.log",
                         timeout=timeout)  # fmt: skip


@pytest.mark.e2e
@pytest.mark.parametrize("name", GO_DRIVERS)
def test_a_built_driver_is_cached_and_says_its_version(name: str, built: dict[str, list[str]], tmp_path: Path) -> None:
    started = time.monotonic()
    assert build_go_driver(LIBRARIES[name], version=None, path=None, timeout=60) == built[name]
    assert time.monotonic() - started < 2.0  # a hash of the sources and `go env GOVERSION`
    with _driver(name, built[name], tmp_path) as driver:
        hello = driver.start(CLIENT_ROLE, bootstrap="127.0.0.1:1")  # no library call connects before an operation
    assert (hello["library"], hello["version"], hello["language"]) == (name, LIBRARIES[name].pinned, "go")
    assert {"send", "consume", "offsets-for-times", "earliest", "latest"} <= set(hello["capabilities"])


@pytest.mark.e2e
def test_franz_go_writes_and_reads_every_magic(built: dict[str, list[str]], tmp_path: Path) -> None:
    """The codec role needs no broker: kgo's producer writes to the driver's own in-memory broker, and kgo's
    consumer code reads what it wrote."""
    records = [{"timestamp": 1_764_000_000_000 + d, "key": "aw==", "value": base64.b64encode(b"v" * 200).decode(),
                "headers": []} for d in (0, -5, 9)]  # fmt: skip
    with _driver("franz-go", built["franz-go"], tmp_path) as driver:
        hello = driver.start(CODEC_ROLE)
        assert hello["build_magics"] == hello["read_magics"] == [0, 1, 2]
        for magic, codec in [(0, "gzip"), (1, "snappy"), (2, "zstd"), (2, "none")]:
            data = driver.request("build", magic=magic, codec=codec, timestamp_type="CreateTime", log_append_time=None,
                                  base_offset=0, records=records)["data"]  # fmt: skip
            stored = decode_batches(base64.b64decode(data))
            assert [(b.magic, b.codec.name.lower()) for b in stored] == [(magic, codec)]
            read = driver.request("read", data=data)["batches"]
            timestamps = [(r["offset"], r["timestamp"]) for b in read for r in b["records"]]
            want = -1 if magic == 0 else None
            assert timestamps == [(i, want or r["timestamp"]) for i, r in enumerate(records)]


@pytest.mark.e2e
@pytest.mark.parametrize("name", GO_DRIVERS)
def test_a_client_driver_sends_consumes_and_looks_up(
    name: str, built: dict[str, list[str]], reference_at_now: ReferenceBroker, tmp_path: Path
) -> None:
    """What every library does right against the reference broker: one send of three records (one the producer
    stamps), the records read back from offset 0, a lookup of a written timestamp, the earliest and latest
    offsets, and a seek by time; the departures each library has are the suites' business."""
    topic, now, sent = three_records_topic(reference_at_now.bootstrap, f"go-{name}")
    with _driver(name, built[name], tmp_path) as driver:
        driver.start(CLIENT_ROLE, bootstrap=reference_at_now.bootstrap)
        outcomes = driver.request("send", topic=topic, partition=0, codec="gzip", records=sent)["outcomes"]
        assert [o["offset"] for o in outcomes] == [0, 1, 2]
        records = driver.request("consume", topic=topic, partition=0, offset=0, until=3)["records"]
        assert [(r["offset"], r["key"], r["value"]) for r in records] == [(i, s["key"], s["value"]) for i, s in
                                                                          enumerate(sent)]  # fmt: skip
        assert [records[0]["timestamp"], records[2]["timestamp"]] == [now - 1000, now - 500]
        answer = driver.request("offsets_for_times", topic=topic, partition=0, target=now - 1000)["answer"]
        assert answer is not None and answer["offset"] == 0
        assert driver.request("list_offsets", topic=topic, partition=0, spec="earliest")["offset"] == 0
        assert driver.request("list_offsets", topic=topic, partition=0, spec="latest")["offset"] == 3
        seek = driver.request("seek_by_time", topic=topic, partition=0, target=now - 1000, until=3)
        assert seek["record"] is not None and seek["record"]["offset"] == seek["answer"]["offset"]
