"""Client and codec libraries in any language, driven through the driver protocol (docs/driver-protocol.md,
protocol.schema.json beside this module).

A driver is a small program of ours in the library's language (go/<driver>/, node/<driver>/, java/<driver>/), built
or installed on first use from the library's registry into the user cache, or a user's own executable
(`client:driver=PATH`).
`DRIVERS` is the one table of them: the library, its language, where it comes from, the version its expectations
file describes, the roles it plays and how it is built (a "module:function" imported only when it is asked for,
so a missing toolchain costs nothing until then). The targets table (conformance.targets.registry) has a
`client:<name>` row for every driver playing the client role and a `codec:<name>` row for the codec role.

The parts: building (go_build.py, node_build.py, java_build.py: one function per language, `Build` below), the
process and its JSON lines (driver_process.py), the two adapters that make a driver a client library or a codec library
(driver_client.py, driver_codec.py), and the self-test (driver_check.py: a broken driver told apart from a broken
client).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

PROTOCOL_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("protocol.schema.json")
SOURCES = Path(__file__).parent
CACHE = Path(os.environ.get("KTS_CACHE", Path.home() / ".cache" / "kafka-timestamp-conformance")) / "drivers"

CLIENT_ROLE = "client"
CODEC_ROLE = "codec"


class DriverUnavailable(Exception):
    """A driver cannot be built or started (no toolchain, a version the registry does not serve, a path that is not
    a checkout, a build that failed): one line naming the problem and the fix."""


class VersionNotServed(DriverUnavailable):
    """The registry does not serve the version asked for: the build's folder is removed (BuildLock.discard), so a
    failed look-up leaves nothing in the cache, and the message names the command that lists the versions."""


@dataclass(frozen=True)
class DriverSpec:
    """One driver of the table."""

    name: str  # the library's name in targets: client:<name>, codec:<name>
    language: str  # "go", "node", "python", "java", or "any" for a user's own executable
    # what the registry calls the library: a Go module path, an npm package, a PyPI distribution, a Maven artifact
    package: str
    registry: str  # how it is obtained, for help texts and the docs: "the Go module proxy", "npm", "PyPI"
    pinned: str | None  # the version its shipped expectations files describe; None for a user's driver
    roles: frozenset[str]
    # "module:function" of its Build (None: a user's executable, run as it is)
    build: str | None
    source: str = ""  # its folder under conformance/targets/drivers/ (go/franzgo, node/kafkajs)


def uses_driver(library: str, in_process: Collection[str], version: str | None, path: str | None) -> bool:
    """Whether `library` runs through its driver: a library with no adapter in `in_process` (another language's),
    or a library that has one (Python's, Java's in Spark's JVM) at another version or from a checkout; the pinned
    ones run in this process."""
    return library not in in_process or version is not None or path is not None


Build = Callable[..., list[str]]
"""build(spec, *, version: str | None, path: str | None, timeout: float) -> argv: build (once; cached under
CACHE, keyed by the driver's source, the library version or the checkout's path) the driver of `spec` against the
library at `version` (None: spec.pinned) or the local checkout at `path`, and return the command that runs it.
Raises DriverUnavailable with one line naming the fix."""

DRIVERS: dict[str, DriverSpec] = {
    spec.name: spec
    for spec in (
        DriverSpec(
            "franz-go", "go", "github.com/twmb/franz-go", "the Go module proxy", "v1.22.3",
            frozenset({CLIENT_ROLE, CODEC_ROLE}), "conformance.targets.drivers.go_build:build_go_driver", "go/franzgo",
        ),
        DriverSpec(
            # client only: Sarama's RecordBatch and MessageSet encode and decode through unexported methods
            "sarama", "go", "github.com/IBM/sarama", "the Go module proxy", "v1.61.1",
            frozenset({CLIENT_ROLE}), "conformance.targets.drivers.go_build:build_go_driver", "go/sarama",
        ),
        DriverSpec(
            "kafka-go", "go", "github.com/segmentio/kafka-go", "the Go module proxy", "v0.4.51",
            frozenset({CLIENT_ROLE}), "conformance.targets.drivers.go_build:build_go_driver", "go/kafkago",
        ),
        DriverSpec(
            "kafkajs", "node", "kafkajs", "npm", "2.2.4",
            frozenset({CLIENT_ROLE}), "conformance.targets.drivers.node_build:install_node_driver", "node/kafkajs",
        ),
        # Apache Kafka's Java client: its pinned version runs in Spark's JVM (conformance.targets.clients.java_client,
        # .codecs.java_records); another release, or a jar or checkout of the user's, runs through the Java driver.
        DriverSpec(
            "java", "java", "org.apache.kafka:kafka-clients", "Maven Central", "3.9.1",
            frozenset({CLIENT_ROLE, CODEC_ROLE}), "conformance.targets.drivers.java_build:build_java_driver",
            "java/kafkaclients",
        ),
        # The Python libraries: their pinned versions run in process (conformance.targets.clients, .codecs); another
        # version or a local checkout runs through the Python driver with that version installed into the cache.
        DriverSpec(
            "kafka-python", "python", "kafka-python", "PyPI", "3.0.12", frozenset({CLIENT_ROLE, CODEC_ROLE}),
            "conformance.targets.drivers.driver_builds:build_python_driver",
        ),
        DriverSpec(
            "aiokafka", "python", "aiokafka", "PyPI", "0.14.0", frozenset({CLIENT_ROLE, CODEC_ROLE}),
            "conformance.targets.drivers.driver_builds:build_python_driver",
        ),
        DriverSpec(
            "aiokafka-pure", "python", "aiokafka", "PyPI", "0.14.0", frozenset({CODEC_ROLE}),
            "conformance.targets.drivers.driver_builds:build_python_driver",
        ),
        DriverSpec(
            "confluent-kafka", "python", "confluent-kafka", "PyPI", "2.16.1", frozenset({CLIENT_ROLE}),
            "conformance.targets.drivers.driver_builds:build_python_driver",
        ),
        # The reference client and codec through the protocol: the driver side's own check (the same verdicts as
        # in process).
        DriverSpec(
            "model", "python", "this package", "this package", None, frozenset({CLIENT_ROLE, CODEC_ROLE}),
            "conformance.targets.drivers.driver_builds:build_python_driver",
        ),
        DriverSpec(
            "driver", "any", "your driver", "a local executable (client:driver=PATH)", None,
            frozenset({CLIENT_ROLE, CODEC_ROLE}), None,
        ),
    )
}  # fmt: skip
