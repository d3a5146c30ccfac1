"""The conformance matrix and the mutant kill table: Spark SQL over the campaign's Parquet rows
gives one cell per clause x (target, profile), holding the verdict over all seeds (the most severe wins), the
seeds run and the time to the first failure, and each column's implementation version, as its tasks' rows say it
(`aggregate`). That raw table is then split in two views, pure functions of it (tests build them from synthetic
cells):

- `implementation_matrix`: the real implementations as columns (brokers, codecs, clients, grouped by kind) and
  the clauses as rows, grouped by area; a clause no target of a column's kind checks is a cell of its own
  ("not checked by this kind"), distinct from N/A and UNSUPPORTED;
- `kill_table`: one row per seeded mutant, one column per way it was run (in process, served by the reference
  broker, served to each client), each KILLED / WRONG-CLAUSE / SURVIVED as `kafka-conformance mutants` grades;
- `campaign_outcome`: what the campaign's exit code says, by `kafka-conformance run`'s rule over the implementations'
  cells, the kill table's over the mutants', and every task finished.

reports/matrix.py writes them as Markdown, HTML and a PNG heatmap.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.judging.results import UNKNOWN_VERSION, one_version
from conformance.judging.verdicts import (
    DEPARTS,
    FAILS_RUN,
    KILLS,
    PRECEDENCE,
    KillStatus,
    TaskStatus,
    Verdict,
    most_severe,
    words,
)
from conformance.targets.kinds.implementation import Kind
from conformance.targets.registry import target_kind
from conformance.targets.target import MODEL, REFERENCE, library_name, read_name
from conformance.targets.target import short_name as _short_name
from models.clauses import CLAUSES, Area, Clause, Level, get_clause

# The row of a task that produced no verdict (conformance.campaign.worker.run_task).
WHOLE_TASK = "*"
_RANKED = tuple(v.value for v in PRECEDENCE)  # most severe first: a cell shows the worst verdict any seed gave
_KILL_WORDS = frozenset(words(KILLS))


@dataclass(frozen=True)
class Cell:
    verdict: str
    seeds: int
    first_failure_s: float | None
    examples: int = 0
    replay: str = ""  # the command that replays the cell's worst failure ("" when nothing departed)
    message: str = ""  # the first lines of that failure's message


Column = tuple[str, str]  # (target, profile)


@dataclass(frozen=True)
class Matrix:
    """Every (target, profile) of the campaign, mutants included: what `aggregate` reads from the rows."""

    clauses: list[str]
    columns: list[Column]
    cells: dict[tuple[str, Column], Cell]
    tasks: list[dict[str, Any]]  # one per task: id, target, machine, profile, seed, status, seconds
    # What each column's implementation said its version is (`column_versions`); a column whose rows never said
    # (a campaign from before rows carried it) has none.
    versions: dict[Column, str] = field(default_factory=dict)


VERSION_FIELD = "implementation_version"  # the row field (conformance.campaign.rows.ROW_FIELDS)


def column_versions(said: Iterable[tuple[str, str, str | None]]) -> dict[Column, str]:
    """Each column's implementation version from (target, profile, version) as its rows say it, in the order
    said: `one_version` of them (several joined, UNKNOWN_VERSION when every row said it did not know). A column
    whose rows all say nothing (null: rows from before they carried it) is left out."""
    by_column: dict[Column, list[str]] = {}
    for target, profile, version in said:
        if version is not None:
            by_column.setdefault((target, profile), []).append(version)
    return {column: one_version(versions) for column, versions in by_column.items()}


def aggregate(spark: Any, rows: Path) -> Matrix:
    """The matrix from every Parquet file under `rows`, computed with Spark SQL. Files of an older campaign may
    lack a field a newer one has (implementation_version): the schemas are merged, its rows read it as null."""
    frame = spark.read.option("mergeSchema", "true").parquet(str(rows))
    frame.createOrReplaceTempView("campaign_rows")
    rank = f"CASE verdict {' '.join(f'WHEN {w!r} THEN {i}' for i, w in enumerate(_RANKED))} ELSE {len(_RANKED)} END"
    # The replay command and message of the cell's most severe failure (rows without one rank last).
    evidence_rank = f"CASE WHEN replay = '' OR replay IS NULL THEN {len(_RANKED) + 1} ELSE {rank} END"
    cells = spark.sql(
        f"""
        SELECT clause, target, profile,
               MIN({rank}) AS rank,
               COUNT(DISTINCT seed) AS seeds,
               MIN(first_failure_s) AS first_failure_s,
               SUM(examples) AS examples,
               MIN_BY(replay, {evidence_rank}) AS replay,
               MIN_BY(SUBSTRING(counterexample, 1, 600), {evidence_rank}) AS message
        FROM campaign_rows WHERE clause <> '{WHOLE_TASK}'
        GROUP BY clause, target, profile
        """
    ).collect()
    # A task that timed out or crashed before any verdict is a row with clause '*': every clause of its
    # column that no other task decided shows it.
    broken = spark.sql(
        f"""
        SELECT target, profile, MIN({rank}) AS rank
        FROM campaign_rows WHERE clause = '{WHOLE_TASK}' GROUP BY target, profile
        """
    ).collect()
    tasks = [
        r.asDict()
        for r in spark.sql(
            """
            SELECT task_id, target, machine, profile, seed, FIRST(status) AS status,
                   MAX(task_seconds) AS seconds, MAX(task_examples) AS examples
            FROM campaign_rows GROUP BY task_id, target, machine, profile, seed ORDER BY task_id
            """
        ).collect()
    ]
    out: dict[tuple[str, Column], Cell] = {}
    for r in cells:
        verdict = _RANKED[r["rank"]] if r["rank"] < len(_RANKED) else "?"
        out[(r["clause"], (r["target"], r["profile"]))] = Cell(
            verdict, int(r["seeds"]), r["first_failure_s"], int(r["examples"] or 0), r["replay"] or "",
            (r["message"] or "").strip(),
        )  # fmt: skip
    columns = sorted({col for _, col in out} | {(r["target"], r["profile"]) for r in broken})
    clauses = sorted({clause for clause, _ in out})
    for r in broken:
        for clause in clauses:
            out.setdefault((clause, (r["target"], r["profile"])), Cell(_RANKED[r["rank"]], 0, None))
    # The clauses each machine's suites check, as the rows of every task that ran them say: a task that timed out or
    # crashed part-way leaves rows for the clauses it decided only, and the rest read as its end (unfinished_cells).
    machine_clauses: dict[str, set[str]] = {}
    for r in spark.sql(f"SELECT DISTINCT machine, clause FROM campaign_rows WHERE clause <> '{WHOLE_TASK}'").collect():
        machine_clauses.setdefault(r["machine"], set()).add(r["clause"])
    out.update(unfinished_cells(out, tasks, machine_clauses))
    said = []
    if VERSION_FIELD in frame.columns:
        said = spark.sql(
            f"""
            SELECT target, profile, {VERSION_FIELD} AS version, MIN(finished_at) AS first_said
            FROM campaign_rows WHERE {VERSION_FIELD} IS NOT NULL
            GROUP BY target, profile, {VERSION_FIELD} ORDER BY first_said
            """
        ).collect()
    versions = column_versions((r["target"], r["profile"], r["version"]) for r in said)
    return Matrix(clauses, columns, out, tasks, versions)


# How a task that did not finish ended (the rows' "status"), as the verdict of the clauses it left undecided.
_TASK_END = {TaskStatus.TIMEOUT.value: Verdict.TIMEOUT, TaskStatus.CRASHED.value: Verdict.CRASHED}


def unfinished_cells(
    cells: dict[tuple[str, Column], Cell], tasks: Iterable[dict[str, Any]], machine_clauses: dict[str, set[str]]
) -> dict[tuple[str, Column], Cell]:
    """The cells a task that timed out or crashed left undecided: every clause its machine's suites check
    (`machine_clauses`, from the rows of every task that ran them) that no row of its column decided reads TIMEOUT
    or CRASHED, never "not checked by this kind". `tasks` as Matrix.tasks (task_id, target, machine, profile, seed,
    status, seconds). A clause another task of the column decided keeps that verdict; several unfinished tasks of
    one column give the most severe end, their seeds counted."""
    found: dict[tuple[str, Column], Cell] = {}
    for task in tasks:
        end = _TASK_END.get(str(task.get("status")))
        if end is None:
            continue
        column = (str(task["target"]), str(task["profile"]))
        seconds = task.get("seconds")
        how = "crashed" if end is Verdict.CRASHED else "timed out" + (f" after {seconds:.0f} s" if seconds else "")
        task_said = f"task {task.get('task_id')} ({task.get('machine')}, seed {task.get('seed')})"
        why = f"{task_said} {how} before deciding this clause"
        for clause in sorted(machine_clauses.get(str(task.get("machine")), ())):
            key = (clause, column)
            if key in cells:
                continue
            before = found.get(key)
            if before is None:
                found[key] = Cell(end.value, 1, None, message=why)
                continue
            worst = end.value if _RANKED.index(end.value) < _RANKED.index(before.verdict) else before.verdict
            found[key] = Cell(worst, before.seeds + 1, None, message=before.message if worst == before.verdict else why)
    return found


# --- which columns are implementations, which are mutants ------------------------------------------------------

IN_PROCESS = "in process"  # the kill table's way of running `mutant:<id>`
SERVED = "served"  # ... of `reference:mutant:<id>`: the reference broker serving the mutant over the wire


def mutant_of(target: str) -> tuple[str, str] | None:
    """(mutant id, the way it is run) for a mutant target, None for an implementation: `mutant:<id>` runs in
    process, `reference:mutant:<id>` is served by the reference broker, `client:<lib>@reference:mutant:<id>` is
    served to that client (the way is the client's name). Read by syntax alone: a stored name of an earlier
    campaign still reads."""
    parts = read_name(target)
    if parts.mutant is None:
        return None
    return parts.mutant, parts.mutant_served_to or (SERVED if parts.served_mutant else IN_PROCESS)


# Within a kind, the reference implementations come first: every other column is read against them.
_REFERENCES = (MODEL, REFERENCE, library_name(Kind.CODEC, MODEL), library_name(Kind.CLIENT, MODEL))
KIND_ORDER = (Kind.BROKER, Kind.CODEC, Kind.CLIENT)
KIND_TITLE = {Kind.BROKER: "brokers", Kind.CODEC: "codecs", Kind.CLIENT: "clients"}


def short_name(target: str) -> str:
    """A column's name under its kind's heading: `codec:aiokafka` is `aiokafka` under "codecs"."""
    return _short_name(target)


@dataclass(frozen=True)
class ColumnGroup:
    kind: Kind
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class AreaGroup:
    """The clauses of one spec area (`area` None: clauses the catalogue does not know)."""

    area: Area | None
    clauses: tuple[str, ...]

    @property
    def title(self) -> str:
        return f"{self.area.prefix} · {self.area.value}" if self.area is not None else "other"


@dataclass(frozen=True)
class Tally:
    """The verdicts of one column over a set of clauses (an area, or all)."""

    counts: dict[str, int]
    not_checked: int  # clauses the column has no cell for

    @property
    def worst(self) -> str | None:
        winner = most_severe(v for v in self.counts if v in _RANKED)
        return winner.value if winner is not None else None

    @property
    def departures(self) -> int:
        return sum(n for v, n in self.counts.items() if v in _DEPARTS_WORDS)

    @property
    def checked(self) -> int:
        """Clauses decided by a check that ran: PASS or a departure (not N/A, UNSUPPORTED, BLOCKED, ...)."""
        return self.counts.get(Verdict.PASS.value, 0) + self.departures

    def line(self) -> str:
        """`12 PASS, 1 KNOWN`: every verdict present, in PRECEDENCE order."""
        return ", ".join(f"{self.counts[v]} {v}" for v in _RANKED if v in self.counts)


# A departure: the implementation was shown not to hold the clause (conformance.judging.verdicts.DEPARTS).
_DEPARTS_WORDS = frozenset(words(DEPARTS))


@dataclass(frozen=True)
class ImplementationMatrix:
    """Clauses (grouped by area) x implementations (grouped by kind): the conformance matrix people read."""

    areas: tuple[AreaGroup, ...]
    groups: tuple[ColumnGroup, ...]
    cells: dict[tuple[str, Column], Cell]
    versions: dict[Column, str] = field(default_factory=dict)  # as Matrix.versions

    @property
    def columns(self) -> tuple[Column, ...]:
        return tuple(c for g in self.groups for c in g.columns)

    @property
    def clauses(self) -> tuple[str, ...]:
        return tuple(c for a in self.areas for c in a.clauses)

    @property
    def profiles(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for _, p in self.columns))

    def cell(self, clause: str, column: Column) -> Cell | None:
        return self.cells.get((clause, column))

    def shown_version(self, column: Column) -> str | None:
        """The version a column's header shows after its target's name: what the implementation said, unless it
        said none (UNKNOWN_VERSION), its rows never said (an older campaign), or the name already says it
        (`client:kafka-python==3.0.11` that said 3.0.11)."""
        version = self.versions.get(column)
        if version is None or version == UNKNOWN_VERSION or read_name(column[0]).version == version:
            return None
        return version

    def kinds_checking(self, clause: str) -> frozenset[Kind]:
        """The kinds of implementation some column of which has a verdict for `clause` in this campaign."""
        return frozenset(g.kind for g in self.groups for col in g.columns if (clause, col) in self.cells)

    def not_checked_reason(self, clause: str, column: Column) -> str:
        """Why `column` has no verdict for `clause` (the cell shows a dash, never a verdict)."""
        kind = target_kind(column[0])
        elsewhere = _catalogue(clause)
        if kind not in self.kinds_checking(clause):
            why = f"no {kind.value} test checks this clause"
            if elsewhere is not None and elsewhere.checked_elsewhere and kind is Kind.BROKER:
                why += f" (checked by the {elsewhere.checked_elsewhere})"
            return why
        return "not run against this target in this campaign (its suites did not include a test of this clause)"

    def tally(self, column: Column, clauses: Iterable[str]) -> Tally:
        counts: dict[str, int] = {}
        missing = 0
        for clause in clauses:
            cell = self.cells.get((clause, column))
            if cell is None:
                missing += 1
            else:
                counts[cell.verdict] = counts.get(cell.verdict, 0) + 1
        return Tally(counts, missing)

    def departs(self, clause: str) -> bool:
        """Whether any implementation departs from `clause` or did not decide it (a row worth a look)."""
        return any(
            (cell := self.cells.get((clause, col))) is not None and cell.verdict not in QUIET for col in self.columns
        )


# Verdicts nobody needs to look at: held, or not applicable or checkable there.
QUIET = frozenset((Verdict.PASS.value, Verdict.NOT_APPLICABLE.value, Verdict.UNSUPPORTED.value))


def _catalogue(clause: str) -> Clause | None:
    try:
        return get_clause(clause)
    except KeyError:
        return None


_CLAUSE_ORDER = {c.id: i for i, c in enumerate(CLAUSES)}


def clause_level(clause: str) -> Level | None:
    found = _catalogue(clause)
    return found.level if found is not None else None


def _column_order(column: Column) -> tuple[int, str, str]:
    target, profile = column
    return (_REFERENCES.index(target) if target in _REFERENCES else len(_REFERENCES), target, profile)


def implementation_matrix(matrix: Matrix) -> ImplementationMatrix:
    """The matrix without the mutants, columns grouped by kind (references first), clauses by area in catalogue
    order."""
    by_kind: dict[Kind, list[Column]] = {}
    for column in matrix.columns:
        if mutant_of(column[0]) is None:
            by_kind.setdefault(target_kind(column[0]), []).append(column)
    groups = tuple(
        ColumnGroup(kind, tuple(sorted(by_kind[kind], key=_column_order))) for kind in KIND_ORDER if kind in by_kind
    )
    kept = {col for g in groups for col in g.columns}
    cells = {key: cell for key, cell in matrix.cells.items() if key[1] in kept}
    versions = {col: version for col, version in matrix.versions.items() if col in kept}
    clauses = {clause for clause, _ in cells}
    by_area: dict[Area | None, list[str]] = {}
    for clause in sorted(clauses, key=lambda c: (_CLAUSE_ORDER.get(c, len(_CLAUSE_ORDER)), c)):
        found = _catalogue(clause)
        by_area.setdefault(found.area if found is not None else None, []).append(clause)
    areas = tuple(AreaGroup(a, tuple(by_area[a])) for a in (*Area, None) if a in by_area)
    return ImplementationMatrix(areas, groups, cells, versions)


# --- the kill table -----------------------------------------------------------------------------------------

# What a column's cells say about a mutant when nothing killed it and a task did not finish.
_UNFINISHED = {Verdict.TIMEOUT.value: KillStatus.TIMEOUT, Verdict.CRASHED.value: KillStatus.CRASHED}


@dataclass(frozen=True)
class Kill:
    """One way of running one mutant: killed or not, by which declared clause(s), with which verdict."""

    status: KillStatus  # KILLED, WRONG-CLAUSE, SURVIVED, TIMEOUT, CRASHED, NOT-SERVED or NOT-RUN
    killed_by: tuple[str, ...] = ()  # the declared clauses that failed
    verdict: str = ""  # the most severe verdict among them (FAIL, or NON-STRICT for a SHOULD clause)
    other_clauses: tuple[str, ...] = ()  # undeclared clauses that failed too
    first_failure_s: float | None = None
    replay: str = ""


@dataclass(frozen=True)
class KillRow:
    mutant: str
    profile: str
    kind: Kind
    area: Area | None  # the area of the mutant's first declared clause
    declared: tuple[str, ...]
    description: str
    kills: dict[str, Kill]  # way -> result


@dataclass(frozen=True)
class KillTable:
    ways: tuple[str, ...]  # IN_PROCESS, SERVED, then each client, in that order
    rows: tuple[KillRow, ...]  # grouped by kind (KIND_ORDER), then area, then mutant id

    def counts(self, way: str) -> dict[KillStatus, int]:
        """How many mutants got each status this way (NOT-SERVED ones included)."""
        out: dict[KillStatus, int] = {}
        for row in self.rows:
            if way in row.kills:
                out[row.kills[way].status] = out.get(row.kills[way].status, 0) + 1
        return out

    def killed(self, way: str) -> tuple[int, int]:
        """(killed, graded): graded leaves out the mutants not served this way and those whose declared clauses no
        task of this campaign checked (NOT-RUN)."""
        counts = self.counts(way)
        graded = sum(n for status, n in counts.items() if status not in UNGRADED)
        return counts.get(KillStatus.KILLED, 0), graded

    def not_killed(self) -> list[tuple[str, str, KillStatus]]:
        """(mutant, way, status) of every graded way a mutant was not killed: SURVIVED, WRONG-CLAUSE, TIMEOUT or
        CRASHED (the kill table's failures, as `kafka-conformance mutants` counts them)."""
        return [
            (row.mutant, way, kill.status)
            for row in self.rows
            for way, kill in row.kills.items()
            if kill.status is not KillStatus.KILLED and kill.status not in UNGRADED
        ]

    def summary(self, way: str) -> str:
        """`21 of 23 killed (2 SURVIVED; 54 NOT-RUN)`."""
        counts = self.counts(way)
        killed, graded = self.killed(way)
        rest = "; ".join(f"{n} {status}" for status, n in sorted(counts.items()) if status != KillStatus.KILLED)
        return f"{killed} of {graded} killed" + (f" ({rest})" if rest else "")


# A mutant not served this way, or whose declared clauses no task of the campaign checked: neither killed nor missed.
UNGRADED = frozenset({KillStatus.NOT_SERVED, KillStatus.NOT_RUN})
# The campaign's own kill status: no task checked any clause the mutant declares (the campaign's suites do not
# test them), so it neither survived nor was killed. `kafka-conformance mutants` runs the declared clauses' tests
# and never has it.
NOT_RUN = KillStatus.NOT_RUN
# A declared clause counts as checked when a check of it ran (it held, departed, or stopped at another failure).
_CHECKED = frozenset(words(DEPARTS)) | {Verdict.PASS.value, Verdict.BLOCKED.value}


def grade(declared: Iterable[str], verdicts: dict[str, Cell]) -> Kill:
    """A mutant's result in one column (clause -> cell), as `kafka-conformance mutants` grades: KILLED when a
    declared clause got a killing verdict (conformance.judging.verdicts.KILLS); when none did, TIMEOUT or CRASHED if
    a task
    of it did not finish, else NOT-RUN when no declared clause was checked at all, WRONG-CLAUSE when only other
    clauses failed, SURVIVED when nothing did."""
    declared = set(declared)
    failing = {c: cell for c, cell in verdicts.items() if cell.verdict in _KILL_WORDS}
    killers = sorted(c for c in failing if c in declared)
    others = tuple(sorted(c for c in failing if c not in declared))
    other_replay = next((failing[c].replay for c in others if failing[c].replay), "")
    if killers:
        worst = most_severe(failing[c].verdict for c in killers)
        times = [t for c in killers if (t := failing[c].first_failure_s) is not None]
        replay = next((failing[c].replay for c in killers if failing[c].replay), "")
        worst_word = worst.value if worst else ""
        return Kill(KillStatus.KILLED, tuple(killers), worst_word, others, min(times, default=None), replay)
    unfinished = most_severe(c.verdict for c in verdicts.values() if c.verdict in _UNFINISHED)
    if unfinished is not None:
        return Kill(_UNFINISHED[unfinished.value], other_clauses=others, replay=other_replay)
    if not any(verdicts[c].verdict in _CHECKED for c in declared if c in verdicts):
        return Kill(KillStatus.NOT_RUN, other_clauses=others, replay=other_replay)
    if others:
        return Kill(KillStatus.WRONG_CLAUSE, other_clauses=others, replay=other_replay)
    return Kill(KillStatus.SURVIVED)


def _way_order(way: str) -> tuple[int, str]:
    return (0, "") if way == IN_PROCESS else (1, "") if way == SERVED else (2, way)


def kill_table(matrix: Matrix) -> KillTable:
    """The mutant columns of `matrix` as a kill table. A mutant whose fault only a consumer's reading shows
    (`Mutant.reader_only`), or a codec or client mutant (a library's fault), is NOT-SERVED in the ways that serve
    mutants over the wire, when the campaign has them."""
    from conformance.faults import MUTANTS

    found: dict[tuple[str, str], dict[str, dict[str, Cell]]] = {}
    for target, profile in matrix.columns:
        which = mutant_of(target)
        if which is None:
            continue
        mutant, way = which
        column = {c: cell for c in matrix.clauses if (cell := matrix.cells.get((c, (target, profile)))) is not None}
        found.setdefault((mutant, profile), {})[way] = column
    ways = tuple(sorted({w for by_way in found.values() for w in by_way}, key=_way_order))
    rows = []
    for (mutant, profile), by_way in found.items():
        known = MUTANTS.get(mutant)
        declared = tuple(known.clauses) if known is not None else ()
        kills = {way: grade(declared, column) for way, column in by_way.items()}
        if known is not None and (known.reader_only or known.kind is not Kind.BROKER):  # nothing a broker serves
            kills.update({w: Kill(KillStatus.NOT_SERVED) for w in ways if w != IN_PROCESS and w not in kills})
        first = _catalogue(declared[0]) if declared else None
        rows.append(
            KillRow(
                mutant, profile, known.kind if known is not None else Kind.BROKER,
                first.area if first is not None else None, declared,
                known.description if known is not None else "not a mutant of this version", kills,
            )
        )  # fmt: skip
    area_index = {a: i for i, a in enumerate(Area)}
    rows.sort(key=lambda r: (KIND_ORDER.index(r.kind), area_index.get(r.area, len(area_index)), r.mutant, r.profile))  # type: ignore[arg-type]
    return KillTable(ways, tuple(rows))


# --- the campaign's outcome ---------------------------------------------------------------------------------

# What fails a campaign in an implementation's cell, as it fails `kafka-conformance run`: a departure no expectation
# covers, or a stale pinned expectation (FAIL, UNEXPECTED-PASS). A task that did not finish (TIMEOUT, CRASHED, the
# rest of FAILS_RUN) is counted by task, not by the clauses its '*' row stands for.
NEW_FAILURES: tuple[Verdict, ...] = tuple(v for v in PRECEDENCE if v in FAILS_RUN and v in DEPARTS)
# Departures that do not fail it (KNOWN, NON-STRICT), named in the summary so that "no new failure" is read right.
KNOWN_DEPARTURES: tuple[Verdict, ...] = tuple(v for v in PRECEDENCE if v in DEPARTS and v not in FAILS_RUN)


@dataclass(frozen=True)
class CampaignOutcome:
    """Why a campaign passes or fails: the implementations' cells by verdict (suites and audit rows alike, mutants
    left out), the graded ways a mutant was not killed, and the tasks that did not finish."""

    counts: dict[Verdict, int]  # implementation cells per verdict
    not_killed: tuple[tuple[str, str, KillStatus], ...]  # (mutant, way, status)
    mutants_graded: int  # (mutant, way) pairs graded: killed or not
    unfinished: tuple[str, ...]  # ids of the tasks that timed out or crashed

    @property
    def failed(self) -> bool:
        return bool(any(self.counts.get(v) for v in NEW_FAILURES) or self.not_killed or self.unfinished)

    def summary(self) -> str:
        """One line saying why: `2 FAIL, 0 UNEXPECTED-PASS; 1 mutant not killed (lookup-last-match in process:
        SURVIVED)` or `no new failure: 0 FAIL, 0 UNEXPECTED-PASS, 4 KNOWN; every mutant killed (21 graded)`."""
        parts = [", ".join(f"{self.counts.get(v, 0)} {v.value}" for v in NEW_FAILURES)]
        parts[0] += "".join(f", {self.counts[v]} {v.value}" for v in KNOWN_DEPARTURES if self.counts.get(v))
        if self.not_killed:
            shown = ", ".join(f"{m} {way}: {status}" for m, way, status in self.not_killed[:5])
            more = f" and {len(self.not_killed) - 5} more" if len(self.not_killed) > 5 else ""
            parts.append(f"{len(self.not_killed)} mutant(s) not killed ({shown}{more})")
        elif self.mutants_graded:
            parts.append(f"every mutant killed ({self.mutants_graded} graded)")
        if self.unfinished:
            parts.append(f"{len(self.unfinished)} task(s) timed out or crashed")
        line = "; ".join(parts)
        return line if self.failed else f"no new failure: {line}"


def campaign_outcome(matrix: Matrix) -> CampaignOutcome:
    """The campaign's outcome from its matrix (a pure function of the aggregated rows)."""
    implementations = implementation_matrix(matrix)
    counts: dict[Verdict, int] = {}
    for cell in implementations.cells.values():
        if cell.verdict in _RANKED:
            verdict = Verdict.parse(cell.verdict)
            counts[verdict] = counts.get(verdict, 0) + 1
    kills = kill_table(matrix)
    graded = sum(kills.killed(way)[1] for way in kills.ways)
    unfinished = tuple(dict.fromkeys(t["task_id"] for t in matrix.tasks if t["status"] != TaskStatus.OK))
    return CampaignOutcome(counts, tuple(kills.not_killed()), graded, unfinished)
