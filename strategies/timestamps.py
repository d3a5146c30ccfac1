"""Timestamps a producer may send, including the ones that break things (VAL-3..5, FMT-8, VAL-15).

Small named pieces, composed by `timestamps()`:

- `ordinary_timestamps`: realistic values near `now` (~1.7e12 ms), inside the validation window
  with a margin, so that a broker whose "now" is only known to lie in a bracket still accepts them.
- `special_timestamps`: -1 (NO_TIMESTAMP, exempt from the range check since 0.11, VAL-3), 0, values
  near Long.MAX_VALUE (VAL-4's overflow note) and, on request, values below -1 (FMT-8/VAL-15: Java
  writers refuse them, the broker does not check the sign).
- `unit_mistakes`: seconds or micro/nanoseconds sent where milliseconds are expected.
- `bound_probes`: exactly at and one past each validation bound (VAL-4: both bounds are inclusive
  for acceptance, so `now - before` passes and `now - before - 1` fails).

Every value is an int64; sums that would leave the int64 range are clamped to it.
"""

from __future__ import annotations

from hypothesis import strategies as st

from models.constants import LONG_MAX, LONG_MIN, NO_TIMESTAMP

# The default cluster start time of the model adapter: a realistic wall clock (Nov 2023).
REALISTIC_NOW_MS = 1_700_000_000_000
# Ordinary values stay within this distance of now even when the window is unbounded (Long.MAX_VALUE).
ORDINARY_SPREAD_MS = 30 * 24 * 3600 * 1000
# Distance kept from a validation bound by ordinary values (a real broker's `now` is a bracket).
DEFAULT_MARGIN_MS = 1_000


def clamp_int64(value: int) -> int:
    """Clamp to the int64 range every timestamp field has (FMT-3, FMT-9)."""
    return max(LONG_MIN, min(LONG_MAX, value))


def window(now: int, before: int, after: int, *, margin: int = 0) -> tuple[int, int]:
    """The accepted range [now - before, now + after] shrunk by `margin` on each side (VAL-4), clamped
    to int64. When a side is narrower than the margin it collapses onto `now`."""
    lo = clamp_int64(now - max(before - margin, 0))
    hi = clamp_int64(now + max(after - margin, 0))
    return lo, hi


def around(anchor: int, lo: int, hi: int) -> st.SearchStrategy[int]:
    """`anchor` plus an offset in [lo, hi] (clamped to int64). Hypothesis draws the offset, whose range does
    not depend on the anchor, so a replay against a wall clock that moved on draws the same choices
    (a strategy whose bounds follow `now` is an inconsistent data generation to Hypothesis)."""
    return st.integers(lo, hi).map(lambda offset: clamp_int64(anchor + offset))


def ordinary_timestamps(
    now: int, *, before: int, after: int, margin: int = DEFAULT_MARGIN_MS, spread: int = ORDINARY_SPREAD_MS
) -> st.SearchStrategy[int]:
    """Values a producer with a sane clock sends: inside the window with `margin`, within `spread` of now."""
    # Offsets from `now` (see `around`): the window shrunk by the margin, within `spread`.
    lo = -min(max(before - margin, 0), spread)
    hi = min(max(after - margin, 0), spread)
    # Mostly near `now` (a producer's clock is seconds off at most), sometimes anywhere in the window.
    near = around(now, max(lo, -60_000), min(hi, 60_000))
    return st.one_of(near, around(now, lo, hi))


def near_long_max() -> st.SearchStrategy[int]:
    """Long.MAX_VALUE and just below it: overflow-prone for `ts - now` and for v2 deltas (VAL-4)."""
    return st.integers(LONG_MAX - 1_000, LONG_MAX)


def below_minus_one() -> st.SearchStrategy[int]:
    """Timestamps < -1: invalid for Java writers (FMT-8), range-checked like any value by the broker
    (VAL-15); Long.MIN_VALUE is VAL-4's wraparound case."""
    return st.one_of(
        st.sampled_from((-2, LONG_MIN)),
        st.integers(LONG_MIN, -2),
        st.integers(-REALISTIC_NOW_MS, -2),
    )


