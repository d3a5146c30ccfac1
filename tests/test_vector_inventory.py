"""Every test vector TV-01..TV-27 of docs/rules.md is restated by at least one collected test."""

from __future__ import annotations

import ast
from pathlib import Path

from models.rules import VECTOR_IDS

TESTS = Path(__file__).resolve().parent


def _vectors_marked_on_test_functions() -> dict[str, list[str]]:
    """Map each vector ID to the `test_*` functions that carry `@pytest.mark.vector("TV-xx")`."""
    found: dict[str, list[str]] = {}
    for path in sorted(TESTS.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                continue
            for deco in node.decorator_list:
                if (
                    isinstance(deco, ast.Call)
                    and isinstance(deco.func, ast.Attribute)
                    and deco.func.attr == "vector"
                    and deco.args
                    and isinstance(deco.args[0], ast.Constant)
                ):
                    found.setdefault(str(deco.args[0].value), []).append(f"{path.name}::{node.name}")
    return found


def test_every_vector_has_a_test_that_names_it() -> None:
    found = _vectors_marked_on_test_functions()
    missing = [tv for tv in VECTOR_IDS if tv not in found]
    assert not missing, f"test vectors without a test marked @pytest.mark.vector: {missing}"
    unknown = sorted(set(found) - set(VECTOR_IDS))
    assert not unknown, f"tests marked with unknown vector IDs: {unknown}"


def test_vector_tests_name_their_vector() -> None:
    """A test restating TV-nn says so in its name or docstring, so a failure report names the vector."""
    for path in sorted(TESTS.glob("test_vectors_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                for deco in node.decorator_list:
                    if isinstance(deco, ast.Call) and getattr(deco.func, "attr", "") == "vector":
                        tv = str(deco.args[0].value)  # type: ignore[attr-defined]
                        text = node.name.upper().replace("_", "-") + (ast.get_docstring(node) or "")
                        assert tv in text or tv.replace("-", "") in text.replace("-", ""), (
                            f"{path.name}::{node.name} is marked {tv} but does not name it"
                        )
