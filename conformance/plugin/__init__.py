"""The pytest plugin of the conformance suite.

Options: `--target NAME` (env `KTS_TARGET`, default `model`), `--profile NAME` (env `KTS_PROFILE`,
default `kafka-4.0`). Markers: `@pytest.mark.clause("LO.first-ge-target", ...)` names the clauses a
test checks; `@pytest.mark.requires(Capability.X, ...)` names the capabilities it needs. Fixtures:
`profile` (the Profile), `target_factory` (picklable), `impl` (a fresh implementation per test,
always closed), `reference_factory` (the model under the same profile).

More options: `--expectations FILE` (known failures, see conformance.judging.expectations), `--clauses
ID,ID` (run only tests tagged with these clauses), `--verdicts-json FILE` (machine-readable results).

Verdicts per clause are derived from the outcomes and the `ClauseViolation`s raised: PASS; FAIL;
UNSUPPORTED (a missing capability); N/A (the clause does not apply to the profile); KNOWN (a
failure listed in the expectations: reported as xfail); UNEXPECTED-PASS (a pinned known failure
that passed: reported as a failure); NON-STRICT (a SHOULD clause not met: reported as xfail, it
does not fail the run). Each failure carries a command that replays it exactly.
"""

from __future__ import annotations

import functools
import json
import os
import random
import shlex
import signal
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from hypothesis import core, settings

from conformance.judging.checks import CheckRecord, ClauseViolation, recording
from conformance.judging.draws import DrawLog, PinExhausted, drawing
from conformance.judging.expectations import (
    Expectation,
    ExpectationsError,
    coverer,
    load_expectations,
    parse_example,
    plain,
)
from conformance.judging.judge import Evidence, Judgement, judge
from conformance.judging.run_state import RunState
from conformance.judging.verdicts import NOT_APPLICABLE_PREFIX, UNSUPPORTED_PREFIX, EntryStatus, Verdict
from conformance.plugin.hypothesis_profiles import register_profiles, same_examples_for_every_target
from conformance.targets.fault_hook import fault_options
from conformance.targets.health import TargetHealth, TargetLost
from conformance.targets.implementation import (
    Capability,
    Implementation,
    ImplementationFactory,
    Kind,
    UnsupportedOperation,
)
from conformance.targets.model import ModelFactory
from conformance.targets.registry import TARGETS_HELP, TargetError, check_target, open_target, target_kind
from models.clauses import Level, get_clause, kip_url
from models.profiles import Profile, get_profile, narrow_versions

_state_key = pytest.StashKey[RunState]()
_record_key = pytest.StashKey[CheckRecord]()
_draws_key = pytest.StashKey[DrawLog]()
_health_key = pytest.StashKey[TargetHealth]()

register_profiles()

def _hypothesis_profile(config: pytest.Config) -> str:
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
    profile_name = _hypothesis_profile(config)
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
    config.stash[_state_key] = state
    config.pluginmanager.register(_Collector(state), "kafka-conformance-collector")
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


def _clause_ids(item: pytest.Item) -> list[str]:
    ids: list[str] = []
    for mark in item.iter_markers("clause"):
        ids.extend(str(a) for a in mark.args)
    return ids


def kind_of_test(item: pytest.Item) -> Kind:
    """The kind of implementation a suite test checks: its `@pytest.mark.kind(...)`, else a broker."""
    mark = item.get_closest_marker("kind")
    return Kind(mark.args[0]) if mark is not None else Kind.BROKER


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    profile = config.getoption("--profile")
    # A codec is not a broker: the tests of another kind are left out of the run, not reported UNSUPPORTED.
    kind = target_kind(config.getoption("--target"))
    other = [item for item in items if kind_of_test(item) is not kind]
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = [item for item in items if kind_of_test(item) is kind]
    wanted = {c.strip() for c in (config.getoption("--clauses") or "").split(",") if c.strip()}
    if wanted:
        kept = [item for item in items if wanted & set(_clause_ids(item))]
        deselected = [item for item in items if not wanted & set(_clause_ids(item))]
        if deselected:
            config.hook.pytest_deselected(items=deselected)
        items[:] = kept
    for item in items:
        ids = _clause_ids(item)
        for cid in ids:
            get_clause(cid)  # an unknown clause ID is a bug in the suite: fail at collection
        if ids and not any(profile in get_clause(cid).profiles for cid in ids):
            item.add_marker(pytest.mark.skip(reason=f"{NOT_APPLICABLE_PREFIX}{', '.join(ids)} not in {profile}"))
        if ids:
            _label_for_allure(item, ids)
    _pin_known_failures(config, items)


