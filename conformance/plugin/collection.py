"""Collection: which tests run against this target (its kind, --clauses), N/A for clauses the profile lacks,
the Allure labels of each test's clauses, and each pinned known failure added to its test as an @example."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import example

from conformance.judging.draws import PinExhausted
from conformance.judging.expectations import Expectation, parse_example
from conformance.judging.verdicts import ALLURE_SEVERITY, NOT_APPLICABLE_PREFIX
from conformance.plugin.state import SETTINGS, STATE, TARGET
from conformance.targets.kinds.implementation import Kind
from models.clauses import Level, get_clause, kip_url


def clause_ids(item: pytest.Item) -> list[str]:
    """The clauses a test declares (@pytest.mark.clause), in order."""
    ids: list[str] = []
    for mark in item.iter_markers("clause"):
        ids.extend(str(a) for a in mark.args)
    return ids


def kind_of_test(item: pytest.Item) -> Kind:
    """The kind of implementation a suite test checks: its `@pytest.mark.kind(...)`, else a broker."""
    mark = item.get_closest_marker("kind")
    return Kind(mark.args[0]) if mark is not None else Kind.BROKER


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Before any deselection (this target's kind, --clauses; and -k, whose hook runs after this plugin's): a test
    # left out of this run is not a test that does not exist.
    check_expectation_tests(config, items)
    run = config.stash[SETTINGS]
    profile = run.profile
    # A codec is not a broker: the tests of another kind are left out of the run, not reported UNSUPPORTED.
    kind = config.stash[TARGET].kind
    other = [item for item in items if kind_of_test(item) is not kind]
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = [item for item in items if kind_of_test(item) is kind]
    wanted = set(run.clauses)
    if wanted:
        kept = [item for item in items if wanted & set(clause_ids(item))]
        deselected = [item for item in items if not wanted & set(clause_ids(item))]
        if deselected:
            config.hook.pytest_deselected(items=deselected)
        items[:] = kept
    for item in items:
        ids = clause_ids(item)
        for cid in ids:
            get_clause(cid)  # an unknown clause ID is a bug in the suite: fail at collection
        if ids and not any(profile in get_clause(cid).profiles for cid in ids):
            item.add_marker(pytest.mark.skip(reason=f"{NOT_APPLICABLE_PREFIX}{', '.join(ids)} not in {profile}"))
        if ids:
            _label_for_allure(item, ids)
    _pin_known_failures(config, items)


def check_expectation_tests(config: pytest.Config, items: Sequence[pytest.Item]) -> None:
    """A usage error for the first expectations entry whose `test` the suites do not have: a module that does not
    exist, or a collected module without that test. A module not collected (a run of some suite modules only, a
    campaign task) says nothing about its tests; one collected in part (node ids on the command line) is judged
    by the names it defines (the test's function or class)."""
    collected = {item.nodeid for item in items}
    modules = {item.nodeid.split("::", 1)[0]: getattr(item, "module", None) for item in items}
    in_part = any("::" in str(arg) for arg in config.args)
    for expectation in config.stash[STATE].expectations:
        test = expectation.test
        if test is None or test in collected:
            continue
        path, _, name = test.partition("::")
        if path not in modules:
            absent = not (config.rootpath / path).is_file()
        elif in_part:
            absent = not hasattr(modules[path], name.split("::", 1)[0].split("[", 1)[0])
        else:
            absent = True
        if absent:
            raise pytest.UsageError(
                f"{config.stash[SETTINGS].expectations}: entry {expectation.index} ({expectation.clause}) names test "
                f"{test!r}, which the suites do not have: fix its node id (`pytest suites --collect-only -q` lists "
                "them) or remove the entry"
            )


def _label_for_allure(item: pytest.Item, ids: list[str]) -> None:
    """allure-pytest labels (epic = KIP, feature = area, story = clause, severity from the level,
    the rule IDs of docs/rules.md as tags, a link to the KIP); marks only, so nothing happens without allure."""
    clauses = [get_clause(cid) for cid in ids]
    first = clauses[0]
    item.add_marker(pytest.mark.allure_label(first.kip, label_type="epic"))
    item.add_marker(pytest.mark.allure_label(first.area.value, label_type="feature"))
    item.add_marker(pytest.mark.allure_label(*ids, label_type="story"))
    strongest = min((c.level for c in clauses), key=lambda lv: list(Level).index(lv))
    item.add_marker(pytest.mark.allure_label(ALLURE_SEVERITY[strongest], label_type="severity"))
    rules = sorted({r for c in clauses for r in c.rules})
    item.add_marker(pytest.mark.allure_label(*rules, label_type="tag"))
    for kip in sorted({c.kip for c in clauses}):
        item.add_marker(pytest.mark.allure_link(kip_url(kip), link_type="link", name=kip))


def _pinned_for(config: pytest.Config, item: pytest.Item) -> list[Expectation]:
    return [e for e in config.stash[STATE].expectations if e.pinned and item.nodeid == e.test]


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
    """Add each pinned counterexample as a Hypothesis @example of its test (expectations doc); a pin naming no test
    is a usage error already (check_expectation_tests)."""
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
