"""The command that runs a driver: built or installed on first use by its language's Build (go_build.py,
node_build.py, python_build below), or a user's own executable (`client:driver=PATH`), and what is asked of a
version or a path before anything is built."""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conformance.errors import TargetError
from conformance.progress import step
from conformance.targets.kinds.library import Library
from conformance.targets.libraries import LIBRARIES
from conformance.targets.routes.driver import CACHE, Build, DriverUnavailable, VersionNotServed

# A first build fetches the library and its dependencies from the registry and compiles them (Go: about 30 s for
# franz-go on two cores); a cached one costs a stat.
BUILD_TIMEOUT = 900.0
# the folder that holds conformance/ (a checkout or site-packages)
PROJECT_ROOT = Path(__file__).resolve().parents[4]


def driver_spec(library: str) -> Library:
    try:
        return LIBRARIES[library]
    except KeyError:
        raise TargetError(f"no driver for {library!r}: the drivers are {', '.join(LIBRARIES)}") from None


def driver_title(library: str) -> str:
    """How messages name a driver: "the franz-go driver", "your driver"."""
    spec = LIBRARIES.get(library)
    return "your driver" if spec is not None and spec.build is None else f"the {library} driver"


def driver_command(library: str, *, version: str | None, path: str | None, timeout: float = BUILD_TIMEOUT) -> list[str]:
    """The argv that runs the driver of `library` at `version` (None: its pinned one) or from the local checkout
    `path`, built first if it is not in the cache. A TargetError with one line naming the fix otherwise."""
    spec = driver_spec(library)
    if spec.build is None:
        return [own_executable(library, path)]
    module, _, function = spec.build.partition(":")
    build: Build = getattr(importlib.import_module(module), function)
    try:
        return build(spec, version=version, path=path, timeout=timeout)
    except DriverUnavailable as exc:
        raise TargetError(str(exc)) from None


def own_executable(library: str, path: str | None) -> str:
    """A user's driver: an executable file (`client:driver=PATH`)."""
    if path is None:
        raise TargetError(
            f"client:{library} runs your own driver: give its executable, --target client:{library}=PATH "
            "(docs/driver-protocol.md says what it speaks)"
        )
    found = Path(path).expanduser()
    if not found.is_file():
        raise TargetError(f"driver {path!r} is not a file: give the path of your driver's executable (=PATH)")
    if not os.access(found, os.X_OK):
        raise TargetError(
            f"driver {path!r} is not executable: chmod +x it (or wrap its interpreter in a two-line shell script)"
        )
    return str(found.resolve())


def cache_key(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part if isinstance(part, bytes) else part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def sources_digest(folder: Path) -> bytes:
    """The bytes of every file under `folder`, in a stable order (a driver's source, for its cache key)."""
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(file.relative_to(folder)).encode("utf-8"))
        digest.update(file.read_bytes())
    return digest.digest()


class BuildLock:
    """An exclusive lock on a build folder's lock file: concurrent runs (pytest-xdist workers, Spark tasks) build
    once, the others wait and find it complete."""

    def __init__(self, folder: Path) -> None:
        folder.parent.mkdir(parents=True, exist_ok=True)
        self._folder = folder
        self._path = folder.parent / f"{folder.name}.lock"
        self._file: object = None

    def discard(self, *also: Path) -> None:
        """Remove the build's folder, its lock file and `also` (a log beside it), while the lock is held: for a
        build that cannot be had (a version the registry does not serve), which would otherwise stay in the cache.
        """
        shutil.rmtree(self._folder, ignore_errors=True)
        for path in (self._path, *also):
            path.unlink(missing_ok=True)

    def __enter__(self) -> BuildLock:
        handle = self._path.open("w")
        fcntl.flock(handle, fcntl.LOCK_EX)
        self._file = handle
        return self

    def __exit__(self, *exc: object) -> None:
        handle = self._file
        if handle is not None:
            fcntl.flock(handle, fcntl.LOCK_UN)  # type: ignore[arg-type]
            handle.close()  # type: ignore[attr-defined]


# -- Python: the Python driver (python_driver.py) with a library version installed into the cache


def build_python_driver(spec: Library, *, version: str | None, path: str | None, timeout: float) -> list[str]:
    """The Python driver (python_driver.py) serving the in-process adapter of `spec.name`, with the library at
    `version` or from the checkout `path` installed into the cache and put first on its path (before the
    site-packages that hold the pinned version)."""
    site = install_python_library(spec, version=version, path=path, timeout=timeout)
    paths = [str(site)] if site is not None else []
    paths.append(str(PROJECT_ROOT))
    return ["/usr/bin/env", f"PYTHONPATH={os.pathsep.join(paths)}", sys.executable, "-m",
            "conformance.targets.routes.driver.python_driver", spec.name]  # fmt: skip


def install_python_library(spec: Library, *, version: str | None, path: str | None, timeout: float) -> Path | None:
    """The folder holding `spec.package` at `version` or built from the checkout `path` (pip install --target, once,
    into the cache), or None for the installed pinned version."""
    if version is None and path is None:
        return None
    if path is not None:
        checkout = Path(path).expanduser().resolve()
        if not (checkout / "pyproject.toml").is_file() and not (checkout / "setup.py").is_file():
            raise DriverUnavailable(
                f"{path!r} is not a checkout of {spec.package}: it has no pyproject.toml or setup.py (=PATH is a "
                "local clone of the library)"
            )
        requirement, key = str(checkout), cache_key("path", str(checkout), str(checkout.stat().st_mtime_ns))
    else:
        requirement, key = f"{spec.package}=={version}", cache_key("version", spec.package, str(version))
    folder = CACHE / "python" / f"{spec.name}-{key}"
    with BuildLock(folder) as lock:
        if (folder / ".complete").is_file():
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        log = folder.with_suffix(".log")
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                   "--target", str(folder), requirement]  # fmt: skip
        try:
            with log.open("w") as out, step(f"installing {requirement} with pip...", f"installed {requirement}"):
                done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise DriverUnavailable(
                f"pip install {requirement} did not finish within {timeout:g} s: see {log}"
            ) from None
        if done.returncode != 0:
            text = log.read_text(errors="replace")
            if "No matching distribution" in text or "Could not find a version" in text:
                lock.discard(log)
                raise VersionNotServed(
                    f"{spec.package}=={version} is not served by PyPI: `pip index versions {spec.package}` lists "
                    "the versions"
                )
            first = next((line for line in text.splitlines() if "ERROR" in line or "error" in line), "")
            raise DriverUnavailable(f"pip install {requirement} failed ({first.strip()[:200]}): see {log}")
        (folder / ".complete").write_text(requirement)
    return folder
