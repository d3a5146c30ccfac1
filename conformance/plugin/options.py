"""The plugin's command-line options, the Hypothesis profile and seed of a run, SIGTERM read as Ctrl-C, and
the run's state built from the options (conformance.plugin.state.STATE)."""

from __future__ import annotations

import os
import random
import signal
import threading
from typing import Any

import pytest
from hypothesis import core, settings

from conformance.judging.expectations import ExpectationsError, load_expectations
from conformance.judging.run_state import RunState
from conformance.plugin.hypothesis_profiles import register_profiles, same_examples_for_every_target
from conformance.plugin.state import STATE, ResultCollector
from conformance.targets.fault_hook import fault_options
from conformance.targets.registry import TARGETS_HELP, TargetError, check_target
from models.clauses import get_clause

register_profiles()


def hypothesis_profile(config: pytest.Config) -> str:
    """The Hypothesis profile of the run: --hypothesis-profile, else $HYPOTHESIS_PROFILE, else ci under CI."""
    chosen = config.getoption("hypothesis_profile", None)
    if chosen:
        return str(chosen)
    return os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafka-conformance")
    group.addoption(
        "--target",
        default=os.environ.get("KTS_TARGET", "model"),
        help=f"implementation under test: {TARGETS_HELP} (env KTS_TARGET)",
    )
    group.addoption(
        "--profile",
        default=os.environ.get("KTS_PROFILE", "kafka-4.0"),
        help="behaviour profile the target claims (env KTS_PROFILE; default kafka-4.0)",
    )
    group.addoption(
        "--expectations",
        default=os.environ.get("KTS_EXPECTATIONS"),
        help="TOML file of known failures of this target (env KTS_EXPECTATIONS)",
    )
    group.addoption(
        "--bootstrap-servers",
        default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS"),
        help="HOST:PORT of the cluster for --target broker (env KAFKA_BOOTSTRAP_SERVERS)",
    )
    group.addoption(
        "--control-url",
        default=os.environ.get("KTS_CONTROL_URL") or None,
        help="--target broker: URL of the cluster's control plane (clocks, leaders, retention; see README "
        "'Give the suite a control plane'; env KTS_CONTROL_URL)",
    )
    group.addoption(
        "--wire-timeout",
        type=float,
        default=float(os.environ.get("KTS_WIRE_TIMEOUT", "10")),
        help="seconds any one network operation may take against a broker (env KTS_WIRE_TIMEOUT; default 10)",
    )
    group.addoption(
        "--log-dir",
        default=os.environ.get("KTS_LOG_DIR", "reports/out/logs"),
        help="where managed brokers write their logs (env KTS_LOG_DIR)",
    )
    for flag, options in fault_options():
        group.addoption(flag, **options)
    group.addoption(
        "--count-examples",
        action="store_true",
        default=False,
        help="count the Hypothesis examples each test runs into --verdicts-json (campaigns; uses Hypothesis' "
        "observability callbacks, which cost a little time per example)",
    )
    group.addoption(
        "--draft-expectations",
        default=None,
        help="append an expectations entry for every new failure to this file (reason: the violation; "
        "check each one, then move it into the target's expectations file)",
    )
    group.addoption("--clauses", default=None, help="comma-separated clause IDs: run only tests tagged with them")
    group.addoption("--verdicts-json", default=None, help="write per-test and per-clause verdicts to this file")


def _interrupt_on_sigterm() -> None:
    """SIGTERM (a CI runner cancelling the job, `kill PID`) reads as Ctrl-C, so pytest unwinds, session
    fixtures stop the brokers they started and the report is still written."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:

        def interrupt(signum: int, frame: object) -> None:
            raise KeyboardInterrupt(f"signal {signum}")

        signal.signal(signal.SIGTERM, interrupt)


def pytest_configure(config: pytest.Config) -> None:
    _interrupt_on_sigterm()
    config.addinivalue_line("markers", "clause(*ids): the catalogue clauses a test checks")
    config.addinivalue_line("markers", "requires(*capabilities): capabilities a test needs")
    config.addinivalue_line("markers", "kind(name): the implementation kind a test checks (codec, client)")
    same_examples_for_every_target()
    profile_name = hypothesis_profile(config)
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile(profile_name)
    seed = config.getoption("hypothesis_seed", None)
    if seed is None and not settings.get_profile(profile_name).derandomize:
        # A random run still replays exactly: the seed is forced and printed in the replay command.
        seed = random.randrange(2**32)
        core.global_force_seed = seed
    expectations_file = config.getoption("--expectations")
    try:
        expectations = load_expectations(expectations_file) if expectations_file else ()
    except ExpectationsError as exc:
        raise pytest.UsageError(str(exc)) from None
    state = RunState(
        target=config.getoption("--target"),
        profile=config.getoption("--profile"),
        hypothesis_profile=profile_name,
        seed=int(seed) if seed is not None else None,
        expectations=expectations,
    )
    config.stash[STATE] = state
    config.pluginmanager.register(ResultCollector(state), "kafka-conformance-collector")
    if config.getoption("--count-examples"):
        from hypothesis.internal.observability import add_observability_callback

        def count(observation: Any, *_thread: object) -> None:
            if getattr(observation, "type", None) == "test_case":
                state.count_example()

        add_observability_callback(count, all_threads=True)
    wanted = config.getoption("--clauses")
    if wanted:
        for cid in wanted.split(","):
            try:
                get_clause(cid.strip())
            except KeyError:
                raise pytest.UsageError(
                    f"--clauses: unknown clause {cid.strip()!r}: `kafka-conformance clauses` lists the IDs"
                ) from None
    try:
        check_target(
            config.getoption("--target"),
            config.getoption("--profile"),
            bootstrap=config.getoption("--bootstrap-servers"),
            control_url=config.getoption("--control-url"),
        )
    except TargetError as exc:
        raise pytest.UsageError(str(exc)) from None
