"""The pytest plugin of the conformance suite.

Options: `--target NAME` (env `KTS_TARGET`, default `model`), `--profile NAME` (env `KTS_PROFILE`,
default `kafka-4.0`). Markers: `@pytest.mark.clause("LO.first-ge-target", ...)` names the clauses a
test checks; `@pytest.mark.requires(Capability.X, ...)` names the capabilities it needs. Fixtures:
`profile` (the Profile), `target_factory` (picklable), `impl` (a fresh implementation per test,
always closed), `reference_factory` (the model under the same profile).

More options: `--expectations FILE` (known failures, see conformance.judging.expectations; default: the file
the target ships in suites/expectations/, if any), `--no-expectations` (not even that), `--clauses ID,ID` (run
only tests tagged with these clauses), `--verdicts-json FILE` (machine-readable results).

Verdicts per clause are derived from the outcomes and the `ClauseViolation`s raised: PASS; FAIL;
UNSUPPORTED (a missing capability); N/A (the clause does not apply to the profile); KNOWN (a
failure listed in the expectations: reported as xfail); UNEXPECTED-PASS (a pinned known failure
that passed: reported as a failure); NON-STRICT (a SHOULD clause not met: reported as xfail, it
does not fail the run); BLOCKED (not decided: the target was lost, or the harness's own code broke). Each
failure carries a command that replays it exactly. Ctrl-C or SIGTERM stops the run at the test it is in: the
fixtures are torn down (a managed broker stopped) and verdicts.json says the run is incomplete.

The plugin is this package: pytest registers the hooks and fixtures imported below (each defined once, in the
module of its concern): options.py (options, the run's Hypothesis profile and state), collection.py (which tests
run, clause labels, pinned known failures), fixtures.py (the target and the fixtures the suites use),
reporting.py (evidence, judgement, failure sections, terminal summary, verdicts.json); state.py holds the keys
they share.
"""

from __future__ import annotations

# The seeded mutants register themselves into the targets on import (conformance.targets.kinds.seeding).
import conformance.faults  # noqa: F401
from conformance.plugin.collection import kind_of_test, pytest_collection_modifyitems
from conformance.plugin.fixtures import (
    impl,
    profile,
    pytest_exception_interact,
    pytest_runtest_setup,
    pytest_runtestloop,
    pytest_sessionstart,
    reference_factory,
    require,
    target_factory,
)
from conformance.plugin.options import pytest_addoption, pytest_configure, pytest_unconfigure
from conformance.plugin.reporting import (
    clause_verdicts,
    pytest_runtest_call,
    pytest_runtest_makereport,
    pytest_sessionfinish,
    pytest_terminal_summary,
    replay_command,
)

__all__ = [
    "clause_verdicts",
    "impl",
    "kind_of_test",
    "profile",
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_exception_interact",
    "pytest_runtest_call",
    "pytest_runtest_makereport",
    "pytest_runtest_setup",
    "pytest_runtestloop",
    "pytest_sessionfinish",
    "pytest_sessionstart",
    "pytest_terminal_summary",
    "pytest_unconfigure",
    "reference_factory",
    "replay_command",
    "require",
    "target_factory",
]
