"""A campaign row: the result type the campaign writes as Parquet and reports read (reports/ imports it, not the
worker)."""

from __future__ import annotations

ROW_FIELDS = (
    "campaign_id",
    "task_id",
    "target",
    "machine",
    "profile",
    "seed",
    "clause",
    "verdict",
    "status",  # conformance.judging.verdicts.TaskStatus: ok (pytest ran to the end), timeout, crashed
    "tests",  # tests of this task that named the clause
    "examples",  # Hypothesis examples those tests ran
    "task_examples",  # Hypothesis examples the whole task ran
    "counterexample",  # the failure message with Hypothesis' draws (FAIL, KNOWN, ...), else ""
    "replay",  # the command that replays that failure exactly
    "first_failure_s",  # seconds from the task's start to the end of the first test failing the clause
    "task_seconds",
    "finished_at",
    # The version the implementation said it is (verdicts.json's implementation_version); null in the rows of a
    # campaign from before rows carried it, and where a task wrote no verdicts.
    "implementation_version",
)
