"""What the reference broker serves: one implementation (the model or a seeded mutant) shared by every
Kafka listener and the control plane, behind one lock (the model is not thread-safe).

The Kafka listeners translate requests into `Implementation` calls on `impl` (so a mutant that overrides
an answer is served as it answers), and read topics, partitions, leaders and epochs from `cluster`. The
control plane (conformance/control/control_plane.py) calls the methods below, those of its `Controlled`
(conformance/control/controlled.py); each raises `ControlError` naming the field at fault.
"""

from __future__ import annotations

import threading

from conformance.control.controlled import ControlError, checked_clock
from conformance.targets.kinds.implementation import ImplementationFactory
from conformance.targets.libraries.model.model_broker import ModelImplementation
from models.cluster import Cluster, ClusterError
from models.profiles import Profile

# What the control plane offers, in the names of conformance.judging.capabilities.Capability: three controls,
# that the model's clock dates its segments too (file-times), and one claim about the Kafka side (the broker
# accepts idempotent batches from producer ids it did not allocate, starting at sequence 0, as Kafka does),
# which a black-box probe cannot establish.
CONTROL_CAPABILITIES = ("clock-control", "leader-failover", "retention", "idempotence", "file-times")


class ServedCluster:
    """The implementation behind the reference broker, a `Controlled` for the control plane; every access holds
    `lock`."""

    def __init__(self, factory: ImplementationFactory) -> None:
        self.factory = factory
        self.lock = threading.RLock()
        self.impl: ModelImplementation = self._build()

    def _build(self) -> ModelImplementation:
        impl = self.factory.build()
        if not isinstance(impl, ModelImplementation):
            raise TypeError(f"{self.factory.name} is not served by the reference broker (not a model cluster)")
        return impl

    @property
    def name(self) -> str:
        return self.factory.name

    @property
    def cluster(self) -> Cluster:
        return self.impl.cluster

    @property
    def profile(self) -> Profile:
        return self.impl.profile

    def broker_ids(self) -> tuple[int, ...]:
        return tuple(sorted(self.cluster.brokers))

    # -- control plane

    def capabilities(self) -> tuple[str, ...]:
        offered = [c for c in CONTROL_CAPABILITIES if c != "leader-failover" or len(self.cluster.brokers) > 1]
        return tuple(offered)

    def _check_broker(self, broker: int) -> None:
        if broker not in self.cluster.brokers:
            known = ", ".join(str(b) for b in self.broker_ids())
            raise ControlError(404, "path.broker", f"no broker {broker}: the brokers are {known}")

    def clock(self, broker: int) -> int:
        with self.lock:
            self._check_broker(broker)
            return self.impl.clock(broker)

    def set_clock(self, broker: int, now_ms: int) -> int:
        with self.lock:
            self._check_broker(broker)
            self.impl.set_clock(broker, checked_clock(now_ms))
            return self.impl.clock(broker)

    def advance_clock(self, broker: int, delta_ms: int) -> int:
        with self.lock:
            self._check_broker(broker)
            now = checked_clock(self.impl.clock(broker), delta_ms=delta_ms)
            self.impl.set_clock(broker, now)
            return now

    def leader(self, topic: str, partition: int) -> tuple[int, int]:
        """(leader broker, leader epoch) of a partition."""
        with self.lock:
            part = self._partition(topic, partition)
            return part.leader, part.leader_epoch

    def move_leader(self, topic: str, partition: int, broker: int) -> tuple[int, int]:
        """Move the partition's leadership to `broker` (REP-2: it stamps with its own clock from now on)."""
        with self.lock:
            part = self._partition(topic, partition)
            if broker not in self.cluster.brokers:
                known = ", ".join(str(b) for b in self.broker_ids())
                raise ControlError(422, "body.broker", f"no broker {broker}: the brokers are {known}")
            if broker not in part.replicas:
                replicas = ", ".join(str(b) for b in sorted(part.replicas))
                detail = f"broker {broker} holds no replica of {topic}-{partition} (replicas: {replicas})"
                raise ControlError(409, "body.broker", detail)
            try:
                self.impl.elect_leader(topic, partition, broker)
            except ClusterError as exc:
                raise ControlError(409, "body.broker", str(exc)) from None
            return part.leader, part.leader_epoch

    def _partition(self, topic: str, partition: int):  # type: ignore[no-untyped-def]
        if not any(t == topic for t, _ in self.cluster.partitions):
            raise ControlError(404, "path.topic", f"no topic {topic!r}: create it over the Kafka protocol first")
        try:
            return self.cluster.partition(topic, partition)
        except ClusterError:
            count = sum(1 for t, _ in self.cluster.partitions if t == topic)
            raise ControlError(
                404, "path.partition", f"topic {topic!r} has partitions 0..{count - 1}, not {partition}"
            ) from None

    def run_retention(self) -> int:
        """Time-based retention now, on every replica with its broker's clock (IDX-10); segments deleted."""
        with self.lock:
            # The cluster's count: deleting every segment leaves a fresh empty one, so counting segments before
            # and after would say 0. (No mutant overrides `retention_tick`; their retention faults are log seams.)
            return self.cluster.tick()

    def reset(self) -> None:
        """A fresh cluster: no topics, every clock back at its start."""
        with self.lock:
            self.impl = self._build()
