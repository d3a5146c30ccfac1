"""The HTML report: Allure 3 (the npm package `allure`, `allure generate` with its awesome plugin as one
file) over the results that allure-pytest and reports.clauses wrote, one file that opens from disk
(docs/reading-the-report.md).

The npm package is installed on first use into a cache directory (`npm install --prefix`), so a fresh
machine with Node/npm needs nothing else; `KTS_ALLURE` points at an `allure` executable instead.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import re
import shutil
import subprocess
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from conformance.judging.verdicts import MEANING, TRIAGE_ORDER, UNSUPPORTED_PREFIX, Verdict
from conformance.progress import step
from reports.front_page import CLAUSES_REPORT, TESTS_REPORT
from reports.known_issues import KNOWN_HEAD, VERDICT_LABEL, config_module

ALLURE_VERSION = "3.18.0"
DEFAULT_CACHE = Path(os.environ.get("KTS_CACHE", Path.home() / ".cache" / "kafka-timestamp-conformance"))


class ReportError(RuntimeError):
    """The HTML report could not be built; the message names the cause and the fix."""


def allure_executable(cache: Path = DEFAULT_CACHE, *, timeout: float = 600) -> Path:
    """The `allure` CLI: `KTS_ALLURE`, else the copy in `cache`, installed there with npm if absent."""
    configured = os.environ.get("KTS_ALLURE")
    if configured:
        path = Path(configured)
        if not path.is_file():
            raise ReportError(f"KTS_ALLURE={configured} is not a file: point it at an allure 3 executable or unset it")
        return path
    prefix = cache / f"allure-{ALLURE_VERSION}"
    executable = prefix / "node_modules" / ".bin" / "allure"
    if executable.is_file():
        return executable
    npm = shutil.which("npm")
    if npm is None:
        raise ReportError("npm is not on PATH: install Node.js 18+ (it brings npm), or set KTS_ALLURE to allure 3")
    prefix.mkdir(parents=True, exist_ok=True)
    # One install at a time: runs started together (tox run-parallel, a campaign's workers) share the cache.
    with open(prefix.parent / f".allure-{ALLURE_VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not executable.is_file():  # another process installed it while this one waited
            with step(
                f"installing the report tool (allure@{ALLURE_VERSION}) with npm...",
                f"installed the report tool (allure@{ALLURE_VERSION})",
            ):
                _npm_install(npm, prefix, timeout)
    if not executable.is_file():
        raise ReportError(f"npm installed allure@{ALLURE_VERSION} but {executable} is missing")
    return executable


def _npm_install(npm: str, prefix: Path, timeout: float) -> None:
    try:
        subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", f"allure@{ALLURE_VERSION}"],
            check=True,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise ReportError(
            f"npm install allure@{ALLURE_VERSION} took over {timeout:.0f} s: is the registry reachable?"
        ) from None
    except subprocess.CalledProcessError as exc:
        tail = "\n".join(exc.stderr.strip().splitlines()[-5:])
        raise ReportError(f"npm install allure@{ALLURE_VERSION} failed:\n{tail}") from None


def _versions() -> dict[str, str]:
    """What produced the results: the suite, Python and the libraries whose behaviour shapes a verdict."""
    found = {"python": platform.python_version()}
    for package in ("kafka-timestamp-conformance", "hypothesis", "pytest", "allure-pytest"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    found["allure (report)"] = os.environ.get("KTS_ALLURE") or ALLURE_VERSION
    return found


def write_environment(results: Path, values: dict[str, str]) -> None:
    """The run's environment (target, profile, then versions) as Allure shows it, above the tree."""
    results.mkdir(parents=True, exist_ok=True)
    merged = dict(values) | {k: v for k, v in _versions().items() if k not in values}
    # Allure reads a Java properties file: a newline or a backslash in a value would cut it short.
    lines = [f"{key}={str(value).replace(chr(92), '/').replace(chr(10), ' ')}" for key, value in merged.items()]
    (results / "environment.properties").write_text("\n".join(lines) + "\n", encoding="utf-8")


