"""Meta tests of the package's shape (docs/architecture.md): the dependency direction between the
top-level packages, no import cycles, the wings stacked in one order (a wing imports only itself and the wings
below it), comments that say why instead of citing an issue number, and no reference to a document outside the
repository. Pure: every module is parsed with ast, nothing is imported or run."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("conformance", "models", "strategies", "suites", "reports")
# The entry points, and what several wings share: errors, the extras of the install and their hints, progress lines.
CONFORMANCE_TOP = {"__init__.py", "__main__.py", "cli.py", "errors.py", "extras.py", "progress.py"}
ISSUE_CITATION = re.compile(r"\b[Ii]ssues? #?\d+")
ARCHITECTURE_DOC = ROOT / "docs" / "architecture.md"
WING_ORDER_HEADING = "## The wing order"
# The wings, bottom to top: a wing imports only itself and the wings below it. A wing is a folder ("x/") or a set of
# files; docs/architecture.md shows this order as a table, and test_the_docs_show_the_wing_order keeps the two equal.
WING_ORDER: tuple[tuple[str, ...], ...] = (
    ("models/",),
    ("strategies/",),
    ("conformance/__init__.py", "conformance/errors.py", "conformance/progress.py", "conformance/extras.py"),
    ("conformance/jvm/",),
    ("conformance/wire/",),
    ("conformance/judging/",),
    ("conformance/control/",),
    ("conformance/targets/",),
    ("conformance/faults/",),
    ("conformance/reference/",),
    ("conformance/plugin/",),
    ("conformance/campaign/",),
    ("conformance/oracles/",),
    ("reports/",),
    ("conformance/commands/", "conformance/cli.py", "conformance/__main__.py"),
    ("conformance/ci/",),
    ("suites/",),
)


def _python_files(package: str) -> Iterator[Path]:
    for path in sorted((ROOT / package).rglob("*.py")):
        if "__pycache__" not in path.parts:
            yield path


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    """Every project module by dotted name (a package by the name of its __init__)."""
    return {_module_name(path): path for package in PACKAGES for path in _python_files(package)}


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module an ImportFrom names (`from .helpers import x` in suites/ is suites.helpers)."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _resolve(name: str) -> str | None:
    """The project module an imported name lands in: the longest prefix that is a module or a package."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in _modules():
            return candidate
        parts.pop()
    return None


