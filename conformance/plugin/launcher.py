"""The pytest command line of a suites run: one place builds it for `kafka-conformance run`, `kafka-conformance
mutants` and the campaign worker.

The suites are the `suites` package as installed (they ship in the wheel), so every command works from any
directory; `--suites DIR` overrides them. pytest runs with `--rootdir` set to the suites' parent, so node ids
read `suites/test_x.py::test_y` wherever the command runs: expectations files pin tests by those ids, and a
replay command names them. The conformance plugin is loaded with `-p` (an installed copy has no root
conftest.py to load it).

`run_streaming` runs a command line with its output passed through as it comes, except pytest's banner for
`pytest.exit(...)` (`!!! _pytest.outcomes.Exit: ... !!!`), whose message it hands back so that the command
can print it as one line of its own. With `forward_stops` it also owns Ctrl-C and SIGTERM while the run goes on:
the child runs in its own process group, so the terminal's Ctrl-C reaches this process only, which passes each
signal on to the child once; pytest then stops at the test it is in, tears its fixtures down (a managed broker is
stopped) and writes what finished, and `Finished.stopped_by` says which signal stopped it. pytest's own
KeyboardInterrupt banner is left out: the command says in one line that the run was stopped.
`collect` lists the suites' tests with the clauses each declares.
"""

from __future__ import annotations

import codecs
import contextlib
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from conformance.plugin.hypothesis_profiles import PROFILE_NAMES
from conformance.plugin.run_options import DOCUMENT_FLAG, Option, Surface, setting, settings_document
from conformance.progress import for_child
from conformance.targets.registry import (
    PROFILE_DEFAULT,
    TargetError,
    expectations_file,
    name_syntax,
    parse_target,
    targets_help,
)
from conformance.targets.target import MODEL, Target
from conformance.wire.client_config import CLIENT_CONFIG_ENV, secret_environment
from conformance.wire.security import PLAINTEXT, SecuritySettings
from models.profiles import PROFILES

PLUGIN = "conformance.plugin"


class LauncherError(ValueError):
    """Suites that cannot be found or listed; the message names the fix."""


def suites_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The suites directory: `override` (`--suites DIR`) when given, else the installed `suites` package."""
    if override is not None:
        path = Path(override)
        if not path.is_dir():
            raise LauncherError(
                f"suites directory {str(override)!r} not found: pass --suites DIR naming the suites' folder, or "
                "drop --suites to run the suites installed with the package"
            )
        return path.resolve()
    # Found, not imported: a pytest run of another `suites` directory (the plugin asks too) must import its own.
    spec = importlib.util.find_spec("suites")
    if spec is None or spec.origin is None:
        raise LauncherError("the suites are not installed: reinstall the package, or pass --suites DIR")
    return Path(spec.origin).resolve().parent


@dataclass(frozen=True)
class ExpectationsChoice:
    """The expectations file a run uses, by one rule for `kafka-conformance run`, `pytest suites` and the campaign:
    none with `--no-expectations`, else `--expectations FILE` when given, else the file the target ships (its
    registry row's, in the suites' `expectations/`; a mutant, another version or a local checkout ships none)."""

    target: str
    path: Path | None  # the file in force, None for none
    shipped: Path | None  # the target's shipped file, whether in force or not

    def describe(self) -> str:
        """One line for the run's summary: "expectations: suites/expectations/tansu.toml (shipped with tansu)"."""
        if self.path is None:
            how = f" (--no-expectations; {self.target} ships {_shown(self.shipped)})" if self.shipped else ""
            return f"expectations: none{how}"
        if self.shipped is not None and self.path.resolve() == self.shipped.resolve():
            return f"expectations: {_shown(self.path)} (shipped with {self.target})"
        return f"expectations: {_shown(self.path)} (--expectations)"


