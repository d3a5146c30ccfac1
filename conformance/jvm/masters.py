"""Where a Spark master's executors run, which decides where the driver binds (on loopback only when every
executor is on this machine), and the session builder every Spark session of the suite starts from. Both Spark
sessions use them: the campaign engine's (conformance/campaign/engine.py) and the JVM bridge's (jvm/session.py), so
they live here, below both."""

from __future__ import annotations

import os
import re
import sys
from typing import Any

# A standalone master whose one host is this machine's loopback: its workers can only be on this machine too.
_LOOPBACK_MASTER = re.compile(r"spark://(127\.0\.0\.1|localhost):\d+")


def on_loopback(master: str) -> bool:
    """Whether every executor of `master` runs on this machine and reaches the driver on 127.0.0.1: a local master
    (local[N]), or a standalone master on loopback (conformance/campaign/standalone.py starts one)."""
    return master.startswith("local") or _LOOPBACK_MASTER.fullmatch(master) is not None


def driver_builder(session_class: Any, master: str, app: str) -> Any:
    """The builder of a Spark session for `master` (`session_class`: pyspark's SparkSession), on the conventions of
    every session the suite starts: the Python workers are this interpreter; a master on loopback binds loopback
    only (Spark would otherwise bind the host's address, and executors would reach the driver there); no UI and no
    console progress bar (the commands print progress lines of their own); Python workers reused; and no task
    retried (a task that fails is a row, never retried into a second run)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = session_class.builder.master(master).appName(app)
    if on_loopback(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    return (
        builder.config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.python.worker.reuse", "true")
        .config("spark.task.maxFailures", "1")
    )