_SEVERITY = {Level.MUST: "critical", Level.SHOULD: "normal", Level.MAY: "minor"}


def _label_for_allure(item: pytest.Item, ids: list[str]) -> None:
    """allure-pytest labels (epic = KIP, feature = area, story = clause, severity from the level,
    the SEMANTICS rules as tags, a link to the KIP); marks only, so nothing happens without allure."""
    clauses = [get_clause(cid) for cid in ids]
    first = clauses[0]
    item.add_marker(pytest.mark.allure_label(first.kip, label_type="epic"))
    item.add_marker(pytest.mark.allure_label(first.area.value, label_type="feature"))
    item.add_marker(pytest.mark.allure_label(*ids, label_type="story"))
    strongest = min((c.level for c in clauses), key=lambda lv: list(Level).index(lv))
    item.add_marker(pytest.mark.allure_label(_SEVERITY[strongest], label_type="severity"))
    rules = sorted({r for c in clauses for r in c.rules})
    item.add_marker(pytest.mark.allure_label(*rules, label_type="tag"))
    for kip in sorted({c.kip for c in clauses}):
        item.add_marker(pytest.mark.allure_link(kip_url(kip), link_type="link", name=kip))


def _pinned_for(config: pytest.Config, item: pytest.Item) -> list[Expectation]:
    return [e for e in config.stash[_state_key].expectations if e.pinned and item.nodeid == e.test]


def _end_pins_quietly(function: Any) -> None:
    """A pinned example ends where its recorded run failed (conformance.judging.draws.PinExhausted): the failure is
    KNOWN now and the test would go on, but the pin holds no further draws. That example then counts as
    done, and generation goes on with the other examples (Hypothesis' documented `inner_test` hook)."""
    hypothesis_attr = function.hypothesis
    inner = hypothesis_attr.inner_test
    if getattr(inner, "_ends_pins_quietly", False):
        return

    @functools.wraps(inner)
    def quiet(*args: Any, **kwargs: Any) -> Any:
        try:
            return inner(*args, **kwargs)
        except PinExhausted:
            return None

    quiet._ends_pins_quietly = True  # type: ignore[attr-defined]
    hypothesis_attr.inner_test = quiet


