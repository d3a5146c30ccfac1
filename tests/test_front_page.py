"""The run's verdict line (conformance.judging.headline) and the report's first page (reports.front_page): what a
person sees first says what the exit code says, clause verdicts and tests are counted apart, the quality gate is
in view, KNOWN is never called skipped."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conformance.judging.headline import headline, headline_of
from conformance.judging.results import ExpectationOutcome, RunResults, TestResult
from conformance.judging.verdicts import EntryStatus, Verdict
from reports.front_page import RunFacts, render, write_front_page

V = Verdict


def test_a_run_without_new_failures_says_so_and_names_what_did_not_fail_it() -> None:
    said = headline(
        {"a": V.KNOWN, "b": V.KNOWN, "c": V.NON_STRICT, "d": V.PASS, "e": V.UNSUPPORTED},
        exit_status=0,
        entries=[EntryStatus.MATCHED, EntryStatus.NOT_EXERCISED, EntryStatus.NOT_EXERCISED],
    )
    assert not said.failed
    assert said.line == (
        "no new failure: 0 FAIL, 0 UNEXPECTED-PASS; 2 KNOWN, 1 NON-STRICT, 1 UNSUPPORTED, 1 PASS; "
        "2 expectations NOT-EXERCISED"
    )
    assert said.with_exit(0).startswith("exit 0: no new failure")


@pytest.mark.parametrize(
    ("kwargs", "line"),
    [
        ({"clauses": {"a": V.FAIL, "b": V.UNEXPECTED_PASS, "c": V.KNOWN}},
         "2 new failures: 1 FAIL, 1 UNEXPECTED-PASS; 1 KNOWN"),
        ({"clauses": {"a": V.BLOCKED}, "harness_broke": 3},
         "3 new failures: 0 FAIL, 0 UNEXPECTED-PASS, the harness broke in 3 tests; 1 BLOCKED"),
        ({"clauses": {"a": V.BLOCKED}, "target_lost": True},
         "1 new failure: 0 FAIL, 0 UNEXPECTED-PASS, the target was lost; 1 BLOCKED"),
        ({"clauses": {"a": V.PASS}},
         "the run failed (pytest exit 1) outside any clause verdict: 0 FAIL, 0 UNEXPECTED-PASS; 1 PASS"),
    ],
)  # fmt: skip
def test_a_failed_run_says_why(kwargs: dict[str, object], line: str) -> None:
    clauses = kwargs.pop("clauses")
    said = headline(clauses, exit_status=1, **kwargs)  # type: ignore[arg-type]
    assert said.failed and said.line == line


def test_a_stale_entry_fails_the_run_only_under_fail_on_stale() -> None:
    entries = [EntryStatus.MATCHED, EntryStatus.STALE, EntryStatus.NOT_EXERCISED]
    said = headline({"a": V.KNOWN}, exit_status=0, entries=entries)
    assert not said.failed
    assert said.line.endswith("1 KNOWN; 1 expectation STALE, 1 expectation NOT-EXERCISED")
    said = headline({"a": V.KNOWN}, exit_status=1, entries=entries, fail_on_stale=True)
    assert said.failed
    assert said.line == (
        "1 new failure: 0 FAIL, 0 UNEXPECTED-PASS, 1 expectation STALE (--fail-on-stale); 1 KNOWN; "
        "1 expectation NOT-EXERCISED"
    )


def test_a_stopped_run_leads_with_incomplete_and_judges_what_finished() -> None:
    stopped = "stopped after 1 of 3 tests (SIGINT)"
    said = headline({"a": V.PASS}, exit_status=2, incomplete=stopped)  # pytest: interrupted
    assert not said.failed
    assert said.line == f"INCOMPLETE ({stopped}): no new failure in what finished: 0 FAIL, 0 UNEXPECTED-PASS; 1 PASS"
    said = headline({"a": V.FAIL}, exit_status=2, incomplete=stopped)
    assert said.failed and said.line.startswith(f"INCOMPLETE ({stopped}): 1 new failure: 1 FAIL")


def _test(nodeid: str, outcome: str, **verdicts: Verdict) -> TestResult:
    return TestResult(nodeid=nodeid, outcome=outcome, clauses=tuple(verdicts), verdicts=verdicts)


def _run(exit_status: int, clauses: dict[str, Verdict], incomplete: str | None = None) -> RunResults:
    tests = tuple(_test(f"suites/test_x.py::test_{cid}", "skipped", **{cid: v}) for cid, v in clauses.items())
    entry = ExpectationOutcome(1, "A", ("x",), None, EntryStatus.NOT_EXERCISED, "A on x")
    return RunResults(target="tansu", profile="kafka-4.0", exit_status=exit_status, clauses=clauses,
                      tests=tests, expectations=(entry,), incomplete=incomplete)  # fmt: skip


class _Blocks(HTMLParser):
    """The page's text blocks in document order: (tag, id, class, text), and its meta tags."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[tuple[str, str, str, str]] = []
        self.meta: list[dict[str, str | None]] = []
        self._open: list[tuple[str, str, str, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            self.meta.append(dict(attrs))
        elif tag in ("h1", "h2", "p", "th", "td", "a", "title"):
            found = dict(attrs)
            self._open.append((tag, found.get("id") or "", found.get("class") or "", []))

    def handle_data(self, data: str) -> None:
        for _, _, _, parts in self._open:
            parts.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1][0] == tag:
            name, ident, cls, parts = self._open.pop()
            self.blocks.append((name, ident, cls, " ".join("".join(parts).split())))


def _page(run: RunResults, exit_code: int, gate: str = "passed") -> _Blocks:
    facts = RunFacts(
        "Kafka timestamp conformance: tansu (kafka-4.0)", exit_code, gate, "no new failure",
        "expectations: suites/expectations/tansu.toml (shipped with tansu)", (("target", "tansu"),),
    )  # fmt: skip
    parser = _Blocks()
    parser.feed(render(run, facts))
    return parser


def _first_screen(page: _Blocks) -> list[tuple[str, str, str, str]]:
    """What comes before the first table: the title, the settings, the verdict, the gate, the expectations."""
    blocks = [b for b in page.blocks if b[0] != "title"]
    first_cell = next(i for i, b in enumerate(blocks) if b[0] in ("th", "td"))
    return blocks[:first_cell]


def test_the_first_screen_opens_on_the_title_and_the_verdict_the_exit_code_says() -> None:
    clauses = {"A": V.KNOWN, "B": V.KNOWN, "C": V.NON_STRICT, "D": V.PASS, "E": V.UNSUPPORTED}
    page = _page(_run(0, clauses), 0)
    first = _first_screen(page)
    assert [b[0] for b in first[:3]] == ["h1", "p", "p"]  # title, settings, verdict: nothing above them
    assert first[0][3] == "Kafka timestamp conformance: tansu (kafka-4.0)"
    verdict = next(b for b in first if b[1] == "verdict")
    assert verdict[3] == (
        "exit 0: no new failure: 0 FAIL, 0 UNEXPECTED-PASS; 2 KNOWN, 1 NON-STRICT, 1 UNSUPPORTED, 1 PASS; "
        "1 expectation NOT-EXERCISED"
    )
    assert "ok" in verdict[2].split()
    gate = next(b for b in first if b[1] == "gate")
    assert "passed" in gate[3]
    assert any(b[1] == "expectations" and "tansu.toml" in b[3] for b in first)
    assert {"name": "viewport", "content": "width=device-width, initial-scale=1"} in page.meta


def test_clauses_and_tests_are_counted_apart_and_known_is_never_called_skipped() -> None:
    page = _page(_run(0, {"A": V.KNOWN, "B": V.PASS, "C": V.UNSUPPORTED}), 0)
    headings = [b[3] for b in page.blocks if b[0] == "h2"]
    assert headings == ["Clauses: 3 verdicts", "Tests: 3 pytest tests, by the verdict each shows"]
    rows = [b[3] for b in page.blocks if b[0] in ("th", "td")]
    assert rows[:2] == ["KNOWN", "1"]  # the clause table, in triage order
    text = " ".join(b[3] for b in page.blocks).lower()
    assert "skipped" not in text  # every test here is "skipped" to pytest (xfail or skip)
    links = [b[3] for b in page.blocks if b[0] == "a"]
    assert links == ["Clause verdicts (3)", "Tests (3)"]


def test_a_failed_and_a_stopped_run_say_so_first() -> None:
    failed = _first_screen(_page(_run(1, {"A": V.FAIL, "B": V.KNOWN}), 1, gate="failed"))
    verdict = next(b for b in failed if b[1] == "verdict")
    assert verdict[3].startswith("exit 1: 1 new failure: 1 FAIL, 0 UNEXPECTED-PASS; 1 KNOWN")
    assert "failed" in verdict[2].split()
    assert "failed" in next(b for b in failed if b[1] == "gate")[3]
    stopped = _first_screen(_page(_run(2, {"A": V.PASS}, "stopped after 1 of 3 tests (SIGINT)"), 130))
    verdict = next(b for b in stopped if b[1] == "verdict")
    assert verdict[3].startswith("exit 130: INCOMPLETE (stopped after 1 of 3 tests (SIGINT))")
    assert "incomplete" in verdict[2].split()


def test_the_page_is_written_over_allures_summary(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("allure's summary")
    facts = RunFacts("t", 0, "passed", "w", "expectations: none")
    page = write_front_page(tmp_path, _run(0, {"A": V.PASS}), facts)
    assert page == tmp_path / "index.html"
    assert re.search(r'id="verdict">exit 0: no new failure', page.read_text())
    assert headline_of(_run(0, {"A": V.PASS})).line in page.read_text()
