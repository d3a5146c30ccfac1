"""What a row of the library table says (conformance.targets.libraries.LIBRARIES): a library under test, every role it
plays (client, codec) and by which route, and how it is obtained.

A role is played through one of two routes. In this process: an adapter named "module:Class" (a Python adapter, or
Java's through the JVM bridge), imported only when a target is opened, so a library that is not installed costs
nothing until it is asked for. Through the driver protocol (docs/driver-protocol.md): a driver process, built or
installed on first use by the row's `build` ("module:function", imported only when asked for, so a missing
toolchain costs nothing until then), or a user's own executable (`client:driver=PATH`). A role with an adapter runs
in process at the pinned version and through its driver at any other version or from a local checkout
(`Library.uses_driver`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from conformance.targets.kinds.implementation import Kind

# The roles a library plays, by the driver protocol's names: a client library or a record library (codec).
CLIENT_ROLE = Kind.CLIENT.value
CODEC_ROLE = Kind.CODEC.value


class Route(Enum):
    """How a library's adapters run in this process, at its pinned version."""

    PYTHON = "in process"  # a Python adapter, imported here
    JVM_BRIDGE = "the JVM bridge"  # a Java adapter driving the library in Spark's JVM (conformance.jvm)
    DRIVER = "a driver process"  # no adapter here: every version runs through its driver


@dataclass(frozen=True)
class Library:
    """One row of the library table."""

    name: str  # the library's name in targets: client:<name>, codec:<name>
    language: str  # "go", "node", "python", "java", or "any" for a user's own executable
    # what the registry calls the library: a Go module path, an npm package, a PyPI distribution, a Maven artifact
    package: str
    registry: str  # how it is obtained, for help texts and the docs: "the Go module proxy", "npm", "PyPI"
    pinned: str | None  # the version its shipped expectations files describe; None for the reference, a user's driver
    roles: frozenset[str]  # the roles its driver plays (CLIENT_ROLE, CODEC_ROLE)
    # "module:function" of its driver's Build (conformance.targets.routes.driver.Build); None: a user's executable,
    # run as it is
    build: str | None
    source: str = ""  # its driver's folder under conformance/targets/routes/driver/ (go/franzgo, node/kafkajs)
    # Its adapters in this process, by role: "module:Class" (a ClientLibrary, a RecordCodecLibrary).
    adapters: dict[str, str] = field(default_factory=dict)
    route: Route = Route.DRIVER  # how the adapters run (a library without adapters: DRIVER)

    def adapter(self, role: str) -> str | None:
        """The "module:Class" of its in-process adapter for `role`, or None where the role runs through its driver."""
        return self.adapters.get(role)

    def plays(self, role: str) -> bool:
        return role in self.roles or role in self.adapters

    def uses_driver(self, role: str, version: str | None, path: str | None) -> bool:
        """Whether `role` runs through the driver: a role with no adapter in this process (another language's), or
        one that has one (Python's, Java's in Spark's JVM) at another version or from a checkout; the pinned
        version runs in this process."""
        return self.adapter(role) is None or version is not None or path is not None


# The Python driver's build ("module:function"): it serves a Python library's adapters (python_driver.py) with the
# library at another version, or from a checkout, installed into the cache.
PYTHON_DRIVER = "conformance.targets.routes.driver.driver_builds:build_python_driver"


def python_library(
    name: str, package: str, pinned: str | None, adapters: dict[str, str], *, registry: str = "PyPI"
) -> Library:
    """A Python library's row: its adapters ("module:Class" by role) run in this process at the pinned version, and
    the Python driver, which serves the same adapters, plays the same roles at any other."""
    return Library(name, "python", package, registry, pinned, frozenset(adapters), PYTHON_DRIVER, adapters=adapters,
                   route=Route.PYTHON)  # fmt: skip
