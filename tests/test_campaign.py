"""The Spark campaign engine (issue 5): the task table, one task's rows, a task past its budget, and a
small campaign on Spark local[2] whose rows, matrix and resume are checked from the files it writes.

The Spark test needs the `campaign` extra (pyspark, pyarrow, matplotlib) and Java: `tox -e campaign`."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pytest

from conformance.campaign.tasks import CampaignError, CampaignTask, task_table
from conformance.campaign.worker import run_task

REPO = Path(__file__).resolve().parents[1]
SUITES = REPO / "suites"


def test_the_task_table_is_every_combination_with_stable_ids() -> None:
    tasks = task_table(["model", "mutant:lookup-last-match"], ["list_offsets", "all"], ["kafka-4.0", "kafka-3.9"], 2,
                       30, suites=SUITES)
    assert len(tasks) == 2 * 2 * 2 * 2
    assert len({t.task_id for t in tasks}) == len(tasks)
    again = task_table(["model", "mutant:lookup-last-match"], ["list_offsets", "all"], ["kafka-4.0", "kafka-3.9"], 2,
                       30, suites=SUITES)
    assert [t.task_id for t in tasks] == [t.task_id for t in again]  # what --resume keys on


def test_a_kafka_line_runs_under_its_own_profile_only() -> None:
    """A Kafka line behaves as one profile (registry.fixed_profile): whatever profiles a campaign names, its tasks
    run under that one, once, and the matrix gets one column for it."""
    tasks = task_table(["kafka:4.0", "kafka:3.9", "model"], ["list_offsets"], ["kafka-4.0", "kafka-3.9"], 1, 60.0,
                       suites=SUITES)  # fmt: skip
    assert [(t.target, t.profile) for t in tasks] == [
        ("kafka:4.0", "kafka-4.0"), ("kafka:3.9", "kafka-3.9"), ("model", "kafka-4.0"), ("model", "kafka-3.9")
    ]


def test_another_version_of_a_library_is_a_campaign_target_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """`client:kafka-python==3.0.11` stands for itself beside the pinned `client:kafka-python` (and beside the
    `clients` group that names the pinned one): its own tasks, so its own column of the matrix."""
    from conformance.commands.campaign import expand_targets
    from conformance.targets.kinds import client_target

    built: list[tuple[str, str | None]] = []
    # Planning checks that the driver of that version can be built; this test does not build one.
    monkeypatch.setattr(client_target, "driver_command",
                        lambda library, *, version=None, path=None: built.append((library, version)) or ["driver"])
    targets = expand_targets(["client:kafka-python", "client:kafka-python==3.0.11", "clients"])
    assert targets[:2] == ["client:kafka-python", "client:kafka-python==3.0.11"]
    assert targets.count("client:kafka-python") == 1
    tasks = task_table(targets[:2], ["client_lookups"], ["kafka-4.0"], 1, 60.0, suites=SUITES)
    assert [t.target for t in tasks] == targets[:2] and len({t.task_id for t in tasks}) == 2
    assert ("kafka-python", "3.0.11") in built


def test_a_tasks_rows_carry_the_version_its_implementation_said() -> None:
    from conformance.campaign.rows import ROW_FIELDS
    from conformance.campaign.worker import _rows
    from conformance.judging.results import RunResults, TestResult
    from conformance.judging.verdicts import TaskStatus, Verdict

    task = CampaignTask("client:kafka-python==3.0.11", "client_lookups", "kafka-4.0", 1, 60.0)
    test = TestResult("suites/test_client_lookups.py::test_x", "passed", ("LO.first-ge-target",),
                      {"LO.first-ge-target": Verdict.PASS}, examples=3)  # fmt: skip
    results = RunResults(target=task.target, implementation_version="3.0.11", clauses=dict(test.verdicts),
                         tests=(test,))  # fmt: skip
    (row,) = _rows(task, "c0ffee01", results, TaskStatus.OK, 2.0, 0.0)
    assert set(row) == set(ROW_FIELDS) and row["implementation_version"] == "3.0.11"
    older = RunResults(target=task.target, clauses=dict(test.verdicts), tests=(test,))  # a verdicts file of before
    assert _rows(task, "c0ffee01", older, TaskStatus.OK, 2.0, 0.0)[0]["implementation_version"] is None


@pytest.mark.e2e
def test_rows_of_an_older_campaign_without_the_version_aggregate_beside_new_ones(tmp_path: Path) -> None:
    """Parquet files written before rows carried implementation_version (a campaign resumed with this version)
    read beside new ones: Spark merges the schemas, the old rows read null, their column has no version."""
    pytest.importorskip("pyspark", reason="the campaign extra (pyspark) is not installed: tox -e campaign")
    pq = pytest.importorskip("pyarrow.parquet")
    from conformance.campaign.aggregate import aggregate, implementation_matrix
    from conformance.campaign.engine import rows_dir, spark_session, write_rows
    from conformance.campaign.rows import ROW_FIELDS
    from reports.matrix import column_label

    def row(task: CampaignTask, version: str | None) -> dict[str, object]:
        return {"campaign_id": "c", "task_id": task.task_id, "target": task.target, "machine": task.machine,
                "profile": task.profile, "seed": 1, "clause": "LO.first-ge-target", "verdict": "PASS", "status": "ok",
                "tests": 1, "examples": 5, "task_examples": 5, "counterexample": "", "replay": "",
                "first_failure_s": None, "task_seconds": 1.0, "finished_at": 1.0, "implementation_version": version}

    old, new = (CampaignTask(t, "list_offsets", "kafka-4.0", 1, 60.0) for t in ("tansu", "model"))
    write_rows(tmp_path, old, [row(old, None)])
    path = rows_dir(tmp_path) / f"{old.task_id}.parquet"
    # An older file: the same rows without the field (the first file Spark reads, as names sort).
    pq.write_table(pq.read_table(path).drop(["implementation_version"]), rows_dir(tmp_path) / "a-older.parquet")
    path.unlink()
    write_rows(tmp_path, new, [row(new, "0.1.0")])
    assert "implementation_version" in ROW_FIELDS
    spark = spark_session("local[1]", app="kafka-conformance test")
    try:
        matrix = aggregate(spark, rows_dir(tmp_path))
    finally:
        spark.stop()
    assert matrix.columns == [("model", "kafka-4.0"), ("tansu", "kafka-4.0")]
    assert matrix.versions == {("model", "kafka-4.0"): "0.1.0"}
    shown = implementation_matrix(matrix)
    assert [column_label(shown, c) for c in shown.columns] == ["model 0.1.0 (kafka-4.0)", "tansu (kafka-4.0)"]


@pytest.mark.e2e
def test_a_clause_a_timed_out_task_did_not_reach_aggregates_as_timeout(tmp_path: Path) -> None:
    """A task killed at its budget part-way leaves rows for the clauses it decided only: Spark's matrix gives the
    clauses its suite checks (as another target's rows of that suite say) TIMEOUT in its column, not a gap."""
    pytest.importorskip("pyspark", reason="the campaign extra (pyspark) is not installed: tox -e campaign")
    from conformance.campaign.aggregate import aggregate
    from conformance.campaign.engine import rows_dir, spark_session, write_rows

    def row(task: CampaignTask, clause: str, status: str) -> dict[str, object]:
        return {"campaign_id": "c", "task_id": task.task_id, "target": task.target, "machine": task.machine,
                "profile": task.profile, "seed": 1, "clause": clause, "verdict": "PASS", "status": status,
                "tests": 1, "examples": 5, "task_examples": 5, "counterexample": "", "replay": "",
                "first_failure_s": None, "task_seconds": 90.0, "finished_at": 1.0, "implementation_version": None}

    finished, cut = (CampaignTask(t, "list_offsets", "kafka-4.0", 1, 90.0) for t in ("model", "tansu"))
    clauses = ("LO.first-ge-target", "LO.earliest-is-log-start")
    write_rows(tmp_path, finished, [row(finished, c, "ok") for c in clauses])
    write_rows(tmp_path, cut, [row(cut, clauses[0], "timeout")])  # killed before the second clause
    spark = spark_session("local[1]", app="kafka-conformance test")
    try:
        matrix = aggregate(spark, rows_dir(tmp_path))
    finally:
        spark.stop()
    tansu = ("tansu", "kafka-4.0")
    assert matrix.cells[(clauses[0], tansu)].verdict == "PASS"  # decided before the budget ran out
    reached = matrix.cells[(clauses[1], tansu)]
    assert reached.verdict == "TIMEOUT" and reached.message.startswith(f"task {cut.task_id} (list_offsets, seed 1)")


@pytest.mark.parametrize(
    ("targets", "machines", "profiles", "seeds", "budget", "message"),
    [
        (["nope"], ["all"], ["kafka-4.0"], 1, 10, "unknown target 'nope'"),
        (["model"], ["nothing"], ["kafka-4.0"], 1, 10, "unknown suite 'nothing'"),
        (["model"], ["all"], ["kafka-9"], 1, 10, "unknown profile 'kafka-9'"),
        (["model"], ["all"], ["kafka-4.0"], 0, 10, "at least one seed"),
        (["model"], ["all"], ["kafka-4.0"], 1, 0, "positive number of seconds"),
        (["broker"], ["all"], ["kafka-4.0"], 1, 10, "starts its own targets"),
    ],
)
def test_bad_campaigns_are_one_line_errors(
    targets: list[str], machines: list[str], profiles: list[str], seeds: int, budget: float, message: str
) -> None:
    with pytest.raises(CampaignError, match=message):
        task_table(targets, machines, profiles, seeds, budget, suites=SUITES)


@pytest.mark.e2e
def test_one_task_gives_a_row_per_clause_with_the_counterexample_of_a_failure() -> None:
    # The budget is not what this test is about: a loaded two-core CI took 127 s for this task (timeout at 120).
    task = CampaignTask("mutant:lookup-last-match", "list_offsets", "kafka-4.0", 3, 600)
    rows = run_task(task, "test", str(SUITES), {})
    by_clause = {r["clause"]: r for r in rows}
    assert {r["status"] for r in rows} == {"ok"}
    failed = by_clause["LO.first-ge-target"]
    assert failed["verdict"] == "FAIL"
    assert "LO.first-ge-target" in failed["counterexample"] and "--hypothesis-seed" in failed["replay"]
    assert failed["first_failure_s"] is not None and failed["first_failure_s"] <= failed["task_seconds"]
    assert by_clause["LO.earliest-is-log-start"]["verdict"] == "PASS"
    assert by_clause["LO.earliest-is-log-start"]["examples"] > 0
    assert 0 < failed["examples"] <= failed["task_examples"]


@pytest.mark.e2e
def test_a_task_past_its_budget_is_a_timeout_row_not_a_lost_campaign() -> None:
    task = CampaignTask("model", "all", "kafka-4.0", 1, 1.0)
    rows = run_task(task, "test", str(SUITES), {})
    # Stopped at its budget: the verdicts decided before then are kept, every row says the task timed out,
    # and a task that decided nothing is one row for the whole task.
    assert rows and {r["status"] for r in rows} == {"timeout"}
    assert all(r["task_seconds"] < 30 for r in rows)
    if len(rows) == 1 and rows[0]["clause"] == "*":
        assert rows[0]["verdict"] == "TIMEOUT"


@pytest.mark.e2e
def test_a_small_campaign_on_spark_writes_rows_and_the_matrix_and_resumes(tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason="the campaign extra (pyspark) is not installed: tox -e campaign")
    pytest.importorskip("pyarrow")
    pytest.importorskip("matplotlib")
    import subprocess

    out = tmp_path / "campaign"
    cmd = [sys.executable, "-m", "conformance.cli", "campaign", "--targets", "model,mutant:lookup-last-match",
           "--machines", "list_offsets", "--seeds", "1", "--budget", "120s", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    # The last line says why the exit code is what it is (conformance.campaign.aggregate.campaign_outcome).
    last = done.stdout.strip().splitlines()[-1]
    assert last == "no new failure: 0 FAIL, 0 UNEXPECTED-PASS; every mutant killed (1 graded): exit 0", done.stdout
    assert len(list((out / "rows").glob("*.parquet"))) == 2
    matrix = (out / "matrix.md").read_text()
    # The model is the matrix's one column; the mutant is a row of the kill table, killed by the clause it declares.
    assert re.search(r"\| `LO.first-ge-target` \| PASS \(1 seed, [1-9]\d* examples\) \|\n", matrix), matrix
    assert "mutant:" not in matrix.split("Per column")[0]
    kills = (out / "mutants.md").read_text()
    assert re.search(r"\| `lookup-last-match` \| kafka-4.0 \| LO.first-ge-target \| KILLED by LO.first-ge-target "
                     r"\(FAIL, \d+\.\d s\) \|", kills), kills
    assert (out / "matrix.png").stat().st_size > 1000 and '<table class="m">' in (out / "matrix.html").read_text()
    assert "lookup-last-match" in (out / "mutants.html").read_text()
    plan = json.loads((out / "campaign.json").read_text())
    # A second run into the same directory must say --resume; with it, nothing is run again.
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO, check=False)
    assert again.returncode == 2 and "--resume" in again.stderr
    resumed = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=600, cwd=REPO, check=False)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resuming: 2 of 2 task(s) already finished" in resumed.stdout
    assert json.loads((out / "campaign.json").read_text())["campaign_id"] == plan["campaign_id"]


