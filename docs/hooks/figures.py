"""The figures and tables the docs site reads from the code when it is built, never from a hand-written copy.

A page writes `{{ name }}` where a count, a pinned version or a generated table belongs; `docs/hooks/placeholders.py`
(the MkDocs hook) puts the value of `name` there. Counts that change with the code (clauses, profiles, mutants, suite
tests, targets, test vectors), the versions the targets pin, the CLI reference (from `conformance.cli.build_parser`),
the targets table (from the target registry), the verdicts and the tox environments all come from here, so a page
cannot drift from the code it describes. tests/test_docs.py checks that every placeholder of every page has a value.
"""

from __future__ import annotations

import argparse
import configparser
import functools
import html
import importlib
import re
from collections.abc import Callable, Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# `{{ name }}`: a name is lower case, digits and . : _ - (e.g. `{{ clauses }}`, `{{ pinned.franz-go }}`); an
# expression of a GitHub workflow, `${{ steps.x.outputs.y }}`, is left as it is.
PLACEHOLDER = re.compile(r"(?<!\$)\{\{\s*([a-z0-9.:_-]+)\s*\}\}")
# The width the CLI reference's help texts are wrapped to, whatever the terminal that builds the site.
HELP_WIDTH = 78  # what a code block of the Material theme shows without a scroll bar


