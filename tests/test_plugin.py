"""The conformance pytest plugin: verdicts, expectations, replay commands and bad input."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import hypothesis.core
import pytest
from hypothesis import settings as hypothesis_settings

from conformance.judging.results import read_results
from conformance.judging.verdicts import Verdict

REPO = Path(__file__).resolve().parents[1]

SUITE = '''
import pytest
from hypothesis import given, strategies as st
from conformance.judging.checks import check_equal
from conformance.judging.observables import Obs

@pytest.mark.clause("LO.first-ge-target")
@given(x=st.integers(0, 10))
def test_must(x):
    check_equal("LO.first-ge-target", Obs.LIST_OFFSETS_OFFSET, x, 99 if x == 3 else x)

@pytest.mark.clause("LO.first-qualifying-segment")
def test_should():
    check_equal("LO.first-qualifying-segment", Obs.LIST_OFFSETS_OFFSET, 1, 2)

@pytest.mark.clause("LO.first-ge-target")
def test_plain_pass():
    pass
'''


@pytest.fixture(autouse=True)
def _importable_project(monkeypatch: pytest.MonkeyPatch) -> None:
    """The subprocess imports the project from this checkout even when it is not installed."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    monkeypatch.delenv("KTS_TARGET", raising=False)
    monkeypatch.delenv("KTS_PROFILE", raising=False)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "conformance.plugin", "-p", "no:cacheprovider", "-p", "no:schemathesis", *args, timeout=300
    )


