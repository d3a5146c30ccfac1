"""The fixtures the suites use (`profile`, `target_factory`, `impl`, `reference_factory`), `require` for a
capability a test needs mid-way, the target's health between tests (a lost target is not asked again), and the
version a built implementation says it is.

The target is obtained and started once, before the first test (`pytest_runtestloop`), not by the first test that
asks for it: a target that cannot be had is then one usage error and no test, where a failing session fixture would
fail every test that uses it, each with the same cause (docs/setup-failures.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from conformance.judging.capabilities import Capability
from conformance.judging.verdicts import UNSUPPORTED_PREFIX
from conformance.plugin.reporting import attach_to_allure
from conformance.plugin.state import (
    HEALTH,
    SAID_VERSION,
    SESSION_TARGET,
    SETTINGS,
    STATE,
    STOPPED,
    STOPPED_BY,
    TARGET,
    SessionTarget,
)
from conformance.targets.kinds.implementation import Implementation, ImplementationFactory, implementation_version
from conformance.targets.libraries.model.model_broker import ModelFactory
from conformance.targets.registry import TargetError, obtain_target, open_target
from conformance.targets.routes.driver.driver_process import broken_driver_behind
from conformance.targets.routes.wire_adapter.health import TargetHealth, TargetLost
from conformance.wire.security import PLAINTEXT
from models.profiles import Profile, get_profile, narrow_versions

XDIST_CONTROLLER = "dsession"  # the plugin pytest-xdist registers in the process that hands tests to its workers


@pytest.fixture(scope="session")
def profile(pytestconfig: pytest.Config, target_factory: ImplementationFactory) -> Profile:
    """The profile the target claims, its API version ranges narrowed to what the target offers (a client
    negotiates versions through ApiVersions; the suites then only ask versions both sides serve)."""
    claimed = get_profile(pytestconfig.stash[SETTINGS].profile)
    offered = getattr(target_factory, "offered_versions", None)
    return narrow_versions(claimed, offered()) if callable(offered) else claimed


def open_session_target(config: pytest.Config) -> SessionTarget:
    """The target of `--target` for this pytest process (in each pytest-xdist worker: its own managed broker),
    obtained and started once; a TargetError naming the cause and the fix when it cannot be had or started."""
    found = config.stash.get(SESSION_TARGET, None)
    if found is not None:
        return found
    run = config.stash[SETTINGS]
    stack = contextlib.ExitStack()
    try:
        opening = open_target(config.stash[TARGET], run.profile, bootstrap=run.bootstrap_servers, log_dir=run.log_dir,
                              timeout=run.wire_timeout, fault_hook=run.fault_hook, brokers=run.brokers,
                              allow_disruptive=run.allow_disruptive, control_url=run.control_url,
                              security=run.security)  # fmt: skip
        factory, logs = stack.enter_context(opening)
    except BaseException:
        stack.close()
        raise
    opened = SessionTarget(factory, logs, stack)
    config.stash[SESSION_TARGET] = opened
    config.add_cleanup(opened.close)  # stopped when pytest ends, whatever happened
    bootstrap = getattr(factory, "bootstrap", None)
    if isinstance(bootstrap, str):
        config.stash[HEALTH] = TargetHealth(
            factory.name, bootstrap, timeout=run.wire_timeout, security=getattr(factory, "security", PLAINTEXT)
        )
    return opened


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """In a pytest-xdist controller, before its workers start: obtain the target (a download or a build, once), so
    that one that cannot be had is one usage error here, not each worker's failure to start it."""
    config = session.config
    if not config.pluginmanager.has_plugin(XDIST_CONTROLLER) or config.option.collectonly:
        return
    run = config.stash[SETTINGS]
    try:
        obtain_target(config.stash[TARGET], run.profile, brokers=run.brokers)
    except TargetError as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Before the first test: obtain and start the target, once. A target that cannot be had or started stops the
    run here, as a usage error (one line naming the cause and the fix, exit 4; `kafka-conformance run` exits 2),
    with no test reported: a target that is not there is not the implementation's FAIL, nor every test's error."""
    config = session.config
    if config.option.collectonly or (session.testsfailed and not config.option.continue_on_collection_errors):
        return  # nothing runs (pytest says why)
    if not any("target_factory" in getattr(item, "fixturenames", ()) for item in session.items):
        return  # no test here needs it (and the pytest-xdist controller runs none: each worker opens its own)
    try:
        open_session_target(config)
    except TargetError as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.fixture(scope="session")
def target_factory(pytestconfig: pytest.Config) -> Iterator[ImplementationFactory]:
    """The target for this session, opened before the first test (pytest_runtestloop; here only for a test that
    asks for it by name) and stopped when the session ends, whatever happened; managed brokers' logs go to the
    report."""
    try:
        opened = open_session_target(pytestconfig)
    except TargetError as exc:
        pytest.exit(f"kafka-conformance: {exc}", returncode=pytest.ExitCode.USAGE_ERROR)
    yield opened.factory
    if HEALTH in pytestconfig.stash:
        del pytestconfig.stash[HEALTH]
    for log in opened.logs:
        if log.is_file():
            attach_to_allure(f"{opened.factory.name} log", log.read_text(encoding="utf-8", errors="replace"))
    del pytestconfig.stash[SESSION_TARGET]
    opened.close()


@pytest.fixture(scope="session")
def reference_factory(pytestconfig: pytest.Config) -> ModelFactory:
    return ModelFactory(profile=pytestconfig.stash[SETTINGS].profile)


@pytest.fixture
def impl(request: pytest.FixtureRequest, target_factory: ImplementationFactory) -> Iterator[Implementation]:
    implementation = target_factory.build()
    said = implementation_version(implementation)
    if said is not None:  # it travels with each test's result to the run's state (reporting.py, state.py)
        request.config.stash[SAID_VERSION] = said
    health = request.config.stash.get(HEALTH, None)
    if health is not None:
        health.capabilities = implementation.capabilities
    try:
        missing = [
            cap
            for mark in request.node.iter_markers("requires")
            for cap in mark.args
            if isinstance(cap, Capability) and cap not in implementation.capabilities
        ]
        if missing:
            pytest.skip(unsupported_text(implementation, missing))
        yield implementation
    finally:
        implementation.close()


def require(implementation: Implementation, *capabilities: Capability) -> None:
    """Inside a test: skip as UNSUPPORTED unless the implementation has every capability."""
    missing = [c for c in capabilities if c not in implementation.capabilities]
    if missing:
        pytest.skip(unsupported_text(implementation, missing))


def unsupported_text(implementation: Implementation, missing: list[Capability]) -> str:
    """The skip reason of a test that needs `missing`: each capability, with the implementation's reason where it
    gives one (`lacking`: a one-broker cluster has no leader to move to, ...)."""
    why: dict[Capability, str] = getattr(implementation, "lacking", {})
    return UNSUPPORTED_PREFIX + ", ".join(c.value + (f" ({why[c]})" if c in why else "") for c in missing)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if STOPPED_BY in item.config.stash:
        # A stop signal whose KeyboardInterrupt was caught on its way: nothing more runs (the run stops here).
        pytest.skip(f"not run: {STOPPED} ({item.config.stash[STOPPED_BY].name})")
    item.config.stash[STATE].running = item.nodeid
    # After the skip marks (N/A stays N/A), before any fixture talks to the target: a lost target is not
    # asked again, so each remaining test fails at once with the cause.
    health = item.config.stash.get(HEALTH, None)
    needs_target = "target_factory" in getattr(item, "fixturenames", ())
    if health is not None and needs_target and health.check(item.nodeid, probe=False) is not None:
        # A capability the target was seen to lack before it was lost is still lacking: UNSUPPORTED, as in
        # a run where nothing died; everything else was not run.
        missing = [
            cap
            for mark in item.iter_markers("requires")
            for cap in mark.args
            if isinstance(cap, Capability) and health.capabilities is not None and cap not in health.capabilities
        ]
        if missing:
            pytest.skip(UNSUPPORTED_PREFIX + ", ".join(c.value for c in missing))
        raise TargetLost(health.not_run_message())


def pytest_exception_interact(node: pytest.Item | pytest.Collector, call: pytest.CallInfo[object]) -> None:
    """A driver that died, hung or broke the protocol (conformance.targets.routes.driver) stops the run with exit 2 and
    its one line: what it answered after that says nothing about the library. The report of what ran is kept."""
    broken = broken_driver_behind(call.excinfo.value) if call.excinfo is not None else None
    if broken is not None:
        pytest.exit(f"kafka-conformance: {broken}", returncode=pytest.ExitCode.USAGE_ERROR)

