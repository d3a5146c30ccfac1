"""Draws that can be pinned: the suites' interactive draws, recorded so a counterexample pastes back.

A suite test draws its scenario step by step (`data.draw(strategy, label=...)`), because later choices
depend on what the implementation answered. Hypothesis cannot take a `st.data()` argument in an explicit
`@example`, so the suites draw through `recorded(data)`: in a normal run that is a `Recorder`
(Hypothesis' own `st.data()` underneath, every (label, value) kept); an expectations file pins a
counterexample as `data=Replay([...])`, the same values handed back in the same order
(ARCHITECTURE.md "Expectations": the minimal counterexample pinned as an `@example`).

When a test fails, the plugin prints the `[[expected]]` entry to paste, built from the last recorder:
Hypothesis runs the (shrunk) failing example last. Values are the model's, whose reprs evaluate back with
the names of `conformance.expectations.example_namespace`.

Timestamps are pinned as absolute values: a pinned example replays exactly where the suite sets the
broker clocks (CLOCK_CONTROL: the model, the mutants); against a wall clock the same draws meet another
`now`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")


class Draws(Protocol):
    """What a suite test draws from: `Recorder` (generated) or `Replay` (pinned)."""

    def draw(self, strategy: st.SearchStrategy[T], label: str | None = None) -> T: ...


class PinMismatch(Exception):
    """A pinned example whose draws no longer fit the test (the test changed since it was recorded)."""


class Recorder:
    """Hypothesis' interactive data, with every draw recorded as (label, value)."""

    def __init__(self, data: st.DataObject) -> None:
        global _last
        self._data = data
        self.drawn: list[tuple[str | None, Any]] = []
        _last = self

    def draw(self, strategy: st.SearchStrategy[T], label: str | None = None) -> T:
        value = self._data.draw(strategy, label=label)
        self.drawn.append((label, value))
        return value

    def pin(self) -> str:
        """The keyword argument that replays these draws: `data=Replay([...])`."""
        return f"data=Replay({self.drawn!r})"

    def __repr__(self) -> str:
        # Hypothesis prints the argument before the draws happen; the draws follow as its own notes.
        return "data(...)"


class Replay:
    """Pinned draws, handed back in order. Each label must match the one the test asks for, so a test that
    changed since the example was recorded fails with a clear message instead of replaying nonsense."""

    def __init__(self, drawn: Sequence[tuple[str | None, Any]]) -> None:
        self.drawn = list(drawn)
        self._next = 0

    def draw(self, strategy: st.SearchStrategy[T], label: str | None = None) -> T:
        if self._next >= len(self.drawn):
            raise PinMismatch(
                f"the pinned example has {len(self.drawn)} draws but the test asks for another ({label!r}): "
                "the test changed; record the example again from a failing run"
            )
        pinned_label, value = self.drawn[self._next]
        if pinned_label != label:
            raise PinMismatch(
                f"draw {self._next + 1} of the pinned example is {pinned_label!r} but the test asks for {label!r}: "
                "the test changed; record the example again from a failing run"
            )
        self._next += 1
        return value  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"Replay({self.drawn!r})"


def draws() -> st.SearchStrategy[st.DataObject]:
    """The suites' `data` argument: `@given(data=draws())`, then `data = recorded(data)` first thing in the
    test (Hypothesis does not let `st.data()` be mapped, and an `@example` passes a `Replay` instead)."""
    return st.data()


def recorded(data: Draws) -> Draws:
    """A test's draws: recorded when generated (`st.DataObject`), as pinned when replayed (`Replay`)."""
    if isinstance(data, (Replay, Recorder)):
        return data
    assert isinstance(data, st.DataObject)
    return Recorder(data)


_last: Recorder | None = None


def take_last_recorder() -> Recorder | None:
    """The recorder of the most recent example of this process, and forget it (the plugin, on failure)."""
    global _last
    recorder, _last = _last, None
    return recorder
