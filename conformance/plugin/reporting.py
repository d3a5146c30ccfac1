"""What each test showed and what it means: the check record opened around each test, the evidence handed to
conformance.judging.judge, the pytest outcome set from the judgement, a new failure's sections (replay command,
pin, wire exchanges, drafts), each test's result on its report, the run's clause verdicts in the terminal
summary, and verdicts.json (conformance.judging.results) at the end of the session."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import signal
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.judging.checks import CheckRecord, ClauseViolation, recording
from conformance.judging.draws import DrawLog, drawing
from conformance.judging.expectations import coverer, draft_text, pin_text
from conformance.judging.harness import HARNESS_ERROR_PREFIX, harness_error, harness_error_text
from conformance.judging.headline import headline
from conformance.judging.judge import Evidence, Judgement, judge
from conformance.judging.results import TestResult, violation_records, write_results
from conformance.judging.verdicts import NOT_APPLICABLE_PREFIX, UNSUPPORTED_PREFIX, EntryStatus, Verdict
from conformance.plugin.collection import clause_ids
from conformance.plugin.options import drop_frames_without_a_line, hypothesis_profile
from conformance.plugin.run_options import command_line_of
from conformance.plugin.state import (
    DRAWS,
    EXPECTATIONS_IN_FORCE,
    HEALTH,
    INCOMPLETE,
    RECORD,
    RESULT_PROPERTY,
    SAID_VERSION,
    SETTINGS,
    STATE,
    STOPPED,
    STOPPED_BY,
    VERSION_PROPERTY,
)
from conformance.targets.kinds.implementation import UnsupportedOperation
from conformance.targets.routes.driver.driver_process import broken_driver_behind
from conformance.targets.routes.wire_adapter.health import TargetLost
from conformance.wire.client_config import pytest_arguments
from models.clauses import get_clause


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Every check the test makes goes to its own record, which knows the expectations in force for it."""
    entries = item.config.stash[STATE].expectations
    record = CheckRecord(cover=coverer(entries, item.nodeid))
    item.stash[RECORD] = record
    item.stash[DRAWS] = draws = DrawLog()
    with recording(record), drawing(draws):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    if call.excinfo is not None and STOPPED_BY in item.config.stash:
        # The test a stop interrupted (its KeyboardInterrupt perhaps caught and wrapped on its way): its report shows
        # the traceback, which may hold a frame of no line (CI: INTERNALERROR "unsupported operand type(s) for -:
        # 'NoneType' and 'int'" under sigterm-to-the-command).
        drop_frames_without_a_line(call.excinfo)
    report: pytest.TestReport = yield
    if _stopped_under_it(item, report):
        return report
    record = item.stash.get(RECORD, None) if report.when == "call" else None
    # Violations recorded while the test went on: covered by an expectation (KNOWN) or not a MUST (NON-STRICT).
    hits = [v for v, _ in record.covered] + record.lenient if record is not None else []
    if _judged_target_lost(item, report, call, hits):
        return report
    if report.when != "call" and not (report.skipped and report.when == "setup"):
        if report.failed:
            broke = harness_error(call.excinfo.value if call.excinfo is not None else None)
            if broke is not None:
                _judged_harness_error(item, report, broke)
            else:
                _record(item, report, {cid: Verdict.FAIL for cid in clause_ids(item)}, str(report.longrepr))
        return report
    evidence = _evidence(item, report, call, record)
    state = item.config.stash[STATE]
    judgement = judge(evidence, state.expectations)
    message = ""
    if evidence.skipped is not None:
        message = evidence.skipped
    elif judgement.skipped:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, UNSUPPORTED_PREFIX + judgement.summary)
        message = judgement.summary
    elif judgement.failed and evidence.harness_error:
        assert call.excinfo is not None
        message = _harness_error_message(item, report, call.excinfo.value)
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
    ran = not judgement.skipped and evidence.skipped is None
    unchecked = sorted(cid for cid, v in judgement.verdicts.items() if v is Verdict.UNSUPPORTED and ran)
    if unchecked:
        message = (message + "\n" if message else "") + UNSUPPORTED_PREFIX + (
            f"never checked on this target (what the check needs did not occur): {', '.join(unchecked)}"
        )
    # A clause outside the run's profile was not left unchecked: it does not apply.
    outside = sorted(cid for cid, v in judgement.verdicts.items() if v is Verdict.NOT_APPLICABLE and ran)
    if outside:
        profile = item.config.stash[SETTINGS].profile
        message = (message + "\n" if message else "") + NOT_APPLICABLE_PREFIX + (
            f"not in profile {profile}: {', '.join(outside)}"
        )
    _record(item, report, judgement.verdicts, message, record=record, judgement=judgement, raised=evidence.raised)
    return report