def _pin_known_failures(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add each pinned counterexample as a Hypothesis @example of its test (expectations doc)."""
    from hypothesis import example

    nodeids = {item.nodeid for item in items}
    # A run of some suite modules only (a campaign task, `pytest suites/test_x.py`) leaves out the pins of
    # the others; a pin into a module that was collected but naming no test of it is a mistake.
    modules = {nodeid.split("::", 1)[0] for nodeid in nodeids}
    for expectation in config.stash[_state_key].expectations:
        if (
            expectation.pinned
            and expectation.test not in nodeids
            and str(expectation.test).split("::", 1)[0] in modules
            and config.getoption("--clauses") is None
        ):
            raise pytest.UsageError(
                f"expectations: test {expectation.test!r} (for {expectation.clause}) was not collected: "
                "fix the node id (as printed by pytest --collect-only -q)"
            )
    for item in items:
        for expectation in _pinned_for(config, item):
            function = getattr(item, "obj", None)
            if function is None or not hasattr(function, "hypothesis"):
                raise pytest.UsageError(f"expectations: {item.nodeid} is not a Hypothesis test; 'example' needs one")
            try:
                arguments = parse_example(expectation)
            except Exception as exc:  # the file's own Python: name the entry, not a traceback
                raise pytest.UsageError(
                    f"expectations: the example of {expectation.clause} on {item.nodeid} does not evaluate "
                    f"({type(exc).__name__}: {exc}): paste the 'pin' entry a failing run prints"
                ) from None
            example(**arguments)(function)
            _end_pins_quietly(function)


@pytest.fixture(scope="session")
def profile(pytestconfig: pytest.Config, target_factory: ImplementationFactory) -> Profile:
    """The profile the target claims, its API version ranges narrowed to what the target offers (a client
    negotiates versions through ApiVersions; the suites then only ask versions both sides serve)."""
    claimed = get_profile(pytestconfig.getoption("--profile"))
    offered = getattr(target_factory, "offered_versions", None)
    return narrow_versions(claimed, offered()) if callable(offered) else claimed


@pytest.fixture(scope="session")
def target_factory(pytestconfig: pytest.Config) -> Iterator[ImplementationFactory]:
    """The target for this session (in each pytest-xdist worker: its own managed broker), started on first
    use and stopped when the session ends, whatever happened; managed brokers' logs go to the report."""
    try:
        opened = open_target(
            pytestconfig.getoption("--target"),
            pytestconfig.getoption("--profile"),
            bootstrap=pytestconfig.getoption("--bootstrap-servers"),
            log_dir=Path(pytestconfig.getoption("--log-dir")),
            timeout=pytestconfig.getoption("--wire-timeout"),
            fault_hook=pytestconfig.getoption("--fault-hook"),
            allow_disruptive=pytestconfig.getoption("--allow-disruptive"),
            control_url=pytestconfig.getoption("--control-url"),
        )
        with opened as (factory, logs):
            bootstrap = getattr(factory, "bootstrap", None)
            if isinstance(bootstrap, str):
                pytestconfig.stash[_health_key] = TargetHealth(
                    factory.name, bootstrap, timeout=pytestconfig.getoption("--wire-timeout")
                )
            yield factory
            if _health_key in pytestconfig.stash:
                del pytestconfig.stash[_health_key]
            for log in logs:
                if log.is_file():
                    _attach_to_allure(f"{factory.name} log", log.read_text(encoding="utf-8", errors="replace"))
    except TargetError as exc:
        pytest.exit(f"kafka-conformance: {exc}", returncode=pytest.ExitCode.USAGE_ERROR)


@pytest.fixture(scope="session")
def reference_factory(pytestconfig: pytest.Config) -> ModelFactory:
    return ModelFactory(profile=pytestconfig.getoption("--profile"))


@pytest.fixture
def impl(request: pytest.FixtureRequest, target_factory: ImplementationFactory) -> Iterator[Implementation]:
    implementation = target_factory.build()
    health = request.config.stash.get(_health_key, None)
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
            pytest.skip(UNSUPPORTED_PREFIX + ", ".join(c.value for c in missing))
        yield implementation
    finally:
        implementation.close()


def require(implementation: Implementation, *capabilities: Capability) -> None:
    """Inside a test: skip as UNSUPPORTED unless the implementation has every capability."""
    missing = [c for c in capabilities if c not in implementation.capabilities]
    if missing:
        pytest.skip(UNSUPPORTED_PREFIX + ", ".join(c.value for c in missing))


def _violations(exc: BaseException | None) -> list[ClauseViolation]:
    """The clause violations behind a failure (Hypothesis may raise several as an ExceptionGroup)."""
    if isinstance(exc, ClauseViolation):
        return [exc]
    if isinstance(exc, BaseExceptionGroup):
        found: list[ClauseViolation] = []
        for inner in exc.exceptions:
            found.extend(_violations(inner))
        return found
    return []


def _message_with_notes(exc: BaseException) -> str:
    """The failure text plus Hypothesis' notes (the falsifying example or the shrunk program)."""
    parts = [f"{type(exc).__name__}: {exc}"]
    parts.extend(str(n) for n in getattr(exc, "__notes__", []))
    if isinstance(exc, BaseExceptionGroup):
        parts.extend(_message_with_notes(inner) for inner in exc.exceptions)
    return "\n".join(parts)


def _unsupported(exc: BaseException | None) -> UnsupportedOperation | None:
    if isinstance(exc, UnsupportedOperation):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _unsupported(inner)) is not None:
                return found
    return None