# How a result is classified in the report's "Categories" filter: one category per verdict, in triage order, by
# the verdict label (reports.clauses, mark_verdict). A failed result without one (a test the verdicts JSON does not
# name) is classified by its message; a known failure's message starts with its verdict (verdict_line).
_VIOLATION = r"ClauseViolation|\((MUST|SHOULD|MAY)[,)]"
_BY_MESSAGE: dict[Verdict, dict[str, Any]] = {
    Verdict.FAIL: {"statuses": ["failed"], "message": f"^(?!{KNOWN_HEAD})[\\s\\S]*({_VIOLATION})"},
    Verdict.UNEXPECTED_PASS: {"statuses": ["failed"], "message": re.escape(Verdict.UNEXPECTED_PASS.value)},
    Verdict.UNSUPPORTED: {"statuses": ["skipped"], "message": re.escape(UNSUPPORTED_PREFIX)},
}
CATEGORIES: list[dict[str, Any]] = [
    *(
        {
            "name": f"{verdict.value}: {MEANING[verdict]}",
            "matchers": [
                {"labels": {VERDICT_LABEL: rf"^\d+ {re.escape(verdict.value)}$"}},
                *([_BY_MESSAGE[verdict]] if verdict in _BY_MESSAGE else []),
            ],
        }
        for verdict in TRIAGE_ORDER
        if verdict is not Verdict.PASS
    ),
    {"name": "Broken: the harness or the target errored", "matchers": {"statuses": ["broken", "failed"]}},
]


def write_categories(results: Path) -> None:
    """The categories in Allure 2's `categories.json`, for an Allure 2 reader of the same results; the
    HTML built here gets `CATEGORIES` through its config file (Allure 3 ignores categories.json)."""
    results.mkdir(parents=True, exist_ok=True)
    legacy = [
        {"name": "Known departures: they do not fail the run", "matchedStatuses": ["skipped"],
         "messageRegex": f"(?s){KNOWN_HEAD}.*"},
        {"name": f"{Verdict.FAIL.value}: {MEANING[Verdict.FAIL]}", "matchedStatuses": ["failed"],
         "messageRegex": f"(?s)(?!{KNOWN_HEAD}).*(MUST|SHOULD|MAY).*"},
        {"name": f"{Verdict.UNEXPECTED_PASS.value}: {MEANING[Verdict.UNEXPECTED_PASS]}", "matchedStatuses": ["failed"],
         "messageRegex": f"(?s).*{re.escape(Verdict.UNEXPECTED_PASS.value)}.*"},
        {"name": "Broken: the harness or the target errored", "matchedStatuses": ["broken", "failed"]},
    ]  # fmt: skip
    (results / "categories.json").write_text(json.dumps(legacy, indent=2), encoding="utf-8")


def target_logs(results: Path) -> dict[str, Path]:
    """The target's logs among the attachments, by attachment name ("tansu log"): the plugin attaches
    them at the session fixture's teardown, which Allure shows only inside each test's "Tear down"."""
    found: dict[str, Path] = {}
    for path in sorted(results.glob("*-container.json")):
        try:
            container = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # a half-written container is no evidence; skip it
            continue
        for fixture in container.get("afters", []):
            for attachment in fixture.get("attachments", []):
                source = results / str(attachment.get("source", ""))
                if str(attachment.get("name", "")).endswith(" log") and source.is_file():
                    found[str(attachment["name"])] = source
    return found


def _global_attachments(results: Path, into: Path) -> list[str]:
    """Copies of the target's logs named after them ("tansu-log.txt"), shown on the report's first page;
    copies, because Allure shows one attachment file in one place only."""
    paths = []
    for name, log in sorted(target_logs(results).items()):
        copy = into / (re.sub(r"[^A-Za-z0-9_.-]+", "-", name) + ".txt")
        shutil.copyfile(log, copy)
        paths.append(str(copy))
    return paths


