"""The GitHub Action's step (action.yml at the repository's root): `kafka-conformance run --target broker` against
the bootstrap address given, then the verdict line and, with a baseline, the diff as Markdown in the job summary,
and the step's outputs. Run as `python -m conformance.ci.github`; it reads the action's inputs and the runner's
files from the environment, so a test runs it with a fake runner (temporary GITHUB_STEP_SUMMARY, GITHUB_OUTPUT,
GITHUB_WORKSPACE).

Inputs (set by action.yml from `with:`): INPUT_BOOTSTRAP_SERVERS (required), INPUT_PROFILE, INPUT_EXPECTATIONS,
INPUT_BASELINE, INPUT_ARGS (more arguments for `run`, split as a shell would), INPUT_HTML ("true" builds the HTML
report). The run reaches the bootstrap address only (and a --control-url given in INPUT_ARGS); without INPUT_HTML
it builds no HTML report, whose tool is installed from npm on first use.

Exit code: the run's (0, 1 on a new failure or a regression against the baseline, 2 on bad input), so the step
fails when the run does; action.yml uploads the report whatever it is.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from conformance.judging.changes import Change
from conformance.judging.headline import headline_of
from conformance.judging.results import UNKNOWN_VERSION, ResultsError, RunResults, read_results
from conformance.judging.verdicts import TRIAGE_ORDER, Verdict
from reports.run_diff import Side, diff_runs, read_run, to_markdown

REPORT_FOLDER = "kafka-conformance-report"
EXIT_USAGE = 2
_TRUE = {"true", "1", "yes", "on"}
_LISTED = (Verdict.FAIL, Verdict.UNEXPECTED_PASS)  # the clauses the summary names one by one
_MOST_LISTED = 30
# What the action decides: the target is the cluster at bootstrap-servers, the report and JUnit file its own.
_SET_BY_THE_ACTION = ("--target", "--bootstrap-servers", "--out", "--junit-xml")


@dataclass(frozen=True)
class Inputs:
    bootstrap_servers: str
    profile: str = ""
    expectations: str = ""
    baseline: str = ""
    args: str = ""
    html: bool = False

    @classmethod
    def of(cls, environ: Mapping[str, str]) -> Inputs:
        def get(name: str) -> str:
            return environ.get(f"INPUT_{name}", "").strip()

        return cls(
            bootstrap_servers=get("BOOTSTRAP_SERVERS"),
            profile=get("PROFILE"),
            expectations=get("EXPECTATIONS"),
            baseline=get("BASELINE"),
            args=get("ARGS"),
            html=get("HTML").lower() in _TRUE,
        )


@dataclass(frozen=True)
class Paths:
    workspace: Path
    report: Path

    @property
    def verdicts(self) -> Path:
        return self.report / "verdicts.json"

    @property
    def junit(self) -> Path:
        return self.report / "junit.xml"

    @property
    def diff(self) -> Path:
        return self.report / "diff.md"

    @classmethod
    def of(cls, environ: Mapping[str, str]) -> Paths:
        workspace = Path(environ.get("GITHUB_WORKSPACE") or os.getcwd())
        # The runner's temporary folder, emptied after each job: the report does not land in the user's checkout.
        base = Path(environ["RUNNER_TEMP"]) if environ.get("RUNNER_TEMP") else workspace
        return cls(workspace, base / REPORT_FOLDER)


def command(inputs: Inputs, paths: Paths) -> list[str]:
    """The `kafka-conformance run` command line: the user's cluster as the target, the report in its own folder,
    the JUnit file in it; INPUT_ARGS last, so that they can add to or override the rest."""
    argv = [sys.executable, "-m", "conformance", "run", "--target", "broker", "--bootstrap-servers",
            inputs.bootstrap_servers, "--out", str(paths.report), "--junit-xml", str(paths.junit)]  # fmt: skip
    if inputs.profile:
        argv += ["--profile", inputs.profile]
    if inputs.expectations:
        argv += ["--expectations", inputs.expectations]
    if inputs.baseline:
        argv += ["--baseline", inputs.baseline]
    if not inputs.html:
        argv.append("--no-html")
    return argv + shlex.split(inputs.args)


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)


def _set_outputs(environ: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    """Each output in GITHUB_OUTPUT's multi-line form (a delimiter no value holds), safe for any value."""
    lines = []
    for name, value in outputs.items():
        delimiter = f"EOF_{uuid.uuid4().hex}"
        lines.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    _append(environ.get("GITHUB_OUTPUT"), "".join(lines))


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary(results: RunResults, verdict: str, inputs: Inputs, diff_markdown: str) -> str:
    """The job summary: the verdict line, the run's settings, the clause counts, the clauses that fail, the diff."""
    counts = {v: sum(1 for x in results.clauses.values() if x is v) for v in TRIAGE_ORDER}
    version = _md(results.implementation_version or UNKNOWN_VERSION)
    lines = [
        "## Kafka timestamp conformance",
        "",
        f"**{_md(verdict)}**",
        "",
        "| bootstrap servers | target | version | profile | budget |",
        "|---|---|---|---|---|",
        f"| `{inputs.bootstrap_servers}` | `{results.target}` | {version} | {results.profile} "
        f"| {results.hypothesis_profile} |",
        "",
        "Clauses: " + (", ".join(f"{n} {v.value}" for v, n in counts.items() if n) or "none"),
    ]
    failing = sorted(c for c, v in results.clauses.items() if v in _LISTED)
    if failing:
        shown = ", ".join(f"`{c}` ({results.clauses[c].value})" for c in failing[:_MOST_LISTED])
        more = f" and {len(failing) - _MOST_LISTED} more" if len(failing) > _MOST_LISTED else ""
        lines += ["", f"Failing: {shown}{more}. The evidence is in the JUnit file and the report artifact."]
    if diff_markdown:
        lines += ["", diff_markdown.rstrip()]
    return "\n".join(lines) + "\n"