def _judged_target_lost(
    item: pytest.Item, report: pytest.TestReport, call: pytest.CallInfo[None], hits: list[ClauseViolation]
) -> bool:
    """Report a test whose target is gone: failed, with the cause and where to look, and its clauses
    BLOCKED. BLOCKED and not FAIL: what a dead broker "answered" (a refused connection read as
    NETWORK_EXCEPTION, a timeout) says nothing about its timestamp behaviour; and not PASS either: the
    clauses were not decided. The test itself fails, so the run fails."""
    health = item.config.stash.get(_health_key, None)
    if health is None or report.when not in ("setup", "call"):
        return False
    if call.excinfo is not None and isinstance(call.excinfo.value, TargetLost):
        message = str(call.excinfo.value)
    else:
        # A clean pass costs nothing (a managed child's exit status); a failure, or a known failure that
        # may be a dead broker's NETWORK_EXCEPTION, also probes a broker this process did not start.
        suspicious = report.failed or bool(hits)
        cause = health.check(item.nodeid, probe=suspicious)
        if cause is None or not suspicious:
            return False  # a test that passed ran its checks against a live broker: its verdicts stand
        met: BaseException = call.excinfo.value if call.excinfo is not None else hits[0]
        seen = (str(met).splitlines() or [""])[0][:500]
        message = (
            f"TARGET LOST: {cause}. What this test met after that says nothing about the target's "
            "timestamp behaviour: its clauses are BLOCKED (not decided) and the remaining tests fail "
            "without running; find the cause in the log, then run again.\n"
            f"What the test met: {type(met).__name__}: {seen}"
        )
    report.outcome = "failed"
    report.longrepr = message
    verdicts = {cid: Verdict.BLOCKED for cid in _clause_ids(item)}
    _record(item, report, verdicts, message, target_lost=health.lost)
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Every check the test makes goes to its own record, which knows the expectations in force for it."""
    entries = item.config.stash[_state_key].expectations
    record = CheckRecord(cover=coverer(entries, item.nodeid))
    item.stash[_record_key] = record
    item.stash[_draws_key] = draws = DrawLog()
    with recording(record), drawing(draws):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report: pytest.TestReport = yield
    record = item.stash.get(_record_key, None) if report.when == "call" else None
    # Violations recorded while the test went on: covered by an expectation (KNOWN) or not a MUST (NON-STRICT).
    hits = [v for v, _ in record.covered] + record.lenient if record is not None else []
    if _judged_target_lost(item, report, call, hits):
        return report
    if report.when != "call" and not (report.skipped and report.when == "setup"):
        if report.failed:
            _record(item, report, {cid: Verdict.FAIL for cid in _clause_ids(item)}, str(report.longrepr))
        return report
    evidence = _evidence(item, report, call, record)
    state = item.config.stash[_state_key]
    judgement = judge(evidence, state.expectations)
    message = ""
    if evidence.skipped is not None:
        message = evidence.skipped
    elif judgement.skipped:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, UNSUPPORTED_PREFIX + judgement.summary)
        message = judgement.summary
    elif judgement.failed:
        exc = call.excinfo.value if call.excinfo is not None else None
        message = _message_with_notes(exc) if exc is not None else ""
        if judgement.unexpected:
            message = (message + "\n" if message else "") + judgement.summary
            report.outcome = "failed"
            report.longrepr = message
        if evidence.raised or evidence.error is not None:
            _failure_sections(item, report, evidence)
    elif judgement.known:
        report.outcome = "skipped"
        report.wasxfail = judgement.summary
        message = "\n".join(str(v) for v in hits[:5])
    unchecked = sorted(
        cid
        for cid, v in judgement.verdicts.items()
        if v in (Verdict.UNSUPPORTED, Verdict.NOT_APPLICABLE) and not judgement.skipped and evidence.skipped is None
    )
    if unchecked:
        message = (message + "\n" if message else "") + UNSUPPORTED_PREFIX + (
            f"never checked on this target (what the check needs did not occur): {', '.join(unchecked)}"
        )
    _record(item, report, judgement.verdicts, message, record=record, judgement=judgement, raised=evidence.raised)
    return report


def _evidence(
    item: pytest.Item, report: pytest.TestReport, call: pytest.CallInfo[None], record: CheckRecord | None
) -> Evidence:
    """What the test showed, for conformance.judging.judge."""
    ids = tuple(_clause_ids(item))
    profile = item.config.getoption("--profile")
    in_profile = frozenset(cid for cid in ids if profile in get_clause(cid).profiles)
    state = item.config.stash[_state_key]
    pinned = tuple(i for i, e in enumerate(state.expectations) if e.pinned and e.test == item.nodeid)
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else ""
        if NOT_APPLICABLE_PREFIX not in reason and not reason.startswith(UNSUPPORTED_PREFIX):
            reason = UNSUPPORTED_PREFIX + reason.removeprefix("Skipped: ")
        elif NOT_APPLICABLE_PREFIX in reason:
            reason = reason[reason.index(NOT_APPLICABLE_PREFIX) :]
        return Evidence(item.nodeid, ids, in_profile, skipped=reason, pinned=pinned)
    exc = call.excinfo.value if call.excinfo is not None and report.failed else None
    raised = tuple(_violations(exc))
    unsupported = _unsupported(exc)
    error = None
    if report.failed and not raised:
        error = _message_with_notes(exc) if exc is not None else str(report.longrepr)
    return Evidence(
        item.nodeid,
        ids,
        in_profile,
        held=frozenset(c for c, _ in record.held) if record is not None else frozenset(),
        covered=tuple(record.covered) if record is not None else (),
        lenient=tuple(record.lenient) if record is not None else (),
        raised=raised,
        error=error,
        unsupported=str(unsupported) if unsupported is not None else None,
        pinned=pinned,
    )


def _failure_sections(item: pytest.Item, report: pytest.TestReport, evidence: Evidence) -> None:
    """A new failure's evidence: the replay command, the entry that would pin it, the wire exchanges."""
    report.sections.append(("replay", replay_command(item)))
    violations = list(evidence.raised)
    pin = _pin_entry(item, violations, evidence.clauses)
    if pin:
        report.sections.append(("pin", pin))
        _attach_to_allure("pin (expectations entry)", pin)
        _draft_expectations(item, pin)
    exchanges = _wire_exchanges(item)
    if exchanges:
        _attach_to_allure("last requests and responses (wire)", exchanges)


