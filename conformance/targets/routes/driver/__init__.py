"""The driver route: client and codec libraries in any language, driven through the driver protocol
(docs/driver-protocol.md, protocol.schema.json beside this module).

A driver is a small program of ours in the library's language (go/<driver>/, node/<driver>/, java/<driver>/), built
or installed on first use from the library's registry into the user cache, or a user's own executable
(`client:driver=PATH`). Which library has a driver, for which roles, and how it is built is said by its row of the
library table (conformance.targets.libraries.LIBRARIES).

The parts: building (driver_builds.py: the command that runs a driver and the Python driver's build; go_build.py,
node_build.py, and the Java library's Maven build: one function per language, `Build` below), the process and its
JSON lines (driver_process.py), the two adapters that make a driver a client library or a codec library
(driver_client.py, driver_codec.py), and the self-test (driver_check.py: a broken driver told apart from a broken
client).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

PROTOCOL_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("protocol.schema.json")
SOURCES = Path(__file__).parent
CACHE = Path(os.environ.get("KTS_CACHE", Path.home() / ".cache" / "kafka-timestamp-conformance")) / "drivers"


class DriverUnavailable(Exception):
    """A driver cannot be built or started (no toolchain, a version the registry does not serve, a path that is not
    a checkout, a build that failed): one line naming the problem and the fix."""


class VersionNotServed(DriverUnavailable):
    """The registry does not serve the version asked for: the build's folder is removed (BuildLock.discard), so a
    failed look-up leaves nothing in the cache, and the message names the command that lists the versions."""


Build = Callable[..., list[str]]
"""build(library, *, version: str | None, path: str | None, timeout: float) -> argv: build (once; cached under
CACHE, keyed by the driver's source, the library version or the checkout's path) the driver of `library` (a row of the
library table) against the library at `version` (None: its pinned one) or the local checkout at `path`, and return
the command that runs it. Raises DriverUnavailable with one line naming the fix."""