def run_usage(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """A run that stops at a usage error before any test: in this process (a subprocess costs a second of imports
    per run), which is safe because nothing is collected or run. The plugin's configure loads a Hypothesis profile
    and may force a seed, both process-wide: they are put back for this session's own tests."""
    forced, profile = hypothesis.core.global_force_seed, hypothesis_settings._current_profile
    try:
        return pytester.runpytest_inprocess("-p", "conformance.plugin", "-p", "no:cacheprovider", *args)
    finally:
        hypothesis.core.global_force_seed = forced
        if profile is not None:
            hypothesis_settings.load_profile(profile)


def test_must_violation_fails_with_clause_message_and_replay_command(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = run(pytester, "--hypothesis-profile", "ci", "-rA")
    result.assert_outcomes(passed=1, failed=1, xfailed=1)
    out = result.stdout.str()
    assert (
        "LO.first-ge-target (MUST, LO-2) on list-offsets.offset (the ListOffsets answer's offset): observed 3, "
        "the reference model expects 99" in out
    )
    assert "pytest test_suite.py::test_must --target model --profile kafka-4.0 --hypothesis-profile ci" in out
    assert "NON-STRICT: LO.first-qualifying-segment (SHOULD)" in out
    assert "FAIL         LO.first-ge-target" in out


def test_known_failure_is_reported_known_and_pinned_example_must_keep_failing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    pytester.makefile(
        ".toml",
        known='''
[[expected]]
clause = "LO.first-ge-target"
observable = "list-offsets.offset"
reason = "answers 99 for 3"
link = "https://example.org/issue/1"
test = "test_suite.py::test_must"
example = "x=3"
''',
    )
    result = run(pytester, "--expectations", "known.toml", "--hypothesis-profile", "ci")
    result.assert_outcomes(passed=1, xfailed=2)
    assert "KNOWN" in result.stdout.str()
    # The same pinned example on a test that no longer fails: UNEXPECTED-PASS, a failure.
    pytester.makepyfile(test_suite=SUITE.replace("99 if x == 3 else x", "x"))
    result = run(pytester, "--expectations", "known.toml", "--hypothesis-profile", "ci")
    result.assert_outcomes(passed=1, failed=1, xfailed=1)
    out = result.stdout.str()
    assert "UNEXPECTED-PASS: entry 1: LO.first-ge-target list-offsets.offset in test_suite.py::test_must was" in out
    assert "the expectation is stale: remove the entry" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[[expected]]\nclause = 'NOPE'\nreason = 'r'\nlink = 'l'\n", "unknown clause 'NOPE'"),
        ("[[expected]]\nclause = 'LO.first-ge-target'\nlink = 'l'\n", "'reason' is required"),
        ("[[expected]\n", "is not valid TOML"),
        (
            "[[expected]]\nclause = 'LO.first-ge-target'\nobservable = 'list-offsets.offset'\nreason = 'r'\n"
            "link = 'l'\nexample = 'x=1'\n",
            "'example' needs 'test'",
        ),
        (
            "[[expected]]\nclause = 'LO.first-ge-target'\nreason = 'r'\nlink = 'l'\n",
            "name what departs with 'observable",
        ),
        (
            "[[expected]]\nclause = 'LO.first-ge-target'\nobservable = 'list-offsets.nope'\nreason = 'r'\n"
            "link = 'l'\n",
            "unknown observable 'list-offsets.nope'",
        ),
    ],
)
def test_malformed_expectations_give_one_clear_error(pytester: pytest.Pytester, content: str, message: str) -> None:
    pytester.makepyfile(test_suite=SUITE)
    pytester.makefile(".toml", bad=content)
    result = run_usage(pytester, "--expectations", "bad.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert "Traceback" not in result.stderr.str()


def test_unknown_target_profile_and_clause_filter_are_usage_errors(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    for args, message in (
        (("--target", "nope"), "unknown target 'nope'"),
        (("--profile", "kafka-9"), "unknown profile 'kafka-9'"),
        (("--clauses", "NOPE"), "--clauses: unknown clause 'NOPE'"),
        (("--expectations", "missing.toml"), "does not exist"),
    ):
        result = run_usage(pytester, *args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, args
        assert message in result.stderr.str(), args


def test_fail_on_stale_fails_a_run_whose_only_news_is_a_stale_entry(pytester: pytest.Pytester) -> None:
    """An entry whose clause and observable were checked and that covered nothing is STALE: reported, exit 0; with
    --fail-on-stale the run exits 1 and says why, in the terminal and in verdicts.json. An entry left to chance is
    NOT-EXERCISED instead, and fails nothing."""
    pytester.makepyfile(test_suite=SUITE.replace("99 if x == 3 else x", "x"))
    entry = (
        "[[expected]]\nclause = 'LO.first-ge-target'\nobservable = 'list-offsets.offset'\nobserved = 12345\n"
        "reason = 'answers 12345'\nlink = 'none: a test'\n"
    )
    pytester.makefile(".toml", stale=entry, chance=entry + "chance = 'the wall clock'\n")
    result = run(pytester, "--expectations", "stale.toml", "--hypothesis-profile", "ci")
    assert result.ret == pytest.ExitCode.OK
    assert "STALE           entry 1: LO.first-ge-target list-offsets.offset observed=12345" in result.stdout.str()
    result = run(pytester, "--expectations", "stale.toml", "--hypothesis-profile", "ci", "--fail-on-stale",
                 "--verdicts-json", "v.json")  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    line = "1 new failure: 0 FAIL, 0 UNEXPECTED-PASS, 1 expectation STALE (--fail-on-stale); 1 NON-STRICT, 1 PASS"
    assert line in result.stdout.str()
    said = read_results(pytester.path / "v.json")
    assert said.exit_status == 1 and said.fail_on_stale
    from conformance.judging.headline import headline_of

    assert headline_of(said).line == line
    result = run(pytester, "--expectations", "chance.toml", "--hypothesis-profile", "ci", "--fail-on-stale")
    assert result.ret == pytest.ExitCode.OK
    assert "1 expectation NOT-EXERCISED" in result.stdout.str()


def test_clause_filter_and_not_applicable(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = run(pytester, "--clauses", "LO.first-qualifying-segment")
    result.assert_outcomes(xfailed=1, deselected=2)
    # kafka-0.10.0 has no timestamp lookups: the LO clauses do not apply there.
    result = run(pytester, "--profile", "kafka-0.10.0", "-rs")
    result.assert_outcomes(skipped=3)
    assert "N/A: LO.first-ge-target not in kafka-0.10.0" in result.stdout.str()


def test_verdicts_are_aggregated_across_xdist_workers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = run(pytester, "-n", "2", "--hypothesis-profile", "ci", "--verdicts-json", "v.json")
    result.assert_outcomes(passed=1, failed=1, xfailed=1)
    import json

    data = json.loads((pytester.path / "v.json").read_text())
    assert data["clauses"] == {"LO.first-ge-target": "FAIL", "LO.first-qualifying-segment": "NON-STRICT"}
    assert len(data["tests"]) == 3
    assert all(t["replay"] for t in data["tests"] if t["outcome"] == "failed")
    assert read_results(pytester.path / "v.json").clauses == {
        "LO.first-ge-target": Verdict.FAIL,
        "LO.first-qualifying-segment": Verdict.NON_STRICT,
    }


VERSIONED_TARGET = """
import contextlib
from dataclasses import dataclass

from conformance.targets.kinds.implementation import Kind
from conformance.targets.libraries.model.model_broker import ModelFactory, ModelImplementation
from conformance.targets.registry import TargetSpec, register_target
from conformance.targets.target import ServedBy


class SaysItsVersion(ModelImplementation):
    implementation_version = "9.9.9 (built)"


@dataclass(frozen=True)
class SaysItsVersionFactory(ModelFactory):
    def build(self):
        return SaysItsVersion(super().build().cluster)


@contextlib.contextmanager
def open_it(target, opening):
    yield SaysItsVersionFactory(profile=opening.profile), []


register_target(TargetSpec(
    "says-its-version", Kind.BROKER, ServedBy.IN_PROCESS, obtained="this test", opener=open_it,
    description="a target whose built implementation says its version", version=lambda target: "1.0 (row)",
))
"""

VERSIONED_SUITE = """
import pytest

@pytest.mark.clause("LO.first-ge-target")
def test_builds_it(impl):
    pass

@pytest.mark.clause("LO.first-ge-target")
def test_never_builds_it():
    pass
"""


@pytest.mark.parametrize(
    ("args", "version"),
    [
        (("-n", "2"), "9.9.9 (built)"),  # what a built implementation says, carried from each xdist worker
        (("-k", "never_builds"), "1.0 (row)"),  # no test built one: what the target's row knows
        (("--target", "model", "-k", "never_builds"), None),  # the reference's: this package's version
    ],
)
def test_verdicts_json_records_the_version_the_implementation_says(
    pytester: pytest.Pytester, args: tuple[str, ...], version: str | None
) -> None:
    from conformance.targets.kinds.implementation import reference_version

    pytester.makeconftest(VERSIONED_TARGET)
    pytester.makepyfile(test_suite=VERSIONED_SUITE)
    result = run(pytester, "--target", "says-its-version", "--verdicts-json", "v.json", *args)
    assert result.ret == 0, result.stdout.str()
    assert read_results(pytester.path / "v.json").implementation_version == (version or reference_version())


def test_a_failing_suite_prints_the_entry_that_pins_it_and_the_pin_reproduces_it(pytester: pytest.Pytester) -> None:
    """The whole expectations loop on a real suite test and a seeded mutant: the failure prints a
    `[[expected]]` entry with `data=Replay([...])`; pasted into a file, the same failure is KNOWN on the
    next run (whatever Hypothesis generates), and UNEXPECTED-PASS against the model, which passes it."""
    shutil.copytree(REPO / "suites", pytester.path / "suites")
    test = "suites/test_list_offsets.py::test_max_timestamp_inside_batch"
    mutant = "mutant:max-timestamp-last-record"
    # The fast budget does not shrink (the ci one spends half a minute shrinking here): any failing example pins.
    result = run(pytester, test, "--target", mutant, "--hypothesis-profile", "fast")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    start = out.index("[[expected]]")
    entry = out[start : out.index("\n", out.index("example = ", start))]
    assert f'test = "{test}"' in entry and 'example = "data=Replay([' in entry
    # The mutant breaks LO-6 on LogAppendTime batches too: once the first clause is known, the test goes
    # on and meets that one, so it is listed as well (unpinned).
    lat = (
        '[[expected]]\nclause = "LO.max-timestamp-lat-batch-first-record"\nobservable = "list-offsets.offset"\n'
        'reason = "r"\nlink = "none"\n'
    )
    pytester.makefile(".toml", known=entry.replace('"..."', '"answers the last record holding the max"') + "\n" + lat)
    # Another seed: the pinned example still fails first, so the run is KNOWN (xfailed), not PASS.
    result = run(pytester, test, "--target", mutant, "--expectations", "known.toml", "--hypothesis-seed", "7")
    result.assert_outcomes(xfailed=1)
    assert "KNOWN" in result.stdout.str()
    result = run(pytester, test, "--target", "model", "--expectations", "known.toml", "--hypothesis-profile", "ci")
    result.assert_outcomes(failed=1)
    assert "UNEXPECTED-PASS: entry 1: LO.max-timestamp-first-record list-offsets.offset" in result.stdout.str()


def test_a_known_failure_does_not_block_the_clauses_checked_after_it(pytester: pytest.Pytester) -> None:
    """An expected clause's violation is recorded and the test goes on: the next clause is still judged
    (here it fails), instead of being BLOCKED behind a failure everybody knows about."""
    pytester.makepyfile(
        test_two='''
import pytest
from conformance.judging.checks import check_equal
from conformance.judging.observables import Obs

@pytest.mark.clause("LO.first-ge-target", "LO.not-found-minus-one")
def test_two_clauses():
    check_equal("LO.first-ge-target", Obs.LIST_OFFSETS_OFFSET, 3, 4)
    check_equal("LO.not-found-minus-one", Obs.LIST_OFFSETS_OFFSET, 5, -1)
'''
    )
    pytester.makefile(
        ".toml",
        known='[[expected]]\nclause = "LO.first-ge-target"\nobservable = "list-offsets.offset"\nreason = "r"\n'
        'link = "none"\n',
    )
    result = run(pytester, "--expectations", "known.toml", "--verdicts-json", "v.json")
    result.assert_outcomes(failed=1)
    verdicts = json.loads((pytester.path / "v.json").read_text())["clauses"]
    assert verdicts == {"LO.first-ge-target": "KNOWN", "LO.not-found-minus-one": "FAIL"}
    # Without expectations the first failure stops the test and the second clause is BLOCKED.
    result = run(pytester, "--verdicts-json", "v.json")
    verdicts = json.loads((pytester.path / "v.json").read_text())["clauses"]
    assert verdicts == {"LO.first-ge-target": "FAIL", "LO.not-found-minus-one": "BLOCKED"}


UNCHECKED_AND_DRAFTED = '''
import pytest
from hypothesis import given, strategies as st
from conformance.judging.checks import check_equal
from conformance.judging.observables import Obs
from conformance.judging.draws import draws, recorded

@pytest.mark.clause("LO.first-ge-target", "LO.record-own-timestamp")
def test_checks_one_of_two():
    check_equal("LO.first-ge-target", Obs.LIST_OFFSETS_OFFSET, 1, 1)

@pytest.mark.clause("LO.not-found-minus-one")
@given(data=draws())
def test_fails(data):
    data = recorded(data)
    x = data.draw(st.integers(0, 10), label="x")
    check_equal("LO.not-found-minus-one", Obs.LIST_OFFSETS_OFFSET, x, -1 if x >= 2 else x)
'''


def test_a_clause_no_check_ran_for_is_unsupported_and_failures_are_drafted(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=UNCHECKED_AND_DRAFTED)
    result = run(pytester, "--hypothesis-profile", "ci", "--verdicts-json", "v.json", "--draft-expectations", "d.toml")
    result.assert_outcomes(passed=1, failed=1)
    clauses = json.loads((pytester.path / "v.json").read_text())["clauses"]
    assert clauses["LO.first-ge-target"] == "PASS"
    assert clauses["LO.record-own-timestamp"] == "UNSUPPORTED"  # the test passed without checking it
    draft = (pytester.path / "d.toml").read_text()
    assert draft.count("[[expected]]") == 1
    assert 'clause = "LO.not-found-minus-one"' in draft and 'observable = "list-offsets.offset"' in draft
    assert "DRAFT: seen in test_suite.py::test_fails" in draft
    assert "data=Replay([('x', 2)]" in draft
    # The drafted entry, moved into an expectations file as it is, makes the failure KNOWN.
    pytester.makefile(".toml", known=draft)
    again = run(pytester, "--hypothesis-profile", "ci", "--expectations", "known.toml")
    again.assert_outcomes(passed=1, xfailed=1)


HARNESS_BREAKS = """
from types import SimpleNamespace

import pytest

from conformance.judging.capabilities import Capability
from conformance.targets.routes.wire_adapter.kafka_wire import WireImplementation

@pytest.mark.clause("LO.first-ge-target")
def test_harness_breaks():
    # The adapter's broker index past a one-broker target's brokers: the suite's own bug.
    one_broker = SimpleNamespace(control=SimpleNamespace(set_clock=lambda node, now: None),
                                 capabilities={Capability.CLOCK_CONTROL}, _check_not_lost=lambda: None,
                                 probe=SimpleNamespace(broker_ids=(7,)))
    WireImplementation.set_clock(one_broker, 1, 1700000000000)

@pytest.mark.clause("LO.first-qualifying-segment")
def test_implementation_answer_breaks():
    # An answer shorter than the model's, indexed by the test itself: the implementation's departure.
    answer = []
    answer[0]
"""


def test_a_harness_error_is_blocked_with_its_traceback_and_counted(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=HARNESS_BREAKS)
    result = run(pytester, "--verdicts-json", "v.json")
    result.assert_outcomes(failed=2)
    assert result.ret == 1  # a broken harness is no green run
    out = result.stdout.str()
    assert "HARNESS ERRORS" in out and "the harness broke in 1 test: a bug of the suite" in out, out
    data = read_results(pytester.path / "v.json")
    tests = {t.nodeid.split("::")[-1]: t for t in data.tests}
    broke = tests["test_harness_breaks"]
    assert broke.verdicts == {"LO.first-ge-target": Verdict.BLOCKED}
    assert broke.message.startswith("HARNESS ERROR: the suite's own code raised IndexError: tuple index out of range")
    assert "conformance/targets/routes/wire_adapter/kafka_wire.py" in broke.message
    assert "Traceback (most recent call last)" in broke.message
    assert tests["test_implementation_answer_breaks"].verdicts == {"LO.first-qualifying-segment": Verdict.FAIL}
    assert data.clauses == {"LO.first-ge-target": Verdict.BLOCKED, "LO.first-qualifying-segment": Verdict.FAIL}


STOPPED_MIDWAY = """
import os, signal, time

import pytest

@pytest.mark.clause("LO.first-ge-target")
def test_1_finishes():
    pass

@pytest.mark.clause("LO.first-qualifying-segment")
def test_2_stopped_under_it():
    try:
        os.kill(os.getpid(), signal.SIG)
        # Not signal.pause(): a signal taken by another thread of the process would leave it waiting forever.
        for _ in range(300):
            time.sleep(0.1)
    except KeyboardInterrupt:
        # Caught on its way and turned into an error of its own, as Hypothesis' engine may do: no result.
        raise AssertionError("the engine's own state, broken by the interrupt")

@pytest.mark.clause("LO.not-found-minus-one")
def test_3_never_runs():
    pass
"""


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_a_run_stopped_midway_writes_what_finished_and_judges_nothing_after_the_signal(
    pytester: pytest.Pytester, stop: str
) -> None:
    pytester.makepyfile(test_suite=STOPPED_MIDWAY.replace("signal.SIG)", f"signal.{stop})"))
    result = run(pytester, "--verdicts-json", "v.json", "-rs")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(passed=1, skipped=1)
    out = result.stdout.str()
    assert f"incomplete: stopped after 1 of 3 tests ({stop})" in out
    assert f"not finished: the run was stopped ({stop})" in out
    assert "AssertionError" not in out
    data = read_results(pytester.path / "v.json")
    assert data.incomplete == f"stopped after 1 of 3 tests ({stop})"
    assert [t.nodeid for t in data.tests] == ["test_suite.py::test_1_finishes"]
    assert data.clauses == {"LO.first-ge-target": Verdict.UNSUPPORTED}  # passed without a check: nothing more


# The signal lands while another plugin's old-style hookwrapper tears down (allure-pytest's around each test
# call): pluggy warns about the exception it then re-raises (PluggyTeardownRaisedWarning), which would print the
# KeyboardInterrupt in the warnings summary of a run that was only stopped.
STOPPED_IN_A_WRAPPER = """
import os, signal, time

import pytest

class Wrapper:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        yield
        if item.name == "test_2_stopped_after_it":
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(300):
                time.sleep(0.1)

def pytest_configure(config):
    config.pluginmanager.register(Wrapper(), "wrapper")
"""

STOPPED_AFTER_THE_SECOND = """
import pytest

@pytest.mark.clause("LO.first-ge-target")
def test_1_finishes():
    pass

@pytest.mark.clause("LO.first-qualifying-segment")
def test_2_stopped_after_it():
    pass

@pytest.mark.clause("LO.not-found-minus-one")
def test_3_never_runs():
    pass
"""


def test_a_stop_inside_another_plugins_hookwrapper_is_not_reported_as_its_error(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(STOPPED_IN_A_WRAPPER)
    pytester.makepyfile(test_suite=STOPPED_AFTER_THE_SECOND)
    result = run(pytester, "--verdicts-json", "v.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    out = result.stdout.str() + result.stderr.str()
    assert "PluggyTeardownRaisedWarning" not in out and "Plugin: wrapper" not in out, out
    assert "incomplete: stopped after 1 of 3 tests (SIGINT)" in out, out


CODEC_SUITE = """
import pytest

@pytest.mark.kind("codec")
@pytest.mark.clause("FMT.v1-wrapper-relative-offsets")
def test_codec():
    pass
"""

SHIPPED = """
[[expected]]
clause = "FMT.v1-wrapper-relative-offsets"
observable = "batch.offsets"
reason = "r"
link = "l"
"""


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((), "expectations: suites/expectations/codec-kafka-python.toml (shipped with codec:kafka-python)"),
        (("--no-expectations",), "expectations: none (--no-expectations; codec:kafka-python ships "
                                 "suites/expectations/codec-kafka-python.toml)"),
        (("--expectations", "mine.toml"), "expectations: mine.toml (--expectations)"),
        (("--target", "codec:model"), "expectations: none"),
    ],
)
def test_a_target_runs_with_the_expectations_it_ships_unless_told_otherwise(
    pytester: pytest.Pytester, args: tuple[str, ...], says: str
) -> None:
    pytest.importorskip("kafka", reason="kafka-python (the codec:kafka-python target) is not installed")
    pytester.mkdir("suites")
    (pytester.path / "suites" / "test_codec_x.py").write_text(CODEC_SUITE)
    pytester.mkdir("suites/expectations")
    (pytester.path / "suites" / "expectations" / "codec-kafka-python.toml").write_text(SHIPPED)
    pytester.makefile(".toml", mine=SHIPPED)
    result = run(pytester, "suites", "--target", "codec:kafka-python", *args)
    result.assert_outcomes(passed=1)
    lines = [line.strip() for line in result.stdout.lines]
    assert says in lines, result.stdout.str()


HOOKS = {
    "pytest_addoption", "pytest_configure", "pytest_collection_modifyitems", "pytest_runtest_setup",
    "pytest_exception_interact", "pytest_sessionstart", "pytest_runtestloop",
    "pytest_runtest_call", "pytest_runtest_makereport", "pytest_terminal_summary", "pytest_sessionfinish",
    "pytest_unconfigure",
}  # fmt: skip
FIXTURES = ("profile", "target_factory", "reference_factory", "impl")


def test_the_plugin_package_registers_each_hook_and_fixture_once(request: pytest.FixtureRequest) -> None:
    """The hooks and fixtures live in the plugin's modules by concern (options, collection, fixtures, reporting);
    pytest registers them through the package `conformance.plugin` only, each once."""
    import conformance.plugin as plugin

    manager = request.config.pluginmanager
    ours = [p for p in manager.get_plugins() if str(getattr(p, "__name__", "")).startswith("conformance.plugin")]
    assert ours == [plugin]  # its modules are not plugins of their own
    assert {name for name in dir(plugin) if name.startswith("pytest_")} == HOOKS
    for name in HOOKS:
        impls = [i for i in getattr(manager.hook, name).get_hookimpls() if i.plugin_name == "conformance.plugin"]
        assert len(impls) == 1, name
    fixtures = manager.get_plugin("funcmanage")
    for name in FIXTURES:
        defs = fixtures.getfixturedefs(name, request.node) or ()
        assert [d.baseid for d in defs] == [""], name  # one definition, the plugin's (a conftest's has a baseid)
    from conformance.plugin import kind_of_test, replay_command, require  # what the suites and tools import

    assert callable(kind_of_test) and callable(replay_command) and callable(require)
