"""The project's documents stand alone: README.md and docs/ point only inside the repository, docs/rules.md is the
rule digest rendered from the code, and the figures the README states are the code's.

Whoever clones only this repository must be able to follow every path and link they read, and must not be sent to
a file the project does not hold (the rule digest used to live outside it).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from conformance.faults import MUTANTS
from conformance.judging.coverage import declared_clauses
from conformance.targets.implementation import Kind
from models.clauses import CLAUSES, clauses_for_profile
from models.profiles import PROFILES
from models.rules import VECTORS
from models.rules_doc import DOC_PATH, REGENERATE, render

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCUMENTS = [README, *sorted((REPO / "docs").rglob("*.md"))]

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
    for outside in ("shared/spec", "SEMANTICS"):
        assert outside not in text, f"{_name(doc)} mentions {outside!r}: cite docs/rules.md instead"


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
    """Guard against a scan that silently finds nothing: the README names these files."""
    found = set(_backticked_paths(_text(README)))
    assert {"docs/rules.md", "suites/expectations/tansu.toml", "models/rules.py"} <= found


# --- the README's figures ---------------------------------------------------------------------------


def _one_match(pattern: str) -> re.Match[str]:
    """The one place of the README `pattern` matches, read with its line breaks as spaces (the README wraps)."""
    text = " ".join(_text(README).split())
    found = list(re.finditer(pattern, text))
    assert len(found) == 1, f"README.md: want exactly one match of {pattern!r}, found {len(found)}"
    return found[0]


def _figure(pattern: str) -> tuple[int, ...]:
    """The numbers (the groups of `pattern`) of the one README sentence it matches."""
    return tuple(int(g) for g in _one_match(pattern).groups())


def _clauses_by_kind() -> dict[Kind, set[str]]:
    """Clause IDs the suite tests of each kind declare (a test's `@pytest.mark.kind`, else a broker test)."""
    by_kind: dict[Kind, set[str]] = {kind: set() for kind in Kind}
    for clause_id, tests in declared_clauses().items():
        for node in tests:
            path, name = node.split("::")
            function = getattr(importlib.import_module(path.removesuffix(".py").replace("/", ".")), name)
            marks = [m for m in getattr(function, "pytestmark", []) if m.name == "kind"]
            by_kind[Kind(marks[0].args[0]) if marks else Kind.BROKER].add(clause_id)
    return by_kind


def test_readme_clause_figures_match_the_catalogue() -> None:
    kafka_40 = {c.id for c in clauses_for_profile("kafka-4.0")}
    by_kind = _clauses_by_kind()
    broker = by_kind[Kind.BROKER]
    elsewhere = {c.id for c in CLAUSES if c.checked_elsewhere} & kafka_40
    assert _figure(r"The clause catalogue has (\d+) clauses over (\d+) behaviour profiles") == (
        len(CLAUSES),
        len(PROFILES),
    )
    assert _figure(r"(\d+) of them apply to kafka-4\.0") == (len(kafka_40),)
    assert _figure(r"reports (\d+) clause verdicts, one per clause the broker suites check") == (len(broker),)
    assert _figure(
        r"Of the (\d+) kafka-4\.0 clauses, (\d+) are checked by the broker suites, (\d+) by the codec and client "
        r"suites only \(a codec run reports (\d+) clause verdicts, a client run (\d+)\) and (\d+) by the model's own"
    ) == (
        len(kafka_40),
        len(kafka_40 & broker),
        len(kafka_40 - broker - elsewhere),
        len(by_kind[Kind.CODEC]),
        len(by_kind[Kind.CLIENT]),
        len(elsewhere),
    )
    unsupported_context = r"over a quarter of the (\d+) kafka-4\.0 clauses the broker suites check"
    assert _figure(unsupported_context) == (len(kafka_40 & broker),)


def test_readme_mutant_vector_and_profile_figures_match_the_code() -> None:
    kinds = [m.kind for m in MUTANTS.values()]
    counts = (kinds.count(Kind.BROKER), kinds.count(Kind.CODEC), kinds.count(Kind.CLIENT))
    assert _figure(r"The seeded faults are (\d+) mutants \((\d+) broker, (\d+) codec and (\d+) client mutants") == (
        len(MUTANTS),
        *counts,
    )
    assert _figure(r"(\d+) seeded broker mutants split by area") == (counts[0],)
    assert _figure(r"(\d+) codec and (\d+) client mutants \((\d+) mutants in all\)") == (*counts[1:], len(MUTANTS))
    assert _figure(r"the (\d+) test vectors TV-01\.\.TV-(\d+)") == (len(VECTORS), len(VECTORS))
    named = re.findall(r"`(kafka-[\d.]+)`", _one_match(r"`--profile` \(env `KTS_PROFILE`\).*?\)\.").group(0))
    assert named == list(PROFILES), "README: the --profile sentence must name every profile, in order"