def _wire_exchanges(item: pytest.Item, last: int = 8) -> str:
    """The last request/response bytes of a wire target's client, as hex, for a failure's evidence."""
    impl = getattr(item, "funcargs", {}).get("impl")
    exchanges = list(getattr(getattr(impl, "client", None), "exchanges", ()) or ())[-last:]
    blocks = []
    for x in exchanges:
        head = f"api_key={x.api_key} v{x.api_version} {x.address} {x.seconds * 1000:.1f} ms"
        if getattr(x, "error", None):
            head += f" error={x.error}"
        blocks.append(f"{head}\nrequest  {x.request_bytes[:4096].hex()}\nresponse {x.response_bytes[:4096].hex()}")
    return "\n\n".join(blocks)


def _attach_to_allure(name: str, body: str) -> None:
    try:
        import allure
    except ImportError:  # allure-pytest is optional: the verdict JSON and terminal carry the same text
        return
    allure.attach(body, name=name, attachment_type=allure.attachment_type.TEXT)


def _record(
    item: pytest.Item,
    report: pytest.TestReport,
    verdicts: dict[str, Verdict],
    message: str,
    *,
    target_lost: str | None = None,
    record: CheckRecord | None = None,
    judgement: Judgement | None = None,
    raised: tuple[ClauseViolation, ...] = (),
) -> None:
    if message and any(v is not Verdict.PASS for v in verdicts.values()) and report.when == "call":
        # The shrunk counterexample (Hypothesis' notes) and the replay command, for the report.
        _attach_to_allure("counterexample", message)
        if report.failed:
            _attach_to_allure("replay", replay_command(item))
    state = item.config.stash[_state_key]
    # The result travels on the report, so that with pytest-xdist the controller aggregates what the
    # workers found (pytest_runtest_logreport runs where the reports are collected).
    result: dict[str, Any] = {
        "nodeid": item.nodeid,
        "outcome": report.outcome,
        "clauses": _clause_ids(item),
        "verdicts": {cid: v.value for cid, v in verdicts.items()},
        "duration": report.duration,
        "finished_at": time.time(),
        "message": message[:8000],
        "replay": replay_command(item) if report.failed else None,
        # Hypothesis examples this test ran (with --count-examples; None without).
        "examples": state.examples.get(item.nodeid) if item.config.getoption("--count-examples") else None,
        # What the checks ran for, and which expectations entries (positions in the file, from 0) this test
        # matched or found stale: the run-level STALE / UNEXPECTED-PASS list is computed from these.
        "checked": sorted([c, o.id] for c, o in record.checked) if record is not None else [],
        "matched": list(judgement.matched) if judgement is not None else [],
        "unexpected": list(judgement.unexpected) if judgement is not None else [],
        "violations": _violation_rows(item, record, raised),
    }
    if target_lost is not None:
        result["target_lost"] = target_lost
    report.user_properties.append((_RESULT_PROPERTY, json.dumps(result)))


