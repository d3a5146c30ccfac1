"""Tests of `kafka-conformance clauses` (conformance/cli.py), run in-process through main()."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from models.clauses import CLAUSES, clauses_for_profile
from models.rules import UNTESTABLE

REPO = Path(__file__).resolve().parents[1]
RULES_DOC = REPO / "docs" / "rules.md"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _assert_usage_error(code: int, out: str, err: str, *needles: str) -> None:
    """Bad input: exit 2, nothing on stdout, one line on stderr naming the problem, no traceback."""
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("kafka-conformance: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_table_lists_every_clause(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "clauses")
    assert code == 0 and err == ""
    for clause in CLAUSES:
        assert clause.id in out
    assert "LO.first-ge-target" in out and "KIP-79" in out
    assert f"{len(CLAUSES)} clauses" in out
    assert max(len(line) for line in out.splitlines()) <= 120


def test_json_has_every_clause_with_all_fields(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "clauses", "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data) >= 70
    assert [d["id"] for d in data] == [c.id for c in CLAUSES]
    first, clause = data[0], CLAUSES[0]
    assert set(first) == {"id", "area", "level", "rules", "kip", "profiles", "summary", "vectors"}
    assert first["area"] == clause.area.value and first["level"] == clause.level.value
    assert first["rules"] == list(clause.rules) and first["profiles"] == list(clause.profiles)


def test_profile_filter(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "clauses", "--json", "--profile", "kafka-0.10.0")
    assert code == 0
    ids = [d["id"] for d in json.loads(out)]
    assert ids == [c.id for c in clauses_for_profile("kafka-0.10.0")]
    assert "VAL.range-symmetric" in ids
    assert "IDX.strictly-increasing" not in ids  # no time index before KIP-33


@pytest.mark.parametrize("spelling", ["list-offsets", "LIST_OFFSETS", "LO"])
def test_area_filter(capsys: pytest.CaptureFixture[str], spelling: str) -> None:
    code, out, _ = _run(capsys, "clauses", "--json", "--area", spelling, "--profile", "kafka-4.0")
    assert code == 0
    data = json.loads(out)
    assert data and all(d["area"] == "list-offsets" and "kafka-4.0" in d["profiles"] for d in data)


def test_coverage_passes_and_lists_untested(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "clauses", "--coverage")
    assert code == 0
    assert "uncovered: none" in out
    for rule_id in UNTESTABLE:
        assert rule_id in out
    assert "not modelled" in out


def test_coverage_against_the_digest(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "clauses", "--coverage", "--semantics", str(RULES_DOC))
    assert code == 0, out
    assert "uncovered: none" in out


def test_coverage_fails_on_a_newer_digest(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    digest = tmp_path / "rules.md"
    digest.write_text(
        "**VAL-4 Range rule.** ...\n**VAL-16 A rule added later.** ...\n| DIS-11 | KIP | code |\n",
        encoding="utf-8",
    )
    code, out, _ = _run(capsys, "clauses", "--semantics", str(digest))
    assert code == 1
    assert "VAL-16" in out and "DIS-11" in out
    assert "rules: 3 (from" in out


def test_missing_semantics_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.md"
    _assert_usage_error(*_run(capsys, "clauses", "--coverage", "--semantics", str(missing)), str(missing))


def test_semantics_without_rules(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.md"
    empty.write_text("# nothing here\n", encoding="utf-8")
    _assert_usage_error(*_run(capsys, "clauses", "--semantics", str(empty)), "no rule IDs")


def test_semantics_is_a_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _assert_usage_error(*_run(capsys, "clauses", "--semantics", str(tmp_path)), "--semantics PATH")


def test_unknown_profile(capsys: pytest.CaptureFixture[str]) -> None:
    _assert_usage_error(*_run(capsys, "clauses", "--profile", "kafka-9.9"), "kafka-9.9", "kafka-4.0")


def test_unknown_area(capsys: pytest.CaptureFixture[str]) -> None:
    _assert_usage_error(*_run(capsys, "clauses", "--area", "storage"), "storage", "list-offsets")


def test_coverage_with_filters_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    _assert_usage_error(*_run(capsys, "clauses", "--coverage", "--profile", "kafka-4.0"), "--profile")


def test_missing_command(capsys: pytest.CaptureFixture[str]) -> None:
    _assert_usage_error(*_run(capsys), "clauses")


@pytest.mark.parametrize("argv", [["frobnicate"], ["clauses", "--bogus"]])
def test_bad_arguments(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    _assert_usage_error(*_run(capsys, *argv), "--help")


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "clauses", "--help")
    assert code == 0
    assert "--coverage" in out


def test_python_dash_m_conformance() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "conformance", "clauses", "--json", "--area", "consumer-view"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert {d["area"] for d in json.loads(result.stdout)} == {"consumer-view"}


# --- the launcher and `kafka-conformance run` ---------------------------------------------------------------


def test_launcher_finds_the_installed_suites_and_pins_node_ids_to_their_parent(tmp_path: Path) -> None:
    from conformance.plugin.launcher import SuitesRun, pytest_command, suites_dir

    suites = suites_dir()
    assert (suites / "__init__.py").is_file() and any(suites.glob("test_*.py"))
    cmd = pytest_command(
        SuitesRun("model", "kafka-4.0", "ci", tests=("suites/test_smoke.py",), wire_timeout=2.5, maxfail=1,
                  fail_on_stale=True)
    )  # fmt: skip
    assert cmd[:3] == [sys.executable, "-m", "pytest"]
    assert cmd[3] == str(suites / "test_smoke.py")
    assert cmd[cmd.index("--rootdir") + 1] == str(suites.parent)
    assert cmd[cmd.index("-p") + 1] == "conformance.plugin"
    # The settings go as one document; what other plugins own (pytest's --maxfail) stays on the command line.
    settings = json.loads(cmd[cmd.index("--run-settings") + 1])
    assert settings["wire_timeout"] == 2.5 and settings["fail_on_stale"] is True
    assert cmd[cmd.index("--maxfail") + 1] == "1"
    assert "--wire-timeout" not in cmd and "--fail-on-stale" not in cmd
    bare = pytest_command(SuitesRun("model", "kafka-4.0", "ci"))
    assert json.loads(bare[bare.index("--run-settings") + 1]) == {"target": "model", "profile": "kafka-4.0"}
    # Run from elsewhere, pytest still names the tests suites/test_x.py::..., as expectations files pin them.
    listed = subprocess.run(
        [*pytest_command(SuitesRun("model", "kafka-4.0", "fast")), "--collect-only"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stdout + listed.stderr
    ids = [line for line in listed.stdout.splitlines() if "::" in line]
    assert ids and all(i.startswith("suites/test_") for i in ids), ids[:3]


def test_collect_lists_each_test_with_its_clauses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.plugin.launcher import SuitesRun, collect

    monkeypatch.chdir(tmp_path)
    tests = collect(SuitesRun("model", "kafka-4.0", "fast"))
    assert tests and all(t.nodeid.startswith("suites/") and t.clauses for t in tests)
    assert any("LO.first-ge-target" in t.clauses for t in tests)


def test_run_streaming_turns_a_pytest_exit_banner_into_a_message() -> None:
    import io

    from conformance.plugin.launcher import run_streaming

    script = (
        "import sys; sys.stdout.write('collected 1 item\\n..'); sys.stdout.flush();"
        "print('\\n!!!!! _pytest.outcomes.Exit: kafka-conformance: cannot start tansu: reinstall it !!!!!');"
        "sys.stdout.write('..'); sys.stdout.flush(); print('! mid-line, no banner !'); print('! Exit: x');"
        "raise SystemExit(4)"
    )
    out = io.StringIO()
    finished = run_streaming([sys.executable, "-c", script], out)
    assert finished.returncode == 4
    assert finished.exit_messages == ("kafka-conformance: cannot start tansu: reinstall it",)
    assert out.getvalue() == "collected 1 item\n..\n..! mid-line, no banner !\n! Exit: x\n"


STOPPED_CHILD = """
import os, signal, sys, time
got = []
signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
sys.stdout.write("collected 3 items\\n..")
sys.stdout.flush()
open(sys.argv[1], "w").close()
while not got:
    time.sleep(0.01)
