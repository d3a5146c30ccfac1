"""The `kfake` managed target (conformance.targets.brokers.kfake): names, versions and checkouts, the usage checks,
the go command's failures as one line each, the control plane's view; and (e2e) our Go program built with go,
started on loopback, driven through its line protocol and its control plane, and gone after stop, also when its
stdin closes."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.control.control_client import ControlClient
from conformance.control.controlled import ControlError
from conformance.errors import TargetError
from conformance.targets.brokers import kfake
from conformance.targets.brokers.failovers import failover_cluster
from conformance.targets.brokers.kfake import (
    KFAKE_MODULE,
    KFAKE_VERSION,
    KfakeControlled,
    build_kfake,
    check_kfake,
    checkout_modules,
    go_mod,
)
from conformance.targets.brokers.process import ManagedProcessError
from conformance.targets.registry import (
    check_target,
    expectations_file,
    open_target,
    parse_target,
    spec_of,
    target_version,
)
from conformance.targets.routes.wire_adapter.kafka_wire import WireFactory
from conformance.targets.target import Opening
from conformance.wire.client import WireClient
from models.codec import encode_batches
from models.records import RecordSpec, build_v2
from tests.test_managed_processes import assert_gone
from tests.test_run_stopped import _descendants

OTHER_VERSION = "v0.0.0-20250101000000-0123456789ab"


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache with no program built in it (KTS_CACHE)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("KTS_CACHE", str(cache))
    return cache


def _checkout(root: Path, *, with_kfake: bool = True) -> Path:
    """A directory laid out as a franz-go checkout: go.mod files naming its modules (no sources)."""
    modules = {"": "github.com/twmb/franz-go", "pkg/kmsg": "github.com/twmb/franz-go/pkg/kmsg"}
    if with_kfake:
        modules["pkg/kfake"] = KFAKE_MODULE
    for sub, module in modules.items():
        folder = root / sub
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "go.mod").write_text(f"module {module}\n\ngo 1.26.0\n", encoding="utf-8")
    return root


def _program(path: Path, script: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# --- names, the row, the usage checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "version", "path"),
    [("kfake", None, None), (f"kfake=={OTHER_VERSION}", OTHER_VERSION, None), ("kfake=/src/franz-go", None,
                                                                               "/src/franz-go")],
)  # fmt: skip
def test_kfake_takes_a_version_or_a_checkout(name: str, version: str | None, path: str | None) -> None:
    target = parse_target(name)
    assert (target.implementation, target.version, target.path, str(target)) == ("kfake", version, path, name)
    # The shipped expectations describe the pinned kfake; another version or a checkout is judged against them too.
    assert expectations_file(target) == "kfake.toml"
    assert target_version(target) == (f"kfake {version or KFAKE_VERSION}" if path is None else f"kfake from {path}")


def test_the_row_is_a_managed_broker_of_three_pinned_to_a_pseudo_version() -> None:
    spec = spec_of(parse_target("kfake"))
    assert (spec.kind.value, spec.served_by.value, spec.max_brokers, spec.versions, spec.paths) == (
        "broker", "a managed process", 3, True, True
    )  # fmt: skip
    assert KFAKE_VERSION in spec.obtained and "Go module proxy" in spec.obtained
    assert (Path(__file__).parents[1] / "suites" / "expectations" / "kfake.toml").is_file()


def test_a_version_that_is_no_go_module_version_is_one_line_naming_the_fix() -> None:
    with pytest.raises(TargetError, match=rf"kfake==latest: not a Go module version: .* e\.g\. kfake=={KFAKE_VERSION}"):
        check_target("kfake==latest", "kafka-4.0")


def test_a_path_that_is_not_a_franz_go_checkout_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    _checkout(tmp_path / "no-kfake", with_kfake=False)
    with pytest.raises(TargetError, match=rf"^kfake={tmp_path / 'no-kfake'}: .*is not a franz-go.*pass the root of a "):
        check_target(f"kfake={tmp_path / 'no-kfake'}", "kafka-4.0")
    # A path that is not there is said so before the row looks into it, as for every NAME=PATH.
    with pytest.raises(TargetError, match=r"missing does not exist: give the path of a local checkout or build of"):
        check_target(f"kfake={tmp_path / 'missing'}", "kafka-4.0")


def test_a_checkout_gives_its_modules_and_the_go_mod_replaces_them(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "franz-go")
    modules = checkout_modules(root)
    assert modules == {
        "github.com/twmb/franz-go": root, KFAKE_MODULE: root / "pkg/kfake", "github.com/twmb/franz-go/pkg/kmsg":
        root / "pkg/kmsg",
    }  # fmt: skip
    text = go_mod("v0.0.0-00010101000000-000000000000", modules)
    assert f"replace {KFAKE_MODULE} => {root / 'pkg/kfake'}\n" in text
    assert f"replace github.com/twmb/franz-go => {root}\n" in text
    assert f"\t{KFAKE_MODULE} {KFAKE_VERSION}\n" in go_mod(KFAKE_VERSION)
    assert "replace" not in go_mod(KFAKE_VERSION)


def test_without_go_an_unbuilt_kfake_is_one_line_naming_the_fix(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kfake, "_go", lambda: None)
    with pytest.raises(
        TargetError, match=r"^go not found on PATH, and the kfake target builds kfake with it: install Go"
    ):
        check_target("kfake", "kafka-4.0")
    with pytest.raises(TargetError, match=r"^go not found on PATH"):
        check_kfake(parse_target(f"kfake=={OTHER_VERSION}"), Opening("kafka-4.0"))


def test_a_bad_version_is_a_usage_error_of_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--target", "kfake==latest", "--out", "/dev/null/never"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kafka-conformance: error: kfake==latest: not a Go module version"), err


# --- the go command's failures ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tidy", "build", "message"),
    [
        ("echo 'go: github.com/twmb/franz-go/pkg/kfake@v9.9.9: invalid version: unknown revision v9.9.9' >&2; exit 1",
         "exit 0", r"^the Go module proxy does not serve github\.com/twmb/franz-go/pkg/kfake@v9\.9\.9 .*: pass a "
         r"version it serves \(the pinned one is v0\.0\.0-"),
        # A pseudo-version of a commit the proxy never saw: go's first line names only the importer; the proxy's
        # answer is what the user needs.
        ("printf 'go: kts/kts-kfake imports\\n\\tgithub.com/twmb/franz-go/pkg/kfake: github.com/twmb/franz-go/pkg/kfake"
         "@v9.9.9: reading https://proxy.golang.org/github.com/twmb/franz-go/pkg/kfake/@v/v9.9.9.zip: 403 Forbidden"
         "\\n\\tserver response: This module version is not available.\\n' >&2; exit 1", "exit 0",
         r"^the Go module proxy does not serve github\.com/twmb/franz-go/pkg/kfake@v9\.9\.9 \(403 Forbidden: This "
         r"module version is not available\.\): pass a version it serves"),
        ("echo 'go: go.mod requires go >= 1.99 (running go 1.26.8; GOTOOLCHAIN=local)' >&2; exit 1", "exit 0",
         r"^kfake v9\.9\.9 needs a newer Go than this one .*: install that Go or newer$"),
        ("exit 0", "echo './main.go:12:3: cluster.ApplyRetention undefined' >&2; exit 1",
         r"^go build failed against kfake v9\.9\.9 \(\./main\.go:12:3: cluster\.ApplyRetention undefined\): .*"
         r"drop the version for the pinned"),
    ],
)  # fmt: skip
def test_each_failure_of_the_go_command_is_one_line_naming_the_fix(
    tmp_path: Path, tidy: str, build: str, message: str
) -> None:
    go = _program(tmp_path / "bin" / "go", f'case "$1" in mod) {tidy};; build) {build};; esac')
    home = tmp_path / "cache" / "kfake-v9.9.9"
    with pytest.raises(ManagedProcessError, match=message) as raised:
        build_kfake(home, "v9.9.9", go=str(go))
    assert "\n" not in str(raised.value)
    assert not home.exists()  # a version that could not be built leaves no folder of its name in the cache


def test_a_program_that_dies_at_start_is_one_line_and_leaves_nothing(empty_cache: Path, tmp_path: Path) -> None:
    home = kfake._version_home(KFAKE_VERSION)
    _program(home / "kts-kfake", "echo 'kts-kfake: kfake could not start: boom' >&2; exit 2")
    before = _descendants(os.getpid())
    died = r"^kfake on 127\.0\.0\.1:\d+ exited with code 2 during start-up; log .*boom"
    with pytest.raises(TargetError, match=died), open_target("kfake", "kafka-4.0", log_dir=tmp_path / "logs"):
        pass
    assert _descendants(os.getpid()) <= before


# --- the control plane's view -----------------------------------------------------------------------------------


class _Program:
    """What KfakeControlled asks of the program: its brokers and its line protocol."""

    def __init__(self) -> None:
        self.addresses = {0: "127.0.0.1:1", 1: "127.0.0.1:2", 2: "127.0.0.1:3"}
        self.asked: list[str] = []

    def ask(self, command: str) -> tuple[bool, str]:
        self.asked.append(command)
        return True, ""


def test_the_control_plane_offers_retention_only_and_refuses_to_set_a_clock() -> None:
    program = _Program()
    controlled = KfakeControlled(program)  # type: ignore[arg-type]
    assert controlled.capabilities() == ("retention",) and controlled.broker_ids() == (0, 1, 2)
    assert abs(controlled.clock(1) - time.time_ns() // 1_000_000) < 5_000  # kfake's clock is this machine's
    for call in (lambda: controlled.set_clock(0, 1_700_000_000_000), lambda: controlled.advance_clock(2, 1_000)):
        with pytest.raises(ControlError) as refused:
            call()
        assert refused.value.status == 409 and "clock-control is not among" in refused.value.detail
    with pytest.raises(ControlError) as unknown:
        controlled.clock(7)
    assert (unknown.value.status, unknown.value.field) == (404, "path.broker")
    assert controlled.run_retention() == 0 and program.asked == ["RETENTION"]


# --- end to end: built with go ----------------------------------------------------------------------------------


def _need_go() -> None:
    if shutil.which("go") is None:
        pytest.skip("needs go on PATH")


def _program_pids() -> list[int]:
    found = []
    for pid in _descendants(os.getpid()):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"/kts-kfake"):
            found.append(pid)
    return found


@pytest.mark.e2e
def test_kfake_starts_three_brokers_moves_leaders_runs_retention_and_is_gone_after_stop(tmp_path: Path) -> None:
    """The pinned kfake, built on first use: three brokers on loopback that Metadata names; a leader moved through
    the failover hook is the one Metadata names at the next epoch; retention runs when asked and deletes a
    record a minute older than retention.ms; LogAppendTime is not applied (the known departure); the program is
    gone after stop."""
    _need_go()
    with open_target("kfake", "kafka-4.0", log_dir=tmp_path / "logs") as (factory, logs):
        assert isinstance(factory, WireFactory) and factory.control_url is not None and factory.failover is not None
        assert len(factory.bootstrap.split(",")) == 3  # every broker's address
        control = ControlClient(factory.control_url, timeout=10)
        capabilities, brokers = control.capabilities()
        assert {c.value for c in capabilities} == {"retention"} and brokers == (0, 1, 2)
        client = WireClient(factory.bootstrap, timeout=10)
        try:
            assert sorted(b.node_id for b in client.metadata().brokers) == [0, 1, 2]
            configs = {"retention.ms": "60000", "message.timestamp.type": "LogAppendTime"}
            assert client.create_topic("t", replication_factor=3, configs=configs).error_code == 0
            leader, epoch = control.leader("t", 0)
            other = (leader + 1) % 3
            failover_cluster(factory.failover).set_leader("t", 0, other)  # type: ignore[attr-defined]
            shown = client.metadata(["t"]).topics["t"].partitions[0]
            assert (shown.leader, shown.leader_epoch) == (other, epoch + 1) == control.leader("t", 0)
            now = time.time_ns() // 1_000_000
            old = client.produce("t", 0, encode_batches([build_v2([RecordSpec(now - 120_000)])]), version=9)
            assert (old.error_code, old.log_append_time) == (0, -1)  # kfake ignores message.timestamp.type
            client.produce("t", 0, encode_batches([build_v2([RecordSpec(now)])]), version=9)
            assert client.list_offsets("t", 0, -2, version=9).offset == 0
            assert control.run_retention() == 0
            assert client.list_offsets("t", 0, -2, version=9).offset == 1  # the old record is gone, the new one kept
        finally:
            client.close()
        assert "kts-kfake" in logs[0].read_text()
        programs = _program_pids()
        assert len(programs) == 1, programs
    assert_gone(programs[0])


@pytest.mark.e2e
def test_the_program_speaks_its_line_protocol_and_stops_when_its_stdin_closes(tmp_path: Path) -> None:
    _need_go()
    binary = kfake.kfake_binary(parse_target("kfake"))
    proc = subprocess.Popen([str(binary), "-brokers", "2"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    try:
        assert proc.stdin is not None and proc.stdout is not None
        ready = proc.stdout.readline().split()
        assert ready[0] == "READY" and [w.split("@")[0] for w in ready[1:]] == ["0", "1"], ready
        assert all(w.split("@")[1].startswith("127.0.0.1:") for w in ready[1:])
        for command, answer in (
            ("PING", "OK"),
            ("VERSION", f"OK {KFAKE_VERSION}"),
            ("LEADER nope 0", 'ERR no partition 0 of topic "nope"'),
            ("MOVE nope 0 x", 'ERR node "x" is not a number'),
            ("FLY", 'ERR unknown command "FLY"'),
        ):
            proc.stdin.write(command + "\n")
            proc.stdin.flush()
            assert proc.stdout.readline().startswith(answer), command
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.e2e
def test_a_version_the_proxy_does_not_serve_is_one_line_of_run(
    empty_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _need_go()
    code = main(["run", "--target", "kfake==v0.0.0-20000101000000-000000000000", "--no-html", "--out",
                 str(empty_cache.parent / "out")])  # fmt: skip
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.startswith("kafka-conformance: error")]
    assert code == 2 and len(lines) == 1, captured.err[-2000:]
    assert "the Go module proxy does not serve github.com/twmb/franz-go/pkg/kfake@v0.0.0-20000101000000" in lines[0]
    assert not _program_pids()


def _module_dir(module: str, version: str) -> Path | None:
    found = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=False, timeout=30)
    folder = Path(found.stdout.strip()) / f"{module}@{version}"
    return folder if folder.is_dir() else None


@pytest.mark.e2e
def test_a_local_checkout_is_built_with_its_own_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`kfake=PATH`: a checkout laid out from the Go module cache (the root module, kmsg, kadm and kfake at the
    versions the pinned kfake builds with) replaces the published modules; the program says it runs the checkout."""
    _need_go()
    monkeypatch.setenv("KTS_CACHE", str(tmp_path / "cache"))  # a build of a checkout in a temporary folder
    parts = {"": ("github.com/twmb/franz-go", kfake.FRANZ_GO_VERSION), "pkg/kmsg": ("github.com/twmb/franz-go/pkg/kmsg",
             kfake.KMSG_VERSION), "pkg/kadm": ("github.com/twmb/franz-go/pkg/kadm", "v1.18.0"), "pkg/kfake":
             (KFAKE_MODULE, KFAKE_VERSION)}  # fmt: skip
    root = tmp_path / "franz-go"
    for sub, (module, version) in parts.items():
        source = _module_dir(module, version)
        if source is None:
            pytest.skip(f"{module}@{version} is not in the Go module cache")
        shutil.copytree(source, root / sub if sub else root, dirs_exist_ok=True)
    for folder, dirs, files in os.walk(root):  # the module cache's copies are read-only
        for name in dirs + files:
            os.chmod(Path(folder) / name, 0o755)
    with open_target(f"kfake={root}", "kafka-4.0", log_dir=tmp_path / "logs", brokers=1) as (factory, _logs):
        process = failover_cluster(factory.failover)  # type: ignore[arg-type]
        ok, version = process.ask("VERSION")  # type: ignore[attr-defined]
        assert ok and version == f"local:{root / 'pkg/kfake'}"
        assert list(process.addresses) == [0]  # type: ignore[attr-defined]
