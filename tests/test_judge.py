"""The verdict judge and the expectations matcher, as pure functions (no pytest subprocess): an entry covers
what it describes and nothing more, every clause can pass, stale entries are named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.control.control_client import ControlPlaneBroke, ControlPlaneError
from conformance.judging.checks import NOT_GIVEN, CheckRecord, ClauseViolation, check_equal, recording
from conformance.judging.expectations import (
    Expectation,
    ExpectationsError,
    coverer,
    draft_text,
    load_expectations,
    matches,
    pin_text,
)
from conformance.judging.harness import (
    HARNESS_ERROR_PREFIX,
    PACKAGE_DIR,
    harness_error,
    harness_error_text,
    in_harness,
    innermost_frame,
    is_harness_error,
)
from conformance.judging.judge import Evidence, RunRecord, clause_verdicts, entry_statuses, judge
from conformance.judging.observables import Obs
from conformance.judging.verdicts import EntryStatus, Verdict
from conformance.targets.kinds.implementation import UnsupportedOperation
from models.constants import ErrorCode, TimestampType

LATEST = "LO.latest-is-high-watermark"
FIRST = "LO.first-ge-target"
HEADER = "VAL.header-max-recomputed"
TEST = "suites/test_list_offsets.py::test_latest"


def entry(clause: str = LATEST, *observables: Obs, **kw: object) -> Expectation:
    return Expectation(clause=clause, observables=observables or (Obs.LIST_OFFSETS_EPOCH,), reason="r", link="l",
                       **kw)  # type: ignore[arg-type]  # fmt: skip


def violation(clause: str, obs: Obs, observed: object, expected: object, sent: object = NOT_GIVEN) -> ClauseViolation:
    return ClauseViolation(clause, obs, observed, expected, facts={} if sent is NOT_GIVEN else {"sent": sent})


# ------------------------------------------------------------------------------------ what an entry covers


def test_an_entry_on_one_observable_does_not_cover_another_of_the_same_clause() -> None:
    """The issue's case: a broker whose only listed departure of LATEST is the leader epoch (-1) starts
    answering LATEST = high watermark - 1. The offset is not covered: FAIL."""
    known = entry(LATEST, Obs.LIST_OFFSETS_EPOCH, observed=-1)
    assert known.covers(violation(LATEST, Obs.LIST_OFFSETS_EPOCH, -1, 0), TEST)
    assert not known.covers(violation(LATEST, Obs.LIST_OFFSETS_OFFSET, 9, 10), TEST)
    # The same observable with another value departs in a way nobody listed.
    assert not known.covers(violation(LATEST, Obs.LIST_OFFSETS_EPOCH, 7, 0), TEST)


def test_observed_is_sent_covers_only_a_header_stored_as_the_producer_wrote_it() -> None:
    """A broker that stores a lying MaxTimestamp as sent (VAL-13) is known; one that writes a wrong max on a
    well-formed batch is not, and neither is a check that does not know what was sent."""
    known = entry(HEADER, Obs.BATCH_MAX_TIMESTAMP, observed_is="sent")
    assert known.covers(violation(HEADER, Obs.BATCH_MAX_TIMESTAMP, 5, 9, sent=5), None)
    assert not known.covers(violation(HEADER, Obs.BATCH_MAX_TIMESTAMP, 4, 9, sent=9), None)
    assert not known.covers(violation(HEADER, Obs.BATCH_MAX_TIMESTAMP, 5, 9), None)


def test_observed_is_a_named_fact_tells_a_known_latest_from_a_new_one() -> None:
    """Tansu answers LATEST as one past the last batch's base offset; a broker that answers the high watermark
    - 1 departs otherwise wherever the last batch holds one record or three and more."""
    known = entry(LATEST, Obs.LIST_OFFSETS_OFFSET, observed_is="last-batch-base-plus-one")
    facts = {"last-batch-base-plus-one": 8}
    assert known.covers(ClauseViolation(LATEST, Obs.LIST_OFFSETS_OFFSET, 8, 10, facts=facts), None)
    assert not known.covers(ClauseViolation(LATEST, Obs.LIST_OFFSETS_OFFSET, 9, 10, facts=facts), None)
    assert not known.covers(ClauseViolation(LATEST, Obs.LIST_OFFSETS_OFFSET, 8, 10), None)


def test_scope_a_test_entry_covers_that_test_only_unless_widened() -> None:
    v = violation(FIRST, Obs.LIST_OFFSETS_OFFSET, 3, 4)
    scoped = entry(FIRST, Obs.LIST_OFFSETS_OFFSET, test=TEST, example="data=1")
    assert scoped.covers(v, TEST) and not scoped.covers(v, "suites/test_x.py::test_other")
    wide = entry(FIRST, Obs.LIST_OFFSETS_OFFSET, test=TEST, example="data=1", whole_run=True)
    assert wide.covers(v, "suites/test_x.py::test_other")
    audit = entry(FIRST, Obs.LIST_OFFSETS_OFFSET, audit_only=True)
    assert audit.covers(v, None) and not audit.covers(v, TEST)
    assert entry_statuses((audit,), [RunRecord(TEST, frozenset({(FIRST, "list-offsets.offset")}), frozenset(),
                                               frozenset())]) == [EntryStatus.NOT_EXERCISED]
    assert entry(FIRST, Obs.LIST_OFFSETS_OFFSET).covers(v, "anything")


def test_expected_matcher_narrows_to_one_scenario() -> None:
    known = entry(FIRST, Obs.LIST_OFFSETS_OFFSET, expected=-1)
    assert known.covers(violation(FIRST, Obs.LIST_OFFSETS_OFFSET, 0, -1), None)
    assert not known.covers(violation(FIRST, Obs.LIST_OFFSETS_OFFSET, 0, 5), None)


@pytest.mark.parametrize(
    ("wanted", "actual", "result"),
    [
        ("NETWORK_EXCEPTION", ErrorCode.NETWORK_EXCEPTION, True),
        (ErrorCode.NETWORK_EXCEPTION.value, ErrorCode.NETWORK_EXCEPTION, True),
        ("NONE", ErrorCode.NETWORK_EXCEPTION, False),
        ("CREATE_TIME", TimestampType.CREATE_TIME, True),
        ([1, "LOG_APPEND_TIME"], (1, TimestampType.LOG_APPEND_TIME), True),
        ([1, 2], (1, 2, 3), False),
        ("None", None, True),
        (True, 1, False),
        (1, True, False),
        (-1, -1, True),
    ],
)
def test_matchers_read_values_as_a_toml_file_writes_them(wanted: object, actual: object, result: bool) -> None:
    assert matches(wanted, actual) is result


# ------------------------------------------------------------------------------------ the checks' record


def test_a_covered_violation_is_recorded_and_the_test_goes_on_an_uncovered_one_raises() -> None:
    entries = (entry(LATEST, Obs.LIST_OFFSETS_EPOCH, observed=-1),)
    record = CheckRecord(cover=coverer(entries, TEST))
    with recording(record):
        assert check_equal(LATEST, Obs.LIST_OFFSETS_EPOCH, -1, 3) is False
        assert check_equal(LATEST, Obs.LIST_OFFSETS_ERROR, ErrorCode.NONE, ErrorCode.NONE) is True
        with pytest.raises(ClauseViolation, match=r"list-offsets\.offset"):
            check_equal(LATEST, Obs.LIST_OFFSETS_OFFSET, 9, 10)
        # SHOULD: recorded as NON-STRICT, not raised.
        assert check_equal("LO.first-qualifying-segment", Obs.LIST_OFFSETS_OFFSET, 1, 2) is False
    assert [i for _, i in record.covered] == [0]
    assert [v.clause_id for v in record.lenient] == ["LO.first-qualifying-segment"]
    assert (LATEST, Obs.LIST_OFFSETS_OFFSET) in record.checked and (LATEST, Obs.LIST_OFFSETS_ERROR) in record.held
    # Outside a recording nothing is expected.
    with pytest.raises(ClauseViolation):
        check_equal(LATEST, Obs.LIST_OFFSETS_EPOCH, -1, 3)


# ------------------------------------------------------------------------------------ one test's verdicts


def evidence(**kw: object) -> Evidence:
    base: dict[str, object] = {"nodeid": TEST, "clauses": (LATEST, FIRST), "in_profile": frozenset({LATEST, FIRST})}
    return Evidence(**(base | kw))  # type: ignore[arg-type]


def test_a_clause_passes_only_where_a_check_of_it_held() -> None:
    j = judge(evidence(held=frozenset({LATEST})), ())
    assert j.verdicts == {LATEST: Verdict.PASS, FIRST: Verdict.UNSUPPORTED}
    assert not j.failed and not j.known
    j = judge(evidence(held=frozenset({LATEST}), in_profile=frozenset({LATEST})), ())
    assert j.verdicts[FIRST] is Verdict.NOT_APPLICABLE


def test_known_and_new_departures_in_one_test() -> None:
    known = entry(LATEST, Obs.LIST_OFFSETS_EPOCH)
    j = judge(
        evidence(
            covered=((violation(LATEST, Obs.LIST_OFFSETS_EPOCH, -1, 0), 0),),
            raised=(violation(FIRST, Obs.LIST_OFFSETS_OFFSET, 3, 4),),
        ),
        (known,),
    )
    assert j.verdicts == {LATEST: Verdict.KNOWN, FIRST: Verdict.FAIL}
    assert j.failed and j.matched == (0,)
    j = judge(evidence(covered=((violation(LATEST, Obs.LIST_OFFSETS_EPOCH, -1, 0), 0),), held=frozenset({FIRST})),
              (known,))  # fmt: skip
    assert j.verdicts == {LATEST: Verdict.KNOWN, FIRST: Verdict.PASS}
    assert j.known and not j.failed and "KNOWN: LO.latest-is-high-watermark on list-offsets.leader-epoch" in j.summary


def test_a_failed_test_blocks_only_the_clauses_no_check_held_for() -> None:
    raised = (violation(FIRST, Obs.LIST_OFFSETS_OFFSET, 3, 4),)
    j = judge(evidence(raised=raised), ())
    assert j.verdicts == {LATEST: Verdict.BLOCKED, FIRST: Verdict.FAIL}
    j = judge(evidence(raised=raised, held=frozenset({LATEST})), ())
    assert j.verdicts[LATEST] is Verdict.PASS


def test_an_error_outside_the_checks_fails_every_clause_not_known() -> None:
    j = judge(evidence(error="ConnectionResetError", covered=((violation(LATEST, Obs.LIST_OFFSETS_EPOCH, -1, 0), 0),)),
              (entry(),))  # fmt: skip
    assert j.verdicts == {LATEST: Verdict.KNOWN, FIRST: Verdict.FAIL} and j.failed
    j = judge(evidence(error="x", unsupported="the target has no ListOffsets v9"), ())
    assert j.skipped and set(j.verdicts.values()) == {Verdict.UNSUPPORTED}


def test_a_pinned_entry_that_covered_nothing_is_unexpected_pass_and_the_rest_keep_their_verdicts() -> None:
    pinned = entry(LATEST, Obs.LIST_OFFSETS_EPOCH, test=TEST, example="data=1")
    j = judge(evidence(pinned=(0,), held=frozenset({LATEST, FIRST})), (pinned,))
    assert j.verdicts == {LATEST: Verdict.UNEXPECTED_PASS, FIRST: Verdict.PASS}
    assert j.failed and j.unexpected == (0,) and "remove the entry" in j.summary
    # The pin passed, but the test failed on something else: that may have changed the scenario.
    j = judge(evidence(pinned=(0,), raised=(violation(FIRST, Obs.LIST_OFFSETS_OFFSET, 3, 4),)), (pinned,))
    assert j.verdicts == {LATEST: Verdict.UNEXPECTED_PASS, FIRST: Verdict.FAIL}
    assert "also failed on LO.first-ge-target" in j.summary and "remove the entry from" not in j.summary


def test_skipped_tests_are_unsupported_or_not_applicable() -> None:
    assert set(judge(evidence(skipped="UNSUPPORTED: clock-control"), ()).verdicts.values()) == {Verdict.UNSUPPORTED}
    assert set(judge(evidence(skipped="N/A: x not in kafka-0.10"), ()).verdicts.values()) == {Verdict.NOT_APPLICABLE}
    # A clause outside the profile is N/A even where a missing capability stopped the test.
    j = judge(evidence(skipped="UNSUPPORTED: produce-legacy", in_profile=frozenset({FIRST})), ())
    assert j.verdicts == {LATEST: Verdict.NOT_APPLICABLE, FIRST: Verdict.UNSUPPORTED}


# ------------------------------------------------------------------------------------ the run


def test_clause_verdict_over_tests_most_severe_wins() -> None:
    got = clause_verdicts({FIRST: ["PASS", "KNOWN"], LATEST: [Verdict.PASS, Verdict.FAIL], "X": ["N/A", "BLOCKED"]})
    assert got == {FIRST: Verdict.KNOWN, LATEST: Verdict.FAIL, "X": Verdict.BLOCKED}


def test_entry_statuses_name_stale_entries_and_say_nothing_of_unexercised_ones() -> None:
    entries = (
        entry(LATEST, Obs.LIST_OFFSETS_EPOCH),  # matched
        entry(LATEST, Obs.LIST_OFFSETS_TIMESTAMP),  # checked, never departed: STALE
        entry(FIRST, Obs.LIST_OFFSETS_OFFSET),  # never checked in this run
        entry(LATEST, Obs.LIST_OFFSETS_OFFSET, test="other::test", example="x=1"),  # checked, but not in its test
        entry(LATEST, Obs.LIST_OFFSETS_ERROR, test=TEST, example="x=1"),  # pinned, its test ran without it
    )
    tests = [
        RunRecord(
            TEST,
            checked=frozenset({(LATEST, "list-offsets.leader-epoch"), (LATEST, "list-offsets.timestamp"),
                               (LATEST, "list-offsets.offset"), (LATEST, "list-offsets.error")}),
            matched=frozenset({0}),
            unexpected=frozenset({4}),
        )
    ]  # fmt: skip
    assert entry_statuses(entries, tests) == [
        EntryStatus.MATCHED,
        EntryStatus.STALE,
        EntryStatus.NOT_EXERCISED,
        EntryStatus.NOT_EXERCISED,
        EntryStatus.UNEXPECTED_PASS,
    ]
    # Stopped early, the whole-run entry that covered nothing may belong to a test that never ran: nothing known.
    # A pinned entry whose own test ran is judged all the same.
    stale_in_its_test = entry(LATEST, Obs.LIST_OFFSETS_TIMESTAMP, test=TEST, example="x=1")
    assert entry_statuses((*entries, stale_in_its_test), tests, complete=False) == [
        EntryStatus.MATCHED,
        EntryStatus.NOT_EXERCISED,
        EntryStatus.NOT_EXERCISED,
        EntryStatus.NOT_EXERCISED,
        EntryStatus.UNEXPECTED_PASS,
        EntryStatus.STALE,
    ]


def test_an_entry_left_to_chance_is_never_stale_but_still_matches() -> None:
    """A departure only the wall clock decides (kfake's LogAppendTime tie): a run that did not meet it cannot tell a
    fixed target from a scenario that did not occur, so it says nothing (NOT-EXERCISED); a run that met it matched."""
    chance = entry(FIRST, Obs.LIST_OFFSETS_OFFSET, test=TEST, chance="two appends in one millisecond")
    checked = frozenset({(FIRST, "list-offsets.offset")})
    assert entry_statuses((chance,), [RunRecord(TEST, checked, frozenset(), frozenset())]) == [
        EntryStatus.NOT_EXERCISED
    ]
    assert entry_statuses((chance,), [RunRecord(TEST, checked, frozenset({0}), frozenset())]) == [EntryStatus.MATCHED]
    # Without it, the same run calls the entry STALE.
    plain = entry(FIRST, Obs.LIST_OFFSETS_OFFSET, test=TEST)
    assert entry_statuses((plain,), [RunRecord(TEST, checked, frozenset(), frozenset())]) == [EntryStatus.STALE]
    assert chance.covers(violation(FIRST, Obs.LIST_OFFSETS_OFFSET, 3, 4), TEST)
    assert "(by chance: two appends in one millisecond)" in chance.describe()


# ------------------------------------------------------------------------------------ the file


def test_the_shipped_expectations_files_load_and_name_observables() -> None:
    # Apache Kafka's own Java client and record layer depart from nothing: their files hold no entry.
    empty = {"client-java.toml", "codec-java.toml"}
    for path in sorted(Path(__file__).resolve().parents[1].glob("suites/expectations/*.toml")):
        entries = load_expectations(path)
        assert bool(entries) is (path.name not in empty), path
        assert all(e.observables for e in entries)


def test_a_bad_matcher_or_scope_is_one_clear_error(tmp_path: Path) -> None:
    head = "[[expected]]\nclause = 'LO.first-ge-target'\nobservable = 'list-offsets.offset'\nreason = 'r'\nlink = 'l'\n"
    for extra, message in (
        ("observed_is = 'yes'\n", "'observed_is' names a value a check knows"),
        ("scope = 'everywhere'\n", "'scope' must be"),
        ("scope = 'run'\n", "widens an entry with a 'test'"),
        ("observed = { a = 1 }\n", "'observed' must be a value"),
        ("chance = ''\n", "'chance' must say"),
        ("test = 't.py::t'\nexample = 'x=1'\nchance = 'the clock'\n", "a pinned entry takes none"),
    ):
        bad = tmp_path / "bad.toml"
        bad.write_text(head + extra)
        with pytest.raises(ExpectationsError, match=re.escape(message)):
            load_expectations(bad)


# ------------------------------------------------------------------------------------ pins and drafts


def test_a_pin_names_each_departing_observable_once_and_a_constant_as_its_matcher() -> None:
    pin = pin_text(TEST, "data=Replay([])", [
        violation(LATEST, Obs.LIST_OFFSETS_EPOCH, -1, 0),
        violation(LATEST, Obs.LIST_OFFSETS_EPOCH, -1, 3),
        violation(FIRST, Obs.LIST_OFFSETS_OFFSET, 4, 2),
    ], (LATEST, FIRST))  # fmt: skip
    entries = pin.split("[[expected]]")[1:]
    assert len(entries) == 2
    assert 'observable = "list-offsets.leader-epoch"\nobserved = -1\n' in entries[0]
    assert "observed" not in entries[1].replace("observable", "")  # an offset moves with the scenario
    assert f'test = "{TEST}"' in entries[1] and 'example = "data=Replay([])"' in entries[1]
    # A failure outside the clause checks: one entry per declared clause, its observable to fill in.
    assert pin_text(TEST, "x=1", [], (FIRST,)).count('observable = "..."') == 1


def test_a_draft_adds_only_the_entries_not_drafted_yet() -> None:
    pin = pin_text(TEST, "x=1", [violation(LATEST, Obs.LIST_OFFSETS_EPOCH, -1, 0)], (LATEST,))
    first = draft_text(pin, TEST, "")
    assert first.startswith("[[expected]]") and f'reason = "DRAFT: seen in {TEST}"' in first
    assert 'link = "none: not reported upstream yet"' in first
    assert draft_text(pin, TEST, first) == ""


# ------------------------------------------------------------------------------------ the harness's own errors


def _raised_in(relative: str, source: str) -> BaseException:
    """The exception `source` raises when its code lives at conformance/`relative` (its innermost frame there)."""
    try:
        exec(compile(source, str(PACKAGE_DIR / relative), "exec"), {})
    except BaseException as exc:  # the exception is the value under test
        return exc
    raise AssertionError(f"{source!r} raised nothing")


@pytest.mark.parametrize(
    ("error", "where", "harness"),
    [
        # The case: the model's broker index looked up in a one-broker target's broker list.
        (IndexError, "targets/routes/wire_adapter/kafka_wire.py", True),
        (KeyError, "plugin/reporting.py", True),
        (TypeError, "judging/checks.py", True),
        (AttributeError, "targets/routes/wire_adapter/health.py", True),
        (NameError, "campaign/worker.py", True),
        # Decoding the implementation's bytes or answers, or running the implementation itself: its FAIL.
        (IndexError, "wire/client.py", False),
        (KeyError, "control/control_client.py", False),
        (IndexError, "faults/validation.py", False),
        (IndexError, "targets/libraries/model/model_broker.py", False),
        (TypeError, "targets/libraries/kafka_python/kafka_python_records.py", False),
        (AttributeError, "targets/libraries/confluent_kafka/confluent_client.py", False),
        # What an implementation's answer raises, wherever it is read: its FAIL.
        (ValueError, "targets/routes/wire_adapter/kafka_wire.py", False),
        (RuntimeError, "plugin/fixtures.py", False),
        (ClauseViolation, "judging/checks.py", False),
        (UnsupportedOperation, "targets/routes/wire_adapter/kafka_wire.py", False),
    ],
)
def test_a_programming_error_in_the_harness_is_the_harness_s(
    error: type[BaseException], where: str, harness: bool
) -> None:
    assert is_harness_error(error, str(PACKAGE_DIR / where)) is harness


def test_code_outside_the_harness_is_never_the_harness_s(tmp_path: Path) -> None:
    """A suite test, the model, a library: an IndexError there may be the implementation's answer (a list shorter
    than the model's), so it stays a FAIL for a person to read."""
    root = PACKAGE_DIR.parent
    for where in (root / "suites" / "helpers.py", root / "models" / "codec.py", tmp_path / "test_x.py"):
        assert not is_harness_error(IndexError, str(where))
    assert not is_harness_error(IndexError, None)
    assert not in_harness(str(PACKAGE_DIR.parent / "conformance-other" / "x.py"))


def test_harness_error_reads_the_innermost_frame_and_every_failure_of_a_group() -> None:
    broke = _raised_in("targets/routes/wire_adapter/kafka_wire.py", "broker_ids = (0,)\nbroker_ids[1]")
    decoded = _raised_in("wire/client.py", "payload = b''\npayload[4]")
    frame = innermost_frame(broke)
    assert frame is not None and frame.lineno == 2
    assert frame.filename.endswith("targets/routes/wire_adapter/kafka_wire.py")
    assert harness_error(broke) is broke
    assert harness_error(decoded) is None
    assert harness_error(None) is None
    # Hypothesis raises distinct failures together: the harness's only when each one is.
    assert harness_error(ExceptionGroup("two", [broke, broke])) is broke
    assert harness_error(ExceptionGroup("two", [broke, decoded])) is None
    text = harness_error_text(broke)
    assert text.startswith(HARNESS_ERROR_PREFIX + "the suite's own code raised IndexError: tuple index out of range")
    assert "targets/routes/wire_adapter/kafka_wire.py:2" in text and "Traceback (most recent call last)" in text


def test_a_control_plane_that_broke_is_the_environment_s_wherever_it_is_raised() -> None:
    """A control plane answering 5xx (or not reachable) left the clock undriven: the test decided nothing, so its
    clauses are BLOCKED, with a message that blames neither the implementation nor the suite's code."""
    broke = ControlPlaneBroke("http://127.0.0.1:1", "POST /retention", "HTTP 500 (field server): failed", "see log")
    assert is_harness_error(ControlPlaneBroke, str(PACKAGE_DIR / "control" / "control_client.py"))
    assert is_harness_error(ControlPlaneBroke, None)
    assert harness_error(broke) is broke
    text = harness_error_text(broke)
    assert text.startswith(HARNESS_ERROR_PREFIX + "a part around the implementation failed: control plane at")
    assert "suite's own code" not in text
    # A control plane refusing a request (4xx) or breaking its contract stays what it was.
    assert not is_harness_error(ControlPlaneError, str(PACKAGE_DIR / "control" / "control_client.py"))


def test_draws_that_went_another_way_on_the_replay_are_the_suite_s_not_a_flaky_answer() -> None:
    """FlakyStrategyDefinition: the suite's data generation depended on outside state (BLOCKED); FlakyFailure: the
    implementation failed once and passed on the replay (its FAIL)."""
    from hypothesis.errors import FlakyFailure, FlakyStrategyDefinition

    assert is_harness_error(FlakyStrategyDefinition, str(PACKAGE_DIR.parent / "suites" / "machine.py"))
    assert not is_harness_error(FlakyFailure, str(PACKAGE_DIR.parent / "suites" / "machine.py"))


def test_a_harness_error_blocks_the_clauses_no_check_decided_and_fails_the_test() -> None:
    ev = Evidence(TEST, (LATEST, FIRST), frozenset({LATEST, FIRST}), held=frozenset({LATEST}), error="IndexError",
                  harness_error=True, pinned=(0,))  # fmt: skip
    judgement = judge(ev, (entry(FIRST, Obs.LIST_OFFSETS_OFFSET, test=TEST, example="x=1"),))
    # The check that held stands; the clause the harness never reached is not decided; no pin is called stale.
    assert judgement.verdicts == {LATEST: Verdict.PASS, FIRST: Verdict.BLOCKED}
    assert judgement.failed and not judgement.unexpected
    # The same error from the implementation's side fails every clause no check decided, as before.
    other = judge(Evidence(TEST, (LATEST, FIRST), frozenset({LATEST, FIRST}), error="IndexError"), ())
    assert other.verdicts == {LATEST: Verdict.FAIL, FIRST: Verdict.FAIL}