time.sleep(0.5)  # a second Ctrl-C would arrive meanwhile
print()
print("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!! KeyboardInterrupt !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!")
print("/somewhere/hypothesis/core.py:1234: KeyboardInterrupt")
print("(to show a full traceback on KeyboardInterrupt use --full-trace)")
print(f"signals {len(got)}, own group {os.getpgid(0) == os.getpid()}")
raise SystemExit(2)
"""


def test_run_streaming_passes_a_stop_on_to_the_child_once(tmp_path: Path) -> None:
    """Ctrl-C (twice, as an impatient user does) while a suites run goes on: the child, in its own process group,
    gets it once and stops at its own pace; the parent is not interrupted and knows why the run ended; pytest's
    KeyboardInterrupt report is left out (the command says it in one line)."""
    import io
    import os
    import signal
    import threading
    import time

    from conformance.plugin.launcher import run_streaming

    ready = tmp_path / "ready"

    def press_ctrl_c_twice() -> None:
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    presser = threading.Thread(target=press_ctrl_c_twice)
    presser.start()
    out = io.StringIO()
    finished = run_streaming([sys.executable, "-c", STOPPED_CHILD, str(ready)], out, forward_stops=True)
    presser.join()
    assert finished.stopped_by is signal.SIGINT and finished.returncode == 2
    assert out.getvalue() == "collected 3 items\n..\nsignals 1, own group True\n"
    assert signal.getsignal(signal.SIGINT) is not None and signal.getsignal(signal.SIGTERM) is not None


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["--target", "model", "--expectations", "x.toml", "--no-expectations"], ["--no-expectations"]),
        (["--target", "nope"], ["unknown target 'nope'", "--target"]),
        (["--target", "broker"], ["--bootstrap-servers"]),
        (["--target", "model", "--clauses", "LO.no-such-clause"], ["LO.no-such-clause", "clauses"]),
        (["--target", "model", "--wire-timeout", "0"], ["--wire-timeout", "positive"]),
        (["--target", "model", "--suites", "/nonexistent/suites"], ["/nonexistent/suites", "--suites"]),
    ],
)
def test_run_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], needles: list[str]) -> None:
    _assert_usage_error(*_run(capsys, "run", *argv, "--no-html"), *needles)


def test_run_unreachable_broker_is_one_line_within_the_wire_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = ["run", "--target", "broker", "--bootstrap-servers", f"127.0.0.1:{port}", "--wire-timeout", "3"]
    code, out, err = _run(capsys, *argv, "--no-html")
    _assert_usage_error(code, out, err, f"127.0.0.1:{port}", "3 s", "--bootstrap-servers")
    assert "Exit" not in err


@pytest.mark.parametrize(
    ("text", "needle"),
    [("garbage [[", "not valid TOML"), ('[[expected]]\nclause = "LO.first-ge-target"\n', "entry 1")],
)
def test_run_malformed_expectations_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, needle: str
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(text, encoding="utf-8")
    argv = ["run", "--target", "model", "--expectations", str(bad), "--no-html", "--out", str(tmp_path / "out")]
    _assert_usage_error(*_run(capsys, *argv), str(bad), needle, "--expectations")


def test_run_says_a_pytest_exit_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A target that cannot start stops pytest with pytest.exit(); the user reads the message, not the class."""
    suites = tmp_path / "suites"
    suites.mkdir()
    (suites / "__init__.py").write_text("", encoding="utf-8")
    (suites / "test_exit.py").write_text(
        "import pytest\n\n\ndef test_target_cannot_start():\n"
        "    pytest.exit('kafka-conformance: tansu did not start: see its log', returncode=4)\n",
        encoding="utf-8",
    )
    argv = ["run", "--target", "model", "--suites", str(suites), "--no-html", "--out", str(tmp_path / "out")]
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert err.strip().splitlines() == ["kafka-conformance: error: tansu did not start: see its log"]
    assert "_pytest.outcomes" not in out + err and "Exit:" not in out + err


