"""`client:<library>` targets: a client library as an implementation of kind client
(conformance.targets.kinds.implementation.Kind), against a managed reference broker serving the model under the run's
profile (the table, conformance.targets.registry, has a row per library; its parser reads the names).

- `client:<library>`: the library (its row of conformance.targets.libraries.LIBRARIES) against the reference broker
  serving the model;
- `client:<library>@reference:mutant:<id>`: the same library against the broker serving a seeded broker mutant (the
  client's verdicts must not change: a client is never blamed for a broker's fault);
- `mutant:<id>` of kind client: the reference client with one seeded fault (conformance/faults/client_faults.py)
  against the reference broker serving the model.

The implementation is the reference broker's wire implementation (conformance.targets.routes.wire_adapter.kafka_wire:
the suites' own client creates topics, sets clocks through the control plane and fetches the stored bytes raw, read by
the model's codec) with Capability.CLIENT, the library at `.client` and the wire tap the library talks through at `.tap`
(conformance.targets.routes.wire_adapter.tap: what the broker answered the library)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conformance.errors import TargetError
from conformance.judging.capabilities import Capability
from conformance.targets.brokers.kafka import check_kafka_line, kafka_on_the_suites_clock, obtain_release, release
from conformance.targets.brokers.reference_broker import start_reference
from conformance.targets.kinds.client_library import ClientLibrary, ClientUnavailable
from conformance.targets.kinds.implementation import DelegatingImplementation, Kind
from conformance.targets.kinds.library import CLIENT_ROLE
from conformance.targets.kinds.seeding import seeded_faults
from conformance.targets.libraries import library_playing
from conformance.targets.routes.driver.driver_builds import driver_command
from conformance.targets.routes.driver.driver_client import DriverClient
from conformance.targets.routes.in_process import adapter_class, require_adapter
from conformance.targets.routes.wire_adapter.kafka_wire import WireFactory, WireImplementation, check_control
from conformance.targets.routes.wire_adapter.tap import WireTap
from conformance.targets.target import Opened, Opening, Target


def check_library(library: str, version: str | None = None, path: str | None = None) -> None:
    """The library is known and installed, or its driver built (a TargetError naming the choices or the one-line
    fix otherwise)."""
    row = library_playing(CLIENT_ROLE, library)
    adapter = row.adapter(CLIENT_ROLE)
    if adapter is None or row.uses_driver(CLIENT_ROLE, version, path):
        driver_command(library, version=version, path=path)
        return
    require_adapter(adapter, ClientUnavailable)


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
        return seeded_faults().client(fault)(bootstrap, timeout=timeout)
    row = library_playing(CLIENT_ROLE, library)
    adapter = row.adapter(CLIENT_ROLE)
    if adapter is None or row.uses_driver(CLIENT_ROLE, version, path):
        return DriverClient(
            library, bootstrap, timeout=timeout, version=version, path=path, log_dir=log_dir, target=target
        )
    try:
        built: ClientLibrary = adapter_class(adapter, ClientUnavailable)(bootstrap, timeout=timeout)
    except ClientUnavailable as exc:
        raise TargetError(str(exc)) from None
    return built


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


class ClientImplementation(DelegatingImplementation):
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
        self.operations = broker
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

    # -- the implementation protocol: the broker's (DelegatingImplementation), and

    def brokers(self) -> tuple[int, ...]:
        return self.broker.brokers()

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


def _client_factory(
    target: Target, opening: Opening, bootstrap: str, control_url: str, *, marks_by_produce: bool = False
) -> ClientFactory:
    """The factory of client target `target` against the broker at `bootstrap` with its control plane
    (`marks_by_produce`: WireFactory's)."""
    return ClientFactory(
        bootstrap=bootstrap, profile=opening.profile, target=str(target), timeout=opening.timeout,
        control_url=control_url, library=target.library, fault=target.seeded, version=target.version,
        path=target.path, log_dir=str(opening.log_dir), marks_by_produce=marks_by_produce,
    )  # fmt: skip


@contextlib.contextmanager
def open_client(target: Target, opening: Opening) -> Iterator[Opened]:
    """Start the reference broker for client target `target` (serving the model, or the broker mutant it names),
    yield the factory of the client implementation and the broker's log, and stop the broker on the way out (also
    on errors)."""
    check_library(target.library, target.version, target.path)
    if target.against is not None:
        found = check_kafka_line(target.against, opening)
        with kafka_on_the_suites_clock(found, opening) as kafka:
            factory = _client_factory(
                target, opening, kafka.bootstrap, kafka.control_url, marks_by_produce=found.zookeeper
            )
            yield factory, kafka.log_paths
        return
    reference = start_reference(opening.log_dir, profile=opening.profile, target=target.served)
    with reference:
        check_control(reference.bootstrap, reference.control_url, timeout=opening.timeout)
        yield _client_factory(target, opening, reference.bootstrap, reference.control_url), [Path(reference.log_path)]
