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
from pathlib import Path

from conformance.jvm.locate import JvmUnavailable, java_tool, kafka_clients_jar, pyspark_jars, spark_sql_api_jar

SOURCES = Path(__file__).parent / "java"
JAR_NAME = "kts-bridge.jar"
COMPILE_TIMEOUT_S = 120


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
        command = [
            str(javac), "--release", "17", "-nowarn", "-encoding", "UTF-8",
            "-cp", os.pathsep.join([str(kafka), str(spark_api)]),
            "-d", str(classes), *map(str, sources),
        ]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise JvmUnavailable(
                f"javac did not finish within {COMPILE_TIMEOUT_S} s compiling the bridge: is the machine "
                "overloaded? try again"
            ) from None
        if done.returncode != 0:
            first = next((line for line in done.stderr.splitlines() if line.strip()), "no output")
            raise JvmUnavailable(f"javac failed to compile the bridge ({first}): check that {javac} is JDK 17 or newer")
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
