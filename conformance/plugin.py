"""The pytest plugin of the conformance suite.

Options: `--target NAME` (env `KTS_TARGET`, default `model`), `--profile NAME` (env `KTS_PROFILE`,
default `kafka-4.0`). Markers: `@pytest.mark.clause("LO.first-ge-target", ...)` names the clauses a
test checks; `@pytest.mark.requires(Capability.X, ...)` names the capabilities it needs. Fixtures:
`profile` (the Profile), `target_factory` (picklable), `impl` (a fresh implementation per test,
always closed), `reference_factory` (the model under the same profile).

Verdicts per clause (PASS, FAIL, UNSUPPORTED, N/A, ...) are collected from the outcomes and the
`ClauseViolation`s raised, and printed as a table at the end of the run.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator

import pytest

from models.clauses import get_clause
from models.profiles import Profile, get_profile

from .adapters.model import ModelFactory
from .checks import ClauseViolation, Verdict
from .implementation import Capability, Implementation, ImplementationFactory
from .targets import TargetError, resolve_target

UNSUPPORTED_PREFIX = "UNSUPPORTED: "
NOT_APPLICABLE_PREFIX = "N/A: "

_verdicts_key = pytest.StashKey[dict[str, dict[str, list[str]]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafka-conformance")
    group.addoption(
        "--target",
        default=os.environ.get("KTS_TARGET", "model"),
        help="implementation under test: model, mutant:<id> (env KTS_TARGET; default model)",
    )
    group.addoption(
        "--profile",
        default=os.environ.get("KTS_PROFILE", "kafka-4.0"),
        help="behaviour profile the target claims (env KTS_PROFILE; default kafka-4.0)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "clause(*ids): the catalogue clauses a test checks")
    config.addinivalue_line("markers", "requires(*capabilities): capabilities a test needs")
    config.stash[_verdicts_key] = defaultdict(lambda: defaultdict(list))
    try:
        resolve_target(config.getoption("--target"), config.getoption("--profile"))
    except TargetError as exc:
        raise pytest.UsageError(str(exc)) from None


def _clause_ids(item: pytest.Item) -> list[str]:
    ids: list[str] = []
    for mark in item.iter_markers("clause"):
        ids.extend(str(a) for a in mark.args)
    return ids


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    profile = config.getoption("--profile")
    for item in items:
        ids = _clause_ids(item)
        for cid in ids:
            get_clause(cid)  # an unknown clause ID is a bug in the suite: fail at collection
        if ids and not any(profile in get_clause(cid).profiles for cid in ids):
            item.add_marker(pytest.mark.skip(reason=f"{NOT_APPLICABLE_PREFIX}{', '.join(ids)} not in {profile}"))


@pytest.fixture(scope="session")
def profile(pytestconfig: pytest.Config) -> Profile:
    return get_profile(pytestconfig.getoption("--profile"))


@pytest.fixture(scope="session")
def target_factory(pytestconfig: pytest.Config) -> ImplementationFactory:
    return resolve_target(pytestconfig.getoption("--target"), pytestconfig.getoption("--profile"))


@pytest.fixture(scope="session")
def reference_factory(pytestconfig: pytest.Config) -> ModelFactory:
    return ModelFactory(profile=pytestconfig.getoption("--profile"))


@pytest.fixture
def impl(request: pytest.FixtureRequest, target_factory: ImplementationFactory) -> Iterator[Implementation]:
    implementation = target_factory.build()
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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report: pytest.TestReport = yield
    if report.when != "call" and not (report.skipped and report.when == "setup"):
        return report
    verdicts = item.config.stash[_verdicts_key]
    ids = _clause_ids(item)
    if report.skipped:
        reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else ""
        verdict = Verdict.NOT_APPLICABLE if NOT_APPLICABLE_PREFIX in reason else Verdict.UNSUPPORTED
        for cid in ids:
            verdicts[cid][verdict.value].append(item.nodeid)
    elif report.failed:
        exc = call.excinfo.value if call.excinfo is not None else None
        failed = [exc.clause_id] if isinstance(exc, ClauseViolation) else ids
        for cid in failed:
            verdicts[cid][Verdict.FAIL.value].append(item.nodeid)
    elif report.passed:
        for cid in ids:
            verdicts[cid][Verdict.PASS.value].append(item.nodeid)
    return report


def clause_verdicts(config: pytest.Config) -> dict[str, Verdict]:
    """One verdict per clause: FAIL wins over PASS; UNSUPPORTED/N/A only when nothing ran."""
    out: dict[str, Verdict] = {}
    for cid, by_verdict in config.stash[_verdicts_key].items():
        for verdict in (Verdict.FAIL, Verdict.PASS, Verdict.UNSUPPORTED, Verdict.NOT_APPLICABLE):
            if by_verdict.get(verdict.value):
                out[cid] = verdict
                break
    return out


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    verdicts = clause_verdicts(config)
    if not verdicts:
        return
    tr = terminalreporter
    tr.section(f"clause verdicts: target {config.getoption('--target')}, profile {config.getoption('--profile')}")
    counts: dict[str, int] = defaultdict(int)
    for cid in sorted(verdicts):
        counts[verdicts[cid].value] += 1
        if verdicts[cid] is not Verdict.PASS:
            tr.write_line(f"  {verdicts[cid].value:<12} {cid}")
    tr.write_line("  " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
