"""Every shipped expectations file (suites/expectations/*.toml) is one its CI run keeps honest: each file is run by a
tox env with --fail-on-stale (so an entry its own run no longer meets fails CI, docs/expectations-stale.md), and
each entry is one those runs can exercise: what can be told without running a target, in well under a second."""

from __future__ import annotations

import configparser
import importlib
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.judging.expectations import Expectation, load_expectations, parse_example
from conformance.targets.registry import default_profile, expectations_file, parse_target
from models.clauses import get_clause

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted((REPO / "suites" / "expectations").glob("*.toml"))


@dataclass(frozen=True)
class ToxRun:
    """One `kafka-conformance run` line of tox.ini."""

    env: str
    target: str
    profile: str
    expectations: str | None  # as given to --expectations, relative to the checkout
    fail_on_stale: bool
    no_expectations: bool = False


def _option(words: list[str], flag: str) -> str | None:
    return words[words.index(flag) + 1] if flag in words else None


def _tox_runs() -> list[ToxRun]:
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(REPO / "tox.ini", encoding="utf-8")
    runs = []
    for section in ini.sections():
        for line in ini[section].get("commands", "").splitlines():
            words = shlex.split(line)
            if words[:2] != ["kafka-conformance", "run"]:
                continue
            target = _option(words, "--target") or "tansu"  # run's own default
            runs.append(
                ToxRun(
                    env=section.removeprefix("testenv:"),
                    target=target,
                    profile=_option(words, "--profile") or default_profile(target),
                    expectations=_option(words, "--expectations"),
                    fail_on_stale="--fail-on-stale" in words,
                    no_expectations="--no-expectations" in words,
                )
            )
    return runs


@dataclass(frozen=True)
class SuiteTest:
    clauses: frozenset[str]
    kind: str  # "broker" where the test names no kind (conformance.targets.kinds.implementation.Kind)


def _suite_tests() -> dict[str, SuiteTest]:
    """Every suite test by node id, with the clauses and kind its marks declare (read from the modules, as pytest
    collects them: a function or class named test_*/Test* defined in a suites/test_*.py module)."""
    found = {}
    for path in sorted((REPO / "suites").glob("test_*.py")):
        module = importlib.import_module(f"suites.{path.stem}")
        for name, obj in vars(module).items():
            if not name.startswith(("test_", "Test")) or getattr(obj, "__module__", None) != module.__name__:
                continue
            marks = getattr(obj, "pytestmark", [])
            kinds = [a for m in marks if m.name == "kind" for a in m.args]
            clauses = frozenset(a for m in marks if m.name == "clause" for a in m.args)
            found[f"suites/{path.name}::{name}"] = SuiteTest(clauses, kinds[0] if kinds else "broker")
    return found


RUNS = _tox_runs()


def _runs_of(path: Path) -> list[ToxRun]:
    return [r for r in RUNS if r.expectations == f"suites/expectations/{path.name}"]


@pytest.fixture(scope="module")
def suite_tests() -> dict[str, SuiteTest]:
    return _suite_tests()


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_file_is_run_with_fail_on_stale_by_the_target_that_ships_it(path: Path) -> None:
    runs = _runs_of(path)
    assert runs, f"{path.name}: no tox env runs it (kafka-conformance run --target T --expectations ...)"
    for run in runs:
        assert run.fail_on_stale, f"tox env {run.env}: {run.target} with {path.name} runs without --fail-on-stale"
        assert expectations_file(parse_target(run.target)) == path.name, (
            f"tox env {run.env}: {run.target} ships {expectations_file(parse_target(run.target))}, not {path.name}"
        )


def test_every_tox_run_of_a_target_that_ships_a_file_names_it() -> None:
    """A tox run of a target that ships a file judges that file (so the check above sees it), or says it uses none."""
    for run in RUNS:
        shipped = expectations_file(parse_target(run.target))
        if run.expectations is None and shipped is not None:
            assert run.no_expectations, f"tox env {run.env}: {run.target} without --expectations {shipped}"