@pytest.mark.e2e
def test_a_campaign_stopped_midway_keeps_its_rows_and_resume_completes_it(tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason="the campaign extra (pyspark) is not installed: tox -e campaign")
    import signal
    import subprocess
    import time

    out = tmp_path / "campaign"
    cmd = [sys.executable, "-m", "conformance.cli", "campaign", "--targets", "model,mutant:lookup-last-match",
           "--machines", "validation,list_offsets", "--seeds", "1", "--budget", "120s", "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 240
    while len(list((out / "rows").glob("*.parquet"))) < 1 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)  # a CI job cancelled: the same as Ctrl-C
    output, _ = proc.communicate(timeout=120)
    kept = {p.name for p in (out / "rows").glob("*.parquet")}
    assert kept, output
    if proc.returncode != 0:  # stopped before the end (it may also have finished in the meantime)
        assert proc.returncode == 130 and "finished rows are kept" in output, output
        assert "run again with --resume" in output
    resumed = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=600, cwd=REPO, check=False)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"resuming: {len(kept)} of 4 task(s) already finished" in resumed.stdout
    assert kept <= {p.name for p in (out / "rows").glob("*.parquet")}
    assert len(list((out / "rows").glob("*.parquet"))) == 4


def test_mutants_stand_for_every_mutant_each_under_a_profile_where_it_exists() -> None:
    from conformance.commands.campaign import expand_targets
    from conformance.faults import MUTANTS

    targets = expand_targets(["model", "mutants", "mutant:lookup-last-match"])
    assert targets == ["model", *(f"mutant:{m}" for m in sorted(MUTANTS))]
    tasks = task_table(targets, ["list_offsets"], ["kafka-4.0"], 1, 60.0, suites=SUITES)
    assert len(tasks) == len(targets)
    for task in tasks:
        mutant = MUTANTS.get(task.target.removeprefix("mutant:"))
        if mutant is None:
            assert task.profile == "kafka-4.0", task
        else:
            # Under the chosen profile where the fault can be seeded and all its declared clauses apply, else
            # under the profile derived from those clauses.
            assert task.profile == ("kafka-4.0" if mutant.runs_under("kafka-4.0") else mutant.profile), task
            assert mutant.runs_under(task.profile), task