def special_timestamps(*, negative: bool = False) -> st.SearchStrategy[int]:
    """-1 (NO_TIMESTAMP, VAL-3), 0, near Long.MAX_VALUE; below -1 only when `negative`."""
    parts: list[st.SearchStrategy[int]] = [st.sampled_from((NO_TIMESTAMP, 0)), near_long_max()]
    if negative:
        parts.append(below_minus_one())
    return st.one_of(parts)


def seconds_mistake(now: int) -> int:
    """A producer that sends seconds where Kafka wants milliseconds."""
    return now // 1_000


def microseconds_mistake(now: int) -> int:
    return clamp_int64(now * 1_000)


def nanoseconds_mistake(now: int) -> int:
    """A producer that sends nanoseconds (1.7e18: still an int64, far in the future)."""
    return clamp_int64(now * 1_000_000)


def unit_mistakes(now: int) -> st.SearchStrategy[int]:
    """`now` in the wrong unit: seconds (far in the past), microseconds or nanoseconds (far in the
    future), exactly or with a little jitter as a real clock reading would have."""
    exact = st.sampled_from((seconds_mistake(now), microseconds_mistake(now), nanoseconds_mistake(now)))
    jittered = st.one_of(
        st.integers(0, 60).map(lambda j: seconds_mistake(now) + j),
        st.integers(0, 60_000_000_000).map(lambda j: clamp_int64(nanoseconds_mistake(now) + j)),
    )
    return st.one_of(exact, jittered)


def bound_probe_values(now: int, before: int, after: int) -> tuple[int, ...]:
    """VAL-4: the last accepted and first rejected value on each side, clamped to int64 and deduplicated
    (with an unbounded side, `now + after` and `now + after + 1` both clamp to Long.MAX_VALUE)."""
    raw = (now - before, now - before - 1, now + after, now + after + 1)
    return tuple(dict.fromkeys(clamp_int64(v) for v in raw))


def bound_probes(now: int, before: int, after: int) -> st.SearchStrategy[int]:
    """Exactly at and one past the validation bounds (VAL-4, VAL-5 with before = after = difference)."""
    return st.sampled_from(bound_probe_values(now, before, after))


def timestamps(
    now: int,
    *,
    before: int,
    after: int,
    boundary: bool = False,
    margin: int = DEFAULT_MARGIN_MS,
    specials: bool = True,
    mistakes: bool = True,
    negative: bool = False,
) -> st.SearchStrategy[int]:
    """Producer timestamps for a broker whose clock reads `now` and whose effective bounds are
    (`before`, `after`) (VAL-6's `effective_bounds`): ordinary in-window values (with `margin`),
    plus -1/0/near Long.MAX_VALUE (`specials`), unit mistakes (`mistakes`), values below -1
    (`negative`, off by default: a Java producer cannot send them) and, with `boundary`, the exact
    bound probes. With `specials` and `mistakes` off and `boundary` off every value is accepted."""
    ordinary = ordinary_timestamps(now, before=before, after=after, margin=margin)
    odd: list[st.SearchStrategy[int]] = []
    if specials:
        odd.append(special_timestamps(negative=negative))
    elif negative:
        odd.append(below_minus_one())
    if mistakes:
        odd.append(unit_mistakes(now))
    if boundary:
        odd.append(bound_probes(now, before, after))
    if not odd:
        return ordinary
    return _mixed(ordinary, st.one_of(odd))


@st.composite
def _mixed(draw: st.DrawFn, ordinary: st.SearchStrategy[int], odd: st.SearchStrategy[int]) -> int:
    # Ordinary values two times in three, however many odd kinds there are (a flat one_of would give
    # each branch the same weight): most batches should be accepted so that the log grows. The
    # choice shrinks towards the ordinary branch.
    if draw(st.integers(0, 2)) < 2:
        return draw(ordinary)
    return draw(odd)
