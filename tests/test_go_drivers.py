"""The Go drivers (conformance/targets/drivers/go/) and their build (go_build.py).

Fast: the build's refusals that need no compiler run (no `go` on PATH, a path that is not a checkout of the
library), how it reads go's failures (a version the proxy does not serve, a Go too old, a compile error), which of
a checkout's modules replace the driver's, and the cache key. The e2e tests build each driver (Go and the Go module
proxy needed) and run it through the protocol: the codec role of franz-go needs no broker, the client roles run
against the reference broker.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.targets.drivers import DRIVERS, SOURCES, DriverUnavailable, go_build
from conformance.targets.drivers.go_build import build_go_driver

GO_DRIVERS = sorted(name for name, spec in DRIVERS.items() if spec.language == "go")
needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="Go is not installed")


def test_every_go_driver_has_its_sources() -> None:
    for name in GO_DRIVERS:
        folder = SOURCES / DRIVERS[name].source
        go_mod = (folder / "go.mod").read_text()
        assert f"\t{DRIVERS[name].package} {DRIVERS[name].pinned}\n" in go_mod, name  # the pinned version
        assert "replace kts.local/driverkit => ../driverkit" in go_mod, name
        assert list(folder.glob("*.go")), name


def test_no_go_on_path_names_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(DriverUnavailable, match=r"`go` is not on PATH: install Go 1\.26\+"):
        build_go_driver(DRIVERS["franz-go"], version=None, path=None, timeout=10)


@needs_go
def test_a_folder_without_the_module_is_not_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(DriverUnavailable, match=r"is not a checkout of github.com/twmb/franz-go \(it has no go.mod\)"):
        build_go_driver(DRIVERS["franz-go"], version=None, path=str(tmp_path), timeout=10)
    (tmp_path / "go.mod").write_text("module github.com/IBM/sarama\n\ngo 1.22\n")
    with pytest.raises(DriverUnavailable, match=r"its go.mod names github.com/IBM/sarama\): pass the folder"):
        build_go_driver(DRIVERS["franz-go"], version=None, path=str(tmp_path), timeout=10)


def _explained(output: str, *, step: str = "get", version: str | None = "v1.99.0") -> str:
    steps = go_build._Steps("go", Path("."), {}, 0.0, Path("/cache/build.log"), DRIVERS["franz-go"])
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
    key = go_build._key(drivers / "kafkago", "github.com/segmentio/kafka-go", "v0.4.51", "", "go1.26.0")
    assert key == go_build._key(drivers / "kafkago", "github.com/segmentio/kafka-go", "v0.4.51", "", "go1.26.0")
    assert key != go_build._key(drivers / "kafkago", "github.com/segmentio/kafka-go", "v0.4.50", "", "go1.26.0")
    assert key != go_build._key(drivers / "kafkago", "github.com/segmentio/kafka-go", "v0.4.51", "", "go1.26.1")
    with (drivers / "driverkit" / "serve.go").open("a") as kit:
        kit.write("\n// a change to driverkit builds every driver afresh\n")
    assert key != go_build._key(drivers / "kafkago", "github.com/segmentio/kafka-go", "v0.4.51", "", "go1.26.0")
