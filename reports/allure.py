"""The HTML report: Allure 3 (the npm package `allure`, `allure generate` with its awesome plugin as one
file) over the results that allure-pytest and reports.clauses wrote, one file that opens from disk
(ARCHITECTURE.md "Reports").

The npm package is installed on first use into a cache directory (`npm install --prefix`), so a fresh
machine with Node/npm needs nothing else; `KTS_ALLURE` points at an `allure` executable instead.
"""

from __future__ import annotations

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
    if not executable.is_file():
        raise ReportError(f"npm installed allure@{ALLURE_VERSION} but {executable} is missing")
    return executable


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


# How a result is classified in the report's "Categories" filter. Clause results carry a `verdict`
# label (reports.clauses); per-test results are classified by their failure message.
CATEGORIES: list[dict[str, Any]] = [
    {"name": "FAIL: clause violated", "matchers": [
        {"labels": {"verdict": r"\bFAIL$"}},
        {"statuses": ["failed"], "message": r"ClauseViolation|\((MUST|SHOULD|MAY)[,)]"},
    ]},
    {"name": "UNEXPECTED-PASS: stale expectation", "matchers": [
        {"labels": {"verdict": r"\bUNEXPECTED-PASS$"}},
        {"statuses": ["failed"], "message": "UNEXPECTED-PASS"},
    ]},
    {"name": "BLOCKED: not reached", "matchers": {"labels": {"verdict": r"\bBLOCKED$"}}},
    {"name": "KNOWN: known failure reproduced", "matchers": {"labels": {"verdict": r"\bKNOWN$"}}},
    {"name": "NON-STRICT: SHOULD not met", "matchers": {"labels": {"verdict": r"\bNON-STRICT$"}}},
    {"name": "UNSUPPORTED: capability missing", "matchers": [
        {"labels": {"verdict": r"\bUNSUPPORTED$"}},
        {"statuses": ["skipped"], "message": "UNSUPPORTED"},
    ]},
    {"name": "Broken: the harness or the target errored", "matchers": {"statuses": ["broken", "failed"]}},
]


def write_categories(results: Path) -> None:
    """The categories in Allure 2's `categories.json`, for an Allure 2 reader of the same results; the
    HTML built here gets `CATEGORIES` through its config file (Allure 3 ignores categories.json)."""
    results.mkdir(parents=True, exist_ok=True)
    legacy = [
        {"name": "FAIL: clause violated", "matchedStatuses": ["failed"], "messageRegex": ".*(MUST|SHOULD|MAY).*"},
        {"name": "UNEXPECTED-PASS: stale expectation", "matchedStatuses": ["failed"],
         "messageRegex": ".*UNEXPECTED-PASS.*"},
        {"name": "Broken: the harness or the target errored", "matchedStatuses": ["broken", "failed"]},
    ]
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


def allure_config(name: str, output: Path, global_attachments: list[str] | None = None) -> dict[str, Any]:
    """The Allure 3 config of the report: one file, clause results grouped by verdict, then the tests by
    area; failed steps open, so a failure's counterexample and wire exchange are visible at once."""
    return {
        "name": name,
        "output": str(output),
        "categories": CATEGORIES,
        "globalAttachments": list(global_attachments or []),
        "plugins": {
            "awesome": {
                "options": {
                    "reportName": name,
                    "singleFile": True,
                    # Clause results: clauses > "1 FAIL" > clause; tests: suites > area > test.
                    "groupBy": ["parentSuite", "verdict", "feature"],
                    # By name: verdict groups in triage order, clauses by ID within a group.
                    "defaultSortBy": "name,asc",
                    "stepTreeExpansion": "expand_failed_only",
                }
            }
        },
    }


def build_html(results: Path, output: Path, *, name: str, timeout: float = 300) -> Path:
    """Build the single-file report from `results` into `output`; returns the index.html path."""
    # allure runs in a private directory (its config beside it): every path it gets must be absolute.
    results, output = Path(results).resolve(), Path(output).resolve()
    if not results.is_dir() or not any(results.iterdir()):
        raise ReportError(f"no Allure results in {results}: did pytest run with --alluredir {results}?")
    executable = allure_executable()
    with tempfile.TemporaryDirectory(prefix="kts-allure-") as tmp:
        # An explicit config, so an allurerc.* in the working directory cannot change the report.
        config = Path(tmp) / "allurerc.json"
        logs = _global_attachments(results, Path(tmp))
        config.write_text(json.dumps(allure_config(name, output, logs), indent=2), encoding="utf-8")
        command = [str(executable), "generate", "--config", str(config), "--output", str(output), str(results)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise ReportError(f"allure generate took over {timeout:.0f} s on {results}") from None
    index = output / "index.html"
    if done.returncode != 0 or not index.is_file():
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise ReportError(f"allure generate failed (exit {done.returncode}):\n{tail}")
    return index
