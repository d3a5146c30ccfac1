"""The implementation-under-test protocol (docs/architecture.md, the targets/ wing).

An implementation is anything the suite can drive through these operations: the reference model,
a seeded mutant, a broker over the wire, a fake. It declares capabilities; suites gate on them and
report UNSUPPORTED where one is missing, never FAIL (test262's feature flags).

Implementations are built by factories that must be picklable (the Spark engine builds them
inside Spark tasks): a factory is a frozen dataclass with a `build()` method, never a lambda.

An implementation may say which version of itself runs (`implementation_version`): a run records it beside its
verdicts, and the campaign's matrix shows it in the column's header.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from importlib import metadata
from typing import Protocol, runtime_checkable

from conformance.judging.capabilities import Capability
from models.cluster import FetchResponse, ProduceResponse
from models.config import TopicConfig
from models.constants import MAGIC_V0, MAGIC_V1, MAGIC_V2, Codec, IsolationLevel
from models.list_offsets import ListOffsetsAnswer
from models.profiles import Profile
from models.records import AnyBatch


def producible_magics(caps: frozenset[Capability], profile: Profile) -> tuple[int, ...]:
    """The record magics a producer can send to an implementation with `caps` (CNV-1, VAL-14)."""
    magics: list[int] = []
    if Capability.PRODUCE_LEGACY in caps:
        magics += [MAGIC_V0, MAGIC_V1]
    if Capability.PRODUCE_V2 in caps and profile.max_magic == MAGIC_V2:
        magics.append(MAGIC_V2)
    return tuple(magics)


def producible_codecs(caps: frozenset[Capability]) -> tuple[Codec, ...]:
    """The codecs a producer can use against an implementation with `caps` (zstd is a capability of its own)."""
    codecs = [Codec.NONE]
    if Capability.COMPRESSION in caps:
        codecs += [Codec.GZIP, Codec.SNAPPY, Codec.LZ4]
    if Capability.ZSTD in caps:
        codecs.append(Codec.ZSTD)
    return tuple(codecs)


class Kind(Enum):
    """What sort of implementation a target is, and so which suites it runs: a suite test names its kind with
    `@pytest.mark.kind("codec")` (unmarked tests are broker tests). A broker is not a codec: tests of another
    kind are left out of a run (deselected), not reported UNSUPPORTED."""

    BROKER = "broker"  # the Kafka protocol's server side: produce, fetch, ListOffsets (every suite so far)
    CODEC = "codec"  # a record library: build and read batches (suites/test_codec_*.py)
    CLIENT = "client"  # a client library driving a broker (suites/test_client_*.py)


class UnsupportedOperation(Exception):
    """The implementation cannot do what was asked (a missing capability); a verdict of UNSUPPORTED."""

    def __init__(self, capability: Capability, detail: str = "") -> None:
        self.capability = capability
        super().__init__(f"capability {capability.value!r} not supported" + (f": {detail}" if detail else ""))


class BrokerOperations(Protocol):
    """What a delegating implementation hands its broker operations to: a broker (another implementation) or the
    model's cluster, which name them alike."""

    def create_topic(self, topic: str, config: TopicConfig, *, partitions: int = 1) -> None: ...

    def alter_config(self, topic: str, config: TopicConfig) -> None: ...

    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse: ...

    def fetch(self, topic: str, partition: int, offset: int, *, fetch_version: int) -> FetchResponse: ...

    def list_offsets(
        self,
        topic: str,
        partition: int,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> ListOffsetsAnswer: ...

    def clock(self, broker: int) -> int: ...

    def set_clock(self, broker: int, now: int) -> None: ...

    def elect_leader(self, topic: str, partition: int, broker: int) -> None: ...


@runtime_checkable
class Implementation(BrokerOperations, Protocol):
    """One running implementation under test: the broker operations (BrokerOperations), and its brokers, a
    partition's leader, a retention pass and its stop. Every operation names its topic-partition; offsets,
    timestamps and error codes are those of the Kafka protocol (models.constants)."""

    name: str
    profile: Profile
    capabilities: frozenset[Capability]

    def brokers(self) -> tuple[int, ...]: ...

    def leader(self, topic: str, partition: int) -> int: ...

    def retention_tick(self) -> None: ...

    def close(self) -> None: ...


class DelegatingImplementation:
    """An implementation whose broker operations are another's (`operations`): the model over its cluster, a client
    target over the reference broker it runs against. A subclass gives `brokers`, `leader`, `retention_tick` and
    `close`, and overrides any operation it changes (a mutant's fault)."""

    operations: BrokerOperations

    def create_topic(self, topic: str, config: TopicConfig, *, partitions: int = 1) -> None:
        self.operations.create_topic(topic, config, partitions=partitions)

    def alter_config(self, topic: str, config: TopicConfig) -> None:
        self.operations.alter_config(topic, config)

    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        return self.operations.produce(topic, partition, batches, produce_version=produce_version)

    def fetch(self, topic: str, partition: int, offset: int, *, fetch_version: int) -> FetchResponse:
        return self.operations.fetch(topic, partition, offset, fetch_version=fetch_version)

    def list_offsets(
        self,
        topic: str,
        partition: int,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> ListOffsetsAnswer:
        return self.operations.list_offsets(topic, partition, target, version=version, isolation=isolation)

    def clock(self, broker: int) -> int:
        return self.operations.clock(broker)

    def set_clock(self, broker: int, now: int) -> None:
        self.operations.set_clock(broker, now)

    def elect_leader(self, topic: str, partition: int, broker: int) -> None:
        self.operations.elect_leader(topic, partition, broker)


def implementation_version(implementation: object) -> str | None:
    """The version `implementation` says it is, as it says it (its `implementation_version`: a library's own version
    string, "2.16.1 (librdkafka 2.16.0)"), or None where it says nothing: a broker over the wire does not (the Kafka
    protocol has no field for it), so a managed broker's version comes from its row of the targets table
    (conformance.targets.registry.target_version)."""
    said = getattr(implementation, "implementation_version", None)
    return str(said) if said else None


def reference_version() -> str:
    """The version of the reference implementations (the model, the reference broker, codec:model, client:model):
    this package's, as installed; "source" for a source tree that was not installed."""
    try:
        return metadata.version("kafka-timestamp-conformance")
    except metadata.PackageNotFoundError:
        return "source"


class ImplementationFactory(Protocol):
    """A picklable recipe for an implementation (a frozen dataclass with `build`)."""

    @property
    def name(self) -> str: ...

    def build(self) -> Implementation: ...
