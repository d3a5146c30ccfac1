"""Draws that can be pinned: the suites' interactive draws, recorded so a counterexample pastes back.

A suite test draws its scenario step by step (`data.draw(strategy, label=...)`), because later choices
depend on what the implementation answered. Hypothesis cannot take a `st.data()` argument in an explicit
`@example`, so the suites draw through `recorded(data)`: in a normal run that is a `Recorder`
(Hypothesis' own `st.data()` underneath, every (label, value) kept); an expectations file pins a
counterexample as `data=Replay([...])`, the same values handed back in the same order
(docs/expectations.md: the minimal counterexample pinned as an `@example`).

When a test fails, the plugin prints the `[[expected]]` entry to paste, built from the last recorder:
Hypothesis runs the (shrunk) failing example last. Values are the model's, whose reprs evaluate back with
the names of `conformance.judging.expectations.example_namespace`.

Timestamps are pinned with the clock reading they were drawn against (`anchor`): a replay against a wall
clock that moved on shifts every value within ten years of the anchor by as much, so a timestamp an hour
ahead of the broker's clock stays an hour ahead. Where the suite sets the clocks the shift is zero.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

from conformance.judging.routing import routed

T = TypeVar("T")


class Draws(Protocol):
    """What a suite test draws from: `Recorder` (generated) or `Replay` (pinned)."""

    def draw(self, strategy: st.SearchStrategy[T], label: str | None = None) -> T: ...


class PinMismatch(Exception):
    """A pinned example whose draws no longer fit the test (the test changed since it was recorded)."""


class PinExhausted(Exception):
    """The test asks for more draws than the pinned example holds: the recorded run stopped at its failure
    there. With the failure now recorded as KNOWN the test goes on; the plugin ends the example quietly."""


# Values within ten years of the clock reading a pinned example was recorded at are timestamps: a replay
# against a clock that moved on shifts them by as much, so "an hour ahead of now" stays an hour ahead.
ANCHOR_SPAN_MS = 10 * 365 * 24 * 3600 * 1000


class Recorder:
    """Hypothesis' interactive data, with every draw recorded as (label, value), and the first broker clock
    reading of the test (`anchor`, noted by the suites' twin)."""

    def __init__(self, data: st.DataObject) -> None:
        self._data = data
        self.drawn: list[tuple[str | None, Any]] = []
        self.anchor: int | None = None
        _log().started(self)

    def draw(self, strategy: st.SearchStrategy[T], label: str | None = None) -> T:
        value = self._data.draw(strategy, label=label)
        self.drawn.append((label, value))
        return value

    def pin(self) -> str:
        """The keyword argument that replays these draws: `data=Replay([...], anchor=...)`."""
        anchor = "" if self.anchor is None else f", anchor={self.anchor}"
        return f"data=Replay({self.drawn!r}{anchor})"

    def __repr__(self) -> str:
        # Hypothesis prints the argument before the draws happen; the draws follow as its own notes.
        return "data(...)"


class Replay:
    """Pinned draws, handed back in order (each run of the example gets a fresh cursor). Each label must
    match the one the test asks for, so a test that changed since the example was recorded fails with a
    clear message instead of replaying nonsense. With an `anchor`, timestamps move with the clock."""

    def __init__(self, drawn: Sequence[tuple[str | None, Any]], anchor: int | None = None) -> None:
        self.drawn = list(drawn)
        self.anchor = anchor

    def cursor(self) -> Replaying:
        return Replaying(self)

    def draw(self, strategy: st.SearchStrategy[T], label: str | None = None) -> T:
        raise TypeError("a Replay is drawn from through `recorded(data)`, which gives each run its own cursor")

    def __repr__(self) -> str:
        anchor = "" if self.anchor is None else f", anchor={self.anchor}"
        return f"Replay({self.drawn!r}{anchor})"


class Replaying:
    """One run of a pinned example."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self._next = 0
        self.shift = 0
        self._clock_seen = False
        _log().started(self)

    @property
    def drawn(self) -> list[tuple[str | None, Any]]:
        return self.replay.drawn

    def pin(self) -> str:
        """The pinned example itself (a failure of another clause in it pins the same draws)."""
        anchor = "" if self.replay.anchor is None else f", anchor={self.replay.anchor}"
        return f"data=Replay({self.replay.drawn!r}{anchor})"

    def draw(self, strategy: st.SearchStrategy[T], label: str | None = None) -> T:
        drawn = self.replay.drawn
        if self._next >= len(drawn):
            raise PinExhausted(f"the pinned example has {len(drawn)} draws; the test asks for another ({label!r})")
        pinned_label, value = drawn[self._next]
        if pinned_label != label:
            raise PinMismatch(
                f"draw {self._next + 1} of the pinned example is {pinned_label!r} but the test asks for {label!r}: "
                "the test changed; record the example again from a failing run"
            )
        self._next += 1
        if self.shift and self.replay.anchor is not None:
            value = shift_timestamps(value, self.replay.anchor, self.shift)
        return value  # type: ignore[no-any-return]


def note_clock(now: int) -> None:
    """A broker clock reading of the running test (the suites' twin calls this): the first one anchors a
    recording, or sets how far a replay's timestamps move."""
    active = _log().active
    if isinstance(active, Recorder) and active.anchor is None:
        active.anchor = now
    elif isinstance(active, Replaying) and not active._clock_seen:
        active._clock_seen = True
        if active.replay.anchor is not None:
            active.shift = now - active.replay.anchor


def shift_timestamps(value: Any, anchor: int, shift: int) -> Any:
    """`value` with every int within ANCHOR_SPAN_MS of `anchor` moved by `shift`, inside tuples, lists and
    (frozen) dataclasses such as the model's batches and records."""
    if isinstance(value, (bool, Enum)):
        return value
    if isinstance(value, int):
        return value + shift if abs(value - anchor) <= ANCHOR_SPAN_MS else value
    if isinstance(value, tuple):
        return tuple(shift_timestamps(v, anchor, shift) for v in value)
    if isinstance(value, list):
        return [shift_timestamps(v, anchor, shift) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: shift_timestamps(getattr(value, f.name), anchor, shift) for f in dataclasses.fields(value) if f.init
        }
        return dataclasses.replace(value, **changes)
    return value


def draws() -> st.SearchStrategy[st.DataObject]:
    """The suites' `data` argument: `@given(data=draws())`, then `data = recorded(data)` first thing in the
    test (Hypothesis does not let `st.data()` be mapped, and an `@example` passes a `Replay` instead)."""
    return st.data()


def recorded(data: Draws) -> Draws:
    """A test's draws: recorded when generated (`st.DataObject`), as pinned when replayed (`Replay`)."""
    if isinstance(data, Replay):
        return data.cursor()
    if isinstance(data, (Recorder, Replaying)):
        return data
    assert isinstance(data, st.DataObject)
    return Recorder(data)


@dataclass
class DrawLog:
    """The draws of one test: the example drawing now (`active`, which a clock reading anchors) and the last
    one (`last`: Hypothesis runs the failing, shrunk example last, so a failure's pin comes from it). The plugin
    opens one per test with `drawing`; outside a test each context has its own."""

    active: Recorder | Replaying | None = None
    last: Recorder | Replaying | None = None

    def started(self, example: Recorder | Replaying) -> None:
        self.active = self.last = example


_current: ContextVar[DrawLog | None] = ContextVar("kafka_conformance_draws", default=None)


def _log() -> DrawLog:
    log = _current.get()
    if log is None:
        log = DrawLog()
        _current.set(log)
    return log


def drawing(log: DrawLog) -> AbstractContextManager[DrawLog]:
    """Route the draws made inside the block (this thread and context) to `log`."""
    return routed(_current, log)
