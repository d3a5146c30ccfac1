"""Two runs compared (conformance/judging/changes.py, reports/run_diff.py, `kafka-conformance diff`, `run
--baseline`): the classification of every pair of verdicts, the three formats, the exit codes and the bad input.
Runs are crafted verdicts files; one test runs the suites (a seeded mutant in process, a few seconds)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.judging.changes import (
    CHANGE_MEANING,
    REGRESSIONS,
    Change,
    Standing,
    classify,
    clause_changes,
    standing,
)
from conformance.judging.results import SCHEMA_VERSION, RunResults, TestResult, ViolationRecord, write_results
from conformance.judging.verdicts import FAILS_RUN, Verdict
from models.clauses import get_clause
from reports.run_diff import Side, diff_runs, evidence, to_json, to_markdown, to_text

V = Verdict
LOOKUP = "LO.first-ge-target"
RANGE = "VAL.range-before-after"
INDEX = "IDX.strictly-increasing"


# --- the classification -----------------------------------------------------------------------------------------

# The table docs/comparing-runs.md gives, row by row: (old, new, change).
TABLE = [
    (V.PASS, V.FAIL, Change.REGRESSED),
    (V.KNOWN, V.FAIL, Change.REGRESSED),
    (V.NOT_APPLICABLE, V.FAIL, Change.REGRESSED),
    (V.UNSUPPORTED, V.FAIL, Change.REGRESSED),
    (V.BLOCKED, V.FAIL, Change.REGRESSED),
    (V.KNOWN, V.UNEXPECTED_PASS, Change.REGRESSED),
    (V.PASS, V.TIMEOUT, Change.REGRESSED),
    (V.PASS, V.CRASHED, Change.REGRESSED),
    (V.FAIL, V.PASS, Change.FIXED),
    (V.UNEXPECTED_PASS, V.PASS, Change.FIXED),
    (V.TIMEOUT, V.PASS, Change.FIXED),
    (V.FAIL, V.KNOWN, Change.NEWLY_KNOWN),
    (V.PASS, V.KNOWN, Change.NEWLY_KNOWN),
    (V.PASS, V.NON_STRICT, Change.NEWLY_KNOWN),
    (V.UNSUPPORTED, V.KNOWN, Change.NEWLY_KNOWN),
    (V.KNOWN, V.PASS, Change.NO_LONGER_KNOWN),
    (V.NON_STRICT, V.PASS, Change.NO_LONGER_KNOWN),
    (V.PASS, V.BLOCKED, Change.NEWLY_BLOCKED),
    (V.FAIL, V.BLOCKED, Change.NEWLY_BLOCKED),
    (V.KNOWN, V.BLOCKED, Change.NEWLY_BLOCKED),
    (V.BLOCKED, V.PASS, Change.UNBLOCKED),
    (V.PASS, V.UNSUPPORTED, Change.NEWLY_UNSUPPORTED),
    (V.FAIL, V.UNSUPPORTED, Change.NEWLY_UNSUPPORTED),
    (V.PASS, V.NOT_APPLICABLE, Change.NEWLY_UNSUPPORTED),
    (V.UNSUPPORTED, V.PASS, Change.NEWLY_SUPPORTED),
    (V.NOT_APPLICABLE, V.PASS, Change.NEWLY_SUPPORTED),
    (V.FAIL, V.UNEXPECTED_PASS, Change.CHANGED),
    (V.TIMEOUT, V.FAIL, Change.CHANGED),
    (V.KNOWN, V.NON_STRICT, Change.CHANGED),
    (V.UNSUPPORTED, V.NOT_APPLICABLE, Change.CHANGED),
    (None, V.FAIL, Change.APPEARED),
    (None, V.PASS, Change.APPEARED),
    (V.FAIL, None, Change.DISAPPEARED),
    (V.PASS, V.PASS, Change.UNCHANGED),
    (V.FAIL, V.FAIL, Change.UNCHANGED),
    (V.BLOCKED, V.BLOCKED, Change.UNCHANGED),
]


@pytest.mark.parametrize(("old", "new", "change"), TABLE, ids=lambda x: getattr(x, "value", str(x)))
def test_the_documented_table(old: Verdict | None, new: Verdict | None, change: Change) -> None:
    assert classify(old, new) is change


def test_the_docs_page_shows_the_same_table() -> None:
    """docs/comparing-runs.md's classification table is this one: every pair a documented row names (`any`: every
    verdict; `same`: the old one again) is classified as that row says, and every change has a row."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "comparing-runs.md").read_text(encoding="utf-8")
    cell = r"([A-Z/ -]+?|none|any|same)"
    rows = re.findall(rf"^\| {cell} \| {cell} \| \*\*([a-z ]+)\*\* \|", page, re.M)
    assert len(rows) >= 12, rows

    def verdicts(text: str) -> list[Verdict | None]:
        if text == "none":
            return [None]
        if text == "any":
            return list(Verdict)
        return [Verdict.parse(word.strip()) for word in text.split(" / ")]

    for olds, news, change in rows:
        for old in verdicts(olds):
            for new in [old] if news == "same" else verdicts(news):
                if old is new and change != "unchanged":
                    continue  # "FAIL / UNEXPECTED-PASS to another of them": FAIL to FAIL is the unchanged row's
                assert classify(old, new) is Change(change), (old, new, change)
    assert {Change(c) for _, _, c in rows} == set(Change)


