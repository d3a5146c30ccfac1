"""The HTML report: Allure 3 (`allure awesome --single-file`, the npm package `allure`) over the results
that allure-pytest wrote, one file that opens from disk (ARCHITECTURE.md "Reports").

The npm package is installed on first use into a cache directory (`npm install --prefix`), so a fresh
machine with Node/npm needs nothing else; `KTS_ALLURE` points at an `allure` executable instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

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


def write_environment(results: Path, values: dict[str, str]) -> None:
    """The run's environment (target, profile, versions) as Allure shows it."""
    results.mkdir(parents=True, exist_ok=True)
    lines = [f"{key}={value}" for key, value in values.items()]
    (results / "environment.properties").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_categories(results: Path) -> None:
    """Allure categories that group failures by verdict instead of by Python exception."""
    categories = [
        {"name": "FAIL: clause violated", "matchedStatuses": ["failed"], "messageRegex": ".*(MUST|SHOULD|MAY).*"},
        {
            "name": "UNEXPECTED-PASS: stale expectation",
            "matchedStatuses": ["failed"],
            "messageRegex": ".*UNEXPECTED-PASS.*",
        },
        {"name": "Broken: the harness or the target errored", "matchedStatuses": ["broken", "failed"]},
    ]
    (results / "categories.json").write_text(json.dumps(categories, indent=2), encoding="utf-8")


def build_html(results: Path, output: Path, *, name: str, timeout: float = 300) -> Path:
    """Build the single-file report from `results` into `output`; returns the index.html path."""
    if not results.is_dir() or not any(results.iterdir()):
        raise ReportError(f"no Allure results in {results}: did pytest run with --alluredir {results}?")
    executable = allure_executable()
    command = [str(executable), "awesome", str(results), "--single-file", "--output", str(output)]
    # Clause results (reports.clauses) first, then the tests that checked them.
    command += ["--report-name", name, "--group-by", "parentSuite,feature"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ReportError(f"allure awesome took over {timeout:.0f} s on {results}") from None
    index = output / "index.html"
    if done.returncode != 0 or not index.is_file():
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise ReportError(f"allure awesome failed (exit {done.returncode}):\n{tail}")
    return index
