"""The conformance matrix (issue 5, item 2): Spark SQL over the campaign's Parquet rows, one cell per
clause x (target, profile) holding the verdict over all seeds (the most severe wins), the seeds run and the
time to the first failure; written as Markdown, HTML and a PNG heatmap."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Most severe first: a cell shows the worst verdict any seed gave.
SEVERITY = (
    "FAIL", "UNEXPECTED-PASS", "CRASHED", "TIMEOUT", "KNOWN", "NON-STRICT", "PASS", "BLOCKED", "UNSUPPORTED", "N/A",
)  # fmt: skip
COLOURS = {
    "FAIL": "#d73027",
    "UNEXPECTED-PASS": "#f46d43",
    "CRASHED": "#7f3b08",
    "TIMEOUT": "#b35806",
    "KNOWN": "#fdae61",
    "NON-STRICT": "#fee08b",
    "PASS": "#1a9850",
    "BLOCKED": "#9e9ac8",
    "UNSUPPORTED": "#d9d9d9",
    "N/A": "#f7f7f7",
}


@dataclass(frozen=True)
class Cell:
    verdict: str
    seeds: int
    first_failure_s: float | None
    examples: int = 0


@dataclass(frozen=True)
class Matrix:
    clauses: list[str]
    columns: list[tuple[str, str]]  # (target, profile)
    cells: dict[tuple[str, tuple[str, str]], Cell]
    tasks: list[dict[str, Any]]  # one per task: id, target, machine, profile, seed, status, seconds


def aggregate(spark: Any, rows: Path) -> Matrix:
    """The matrix from every Parquet file under `rows`, computed with Spark SQL."""
    frame = spark.read.parquet(str(rows))
    frame.createOrReplaceTempView("campaign_rows")
    ranks = " ".join(f"WHEN '{v}' THEN {i}" for i, v in enumerate(SEVERITY))
    cells = spark.sql(
        f"""
        SELECT clause, target, profile,
               MIN(CASE verdict {ranks} ELSE {len(SEVERITY)} END) AS rank,
               COUNT(DISTINCT seed) AS seeds,
               MIN(first_failure_s) AS first_failure_s,
               SUM(examples) AS examples
        FROM campaign_rows WHERE clause <> '*'
        GROUP BY clause, target, profile
        """
    ).collect()
    # A task that timed out or crashed before any verdict is a row with clause '*': every clause of its
    # column that no other task decided shows it.
    broken = spark.sql(
        f"""
        SELECT target, profile, MIN(CASE verdict {ranks} ELSE {len(SEVERITY)} END) AS rank
        FROM campaign_rows WHERE clause = '*' GROUP BY target, profile
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
    out: dict[tuple[str, tuple[str, str]], Cell] = {}
    for r in cells:
        verdict = SEVERITY[r["rank"]] if r["rank"] < len(SEVERITY) else "?"
        out[(r["clause"], (r["target"], r["profile"]))] = Cell(
            verdict, int(r["seeds"]), r["first_failure_s"], int(r["examples"] or 0)
        )
    columns = sorted({col for _, col in out} | {(r["target"], r["profile"]) for r in broken})
    clauses = sorted({clause for clause, _ in out})
    for r in broken:
        for clause in clauses:
            out.setdefault((clause, (r["target"], r["profile"])), Cell(SEVERITY[r["rank"]], 0, None))
    return Matrix(clauses, columns, out, tasks)


def _label(column: tuple[str, str]) -> str:
    return f"{column[0]} ({column[1]})"


def to_markdown(matrix: Matrix) -> str:
    head = "| Clause | " + " | ".join(_label(c) for c in matrix.columns) + " |"
    lines = [head, "|---|" + "---|" * len(matrix.columns)]
    for clause in matrix.clauses:
        cells = []
        for column in matrix.columns:
            cell = matrix.cells.get((clause, column))
            if cell is None:
                cells.append("-")
                continue
            first = f", first failure {cell.first_failure_s:.1f} s" if cell.first_failure_s is not None else ""
            seeds = f"{cell.seeds} seed{'s' if cell.seeds != 1 else ''}"
            cells.append(f"{cell.verdict} ({seeds}, {cell.examples} examples{first})")
        lines.append(f"| `{clause}` | " + " | ".join(cells) + " |")
    counts = summary_counts(matrix)
    lines += ["", "Per column: " + "; ".join(f"{_label(c)}: {counts[c]}" for c in matrix.columns)]
    return "\n".join(lines) + "\n"


def summary_counts(matrix: Matrix) -> dict[tuple[str, str], str]:
    out = {}
    for column in matrix.columns:
        tally: dict[str, int] = {}
        for clause in matrix.clauses:
            cell = matrix.cells.get((clause, column))
            if cell is not None:
                tally[cell.verdict] = tally.get(cell.verdict, 0) + 1
        out[column] = ", ".join(f"{tally[v]} {v}" for v in SEVERITY if v in tally)
    return out


def to_html(matrix: Matrix, title: str) -> str:
    head = "".join(f"<th>{html.escape(_label(c))}</th>" for c in matrix.columns)
    body = []
    for clause in matrix.clauses:
        cells = []
        for column in matrix.columns:
            cell = matrix.cells.get((clause, column))
            verdict = cell.verdict if cell else "-"
            tip = (
                f"{cell.seeds} seed(s)"
                + (
                    f", first failure after {cell.first_failure_s:.1f} s"
                    if cell and cell.first_failure_s is not None
                    else ""
                )
                if cell
                else ""
            )
            colour = COLOURS.get(verdict, "#ffffff")
            cells.append(f'<td style="background:{colour}" title="{html.escape(tip)}">{html.escape(verdict)}</td>')
        body.append(f"<tr><th><code>{html.escape(clause)}</code></th>{''.join(cells)}</tr>")
    legend = " ".join(f'<span style="background:{c};padding:2px 6px">{v}</span>' for v, c in COLOURS.items())
    return (
        "<!doctype html><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title>"
        "<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}td{text-align:center}</style>"
        f"<h1>{html.escape(title)}</h1><p>{legend}</p>"
        f"<table><tr><th>Clause</th>{head}</tr>{''.join(body)}</table>"
    )


def to_png(matrix: Matrix, path: Path, title: str) -> None:
    """A heatmap: clauses down, (target, profile) across, one colour per verdict, with a legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    order = list(COLOURS)
    grid = [
        [order.index(matrix.cells[(c, col)].verdict) if (c, col) in matrix.cells else order.index("N/A")
         for col in matrix.columns]
        for c in matrix.clauses
    ]  # fmt: skip
    height = max(4.0, 0.22 * len(matrix.clauses) + 2)
    width = max(6.0, 1.6 * len(matrix.columns) + 4.5)
    fig, ax = plt.subplots(figsize=(width, height))
    ax.imshow(grid, cmap=ListedColormap([COLOURS[v] for v in order]), vmin=0, vmax=len(order) - 1, aspect="auto")
    ax.set_yticks(range(len(matrix.clauses)), labels=matrix.clauses, fontsize=7)
    ax.set_xticks(range(len(matrix.columns)), labels=[_label(c) for c in matrix.columns], rotation=30, ha="right")
    ax.set_title(title)
    ax.legend(
        handles=[Patch(color=COLOURS[v], label=v) for v in order],
        bbox_to_anchor=(1.02, 1),
        loc="upper left",
        fontsize=8,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