EVERY = [*Verdict, None]


def test_classify_is_total_and_only_a_new_failure_regresses() -> None:
    """Every pair of verdicts (or no verdict) has one change; REGRESSED exactly when the new verdict fails a run
    (FAILS_RUN) and the old one was there and did not."""
    for old, new in itertools.product(EVERY, EVERY):
        if old is None and new is None:
            with pytest.raises(ValueError):
                classify(old, new)
            continue
        change = classify(old, new)
        assert change in CHANGE_MEANING
        expected_regression = old is not None and new in FAILS_RUN and old not in FAILS_RUN
        assert (change in REGRESSIONS) is expected_regression, (old, new, change)
        if change is Change.FIXED:  # the way back is a regression
            assert classify(new, old) is Change.REGRESSED
        if old is not None and new is not None and old is not new:
            assert change is not Change.UNCHANGED


def test_every_verdict_has_a_standing() -> None:
    assert {v: standing(v) for v in (V.PASS, V.BLOCKED, V.KNOWN, V.FAIL, V.UNSUPPORTED)} == {
        V.PASS: Standing.HOLDS, V.BLOCKED: Standing.UNDECIDED, V.KNOWN: Standing.KNOWN, V.FAIL: Standing.FAILING,
        V.UNSUPPORTED: Standing.NOT_CHECKED,
    }  # fmt: skip
    assert all(isinstance(standing(v), Standing) for v in Verdict)


def test_changes_are_listed_regressions_first() -> None:
    changes = clause_changes({LOOKUP: V.PASS, RANGE: V.FAIL, INDEX: V.PASS}, {LOOKUP: V.FAIL, RANGE: V.PASS})
    assert [(c.clause, c.change) for c in changes] == [
        (LOOKUP, Change.REGRESSED), (RANGE, Change.FIXED), (INDEX, Change.DISAPPEARED),
    ]  # fmt: skip


# --- crafted runs ---------------------------------------------------------------------------------------------------

TESTS = {LOOKUP: "suites/test_list_offsets.py::test_timestamp_lookup"}