def _violation_rows(
    item: pytest.Item, record: CheckRecord | None, raised: tuple[ClauseViolation, ...]
) -> list[dict[str, Any]]:
    """One row per (clause, observable) that departed in this test, first occurrence (verdicts.json evidence)."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    entries = item.config.stash[_state_key].expectations
    found: list[tuple[ClauseViolation, int | None]] = []
    if record is not None:
        found += [(v, i) for v, i in record.covered] + [(v, None) for v in record.lenient]
    found += [(v, None) for v in raised]
    for v, entry in found:
        key = (v.clause_id, v.observable.id)
        if key in seen:
            continue
        seen[key] = {
            "clause": v.clause_id,
            "observable": v.observable.id,
            "observed": repr(v.observation.observed)[:500],
            "expected": repr(v.observation.expected)[:500],
            "context": v.context[:300],
            "entry": entries[entry].index if entry is not None else None,
        }
    return list(seen.values())


_RESULT_PROPERTY = "kafka-conformance-result"


class _Collector:
    """Gathers each test's result into the run's state (with pytest-xdist: in the controller)."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == _RESULT_PROPERTY:
                self.state.add_result(json.loads(str(value)))


def _pin_entry(item: pytest.Item, violations: list[ClauseViolation], clause_ids: tuple[str, ...]) -> str:
    """The expectations entries that pin this failure (the drawn values of the last, i.e. failing and
    shrunk, example), one per (clause, observable) that departed, for a user who records it as known."""
    draws = item.stash.get(_draws_key, None)
    recorder = draws.last if draws is not None else None
    if recorder is None or not recorder.drawn:
        return ""
    lines = ["To record this failure as known, add to the target's expectations file (fill in reason and link):"]
    targets: dict[tuple[str, str | None], ClauseViolation | None] = {}
    for v in violations:
        targets.setdefault((v.clause_id, v.observable.id), v)
    if not targets:  # a failure outside the clause checks: nothing names an observable
        targets = {(cid, None): None for cid in clause_ids}
    for (clause_id, observable), v in targets.items():
        lines += ["[[expected]]", f"clause = {json.dumps(clause_id)}"]
        lines.append(f"observable = {json.dumps(observable)}" if observable else 'observable = "..."')
        # A matcher only where the departure is a constant (an error code, a type, -1): a value that moves
        # with the scenario (an offset, a timestamp) would make the entry miss the next example.
        raw = v.observation.observed if v is not None else None
        if isinstance(raw, Enum) or (isinstance(raw, int) and not isinstance(raw, bool) and raw == -1):
            lines.append(f"observed = {json.dumps(plain(raw))}")
        lines += [
            'reason = "..."',
            'link = "..."',
            f"test = {json.dumps(item.nodeid)}",
            f"example = {json.dumps(recorder.pin())}",
        ]
    return "\n".join(lines)


def _draft_expectations(item: pytest.Item, pin: str) -> None:
    """With --draft-expectations FILE: append this failure's entries (one per clause and observable not
    drafted yet) with a DRAFT reason, for a person to check, explain and move into the expectations file."""
    path = item.config.getoption("--draft-expectations")
    if not path:
        return
    entries = pin.split("[[expected]]")[1:]
    target = Path(path)
    drafted = target.read_text(encoding="utf-8") if target.is_file() else ""
    out: list[str] = []
    for entry in entries:
        key = "\n".join(ln for ln in entry.splitlines() if ln.startswith(("clause = ", "observable = ")))
        if key and key in drafted:
            continue
        body = entry.replace('reason = "..."', f"reason = {json.dumps('DRAFT: seen in ' + item.nodeid)}")
        body = body.replace('link = "..."', 'link = "none: not reported upstream yet"')
        out.append("[[expected]]" + body.rstrip("\n") + "\n\n")
    if not out:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    # One write per failure with O_APPEND: pytest-xdist workers may append side by side.
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, "".join(out).encode("utf-8"))
    finally:
        os.close(fd)


