"""The plugin's command-line options, the Hypothesis profile and seed of a run, Ctrl-C and SIGTERM stopping it
(the signal kept for its "incomplete" line), and the run's state built from the options
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
from conformance.plugin.launcher import LauncherError, choose_expectations, suites_dir
from conformance.plugin.state import EXPECTATIONS_IN_FORCE, SECURITY, STATE, STOPPED, STOPPED_BY, ResultCollector
from conformance.targets.registry import (
    PROFILE_DEFAULT,
    TARGETS_HELP,
    TargetError,
    check_target,
    default_profile,
    parse_target,
    target_version,
)
from conformance.targets.routes.wire_adapter.fault_hook import fault_options
from conformance.targets.target import ServedBy
from conformance.wire.client_config import SecurityConfigError, config_bootstrap, resolve_security, security_options
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
    group = parser.getgroup("kafka-conformance")
    group.addoption(
        "--target",
        default=os.environ.get("KTS_TARGET", "model"),
        help=f"implementation under test: {TARGETS_HELP} (env KTS_TARGET)",
    )
    group.addoption(
        "--profile",
        default=os.environ.get("KTS_PROFILE"),
        help=f"behaviour profile the target claims (env KTS_PROFILE; {PROFILE_DEFAULT})",
    )
    group.addoption(
        "--expectations",
        default=os.environ.get("KTS_EXPECTATIONS"),
        help="TOML file of known failures of this target (env KTS_EXPECTATIONS; default: the file the target "
        "ships in suites/expectations/, if any)",
    )
    group.addoption(
        "--no-expectations",
        action="store_true",
        default=False,
        help="no expectations file, not even the one the target ships: every departure is a FAIL",
    )
    group.addoption(
        "--bootstrap-servers",
        default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS"),
        help="HOST:PORT of the cluster for --target broker (env KAFKA_BOOTSTRAP_SERVERS)",
    )
    group.addoption(
        "--control-url",
        default=os.environ.get("KTS_CONTROL_URL") or None,
        help="--target broker: URL of the cluster's control plane (clocks, leaders, retention; see "
        "docs/control-plane.md; env KTS_CONTROL_URL)",
    )
    group.addoption(
        "--brokers",
        type=int,
        default=None,
        help="how many brokers a managed target starts (default the target's own: 3 for reference, "
        "rdkafka-mock and kfake, 1 for kafka, which takes 1 or 3)",
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
    for flag, options in security_options():
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
    group.addoption(
        "--fail-on-stale",
        action="store_true",
        default=False,
        help="fail the run (exit 1) when an expectations entry is STALE: its clause and observable were checked "
        "and it covered nothing (the tox envs of the shipped files; docs/expectations-stale.md)",
    )
    group.addoption("--clauses", default=None, help="comma-separated clause IDs: run only tests tagged with them")
    group.addoption("--verdicts-json", default=None, help="write per-test and per-clause verdicts to this file")


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


def _default_profile(config: pytest.Config) -> None:
    """--profile, when not given, is the target's own (conformance.targets.registry.default_profile); a target the
    table does not know is named by check_target later, with the profile that is every other target's."""
    if config.getoption("--profile") is None:
        try:
            config.option.profile = default_profile(config.getoption("--target"))
        except TargetError:
            config.option.profile = DEFAULT_PROFILE.name


def security_target(target: str) -> bool:
    """Whether `target` is the user's cluster, which alone takes security settings and a client file's address."""
    try:
        return parse_target(target).served_by is ServedBy.CLUSTER
    except TargetError:
        return False


def _row_version(target: str) -> str | None:
    """What the target's row knows of its version (None for a name the table does not know: the target fixture
    reports that as a usage error)."""
    try:
        return target_version(target)
    except TargetError:
        return None


def pytest_configure(config: pytest.Config) -> None:
    _default_profile(config)
    _stop_on_signals(config)
    config.addinivalue_line("markers", "clause(*ids): the catalogue clauses a test checks")
    config.addinivalue_line("markers", "requires(*capabilities): capabilities a test needs")
    config.addinivalue_line("markers", "kind(name): the implementation kind a test checks (codec, client)")
    same_examples_for_every_target()
    profile_name = hypothesis_profile(config)
    _check_hypothesis_profile(config, profile_name)
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile(profile_name)
    seed = config.getoption("hypothesis_seed", None)
    if seed is None and not settings.get_profile(profile_name).derandomize:
        # A random run still replays exactly: the seed is forced and printed in the replay command.
        seed = random.randrange(2**32)
        core.global_force_seed = seed
    choice = choose_expectations(
        config.getoption("--target"),
        config.getoption("--expectations"),
        none=config.getoption("--no-expectations"),
        suites=_suites_of_run(config),
    )
    config.stash[EXPECTATIONS_IN_FORCE] = choice.describe()
    try:
        expectations = load_expectations(choice.path) if choice.path is not None else ()
    except ExpectationsError as exc:
        raise pytest.UsageError(str(exc)) from None
    state = RunState(
        target=config.getoption("--target"),
        profile=config.getoption("--profile"),
        hypothesis_profile=profile_name,
        seed=int(seed) if seed is not None else None,
        expectations=expectations,
        declared_version=_row_version(config.getoption("--target")),
        fail_on_stale=bool(config.getoption("--fail-on-stale")),
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
        security = resolve_security(lambda dest: config.getoption(dest, None))
        if config.getoption("--bootstrap-servers") is None and security_target(config.getoption("--target")):
            config.option.bootstrap_servers = config_bootstrap(lambda dest: config.getoption(dest, None))
        check_target(
            config.getoption("--target"),
            config.getoption("--profile"),
            bootstrap=config.getoption("--bootstrap-servers"),
            control_url=config.getoption("--control-url"),
            brokers=config.getoption("--brokers"),
            security=security,
        )
    except (TargetError, SecurityConfigError) as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[SECURITY] = security
