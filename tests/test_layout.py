"""Meta tests of the package's shape (docs/architecture.md): the dependency direction between the
top-level packages, no import cycles, the wings of conformance/, and comments that say why instead of citing
an issue number. Pure: every module is parsed with ast, nothing is imported or run."""

from __future__ import annotations

import ast
import io
import re
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


def _imports(module: str, path: Path) -> set[str]:
    """The project modules `module` imports anywhere in its body (functions, TYPE_CHECKING blocks included).

    `from P import N` counts as an import of P.N when that is a module, else of P (a package's __init__). The
    packages above an imported module are not counted: Python runs them first, and a package whose __init__
    imports its own submodules would otherwise form a cycle with each of them."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, path, node)
            names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in _modules() else source
                     for alias in node.names]
        for name in names:
            target = _resolve(name)
            if target is not None and target != module:
                found.add(target)
    return found


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
    names = Counter(path.name for path in _python_files("conformance") if path.name not in {"__init__.py",
                                                                                            "__main__.py"})
    repeated = {name: sorted(str(p.relative_to(ROOT)) for p in _python_files("conformance") if p.name == name)
                for name, count in names.items() if count > 1}
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