def _awesome(name: str) -> dict[str, Any]:
    return {
        "reportName": name,
        "singleFile": True,
        # Clause results: clauses > "1 FAIL" > clause; tests: suites > "1 FAIL" > area > test.
        "groupBy": ["parentSuite", VERDICT_LABEL, "feature"],
        # By name: verdict groups in triage order, clauses by ID within a group.
        "defaultSortBy": "name,asc",
        "stepTreeExpansion": "expand_failed_only",
    }


def allure_config(
    name: str, output: Path, global_attachments: list[str] | None = None, *, split: bool = False
) -> dict[str, Any]:
    """The Allure 3 config of the report: one file, results grouped by verdict, clauses and tests apart; failed
    steps open, so a failure's counterexample and wire exchange are visible at once. The quality gate is added by
    config_module. With `split`, two reports (clauses/ and tests/, reports.front_page), so that clause verdicts
    and pytest tests are never counted in one ring; config_module gives each its filter."""
    if split:
        plugins = {
            CLAUSES_REPORT: {"import": _AWESOME, "options": _awesome(f"Clause verdicts · {name}")},
            TESTS_REPORT: {"import": _AWESOME, "options": _awesome(f"Tests · {name}")},
        }
    else:
        plugins = {"awesome": {"options": _awesome(name)}}
    config: dict[str, Any] = {
        "name": name,
        "output": str(output),
        "categories": CATEGORIES,
        "globalAttachments": list(global_attachments or []),
        "plugins": plugins,
    }
    return config


_AWESOME = "@allurereport/plugin-awesome"
QUALITY_GATE_FILE = "quality-gate.txt"
# Allure 3.18's quality gate calls Iterator.prototype.toArray, which Node.js has from version 22 only; on an older
# Node (20 is still maintained) the gate would crash, so the gate runs with this module preloaded (`--import`,
# Node 18.19+; on an older Node the gate is "not evaluated" and the report is built all the same).
_TO_ARRAY = """\
const iteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
if (typeof iteratorPrototype.toArray !== "function") {
  Object.defineProperty(iteratorPrototype, "toArray", {
    value() { return Array.from(this); }, configurable: true, writable: true,
  });
}
"""


def _run_allure(
    arguments: list[str], tmp: Path, timeout: float, what: str, *, preload: bool = False
) -> subprocess.CompletedProcess[str]:
    """`allure ARGUMENTS` in the private directory `tmp` (its config beside it), with `preload` the Node shim."""
    env = dict(os.environ)
    if preload:
        shim = tmp / "to-array.mjs"
        shim.write_text(_TO_ARRAY, encoding="utf-8")
        env["NODE_OPTIONS"] = " ".join(filter(None, [env.get("NODE_OPTIONS", ""), f"--import={shim.as_uri()}"]))
    try:
        return subprocess.run(
            [str(allure_executable()), *arguments], capture_output=True, text=True, timeout=timeout, cwd=tmp, env=env
        )
    except subprocess.TimeoutExpired:
        raise ReportError(f"allure {what} took over {timeout:.0f} s") from None


def quality_gate(config: Path, results: Path, *, timeout: float = 300) -> tuple[bool, str]:
    """Allure's quality gate over `results` with the report's `config` (config_module): (passed, Allure's
    words). It counts what fails the run (config_module): the clause verdicts that do and the run's own errors; a
    KNOWN, NON-STRICT or BLOCKED clause does not count, nor does a pytest test beside its clauses."""
    arguments = ["quality-gate", "--config", str(config), str(results)]
    gate = _run_allure(arguments, config.parent, timeout, "quality-gate", preload=True)
    if gate.returncode not in (0, 1):
        tail = "\n".join((gate.stderr or gate.stdout).strip().splitlines()[-5:])
        raise ReportError(f"allure quality-gate failed (exit {gate.returncode}):\n{tail}")
    words = re.sub(r"\x1b\[[0-9;]*m", "", (gate.stderr + gate.stdout)).strip()  # without its colours
    return gate.returncode == 0, words or "no clause verdict fails the run and the run had no error of its own"