def test_kafka_history_is_every_lines_last_release_then_the_releases_where_a_bug_shipped_and_was_fixed() -> None:
    """Each under its line's profile with its line's file of Kafka's own bugs (KAFKA-7568 shipped in 2.1.0, fixed
    in 2.2.0; KAFKA-16310 shipped in 3.0.0, fixed in 3.8.0): one task each with `--machines all`."""
    from conformance.commands.campaign import _expectations, expand_targets
    from conformance.targets.brokers.kafka import KAFKA_LINES

    targets = expand_targets(["kafka-history"])
    lines = [f"kafka:{line}" for line in reversed(KAFKA_LINES)]
    assert targets == [*lines, "kafka==2.1.0", "kafka==2.2.0", "kafka==3.0.0", "kafka==3.8.0"]
    tasks = task_table(targets, ["all"], ["kafka-4.0"], 1, 900.0, suites=SUITES)
    assert [t.profile for t in tasks[:2]] == ["kafka-0.10", "kafka-0.11"]
    assert tasks[len(lines) - 1].profile == "kafka-4.2"
    assert [t.profile for t in tasks[len(lines):]] == ["kafka-2.1", "kafka-2.2", "kafka-3.0", "kafka-3.8"]
    shipped = _expectations(argparse.Namespace(suites=None, expectations=[]), targets)
    assert {t: Path(f).name for t, f in shipped.items()} == {
        "kafka:0.10.2": "kafka-0.10.toml", "kafka:0.11.0": "kafka-0.11.0.toml", "kafka:2.1": "kafka-2.1.toml",
        "kafka==2.1.0": "kafka-2.1.0.toml",
        "kafka==3.0.0": "kafka-3.0-3.7.toml",
        **{f"kafka:3.{n}": "kafka-3.0-3.7.toml" for n in range(8)},
    }  # fmt: skip


