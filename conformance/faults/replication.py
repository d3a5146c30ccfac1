"""Replication and clock faults (REP-*): followers and LogAppendTime across leader changes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conformance.faults.mutant import MutantCluster, _impl, _is_lat_topic, _mutant
from conformance.targets.kinds.implementation import Implementation
from models.cluster import Partition
from models.constants import (
    TimestampType,
)
from models.log import PartitionLog
from models.profiles import Profile
from models.records import AnyBatch


class _RestampingLog(PartitionLog):
    def append_as_follower(self, batches: Sequence[AnyBatch], *, now: int) -> None:
        # The fault: the follower re-stamps LogAppendTime batches with its own clock (REP-1).
        restamped = [
            b.with_header(timestamp_type=TimestampType.LOG_APPEND_TIME, max_timestamp=now)
            if b.timestamp_type is TimestampType.LOG_APPEND_TIME and b.magic > 0
            else b
            for b in batches
        ]
        super().append_as_follower(restamped, now=now)


class _RestampingCluster(MutantCluster):
    log_class = _RestampingLog


@_mutant(
    "follower-restamps-lat",
    "Followers re-stamp LogAppendTime batches with their own clock on replication, so timestamps change "
    "when leadership moves (REP-1).",
    ("REP.follower-no-restamp", "REP.lookups-agree-after-failover"),
)
def build_follower_restamps(profile: Profile) -> Implementation:
    return _impl(profile, _RestampingCluster)


class _ClampedCluster(MutantCluster):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._last_append_time: dict[tuple[str, int], int] = {}

    def append_time(self, part: Partition, clock: int) -> int:
        if not _is_lat_topic(part):
            return clock
        key = (part.topic, part.index)
        now = max(self._last_append_time.get(key, clock), clock)
        self._last_append_time[key] = now
        return now


@_mutant(
    "lat-clamped-monotonic",
    "LogAppendTime is clamped to max(previous append time, now), so after a backward clock step or a "
    "failover to a slower clock it does not follow the leader's clock (VAL-2, REP-2).",
    ("REP.lat-not-clamped", "REP.lat-from-current-leader-clock", "VAL.lat-response-time"),
)
def build_lat_clamped(profile: Profile) -> Implementation:
    return _impl(profile, _ClampedCluster)

