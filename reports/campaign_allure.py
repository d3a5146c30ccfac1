"""Allure results for a Spark campaign: one result per campaign row, that is per clause x
task (target x suite x profile x seed), in the same conventions as the clause results of a single run
(reports.clauses): the verdict is the result's first word, a `verdict` label and a tag; the clause's KIP is
the epic and a link, its area the feature, its level the severity.

Runs on the driver after the campaign and reads the rows the engine wrote (`rows/<task_id>.parquet`,
conformance.campaign.engine.write_rows) with pyarrow alone, no Spark. The report's tree groups them as
target > verdict > area (reports.allure.allure_config); the suite labels (target > profile > suite module)
give the second view. A task that timed out or crashed before any verdict (its row's clause is "*") is one
"broken" result holding the command and the output tail.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from conformance.campaign.rows import ROW_FIELDS
from conformance.judging.verdicts import (
    ALLURE_SEVERITY,
    ALLURE_STATUS,
    DEPARTS,
    MEANING,
    TRIAGE_ORDER,
    TaskStatus,
    Verdict,
)
from models.clauses import Clause, get_clause, kip_url
from reports.allure import ReportError, write_categories, write_environment
from reports.known_issues import KNOWN_ISSUE_VERDICTS, mark_verdict, verdict_line

CAMPAIGN_SUITE = "campaign"
# The row of a task that produced no verdict (conformance.campaign.worker.run_task).
WHOLE_TASK = "*"
_LINE_MAX = 500
# What a row needs to be named and placed in the tree (of ROW_FIELDS).
_REQUIRED = ("task_id", "target", "profile", "machine", "clause", "verdict")


def read_rows(rows: Path, log: TextIO | None = None) -> list[dict[str, Any]]:
    """Every row of every `*.parquet` under `rows`, files in name order. A file that cannot be read (a foreign
    or damaged file) is skipped with one line on `log` (stderr by default); ReportError when none can be."""
    try:
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError:
        raise ReportError(
            "pyarrow is not installed: pip install 'kafka-timestamp-conformance[campaign]' (or pip install pyarrow)"
        ) from None
    log = sys.stderr if log is None else log
    files = sorted(Path(rows).glob("*.parquet"))
    if not files:
        raise ReportError(
            f"no task rows in {rows}: give the rows/ directory of a campaign's --out (one <task_id>.parquet per "
            "finished task); run `kafka-conformance campaign --resume` to finish it"
        )
    found: list[dict[str, Any]] = []
    unreadable: list[str] = []
    for path in files:
        try:
            table = pq.read_table(path)
        except (OSError, ValueError, pa.ArrowException) as exc:
            unreadable.append(path.name)
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            log.write(f"skipped {path}: not a readable Parquet file of task rows ({reason})\n")
            continue
        found.extend(table.to_pylist())
    if unreadable and len(unreadable) == len(files):
        raise ReportError(
            f"none of the {len(files)} Parquet file(s) in {rows} could be read ({', '.join(unreadable[:5])}"
            f"{', ...' if len(unreadable) > 5 else ''}): are they a campaign's rows? rerun it into a new --out"
        )
    return found


def _first_line(text: str, clause_id: str) -> str:
    """The line a reader needs first: the one naming the clause (the plugin's violation line), else the
    first non-empty one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    naming = [line for line in lines if clause_id in line]
    first = (naming or lines or [""])[0]
    return first if len(first) <= _LINE_MAX else first[: _LINE_MAX - 3] + "..."


def _attach(results: Path, name: str, text: str) -> dict[str, str]:
    source = f"{uuid.uuid4()}-attachment.txt"
    (results / source).write_text(text, encoding="utf-8")
    return {"name": name, "source": source, "type": "text/plain"}


def _identity(row: dict[str, Any]) -> tuple[str, str, str, str, str]:
    return (
        str(row.get("target")),
        str(row.get("profile")),
        str(row.get("machine")),
        str(row.get("clause")),
        str(row.get("seed")),
    )


def _history_id(row: dict[str, Any]) -> str:
    """Stable across campaigns: the same clause under the same task coordinates has one history, so the
    report's history and retries views line campaigns up; the campaign and the task budget are left out."""
    target, profile, machine, clause, seed = _identity(row)
    return f"{CAMPAIGN_SUITE}:{target}|{profile}|{machine}|{clause}|seed{seed}"


def _span_ms(row: dict[str, Any]) -> tuple[int, int]:
    """(start, stop) of the row's task in ms: the rows of a task share its span."""
    finished = float(row.get("finished_at") or 0.0)
    seconds = float(row.get("task_seconds") or 0.0)
    return int((finished - seconds) * 1000), int(finished * 1000)


def _verdict(row: dict[str, Any]) -> Verdict | None:
    """The row's verdict; None for a word this version does not know (a row of another version)."""
    try:
        return Verdict.parse(str(row.get("verdict")))
    except ValueError:
        return None


def _common_labels(row: dict[str, Any], campaign_id: str) -> list[dict[str, str]]:
    """The labels of every row's result; the verdict label and tag are mark_verdict's."""
    target, profile, machine, _, _ = _identity(row)
    return [
        {"name": "parentSuite", "value": target},
        {"name": "suite", "value": profile},
        {"name": "subSuite", "value": machine},
        {"name": "target", "value": target},
        {"name": "profile", "value": profile},
        {"name": "campaign", "value": campaign_id},
    ]


def _task_line(row: dict[str, Any]) -> str:
    target, profile, machine, _, seed = _identity(row)
    seconds = float(row.get("task_seconds") or 0.0)
    return (
        f"*Task* `{row.get('task_id')}`: target `{target}`, profile `{profile}`, suite `{machine}`, seed {seed} "
        f"(pytest {row.get('status')}, {seconds:.1f} s)."
    )


def _clause_description(row: dict[str, Any], clause: Clause | None) -> str:
    """The page a reader sees first (Markdown): the verdict and what it means, what the clause says and
    where it comes from, the task, the examples run, and for a failure when and how to replay it."""
    clause_id, verdict = str(row.get("clause")), _verdict(row)
    word = str(row.get("verdict"))
    lines = [f"**{word}**: {MEANING[verdict]}." if verdict is not None else f"**{word}**.", ""]
    if clause is None:
        lines += [f"*Clause*: `{clause_id}` is not in this version's catalogue (renamed or removed since the run)."]
    else:
        lines += [
            f"*Clause*: {clause.summary}",
            "",
            f"*Rules*: {', '.join(clause.rules)} ({clause.kip}), level {clause.level.value}.",
        ]
    lines += [
        "",
        _task_line(row),
        "",
        f"*Examples*: {int(row.get('examples') or 0)} Hypothesis example(s) in {int(row.get('tests') or 0)} "
        f"test(s) naming this clause; {int(row.get('task_examples') or 0)} in the whole task.",
    ]
    counterexample = str(row.get("counterexample") or "")
    if verdict in DEPARTS:
        first_failure = row.get("first_failure_s")
        if first_failure is not None:
            lines += ["", f"*First failure* after {float(first_failure):.1f} s of the task."]
        if counterexample:
            # A quote, not a code block: the line wraps instead of scrolling sideways (as reports.clauses).
            lines += ["", "*Observed*:", "", "> " + _first_line(counterexample, clause_id)]
        if row.get("replay"):
            lines += ["", f"*Replay*: `{row['replay']}`"]
        if counterexample or row.get("replay"):
            lines += ["", "*Counterexample* and *replay*: the attachments below."]
    return "\n".join(lines)


def clause_row_result(row: dict[str, Any], results: Path, campaign_id: str) -> dict[str, Any]:
    """The Allure result of one campaign row of one clause; attachments are written into `results`."""
    clause_id, verdict = str(row.get("clause")), _verdict(row)
    word = str(row.get("verdict"))
    target, profile, machine, _, seed = _identity(row)
    try:
        clause: Clause | None = get_clause(clause_id)
    except KeyError:  # a row of an older catalogue: shown, never a crash of the report
        clause = None
    start, stop = _span_ms(row)
    counterexample = str(row.get("counterexample") or "")
    replay = str(row.get("replay") or "")
    attachments = []
    if verdict in DEPARTS:
        if counterexample:
            attachments.append(_attach(results, "counterexample", counterexample))
        if replay:
            attachments.append(_attach(results, "replay", replay + "\n"))
    labels = [*_common_labels(row, campaign_id), {"name": "story", "value": clause_id}]
    links = []
    if clause is not None:
        labels += [
            {"name": "epic", "value": clause.kip},
            {"name": "feature", "value": clause.area.value},
            {"name": "severity", "value": ALLURE_SEVERITY[clause.level]},
        ]
        links.append({"type": "link", "name": clause.kip, "url": kip_url(clause.kip)})
    history = _history_id(row)
    result: dict[str, Any] = {
        "uuid": str(uuid.uuid4()),
        "historyId": history,
        "testCaseId": history,
        "fullName": f"{CAMPAIGN_SUITE}.{target}.{profile}.{machine}.{clause_id}.seed{seed}",
        "name": f"{word}  {clause_id}  [{target}, {profile}, {machine}, seed {seed}]",
        "status": ALLURE_STATUS[verdict] if verdict is not None else "unknown",
        "description": _clause_description(row, clause),
        "labels": labels,
        "links": links,
        "parameters": [
            {"name": "seed", "value": seed},
            {"name": "examples", "value": str(int(row.get("examples") or 0))},
            {"name": "tests", "value": str(int(row.get("tests") or 0))},
            *_version_parameter(row),
        ],
        "attachments": attachments,
        "start": start,
        "stop": stop,
    }
    if verdict is not Verdict.PASS:  # a passed result shows its message as an error block: the description says it
        message = verdict_line(verdict, clause_id) if verdict is not None else word
        first = _first_line(counterexample, clause_id)
        result["statusDetails"] = {"message": f"{message}\n{first}" if first else message}
    if verdict is not None:
        mark_verdict(result, verdict, clause_id if clause is not None and verdict in KNOWN_ISSUE_VERDICTS else None)
    if clause is None:  # an unknown clause has no level and no meaning here: "unknown" rather than a guess
        result["status"] = "unknown"
    return result


def _version_parameter(row: dict[str, Any]) -> list[dict[str, str]]:
    """The implementation's version as the row says it; none for a row of a campaign from before rows carried it."""
    version = row.get("implementation_version")
    return [{"name": "implementation version", "value": str(version)}] if version else []


def task_row_result(row: dict[str, Any], results: Path, campaign_id: str) -> dict[str, Any]:
    """The Allure result of a task that timed out or crashed before any verdict ("*" row): broken, with the
    command and the output tail attached."""
    verdict, word = _verdict(row), str(row.get("verdict"))
    target, profile, machine, _, seed = _identity(row)
    start, stop = _span_ms(row)
    output = str(row.get("counterexample") or "")
    replay = str(row.get("replay") or "")
    attachments = []
    if output:
        attachments.append(_attach(results, "command and output tail", output))
    if replay:
        attachments.append(_attach(results, "replay", replay + "\n"))
    meaning = MEANING[verdict] if verdict is not None else f"the task ended {str(row.get('status'))!r}"
    # The counterexample of a "*" row is the command, then the output tail: its last line says why.
    tail = [line.strip() for line in output.splitlines()[1:] if line.strip()]
    last = tail[-1][:_LINE_MAX] if tail else ""
    history = _history_id(row)
    result = {
        "uuid": str(uuid.uuid4()),
        "historyId": history,
        "testCaseId": history,
        "fullName": f"{CAMPAIGN_SUITE}.{target}.{profile}.{machine}.task.seed{seed}",
        "name": f"{word}  task {row.get('task_id')} [{target}, {profile}, {machine}, seed {seed}]",
        "status": "broken",
        "description": "\n".join(
            [
                f"**{word}**: {meaning}; no clause of this task has a verdict.",
                "",
                _task_line(row),
                "",
                "*Command and output tail*, *replay*: the attachments below.",
            ]
        ),
        "statusDetails": {"message": f"{word}: {meaning}" + (f"\n{last}" if last else "")},
        "labels": _common_labels(row, campaign_id),
        "links": [],
        "parameters": [{"name": "seed", "value": seed}, *_version_parameter(row)],
        "attachments": attachments,
        "start": start,
        "stop": stop,
    }
    return mark_verdict(result, verdict) if verdict is not None else result


def _joined(values: Iterable[Any]) -> str:
    """Distinct values, comma-separated; numbers (seeds) in numeric order."""
    distinct = {str(v) for v in values if v is not None}
    return ",".join(sorted(distinct, key=lambda v: (not v.isdigit(), int(v) if v.isdigit() else 0, v)))


def _verdict_counts(rows: Iterable[dict[str, Any]]) -> str:
    """'3 FAIL, 1 KNOWN, 12 PASS' over the clause rows, in triage order (as the run's environment block)."""
    counts: dict[str, int] = {}
    for row in rows:
        if row.get("clause") != WHOLE_TASK:
            counts[str(row.get("verdict"))] = counts.get(str(row.get("verdict")), 0) + 1
    known = [v.value for v in TRIAGE_ORDER]
    order = [*known, *sorted(set(counts) - set(known))]
    return ", ".join(f"{counts[v]} {v}" for v in order if v in counts) or "none"


def write_campaign_results(rows: Path, results: Path, *, campaign_id: str, log: TextIO | None = None) -> int:
    """One Allure result per row of the campaign's Parquet files under `rows` (a "*" row of a timed-out or
    crashed task included), the environment block and the categories, into `results`; returns how many
    results were written. A file that cannot be read is skipped with one line on `log` (stderr by default);
    ReportError when there is no row file or none can be read."""
    log = sys.stderr if log is None else log
    found = read_rows(rows, log)
    results.mkdir(parents=True, exist_ok=True)
    written = 0
    for row in found:
        missing = [name for name in _REQUIRED if not row.get(name)]
        if missing:  # not a row of ours: nothing to name it by
            log.write(f"skipped a row without {', '.join(missing)} (a row has the fields {', '.join(ROW_FIELDS)})\n")
            continue
        if row["clause"] == WHOLE_TASK:
            result = task_row_result(row, results, campaign_id)
        else:
            result = clause_row_result(row, results, campaign_id)
        (results / f"{result['uuid']}-result.json").write_text(json.dumps(result), encoding="utf-8")
        written += 1
    tasks = {str(r.get("task_id")): r for r in found}
    write_environment(
        results,
        {
            "campaign": campaign_id,
            "targets": _joined(r.get("target") for r in found),
            "profiles": _joined(r.get("profile") for r in found),
            "suites": _joined(r.get("machine") for r in found),
            "seeds": _joined(r.get("seed") for r in found),
            "tasks": str(len(tasks)),
            "clause_verdicts": _verdict_counts(found),
            "tasks_timed_out_or_crashed": str(sum(1 for r in tasks.values() if r.get("status") != TaskStatus.OK)),
        },
    )
    write_categories(results)
    return written