def _run(argv: list[str], cwd: Path, env: Mapping[str, str]) -> tuple[int, str]:
    """Run `argv` with its output in the job's log as it comes; (its exit code, the last line it wrote on stderr:
    a run refused on bad input says why in one line there)."""
    last = ""
    with subprocess.Popen(argv, cwd=cwd, env=dict(env), stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stderr is not None
        for line in proc.stderr:
            sys.stderr.write(line)
            sys.stderr.flush()
            last = line.strip() or last
        return proc.wait(), last


def check(inputs: Inputs) -> str | None:
    """What is wrong with the inputs, naming the fix; None when nothing is. The action tests the cluster at
    bootstrap-servers and nothing else: args may not choose another target."""
    if not inputs.bootstrap_servers:
        return "the bootstrap-servers input is empty: set it to HOST:PORT of the cluster to test"
    try:
        extra = shlex.split(inputs.args)
    except ValueError as exc:
        return f"the args input does not split as a shell would ({exc}): check its quotes"
    for arg in extra:
        name = arg.split("=", 1)[0]
        if len(name) <= 2 or not name.startswith("--"):
            continue
        # argparse takes an unambiguous prefix of an option (--tar for --target), and pytest's own --target too.
        taken = [flag for flag in _SET_BY_THE_ACTION if flag.startswith(name)]
        if taken:
            return f"the args input sets {taken[0]}, which the action sets itself: drop {arg!r} from args"
    return None


def main(environ: Mapping[str, str] | None = None) -> int:
    env = dict(os.environ if environ is None else environ)
    inputs, paths = Inputs.of(env), Paths.of(env)
    message = check(inputs)
    if message is not None:
        print(f"::error::{message}", file=sys.stderr)
        _append(env.get("GITHUB_STEP_SUMMARY"), f"## Kafka timestamp conformance\n\n**not run**: {message}\n")
        _set_outputs(env, {"exit-code": str(EXIT_USAGE), "verdict": f"not run: {message}", "regressed": "0"})
        return EXIT_USAGE
    paths.report.mkdir(parents=True, exist_ok=True)
    # The report folder is this job's: an earlier run's verdicts there must not pass for this one's.
    for stale in (paths.verdicts, paths.junit, paths.diff):
        stale.unlink(missing_ok=True)
    code, last_error = _run(command(inputs, paths), paths.workspace, env)
    outputs = {"exit-code": str(code), "report-dir": str(paths.report), "regressed": "0"}
    try:
        results = read_results(paths.verdicts) if paths.verdicts.is_file() else None
    except ResultsError:
        results = None
    if results is None:
        verdict = f"not run: exit {code}: {last_error or 'the run wrote no verdicts: see the log above'}"
        print(f"::error::{verdict}", file=sys.stderr)
        _append(env.get("GITHUB_STEP_SUMMARY"), f"## Kafka timestamp conformance\n\n**{_md(verdict)}**\n")
        _set_outputs(env, {**outputs, "verdict": verdict})
        return code or EXIT_USAGE
    verdict = headline_of(results).with_exit(code)
    diff_markdown = ""
    if inputs.baseline:
        try:
            baseline = read_run(paths.workspace / inputs.baseline)
        except ResultsError:  # the run read it already; changed since, the summary goes without the diff
            baseline = None
        if baseline is not None:
            diff = diff_runs(Side("baseline", inputs.baseline, baseline), Side("this run", "this run", results))
            regressed = len(diff.of(Change.REGRESSED))
            outputs["regressed"] = str(regressed)
            if regressed:
                verdict += f"; {regressed} regressed since the baseline"
            diff_markdown = to_markdown(diff)
    if code != 0:
        print(f"::error::{verdict}", file=sys.stderr)
    _append(env.get("GITHUB_STEP_SUMMARY"), summary(results, verdict, inputs, diff_markdown))
    _set_outputs(
        env,
        {**outputs, "verdict": verdict, "verdicts-json": str(paths.verdicts),
         "junit-xml": str(paths.junit) if paths.junit.is_file() else ""},
    )  # fmt: skip
    return code


if __name__ == "__main__":
    raise SystemExit(main())