def test_groups_of_targets_stand_for_every_codec_every_client_and_every_served_mutant() -> None:
    from conformance.commands.campaign import expand_targets
    from conformance.faults import MUTANTS
    from conformance.targets.kinds.implementation import Kind
    from conformance.targets.libraries import LIBRARIES

    # The in-process libraries, then those of other languages through their drivers (a user's own driver needs its
    # path, so no group stands for it).
    driven = [d for d in LIBRARIES.values() if d.build is not None]
    CODECS = [d.name for d in LIBRARIES.values() if d.adapter("codec") is not None]
    CLIENTS = [d.name for d in LIBRARIES.values() if d.adapter("client") is not None]
    codecs = [*CODECS, *(d.name for d in driven if "codec" in d.roles and d.name not in CODECS)]
    clients = [*CLIENTS, *(d.name for d in driven if "client" in d.roles and d.name not in CLIENTS)]
    assert expand_targets(["codecs", "codec:model"]) == [f"codec:{c}" for c in codecs]
    assert expand_targets(["clients"]) == [f"client:{c}" for c in clients]
    served = [m for m in sorted(MUTANTS) if MUTANTS[m].kind is Kind.BROKER and not MUTANTS[m].reader_only]
    assert expand_targets(["served-mutants"]) == [f"reference:mutant:{m}" for m in served]
    assert expand_targets(["client:java@served-mutants"]) == [f"client:java@reference:mutant:{m}" for m in served]
    both = expand_targets(["clients@served-mutants"])
    assert len(both) == len(clients) * len(served)
    assert both[0] == f"client:{next(iter(CLIENTS))}@reference:mutant:{served[0]}"
    assert expand_targets(["brokers"]) == ["model", "tansu", "noida", "rdkafka-mock", "reference"]