def test_one_rule_chooses_the_expectations_of_a_run() -> None:
    """`run`, `pytest suites` and the campaign: the target's shipped file unless told otherwise, named in the
    summary; mutants, versions and checkouts ship none."""
    from conformance.plugin.launcher import choose_expectations, suites_dir

    suites = suites_dir()
    shipped = suites / "expectations" / "tansu.toml"
    chosen = choose_expectations("tansu", None, suites=suites)
    assert chosen.path == shipped and chosen.describe().endswith("tansu.toml (shipped with tansu)")
    dropped = choose_expectations("tansu", None, none=True, suites=suites)
    assert dropped.path is None and dropped.describe().startswith("expectations: none (--no-expectations; tansu ships")
    mine = choose_expectations("tansu", "mine.toml", suites=suites)
    assert mine.path == Path("mine.toml") and mine.describe() == "expectations: mine.toml (--expectations)"
    for target in ("model", "reference", "mutant:lookup-last-match", "tansu==0.5.0", "client:model"):
        assert choose_expectations(target, None, suites=suites).describe() == "expectations: none", target
    client = choose_expectations("client:kafka-python", None, suites=suites)
    assert client.path == suites / "expectations" / "client-kafka-python.toml"
    # Tests that are not the suites ship nothing.
    assert choose_expectations("tansu", None, suites=None).path is None