def choose_expectations(
    target: str,
    given: str | os.PathLike[str] | None,
    *,
    none: bool = False,
    suites: Path | None,
    parsed: Target | None = None,
) -> ExpectationsChoice:
    """The expectations of a run against `target` (ExpectationsChoice): `given` (--expectations), `none`
    (--no-expectations), else the shipped file in the suites directory `suites` (None: tests that are not the
    suites, which ship nothing). `parsed`: the target as the caller parsed it already (else it is parsed here)."""
    try:
        name = expectations_file(parsed if parsed is not None else parse_target(target))
    except TargetError:  # an unknown target: its own check names the choices
        name = None
    candidate = suites / "expectations" / name if name is not None and suites is not None else None
    shipped = candidate if candidate is not None and candidate.is_file() else None
    if none:  # also over $KTS_EXPECTATIONS
        return ExpectationsChoice(target, None, shipped)
    return ExpectationsChoice(target, Path(given) if given else shipped, shipped)


def _shown(path: Path) -> str:
    """`path` as a user types it: relative to the working directory when under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _targets_help() -> str:
    return (
        "the implementation under test: a broker, a record library (codec:<library>) or a client library "
        f"(client:<library>): {targets_help()}. Names also take {name_syntax()}"
    )


def _clause_ids(text: str) -> tuple[str, ...]:
    """--clauses ID,ID as the clause IDs."""
    return tuple(filter(None, (c.strip() for c in text.split(","))))


@dataclass(frozen=True)
class SuitesRun:
    """What one pytest run of the suites is asked to do, and the one declaration of every option that reaches the
    plugin: a field with an `Option` (conformance.plugin.run_options) is an option of `kafka-conformance run`
    and/or of the pytest plugin, with its environment variable and default, carried to the pytest process in the
    settings document. A field's own default (None, False) means "not set here": the pytest process reads the
    option's variable and default then."""

    # fmt: off
    target: str = setting(Option(
        "--target", _targets_help, env="KTS_TARGET", default=MODEL,
        default_help="default model, for `kafka-conformance run` and `pytest suites` alike: the reference model "
        "needs nothing installed and answers in seconds; name the implementation you test",
    ))
    profile: str = setting(Option(
        "--profile", f"the Apache Kafka behaviour the target claims: {', '.join(PROFILES)}", env="KTS_PROFILE",
        default_help=PROFILE_DEFAULT,
    ))
    hypothesis_profile: str = setting(Option(
        "--hypothesis-profile", "the Hypothesis budget", choices=PROFILE_NAMES, on=frozenset({Surface.COMMAND}),
        default_help="default: broker for a broker, codec or client target, ci for the model and mutants; "
        "`pytest suites` takes Hypothesis' own option, default ci under CI, else dev",
        carried=False,
    ))
    bootstrap_servers: str | None = setting(Option(
        "--bootstrap-servers", "HOST:PORT of your cluster for --target broker", env="KAFKA_BOOTSTRAP_SERVERS",
        default_help="else bootstrap.servers of --client-config",
    ), None)
    control_url: str | None = setting(Option(  # --target broker: the cluster's control plane
        "--control-url", "--target broker: your cluster's control plane, which turns on clock control, leader "
        "failover and retention as far as it declares them (`kafka-conformance check-control URL` checks it; "
        "docs/control-plane.md)", env="KTS_CONTROL_URL", metavar="URL",
    ), None)
    # --target broker: TLS and SASL (conformance.wire.client_config declares their options); in the settings
    # document without its secrets, which go by suites_environment
    security: SecuritySettings = PLAINTEXT
    brokers: int | None = setting(Option(  # how many brokers a managed target starts (None: its own number)
        "--brokers", "how many brokers a managed target starts", kind=int, metavar="N",
        default_help="default the target's own: 3 for reference, rdkafka-mock and kfake, 1 for kafka, which takes "
        "1 or 3: three for leader moves",
    ), None)
    wire_timeout: float | None = setting(Option(
        "--wire-timeout", "seconds any one network operation may take against a broker", env="KTS_WIRE_TIMEOUT",
        default=10.0, default_help="default 10", kind=float, metavar="SECONDS",
    ), None)
    expectations: str | None = setting(Option(
        "--expectations", "known failures of the target (TOML)", env="KTS_EXPECTATIONS", metavar="FILE",
        exclusive="expectations",
        default_help="default: the file the target ships in suites/expectations/ (tansu.toml, noida.toml, "
        "codec-kafka-python.toml, ...), if any",
    ), None)
    no_expectations: bool = setting(Option(  # not even the target's shipped file
        "--no-expectations", "no expectations file, not even the one the target ships: every departure is a FAIL",
        switch=True, default=False, exclusive="expectations",
    ), False)
    fault_hook: str | None = setting(Option(
        "--fault-hook", "--target broker: a command that moves a partition leader on your cluster, run as CMD "
        "move-leader TOPIC PARTITION BROKER_ID; needs --allow-disruptive", env="KTS_FAULT_HOOK", metavar="CMD",
    ), None)
    allow_disruptive: bool = setting(Option(
        "--allow-disruptive", "allow faults that disturb the cluster: leader moves through --fault-hook",
        env="KTS_ALLOW_DISRUPTIVE", switch=True, default=False,
    ), False)
    draft_expectations: str | None = setting(Option(
        "--draft-expectations", "append an expectations entry for every new failure to this file (reason: the "
        "violation), to check, explain and move into the target's expectations file", metavar="FILE",
    ), None)
    fail_on_stale: bool = setting(Option(  # a STALE expectations entry fails the run
        "--fail-on-stale", "exit 1 when an expectations entry is STALE (its clause and observable were checked and "
        "it covered nothing): for a file that must stay in step with its target, as the shipped files do in their "
        "tox envs (docs/expectations-stale.md)", switch=True, default=False,
    ), False)
    clauses: tuple[str, ...] = setting(Option(
        "--clauses", "only the tests of these comma-separated clause IDs", kind=_clause_ids, metavar="ID,ID",
        default=(),
    ), ())
    suites: Path | None = setting(Option(  # noqa: RUF009 (a dataclasses.field); None: the installed suites
        "--suites", "the suites directory", on=frozenset({Surface.COMMAND}), carried=False,
        default_help="default: the installed suites",
    ), None)
    # What to run, relative to the suites' parent (`suites/test_x.py::test_y`, `suites/test_x.py`) or
    # absolute paths; run in this order. Empty: the whole suites directory.
    tests: tuple[str, ...] = ()
    hypothesis_seed: int | None = None  # Hypothesis' own --hypothesis-seed
    verdicts_json: Path | None = setting(Option(  # noqa: RUF009 (a dataclasses.field)
        "--verdicts-json", "write per-test and per-clause verdicts to this file", kind=Path, metavar="FILE",
        on=frozenset({Surface.PYTEST}),
    ), None)
    alluredir: Path | None = None  # allure-pytest's own --alluredir
    log_dir: Path | None = setting(Option(  # noqa: RUF009 (a dataclasses.field)
        "--log-dir", "where managed brokers write their logs", env="KTS_LOG_DIR", kind=Path, metavar="DIR",
        default=Path("reports/out/logs"), default_help="default reports/out/logs", on=frozenset({Surface.PYTEST}),
    ), None)
    count_examples: bool = setting(Option(
        "--count-examples", "count the Hypothesis examples each test runs into --verdicts-json (campaigns; uses "
        "Hypothesis' observability callbacks, which cost a little time per example)", switch=True, default=False,
        on=frozenset({Surface.PYTEST}),
    ), False)
    maxfail: int | None = None  # pytest's own --maxfail: stop after this many failed tests (1 = pytest -x)
    extra: tuple[str, ...] = ()  # more pytest arguments, last
    # fmt: on