def pytest_runtest_setup(item: pytest.Item) -> None:
    item.config.stash[_state_key].running = item.nodeid
    # After the skip marks (N/A stays N/A), before any fixture talks to the target: a lost target is not
    # asked again, so each remaining test fails at once with the cause.
    health = item.config.stash.get(_health_key, None)
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

def replay_command(item: pytest.Item) -> str:
    """One command that replays this test exactly: same target (and its address, expectations and hooks),
    profile, Hypothesis profile and seed."""
    config = item.config
    nodeid = item.nodeid
    args = ["pytest"]
    if Path.cwd().resolve() != config.rootpath.resolve():
        # Run from elsewhere (an installed package, `kafka-conformance` from any directory): the test by its
        # absolute path, the same rootdir (node ids and pins read suites/...) and the plugin loaded by name.
        path, _, rest = nodeid.partition("::")
        nodeid = f"{config.rootpath / path}::{rest}" if rest else str(config.rootpath / path)
        args += ["--rootdir", str(config.rootpath), "-p", "conformance.plugin"]
    args += [
        nodeid,
        "--target",
        config.getoption("--target"),
        "--profile",
        config.getoption("--profile"),
        "--hypothesis-profile",
        _hypothesis_profile(config),
    ]
    for option in ("--bootstrap-servers", "--control-url", "--expectations", "--fault-hook"):
        value = config.getoption(option, None)
        if value:
            args += [option, str(value)]
    if config.getoption("--allow-disruptive", False):
        args.append("--allow-disruptive")
    seed = config.stash[_state_key].seed
    if seed is not None:
        args.append(f"--hypothesis-seed={seed}")
    return shlex.join(args)


def clause_verdicts(config: pytest.Config) -> dict[str, Verdict]:
    """One verdict per clause over the run (conformance.judging.judge.clause_verdicts)."""
    return config.stash[_state_key].clause_verdicts()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    state = config.stash.get(_state_key, None)
    if state is None:
        return
    tr = terminalreporter
    if state.lost:
        hit = sum(1 for t in state.results if t.get("target_lost"))
        tr.section("TARGET LOST", red=True, bold=True)
        for cause in state.lost:
            tr.write_line(f"  {cause}", red=True)
        tr.write_line(
            f"  {hit} test(s) failed for that reason (their clauses are BLOCKED, not judged); "
            "the verdicts below cover only what ran before"
        )
    statuses = state.entry_statuses()
    stale = [
        (e, s)
        for e, s in zip(state.expectations, statuses, strict=True)
        if s in (EntryStatus.STALE, EntryStatus.UNEXPECTED_PASS)
    ]
    if stale:
        tr.section("expectations that covered nothing", yellow=True)
        for entry, status in stale:
            tr.write_line(f"  {status.value:<15} {entry.describe()}")
        tr.write_line(
            "  STALE: its clause and observable were checked and nothing it describes was observed: check "
            "whether the target was fixed, then remove or narrow the entry"
        )
    verdicts = clause_verdicts(config)
    if not verdicts:
        return
    tr.section(f"clause verdicts: target {state.target}, profile {state.profile}")
    counts: dict[str, int] = defaultdict(int)
    for cid in sorted(verdicts):
        counts[verdicts[cid].value] += 1
        if verdicts[cid] is not Verdict.PASS:
            tr.write_line(f"  {verdicts[cid].value:<12} {cid}")
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    if stale:
        summary += f"; {sum(1 for _, s in stale if s is EntryStatus.STALE)} STALE expectation(s)"
    tr.write_line("  " + summary)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = session.config.getoption("--verdicts-json")
    if not path or hasattr(session.config, "workerinput"):  # xdist workers: the controller writes it
        return
    state = session.config.stash.get(_state_key, None)
    if state is None:
        return
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(state.payload(int(exitstatus)), indent=2), encoding="utf-8")
