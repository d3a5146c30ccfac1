"""The plugin's command-line options (declared once, with `kafka-conformance run`'s, as the fields of
conformance.plugin.launcher.SuitesRun), the run's settings read once from them and from the settings document
(conformance.plugin.state.SETTINGS, with the parsed target: TARGET), the Hypothesis profile and seed of a run, Ctrl-C
and SIGTERM stopping it (the signal kept for its "incomplete" line), and the run's state built from the settings
(conformance.plugin.state.STATE)."""

from __future__ import annotations

import os
import random
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import core, settings
from hypothesis.errors import InvalidArgument

from conformance.judging.expectations import ExpectationsError, load_expectations
from conformance.judging.run_state import RunState
from conformance.plugin.hypothesis_profiles import PROFILE_NAMES, register_profiles, same_examples_for_every_target
from conformance.plugin.launcher import LauncherError, SuitesRun, choose_expectations, suites_dir
from conformance.plugin.run_options import (
    DOCUMENT_DEST,
    SettingsError,
    Surface,
    add_pytest_options,
    read_document,
    resolve_all,
)
from conformance.plugin.state import (
    EXPECTATIONS_IN_FORCE,
    SETTINGS,
    STATE,
    STOPPED,
    STOPPED_BY,
    TARGET,
    ResultCollector,
)
from conformance.targets.registry import TargetError, check_target, default_profile, parse_target, target_version
from conformance.targets.target import ServedBy, Target
from conformance.wire.client_config import SecurityConfigError, config_bootstrap, resolve_security
from models.clauses import get_clause
from models.profiles import DEFAULT_PROFILE

register_profiles()

_REPLACED_HANDLERS = pytest.StashKey[dict[signal.Signals, Any]]()


def hypothesis_profile(config: pytest.Config) -> str:
    """The Hypothesis profile of the run: --hypothesis-profile, else $HYPOTHESIS_PROFILE, else ci under CI."""
    chosen = config.getoption("hypothesis_profile", None)
    if chosen:
        return str(chosen)
    return os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")


def _check_hypothesis_profile(config: pytest.Config, name: str) -> None:
    """A profile nobody registered is a usage error naming the profiles, raised before Hypothesis' own plugin
    loads it (which would end the run in an INTERNALERROR traceback)."""
    try:
        settings.get_profile(name)
    except InvalidArgument:
        # Not the option, then the environment (the fallbacks, ci and dev, are registered).
        chosen = config.getoption("hypothesis_profile", None)
        given = f"--hypothesis-profile {name}" if chosen else f"HYPOTHESIS_PROFILE={name}"
        raise pytest.UsageError(
            f"{given}: no such Hypothesis profile: choose one of {', '.join(PROFILE_NAMES)} "
            "(e.g. --hypothesis-profile ci)"
        ) from None


def pytest_addoption(parser: pytest.Parser) -> None:
    add_pytest_options(parser.getgroup("kafka-conformance"), SuitesRun)


def _stop_on_signals(config: pytest.Config) -> None:
    """Ctrl-C, and SIGTERM (a CI runner cancelling the job, `kill PID`) read as Ctrl-C: pytest unwinds, session
    fixtures stop the brokers they started and what finished is written; the signal is kept (STOPPED_BY) for the
    run's "incomplete" line, and the run stops after the test it is in even where the KeyboardInterrupt is caught
    on its way (conformance.plugin.reporting). A handler someone else installed is left alone; ours go at
    unconfigure."""
    if threading.current_thread() is not threading.main_thread():
        return
    ours = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    replaced: dict[signal.Signals, Any] = {}

    def interrupt(signum: int, frame: object) -> None:
        stopped_by = config.stash.setdefault(STOPPED_BY, signal.Signals(signum))
        raise KeyboardInterrupt(f"{STOPPED} ({stopped_by.name})")

    for sig, default in ours.items():
        if signal.getsignal(sig) is default:
            replaced[sig] = signal.signal(sig, interrupt)
    config.stash[_REPLACED_HANDLERS] = replaced
    # Python runs a signal handler wherever the main thread is, a garbage collector callback included, where the
    # KeyboardInterrupt is only printed ("Exception ignored in"); the run stops after that test all the same.
    ignored = f"(?s)Exception ignored in.*KeyboardInterrupt. {STOPPED}"
    config.addinivalue_line("filterwarnings", f"ignore:{ignored}:pytest.PytestUnraisableExceptionWarning")
    # Where it lands in another plugin's old-style hookwrapper as it tears down (allure-pytest's around each test
    # call), pluggy warns before raising it on: the run is stopped all the same, and that is no plugin's error.
    teardown = f"(?s)A plugin raised an exception during an old-style hookwrapper teardown.*Interrupt. {STOPPED}"
    config.addinivalue_line("filterwarnings", f"ignore:{teardown}:pluggy.PluggyTeardownRaisedWarning")


