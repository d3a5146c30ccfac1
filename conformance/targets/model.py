"""The `model` adapter: the reference model itself as an implementation under test.

Run against the model, every suite must pass (a suite that fails here is wrong, not the model's
target). Mutants (seeded faults) subclass `ModelImplementation` or give it a faulty cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from conformance.targets.implementation import Capability
from models.cluster import Cluster, FetchResponse, ProduceResponse
from models.config import TopicConfig
from models.constants import IsolationLevel
from models.list_offsets import ListOffsetsAnswer
from models.profiles import MaxTimestampLookup, Profile, RecordErrorsStyle, get_profile
from models.records import AnyBatch

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


class ModelImplementation:
    """The reference `Cluster` behind the `Implementation` protocol."""

    def __init__(self, cluster: Cluster, *, name: str = "model") -> None:
        self.cluster = cluster
        self.name = name
        self.profile: Profile = cluster.profile
        self.capabilities: frozenset[Capability] = profile_capabilities(cluster.profile)

    def brokers(self) -> tuple[int, ...]:
        return tuple(sorted(self.cluster.brokers))

    def create_topic(self, topic: str, config: TopicConfig, *, partitions: int = 1) -> None:
        self.cluster.create_topic(topic, config, partitions=partitions)

    def alter_config(self, topic: str, config: TopicConfig) -> None:
        self.cluster.alter_config(topic, config)

    def produce(
        self, topic: str, partition: int, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> ProduceResponse:
        return self.cluster.produce(topic, partition, batches, produce_version=produce_version)

    def fetch(self, topic: str, partition: int, offset: int, *, fetch_version: int) -> FetchResponse:
        return self.cluster.fetch(topic, partition, offset, fetch_version=fetch_version)

    def list_offsets(
        self,
        topic: str,
        partition: int,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> ListOffsetsAnswer:
        return self.cluster.list_offsets(topic, partition, target, version=version, isolation=isolation)

    def clock(self, broker: int) -> int:
        return self.cluster.clock(broker)

    def set_clock(self, broker: int, now: int) -> None:
        self.cluster.set_clock(broker, now)

    def elect_leader(self, topic: str, partition: int, broker: int) -> None:
        self.cluster.elect_leader(topic, partition, broker)

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
