"""The MkDocs hook (mkdocs.yml, `hooks:`): every `{{ name }}` of a page becomes the figure docs/hooks/figures.py reads
from the code, and an unknown name fails the build, so the site never states a count, a version or a table the
code does not give.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

from mkdocs.exceptions import PluginError

_figures: ModuleType | None = None


def on_config(config: Any) -> Any:
    global _figures
    # kafka-python loads its protocol schemas with importlib.resources' legacy API (as pyproject.toml's pytest
    # filter says): not the docs' concern.
    warnings.filterwarnings("ignore", message=r".*is deprecated\. Use files\(\) instead", category=DeprecationWarning)
    root = Path(config.config_file_path).resolve().parent
    # The site describes this checkout, not whatever copy of the package is installed: its code comes first.
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    spec = importlib.util.spec_from_file_location("kts_docs_figures", root / "docs" / "hooks" / "figures.py")
    if spec is None or spec.loader is None:
        raise PluginError("docs/hooks/figures.py cannot be loaded: it must sit beside docs/hooks/placeholders.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _figures = module
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    assert _figures is not None, "on_config runs first"
    try:
        text: str = _figures.substitute(markdown, _figures.figures(), page.file.src_path)
    except KeyError as exc:
        raise PluginError(str(exc.args[0])) from None
    except ImportError as exc:  # the figures import the package and what its parser needs
        raise PluginError(
            f"the docs read their figures from the code, and importing it failed ({exc}): install the package with its "
            "docs extra, pip install -e '.[docs]'"
        ) from None
    return text
