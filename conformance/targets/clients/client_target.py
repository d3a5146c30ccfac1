"""`client:<library>` targets: a client library as an implementation of kind client
(conformance.targets.implementation.Kind),
against a managed reference broker (issue 12) serving the model under the run's profile.

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
from conformance.targets.clients import LIBRARIES
from conformance.targets.clients.client_library import ClientLibrary, ClientUnavailable
from conformance.targets.clients.tap import WireTap
from conformance.targets.implementation import Capability, Kind
from conformance.targets.kafka_wire import WireFactory, WireImplementation, check_control
from models.cluster import FetchResponse, ProduceResponse
from models.config import TopicConfig
from models.constants import IsolationLevel
from models.list_offsets import ListOffsetsAnswer
from models.records import AnyBatch

CLIENT_PREFIX = "client:"
SERVED_PREFIX = "reference"  # what a client target may be served by: reference, or reference:mutant:<id>


def _adapter(library: str) -> type[ClientLibrary]:
    try:
        where = LIBRARIES[library]
    except KeyError:
        raise TargetError(
            f"unknown client library {library!r}: choose one of "
            f"{', '.join(CLIENT_PREFIX + n for n in LIBRARIES)} (--target)"
        ) from None
    module, _, cls = where.partition(":")
    try:
        adapter: type[ClientLibrary] = getattr(importlib.import_module(module), cls)
    except ClientUnavailable as exc:
        raise TargetError(str(exc)) from None
    return adapter


def check_library(library: str) -> None:
    """The library is known and installed (a TargetError naming the choices or the one-line fix otherwise)."""
    adapter = _adapter(library)
    require = getattr(adapter, "require", None)
    if require is not None:
        try:
            require()
        except ClientUnavailable as exc:
            raise TargetError(str(exc)) from None


def open_library(library: str, bootstrap: str, *, timeout: float, fault: str | None = None) -> ClientLibrary:
    """The adapter of `library` connected to `bootstrap`; with `fault`, the reference client with that client
    mutant's fault seeded (library "model" only)."""
    if fault is not None:
        from conformance.faults.client_faults import client_fault

        return client_fault(fault)(bootstrap, timeout=timeout)
    try:
        return _adapter(library)(bootstrap, timeout=timeout)  # type: ignore[call-arg]
    except ClientUnavailable as exc:
        raise TargetError(str(exc)) from None


@dataclass(frozen=True)
class ClientTarget:
    """What a client target name says: the library, what the reference broker serves ("model" or
    "mutant:<id>") and the client mutant seeded into the reference client (None for none)."""

    library: str
    served: str = "model"
    fault: str | None = None


def parse_client_target(name: str) -> ClientTarget:
    """`client:<library>[@reference[:mutant:<id>]]`, or `mutant:<id>` of a client mutant; TargetError otherwise."""
    if name.startswith("mutant:"):
        from conformance.faults import MUTANTS

        fault = name.removeprefix("mutant:")
        if fault not in MUTANTS or MUTANTS[fault].kind is not Kind.CLIENT:
            raise TargetError(f"{name!r} is not a client mutant: `kafka-conformance mutants --list` lists them")
        return ClientTarget("model", "model", fault)
    body = name.removeprefix(CLIENT_PREFIX)
    library, _, served_by = body.partition("@")
    served_by = served_by or SERVED_PREFIX
    if served_by == SERVED_PREFIX:
        served = "model"
    elif served_by.startswith(SERVED_PREFIX + ":mutant:"):
        served = served_by.removeprefix(SERVED_PREFIX + ":")
        _check_broker_mutant(name, served.removeprefix("mutant:"))
    else:
        raise TargetError(
            f"target {name!r}: a client runs against the reference broker: write {CLIENT_PREFIX}{library} or "
            f"{CLIENT_PREFIX}{library}@reference:mutant:<id> (a broker mutant from `kafka-conformance mutants --list`)"
        )
    if library not in LIBRARIES:
        _adapter(library)  # raises TargetError naming the choices
    return ClientTarget(library, served)


def _check_broker_mutant(name: str, mutant: str) -> None:
    from conformance.faults import MUTANTS

    found = MUTANTS.get(mutant)
    if found is None or found.kind is not Kind.BROKER:
        raise TargetError(
            f"target {name!r}: {mutant!r} is not a broker mutant the reference broker can serve: "
            "`kafka-conformance mutants --list` lists them"
        )


def check_client_target(name: str, *, bootstrap: str | None = None, control_url: str | None = None) -> None:
    """A usage check before anything starts: the name parses, the library is installed, and no address is given
    (the suite starts the reference broker itself)."""
    target = parse_client_target(name)
    if bootstrap or control_url:
        raise TargetError(
            f"target {name!r} runs against a reference broker the suite starts: drop --bootstrap-servers and "
            "--control-url (or unset KAFKA_BOOTSTRAP_SERVERS / KTS_CONTROL_URL)"
        )
    check_library(target.library)


class ClientImplementation:
    """The reference broker over the wire (`broker`, a WireImplementation: the suites' own client) with a client
    library under test at `.client` (Capability.CLIENT), talking to the broker through `.tap`. The implementation
    protocol's operations are the broker's; `topic_name(topic)` is the name the broker knows a suite topic by."""

    kind = Kind.CLIENT

    def __init__(self, broker: WireImplementation, *, library: str, fault: str | None, timeout: float) -> None:
        self.broker = broker
        self.name = broker.name
        self.profile = broker.profile
        self.capabilities = broker.capabilities | {Capability.CLIENT}
        self.offered_versions = broker.offered_versions
        self.clock_tolerance_ms = broker.clock_tolerance_ms
        self.notes = broker.notes
        self.tap = WireTap(broker.client.bootstrap, timeout=timeout).start()
        try:
            self.client = open_library(library, self.tap.bootstrap, timeout=timeout, fault=fault)
        except BaseException:
            self.tap.stop()
            broker.close()
            raise

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

    def build(self) -> ClientImplementation:  # type: ignore[override]
        return ClientImplementation(super().build(), library=self.library, fault=self.fault, timeout=self.timeout)


@contextlib.contextmanager
def open_client_target(
    name: str, profile: str, *, log_dir: Path | None = None, timeout: float = 10.0
) -> Iterator[tuple[ClientFactory, list[Path]]]:
    """Start the reference broker for client target `name` under `profile`, yield the factory of the client
    implementation and the broker's log, and stop the broker on the way out (also on errors)."""
    target = parse_client_target(name)
    check_library(target.library)
    from conformance.targets.managed.reference_broker import start_reference

    logs = Path(log_dir) if log_dir is not None else Path("reports/out/logs")
    logs.mkdir(parents=True, exist_ok=True)
    reference = start_reference(logs, profile=profile, target=target.served)
    with reference:
        check_control(reference.bootstrap, reference.control_url, timeout=timeout)
        yield ClientFactory(
            bootstrap=reference.bootstrap,
            profile=profile,
            target=name,
            timeout=timeout,
            control_url=reference.control_url,
            library=target.library,
            fault=target.fault,
        ), [Path(reference.log_path)]
