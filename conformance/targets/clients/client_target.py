"""`client:<library>` targets: a client library as an implementation of kind client
(conformance.targets.implementation.Kind), against a managed reference broker serving the model under the run's
profile (the table, conformance.targets.registry, has a row per library; its parser reads the names).

- `client:<library>`: the library (conformance.targets.clients.LIBRARIES) against the reference broker serving the
  model;
- `client:<library>@reference:mutant:<id>`: the same library against the broker serving a seeded broker mutant (the
  client's verdicts must not change: a client is never blamed for a broker's fault);
- `mutant:<id>` of kind client: the reference client with one seeded fault (conformance/faults/client_faults.py)
  against the reference broker serving the model.

The implementation is the reference broker's wire implementation (conformance.targets.kafka_wire: the suites' own client
creates topics, sets clocks through the control plane and fetches the stored bytes raw, read by the model's codec)
with Capability.CLIENT, the library at `.client` and the wire tap the library talks through at `.tap`
(conformance.targets.clients.tap: what the broker answered the library)."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.errors import TargetError
from conformance.faults.client_faults import client_fault
from conformance.targets.clients import LIBRARIES
from conformance.targets.clients.client_library import ClientLibrary, ClientUnavailable
from conformance.targets.clients.tap import WireTap
from conformance.targets.drivers import uses_driver
from conformance.targets.drivers.driver_builds import driver_command
from conformance.targets.drivers.driver_client import DriverClient
from conformance.targets.implementation import Capability, Kind
from conformance.targets.kafka_wire import WireFactory, WireImplementation, check_control
from conformance.targets.managed.kafka import check_kafka_line, kafka_on_the_suites_clock, obtain_release, release
from conformance.targets.managed.reference_broker import start_reference
from conformance.targets.target import Opened, Opening, Target, library_name
from models.cluster import FetchResponse, ProduceResponse
from models.config import TopicConfig
from models.constants import IsolationLevel
from models.list_offsets import ListOffsetsAnswer
from models.records import AnyBatch


def _adapter(library: str) -> type[ClientLibrary]:
    try:
        where = LIBRARIES[library]
    except KeyError:
        raise TargetError(
            f"unknown client library {library!r}: choose one of "
            f"{', '.join(library_name(Kind.CLIENT, n) for n in LIBRARIES)} (--target)"
        ) from None
    module, _, cls = where.partition(":")
    try:
        adapter: type[ClientLibrary] = getattr(importlib.import_module(module), cls)
    except ClientUnavailable as exc:
        raise TargetError(str(exc)) from None
    return adapter


def check_library(library: str, version: str | None = None, path: str | None = None) -> None:
    """The library is known and installed, or its driver built (a TargetError naming the choices or the one-line
    fix otherwise)."""
    if uses_driver(library, LIBRARIES, version, path):
        driver_command(library, version=version, path=path)
        return
    adapter = _adapter(library)
    require = getattr(adapter, "require", None)
    if require is not None:
        try:
            require()
        except ClientUnavailable as exc:
            raise TargetError(str(exc)) from None


def open_library(
    library: str,
    bootstrap: str,
    *,
    timeout: float,
    fault: str | None = None,
    version: str | None = None,
    path: str | None = None,
    log_dir: Path = Path("reports/out/logs"),
    target: str = "",
) -> ClientLibrary:
    """The adapter of `library` connected to `bootstrap` (its driver, where it runs through one); with `fault`,
    the reference client with that client mutant's fault seeded (library "model" only)."""
    if fault is not None:
        return client_fault(fault)(bootstrap, timeout=timeout)
    if uses_driver(library, LIBRARIES, version, path):
        return DriverClient(
            library, bootstrap, timeout=timeout, version=version, path=path, log_dir=log_dir, target=target
        )
    try:
        return _adapter(library)(bootstrap, timeout=timeout)  # type: ignore[call-arg]
    except ClientUnavailable as exc:
        raise TargetError(str(exc)) from None


def check_client(target: Target, opening: Opening) -> None:
    """A usage check before anything starts: the library is installed (or its driver built), and no address is
    given (the suite starts the reference broker itself)."""
    if opening.bootstrap or opening.control_url:
        raise TargetError(
            f"target {str(target)!r} runs against a broker the suite starts: drop --bootstrap-servers and "
            "--control-url (or unset KAFKA_BOOTSTRAP_SERVERS / KTS_CONTROL_URL)"
        )
    if target.against is not None:
        check_kafka_line(target.against, opening)  # the line's profile, Java and Maven
    check_library(target.library, target.version, target.path)


def obtain_client(target: Target, opening: Opening) -> None:
    """Before anything starts: the Apache Kafka a client runs against (`client:<library>@kafka[:<line>]`) fetched
    and ready to start (a TargetError naming the fix otherwise). The library's own driver is built by its check
    (`check_library`), which needs it built to say the library can run."""
    if target.against is not None:
        obtain_release(release(target.against.partition(":")[2] or None))


