"""Per-test state routed by a context variable: the plugin opens a test's check record and draw log around its
call, and the checks and draws made inside (this thread and context) reach them without module globals."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def routed(var: ContextVar[T | None], value: T) -> Iterator[T]:
    """`var` holds `value` inside the block, and what it held before after it."""
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)
