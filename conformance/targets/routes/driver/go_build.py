"""Building a Go driver (`Build` of conformance.targets.routes.driver): the driver's folder (go/<driver>/, a main
package whose go.mod pins its library) and the shared go/driverkit, copied side by side into a build folder under CACHE,
then `go get` of the asked version (or a `replace` by a local checkout), `go mod tidy` and `go build`.

The build folder's name is a hash of the sources, the module, the version (or the checkout's resolved path) and
the Go version, so that a change to any of them builds afresh and an unchanged one costs a hash; a `.complete`
marker says the build finished, and a file lock makes concurrent runs build once. A checkout's driver is rebuilt
on every use (its files may have changed; go's build cache keeps that to a second or so). `go get` rather than an
edit of the require line, so that the driver's other modules of the same library (franz-go's kadm and kmsg) move
down with an older version instead of pulling it back up.

The binary reports the library version it was built with through runtime/debug.ReadBuildInfo (driverkit's
ModuleVersion): the module version, or the checkout's path. Go talks only to the user's own GOPROXY; the build
runs with GOTOOLCHAIN=local (no toolchain download), GOWORK=off (a user's go.work must not reach into the build)
and -mod=mod.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from conformance.progress import step as progress_step
from conformance.targets.kinds.library import Library
from conformance.targets.routes.driver import CACHE, SOURCES, DriverUnavailable, VersionNotServed
from conformance.targets.routes.driver.driver_builds import BuildLock, cache_key, sources_digest

GO_FIX = "install Go 1.26+ (https://go.dev/dl/) or put it on PATH"
KIT = "driverkit"
_SOURCE_SUFFIXES = (".go", ".mod", ".sum")
# What go prints when the proxy does not serve a version (an unknown tag, a malformed one, a 404/410; a
# filtering mirror answers 403 "This module version is not available").
_NOT_SERVED = re.compile(
    r"unknown revision|invalid version|no matching versions|not found|not available|40[34] |410 Gone"
)
_TOO_OLD = re.compile(r"requires go >= (\S+) \(running go ([^;)\s]+)")
_COMPILER_ERROR = re.compile(r"\.go:\d+(:\d+)?: ")
_MODULE = re.compile(r"^module\s+(\S+)", re.MULTILINE)
_REQUIRE = re.compile(r"^\s*(?:require\s+)?([\w.\-~/]+)\s+v\S+", re.MULTILINE)


def build_go_driver(spec: Library, *, version: str | None, path: str | None, timeout: float) -> list[str]:
    """The command that runs the driver of `spec` built against its library at `version` (None: spec.pinned) or
    the checkout at `path`; built once per sources, version and Go (see the module doc)."""
    go = shutil.which("go")
    if go is None:
        raise DriverUnavailable(f"the {spec.name} driver is built with Go and `go` is not on PATH: {GO_FIX}")
    deadline = time.monotonic() + timeout
    env = _go_env()
    checkout = _checkout(spec, path) if path is not None else None
    wanted = None if checkout is not None else (version or spec.pinned)
    try:
        go_version = _run([go, "env", "GOVERSION"], cwd=None, env=env, deadline=deadline).strip()
    except _GoFailed as failed:
        raise DriverUnavailable(f"`{go} env GOVERSION` failed ({failed.first_error}): {GO_FIX}") from None
    source = SOURCES / spec.source
    key = build_key(source, spec.package, wanted or "", str(checkout or ""), go_version)
    root = CACHE / "go" / f"{spec.name}-{key}"
    binary = root / "bin" / f"kts-{spec.name}-driver"
    if (root / ".complete").exists() and checkout is None:
        return [str(binary)]
    root.parent.mkdir(parents=True, exist_ok=True)
    with BuildLock(root) as lock:
        module_dir = root / source.name
        step = _Steps(go, module_dir, env, deadline, root / "build.log", spec)
        if (root / ".complete").exists():
            if checkout is not None:  # the checkout may have changed since: go's own build cache makes this cheap
                step.run("build", "-trimpath", "-o", str(binary), ".")
            return [str(binary)]
        what = f"the {spec.name} driver against {spec.package}@{wanted}" if checkout is None else (
            f"the {spec.name} driver against {checkout}")
        with progress_step(f"building {what} with go...", f"built {what}"):
            shutil.rmtree(root, ignore_errors=True)
            _copy_sources(source, root)
            try:
                if checkout is not None:
                    for module, folder in _replacements(spec.package, checkout, module_dir / "go.mod"):
                        step.run("mod", "edit", f"-replace={module}={folder}")
                elif wanted != spec.pinned:
                    step.run("get", f"{spec.package}@{wanted}", version=wanted)
                step.run("mod", "tidy", version=wanted)
            except VersionNotServed:
                lock.discard()  # nothing to keep: the proxy does not have that version
                raise
            step.run("build", "-trimpath", "-o", str(binary), ".")
            (root / ".complete").write_text(f"{spec.package} {wanted or checkout}\n")
    return [str(binary)]


class _Steps:
    """The go commands of one build, each bounded by what is left of the build's time and logged to `log`; a
    failure is a DriverUnavailable naming its cause."""

    def __init__(self, go: str, cwd: Path, env: dict[str, str], deadline: float, log: Path, spec: Library):
        self.go, self.cwd, self.env, self.deadline, self.log, self.spec = go, cwd, env, deadline, log, spec

    def run(self, *args: str, version: str | None = None) -> None:
        try:
            _run([self.go, *args], cwd=self.cwd, env=self.env, deadline=self.deadline, log=self.log)
        except _GoFailed as failed:
            unavailable = VersionNotServed if _not_served(failed, version) else DriverUnavailable
            raise unavailable(self._explain(failed, version)) from None

    def _explain(self, failed: _GoFailed, version: str | None) -> str:
        package, name = self.spec.package, self.spec.name
        if failed.timed_out:
            return (f"building the {name} driver took longer than its time (`go {failed.step}`): a slow module "
                    f"download? full log: {self.log}")
        too_old = _TOO_OLD.search(failed.output)
        if too_old:
            return (f"the {name} driver needs Go {too_old.group(1)} or later and `go` is {too_old.group(2)}: "
                    f"{GO_FIX}")
        if _not_served(failed, version):
            return (f"{package}@{version} is not served by the Go module proxy: pick one of "
                    f"`go list -m -versions {package}`")
        return f"`go {failed.step}` of the {name} driver failed: {failed.first_error} (full log: {self.log})"


def _not_served(failed: _GoFailed, version: str | None) -> bool:
    return version is not None and failed.step in ("get", "mod") and bool(_NOT_SERVED.search(failed.output))


class _GoFailed(Exception):
    def __init__(self, step: str, output: str, *, timed_out: bool = False) -> None:
        self.step, self.output, self.timed_out = step, output, timed_out
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        # A compiler's "file.go:line:col: message" first, then go's own "go: ..." lines, then whatever it said.
        compiled = [line for line in lines if _COMPILER_ERROR.search(line)]
        said = [line for line in lines if line.startswith("go: ")]
        self.first_error = (compiled or said or lines or ["(no output)"])[0]
        super().__init__(self.first_error)


def _run(command: list[str], *, cwd: Path | None, env: dict[str, str], deadline: float, log: Path | None = None
         ) -> str:
    left = deadline - time.monotonic()
    step = command[1]
    if left <= 0:
        raise _GoFailed(step, "", timed_out=True)
    try:
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=left, check=False)
    except subprocess.TimeoutExpired as expired:
        output = _text(expired.stdout) + _text(expired.stderr)
        _append(log, command, output + "\n(timed out)")
        raise _GoFailed(step, output, timed_out=True) from None
    output = done.stdout + done.stderr
    _append(log, command, output)
    if done.returncode != 0:
        raise _GoFailed(step, output)
    return done.stdout


def _text(value: str | bytes | None) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else (value or "")


def _append(log: Path | None, command: list[str], output: str) -> None:
    if log is not None:
        with log.open("a") as out:
            out.write(f"$ {' '.join(command)}\n{output}\n")


def _go_env() -> dict[str, str]:
    """The user's environment (their GOPROXY, GOPATH, GOMODCACHE) with what a reproducible driver build needs."""
    env = dict(os.environ)
    flags = [f for f in env.get("GOFLAGS", "").split() if not f.startswith("-mod=")]
    env["GOFLAGS"] = " ".join([*flags, "-mod=mod"])
    env["GOTOOLCHAIN"] = "local"
    env["GOWORK"] = "off"
    return env