def _run(
    clauses: dict[str, Verdict], *, target: str = "kafka:4.0", version: str = "4.0.0", profile: str = "kafka-4.0"
) -> RunResults:
    tests = []
    for clause, verdict in clauses.items():
        nodeid = TESTS.get(clause) or f"suites/test_{get_clause(clause).area.value}.py::test_{clause.split('.')[1]}"
        violations = ()
        if verdict is V.FAIL:
            violations = (ViolationRecord(clause, "list-offsets.offset", "6", "4", "target 17 | v10"),)
        tests.append(
            TestResult(
                nodeid=nodeid.replace("-", "_"),  # a test of the suites that checks the clause, or a name like one
                outcome="failed" if verdict is V.FAIL else "passed",
                clauses=(clause,),
                verdicts={clause: verdict},
                replay=f"pytest {nodeid.replace('-', '_')} --target {target} --profile {profile}"
                if verdict is V.FAIL
                else None,
                violations=violations,
            )
        )
    failed = any(v in FAILS_RUN for v in clauses.values())
    return RunResults(target=target, implementation_version=version, profile=profile, exit_status=int(failed),
                      clauses=clauses, tests=tuple(tests))  # fmt: skip


def _diff(old: dict[str, Verdict], new: dict[str, Verdict]):  # type: ignore[no-untyped-def]
    return diff_runs(Side("old", "old/verdicts.json", _run(old, version="3.9.1")),
                     Side("new", "new/verdicts.json", _run(new)))  # fmt: skip


def example_diff():  # type: ignore[no-untyped-def]
    """The example docs/comparing-runs.md shows: Kafka 3.9.1 against 4.0.0, one clause regressed, one fixed, one
    newly known, one newly unsupported."""
    old = {LOOKUP: V.PASS, RANGE: V.FAIL, INDEX: V.PASS, "CNV.stored-magic": V.PASS, "VAL.lat-response-time": V.PASS}
    new = {LOOKUP: V.FAIL, RANGE: V.PASS, INDEX: V.KNOWN, "CNV.stored-magic": V.UNSUPPORTED,
           "VAL.lat-response-time": V.PASS}  # fmt: skip
    return diff_runs(
        Side("old", "reports/out/kafka-3.9", _run(old, target="kafka:3.9", version="3.9.1", profile="kafka-3.9")),
        Side("new", "reports/out/kafka-4.0", _run(new, target="kafka:4.0", version="4.0.0")),
    )


def test_the_docs_example_is_what_diff_writes() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "comparing-runs.md").read_text(encoding="utf-8")
    shown = page.split("<!-- example diff -->\n\n```markdown\n", 1)[1].split("```\n", 1)[0]
    assert shown == to_markdown(example_diff())


def test_text_names_each_change_with_its_evidence_and_the_exit() -> None:
    diff = _diff({LOOKUP: V.PASS, RANGE: V.FAIL, INDEX: V.PASS}, {LOOKUP: V.FAIL, RANGE: V.PASS, INDEX: V.PASS})
    text = to_text(diff)
    assert "old: old/verdicts.json: kafka:4.0 3.9.1 (kafka-4.0)" in text
    assert "new: new/verdicts.json: kafka:4.0 4.0.0 (kafka-4.0): 1 new failure" in text
    assert re.search(rf"regressed \(1\).*\n  {re.escape(LOOKUP)} +PASS -> FAIL\n", text)
    assert "list-offsets.offset: observed 6, expected 4" in text
    assert "in suites/test_list_offsets.py::test_timestamp_lookup; replay: pytest suites/test_list_offsets.py::" in text
    assert re.search(rf"fixed \(1\).*\n  {re.escape(RANGE)} +FAIL -> PASS\n", text)
    assert "unchanged: 1 clause\n" in text
    assert text.endswith("diff: 1 regressed, 1 fixed, 1 unchanged: exit 1\n")
    assert diff.exit_code == 1


def test_no_regression_exits_zero_even_with_other_changes() -> None:
    diff = _diff({LOOKUP: V.FAIL, RANGE: V.PASS}, {LOOKUP: V.KNOWN, RANGE: V.BLOCKED})
    assert diff.exit_code == 0 and not diff.regressed
    assert diff.verdict_line() == "no regression: 1 newly known, 1 newly blocked: exit 0"
    assert _diff({LOOKUP: V.PASS}, {LOOKUP: V.PASS}).verdict_line() == "no regression: no change: 1 unchanged: exit 0"