def pytest_command(run: SuitesRun) -> list[str]:
    """The command line (`python -m pytest ...`) of `run`: its settings as one document (`--run-settings JSON`,
    conformance.plugin.run_options), and on the command line only what other plugins own (Hypothesis' profile and
    seed, Allure's folder, pytest's --maxfail)."""
    suites = suites_dir(run.suites)
    root = suites.parent
    paths = [_under(root, test) for test in run.tests] or [str(suites)]
    cmd = [sys.executable, "-m", "pytest", *paths, "--rootdir", str(root), "-p", PLUGIN, "-p", "no:cacheprovider"]
    # schemathesis' pytest plugin (the control-plane tests use it) costs a second of start-up per run, and the
    # kill table starts a pytest run per mutant pass: the suites do not need it.
    cmd += ["-p", "no:schemathesis"]
    cmd += ["-q", DOCUMENT_FLAG, settings_document(run), "--hypothesis-profile", run.hypothesis_profile]
    if run.hypothesis_seed is not None:
        cmd.append(f"--hypothesis-seed={run.hypothesis_seed}")
    if run.alluredir is not None:
        cmd += ["--alluredir", str(run.alluredir), "--clean-alluredir"]
    if run.maxfail is not None:
        cmd += ["--maxfail", str(run.maxfail)]
    return cmd + list(run.extra)