def test_a_campaign_finds_the_shipped_expectations_of_the_table_s_implementations() -> None:
    import argparse

    from conformance.commands.campaign import _expectations

    args = argparse.Namespace(suites=str(SUITES), expectations=[])
    targets = ["model", "tansu", "codec:kafka-python", "codec:model", "client:java", "mutant:lookup-last-match",
               "client:java@reference:mutant:lookup-last-match"]  # fmt: skip
    found = _expectations(args, targets)
    assert {t: Path(f).name for t, f in found.items()} == {
        "tansu": "tansu.toml", "codec:kafka-python": "codec-kafka-python.toml", "client:java": "client-java.toml"
    }


def _suite(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"test_{name}.py"
    path.write_text("import pytest\n\n" + source, encoding="utf-8")
    return path


def test_the_kind_of_a_suite_module_is_read_from_its_marks(tmp_path: Path) -> None:
    from conformance.commands.campaign import suite_kinds
    from conformance.targets.kinds.implementation import Kind

    codec = _suite(tmp_path, "codec_x", 'pytestmark = pytest.mark.kind("codec")\n\ndef test_a(): pass\n')
    mixed = _suite(tmp_path, "mixed", '@pytest.mark.kind("client")\ndef test_a(): pass\n\ndef test_b(): pass\n')
    client = _suite(tmp_path, "client_x", '@pytest.mark.clause("X")\n@pytest.mark.kind("client")\ndef test_a(): pass\n')
    machine = _suite(tmp_path, "stateful", "class Machine: pass\n\nTestMachine = Machine\n")
    helpers = _suite(tmp_path, "none", "def helper(): pass\n")
    assert suite_kinds(codec) == {Kind.CODEC}
    assert suite_kinds(mixed) == {Kind.CLIENT, Kind.BROKER}
    assert suite_kinds(client) == {Kind.CLIENT}
    assert suite_kinds(machine) == {Kind.BROKER}
    assert suite_kinds(helpers) == set()
    assert suite_kinds(SUITES / "test_list_offsets.py") == {Kind.BROKER}


def test_a_campaign_plans_no_task_whose_suite_has_no_test_of_its_targets_kind(tmp_path: Path) -> None:
    from conformance.commands.campaign import plannable

    _suite(tmp_path, "codec_x", 'pytestmark = pytest.mark.kind("codec")\n\ndef test_a(): pass\n')
    _suite(tmp_path, "list_offsets", "def test_a(): pass\n")
    machines = ("codec_x", "list_offsets", "all")
    tasks = [CampaignTask(t, m, "kafka-4.0", 1, 60) for t in ("model", "codec:model") for m in machines]
    kept, left_out = plannable(tasks, tmp_path)
    assert [(t.target, t.machine) for t in kept] == [
        ("model", "list_offsets"), ("model", "all"), ("codec:model", "codec_x"), ("codec:model", "all")
    ]  # fmt: skip
    assert left_out == [("model", "codec_x"), ("codec:model", "list_offsets")]