def _tables(markdown: str) -> list[list[str]]:
    """The Markdown tables of `markdown`, each as its rows."""
    tables: list[list[str]] = []
    current: list[str] = []
    for line in [*markdown.splitlines(), ""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables


def test_markdown_is_a_pull_request_comment() -> None:
    diff = _diff({LOOKUP: V.PASS, RANGE: V.UNSUPPORTED, INDEX: V.PASS}, {LOOKUP: V.FAIL, RANGE: V.PASS})
    md = to_markdown(diff)
    assert md.startswith("### Kafka timestamp conformance: runs compared\n\n**1 regressed, ")
    assert "| version | 3.9.1 | 4.0.0 |" in md
    assert f"| `{LOOKUP}` | list-offsets | PASS | **FAIL** |" in md
    assert "#### Regressed (1)" in md and "#### Newly supported (1)" in md
    # The evidence of a regression, its pipe escaped so that nothing breaks out of the list.
    assert "<details><summary>Evidence</summary>" in md and "target 17" not in md.split("Evidence")[0]
    assert f"- `{LOOKUP}`: list-offsets.offset: observed 6, expected 4 in `suites/test_list_offsets.py::" in md
    # A clause that only the old run has is folded away.
    assert "<details><summary>Disappeared (1): " in md
    for table in _tables(md):  # every row of a table has as many cells as its header
        widths = {len(re.split(r"(?<!\\)\|", row)) for row in table}
        assert len(widths) == 1, table
    assert "</details>" in md and md.count("<details>") == md.count("</details>")


def test_json_is_the_whole_diff() -> None:
    data = to_json(_diff({LOOKUP: V.PASS, RANGE: V.KNOWN}, {LOOKUP: V.FAIL, RANGE: V.PASS}))
    assert data["regressed"] is True and data["exit_code"] == 1
    assert data["counts"] == {"regressed": 1, "no longer known": 1}
    assert data["old"]["implementation_version"] == "3.9.1" and data["new"]["target"] == "kafka:4.0"
    assert {c["clause"]: (c["old"], c["new"], c["change"]) for c in data["changes"]} == {
        LOOKUP: ("PASS", "FAIL", "regressed"), RANGE: ("KNOWN", "PASS", "no longer known"),
    }  # fmt: skip
    json.dumps(data)


def test_evidence_is_empty_where_nothing_failed() -> None:
    assert evidence(_run({LOOKUP: V.PASS}), LOOKUP) == ""


# --- the command ----------------------------------------------------------------------------------------------------


def _write(path: Path, clauses: dict[str, Verdict], **kwargs: str) -> Path:
    write_results(path, _run(clauses, **kwargs))
    return path


def _main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_diff_reads_files_and_report_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path / "old" / "verdicts.json", {LOOKUP: V.PASS, RANGE: V.PASS})
    new = _write(tmp_path / "new" / "verdicts.json", {LOOKUP: V.FAIL, RANGE: V.PASS})
    code, out, err = _main(capsys, "diff", str(old.parent), str(new))
    assert (code, err) == (1, "") and out.endswith("diff: 1 regressed, 1 unchanged: exit 1\n")
    code, out, _ = _main(capsys, "diff", str(new), str(old.parent), "--format", "markdown")
    assert code == 0 and "#### Fixed (1)" in out
    code, out, _ = _main(capsys, "diff", str(old), str(old), "--format", "json")
    assert code == 0 and json.loads(out)["counts"] == {"unchanged": 2}


def _assert_one_line(code: int, out: str, err: str, *needles: str) -> None:
    assert code == 2 and out == "", (code, out)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kafka-conformance: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