def _evidence(
    item: pytest.Item, report: pytest.TestReport, call: pytest.CallInfo[None], record: CheckRecord | None
) -> Evidence:
    """What the test showed, for conformance.judging.judge."""
    ids = tuple(clause_ids(item))
    profile = item.config.stash[SETTINGS].profile
    in_profile = frozenset(cid for cid in ids if profile in get_clause(cid).profiles)
    state = item.config.stash[STATE]
    pinned = tuple(i for i, e in enumerate(state.expectations) if e.pinned and e.test == item.nodeid)
    if report.skipped and not hasattr(report, "wasxfail"):
        # pytest puts "Skipped: " before the reason pytest.skip was given: the capability is named once.
        reason = str(report.longrepr[2]).removeprefix("Skipped: ") if isinstance(report.longrepr, tuple) else ""
        if NOT_APPLICABLE_PREFIX not in reason and not reason.startswith(UNSUPPORTED_PREFIX):
            reason = UNSUPPORTED_PREFIX + reason
        elif NOT_APPLICABLE_PREFIX in reason:
            reason = reason[reason.index(NOT_APPLICABLE_PREFIX) :]
        return Evidence(item.nodeid, ids, in_profile, skipped=reason, pinned=pinned)
    exc = call.excinfo.value if call.excinfo is not None and report.failed else None
    raised = tuple(_violations(exc))
    unsupported = _unsupported(exc)
    error = None
    if report.failed and not raised:
        error = _message_with_notes(exc) if exc is not None else str(report.longrepr)
    broke = harness_error(exc) if error is not None and unsupported is None else None
    return Evidence(
        item.nodeid,
        ids,
        in_profile,
        held=frozenset(c for c, _ in record.held) if record is not None else frozenset(),
        covered=tuple(record.covered) if record is not None else (),
        lenient=tuple(record.lenient) if record is not None else (),
        raised=raised,
        error=error,
        harness_error=broke is not None,
        unsupported=str(unsupported) if unsupported is not None else None,
        pinned=pinned,
    )


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


_HARNESS_ATTACHMENT = "harness error (traceback)"


def _harness_error_message(item: pytest.Item, report: pytest.TestReport, exc: BaseException) -> str:
    """A harness error's result text (conformance.judging.harness: the cause, then the traceback, which the report
    attaches), with the replay command beside it; no pin and no drafted expectation: it is no departure of the
    target."""
    message = harness_error_text(harness_error(exc) or exc)
    report.sections.append(("replay", replay_command(item)))
    return message


def _judged_harness_error(item: pytest.Item, report: pytest.TestReport, exc: BaseException) -> None:
    """A fixture of the harness broke before or after the test body: its clauses are BLOCKED, the test fails."""
    message = _harness_error_message(item, report, exc)
    attach_to_allure(_HARNESS_ATTACHMENT, message)
    _record(item, report, {cid: Verdict.BLOCKED for cid in clause_ids(item)}, message)


def _stopped_under_it(item: pytest.Item, report: pytest.TestReport) -> bool:
    """A test the run was stopped in (Ctrl-C, SIGTERM: conformance.plugin.options) did not finish: whatever it
    showed after the signal is no result (the KeyboardInterrupt may have been caught on its way, Hypothesis' engine
    turning it into an error of its own), so it is reported skipped and judged nothing, and pytest stops after it."""
    stopped_by = item.config.stash.get(STOPPED_BY, None)
    if stopped_by is None:
        return False
    item.session.shouldstop = f"{STOPPED} ({stopped_by.name})"
    if report.when != "call" and report.passed:
        return False
    report.outcome = "skipped"
    report.longrepr = (str(item.path), item.location[1] or 0, f"not finished: {item.session.shouldstop}")
    return True