def test_run_settings_are_declared_once_and_reach_pytest_as_one_document(tmp_path: Path) -> None:
    """`run`'s options and the plugin's come from SuitesRun's fields (conformance.plugin.run_options): the same
    flags, the same default target, and a document that gives back what the run was asked, secrets left out."""
    import argparse
    import dataclasses

    from conformance.cli import build_parser
    from conformance.plugin.launcher import SuitesRun, pytest_command
    from conformance.plugin.run_options import Surface, declared, read_document
    from conformance.wire.security import SecuritySettings

    sub = next(a for a in build_parser(complete=True)._actions if isinstance(a, argparse._SubParsersAction))
    run_flags = {flag for action in sub.choices["run"]._actions for flag in action.option_strings}
    assert {option.flag for _, option in declared(SuitesRun, Surface.COMMAND)} <= run_flags
    pytest_help = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conformance.plugin", "--help"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    ).stdout  # fmt: skip
    assert all(option.flag in pytest_help for _, option in declared(SuitesRun, Surface.PYTEST))
    assert "--run-settings" in pytest_help
    target = dict(declared(SuitesRun))["target"]
    assert target.default == "model" and "default model" in target.help_text()
    run = SuitesRun(
        "broker", "kafka-4.0", "broker", bootstrap_servers="h:1", clauses=("LO.first-ge-target",), brokers=3,
        wire_timeout=2.5, allow_disruptive=True, verdicts_json=tmp_path / "v.json", log_dir=tmp_path / "logs",
        security=SecuritySettings("SASL_PLAINTEXT", "PLAIN", "alice", "s3cret-password"),
    )  # fmt: skip
    cmd = pytest_command(run)
    assert not any("s3cret-password" in arg for arg in cmd)
    document = read_document(cmd[cmd.index("--run-settings") + 1], SuitesRun)
    back = dataclasses.replace(SuitesRun("broker", "kafka-4.0", "broker"), **document.settings)
    carried = [name for name, option in declared(SuitesRun) if option.carried]
    assert all(getattr(back, name) == getattr(run, name) for name in carried)
    assert document.security == {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
                                 "sasl_username": "alice"}  # fmt: skip
