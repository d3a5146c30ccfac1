"""The project's documents stand alone: README.md and docs/ point only inside the repository, docs/rules.md is the
rule digest rendered from the code, the README fits on a few screens, and the docs site states no count, version
or table by hand: its pages hold placeholders that docs/hooks/figures.py fills from the code when the site is built.

Whoever clones only this repository must be able to follow every path and link they read, and must not be sent to
a file the project does not hold (the rule digest used to live outside it).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

from conformance.cli import build_parser
from conformance.faults import MUTANTS
from conformance.judging.verdicts import EntryStatus, Verdict
from models.clauses import CLAUSES
from models.rules import VECTORS
from models.rules_doc import DOC_PATH, REGENERATE, render

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
DOCUMENTS = [README, *sorted(DOCS.rglob("*.md"))]
# The site's pages: everything under docs/ but its hooks (code, excluded from the site in mkdocs.yml).
PAGES = [doc for doc in DOCUMENTS if doc.parent != REPO and "hooks" not in doc.relative_to(DOCS).parts]
MKDOCS_YML = REPO / "mkdocs.yml"
# The quick-start commands, exactly: the main job and the project's own tests (.ci/run runs the second).
MAIN_JOB = "pip install tox && tox -e tansu"
OWN_TESTS = "pip install tox && tox run-parallel -p 2"

# Top-level entries a backticked path in a document may start with to count as a path of this repository.
REPO_ROOTS = ("models/", "conformance/", "suites/", "strategies/", "tests/", "docs/", "examples/", "reports/")
# Generated output (git-ignored) and names that stand for any file of a kind: not checked for existence.
NOT_IN_CHECKOUT = ("reports/out",)
PLACEHOLDERS = {"suites/test_x.py"}

FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`([^`\n]+)`")
MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# "../" that climbs out of a directory; an ellipsis such as `reports/out/.../logs` is not one.
PARENT = re.compile(r"(?<![.\w])\.\./")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _name(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


# --- docs/rules.md ---------------------------------------------------------------------------------


def test_rules_doc_is_generated_from_the_code() -> None:
    on_disk = (REPO / DOC_PATH).read_text(encoding="utf-8") if (REPO / DOC_PATH).is_file() else ""
    assert on_disk == render(), f"{DOC_PATH.as_posix()} is not what the code renders: regenerate it with `{REGENERATE}`"


# --- nothing outside the repository, nothing missing inside it --------------------------------------


@pytest.mark.parametrize("doc", DOCUMENTS, ids=_name)
def test_no_path_leaves_the_repository(doc: Path) -> None:
    text = _text(doc)
    climbing = [line for line in text.splitlines() if PARENT.search(line)]
    assert not climbing, f"{_name(doc)}: a path that leaves the repository: {climbing}"
    # Documents outside the repository named by their names: tests/test_layout.py, for code and docs alike.


def _backticked_paths(text: str) -> list[str]:
    """Inline code spans outside fenced blocks that are one path of this repository (`suites/x.py`, a node id's
    file part), not commands or placeholders."""
    paths = []
    for span in INLINE_CODE.findall(FENCE.sub("", text)):
        token = span.split("::", 1)[0].rstrip("/")
        if " " in token or not token.startswith(REPO_ROOTS):
            continue
        if token.startswith(NOT_IN_CHECKOUT) or any(mark in token for mark in ("<", "...", "{")):
            continue
        paths.append(token)
    return paths


def _exists(doc: Path, target: str, relative_to_doc: bool) -> bool:
    base = doc.parent if relative_to_doc else REPO
    if "*" in target:
        return any(base.glob(target))
    return (base / target).exists()


@pytest.mark.parametrize("doc", DOCUMENTS, ids=_name)
def test_every_relative_link_and_path_exists(doc: Path) -> None:
    text = _text(doc)
    links = [
        link.split("#", 1)[0]
        for link in MARKDOWN_LINK.findall(text)
        if not re.match(r"^[a-z]+:|^#", link)
    ]
    missing = [link for link in links if link and not _exists(doc, link, relative_to_doc=True)]
    missing += [p for p in _backticked_paths(text) if p not in PLACEHOLDERS and not _exists(doc, p, False)]
    assert not missing, f"{_name(doc)} names paths the repository does not have: {missing}"


def test_the_path_scan_sees_paths() -> None:
    """Guard against a scan that silently finds nothing: the README and the pages name these files."""
    assert {"suites/expectations/tansu.toml", "models/rules.py"} <= set(_backticked_paths(_text(README)))
    found = {path for doc in PAGES for path in _backticked_paths(_text(doc))}
    assert {"conformance/control/openapi.json", "examples/control_shim.py", "models/profiles.py"} <= found
    assert MARKDOWN_LINK.findall(_text(README)), "the scan finds no link in the README"


# --- the README: a few screens, the two commands first --------------------------------------------------------


def test_readme_fits_on_a_few_screens() -> None:
    lines = _text(README).splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: at most 200 (the rest belongs in docs/)"
    long = [(number, len(line)) for number, line in enumerate(lines, 1) if len(line) > 120]
    assert not long, f"README.md: lines over 120 characters (line, length): {long}"
    first_screen = lines[:40]
    for command in (MAIN_JOB, OWN_TESTS):
        assert command in first_screen, f"README.md: `{command}` must stand on a line of its own in the first 40"


def test_ci_runs_the_readme_test_command() -> None:
    assert OWN_TESTS in _text(REPO / ".ci" / "run").splitlines()


def test_readme_verdict_words_are_the_code_s() -> None:
    """The README's verdict table names the verdicts of conformance/judging/verdicts.py, all of a run's, and no
    other word; STALE (an expectations entry's status) is explained beside it."""
    table = _one_match(r"\| Verdict \| Means \| Fails the run \|(.*?)\n\n").group(1)
    named = re.findall(r"^\| ([A-Z/-]+) \|", table, re.MULTILINE)
    campaign_only = {Verdict.TIMEOUT, Verdict.CRASHED}
    assert set(named) == {v.value for v in Verdict} - {v.value for v in campaign_only}
    assert EntryStatus.STALE.value in _text(README)


def _one_match(pattern: str) -> re.Match[str]:
    found = list(re.finditer(pattern, _text(README), re.DOTALL))
    assert len(found) == 1, f"README.md: want exactly one match of {pattern!r}, found {len(found)}"
    return found[0]


def test_readme_links_into_the_site() -> None:
    linked = {link.split("#", 1)[0] for link in MARKDOWN_LINK.findall(_text(README)) if link.startswith("docs/")}
    assert {"docs/getting-started.md", "docs/reading-the-report.md", "docs/cli.md"} <= linked


# --- the site: every page in the nav, every figure from the code ---------------------------------------------------


def test_every_page_is_in_the_nav() -> None:
    """mkdocs build --strict fails on a page outside the nav too; this says so without MkDocs installed."""
    nav = set(re.findall(r"^\s+- (?:[^:\n]+: )?(\S+\.md)\s*$", _text(MKDOCS_YML), re.MULTILINE))
    pages = {doc.relative_to(DOCS).as_posix() for doc in PAGES}
    assert pages == nav, f"pages outside the nav: {sorted(pages - nav)}; nav entries, no page: {sorted(nav - pages)}"


@cache
def _figures_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kts_docs_figures", DOCS / "hooks" / "figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("doc", PAGES, ids=_name)
def test_every_placeholder_has_a_figure(doc: Path) -> None:
    figures = _figures_module()
    unknown = sorted(set(figures.placeholders(_text(doc))) - set(figures.figures()))
    assert not unknown, f"{_name(doc)}: placeholders docs/hooks/figures.py does not know: {unknown}"


def test_an_unknown_placeholder_fails_the_build() -> None:
    figures = _figures_module()
    assert figures.substitute("{{ clauses }} clauses", {"clauses": "7"}, "x.md") == "7 clauses"
    with pytest.raises(KeyError, match=r"x\.md: unknown placeholder \{\{ claws \}\}"):
        figures.substitute("{{ claws }}", {"clauses": "7"}, "x.md")
    # A GitHub workflow's expression in an example is not a placeholder.
    assert figures.substitute("${{ steps.run.outputs.verdict }}", {}, "x.md") == "${{ steps.run.outputs.verdict }}"


def test_the_figures_are_the_code_s() -> None:
    figures = _figures_module().figures()
    assert figures["clauses"] == f"{len(CLAUSES):,}"
    assert figures["mutants"] == f"{len(MUTANTS):,}"
    assert figures["vectors"] == str(len(VECTORS))
    by_kind = sum(int(figures[f"mutants.{kind}"]) for kind in ("broker", "codec", "client"))
    assert by_kind == len(MUTANTS), "every mutant is of one of the three kinds"
    parts = sum(int(figures[f"clauses.default.{part}"]) for part in ("broker", "codec-client", "elsewhere"))
    assert parts == int(figures["clauses.default"]), "the default profile's clauses are checked in one place each"


def test_the_cli_reference_covers_every_command() -> None:
    parser = build_parser(complete=True)
    commands = next(a for a in parser._actions if a.dest == "command").choices
    reference = _figures_module().figures()["cli"]
    missing = [name for name in commands if f"## {parser.prog} {name}\n" not in reference]
    assert commands and not missing, f"the CLI reference lacks {missing}"


# Counts a run or a code change can contradict, written as digits: they belong in a placeholder or nowhere.
HAND_COUNT = re.compile(
    r"\b\d[\d,]* (?:clauses|clause verdicts|mutants|broker mutants|codec mutants|client mutants|profiles|"
    r"behaviour profiles|test vectors|targets|rules)\b"
    r"|\b[1-9][\d,]* (?:PASS|FAIL|KNOWN|UNSUPPORTED|N/A|NON-STRICT|BLOCKED|UNEXPECTED-PASS)\b"
)


KEPT_EXAMPLE = re.compile(r"^<!-- example [a-z -]+ -->\n\n```.*?^```", re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("doc", [doc for doc in DOCUMENTS if doc != REPO / DOC_PATH], ids=_name)
def test_no_count_is_written_by_hand(doc: Path) -> None:
    # An example output behind `<!-- example NAME -->` is kept equal to what the code writes by a test of its own
    # (tests/test_diff.py for the example diff): its counts are the example's, not the project's.
    found = HAND_COUNT.findall(KEPT_EXAMPLE.sub("", _text(doc)))
    assert not found, f"{_name(doc)} states counts by hand: {found}; write a placeholder (docs/hooks/figures.py)"


@pytest.mark.e2e
@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None,
    reason="MkDocs is not installed (pip install -e '.[docs]'); tox -e lint builds the site",
)
def test_the_site_builds_strict(tmp_path: Path) -> None:
    """What tox -e lint runs: every link and anchor resolves, every page is in the nav, every placeholder is known."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "cli" / "index.html").is_file()
