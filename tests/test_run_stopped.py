"""`kafka-conformance run` stopped midway (Ctrl-C in a terminal, SIGTERM from a CI runner cancelling the job) keeps
everything that finished: one line says it was stopped, no traceback, verdicts.json and the HTML report are written
and marked incomplete, the managed target is stopped, and the exit code is 128 + the signal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from _pytest._code.code import Traceback, TracebackEntry

from conformance.judging.results import read_results
from conformance.plugin.options import drop_frames_without_a_line, pytest_keyboard_interrupt, without_lines_missing
from conformance.targets.kinds.implementation import reference_version
from tests.test_broker_dies import _gone

REPO = Path(__file__).resolve().parents[1]
RUN_BOUND = 300  # seconds: the reference broker's first tests take a few seconds; a loaded machine more


def _descendants(root: int) -> set[int]:
    """Every live process below `root` (found through /proc: the pytest child, the broker it started, ...)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - found
        found |= frontier
    return found


@pytest.mark.e2e
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="follows the run's processes through /proc")
@pytest.mark.parametrize(
    ("stop", "to_group", "code"),
    [
        # Ctrl-C in a terminal reaches the whole foreground process group.
        (signal.SIGINT, True, 130),
        # A CI runner cancelling the job, or `kill PID`: the command's own process only.
        (signal.SIGTERM, False, 143),
    ],
    ids=["ctrl-c-to-the-group", "sigterm-to-the-command"],
)
def test_a_run_stopped_midway_keeps_its_report_and_leaves_no_process(
    tmp_path: Path, stop: signal.Signals, to_group: bool, code: int
) -> None:
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "conformance.cli", "run", "--target", "reference", "--out", str(out)]
    run = subprocess.Popen(
        cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    assert run.stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(run.stdout or ()), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + RUN_BOUND
        # Some tests finished (their Allure results are written as each one ends), more to come.
        while run.poll() is None and time.monotonic() < deadline:
            if len(list((out / "allure-results").glob("*-result.json"))) >= 2:
                break
            time.sleep(0.1)
        assert run.poll() is None, "".join(lines)
        running = _descendants(run.pid)
        assert running, "no pytest child found below the command"
        if to_group:
            os.killpg(run.pid, stop)
        else:
            run.send_signal(stop)
        run.wait(timeout=RUN_BOUND)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    reader.join(timeout=10)
    output = "".join(lines)
    assert run.returncode == code, output
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
    stopped = [line for line in output.splitlines() if line.startswith("the run was stopped")]
    assert len(stopped) == 1 and f"({stop.name})" in stopped[0], output
    assert "incomplete: stopped after " in output, output
    results = read_results(out / "verdicts.json")
    assert results.incomplete is not None and results.incomplete.startswith("stopped after ")
    assert results.incomplete.endswith(f"tests ({stop.name})") and results.tests
    # The pytest child and the reference broker it started are stopped, not left behind.
    deadline = time.monotonic() + 10
    while not all(_gone(pid) for pid in running) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in running if not _gone(pid)] == [], output
    environment = (out / "allure-results" / "environment.properties").read_text(encoding="utf-8")
    assert f"incomplete={results.incomplete}" in environment
    # What the implementation said it is: the reference broker is this package.
    assert f"implementation_version={reference_version()}" in environment.splitlines()
    assert results.implementation_version == reference_version()
    if "report not built" in output:  # no npm or no registry offline: the rest was checked
        pytest.skip(next(line for line in output.splitlines() if line.startswith("report not built")))
    assert (out / "allure-report" / "index.html").is_file(), output
    assert f"version {reference_version()}" in (out / "allure-report" / "index.html").read_text(encoding="utf-8")


def test_a_stop_whose_traceback_has_a_frame_without_a_line_is_shown_without_that_frame() -> None:
    # CPython 3.11 gives a frame a signal interrupted where no line runs tb_lineno None ("line -1"); pytest's
    # terminal reporter then failed with a TypeError and printed its traceback over the stopped run's lines.
    try:
        raise KeyboardInterrupt("the run was stopped (SIGINT)")
    except KeyboardInterrupt:
        excinfo = pytest.ExceptionInfo.from_current()
    real = excinfo.traceback[0]._rawentry

    class NoLine:
        tb_lineno = None
        tb_frame, tb_lasti, tb_next = real.tb_frame, real.tb_lasti, None

    excinfo.traceback = Traceback([TracebackEntry(NoLine()), *excinfo.traceback])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        excinfo.getrepr(funcargs=True)
    pytest_keyboard_interrupt(excinfo)
    assert "the run was stopped (SIGINT)" in str(excinfo.getrepr(funcargs=True))


class _Entry:
    """A traceback entry as the interpreter links them (tb_lineno None: a frame a signal met where no line runs)."""

    def __init__(self, name: str, lineno: int | None, following: _Entry | None = None) -> None:
        self.name, self.tb_lineno, self.tb_next = name, lineno, following


def _names(entry: _Entry | None) -> list[str]:
    names = []
    while entry is not None:
        names.append(entry.name)
        entry = entry.tb_next
    return names


@pytest.mark.parametrize(
    ("lines", "kept"),
    [
        ([None, 3, 4], ["b", "c"]),  # the first
        ([1, None, None, 4], ["a", "d"]),  # in the middle
        ([1, 2, None], ["a", "b"]),  # the last
        ([None, None], []),
        ([1, 2], ["a", "b"]),
    ],
)
def test_a_chain_of_entries_loses_those_without_a_line(lines: list[int | None], kept: list[str]) -> None:
    head = None
    for name, line in reversed(list(zip("abcd", lines, strict=False))):
        head = _Entry(name, line, head)
    assert _names(without_lines_missing(head)) == kept


def test_a_stopped_test_s_report_mends_every_exception_of_its_chain() -> None:
    # Where Hypothesis turns the stop into an error of its own, pytest shows the KeyboardInterrupt from its own
    # traceback, as the context of that error: each exception of the chain keeps only frames with a line.
    try:
        try:
            raise KeyboardInterrupt("the run was stopped (SIGTERM)")
        except KeyboardInterrupt as stop:
            raise RuntimeError("the engine stopped") from stop
    except RuntimeError:
        excinfo = pytest.ExceptionInfo.from_current()
    drop_frames_without_a_line(excinfo)
    cause = excinfo.value.__cause__
    assert cause is not None and cause.__traceback__ is not None
    assert "the run was stopped (SIGTERM)" in str(excinfo.getrepr(funcargs=True, chain=True))