def suites_environment(run: SuitesRun) -> dict[str, str] | None:
    """The environment of the pytest process of `run`: this one's, with the secrets of its security settings
    (never on the command line, which is printed and which other users of the machine can read), and without a
    client properties file of the environment, whose settings the command line already carries. None: this one's
    as it is."""
    if run.security == PLAINTEXT:
        return None
    env = {k: v for k, v in os.environ.items() if k != CLIENT_CONFIG_ENV}
    env.update(secret_environment(run.security))
    return env


def _under(root: Path, test: str) -> str:
    path, sep, rest = test.partition("::")
    return str(root / path) + sep + rest


# --- running ---------------------------------------------------------------------------------------------

# pytest's banner for pytest.exit(msg): "!!!!! _pytest.outcomes.Exit: msg !!!!!" (twice: at session finish and at
# unconfigure). A user should read the message, not the class that carried it.
_EXIT_BANNER = re.compile(r"^!+ (?:[\w.]+\.)?Exit: (?P<message>.*?) !+$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Finished:
    """A finished pytest run: its exit code, the messages of any pytest.exit banner it printed, and the signal
    (SIGINT, SIGTERM) that stopped it early, if one did."""

    returncode: int
    exit_messages: tuple[str, ...]
    stopped_by: signal.Signals | None = None


# pytest's report of a KeyboardInterrupt: "!!! KeyboardInterrupt !!!" (or "!!! KeyboardInterrupt: signal 15 !!!"),
# the line it was raised at ("/path/x.py:12: KeyboardInterrupt") and a hint about --full-trace; or, where the run
# stopped after the test it was in, "!!! Interrupted: the run was stopped (SIGINT) !!!".
_INTERRUPT_LINES = re.compile(
    r"^(?:!+ (?:KeyboardInterrupt\b.*|(?:[\w.]+\.)?Interrupted: the run was stopped .*) !+"
    r"|\S.*:\d+: KeyboardInterrupt(?:: .*)?"
    r"|\(to show a full traceback on KeyboardInterrupt .*\))$"
)


class _StopSignals:
    """SIGINT and SIGTERM while a child runs: the first of each kind is passed on to the child (in its own process
    group, so it gets nothing from the terminal), and the first one received is remembered."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.received: signal.Signals | None = None
        self.child: subprocess.Popen[bytes] | None = None
        self._passed: set[signal.Signals] = set()

    def handle(self, signum: int, frame: object) -> None:
        sig = signal.Signals(signum)
        if self.received is None:
            self.received = sig
        self._pass_on(sig)

    def attach(self, child: subprocess.Popen[bytes]) -> None:
        self.child = child
        if self.received is not None:  # arrived while the child was being started
            self._pass_on(self.received)

    def _pass_on(self, sig: signal.Signals) -> None:
        # Once per kind: pytest reads a second Ctrl-C as "stop the teardown too", which would leave a managed
        # broker behind and verdicts.json unwritten.
        if self.child is None or sig in self._passed or self.child.poll() is not None:
            return
        self._passed.add(sig)
        with contextlib.suppress(ProcessLookupError):
            self.child.send_signal(sig)

    @contextlib.contextmanager
    def installed(self) -> Iterator[_StopSignals]:
        if threading.current_thread() is not threading.main_thread():  # only the main thread gets signals
            yield self
            return
        previous = {sig: signal.signal(sig, self.handle) for sig in self.SIGNALS}
        try:
            yield self
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def run_streaming(
    cmd: Sequence[str], out: TextIO, *, env: dict[str, str] | None = None, forward_stops: bool = False
) -> Finished:
    """Run `cmd`, copying its stdout to `out` as it arrives (stderr is inherited), without pytest.exit's banner
    lines, whose messages come back in `Finished.exit_messages`. With `forward_stops`, SIGINT and SIGTERM stop the
    child instead of this process (see the module doc)."""
    stops = _StopSignals()
    # The child's progress lines (obtaining and starting its target) reach this stderr past pytest's capture.
    with stops.installed() if forward_stops else contextlib.nullcontext(stops), for_child(env) as (child_env, fds):
        proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, env=child_env, pass_fds=fds,
                                process_group=0 if forward_stops else None)  # fmt: skip
        stops.attach(proc)
        messages = _copy_output(proc, out, stops)
    return Finished(proc.returncode, messages, stops.received)


def _copy_output(proc: subprocess.Popen[bytes], out: TextIO, stops: _StopSignals) -> tuple[str, ...]:
    """Copy the child's stdout to `out` until it exits (see run_streaming); the pytest.exit messages it printed."""
    messages: list[str] = []
    assert proc.stdout is not None
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    held = ""  # the start of a line that may be a banner, until its end arrives
    mid_line = False  # the line being copied has been partly written already: it is no banner
    try:
        while chunk := os.read(proc.stdout.fileno(), 65536):
            data, held = held + decoder.decode(chunk), ""
            for piece in re.split(r"(?<=\n)", data):
                if not piece:
                    continue
                complete = piece.endswith("\n")
                plain = _ANSI.sub("", piece)
                if not mid_line and (plain.startswith("!") or stops.received is not None):
                    if not complete:
                        held = piece
                        continue
                    banner = _EXIT_BANNER.match(plain.strip())
                    if banner:
                        if banner["message"] not in messages:
                            messages.append(banner["message"])
                        continue
                    if stops.received is not None and _INTERRUPT_LINES.match(plain.strip()):
                        continue
                out.write(piece)
                mid_line = not complete
            out.flush()
        out.write(held + decoder.decode(b"", final=True))
        out.flush()
    finally:
        proc.stdout.close()
        proc.wait()
    return tuple(messages)


# --- listing the tests -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CollectedTest:
    """One suite test as pytest collected it: its node id and the clauses it declares (`@pytest.mark.clause`)."""

    nodeid: str
    clauses: tuple[str, ...]


def collect(run: SuitesRun, *, timeout_s: float = 120.0) -> list[CollectedTest]:
    """The tests `run` would run, in collection order, with their clauses (one pytest process, no test run)."""
    with tempfile.TemporaryDirectory(prefix="kts-collect-") as scratch:
        listing = Path(scratch) / "tests.json"
        cmd = pytest_command(run)
        cmd[1:3] = ["-m", "conformance.plugin.launcher", "collect", str(listing)]
        proc = subprocess.run([*cmd, "--collect-only"], capture_output=True, text=True, timeout=timeout_s, check=False)
        if proc.returncode != 0 or not listing.is_file():
            tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
            raise LauncherError(f"cannot list the suites' tests (pytest exit {proc.returncode}): {tail}")
        return [CollectedTest(t["nodeid"], tuple(t["clauses"])) for t in json.loads(listing.read_text("utf-8"))]


class _ListTests:
    """pytest plugin of `collect`: writes every collected test's node id and clauses as JSON."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def pytest_collection_finish(self, session: object) -> None:
        items = getattr(session, "items", [])
        listing = [
            {"nodeid": item.nodeid, "clauses": [str(a) for m in item.iter_markers("clause") for a in m.args]}
            for item in items
        ]
        self.path.write_text(json.dumps(listing), encoding="utf-8")


def _main(argv: list[str]) -> int:
    """`python -m conformance.plugin.launcher collect OUT.json PYTEST_ARGS...` (what `collect` runs)."""
    import pytest

    if len(argv) < 2 or argv[0] != "collect":
        print("usage: python -m conformance.plugin.launcher collect OUT.json PYTEST_ARGS...", file=sys.stderr)
        return 2
    return int(pytest.main(argv[2:], plugins=[_ListTests(Path(argv[1]))]))


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