def _imported(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """(line, project module) for every import in `module`'s body: functions and TYPE_CHECKING blocks included.

    `from P import N` counts as an import of P.N when that is a module, else of P (a package's __init__). The
    packages above an imported module are not counted: Python runs them first, and a package whose __init__
    imports its own submodules would otherwise form a cycle with each of them."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, path, node)
            names = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in _modules() else source for alias in node.names
            ]
        for name in names:
            target = _resolve(name)
            if target is not None and target != module:
                yield node.lineno, target


def _imports(module: str, path: Path) -> set[str]:
    """The project modules `module` imports anywhere in its body."""
    return {target for _, target in _imported(module, path)}


@cache
def _graph() -> dict[str, frozenset[str]]:
    return {module: frozenset(_imports(module, path)) for module, path in _modules().items()}


def _cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """One cycle through each strongly connected component of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component: set[str] = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(component)
    return [_cycle_in(graph, component) for component in components]


def _cycle_in(graph: dict[str, frozenset[str]], component: set[str]) -> list[str]:
    """A shortest cycle through the component's first module (breadth-first inside the component)."""
    start = min(component)
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for nxt in sorted(graph[node] & component):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if nxt not in parents:
                    parents[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # a component of two or more modules has one


def test_imports_resolve_to_project_modules(tmp_path: Path) -> None:
    """The graph is only as good as its resolution: function-level, relative and package imports all count."""
    source = tmp_path / "fake.py"
    source.write_text(
        "import os\n"
        "import conformance.judging.checks as checks\n"
        "from . import helpers\n"
        "from .machine import machine_for\n"
        "from conformance.targets import registry\n"
        "from conformance.faults import MUTANTS\n"
        "def later() -> None:\n"
        "    from models.records import build_batches\n",
        encoding="utf-8",
    )
    assert _imports("suites.fake", source) == {
        "conformance.judging.checks",
        "suites.helpers",
        "suites.machine",
        "conformance.targets.registry",
        "conformance.faults",  # a name from a package: its __init__
        "models.records",
    }


def test_cycle_finder_reports_a_cycle() -> None:
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset({"a"})}
    assert _cycles(graph) == [["a", "b", "c", "a"]]
    assert _cycles({"a": frozenset({"b"}), "b": frozenset()}) == []


def test_no_import_cycles() -> None:
    """No cycle among the project's modules, function-level imports included: an import placed in a function
    to dodge a cycle means the code is in the wrong module."""
    cycles = _cycles(_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in cycles)


def _outside(package: str, allowed: set[str]) -> dict[str, list[str]]:
    offending = {}
    for module, imported in _graph().items():
        if module.split(".")[0] == package:
            bad = sorted(m for m in imported if m.split(".")[0] not in allowed)
            if bad:
                offending[module] = bad
    return offending


def test_models_import_nothing_else_from_the_project() -> None:
    """models/ is the executable spec: pure, so it can be read and checked on its own."""
    assert _outside("models", {"models"}) == {}


def test_strategies_import_only_models() -> None:
    assert _outside("strategies", {"strategies", "models"}) == {}


def test_no_module_basename_repeats_in_conformance() -> None:
    """A module's name says which one it is without its folder (one `model.py`, one `client.py`)."""
    names = Counter(
        path.name for path in _python_files("conformance") if path.name not in {"__init__.py", "__main__.py"}
    )
    repeated = {
        name: sorted(str(p.relative_to(ROOT)) for p in _python_files("conformance") if p.name == name)
        for name, count in names.items()
        if count > 1
    }
    assert repeated == {}


def test_conformance_has_no_loose_modules() -> None:
    """Everything below the entry points belongs to a wing (judging/, plugin/, targets/, faults/, ...)."""
    loose = {path.name for path in (ROOT / "conformance").glob("*.py")}
    assert loose - CONFORMANCE_TOP == set()


def _comments_and_docstrings(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line of every comment and docstring."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source, filename=str(path))):
        # Docstrings, and any other string standing alone as a statement (a misplaced docstring).
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for offset, text in enumerate(node.value.value.splitlines()):
                yield node.lineno + offset, text


def test_comments_say_why_not_which_issue() -> None:
    """A comment names the rule (VAL-4, LO-6), the clause or the Kafka behaviour it follows; an issue number
    means nothing to a reader of the code."""
    citations = [
        f"{path.relative_to(ROOT)}:{line}: {match.group(0)}"
        for package in PACKAGES
        for path in _python_files(package)
        for line, text in _comments_and_docstrings(path)
        for match in ISSUE_CITATION.finditer(text)
    ]
    assert citations == [], "\n".join(citations)


# --- the wings form a stack ------------------------------------------------------------------------------------------

FLOOR_OF = {part: floor for floor, wing in enumerate(WING_ORDER, start=1) for part in wing}
TABLE_ROW = re.compile(r"^\|\s*(\d+)\s*\|([^|]*)\|")


def _wing_of(relative: Path) -> str:
    """The part of WING_ORDER a file belongs to: its top-level folder, or its wing folder inside conformance/, or
    itself when it sits directly in conformance/."""
    parts = relative.parts
    if parts[0] != "conformance":
        return f"{parts[0]}/"
    if len(parts) == 2:
        return f"conformance/{parts[1]}"
    return f"conformance/{parts[1]}/"


def _climbs(module: str, path: Path, relative: Path) -> Iterator[str]:
    """One message for each import in `module` (shown as `relative`) of a module in a wing above its own."""
    wing = _wing_of(relative)
    floor = FLOOR_OF[wing]
    for line, target in sorted(set(_imported(module, path))):
        target_wing = _wing_of(_modules()[target].relative_to(ROOT))
        target_floor = FLOOR_OF.get(target_wing)
        if target_floor is not None and target_floor > floor:
            yield (
                f"{relative.as_posix()}:{line} imports {target}: {wing} (floor {floor}) reaches up to {target_wing} "
                f"(floor {target_floor}). A wing imports only itself and the wings below it (docs/architecture.md, "
                f'"The wing order"): move what it needs from {target} down to {wing} or a wing below it, or move '
                f"the importing code up to {target_wing} or a wing above it."
            )


def test_every_wing_has_a_floor() -> None:
    """Every file of the project sits in a wing of WING_ORDER, and every wing of the order exists."""
    homeless = sorted({_wing_of(path.relative_to(ROOT)) for path in _modules().values()} - set(FLOOR_OF))
    assert homeless == [], f"wings with no place in WING_ORDER (tests/test_layout.py, docs/architecture.md): {homeless}"
    missing = sorted(part for part in FLOOR_OF if not (ROOT / part).exists())
    assert missing == [], f"WING_ORDER names what the repository does not hold: {missing}"


def _docs_wing_order() -> tuple[tuple[str, ...], ...]:
    """The wing order as the table under WING_ORDER_HEADING in docs/architecture.md shows it, bottom to top."""
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    assert WING_ORDER_HEADING in text, f"docs/architecture.md has no section {WING_ORDER_HEADING!r}"
    section = text.split(WING_ORDER_HEADING, 1)[1].split("\n## ", 1)[0]
    rows = [TABLE_ROW.match(line) for line in section.splitlines()]
    numbered = [(int(row.group(1)), tuple(re.findall(r"`([^`]+)`", row.group(2)))) for row in rows if row]
    assert [number for number, _ in numbered] == list(range(1, len(numbered) + 1)), "floors numbered 1, 2, 3, ..."
    return tuple(wing for _, wing in numbered)


def test_the_docs_show_the_wing_order() -> None:
    """The page a reader learns the order from and the order this test enforces are the same."""
    assert _docs_wing_order() == WING_ORDER


def test_a_climb_is_found_anywhere_in_a_file(tmp_path: Path) -> None:
    """Imports at the top, in a function and under TYPE_CHECKING all count; imports down or sideways do not."""
    source = tmp_path / "fake.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from conformance.wire import framing\n"
        "from conformance.targets import registry\n"
        "if TYPE_CHECKING:\n"
        "    from conformance.reference.served import Served\n"
        "def later() -> None:\n"
        "    import conformance.plugin.launcher\n",
        encoding="utf-8",
    )
    climbs = list(_climbs("conformance.targets.fake", source, Path("conformance/targets/fake.py")))
    assert [message.split(":")[:2] for message in climbs] == [
        ["conformance/targets/fake.py", "5 imports conformance.reference.served"],
        ["conformance/targets/fake.py", "7 imports conformance.plugin.launcher"],
    ]
    assert "conformance/targets/ (floor 8) reaches up to conformance/reference/ (floor 10)" in climbs[0]


def test_no_wing_imports_a_wing_above_it() -> None:
    """The wings form a stack (docs/architecture.md, "The wing order"): a wing builds on those below it, so each can
    be read, tested and changed with only what is under it in mind."""
    climbs = [
        message
        for module, path in sorted(_modules().items())
        for message in _climbs(module, path, path.relative_to(ROOT))
    ]
    assert climbs == [], f"{len(climbs)} imports climb the wing order:\n" + "\n".join(climbs)


# --- nothing outside the repository ----------------------------------------------------------------------------------

# Documents that live outside the repository: code and docs must not send a reader to them.
# Spelled in parts, so that a plain search for these names finds no file of the repository, this one included.
_SHARED = "shared"
OUTSIDE_DOCUMENTS = (
    *(f"{name}.md" for name in ("ARCHITECTURE", "CRAFT", "SEMANTICS", "DEVELOPERS")),
    f"../{_SHARED}",
    f"{_SHARED}/spec",
    f"{_SHARED}/design",
)
# What the repository ships and documents (tracked files only; this file names the patterns, so it is left out).
SCANNED = (
    "conformance",
    "models",
    "strategies",
    "suites",
    "reports",
    "tests",
    "docs",
    "README.md",
    "tox.ini",
    "pyproject.toml",
    "mkdocs.yml",
    "action.yml",
    ".ci",
)


def _tracked(paths: tuple[str, ...]) -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z", "--", *paths], cwd=ROOT, capture_output=True, check=True)
    return [ROOT / name for name in listed.stdout.decode("utf-8").split("\0") if name]


def test_nothing_cites_a_document_outside_the_repository() -> None:
    """Whoever clones only this repository must find every document the code and the docs point to."""
    this_file = Path(__file__).resolve()
    files = [path for path in _tracked(SCANNED) if path.resolve() != this_file and path.is_file()]
    assert any(path.name == "architecture.md" for path in files), "the scan sees no docs: is this a git checkout?"
    citations = [
        f"{path.relative_to(ROOT).as_posix()}:{number}: {pattern}"
        for path in files
        for number, line in enumerate(path.read_bytes().decode("utf-8", errors="replace").splitlines(), start=1)
        for pattern in OUTSIDE_DOCUMENTS
        if pattern in line
    ]
    assert citations == [], (
        "references to documents outside the repository (cite the page of docs/ that says it instead: docs/rules.md "
        "for a rule, docs/architecture.md for the code's map):\n" + "\n".join(citations)
    )