def build_html(results: Path, output: Path, *, name: str, timeout: float = 300, split: bool = False) -> Path:
    """Build the single-file report from `results` into `output`; returns the index.html path. Beside it: the
    quality gate's outcome (quality-gate.txt, first line "passed", "failed" or "not evaluated"), also on the report's
    first page; the gate counts what fails the run. With `split`, two single-file reports, `clauses/index.html` and
    `tests/index.html`, and index.html is Allure's summary of both until the caller writes its own first page there
    (reports.front_page). Every Allure page opens on its header (open_on_header)."""
    # allure runs in a private directory (its config beside it): every path it gets must be absolute.
    results, output = Path(results).resolve(), Path(output).resolve()
    if not results.is_dir() or not any(results.iterdir()):
        raise ReportError(f"no Allure results in {results}: did pytest run with --alluredir {results}?")
    allure_executable()  # installed before anything else, so that a missing npm is the error a user sees
    with tempfile.TemporaryDirectory(prefix="kts-allure-") as directory:
        tmp = Path(directory)
        # An explicit config, so an allurerc.* in the working directory cannot change the report.
        config = tmp / "allurerc.mjs"
        config.write_text(config_module(allure_config(name, output, [], split=split)), encoding="utf-8")
        try:
            passed, words = quality_gate(config, results, timeout=timeout)
            outcome = f"{'passed' if passed else 'failed'}\n{words}\n"
        except ReportError as exc:  # the report is still worth building: it says why the gate is missing
            outcome = f"not evaluated\n{exc}\n"
        (tmp / QUALITY_GATE_FILE).write_text(outcome, encoding="utf-8")
        attachments = [str(tmp / QUALITY_GATE_FILE), *_global_attachments(results, tmp)]
        config.write_text(config_module(allure_config(name, output, attachments, split=split)), encoding="utf-8")
        arguments = ["generate", "--config", str(config), "--output", str(output), str(results)]
        done = _run_allure(arguments, tmp, timeout, f"generate on {results}")
    index = output / "index.html"
    if done.returncode != 0 or not index.is_file():
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise ReportError(f"allure generate failed (exit {done.returncode}):\n{tail}")
    (output / QUALITY_GATE_FILE).write_text(outcome, encoding="utf-8")
    for page in [output / CLAUSES_REPORT / "index.html", output / TESTS_REPORT / "index.html"] if split else [index]:
        open_on_header(page)
    return index


# Allure 3's report gives its tree's first result the keyboard focus on load and scrolls it into view: below a tall
# header (the title, the counts, the metadata) the report opened scrolled past its counts onto the first rows. Until
# the reader scrolls, clicks, touches or types, a scroll that happens is put back to the top; a page opened on a
# result (a link with a route after #) is left to Allure.
OPEN_ON_HEADER = """<script data-kts="open-on-header">
(() => {
  if (location.hash.length > 2) return;
  let held = true;
  const release = () => { held = false; };
  for (const type of ["wheel", "touchstart", "pointerdown", "mousedown", "keydown"]) {
    window.addEventListener(type, release, { capture: true, once: true, passive: true });
  }
  document.addEventListener("scroll", (event) => {
    const scrolled = event.target === document ? document.scrollingElement : event.target;
    if (held && scrolled && scrolled.scrollTop > 0) scrolled.scrollTop = 0;
  }, { capture: true, passive: true });
})();
</script>"""


def open_on_header(page: Path) -> None:
    """Make an Allure 3 page open on its header (OPEN_ON_HEADER, first in its <head>); a page that has it is left
    as it is."""
    text = page.read_text(encoding="utf-8")
    if OPEN_ON_HEADER in text:
        return
    head = text.find("<head>")
    if head < 0:
        raise ReportError(f"{page} has no <head>: not an Allure 3 page, so it cannot be made to open on its header")
    at = head + len("<head>")
    page.write_text(text[:at] + "\n" + OPEN_ON_HEADER + text[at:], encoding="utf-8")
