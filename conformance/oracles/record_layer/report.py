"""The differential run's outputs: `differential.json` (counts per magic), `differential.md` (a readable
table, the explanations used, the unexplained cases with a minimal reproducer each), `unexplained.json` and
`run.json` (the run's parameters and timings). Counts come from Spark SQL over the rows (`cases/`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.oracles.record_layer.explained import AGREE, EXPLAINED, OUTCOMES, UNEXPLAINED, Explanation


@dataclass
class Example:
    """One unexplained case for the report: its id, its first differences and its minimal reproducer."""

    case_id: str
    magic: int
    unexplained: list[str]
    differences: list[dict[str, Any]]
    reproducer: str = ""


@dataclass
class Summary:
    counts: dict[int, dict[str, int]]  # magic -> outcome -> cases
    by_entry: dict[str, int]  # explanation id -> cases it explained
    unexplained_keys: dict[str, int]  # "check field" -> cases
    checks: dict[str, int] = field(default_factory=dict)  # check -> cases where it ran
    examples: list[Example] = field(default_factory=list)

    def total(self, outcome: str) -> int:
        return sum(c.get(outcome, 0) for c in self.counts.values())

    def table(self) -> dict[str, dict[str, int]]:
        """differential.json: {"magic-0": {"batches": n, "agree": n, "explained": n, "unexplained": n}, ...}."""
        return {
            f"magic-{magic}": {"batches": sum(c.values()), **{o: c.get(o, 0) for o in OUTCOMES}}
            for magic, c in sorted(self.counts.items())
        }


def summarize(spark: Any, rows: Path, magics: Sequence[int], examples_per_magic: int) -> Summary:
    """Spark SQL over the rows: counts per (magic, outcome), explanations used, unexplained differences by
    check and field, and the first unexplained cases of each magic (by index)."""
    from pyspark.sql.functions import col, explode

    df = spark.read.parquet(str(rows))
    counts: dict[int, dict[str, int]] = {m: {} for m in magics}
    for r in df.groupBy("magic", "outcome").count().collect():
        counts.setdefault(int(r["magic"]), {})[str(r["outcome"])] = int(r["count"])
    by_entry = {
        str(r["id"]): int(r["count"])
        for r in df.select(explode("explained_by").alias("id")).groupBy("id").count().collect()
    }
    keys = {
        str(r["key"]): int(r["count"])
        for r in df.select(explode("unexplained").alias("key")).groupBy("key").count().collect()
    }
    checks = {
        str(r["check"]): int(r["count"])
        for r in df.select(explode("checks").alias("check")).groupBy("check").count().collect()
    }
    examples: list[Example] = []
    if keys:
        for magic in magics:
            chosen = (
                df.where((col("magic") == magic) & (col("outcome") == UNEXPLAINED))
                .orderBy("idx")
                .limit(examples_per_magic)
                .collect()
            )
            examples += [
                Example(str(r["case_id"]), magic, list(r["unexplained"]), json.loads(r["differences"] or "[]"))
                for r in chosen
            ]
    return Summary(counts, by_entry, keys, checks, examples)


def write_outputs(
    out: Path,
    summary: Summary,
    explanations: Sequence[Explanation],
    run: dict[str, Any],
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "differential.json").write_text(json.dumps(summary.table(), indent=2) + "\n", encoding="utf-8")
    stale = [e.id for e in explanations if e.id not in summary.by_entry]
    run = {**run, "checks_made": summary.checks, "explanations_used": summary.by_entry,
           "explanations_unused": stale, "unexplained_by_check": summary.unexplained_keys}  # fmt: skip
    (out / "run.json").write_text(json.dumps(run, indent=2) + "\n", encoding="utf-8")
    (out / "unexplained.json").write_text(
        json.dumps([e.__dict__ for e in summary.examples], indent=2) + "\n", encoding="utf-8"
    )
    (out / "differential.md").write_text(markdown(summary, explanations, run), encoding="utf-8")


def markdown(summary: Summary, explanations: Sequence[Explanation], run: dict[str, Any]) -> str:
    lines = [
        "# Differential oracle: the model against Apache Kafka's record layer",
        "",
        f"kafka-clients {run.get('kafka_clients', '?')}, seed {run.get('seed')}, {run.get('batches')} batches per "
        f"magic, {run.get('where')}: {run.get('job_seconds', 0):.1f} s for {run.get('cases')} cases "
        f"({run.get('cases_per_second', 0):.0f} cases/s).",
        "",
        "| magic | batches | agree | explained | unexplained |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, row in summary.table().items():
        cells = [name.removeprefix("magic-"), *(str(row[k]) for k in ("batches", AGREE, EXPLAINED, UNEXPLAINED))]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(
        f"| all | {sum(sum(c.values()) for c in summary.counts.values())} | {summary.total(AGREE)} | "
        f"{summary.total(EXPLAINED)} | {summary.total(UNEXPLAINED)} |"
    )
    lines += ["", "## Checks made", "", "| check | cases |", "|---|---:|"]
    lines += [f"| {check} | {n} |" for check, n in sorted(summary.checks.items())]
    lines += ["", "## Explained differences", ""]
    if not explanations:
        lines.append("None listed.")
    for e in explanations:
        used = summary.by_entry.get(e.id, 0)
        lines += [
            f"- **{e.id}** ({e.check}: {', '.join(sorted(e.fields))}; {e.profile}): {used} case(s)"
            + (" (explained nothing in this run)" if not used else ""),
            f"  {e.reason}",
            f"  Evidence: {e.evidence}",
        ]
    lines += ["", "## Unexplained differences", ""]
    if not summary.unexplained_keys:
        lines.append("None: every difference found is explained above.")
    else:
        lines += ["| check and field | cases |", "|---|---:|"]
        lines += [f"| {k} | {n} |" for k, n in sorted(summary.unexplained_keys.items(), key=lambda kv: -kv[1])]
        for example in summary.examples:
            lines += [
                "",
                f"### case {example.case_id} (magic {example.magic})",
                "",
                f"Replay: `kafka-conformance differential --case {example.case_id}`. Minimal reproducer:",
                "",
                "```python",
                example.reproducer or "# (not shrunk)",
                "```",
            ]
    return "\n".join(lines) + "\n"
