"""The `model` adapter: the reference model itself as an implementation under test.

Run against the model, every suite must pass (a suite that fails here is wrong, not the model's
target). Mutants (seeded faults) subclass `ModelImplementation` or give it a faulty cluster.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from conformance.judging.capabilities import Capability
from conformance.targets.kinds.implementation import DelegatingImplementation, ImplementationFactory
from conformance.targets.kinds.seeding import seeded_faults
from conformance.targets.target import Opened, Opening, Target
from models.cluster import Cluster
from models.profiles import MaxTimestampLookup, Profile, RecordErrorsStyle, get_profile

DEFAULT_START_TIME = 1_700_000_000_000


def profile_capabilities(profile: Profile) -> frozenset[Capability]:
    """What a Kafka of this profile can do (its behaviour profile), plus the model's full control of time
    and leadership."""
    caps = {
        Capability.PRODUCE_V2,
        Capability.LOG_APPEND_TIME,
        Capability.COMPRESSION,
        Capability.FETCH,
        Capability.ALTER_CONFIG,
        Capability.CLOCK_CONTROL,
        Capability.LEADER_FAILOVER,
        Capability.RETENTION,
        Capability.FILE_TIMES,
    }
    if profile.max_magic < 2:
        caps.discard(Capability.PRODUCE_V2)
    else:
        caps |= {Capability.ZSTD, Capability.IDEMPOTENCE}
    if profile.produce_versions[0] <= 2:
        caps.add(Capability.PRODUCE_LEGACY)
    if profile.has_before_after_configs:
        caps.add(Capability.KIP_937_CONFIGS)
    if profile.has_difference_config:
        caps.add(Capability.DIFFERENCE_CONFIG)
    if profile.record_errors is not RecordErrorsStyle.NONE:
        caps.add(Capability.RECORD_ERRORS)
    if profile.down_conversion:
        caps.add(Capability.DOWN_CONVERSION)
    if profile.list_offsets_versions[1] >= 1:
        caps.add(Capability.LIST_OFFSETS)
    if profile.max_timestamp_lookup is not MaxTimestampLookup.ABSENT:
        caps.add(Capability.MAX_TIMESTAMP_LOOKUP)
    return frozenset(caps)


class ModelImplementation(DelegatingImplementation):
    """The reference `Cluster` behind the `Implementation` protocol: the broker operations are the cluster's."""

    def __init__(self, cluster: Cluster, *, name: str = "model") -> None:
        self.cluster = cluster
        self.name = name
        self.profile: Profile = cluster.profile
        self.capabilities: frozenset[Capability] = profile_capabilities(cluster.profile)

    @property
    def operations(self) -> Cluster:  # type: ignore[override]
        """The cluster, read at each call: whoever swaps `cluster` (serve's WithBrokers, a mutant's build) swaps
        the operations with it."""
        return self.cluster

    def brokers(self) -> tuple[int, ...]:
        return tuple(sorted(self.cluster.brokers))

    def leader(self, topic: str, partition: int) -> int:
        return self.cluster.partition(topic, partition).leader

    def retention_tick(self) -> None:
        self.cluster.tick()

    def close(self) -> None:
        """Nothing to stop: the model lives in this process."""


@dataclass(frozen=True)
class ModelFactory:
    """Picklable recipe for the reference model under one profile."""

    profile: str = "kafka-4.0"
    brokers: int = 3
    start_time: int = DEFAULT_START_TIME

    @property
    def name(self) -> str:
        return "model"

    def build(self) -> ModelImplementation:
        cluster = Cluster(
            profile=get_profile(self.profile),
            broker_ids=tuple(range(self.brokers)),
            start_time=self.start_time,
        )
        return ModelImplementation(cluster)


@contextlib.contextmanager
def open_model(target: Target, opening: Opening) -> Iterator[Opened]:
    """The model, or a broker mutant seeded into it, in this process: nothing to start or stop."""
    factory: ImplementationFactory
    if target.seeded is not None:
        factory = seeded_faults().factory(target.seeded, opening.profile)
    else:
        factory = ModelFactory(profile=opening.profile)
    yield factory, []
