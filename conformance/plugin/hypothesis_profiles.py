"""The Hypothesis profiles of the suites: `ci` derandomized with a fixed budget, `fast` the same
with a small budget and no shrinking (the default tox run), `broker` the ci budget without shrinking (a real
broker over the wire, and the kill table's first pass), `dev` random with a printed seed, `thorough` for long
runs. No example database: a run is replayed exactly by its command."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, settings

# The profiles register_profiles() registers, smallest budget first (what a usage error lists).
PROFILE_NAMES = ("fast", "ci", "broker", "dev", "thorough")


def register_profiles() -> None:
    """Register the profiles with Hypothesis (idempotent)."""
    # No example database: a run is replayed exactly by its command.
    every: dict[str, Any] = {"deadline": None, "database": None, "print_blob": True}
    no_shrinking = [Phase.explicit, Phase.reuse, Phase.generate]
    settings.register_profile("ci", derandomize=True, max_examples=100, **every)
    # `fast` skips shrinking: it proves a fault is caught quickly; `ci` also shrinks the counterexample.
    settings.register_profile("fast", derandomize=True, max_examples=25, phases=no_shrinking, **every)
    # `broker`: the ci budget without shrinking, for a real broker over the wire, where each shrink step is a
    # round of network requests (minutes per failure); the replay command and `--hypothesis-profile ci`
    # shrink a failure afterwards.
    settings.register_profile("broker", derandomize=True, max_examples=100, phases=no_shrinking, **every)
    settings.register_profile("dev", max_examples=100, **every)
    settings.register_profile("thorough", max_examples=1000, suppress_health_check=[HealthCheck.too_slow], **every)


def same_examples_for_every_target() -> None:
    """Make a derandomized run generate the same examples whatever the target.

    Hypothesis (6.1xx) also draws from the constants it finds in the source of the *local* modules loaded so
    far (hypothesis.internal.conjecture.providers, "local constants"): a run that imports the wire adapter and
    the control-plane client (a wire target) then draws other values than one that does not (the model), and
    a checkout run from its own directory other values than an installed one. `kafka-conformance compare`
    needs the same examples in process and over the wire, and a replay needs the same examples everywhere, so
    the suites draw from no local constants (Hypothesis' own and the strategies' values are unaffected).
    Internal API: where it is missing, nothing is changed."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - another Hypothesis layout
        return
    if callable(getattr(providers, "_get_local_constants", None)) and hasattr(providers, "Constants"):
        empty = providers.Constants()
        providers._get_local_constants = lambda: empty
        providers.CONSTANTS_CACHE.cache.clear()