def _problems(path: Path, entry: Expectation, runs: list[ToxRun], tests: dict[str, SuiteTest]) -> list[str]:
    """Why `entry` could never be exercised (MATCHED) by `runs`, if it could not."""
    where = f"{path.name} entry {entry.index} ({entry.clause})"
    kinds = {parse_target(r.target).kind.value for r in runs}
    profiles = {r.profile for r in runs}
    problems = []
    if not set(get_clause(entry.clause).profiles) & profiles:
        problems.append(f"{where}: the clause applies to none of the profiles its tox runs use, {sorted(profiles)}")
    if entry.test is not None:
        test = tests.get(entry.test)
        if test is None:
            problems.append(f"{where}: names {entry.test}, which the suites do not have")
        elif test.kind not in kinds:
            problems.append(f"{where}: names {entry.test}, a {test.kind} test, which a {'/'.join(kinds)} never runs")
    elif not entry.audit_only and not any(entry.clause in t.clauses and t.kind in kinds for t in tests.values()):
        problems.append(f"{where}: no {'/'.join(sorted(kinds))} test of the suites declares the clause")
    if entry.pinned:
        try:
            parse_example(entry)
        except Exception as exc:  # the file's own Python: the message is the evidence
            problems.append(f"{where}: its example does not evaluate: {type(exc).__name__}: {exc}")
    return problems


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_entry_of_a_shipped_file_can_be_exercised_by_its_runs(
    path: Path, suite_tests: dict[str, SuiteTest]
) -> None:
    runs = _runs_of(path)
    problems = [p for e in load_expectations(path) for p in _problems(path, e, runs, suite_tests)]
    assert not problems, "\n".join(problems)


def test_the_check_finds_an_entry_no_run_can_exercise(suite_tests: dict[str, SuiteTest]) -> None:
    """The check is not vacuous: an entry on a client test in a broker's file, on a test that does not exist, on a
    clause of no profile the runs use, or on a clause no test of the kind declares, is named."""
    tansu = [ToxRun("tansu", "tansu", "kafka-4.0", "suites/expectations/tansu.toml", True)]
    path = REPO / "suites" / "expectations" / "tansu.toml"

    def problems(**kw: object) -> list[str]:
        entry = Expectation(reason="r", link="l", **kw)  # type: ignore[arg-type]
        return _problems(path, entry, tansu, suite_tests)

    from conformance.judging.observables import Obs

    obs = (Obs.RECORD_TIMESTAMPS,)
    assert problems(clause="CON.v2-createtime-base-plus-delta", observables=obs) == []
    assert "a client test" in problems(clause="CON.v2-createtime-base-plus-delta", observables=obs,
                                       test="suites/test_client_consume.py::test_consumer_codecs")[0]  # fmt: skip
    assert "do not have" in problems(clause="CON.v2-createtime-base-plus-delta", observables=obs,
                                     test="suites/test_client_consume.py::test_nothing")[0]  # fmt: skip
    assert "applies to none" in problems(clause="CON.v0-no-timestamp", observables=obs)[0]
    assert "declares the clause" in problems(clause="LO.client-seek-by-time", observables=obs)[0]


def test_a_release_s_file_of_kafka_bugs_repeats_its_line_s() -> None:
    """A Kafka release with a bug of its own ships a file of its own (kafka-2.1.0.toml: KAFKA-7549), which must hold
    every entry of its line's file too (the release has the line's bugs): the two files are kept in step here."""
    from conformance.targets.brokers.kafka import HISTORY_TARGETS, kafka_release, line_of

    release_files = 0
    for name in HISTORY_TARGETS:
        target = parse_target(name)
        own = expectations_file(target)
        line = ".".join(map(str, line_of(kafka_release(target).numbers)))
        of_line = expectations_file(parse_target(f"kafka:{line}"))
        if own is None or own == of_line:
            continue
        release_files += 1
        described = {e.describe().split(": ", 1)[1] for e in load_expectations(REPO / "suites" / "expectations" / own)}
        missing = [
            e.describe() for e in load_expectations(REPO / "suites" / "expectations" / str(of_line))
            if e.describe().split(": ", 1)[1] not in described
        ]  # fmt: skip
        assert of_line is not None and not missing, f"{own} lacks {of_line}'s {missing}"
    assert release_files >= 1  # kafka==2.1.0's
