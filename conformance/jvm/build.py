"""Our own Java helper (conformance/jvm/java/kts/bridge/*.java), compiled once and cached.

The sources ship with the package. `bridge_jar()` compiles them with javac against kafka-clients.jar and the
Spark SQL API jar into `<cache>/jvm/<key>/kts-bridge.jar`, where `<cache>` is `$XDG_CACHE_HOME/kafka-conformance`
(default `~/.cache/kafka-conformance`) and `<key>` hashes the sources, the kafka-clients jar and the Spark jar,
so a changed source or jar builds anew and an unchanged one is reused. Two processes building at once do not
collide: each compiles in its own temporary directory and renames it into place; the first one wins.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

from conformance.jvm.locate import JvmUnavailable, java_tool, kafka_clients_jar, pyspark_jars, spark_sql_api_jar

SOURCES = Path(__file__).parent / "java"
JAR_NAME = "kts-bridge.jar"
COMPILE_TIMEOUT_S = 120


class JavacFailed(Exception):
    """javac did not compile: its exit `status` (None where it ran out of time) and the `first` line it wrote to
    stderr ("" where it wrote none), for the caller's own sentence."""

    def __init__(self, status: int | None, first: str) -> None:
        super().__init__(first or f"javac exit {status}")
        self.status = status
        self.first = first


def compile_java(javac: str | Path, classpath: str, out: Path, sources: Sequence[Path], timeout: float) -> None:
    """Compile `sources` for Java 17 (warnings off) against `classpath` into the folder `out`, within `timeout`
    seconds; JavacFailed where javac fails or runs out of time. What the bridge and the Kafka launcher share."""
    command = [str(javac), "--release", "17", "-nowarn", "-encoding", "UTF-8", "-cp", classpath, "-d", str(out),
               *map(str, sources)]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise JavacFailed(None, "") from None
    if done.returncode != 0:
        raise JavacFailed(done.returncode, next((line for line in done.stderr.splitlines() if line.strip()), ""))


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-conformance" / "jvm"


def source_files() -> list[Path]:
    return sorted(SOURCES.rglob("*.java"))


def _digest(paths: list[Path], jars: list[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.relative_to(SOURCES).as_posix().encode())
        h.update(path.read_bytes())
    for jar in jars:
        h.update(jar.name.encode())
        with jar.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


def bridge_jar() -> Path:
    """The compiled bridge jar (built on first use), or JvmUnavailable naming the fix."""
    sources = source_files()
    if not sources:
        raise JvmUnavailable(
            f"the bridge's Java sources are missing from {SOURCES}: reinstall kafka-timestamp-conformance"
        )
    kafka = kafka_clients_jar()
    spark_api = spark_sql_api_jar(pyspark_jars())
    target_dir = cache_root() / _digest(sources, [kafka, spark_api])
    jar = target_dir / JAR_NAME
    if jar.is_file():
        return jar
    javac = java_tool("javac")
    target_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="build-", dir=target_dir.parent))
    try:
        classes = work / "classes"
        classes.mkdir()
        try:
            compile_java(javac, os.pathsep.join([str(kafka), str(spark_api)]), classes, sources, COMPILE_TIMEOUT_S)
        except JavacFailed as failed:
            if failed.status is None:
                raise JvmUnavailable(
                    f"javac did not finish within {COMPILE_TIMEOUT_S} s compiling the bridge: is the machine "
                    "overloaded? try again"
                ) from None
            first = failed.first or "no output"
            raise JvmUnavailable(
                f"javac failed to compile the bridge ({first}): check that {javac} is JDK 17 or newer"
            ) from None
        built = work / JAR_NAME
        with zipfile.ZipFile(built, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nCreated-By: kafka-conformance\r\n\r\n")
            for path in sorted(classes.rglob("*.class")):
                archive.write(path, path.relative_to(classes).as_posix())
        staged = work / "out"
        staged.mkdir()
        built.replace(staged / JAR_NAME)
        try:
            staged.rename(target_dir)
        except OSError:
            if not jar.is_file():  # another process won the race with a complete jar; anything else is an error
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return jar
