"""Errors of the harness that several modules raise: one place, so that no module imports another only for
its exception."""

from __future__ import annotations


class TargetError(ValueError):
    """A target name or profile that cannot be resolved or started; the message names the fix."""


class EnvironmentFailure(Exception):
    """A part around the implementation failed: a control plane that answered 5xx or could not be reached. What
    a test was doing when it was raised decides nothing about the implementation's timestamps, so the test's
    clauses are BLOCKED, never FAIL (conformance.judging.harness)."""