def _judged_target_lost(
    item: pytest.Item, report: pytest.TestReport, call: pytest.CallInfo[None], hits: list[ClauseViolation]
) -> bool:
    """Report a test whose target is gone: failed, with the cause and where to look, and its clauses
    BLOCKED. BLOCKED and not FAIL: what a dead broker "answered" (a refused connection read as
    NETWORK_EXCEPTION, a timeout) says nothing about its timestamp behaviour; and not PASS either: the
    clauses were not decided. The test itself fails, so the run fails."""
    health = item.config.stash.get(HEALTH, None)
    if report.when not in ("setup", "call"):
        return False
    broken = broken_driver_behind(call.excinfo.value) if call.excinfo is not None else None
    if broken is not None:
        # The driver, not the library, broke: nothing it said is the library's answer (the run stops, fixtures.py).
        message = f"DRIVER BROKEN: {broken}. This test's clauses are BLOCKED (not decided)."
        report.outcome = "failed"
        report.longrepr = message
        _record(item, report, {cid: Verdict.BLOCKED for cid in clause_ids(item)}, message, target_lost=str(broken))
        return True
    if health is None:
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
    verdicts = {cid: Verdict.BLOCKED for cid in clause_ids(item)}
    _record(item, report, verdicts, message, target_lost=health.lost)
    return True


def _failure_sections(item: pytest.Item, report: pytest.TestReport, evidence: Evidence) -> None:
    """A new failure's evidence: the replay command, the entry that would pin it, the wire exchanges."""
    report.sections.append(("replay", replay_command(item)))
    violations = list(evidence.raised)
    pin = _pin_entry(item, violations, evidence.clauses)
    if pin:
        report.sections.append(("pin", pin))
        attach_to_allure("pin (expectations entry)", pin)
        _draft_expectations(item, pin)
    exchanges = _wire_exchanges(item)
    if exchanges:
        attach_to_allure("last requests and responses (wire)", exchanges)


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


def attach_to_allure(name: str, body: str) -> None:
    """`body` as a text attachment of the running test (or fixture) when allure-pytest is installed."""
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
        attach_to_allure(_HARNESS_ATTACHMENT if message.startswith(HARNESS_ERROR_PREFIX) else "counterexample", message)
        if report.failed:
            attach_to_allure("replay", replay_command(item))
    state = item.config.stash[STATE]
    found: list[tuple[ClauseViolation, int | None]] = []
    if record is not None:
        found += [(v, i) for v, i in record.covered] + [(v, None) for v in record.lenient]
    found += [(v, None) for v in raised]
    result = TestResult(
        nodeid=item.nodeid,
        outcome=report.outcome,
        clauses=tuple(clause_ids(item)),
        verdicts=dict(verdicts),
        duration=report.duration,
        finished_at=time.time(),
        message=message[:8000],
        replay=replay_command(item) if report.failed else None,
        examples=state.examples.get(item.nodeid) if item.config.stash[SETTINGS].count_examples else None,
        checked=tuple(sorted((c, o.id) for c, o in record.checked)) if record is not None else (),
        matched=judgement.matched if judgement is not None else (),
        unexpected=judgement.unexpected if judgement is not None else (),
        violations=violation_records(found, state.expectations),
        target_lost=target_lost,
    )
    # The result travels on the report, so that with pytest-xdist the controller aggregates what the
    # workers found (pytest_runtest_logreport runs where the reports are collected: state.ResultCollector).
    report.user_properties.append((RESULT_PROPERTY, json.dumps(result.to_json())))
    said = item.config.stash.get(SAID_VERSION, None)
    if said is not None:
        report.user_properties.append((VERSION_PROPERTY, said))


def _pin_entry(item: pytest.Item, violations: list[ClauseViolation], ids: tuple[str, ...]) -> str:
    """The expectations entries that pin this failure (the drawn values of the last, i.e. failing and
    shrunk, example), or "" when the test drew nothing through conformance.judging.draws."""
    draws = item.stash.get(DRAWS, None)
    recorder = draws.last if draws is not None else None
    if recorder is None or not recorder.drawn:
        return ""
    return pin_text(item.nodeid, recorder.pin(), violations, ids)


def _draft_expectations(item: pytest.Item, pin: str) -> None:
    """With --draft-expectations FILE: append this failure's entries not drafted yet (judging.expectations
    .draft_text), for a person to check, explain and move into the expectations file."""
    path = item.config.stash[SETTINGS].draft_expectations
    if not path:
        return
    target = Path(path)
    drafted = target.read_text(encoding="utf-8") if target.is_file() else ""
    text = draft_text(pin, item.nodeid, drafted)
    if not text:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    # One write per failure with O_APPEND: pytest-xdist workers may append side by side.
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)


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
    run = config.stash[SETTINGS]
    args += [nodeid, *command_line_of(run, ("target", "profile")), "--hypothesis-profile", hypothesis_profile(config)]
    args += command_line_of(run, ("bootstrap_servers", "control_url", "expectations", "fault_hook"))
    # TLS and SASL without the secrets: a replay reads them from KTS_SASL_PASSWORD and KTS_SSL_KEY_PASSWORD.
    args += pytest_arguments(run.security)
    args += command_line_of(run, ("no_expectations", "allow_disruptive"))
    seed = config.stash[STATE].seed
    if seed is not None:
        args.append(f"--hypothesis-seed={seed}")
    return shlex.join(args)


