"""Where a Spark master's executors run, which decides where the driver binds: on loopback only when every
executor is on this machine. Both Spark sessions ask it: the campaign engine's (conformance/campaign/engine.py) and
the JVM bridge's (jvm/session.py), so it lives here, below both."""

from __future__ import annotations

import re

# A standalone master whose one host is this machine's loopback: its workers can only be on this machine too.
_LOOPBACK_MASTER = re.compile(r"spark://(127\.0\.0\.1|localhost):\d+")


def on_loopback(master: str) -> bool:
    """Whether every executor of `master` runs on this machine and reaches the driver on 127.0.0.1: a local master
    (local[N]), or a standalone master on loopback (conformance/campaign/standalone.py starts one)."""
    return master.startswith("local") or _LOOPBACK_MASTER.fullmatch(master) is not None
