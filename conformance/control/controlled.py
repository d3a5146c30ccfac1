"""What a control plane drives (`Controlled`), how a driven cluster refuses a request (`ControlError`) and the clock
values it may set (`checked_clock`): the one contract shared by the reference broker's `ServedCluster`
(conformance/reference/served.py), Apache Kafka on the suite's clock (conformance/targets/brokers/kafka_control.py)
and franz-go's kfake (conformance/targets/brokers/kfake.py), each served by conformance/control/control_plane.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

# Clocks are JSON integers: keep them where every JSON reader is exact.
CLOCK_MIN, CLOCK_MAX = 0, 2**53 - 1


@dataclass(frozen=True)
class ControlError(Exception):
    """A control request the served cluster refuses: the HTTP status, the field at fault (e.g.
    "path.broker", "body.now_ms") and a sentence naming the problem and the fix."""

    status: int
    field: str
    detail: str

    def __str__(self) -> str:
        return f"{self.field}: {self.detail}"


def checked_clock(now_ms: int, *, delta_ms: int | None = None) -> int:
    """A clock value a control plane may set: `now_ms`, or with `delta_ms` the clock it advances to, within
    CLOCK_MIN..CLOCK_MAX; a 422 ControlError naming the body field otherwise."""
    if delta_ms is not None:
        now_ms += delta_ms
        if not CLOCK_MIN <= now_ms <= CLOCK_MAX:
            raise ControlError(422, "body.delta_ms", f"the clock would read {now_ms}, outside {CLOCK_MIN}..{CLOCK_MAX}")
    elif not CLOCK_MIN <= now_ms <= CLOCK_MAX:
        raise ControlError(422, "body.now_ms", f"{now_ms} is outside {CLOCK_MIN}..{CLOCK_MAX}")
    return now_ms


class Controlled(Protocol):
    """What a control plane drives; each method raises `ControlError` naming the field at fault."""

    def capabilities(self) -> tuple[str, ...]: ...

    def broker_ids(self) -> tuple[int, ...]: ...

    def clock(self, broker: int) -> int: ...

    def set_clock(self, broker: int, now_ms: int) -> int: ...

    def advance_clock(self, broker: int, delta_ms: int) -> int: ...

    def leader(self, topic: str, partition: int) -> tuple[int, int]: ...

    def move_leader(self, topic: str, partition: int, broker: int) -> tuple[int, int]: ...

    def run_retention(self) -> int: ...

    def reset(self) -> None: ...