def clause_verdicts(config: pytest.Config) -> dict[str, Verdict]:
    """One verdict per clause over the run (conformance.judging.judge.clause_verdicts)."""
    return config.stash[STATE].clause_verdicts()


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    state = config.stash.get(STATE, None)
    if state is None:
        return
    tr = terminalreporter
    incomplete = config.stash.get(INCOMPLETE, None)
    if incomplete is not None:
        tr.write_line(f"incomplete: {incomplete}: the verdicts below cover only the tests that finished", yellow=True)
    broke = [t for t in state.results if t.message.startswith(HARNESS_ERROR_PREFIX)]
    if broke:
        tr.section("HARNESS ERRORS", red=True, bold=True)
        for result in broke:
            tr.write_line(f"  {result.nodeid}: {result.message.splitlines()[0].removeprefix(HARNESS_ERROR_PREFIX)}")
        tr.write_line(
            f"  the harness broke in {len(broke)} test{'s' if len(broke) != 1 else ''}: a bug of the suite, not a "
            "departure of the target; their clauses are BLOCKED (not decided) and the run fails; report it with "
            "the traceback above"
        )
    if state.lost:
        hit = sum(1 for t in state.results if t.target_lost)
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
        if state.stale_fails():
            tr.write_line("  --fail-on-stale: a STALE entry fails the run (docs/expectations-stale.md)", red=True)
    verdicts = clause_verdicts(config)
    if not verdicts:
        return
    tr.section(f"clause verdicts: target {state.target}, profile {state.profile}")
    tr.write_line("  " + config.stash.get(EXPECTATIONS_IN_FORCE, "expectations: none"))
    counts: dict[str, int] = defaultdict(int)
    for cid in sorted(verdicts):
        counts[verdicts[cid].value] += 1
        if verdicts[cid] is not Verdict.PASS:
            tr.write_line(f"  {verdicts[cid].value:<12} {cid}")
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    if stale:
        summary += f"; {sum(1 for _, s in stale if s is EntryStatus.STALE)} STALE expectation(s)"
    tr.write_line("  " + summary)
    # The verdict in one line, last, as the report's first page shows it (conformance.judging.headline).
    said = headline(
        verdicts,
        # pytest hands this hook the exit status from before pytest_sessionfinish failed the run for a STALE entry
        exit_status=int(exitstatus) or int(state.stale_fails()),
        entries=statuses,
        harness_broke=len(broke),
        target_lost=bool(state.lost),
        incomplete=incomplete,
        fail_on_stale=state.fail_on_stale,
    )
    tr.write_line(said.line, red=said.failed, green=not said.failed, bold=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(STATE, None)
    if state is None or hasattr(session.config, "workerinput"):  # xdist workers: the controller reports
        return
    stopped_by = session.config.stash.get(STOPPED_BY, None)
    # Stopped by a signal (not by a collection error, which pytest also reports as interrupted).
    if stopped_by is not None:
        finished = len({r.nodeid for r in state.results})
        session.config.stash[INCOMPLETE] = stopped_text(finished, len(session.items), stopped_by)
        state.complete = False
    if exitstatus == pytest.ExitCode.OK and state.stale_fails():
        # --fail-on-stale: a shipped file's entry its own run no longer meets is news (docs/expectations-stale.md).
        session.exitstatus = exitstatus = pytest.ExitCode.TESTS_FAILED
    path = session.config.stash[SETTINGS].verdicts_json
    if not path:
        return
    results = state.run_results(int(exitstatus))
    incomplete = session.config.stash.get(INCOMPLETE, None)
    write_results(Path(path), dataclasses.replace(results, incomplete=incomplete) if incomplete else results)


def stopped_text(finished: int, collected: int, stopped_by: signal.Signals) -> str:
    """What a run stopped early says about itself: "stopped after 12 of 113 tests (SIGINT)"."""
    return f"stopped after {finished} of {collected} tests ({stopped_by.name})"
