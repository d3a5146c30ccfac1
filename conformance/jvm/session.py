"""One Spark session per process with kafka-clients.jar and the bridge on `spark.jars`, and py4j access to it.

The conventions of every Spark session of the suite apply (jvm/masters.py, `driver_builder`): PYSPARK_PYTHON is this
interpreter, a master on loopback (local[N], spark://127.0.0.1:PORT) binds loopback only, no UI, no console
progress bar, no task retries.
"""

from __future__ import annotations

import atexit
import subprocess
import threading
from typing import Any

from conformance.jvm.build import bridge_jar
from conformance.jvm.locate import PYSPARK_MISSING, JvmUnavailable, java_tool, kafka_clients_jar
from conformance.jvm.masters import driver_builder

BRIDGE_CLASS = "kts.bridge.RecordsBridge"
# Spark SQL names of the bridge's UDFs (registered by `register_udfs`), each returning binary.
UDFS = {
    "kts_records_oracle": "kts.bridge.OracleUdf",
    "kts_records_build": "kts.bridge.BuildUdf",
    "kts_records_read": "kts.bridge.ReadUdf",
    "kts_records_down_convert": "kts.bridge.DownConvertUdf",
}

_lock = threading.Lock()
_session: Any = None
_master: str | None = None
_java_checked = False


def check_java() -> None:
    """Java 17+ is there (Spark 4 needs it), or JvmUnavailable naming the fix. Runs `java -version` once."""
    global _java_checked
    if _java_checked:
        return
    java = java_tool("java")
    try:
        done = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise JvmUnavailable(f"{java} -version failed ({exc}): install Java 17 or newer, or set JAVA_HOME") from None
    first = (done.stderr or done.stdout).splitlines()[0] if (done.stderr or done.stdout) else ""
    major = _java_major(first)
    if major is not None and major < 17:
        raise JvmUnavailable(
            f"{java} is Java {major} ({first.strip()}): Spark and the bridge need Java 17 or newer; set JAVA_HOME"
        )
    _java_checked = True


def _java_major(version_line: str) -> int | None:
    # `openjdk version "17.0.15" 2025-04-15`, `java version "1.8.0_392"`
    quoted = version_line.split('"')
    if len(quoted) < 2:
        return None
    parts = quoted[1].split(".")
    try:
        major = int(parts[0])
        return int(parts[1]) if major == 1 and len(parts) > 1 else major
    except ValueError:
        return None


def spark_session(master: str = "local[2]", app: str = "kafka-conformance jvm") -> Any:
    """The process's Spark session with kafka-clients.jar and the bridge on spark.jars (started on first call).

    A second call returns the same session (its master is the first call's; asking for another master while it
    runs is an error). Stop it with `stop()`; it is stopped at interpreter exit otherwise."""
    global _session, _master
    with _lock:
        if _session is not None:
            if master != _master:
                raise JvmUnavailable(
                    f"a Spark session with --master {_master} is already running in this process: stop it first "
                    "(conformance.jvm.stop())"
                )
            return _session
        check_java()
        jars = [kafka_clients_jar(), bridge_jar()]
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise JvmUnavailable(PYSPARK_MISSING) from None
        if SparkSession.getActiveSession() is not None:
            raise JvmUnavailable(
                "another Spark session (without kafka-clients.jar) is running in this process: stop it before "
                "conformance.jvm.spark_session()"
            )
        try:
            builder = driver_builder(SparkSession, master, app)
            session = builder.config("spark.jars", ",".join(str(j) for j in jars)).getOrCreate()
        except Exception as exc:  # Py4J and JVM start-up errors: one line, not a Java trace
            raise JvmUnavailable(f"Spark did not start with --master {master}: {str(exc).splitlines()[0]}") from None
        session.sparkContext.setLogLevel("ERROR")
        _session, _master = session, master
        return session


def jvm() -> Any:
    """The py4j view of the driver's JVM (`jvm().kts.bridge.RecordsBridge`, `jvm().org.apache.kafka...`),
    starting the session (local[2]) if none runs."""
    return spark_session(_master or "local[2]").sparkContext._jvm


def bridge() -> Any:
    """The bridge class (`RecordsBridge`) through py4j."""
    return jvm().kts.bridge.RecordsBridge


def register_udfs(session: Any) -> None:
    """Register the bridge's Java UDFs (UDFS) with `session` so SQL and DataFrames can call them."""
    from pyspark.sql.types import BinaryType

    for name, cls in UDFS.items():
        session.udf.registerJavaFunction(name, cls, BinaryType())


def stop() -> None:
    """Stop the process's session, if any (the next spark_session() starts a new one)."""
    global _session, _master
    with _lock:
        if _session is not None:
            try:
                _session.stop()
            finally:
                _session, _master = None, None


atexit.register(stop)
