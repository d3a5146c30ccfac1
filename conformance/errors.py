"""Errors of the harness that several modules raise: one place, so that no module imports another only for
its exception."""

from __future__ import annotations


class TargetError(ValueError):
    """A target name or profile that cannot be resolved or started; the message names the fix."""