def substitute(markdown: str, figures: dict[str, str], where: str) -> str:
    """`markdown` with every placeholder replaced by its figure; a KeyError naming `where` and the unknown name."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in figures:
            known = ", ".join(sorted(figures))
            raise KeyError(f"{where}: unknown placeholder {{{{ {name} }}}}: docs/hooks/figures.py knows {known}")
        return figures[name]

    return PLACEHOLDER.sub(value, markdown)


def placeholders(markdown: str) -> list[str]:
    """The names of the placeholders `markdown` holds, in order."""
    return PLACEHOLDER.findall(markdown)


@functools.cache
def figures() -> dict[str, str]:
    """Every figure and table by placeholder name."""
    found: dict[str, str] = {}
    for source in (_counts, _versions, _tables):
        found.update(source())
    return found


# --- counts -------------------------------------------------------------------------------------------------------


def clauses_by_kind() -> dict[str, set[str]]:
    """Clause IDs the suite tests of each kind declare (a test's `@pytest.mark.kind`, else a broker test): the
    clauses a run against a target of that kind reports a verdict for."""
    from conformance.judging.coverage import declared_clauses
    from conformance.targets.kinds.implementation import Kind

    by_kind: dict[str, set[str]] = {kind.value: set() for kind in Kind}
    for clause_id, tests in declared_clauses().items():
        for node in tests:
            path, name = node.split("::")
            function = getattr(importlib.import_module(path.removesuffix(".py").replace("/", ".")), name)
            marks = [m for m in getattr(function, "pytestmark", []) if m.name == "kind"]
            by_kind[marks[0].args[0] if marks else Kind.BROKER.value].add(clause_id)
    return by_kind


def _counts() -> dict[str, str]:
    from conformance.faults import MUTANTS
    from conformance.judging.coverage import declared_clauses
    from conformance.targets.registry import table
    from models.clauses import CLAUSES, clauses_for_profile
    from models.profiles import DEFAULT_PROFILE, PROFILES
    from models.rules import RULES, VECTORS

    by_kind = clauses_by_kind()
    default = {c.id for c in clauses_for_profile(DEFAULT_PROFILE.name)}
    elsewhere = {c.id for c in CLAUSES if c.checked_elsewhere} & default
    broker = by_kind["broker"]
    kinds = [m.kind.value for m in MUTANTS.values()]
    suite_tests = {node for nodes in declared_clauses().values() for node in nodes}
    counts = {
        "clauses": len(CLAUSES),
        "profiles": len(PROFILES),
        "rules": len(RULES),
        "vectors": len(VECTORS),
        "mutants": len(MUTANTS),
        "mutants.broker": kinds.count("broker"),
        "mutants.codec": kinds.count("codec"),
        "mutants.client": kinds.count("client"),
        "suite-tests": len(suite_tests),
        "targets": len(table()),
        # A run reports one verdict per clause the suites of its target's kind check.
        "verdicts.broker": len(broker),
        "verdicts.codec": len(by_kind["codec"]),
        "verdicts.client": len(by_kind["client"]),
        # The default profile's clauses, by where they are checked.
        "clauses.default": len(default),
        "clauses.default.broker": len(default & broker),
        "clauses.default.codec-client": len(default - broker - elsewhere),
        "clauses.default.elsewhere": len(elsewhere),
    }
    named = {
        "profile.default": DEFAULT_PROFILE.name,
        "profile.names": ", ".join(f"`{name}`" for name in PROFILES),
        "vectors.last": VECTORS[-1].id if VECTORS else "",
    }
    return {name: f"{value:,}" for name, value in counts.items()} | named


def _versions() -> dict[str, str]:
    from conformance.targets.brokers.kafka import KAFKA_LINES, NEWEST_LINE
    from conformance.targets.brokers.kfake import KFAKE_VERSION
    from conformance.targets.libraries import LIBRARIES

    found = {f"pinned.{name}": spec.pinned for name, spec in LIBRARIES.items() if spec.pinned}
    found |= {f"kafka.{line}": exact for line, (exact, _) in KAFKA_LINES.items()}
    found |= {f"kafka.{line}.profile": profile for line, (_, profile) in KAFKA_LINES.items()}
    found |= {
        "kafka.newest": NEWEST_LINE,
        "kafka.newest.release": KAFKA_LINES[NEWEST_LINE][0],
        "kafka.lines": ", ".join(KAFKA_LINES),
        "kafka.oldest": next(reversed(KAFKA_LINES)),
        "kfake.version": KFAKE_VERSION,
    }
    return found


# --- tables -------------------------------------------------------------------------------------------------------


def _cell(text: object) -> str:
    """Text fit for one Markdown table cell: one line, a pipe escaped, and `<release>` shown, not read as HTML."""
    one_line = " ".join(str(text).split())
    return html.escape(one_line, quote=False).replace("|", "\\|")


def _table(header: Iterable[str], rows: Iterable[Iterable[object]]) -> str:
    titles = list(header)
    lines = ["| " + " | ".join(titles) + " |", "|" + "---|" * len(titles)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


def targets_table() -> str:
    from conformance.targets.registry import table

    rows = []
    for spec in table():
        forms = [f"`{spec.name}==VERSION`"] if spec.versions else []
        forms += [f"`{spec.name}=PATH`"] if spec.paths else []
        rows.append((
            _code(spec.name), spec.kind.value, spec.served_by.value, spec.description, spec.obtained,
            _code(f"suites/expectations/{spec.expectations}") if spec.expectations else "none",
            ", ".join(forms) or "pinned only",
            ", ".join(sorted(form.value for form in spec.mutants)) or "",
        ))  # fmt: skip
    return _table(
        ("`--target`", "Kind", "Where it runs", "What it is", "How it is obtained", "Shipped expectations",
         "Other versions", "Mutants"),
        rows,
    )  # fmt: skip


def verdicts_table() -> str:
    from conformance.judging.verdicts import ALLURE_STATUS, FAILS_RUN, MEANING, TRIAGE_ORDER

    return _table(
        ("Verdict", "Meaning", "Fails the run", "In the Allure reports"),
        ((f"**{v.value}**", MEANING[v], "yes" if v in FAILS_RUN else "no", ALLURE_STATUS[v]) for v in TRIAGE_ORDER),
    )


def profiles_table() -> str:
    from models.profiles import DEFAULT_PROFILE, PROFILES

    return _table(
        ("Profile", "Behaviour"),
        ((f"`{p.name}`" + (" (default)" if p is DEFAULT_PROFILE else ""), p.description) for p in PROFILES.values()),
    )


def observables_table() -> str:
    from conformance.judging.observables import Obs

    return _table(("Observable", "What it is"), ((f"`{o.id}`", o.description) for o in Obs))


def facts_table() -> str:
    from conformance.judging.observables import FACTS

    return _table(("`observed_is`", "The value it names"), ((f"`{name}`", meaning) for name, meaning in FACTS.items()))


def kafka_lines_table() -> str:
    """Every Kafka line the suite runs: its pinned release, profile, mode, Maven artifact and file of Kafka's own
    bugs."""
    from conformance.targets.brokers.kafka import KAFKA_LINES, release
    from conformance.targets.registry import expectations_file, parse_target

    rows = []
    for line in KAFKA_LINES:
        found = release(line)
        mode = "ZooKeeper mode (a ZooKeeper of its own)" if found.zookeeper else "KRaft (one combined node)"
        bugs = expectations_file(parse_target(f"kafka:{line}"))
        rows.append((_code(f"kafka:{line}"), found.version, _code(found.profile), mode, _code(found.artifact),
                     _code(f"suites/expectations/{bugs}") if bugs else "none"))  # fmt: skip
    return _table(("Line", "Release", "Profile", "Runs in", "Maven artifact", "Kafka's own bugs"), rows)


def kafka_history_table() -> str:
    """The profile chain, oldest first: the releases each profile describes, what it adds to the one before (its
    description, with the KIP or JIRA), the lines that run as it, and their files of Kafka's own bugs."""
    from conformance.targets.brokers.kafka import HISTORY_TARGETS, KAFKA_LINES, kafka_release, line_of
    from conformance.targets.registry import expectations_file, parse_target
    from models.profiles import PROFILES

    lines_of: dict[str, list[str]] = {}
    for line, (_, profile) in KAFKA_LINES.items():
        lines_of.setdefault(profile, []).insert(0, line)
    # Each line's own target, and the history's releases of it (a release with a bug of its own has its own file).
    targets_of: dict[str, list[str]] = {line: [f"kafka:{line}"] for line in KAFKA_LINES}
    for name in HISTORY_TARGETS:
        line = ".".join(map(str, line_of(kafka_release(parse_target(name)).numbers)))
        targets_of.setdefault(line, []).append(name)
    rows = []
    for profile in PROFILES.values():
        lines = lines_of.get(profile.name, [])
        files = (expectations_file(parse_target(t)) for ln in lines for t in targets_of[ln])
        bugs = sorted({b for b in files if b})
        rows.append((
            profile.kafka_version, _code(profile.name), profile.description,
            ", ".join(_code(f"kafka:{ln}") for ln in lines) or "not a target yet",
            ", ".join(_code(f"suites/expectations/{b}") for b in bugs) or "none",
        ))  # fmt: skip
    return _table(("Kafka", "Profile", "What it adds to the one before", "Lines run as it", "Kafka's own bugs"), rows)


def kafka_clause_history_table() -> str:
    """The clauses whose applicability changed over Kafka's history: the profiles (oldest first) where each
    applies, as ranges of the chain."""
    from models.clauses import CLAUSES
    from models.profiles import PROFILES

    chain = list(PROFILES)
    rows = []
    for clause in CLAUSES:
        if len(clause.profiles) == len(chain):
            continue
        rows.append((_code(clause.id), _profile_ranges(chain, set(clause.profiles)), clause.kip, clause.summary))
    return _table(("Clause", "Applies to", "KIP", "What it says"), rows)


def _profile_ranges(chain: list[str], chosen: set[str]) -> str:
    """`chosen` profiles as runs of the chain: "kafka-3.0 to kafka-3.8, kafka-4.2 on", or "none"."""
    runs: list[tuple[int, int]] = []
    for index, name in enumerate(chain):
        if name in chosen:
            if runs and runs[-1][1] == index - 1:
                runs[-1] = (runs[-1][0], index)
            else:
                runs.append((index, index))
    parts = []
    for first, last in runs:
        if last == len(chain) - 1 and first > 0:
            parts.append(f"{chain[first]} on")
        elif first == last:
            parts.append(chain[first])
        else:
            parts.append(f"{chain[first]} to {chain[last]}")
    return ", ".join(parts) or "none"


def pinned_table() -> str:
    from conformance.targets.brokers.kafka import KAFKA_LINES, artifact_of
    from conformance.targets.libraries import LIBRARIES

    rows: list[tuple[object, ...]] = [
        (_code(f"kafka:{line}"), "Apache Kafka", artifact_of(exact), "Maven Central", f"{exact} (profile `{profile}`)")
        for line, (exact, profile) in KAFKA_LINES.items()
    ]
    rows += [
        (_code(name), spec.language, spec.package, spec.registry, spec.pinned)
        for name, spec in LIBRARIES.items()
        if spec.pinned
    ]
    return _table(("Library or line", "Language", "Package", "From", "Pinned version"), rows)


def tox_table() -> str:
    """Every tox environment of tox.ini with its description, those the default `tox` runs marked."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(REPO / "tox.ini", encoding="utf-8")
    default = parser.get("tox", "env_list").replace(",", " ").split()
    envs = {"py": parser.get("testenv", "description")}
    envs |= {
        section.removeprefix("testenv:"): parser.get(section, "description", fallback="")
        for section in parser.sections()
        if section.startswith("testenv:")
    }
    order = [name for name in default if name in envs] + [name for name in envs if name not in default]
    return _table(
        ("Env", "In the default `tox`", "What it does"),
        ((f"`{name}`", "yes" if name in default else "", envs[name]) for name in order),
    )


def cli_reference() -> str:
    """The help of `kafka-conformance` and of each subcommand, as argparse prints it."""
    from conformance.cli import build_parser

    parser = build_parser(complete=True)
    parts = [_help(parser)]
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in commands.choices.items():
        parts.append(f"## {parser.prog} {name}\n\n{_help(sub)}")
    return "\n\n".join(parts)


def _help(parser: argparse.ArgumentParser) -> str:
    wrapped: Callable[..., argparse.HelpFormatter] = functools.partial(parser.formatter_class, width=HELP_WIDTH)
    parser.formatter_class = wrapped
    return f"```text\n{parser.format_help().rstrip()}\n```"


def _tables() -> dict[str, str]:
    return {
        "table.targets": targets_table(),
        "table.verdicts": verdicts_table(),
        "table.profiles": profiles_table(),
        "table.observables": observables_table(),
        "table.facts": facts_table(),
        "table.pinned": pinned_table(),
        "table.kafka-lines": kafka_lines_table(),
        "table.kafka-history": kafka_history_table(),
        "table.kafka-clause-history": kafka_clause_history_table(),
        "table.tox": tox_table(),
        "cli": cli_reference(),
    }
