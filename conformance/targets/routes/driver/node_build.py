"""Node drivers (node/<driver>/driver.js): installed on first use with npm into a folder of the cache, the library at
a version npm serves or linked from a local checkout, and run with the node on PATH.

The folder is keyed by the driver's source and the library's version (or the checkout's resolved path: npm links a
`file:` dependency, so the checkout's edits are live and need no reinstall). It holds the driver's files beside the
package.json that depends on the library, so that `require('kafkajs')` resolves in its node_modules, and the driver
reads that package.json to report a checkout's path as its version. npm runs with the user's own configuration
(.npmrc, npm_config_* in the environment: a registry mirror, a proxy); a lock file serialises concurrent runs, and
`.complete` marks a finished install.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from conformance.progress import step
from conformance.targets.kinds.library import Library
from conformance.targets.routes.driver import CACHE, SOURCES, DriverUnavailable, VersionNotServed
from conformance.targets.routes.driver.driver_builds import BuildLock, cache_key, sources_digest

MIN_NODE_MAJOR = 14  # KafkaJS 2.x's engines field
NPM_LOG = "npm-install.log"
_NOT_SERVED = re.compile(r"\b(E404|ETARGET)\b|No matching version found|is not in this registry")
_NPM_ERROR = re.compile(r"^npm (?:ERR!|error) (?!code\b)(.+)$", re.MULTILINE)


def install_node_driver(spec: Library, *, version: str | None, path: str | None, timeout: float) -> list[str]:
    """`Build` for a Node driver: the argv that runs `spec`'s driver.js against `spec.package` at `version` (None:
    spec.pinned) or from the checkout at `path`, installed into the cache first if it is not there."""
    node = _tool("node")
    _check_node(node)
    npm = _tool("npm")
    source = SOURCES / spec.source
    if path is not None:
        checkout = _checkout(spec, path)
        dependency, key = f"file:{checkout}", cache_key("path", str(checkout))
        wanted = str(checkout)
    else:
        chosen = version or spec.pinned
        if not chosen:
            raise DriverUnavailable(
                f"no version of {spec.package} to install: give one, --target client:{spec.name}==V"
            )
        dependency, key = chosen, cache_key("version", chosen)
        wanted = f"{spec.package}@{chosen}"
    manifest = _manifest(spec, dependency)
    folder = CACHE / "node" / f"{spec.name}-{cache_key(key, sources_digest(source), manifest)}"
    with BuildLock(folder) as lock:
        if not (folder / ".complete").is_file():
            try:
                with step(f"installing {wanted} with npm...", f"installed {wanted}"):
                    _install(spec, npm, source, folder, manifest, wanted=wanted, timeout=timeout)
            except VersionNotServed:
                lock.discard()
                raise
    return [node, str(folder / "driver.js")]


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise DriverUnavailable(
            f"{name} is not on PATH: the Node drivers need Node.js {MIN_NODE_MAJOR} or later with npm "
            "(https://nodejs.org, or your system's nodejs and npm packages)"
        )
    return found


def _check_node(node: str) -> None:
    try:
        shown = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DriverUnavailable(
            f"{node} --version failed ({exc}): reinstall Node.js {MIN_NODE_MAJOR} or later"
        ) from None
    match = re.match(r"v(\d+)\.", shown.strip())
    if match is None or int(match.group(1)) < MIN_NODE_MAJOR:
        raise DriverUnavailable(
            f"{node} is Node.js {shown.strip() or 'of an unknown version'}: the Node drivers need {MIN_NODE_MAJOR} or "
            "later (https://nodejs.org)"
        )


def _checkout(spec: Library, path: str) -> Path:
    """A local checkout of the library: a folder whose package.json names it."""
    checkout = Path(path).expanduser().resolve()
    manifest = checkout / "package.json"
    try:
        name = json.loads(manifest.read_text(encoding="utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        name = None
    if name != spec.package:
        raise DriverUnavailable(
            f"{path!r} is not a checkout of {spec.package}: its package.json does not name it "
            f"(=PATH is a local clone of the library, e.g. git clone https://github.com/tulios/kafkajs)"
        )
    return checkout


def _manifest(spec: Library, dependency: str) -> str:
    return json.dumps(
        {
            "name": f"kts-{spec.name}-driver",
            "private": True,
            "description": "kafka-timestamp-conformance's driver of the client driver protocol, installed on first use",
            "dependencies": {spec.package: dependency},
        },
        indent=2,
    ) + "\n"


def _install(
    spec: Library,
    npm: str,
    source: Path,
    folder: Path,
    manifest: str,
    *,
    wanted: str,
    timeout: float,
) -> None:
    shutil.rmtree(folder, ignore_errors=True)  # a partial install of a run that was stopped
    folder.mkdir(parents=True)
    for file in source.iterdir():
        if file.is_file() and file.name != "package.json":
            shutil.copy2(file, folder / file.name)
    (folder / "package.json").write_text(manifest, encoding="utf-8")
    log = folder / NPM_LOG
    env = {**os.environ, "npm_config_update_notifier": "false"}
    command = [npm, "install", "--no-audit", "--no-fund", "--omit=dev"]
    try:
        with log.open("w") as out:
            done = subprocess.run(command, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=timeout, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise DriverUnavailable(
            f"npm install {wanted} did not finish within {timeout:g} s: is the npm registry reachable (npm config get "
            f"registry)? npm's log: {log}"
        ) from None
    text = log.read_text(errors="replace")
    if done.returncode != 0:
        if _NOT_SERVED.search(text):
            raise VersionNotServed(
                f"{wanted} is not served by npm: `npm view {spec.package} versions` lists the versions"
            )
        first = _NPM_ERROR.search(text)
        shown = first.group(1).strip()[:200] if first else f"exit status {done.returncode}"
        raise DriverUnavailable(f"npm install {wanted} failed ({shown}): see {log}")
    if not (folder / "node_modules" / spec.package / "package.json").is_file():
        raise DriverUnavailable(f"npm install {wanted} left no node_modules/{spec.package}: see {log}")
    (folder / ".complete").write_text(wanted + "\n", encoding="utf-8")