class ClientImplementation:
    """The reference broker over the wire (`broker`, a WireImplementation: the suites' own client) with a client
    library under test at `.client` (Capability.CLIENT), talking to the broker through `.tap`. The implementation
    protocol's operations are the broker's; `topic_name(topic)` is the name the broker knows a suite topic by."""

    kind = Kind.CLIENT

    def __init__(
        self,
        broker: WireImplementation,
        *,
        library: str,
        fault: str | None,
        timeout: float,
        version: str | None = None,
        path: str | None = None,
        log_dir: Path = Path("reports/out/logs"),
    ) -> None:
        self.broker = broker
        self.name = broker.name
        self.profile = broker.profile
        self.capabilities = broker.capabilities | {Capability.CLIENT}
        self.offered_versions = broker.offered_versions
        self.clock_tolerance_ms = broker.clock_tolerance_ms
        self.notes = broker.notes
        self.tap = WireTap(broker.client.bootstrap, timeout=timeout).start()
        try:
            self.client = open_library(
                library, self.tap.bootstrap, timeout=timeout, fault=fault, version=version, path=path,
                log_dir=log_dir, target=broker.name,
            )  # fmt: skip
        except BaseException:
            self.tap.stop()
            broker.close()
            raise

    @property
    def implementation_version(self) -> str:
        """The client library's version, as its adapter or driver reports it (the broker is not under test)."""
        return self.client.version

    def topic_name(self, topic: str) -> str:
        return self.broker.topic_prefix + topic

    # -- the implementation protocol: the broker's

    def brokers(self) -> tuple[int, ...]:
        return self.broker.brokers()

    def create_topic(self, topic: str, config: TopicConfig, *, partitions: int = 1) -> None:
        self.broker.create_topic(topic, config, partitions=partitions)

    def alter_config(self, topic: str, config: TopicConfig) -> None:
        self.broker.alter_config(topic, config)

    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        return self.broker.produce(topic, partition, batches, produce_version=produce_version)

    def fetch(self, topic: str, partition: int, offset: int, *, fetch_version: int) -> FetchResponse:
        return self.broker.fetch(topic, partition, offset, fetch_version=fetch_version)

    def list_offsets(
        self,
        topic: str,
        partition: int,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> ListOffsetsAnswer:
        return self.broker.list_offsets(topic, partition, target, version=version, isolation=isolation)

    def clock(self, broker: int) -> int:
        return self.broker.clock(broker)

    def set_clock(self, broker: int, now: int) -> None:
        self.broker.set_clock(broker, now)

    def elect_leader(self, topic: str, partition: int, broker: int) -> None:
        self.broker.elect_leader(topic, partition, broker)

    def leader(self, topic: str, partition: int) -> int:
        return self.broker.leader(topic, partition)

    def retention_tick(self) -> None:
        self.broker.retention_tick()

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            try:
                self.tap.stop()
            finally:
                self.broker.close()


@dataclass(frozen=True)
class ClientFactory(WireFactory):
    """Picklable recipe for a client target: the reference broker's address and control plane, and the library."""

    library: str = "model"
    fault: str | None = None  # a client mutant seeded into the reference client
    version: str | None = None  # client:<library>==VERSION
    path: str | None = None  # client:<library>=PATH
    log_dir: str = "reports/out/logs"  # where a driver's stderr goes

    def build(self) -> ClientImplementation:  # type: ignore[override]
        return ClientImplementation(
            super().build(), library=self.library, fault=self.fault, timeout=self.timeout, version=self.version,
            path=self.path, log_dir=Path(self.log_dir),
        )  # fmt: skip


@contextlib.contextmanager
def open_client(target: Target, opening: Opening) -> Iterator[Opened]:
    """Start the reference broker for client target `target` (serving the model, or the broker mutant it names),
    yield the factory of the client implementation and the broker's log, and stop the broker on the way out (also
    on errors)."""
    check_library(target.library, target.version, target.path)
    if target.against is not None:
        with kafka_on_the_suites_clock(check_kafka_line(target.against, opening), opening) as kafka:
            yield ClientFactory(
                bootstrap=kafka.bootstrap, profile=opening.profile, target=str(target), timeout=opening.timeout,
                control_url=kafka.control_url, library=target.library, fault=target.seeded, version=target.version,
                path=target.path, log_dir=str(opening.log_dir),
            ), kafka.log_paths  # fmt: skip
        return
    reference = start_reference(opening.log_dir, profile=opening.profile, target=target.served)
    with reference:
        check_control(reference.bootstrap, reference.control_url, timeout=opening.timeout)
        yield ClientFactory(
            bootstrap=reference.bootstrap,
            profile=opening.profile,
            target=str(target),
            timeout=opening.timeout,
            control_url=reference.control_url,
            library=target.library,
            fault=target.seeded,
            version=target.version,
            path=target.path,
            log_dir=str(opening.log_dir),
        ), [Path(reference.log_path)]
