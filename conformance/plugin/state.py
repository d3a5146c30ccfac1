"""Where the plugin keeps the run's state between hooks: keys into pytest's stashes (the run's RunState, settings and
target on the config, each test's check record and draws on its item, the target's health, the version the
implementation said, the expectations in force and the signal that stopped the run on the config) and the collector
that hands each test's result and the implementation's version to the RunState (with pytest-xdist: in the
controller)."""

from __future__ import annotations

import contextlib
import json
import signal
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.judging.checks import CheckRecord
from conformance.judging.draws import DrawLog
from conformance.judging.results import TestResult
from conformance.judging.run_state import RunState
from conformance.plugin.launcher import SuitesRun
from conformance.targets.kinds.implementation import ImplementationFactory
from conformance.targets.routes.wire_adapter.health import TargetHealth
from conformance.targets.target import Target

STATE = pytest.StashKey[RunState]()
RECORD = pytest.StashKey[CheckRecord]()
DRAWS = pytest.StashKey[DrawLog]()
HEALTH = pytest.StashKey[TargetHealth]()
# The run's settings (its options, its settings document, their variables and defaults; with the TLS and SASL
# settings of --target broker), read once at configure (conformance.plugin.options.read_settings), and its target,
# parsed and checked once there: every hook reads these, none an option.
SETTINGS = pytest.StashKey[SuitesRun]()
TARGET = pytest.StashKey[Target]()
# The signal that stopped the run early (SIGINT, SIGTERM), if one did, and the run's "incomplete" text then.
STOPPED_BY = pytest.StashKey[signal.Signals]()
STOPPED = "the run was stopped"  # what a stop signal's KeyboardInterrupt and pytest's reason for stopping say
INCOMPLETE = pytest.StashKey[str]()
# The expectations in force, as the summary names them (conformance.plugin.launcher.ExpectationsChoice).
EXPECTATIONS_IN_FORCE = pytest.StashKey[str]()
# The version a built implementation under test said it is, in the process that built it (with pytest-xdist: each
# worker); the run records it, else what the target's row knows (RunState.declared_version).
SAID_VERSION = pytest.StashKey[str]()


@dataclass
class SessionTarget:
    """The target opened for this pytest process (conformance.plugin.fixtures): its factory, the log files of what
    was started for it, and what stops it (`close`: at the end of the session, or when pytest ends, whatever
    happened; once)."""

    factory: ImplementationFactory
    logs: list[Path]
    stack: contextlib.ExitStack

    def close(self) -> None:
        self.stack.close()


# The target opened before the first test, kept to the end of the session.
SESSION_TARGET = pytest.StashKey[SessionTarget]()

# The user property a test's result travels in on its report (conformance.plugin.reporting writes it).
RESULT_PROPERTY = "kafka-conformance-result"
# ... and the one the implementation's version travels in beside it, once its process knows it.
VERSION_PROPERTY = "kafka-conformance-implementation-version"


class ResultCollector:
    """Gathers each test's result, and the version the implementation said, into the run's state (with
    pytest-xdist: in the controller)."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == RESULT_PROPERTY:
                self.state.add_result(TestResult.from_json(json.loads(str(value))))
            elif name == VERSION_PROPERTY:
                self.state.add_version(str(value))