def drop_frames_without_a_line(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    """A stop's traceback without the frames Python gave no line number: a signal handled where the interpreter
    runs code of no line (CPython 3.11 gives such a frame tb_lineno None, seen as "line -1, in kafka_configs"),
    which pytest cannot show (a TypeError in TracebackEntry.lineno): its terminal reporter printed that TypeError's
    traceback over the stopped run's lines, and the report of the test a stop interrupted ended the run in an
    INTERNALERROR. The exception's chain (its cause, its context, a group's members) is mended too: pytest shows
    each of them from its own traceback."""
    excinfo.traceback = excinfo.traceback.filter(lambda entry: entry._rawentry.tb_lineno is not None)
    _mend_chain(excinfo.value, set())


def without_lines_missing(tb: Any) -> Any:
    """The traceback chain from `tb` without the entries whose tb_lineno is None (tb_next is writable)."""
    while tb is not None and tb.tb_lineno is None:
        tb = tb.tb_next
    entry = tb
    while entry is not None:
        following = entry.tb_next
        while following is not None and following.tb_lineno is None:
            following = following.tb_next
        entry.tb_next = following
        entry = following
    return tb


def _mend_chain(exc: BaseException | None, seen: set[int]) -> None:
    if exc is None or id(exc) in seen:
        return
    seen.add(id(exc))
    exc.__traceback__ = without_lines_missing(exc.__traceback__)
    for linked in (exc.__cause__, exc.__context__, *getattr(exc, "exceptions", ())):
        _mend_chain(linked, seen)


@pytest.hookimpl(tryfirst=True)
def pytest_keyboard_interrupt(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    drop_frames_without_a_line(excinfo)


def pytest_unconfigure(config: pytest.Config) -> None:
    for sig, handler in config.stash.get(_REPLACED_HANDLERS, {}).items():
        signal.signal(sig, handler)


def _suites_of_run(config: pytest.Config) -> Path | None:
    """The suites directory this run collects from, whose expectations/ holds the targets' shipped files: the
    rootdir's `suites/` (a checkout, or `kafka-conformance run`, which sets the rootdir to the suites' parent),
    else the installed suites when the run names them; None for any other tests (a project's own test files)."""
    own = config.rootpath / "suites"
    if (own / "expectations").is_dir():
        return own
    try:
        installed = suites_dir()
    except LauncherError:  # not installed: only a checkout's suites/ ship expectations
        return None
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::", 1)[0]).resolve()
        if path == installed or installed in path.parents:
            return installed
    return None


def read_settings(config: pytest.Config) -> tuple[SuitesRun, Target | TargetError]:
    """The run's settings, read once: each option given on the command line, else the settings document's value
    (--run-settings, as `kafka-conformance run` passes them), else its environment variable, else its default
    (conformance.plugin.run_options); with the target parsed (or why it does not parse, which check_target names
    later), the profile the target's own when none is given, and the TLS and SASL settings resolved (their
    secrets from the environment). A usage error for a setting that cannot be read."""
    try:
        document = read_document(config.getoption(DOCUMENT_DEST), SuitesRun)
    except SettingsError as exc:
        raise pytest.UsageError(str(exc)) from None

    def given(name: str) -> Any:
        value = getattr(config.option, name, None)
        if value is None and name in document.settings:
            return document.settings[name]
        return value

    def security_option(dest: str) -> str | None:
        value = config.getoption(dest, None)
        return document.security.get(dest) if value is None else value

    try:
        values = resolve_all(SuitesRun, given, Surface.PYTEST)
    except SettingsError as exc:
        raise pytest.UsageError(str(exc)) from None
    parsed: Target | TargetError
    try:
        parsed = parse_target(values["target"])
        values["profile"] = values["profile"] or default_profile(parsed)
    except TargetError as exc:  # named by check_target, with the profile that is every other target's meanwhile
        parsed = exc
        values["profile"] = values["profile"] or DEFAULT_PROFILE.name
    try:
        security = resolve_security(security_option)
        if values["bootstrap_servers"] is None and isinstance(parsed, Target) and parsed.served_by is ServedBy.CLUSTER:
            values["bootstrap_servers"] = config_bootstrap(security_option)
    except SecurityConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    for name, value in values.items():  # a conftest that reads config.getoption sees what the run uses
        setattr(config.option, name, value)
    return SuitesRun(**values, hypothesis_profile=hypothesis_profile(config), security=security), parsed


def pytest_configure(config: pytest.Config) -> None:
    run, parsed = read_settings(config)
    config.stash[SETTINGS] = run
    _stop_on_signals(config)
    config.addinivalue_line("markers", "clause(*ids): the catalogue clauses a test checks")
    config.addinivalue_line("markers", "requires(*capabilities): capabilities a test needs")
    config.addinivalue_line("markers", "kind(name): the implementation kind a test checks (codec, client)")
    same_examples_for_every_target()
    profile_name = run.hypothesis_profile
    _check_hypothesis_profile(config, profile_name)
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile(profile_name)
    seed = config.getoption("hypothesis_seed", None)
    if seed is None and not settings.get_profile(profile_name).derandomize:
        # A random run still replays exactly: the seed is forced and printed in the replay command.
        seed = random.randrange(2**32)
        core.global_force_seed = seed
    choice = choose_expectations(
        run.target,
        run.expectations,
        none=run.no_expectations,
        suites=_suites_of_run(config),
        parsed=parsed if isinstance(parsed, Target) else None,
    )
    config.stash[EXPECTATIONS_IN_FORCE] = choice.describe()
    try:
        expectations = load_expectations(choice.path) if choice.path is not None else ()
    except ExpectationsError as exc:
        raise pytest.UsageError(str(exc)) from None
    state = RunState(
        target=run.target,
        profile=run.profile,
        hypothesis_profile=profile_name,
        seed=int(seed) if seed is not None else None,
        expectations=expectations,
        declared_version=target_version(parsed) if isinstance(parsed, Target) else None,
        fail_on_stale=run.fail_on_stale,
    )
    config.stash[STATE] = state
    config.pluginmanager.register(ResultCollector(state), "kafka-conformance-collector")
    if run.count_examples:
        from hypothesis.internal.observability import add_observability_callback

        def count(observation: Any, *_thread: object) -> None:
            if getattr(observation, "type", None) == "test_case":
                state.count_example()

        add_observability_callback(count, all_threads=True)
    for cid in run.clauses:
        try:
            get_clause(cid)
        except KeyError:
            raise pytest.UsageError(
                f"--clauses: unknown clause {cid!r}: `kafka-conformance clauses` lists the IDs"
            ) from None
    try:
        config.stash[TARGET] = check_target(
            parsed if isinstance(parsed, Target) else run.target,  # a name that does not parse: named here
            run.profile,
            bootstrap=run.bootstrap_servers,
            control_url=run.control_url,
            brokers=run.brokers,
            security=run.security,
        )
    except TargetError as exc:
        raise pytest.UsageError(str(exc)) from None