NEWER = json.dumps({"schema_version": SCHEMA_VERSION + 1, "clauses": {}, "tests": []})


@pytest.mark.parametrize(
    ("make", "needles"),
    [
        (lambda d: d / "missing.json", ["does not exist", "pass a verdicts.json"]),
        (lambda d: d, ["holds no verdicts.json", "--out"]),
        (lambda d: _text(d / "campaign.json", "{}").parent, ["a campaign's folder", "--baseline"]),
        (lambda d: _write(d / "latest" / "verdicts.json", {LOOKUP: V.PASS}).parents[1], ["runs' folders", "latest"]),
        (lambda d: _text(d / "x.json", "not json"), ["not a verdicts file (not JSON", "--verdicts-json"]),
        (lambda d: _text(d / "x.json", '{"a": 1}'), ['no "clauses" and "tests"']),
        (
            lambda d: _text(d / "x.json", NEWER),
            [f"schema {SCHEMA_VERSION + 1}", f"reads schema {SCHEMA_VERSION}", "run the suites again"],
        ),
    ],
    ids=[
        "missing",
        "folder-without-verdicts",
        "campaign-folder",
        "runs-folder",
        "not-json",
        "not-verdicts",
        "newer-schema",
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], make, needles) -> None:  # type: ignore[no-untyped-def]
    good = _write(tmp_path / "good.json", {LOOKUP: V.PASS})
    bad = make(tmp_path)
    _assert_one_line(*_main(capsys, "diff", str(good), str(bad)), *needles)
    _assert_one_line(*_main(capsys, "diff", str(bad), str(good)), *needles)


def _text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_diff_refuses_a_format_it_does_not_have(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path / "good.json", {LOOKUP: V.PASS})
    _assert_one_line(*_main(capsys, "diff", str(good), str(good), "--format", "html"), "invalid choice")


def test_run_baseline_bad_input_is_refused_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _main(capsys, "run", "--target", "model", "--out", str(tmp_path / "out"), "--baseline",
                           str(tmp_path / "nope"))  # fmt: skip
    _assert_one_line(code, out, err, "--baseline", "does not exist")
    assert not (tmp_path / "out" / "verdicts.json").exists()
    code, out, err = _main(capsys, "run", "--target", "model", "--junit-xml", str(tmp_path))
    _assert_one_line(code, out, err, "--junit-xml", "is a folder", "junit.xml")


def test_run_with_a_baseline_exits_one_on_a_regression(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A seeded mutant (lookup-last-match) against a baseline where its clause held: the diff is printed and
    written to diff.md, the regression makes the run exit 1 and its verdict line says why; the JUnit file agrees.
    The baseline lives in the folder the run writes to: it is read before the run replaces it."""
    out_dir = tmp_path / "out"
    _write(out_dir / "verdicts.json", {LOOKUP: V.PASS}, target="model")
    junit = tmp_path / "ci" / "junit.xml"
    code, out, err = _main(
        capsys, "run", "--target", "mutant:lookup-last-match", "--clauses", LOOKUP, "--hypothesis-profile", "fast",
        "--no-html", "--out", str(out_dir), "--baseline", str(out_dir), "--junit-xml", str(junit),
    )  # fmt: skip
    assert code == 1, out + err
    assert re.search(rf"regressed \(1\).*\n  {re.escape(LOOKUP)} +PASS -> FAIL\n", out), out
    last = out.strip().splitlines()[-1]
    assert last.startswith("verdict: exit 1: ") and last.endswith("; 1 regressed since the baseline"), last
    assert f"| `{LOOKUP}` | list-offsets | PASS | **FAIL** |" in (out_dir / "diff.md").read_text(encoding="utf-8")
    xml = junit.read_text(encoding="utf-8")
    assert f'name="{LOOKUP}"' in xml and "<failure" in xml
    assert f'message="{last.removeprefix("verdict: ")}"' in xml  # the run's case says what the verdict line says
