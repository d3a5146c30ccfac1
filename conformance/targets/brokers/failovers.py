"""Leader moves of in-process clusters (librdkafka's mock), by bootstrap address: a factory names a cluster
by its address, so it stays picklable (factories are built inside Spark tasks)."""

from __future__ import annotations

from conformance.errors import TargetError

_failovers: dict[str, object] = {}


def register_failover(cluster: object) -> str:
    bootstrap = cluster.bootstrap  # type: ignore[attr-defined]
    _failovers[bootstrap] = cluster
    return str(bootstrap)


def unregister_failover(key: str) -> None:
    _failovers.pop(key, None)


def failover_cluster(key: str) -> object:
    try:
        return _failovers[key]
    except KeyError:
        raise TargetError(f"no managed cluster at {key} in this process to move leaders on") from None
