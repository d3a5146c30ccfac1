"""Producer clocks (offset, drift, backward steps) and broker clock moves (VAL-2, REP-2, REP-3).

A producer stamps CreateTime from its own clock; a skewed producer is how out-of-range timestamps
arise in practice (VAL-4). A broker's clock drives validation and LogAppendTime (VAL-2); nothing
clamps it, so it may step backwards (REP-2, REP-3), which `clock_moves()` generates as Jepsen's
nemesis would: operations, not special cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from hypothesis import strategies as st

from models.constants import LONG_MAX, LONG_MIN

from .timestamps import REALISTIC_NOW_MS

PPM = 1_000_000


@dataclass(frozen=True)
class ProducerClock:
    """A producer's wall clock relative to true time: a constant `offset_ms`, a rate error of
    `drift_ppm` parts per million accumulated since `origin_ms`, and `backward_steps`, pairs
    (step_index, ms): from the producer's `step_index`-th send on, the clock reads `ms` earlier (an
    NTP correction). Readings are clamped to int64."""

    offset_ms: int = 0
    drift_ppm: int = 0
    backward_steps: tuple[tuple[int, int], ...] = ()
    origin_ms: int = REALISTIC_NOW_MS

    def read(self, true_now: int, step_index: int) -> int:
        """The timestamp this producer writes at true time `true_now` on its `step_index`-th send."""
        drift = (true_now - self.origin_ms) * self.drift_ppm // PPM
        stepped_back = sum(ms for at, ms in self.backward_steps if at <= step_index)
        return max(LONG_MIN, min(LONG_MAX, true_now + self.offset_ms + drift - stepped_back))

    @property
    def steps_backwards(self) -> bool:
        return any(ms > 0 for _, ms in self.backward_steps)


@st.composite
def producer_clocks(
    draw: st.DrawFn,
    *,
    max_offset_ms: int = 2 * 3_600_000,
    max_drift_ppm: int = 500,
    max_backward_steps: int = 3,
    max_step_ms: int = 3_600_000,
    max_step_index: int = 20,
    origin_ms: int = REALISTIC_NOW_MS,
) -> ProducerClock:
    """Producer clocks: mostly exact or a few seconds off, sometimes hours off (both ways), with a
    drift of up to `max_drift_ppm` (500 ppm: a cheap crystal without NTP) and up to
    `max_backward_steps` backward steps of up to `max_step_ms`."""
    offset = draw(
        st.one_of(
            st.just(0),
            st.integers(-5_000, 5_000),
            st.integers(-max_offset_ms, max_offset_ms),
        )
    )
    drift = draw(st.one_of(st.just(0), st.integers(-max_drift_ppm, max_drift_ppm)))
    steps = draw(
        st.lists(
            st.tuples(st.integers(0, max_step_index), st.integers(1, max_step_ms)),
            max_size=max_backward_steps,
        )
    )
    return ProducerClock(offset_ms=offset, drift_ppm=drift, backward_steps=tuple(sorted(steps)), origin_ms=origin_ms)


class ClockMoveKind(StrEnum):
    ADVANCE = "advance"  # ordinary passage of time
    STEP_BACK = "step-back"  # NTP stepping the clock backwards (REP-3)
    JUMP = "jump"  # a large forward jump (a VM resumed, a clock fixed after drift)


@dataclass(frozen=True)
class ClockMove:
    """One change of a broker's clock: `delta_ms` > 0 for ADVANCE/JUMP, < 0 for STEP_BACK."""

    kind: ClockMoveKind
    delta_ms: int

    def apply(self, now: int) -> int:
        return max(LONG_MIN, min(LONG_MAX, now + self.delta_ms))


def advances(max_ms: int = 60_000) -> st.SearchStrategy[ClockMove]:
    return st.integers(0, max_ms).map(lambda d: ClockMove(ClockMoveKind.ADVANCE, d))


def backward_steps(max_ms: int = 3_600_000) -> st.SearchStrategy[ClockMove]:
    return st.integers(1, max_ms).map(lambda d: ClockMove(ClockMoveKind.STEP_BACK, -d))


def jumps(min_ms: int = 3_600_000, max_ms: int = 8 * 24 * 3_600_000) -> st.SearchStrategy[ClockMove]:
    """Forward jumps long enough to cross roll (segment.ms) and retention thresholds (IDX-9, IDX-10)."""
    return st.integers(min_ms, max_ms).map(lambda d: ClockMove(ClockMoveKind.JUMP, d))


def clock_moves(
    *, max_advance_ms: int = 60_000, max_step_back_ms: int = 3_600_000, max_jump_ms: int = 8 * 24 * 3_600_000
) -> st.SearchStrategy[ClockMove]:
    """A broker clock move: advance (ms to a minute), backward step, or a jump (hours to days)."""
    return st.one_of(
        advances(max_advance_ms),
        backward_steps(max_step_back_ms),
        jumps(min(3_600_000, max_jump_ms), max_jump_ms),
    )


def broker_clock_offsets(brokers: tuple[int, ...], *, max_skew_ms: int = 10_000) -> st.SearchStrategy[dict[int, int]]:
    """Initial skew of each broker's clock from true time (REP-2: a new leader stamps with its own)."""
    return st.fixed_dictionaries({b: st.integers(-max_skew_ms, max_skew_ms) for b in brokers})
