"""Progress of the slow steps (conformance/progress.py): a start line and a done line with the seconds on stderr,
silenced by KTS_QUIET / --quiet, and carried past a child's own capture of its stderr; and each run's own output
folder with the `latest` link (conformance/commands/usage.py)."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conformance import progress
from conformance.cli import build_parser
from conformance.commands.usage import LATEST, UsageError, run_directory

REPO = Path(__file__).resolve().parents[1]
DONE = re.compile(r"^fetched it in \d+\.\d s$")


def test_a_step_says_when_it_starts_and_how_long_it_took(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(progress.QUIET_ENV, raising=False)
    with progress.step("fetching it...", "fetched it"):
        pass
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and lines[0] == "fetching it..." and DONE.match(lines[1]) and len(lines) == 2, err


def test_a_step_that_fails_leaves_the_saying_to_its_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(progress.QUIET_ENV, raising=False)
    with pytest.raises(RuntimeError), progress.step("fetching it...", "fetched it"):
        raise RuntimeError("not served")
    assert capsys.readouterr().err.splitlines() == ["fetching it..."]


def test_quiet_silences_every_step_and_is_restored(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(progress.QUIET_ENV, raising=False)
    with progress.silenced():
        assert os.environ[progress.QUIET_ENV] == "1"  # and so in every process started meanwhile
        with progress.step("fetching it...", "fetched it"):
            pass
    assert progress.QUIET_ENV not in os.environ
    with progress.silenced(False), progress.step("fetching it...", "fetched it"):
        pass
    assert capsys.readouterr().err.splitlines()[0] == "fetching it..."
    monkeypatch.setenv(progress.QUIET_ENV, "1")
    with progress.step("fetching it...", "fetched it"):
        pass
    assert capsys.readouterr().err == ""


def test_a_child_s_progress_reaches_the_parent_s_stderr_past_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `run` starts pytest, which captures the stderr of its fixtures: the child writes to the copy it was
    handed (KTS_PROGRESS_FD), not to its own stderr (thrown away here)."""
    monkeypatch.delenv(progress.QUIET_ENV, raising=False)
    seen = tmp_path / "stderr"
    with seen.open("w") as stderr:
        monkeypatch.setattr(sys, "stderr", stderr)
        with progress.for_child() as (env, fds):
            subprocess.run(
                [sys.executable, "-c", "from conformance.progress import step\n"
                 "with step('fetching it...', 'fetched it'):\n    pass"],
                env={**env, "PYTHONPATH": str(REPO)}, pass_fds=fds, stderr=subprocess.DEVNULL, check=True, timeout=60,
            )  # fmt: skip
    lines = seen.read_text().splitlines()
    assert lines[0] == "fetching it..." and DONE.match(lines[1]), lines
    assert progress.PROGRESS_FD_ENV not in os.environ  # handed to the child only


def test_every_command_that_obtains_a_target_takes_quiet() -> None:
    parser = build_parser(complete=True)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    takes = {name for name, command in sub.choices.items() if any("--quiet" in a.option_strings
                                                                  for a in command._actions)}  # fmt: skip
    assert takes == {"run", "up", "check-driver", "compare", "campaign", "audit", "broker-differential"}


def test_each_run_gets_its_own_folder_and_latest_points_at_the_newest(tmp_path: Path) -> None:
    when = datetime(2026, 11, 28, 17, 1, 2, tzinfo=UTC)
    first = run_directory("client:kafkajs==2.2.4", tmp_path, now=when)
    second = run_directory("client:kafkajs==2.2.4", tmp_path, now=when)  # the same second: a folder of its own
    third = run_directory("kafka=/home/me/kafka", tmp_path, now=when)
    assert first.name == "client-kafkajs-2.2.4-20261128T170102Z" and second.name == f"{first.name}-2"
    assert third.name == "kafka-home-me-kafka-20261128T170102Z"
    assert all(folder.is_dir() and not any(folder.iterdir()) for folder in (first, second, third))
    latest = tmp_path / LATEST
    assert latest.is_symlink() and os.readlink(latest) == third.name and latest.resolve() == third.resolve()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, second.name, third.name, LATEST])


def test_a_run_folder_that_cannot_be_made_is_one_usage_line() -> None:
    with pytest.raises(UsageError, match=r"cannot create the output directory .*: pass --out DIR you can write"):
        run_directory("model", Path("/proc/nope/out"))
