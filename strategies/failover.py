"""Leader failover sequences (REP-2, REP-4, IDX-14): moves of a partition's leadership among brokers.

A sequence is what Jepsen's nemesis would schedule: each move names the broker that becomes leader
and, optionally, how far that broker's clock is from the old leader's (REP-2: the new leader stamps
LogAppendTime with its own clock, which may be behind: REP-3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import strategies as st


@dataclass(frozen=True)
class LeaderMove:
    """Make `broker` the leader; `records_before` producer batches are sent before the move (so moves
    interleave with appends), and `clock_skew_ms` is added to the new leader's clock first (0: none)."""

    broker: int
    records_before: int = 0
    clock_skew_ms: int = 0


@st.composite
def failover_sequences(
    draw: st.DrawFn,
    brokers: Sequence[int],
    *,
    min_moves: int = 1,
    max_moves: int = 5,
    max_batches_between: int = 3,
    max_skew_ms: int = 3_600_000,
    to_other: bool = True,
    initial_leader: int | None = None,
) -> list[LeaderMove]:
    """At least `min_moves` leader moves, each to a broker of `brokers`. With `to_other` every move
    goes to a broker other than the previous target (a real election; needs two brokers), else a
    move may re-elect the same broker (an epoch bump without a change of clock). `initial_leader`, when
    known, is the broker leading before the first move."""
    ids = tuple(dict.fromkeys(brokers))
    if not ids:
        raise ValueError("failover needs at least one broker")
    if to_other and len(ids) < 2:
        raise ValueError(f"moving leadership to another broker needs two brokers, not {ids}")
    count = draw(st.integers(min_moves, max(min_moves, max_moves)))
    moves: list[LeaderMove] = []
    previous = initial_leader
    for _ in range(count):
        choices = tuple(b for b in ids if not (to_other and b == previous))
        broker = draw(st.sampled_from(choices))
        skew = draw(st.one_of(st.just(0), st.integers(-max_skew_ms, max_skew_ms)))
        moves.append(
            LeaderMove(
                broker=broker,
                records_before=draw(st.integers(0, max_batches_between)),
                clock_skew_ms=skew,
            )
        )
        previous = broker
    return moves
