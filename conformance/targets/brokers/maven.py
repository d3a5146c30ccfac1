"""A Java program's runtime jars from Maven Central, fetched once into the suite's cache: what the managed Apache
Kafka brokers and their ZooKeeper share.

A runtime is a folder `<home>` holding the `pom.xml` that names its dependencies and the `lib/` that
`mvn dependency:copy-dependencies` filled (the classpath is `lib/*`). A complete fetch is marked (`.complete`) and
reused offline; concurrent runs take a file lock; a fetch that fails or is stopped leaves nothing behind, so a
folder never reads as a runtime that was had.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.progress import step
from conformance.targets.brokers.process import ManagedProcessError


@dataclass(frozen=True)
class Dependency:
    """One `<dependency>` of a runtime's pom: Maven coordinates, and the transitive ones left out
    (`group:artifact` each)."""

    group: str
    artifact: str
    version: str
    exclusions: tuple[str, ...] = ()

    def xml(self) -> str:
        excluded = "".join(
            f"<exclusion><groupId>{g}</groupId><artifactId>{a}</artifactId></exclusion>"
            for g, a in (e.split(":") for e in self.exclusions)
        )
        exclusions = f"<exclusions>{excluded}</exclusions>" if excluded else ""
        return (
            f"    <dependency><groupId>{self.group}</groupId><artifactId>{self.artifact}</artifactId>"
            f"<version>{self.version}</version>{exclusions}</dependency>"
        )


def pom(name: str, version: str, dependencies: Sequence[Dependency]) -> str:
    """The pom of a runtime called `name` at `version` that depends on `dependencies`."""
    deps = "\n".join(d.xml() for d in dependencies)
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n  <modelVersion>4.0.0</modelVersion>\n'
        f"  <groupId>kafka-conformance</groupId><artifactId>{name}</artifactId><version>{version}</version>\n"
        f"  <dependencies>\n{deps}\n  </dependencies>\n</project>\n"
    )


def complete(home: Path) -> bool:
    return (home / ".complete").is_file()


def resolve(
    home: Path,
    pom_text: str,
    *,
    what: str,
    marker: str,
    mvn: Callable[[], str],
    failure: Callable[[str], str],
    timeout: float,
) -> Path:
    """The `lib/` of the runtime at `home` whose pom is `pom_text`, fetched with Maven on first use under a lock;
    `what` names it in the progress line ("Apache Kafka 2.8.2"), `marker` is a glob a complete `lib/` holds, `mvn`
    finds Maven (or raises), `failure` turns Maven's output into the one line of a ManagedProcessError."""
    lib = home / "lib"
    if complete(home):
        return lib
    home.parent.mkdir(parents=True, exist_ok=True)
    lock_file = home.parent / f".{home.name}.lock"
    with open(lock_file, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if complete(home):  # another run fetched it while this one waited
            return lib
        try:
            with step(f"fetching {what} from Maven Central...", f"fetched {what}"):
                _fetch(home, pom_text, what, marker, mvn(), failure, timeout)
        except BaseException:
            shutil.rmtree(home, ignore_errors=True)
            lock_file.unlink(missing_ok=True)
            raise
    return lib


def _fetch(
    home: Path, pom_text: str, what: str, marker: str, mvn: str, failure: Callable[[str], str], timeout: float
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "pom.xml").write_text(pom_text, encoding="utf-8")
    staging = Path(tempfile.mkdtemp(prefix="lib-", dir=home))
    command = [mvn, "-q", "-B", "-f", str(home / "pom.xml"), "dependency:copy-dependencies",
               f"-DoutputDirectory={staging}", "-DincludeScope=runtime"]  # fmt: skip
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise ManagedProcessError(
            f"Maven did not fetch {what} within {timeout:.0f} s: is Maven Central reachable (a proxy in "
            "~/.m2/settings.xml)?"
        ) from None
    if done.returncode != 0 or not any(staging.glob(marker)):
        raise ManagedProcessError(failure(done.stdout + done.stderr))
    lib = home / "lib"
    shutil.rmtree(lib, ignore_errors=True)
    staging.rename(lib)
    (home / ".complete").write_text(pom_text, encoding="utf-8")