def _checkout(spec: Library, path: str) -> Path:
    """The resolved folder of a local checkout of spec.package: its go.mod must name that module."""
    folder = Path(path).expanduser().resolve()
    go_mod = folder / "go.mod"
    module = _MODULE.search(go_mod.read_text()) if go_mod.is_file() else None
    if module is None or module.group(1) != spec.package:
        found = f"its go.mod names {module.group(1)}" if module else "it has no go.mod"
        raise DriverUnavailable(f"{path} is not a checkout of {spec.package} ({found}): pass the folder whose "
                                f"go.mod says `module {spec.package}`")
    return folder


def _replacements(package: str, checkout: Path, go_mod: Path) -> list[tuple[str, Path]]:
    """`package` by the checkout, and each of the driver's other modules of the same repository (franz-go's
    pkg/kadm, pkg/kmsg) by the checkout's copy of it where the checkout has one."""
    required = set(_REQUIRE.findall(go_mod.read_text()))
    out = [(package, checkout)]
    for nested in sorted(checkout.glob("*/*/go.mod")) + sorted(checkout.glob("*/go.mod")):
        module = _MODULE.search(nested.read_text())
        if module and module.group(1).startswith(package + "/") and module.group(1) in required:
            out.append((module.group(1), nested.parent))
    return out


def _copy_sources(source: Path, root: Path) -> None:
    """The driver's folder and driverkit side by side under `root`, as they are in the sources (the driver's go.mod
    finds driverkit at ../driverkit)."""
    for folder in (source, source.parent / KIT):
        target = root / folder.name
        target.mkdir(parents=True)
        for file in _source_files(folder):
            shutil.copy2(file, target / file.name)


def _source_files(folder: Path) -> list[Path]:
    return sorted(f for f in folder.iterdir() if f.is_file() and f.name.endswith(_SOURCE_SUFFIXES))


def build_key(source: Path, *parts: str) -> str:
    """The build folder's key: the driver's sources and driverkit's, then `parts` (module, version, checkout, Go)."""
    return cache_key(sources_digest(source), sources_digest(source.parent / KIT), *parts)
