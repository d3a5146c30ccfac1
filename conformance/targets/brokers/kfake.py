"""The `kfake` managed target: franz-go's fake Kafka cluster (the Go package github.com/twmb/franz-go/pkg/kfake), three
brokers in one process on free loopback ports, run by a small Go program of ours (`go/kfake/main.go`).

Obtaining it: kfake has no tags, so the target is pinned to a pseudo-version the Go module proxy serves
(`KFAKE_VERSION`). The program is built with the go command on first use into `<cache>/kfake-<version>-<key>/` (the
cache of the Kafka targets: `KTS_CACHE`, default ~/.cache/kafka-timestamp-conformance; `<key>` hashes our Go source,
the go.mod template, the go.sum of the pinned build and the version) and reused after. Its go.mod requires franz-go
and kmsg at the releases the pinned kfake builds with (`FRANZ_GO_VERSION`, `KMSG_VERSION`): kfake's own go.mod names
older ones, which lack functions it calls. `--target kfake==VERSION` builds against another kfake (with the same
franz-go and kmsg floor, which a newer kfake's go.mod raises); `--target kfake=PATH` against a local franz-go
checkout, whose kfake, franz-go, kmsg and kadm modules replace the published ones in go.mod, into
`<cache>/kfake-local-<key>/` and again on every run (go's build cache makes that quick), so that an edit of the
checkout is what runs. The go command runs with GOTOOLCHAIN=local (never a toolchain download), GOWORK=off and
CGO_ENABLED=0, reaches the network only through GOPROXY, and every call of it has a timeout. A build that fails is a
ManagedProcessError naming the problem and the fix, which the opener turns into a TargetError (the run cannot start).

Starting it: the program listens on the ports it is given (`-ports`: the first from ManagedBroker, which retries on a
fresh port when one was taken, the others fresh free ports), on 127.0.0.1 only (kfake's listeners bind nothing
else), prints `READY <node>@<address> ...` and then answers one command line at a time on its stdin (the protocol is
in main.go). It exits when its stdin closes, so it cannot outlive the suite, and on SIGTERM; ManagedBroker stops its
process group on every path. Ready once the first broker answers ApiVersions and the READY line names the ports it
was given; its bootstrap list names every broker.

What the suite can drive: kfake reads the machine's clock (time.Now) wherever it needs a time (LogAppendTime, segment
and file times, retention) with no way to set it, so there is no clock-control: a run brackets each request with
clock readings as on any wall-clock broker. Retention runs when the suite asks (kfake's ApplyRetention), never on
kfake's own ticker, which the program puts ten years out (log.cleaner.backoff.ms). Leaders move through kfake's
MoveTopicPartition, which bumps the leader epoch as an election does (also for a move to the current leader, as the
model's election does). The control plane (conformance/control/control_plane.py over `KfakeControlled`) declares
retention only; it answers leader reads and moves all the same. Not leader-failover: given that capability the suite
starts every new partition on the first broker through the control plane, and kfake, which ignores a CreateTopics
replica assignment and gives each new partition a random leader, could put it there only by a move, one leader epoch
ahead of the model's. The suite's run moves leaders through the in-process failover hook instead
(conformance/targets/brokers/failovers.py, as for librdkafka's mock cluster), which leaves a new partition where kfake
put it, at epoch 0. Not idempotence (the brokers take idempotent batches from producer ids they did not allocate, as
Kafka does): kfake takes the first batch of an unknown producer id, but keeps one epoch per producer id for the whole
cluster (txns.go, pids.getOrCreateNonTx) where Kafka keeps producer state per partition, so a producer id seen on one
topic at epoch 3 is refused at epoch 0 on another with INVALID_PRODUCER_EPOCH (00_produce.go), which the suite's
producers, numbered afresh for each test, meet in tests of other clauses.

Measured on the development machine (two cores): the first build 37 s (go's build cache cold, the module cache warm),
none once built; from spawn to the first ApiVersions answer 5-7 ms; a stop about 10 ms.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import IO, Any, BinaryIO

from conformance.control.control_plane import ControlPlane
from conformance.control.controlled import ControlError
from conformance.errors import TargetError
from conformance.progress import step
from conformance.targets.brokers.failovers import register_failover, unregister_failover
from conformance.targets.brokers.kafka_control import partition_metadata
from conformance.targets.brokers.opening import wire_factory
from conformance.targets.brokers.process import (
    LOOPBACK,
    ManagedBroker,
    ManagedProcessError,
    free_loopback_port,
)
from conformance.targets.target import Opened, Opening, Target
from conformance.wire.client import PartitionMetadata, WireClient

__all__ = [
    "FRANZ_GO_VERSION",
    "KFAKE_BROKERS",
    "KFAKE_MODULE",
    "KFAKE_VERSION",
    "KMSG_VERSION",
    "KfakeControlled",
    "KfakeProcess",
    "check_kfake",
    "kfake_binary",
    "kfake_version",
    "obtain_kfake",
    "open_kfake",
    "start_kfake",
]

KFAKE_MODULE = "github.com/twmb/franz-go/pkg/kfake"
FRANZ_GO_MODULE = "github.com/twmb/franz-go"
# The newest kfake the Go module proxy served when this target was written (a pseudo-version: kfake has no tags).
KFAKE_VERSION = "v0.0.0-20260918054303-01f206a7e32c"
FRANZ_GO_VERSION = "v1.22.3"
KMSG_VERSION = "v1.15.1"
KFAKE_BROKERS = 3  # the default and the most: enough for leader moves, as the model's cluster has
# What the control plane offers (see the module doc for what it does not: clock-control, leader-failover,
# idempotence).
KFAKE_CONTROL_CAPABILITIES = ("retention",)

SOURCE_DIR = Path(__file__).parent / "go" / "kfake"
_SOURCES = ("main.go", "go.mod.template", "go.sum")
_BINARY = "kts-kfake"
# The modules of a franz-go checkout that a local build replaces, by their directory in it.
_CHECKOUT_MODULES = {
    "": FRANZ_GO_MODULE,
    "pkg/kfake": KFAKE_MODULE,
    "pkg/kmsg": f"{FRANZ_GO_MODULE}/pkg/kmsg",
    "pkg/kadm": f"{FRANZ_GO_MODULE}/pkg/kadm",
}
# A Go module version: a release (v1.2.3), a pre-release or a pseudo-version (v0.0.0-20260918054303-01f206a7e32c).
_GO_VERSION = re.compile(r"v\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+incompatible)?")
_RESOLVE_TIMEOUT = 300.0  # go mod tidy: a first download of kfake and its dependencies
_BUILD_TIMEOUT = 600.0  # go build: about 35 s here with a cold build cache
_READY_TIMEOUT = 30.0
_COMMAND_TIMEOUT = 10.0
_STOP_TIMEOUT = 5.0
_GO_FIX = "install Go 1.26 or newer and put `go` on PATH"


def _cache_root() -> Path:
    return Path(os.environ.get("KTS_CACHE", Path.home() / ".cache" / "kafka-timestamp-conformance"))


# --- checking ---------------------------------------------------------------------------------------------------


def _go() -> str | None:
    return shutil.which("go")


def checkout_modules(path: Path) -> dict[str, Path]:
    """The franz-go modules of a local checkout at `path` (module path -> its directory), kfake among them; a
    TargetError naming the fix when `path` is not a franz-go checkout with kfake in it."""
    root = path.expanduser().resolve()
    found: dict[str, Path] = {}
    for sub, module in _CHECKOUT_MODULES.items():
        folder = root / sub if sub else root
        if _module_name(folder / "go.mod") == module:
            found[module] = folder
    if KFAKE_MODULE not in found or FRANZ_GO_MODULE not in found:
        what = "does not exist" if not root.exists() else "is not a franz-go checkout with kfake in it"
        raise TargetError(
            f"kfake={path}: {root} {what} (no go.mod of {FRANZ_GO_MODULE} with pkg/kfake/go.mod of {KFAKE_MODULE}): "
            "pass the root of a clone of github.com/twmb/franz-go, or drop =PATH for the pinned kfake"
        )
    return found


def _module_name(go_mod: Path) -> str | None:
    try:
        text = go_mod.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r"^module\s+(\S+)", text, re.MULTILINE)
    return match.group(1) if match else None


def check_kfake(target: Target, opening: Opening) -> None:
    """Before anything starts: a Go module version or a franz-go checkout, and the go command where a build is
    needed (always for a checkout; for a version, unless it was built before)."""
    if target.version is not None and not _GO_VERSION.fullmatch(target.version):
        raise TargetError(
            f"kfake=={target.version}: not a Go module version: pass a pseudo-version the Go module proxy serves "
            f"(kfake has no tags), e.g. kfake=={KFAKE_VERSION}, or a checkout with kfake=PATH"
        )
    if target.path is not None:
        checkout_modules(Path(target.path))
    elif _built(_version_home(target.version or KFAKE_VERSION)) is not None:
        return
    if _go() is None:
        raise TargetError(f"go not found on PATH, and the kfake target builds kfake with it: {_GO_FIX}")


# --- building ---------------------------------------------------------------------------------------------------


def _source_key(*extra: str) -> str:
    digest = hashlib.sha256()
    for name in _SOURCES:
        digest.update((SOURCE_DIR / name).read_bytes())
    for part in extra:
        digest.update(part.encode())
    return digest.hexdigest()[:12]


def _version_home(version: str, cache: Path | None = None) -> Path:
    return (cache or _cache_root()) / f"kfake-{version}-{_source_key(version)}"


def _path_home(root: Path, cache: Path | None = None) -> Path:
    return (cache or _cache_root()) / f"kfake-local-{_source_key(str(root))}"


def _built(home: Path) -> Path | None:
    binary = home / _BINARY
    return binary if binary.is_file() and os.access(binary, os.X_OK) else None


def go_mod(version: str, replaces: Mapping[str, Path] | None = None) -> str:
    """Our program's go.mod: kfake at `version` with franz-go and kmsg at least at the releases the pinned kfake
    builds with; `replaces` (module path -> directory) puts a local checkout's modules in their place."""
    lines = "".join(f"replace {module} => {folder}\n" for module, folder in sorted((replaces or {}).items()))
    template = Template((SOURCE_DIR / "go.mod.template").read_text(encoding="utf-8"))
    return template.substitute(
        kfake_version=version, franz_go_version=FRANZ_GO_VERSION, kmsg_version=KMSG_VERSION, replaces=lines
    )


