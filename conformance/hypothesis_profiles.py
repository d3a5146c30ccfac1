"""The Hypothesis profiles of the suites (issue 3): `ci` derandomized with a fixed budget, `fast` the same
with a small budget and no shrinking (the default tox run), `broker` the ci budget without shrinking (a real
broker over the wire, and the kill table's first pass), `dev` random with a printed seed, `thorough` for long
runs. No example database: a run is replayed exactly by its command."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, settings


def register_profiles() -> None:
    """Register the profiles with Hypothesis (idempotent)."""
    # No example database: a run is replayed exactly by its command.
    settings.register_profile("ci", derandomize=True, max_examples=100, deadline=None, database=None, print_blob=True)
    # `fast` skips shrinking: it proves a fault is caught quickly; `ci` also shrinks the counterexample.
    settings.register_profile(
        "fast",
        derandomize=True,
        max_examples=25,
        deadline=None,
        database=None,
        print_blob=True,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
    )
    # `broker`: the ci budget without shrinking, for a real broker over the wire, where each shrink step is a
    # round of network requests (minutes per failure); the replay command and `--hypothesis-profile ci`
    # shrink a failure afterwards.
    settings.register_profile(
        "broker",
        derandomize=True,
        max_examples=100,
        deadline=None,
        database=None,
        print_blob=True,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
    )
    settings.register_profile("dev", max_examples=100, deadline=None, database=None, print_blob=True)
    settings.register_profile(
        "thorough",
        max_examples=1000,
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