def _go_env() -> dict[str, str]:
    env = dict(os.environ)
    # Never a toolchain download, never a go.work of the user's, a static binary (no C compiler needed), and a
    # go.mod the build may complete (go.sum entries of a version or checkout other than the pinned one).
    env.update({"GOTOOLCHAIN": "local", "GOWORK": "off", "CGO_ENABLED": "0"})
    env["GOFLAGS"] = f"{env.get('GOFLAGS', '')} -mod=mod".strip()
    return env


def _run_go(go: str, args: list[str], work: Path, timeout: float, what: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [go, *args], cwd=work, env=_go_env(), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise ManagedProcessError(
            f"go {args[0]} did not finish {what} within {timeout:.0f} s: is the Go module proxy reachable "
            "(GOPROXY)? run again"
        ) from None
    except OSError as exc:
        raise ManagedProcessError(f"cannot run {go} ({exc}): {_GO_FIX}") from None


def _first_error(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip() and not line.startswith("go: downloading")]
    return (lines[0] if lines else "no output")[:300]


def _proxy_answer(output: str, version: str) -> str | None:
    """What the module proxy answered for `version`, where go quotes it: "403 Forbidden: This module version is not
    available." (go's first line names only the importing package)."""
    lines = [line.strip() for line in output.splitlines()]
    status = next((m.group(1) for ln in lines if version in ln and (m := re.search(r":\s*(\d{3} [\w ]+)$", ln))), "")
    said = next((ln.removeprefix("server response:").strip() for ln in lines if ln.startswith("server response:")), "")
    if status or said:
        return ": ".join(filter(None, (status, said)))[:300]
    return next((ln[:300] for ln in lines if f"@{version}:" in ln), None)


def _resolve_failure(output: str, version: str, local: Path | None) -> ManagedProcessError:
    why = _first_error(output)
    if re.search(r"requires go >= |toolchain not available|GOTOOLCHAIN=local", output):
        return ManagedProcessError(f"kfake {version} needs a newer Go than this one ({why}): install that Go or newer")
    if local is None and re.search(r"invalid version|unknown revision|not found|not available|410 Gone|40[34]", output):
        return ManagedProcessError(
            f"the Go module proxy does not serve {KFAKE_MODULE}@{version} ({_proxy_answer(output, version) or why}): "
            "pass a version it serves "
            f"(the pinned one is {KFAKE_VERSION}) or a local checkout with --target kfake=PATH"
        )
    where = f"the checkout {local}" if local is not None else f"{KFAKE_MODULE}@{version}"
    return ManagedProcessError(
        f"go mod tidy could not resolve {where} ({why}): check GOPROXY and that the module proxy is reachable"
    )


def build_kfake(home: Path, version: str, replaces: Mapping[str, Path] | None = None, *, go: str | None = None) -> Path:
    """Our program built against kfake `version` (or the checkout in `replaces`) into `home`, with a file lock
    against concurrent runs; a ManagedProcessError naming the problem and the fix when go is missing, the version
    is not served, or the build fails."""
    go = go or _go()
    if go is None:
        raise ManagedProcessError(f"go not found on PATH, and the kfake target builds kfake with it: {_GO_FIX}")
    home.parent.mkdir(parents=True, exist_ok=True)
    local = next(iter(replaces.values()), None) if replaces else None
    lock_file = home.parent / f".{home.name}.lock"
    with open(lock_file, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if replaces is None and (done := _built(home)) is not None:  # another run built it while this one waited
            return done
        home.mkdir(exist_ok=True)
        try:
            return _build_in(home, go, version, replaces, local)
        except BaseException:
            if _built(home) is None:  # a version that could not be built leaves no folder of its name in the cache
                shutil.rmtree(home, ignore_errors=True)
                lock_file.unlink(missing_ok=True)
            raise


def _build_in(home: Path, go: str, version: str, replaces: Mapping[str, Path] | None, local: Path | None) -> Path:
    """`build_kfake`'s build under its lock: in a scratch folder of `home`, the program moved into `home` at the end."""
    work = Path(tempfile.mkdtemp(prefix="build-", dir=home))
    try:
        shutil.copy2(SOURCE_DIR / "main.go", work / "main.go")
        shutil.copy2(SOURCE_DIR / "go.sum", work / "go.sum")
        (work / "go.mod").write_text(go_mod(version, replaces), encoding="utf-8")
        tidy = _run_go(go, ["mod", "tidy"], work, _RESOLVE_TIMEOUT, f"resolving kfake {version}")
        if tidy.returncode != 0:
            raise _resolve_failure(tidy.stderr + tidy.stdout, version, local)
        built = _run_go(go, ["build", "-trimpath", "-o", _BINARY, "."], work, _BUILD_TIMEOUT, "building kfake")
        if built.returncode != 0:
            where = f"the checkout {local}" if local is not None else f"kfake {version}"
            raise ManagedProcessError(
                f"go build failed against {where} ({_first_error(built.stderr + built.stdout)}): our program "
                f"calls NewCluster, MoveTopicPartition, LeaderFor and ApplyRetention, which that kfake may "
                f"lack; pass a newer kfake, or drop the version for the pinned {KFAKE_VERSION}"
            )
        for name in ("go.mod", "go.sum"):  # what was built, for a reader of the cache
            shutil.copy2(work / name, home / name)
        os.replace(work / _BINARY, home / _BINARY)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return home / _BINARY


def kfake_version(target: Target) -> str:
    """What `target` runs, for the report: "kfake <version>", or "kfake from <checkout>"."""
    if target.path is not None:
        return f"kfake from {Path(target.path).expanduser().resolve()}"
    return f"kfake {target.version or KFAKE_VERSION}"


def kfake_binary(target: Target, *, cache: Path | None = None) -> Path:
    """The program for `target` (kfake, kfake==VERSION or kfake=PATH), built on first use (a checkout: every time)."""
    if target.path is not None:
        modules = checkout_modules(Path(target.path))
        root = modules[FRANZ_GO_MODULE]
        with step(f"building kfake from {root} with go...", f"built kfake from {root}"):
            return build_kfake(_path_home(root, cache), "v0.0.0-00010101000000-000000000000", modules)
    version = target.version or KFAKE_VERSION
    home = _version_home(version, cache)
    if (built := _built(home)) is not None:
        return built
    with step(f"building kfake {version} with go...", f"built kfake {version}"):
        return build_kfake(home, version)


# --- the process and its line protocol --------------------------------------------------------------------------


class KfakeProcess(ManagedBroker):
    """Our program as a managed child: its brokers on loopback, its stdin and stdout a line protocol (`ask`), its
    stderr (kfake's log) in the log file; stopped as every managed broker is (process group), stdin closed first."""

    def __init__(
        self,
        binary: Path,
        log_dir: Path,
        *,
        brokers: int = KFAKE_BROKERS,
        ready_timeout: float = _READY_TIMEOUT,
        command_timeout: float = _COMMAND_TIMEOUT,
        description: str = "kfake",
    ) -> None:
        self.binary = binary
        self.brokers = brokers
        self.command_timeout = command_timeout
        self.ports: list[int] = []
        self.addresses: dict[int, str] = {}  # node id -> 127.0.0.1:port, from the READY line
        self._lock = threading.Lock()
        self._pending = b""
        super().__init__(
            "kfake", self._argv, log_dir, ready_timeout=ready_timeout, stop_timeout=_STOP_TIMEOUT,
            description=description,
        )  # fmt: skip

    def _argv(self, port: int) -> list[str]:
        self.ports = [port, *(free_loopback_port() for _ in range(self.brokers - 1))]
        self._pending = b""
        ports = ",".join(str(p) for p in self.ports)
        return [str(self.binary), "-brokers", str(self.brokers), "-ports", ports, "-log-level", "warn"]

    def _child_streams(self, log: BinaryIO) -> dict[str, Any]:
        return {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": log}

    def start(self) -> KfakeProcess:
        super().start()
        try:
            self.addresses = self._read_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _read_ready(self) -> dict[int, str]:
        line = self._read_line(self.ready_timeout, "its READY line")
        words = line.split()
        if not words or words[0] != "READY":
            raise self._failure(f"printed {line!r} where its READY line was due")
        addresses: dict[int, str] = {}
        for word in words[1:]:
            node, _, address = word.partition("@")
            if not node.isdigit() or not address.startswith(f"{LOOPBACK}:"):
                raise self._failure(f"named a broker {word!r}, not NODE@{LOOPBACK}:PORT")
            addresses[int(node)] = address
        wanted = [f"{LOOPBACK}:{p}" for p in self.ports]
        if list(addresses.values()) != wanted:
            raise self._failure(f"listens on {list(addresses.values())}, not on the ports it was given {wanted}")
        return addresses

    @property
    def bootstrap(self) -> str:
        """Every broker's address, the first (the one ManagedBroker probes) first: a run's bootstrap list, and the
        key under which the run finds this process (process.managed_broker_at, the failover hook)."""
        if not self.ports:
            return super().bootstrap
        return ",".join(f"{LOOPBACK}:{port}" for port in self.ports)

    def ask(self, command: str) -> tuple[bool, str]:
        """Send one command line and read its answer: (True, rest) for "OK rest", (False, why) for "ERR why"; a
        ManagedProcessError when the program is gone or does not answer within `command_timeout`."""
        with self._lock:
            proc = self._proc
            if proc is None or proc.stdin is None or not self.alive():
                raise ManagedProcessError(f"{command.split()[0]}: {self.exit_description()}")
            try:
                proc.stdin.write(f"{command}\n".encode())
                proc.stdin.flush()
            except OSError as exc:
                raise ManagedProcessError(
                    f"{command.split()[0]}: cannot write to kfake ({exc}); {self.exit_description()}"
                ) from None
            line = self._read_line(self.command_timeout, f"an answer to {command!r}")
        word, _, rest = line.partition(" ")
        if word not in ("OK", "ERR"):
            raise ManagedProcessError(
                f"kfake answered {command!r} with {line!r}, not OK or ERR: see its log {self._log_path}"
            )
        return word == "OK", rest

    def _read_line(self, timeout: float, what: str) -> str:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._failure(f"gave no {what} within {timeout:g} s")
            readable, _, _ = select.select([fd], [], [], remaining)
            if not readable:
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                raise self._failure(f"closed its stdout before {what}")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode("utf-8", errors="replace").strip()

    def set_leader(self, topic: str, partition: int, node: int) -> None:
        """Move a partition's leader (the in-process failover hook of
        conformance.targets.routes.wire_adapter.kafka_wire)."""
        ok, answer = self.ask(f"MOVE {topic} {partition} {node}")
        if not ok:
            raise ManagedProcessError(f"kfake could not move {topic}-{partition} to node {node}: {answer}")

    def stop(self) -> int | None:
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # the program stops by itself on a closed stdin; the group is stopped anyway
        code = super().stop()
        if proc is not None:
            for stream in (proc.stdout,):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        return code


def start_kfake(
    binary: Path, log_dir: Path, *, brokers: int = KFAKE_BROKERS, description: str = "kfake"
) -> KfakeProcess:
    """Our program on free loopback ports, ready (the first broker answered ApiVersions, the READY line named every
    broker); stop it with `.stop()` or in a `with` block."""
    log_dir.mkdir(parents=True, exist_ok=True)
    return KfakeProcess(binary, log_dir, brokers=brokers, description=description).start()


# --- the control plane's view -----------------------------------------------------------------------------------


class KfakeControlled:
    """The kfake cluster under the control plane (conformance.control.controlled.Controlled): leaders and
    epochs from Metadata, moves and retention through the program (see the module doc for what it does not
    declare)."""

    def __init__(self, process: KfakeProcess, *, timeout: float = 10.0) -> None:
        self.process = process
        self.timeout = timeout

    def capabilities(self) -> tuple[str, ...]:
        return KFAKE_CONTROL_CAPABILITIES

    def broker_ids(self) -> tuple[int, ...]:
        return tuple(sorted(self.process.addresses))

    def _known(self, broker: int, field: str = "path.broker", status: int = 404) -> None:
        if broker not in self.process.addresses:
            known = ", ".join(str(b) for b in self.broker_ids())
            raise ControlError(status, field, f"no broker {broker}: the brokers are {known}")

    def clock(self, broker: int) -> int:
        self._known(broker)
        return time.time_ns() // 1_000_000  # kfake reads this machine's clock

    def set_clock(self, broker: int, now_ms: int) -> int:
        self._known(broker)
        raise ControlError(
            409, "path.broker",
            "kfake reads this machine's clock (time.Now) and offers no way to set it: clock-control is not among "
            "this control plane's capabilities",
        )  # fmt: skip

    def advance_clock(self, broker: int, delta_ms: int) -> int:
        return self.set_clock(broker, 0)

    def _partition(self, topic: str, partition: int) -> PartitionMetadata:
        return partition_metadata(WireClient(self.process.bootstrap, timeout=self.timeout), topic, partition)

    def leader(self, topic: str, partition: int) -> tuple[int, int]:
        part = self._partition(topic, partition)
        return part.leader, part.leader_epoch if part.leader_epoch is not None else -1

    def move_leader(self, topic: str, partition: int, broker: int) -> tuple[int, int]:
        """kfake's MoveTopicPartition: the leader epoch goes up by one, also for a move to the current leader (as
        the model's election does); kfake answers from its new leader at once. 422 for an unknown broker."""
        self._partition(topic, partition)
        self._known(broker, "body.broker", 422)
        ok, answer = self.process.ask(f"MOVE {topic} {partition} {broker}")
        if not ok:
            raise ControlError(409, "body.broker", f"kfake could not move {topic}-{partition}: {answer}")
        return self.leader(topic, partition)

    def run_retention(self) -> int:
        """kfake's ApplyRetention on every partition, which does not say what it deleted: answered 0."""
        ok, answer = self.process.ask("RETENTION")
        if not ok:
            raise ControlError(409, "body", f"kfake could not run retention: {answer}")
        return 0

    def reset(self) -> None:
        """Every topic deleted (kfake has no clocks to put back)."""
        client = WireClient(self.process.bootstrap, timeout=self.timeout)
        try:
            topics = [t for t in client.metadata(None).topics if not t.startswith("__")]
            if topics:
                client.delete_topics(topics)
        finally:
            client.close()


# --- the opener -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunningKfake:
    """A started kfake cluster: its program, the control plane over it and the key of its failover hook."""

    process: KfakeProcess
    control_url: str
    failover: str


# The programs this process built of checkouts (a checkout's is built on every use: here once per process, not
# once when obtained and again when opened), by the checkout and the cache.
_checkouts_built: dict[tuple[str, str], Path] = {}


def obtain_kfake(target: Target, opening: Opening, *, err: IO[str] | None = None) -> Path:
    """Our program for `target`, built with go on first use (before anything starts: `kafka-conformance run` builds
    it in its own process); a TargetError naming the problem and the fix when it cannot be built (a version the Go
    module proxy does not serve, a checkout that does not build). Once per process."""
    key = (str(Path(target.path).expanduser().resolve()) if target.path is not None else "", str(_cache_root()))
    done = _checkouts_built.get(key)
    if done is not None and done.is_file():
        return done
    label = kfake_version(target)
    try:
        if target.path is not None or _built(_version_home(target.version or KFAKE_VERSION)) is None:
            (err or sys.stderr).write(f"kafka-conformance: building {label} with go (first use: about a minute)\n")
        binary = kfake_binary(target)
    except ManagedProcessError as exc:
        raise TargetError(str(exc)) from None
    if target.path is not None:
        _checkouts_built[key] = binary
    return binary


@contextlib.contextmanager
def kfake_cluster(target: Target, opening: Opening, *, err: IO[str] | None = None) -> Iterator[RunningKfake]:
    """A fresh kfake cluster for `target` (`opening.brokers` brokers, default three), built on first use, with the
    control plane over it and its failover hook registered; all stopped on the way out (also on errors). A build
    or start that fails is a TargetError naming the problem and the fix (the run cannot start: exit 2)."""
    binary = obtain_kfake(target, opening, err=err)
    try:
        process = start_kfake(
            binary, opening.log_dir, brokers=opening.brokers or KFAKE_BROKERS, description=kfake_version(target)
        )
    except ManagedProcessError as exc:
        raise TargetError(str(exc)) from None
    with process:
        control = ControlPlane(KfakeControlled(process, timeout=opening.timeout), host=LOOPBACK).start()
        key = register_failover(process)
        try:
            yield RunningKfake(process, control.url, key)
        finally:
            unregister_failover(key)
            control.stop()


@contextlib.contextmanager
def open_kfake(target: Target, opening: Opening) -> Iterator[Opened]:
    """`--target kfake[==VERSION|=PATH]`: a fresh kfake cluster for the run, stopped on the way out (also on
    errors); leaders move through its failover hook, retention through its control plane."""
    with kfake_cluster(target, opening) as running:
        factory = wire_factory(target, opening, running.process.bootstrap, failover=running.failover,
                               control_url=running.control_url)  # fmt: skip
        yield factory, [Path(running.process.log_path)]
