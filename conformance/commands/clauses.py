"""`kafka-conformance clauses`: the clause catalogue as a table or JSON, and its coverage (every clause checked by a
suite test or marked checked elsewhere; every rule of docs/rules.md covered by a clause)."""

from __future__ import annotations

import argparse
import json
import shutil
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from conformance.commands.usage import EXIT_CHECK_FAILED, EXIT_OK, UsageError, check_profile
from models.clauses import CLAUSES, Area, Clause, coverage
from models.profiles import PROFILES
from models.rules import RULE_IDS, UNTESTABLE, parse_semantics


def _area_names() -> str:
    return ", ".join(a.value for a in Area)


def _parse_area(name: str) -> Area:
    wanted = name.strip().lower().replace("_", "-")
    for area in Area:
        if wanted in (area.value, area.prefix.lower()):
            return area
    raise UsageError(f"unknown area {name!r}: choose one of {_area_names()} (e.g. --area list-offsets)")


def _short_profile(name: str) -> str:
    return name.removeprefix("kafka-")


def _profiles_label(profiles: Sequence[str]) -> str:
    """"all", a contiguous range "2.8..4.1" in PROFILES order, or the list."""
    order = list(PROFILES)
    if list(profiles) == order:
        return "all"
    positions = [order.index(p) for p in profiles]
    if len(positions) > 2 and positions == list(range(positions[0], positions[-1] + 1)):
        return f"{_short_profile(profiles[0])}..{_short_profile(profiles[-1])}"
    return " ".join(_short_profile(p) for p in profiles)


def _clause_json(clause: Clause) -> dict[str, object]:
    return {
        "id": clause.id,
        "area": clause.area.value,
        "level": clause.level.value,
        "rules": list(clause.rules),
        "kip": clause.kip,
        "profiles": list(clause.profiles),
        "summary": clause.summary,
        "vectors": list(clause.vectors),
    }


def _table_width() -> int:
    # Readable on an 80-120 column terminal; wider terminals get 120 so lines stay scannable.
    return max(80, min(120, shutil.get_terminal_size(fallback=(100, 24)).columns))


def _print_table(clauses: Sequence[Clause], out: TextIO) -> None:
    """Two lines per clause: ID, level, area, profiles; then KIP, rules and the wrapped summary."""
    width = _table_width()
    id_w = max([len("ID"), *(len(c.id) for c in clauses)])
    level_w = max(len(level) for level in ("LEVEL", "SHOULD"))
    area_w = max(len(a.value) for a in Area)
    indent = " " * 4
    print(f"{'ID':<{id_w}}  {'LEVEL':<{level_w}}  {'AREA':<{area_w}}  PROFILES", file=out)
    print(f"{indent}KIP | RULES | SUMMARY", file=out)
    print("-" * width, file=out)
    for c in clauses:
        print(
            f"{c.id:<{id_w}}  {c.level.value:<{level_w}}  {c.area.value:<{area_w}}  "
            f"{_profiles_label(c.profiles)}",
            file=out,
        )
        text = f"{c.kip} | {', '.join(c.rules)} | {c.summary}"
        for line in textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent):
            print(line, file=out)
    print(f"{len(clauses)} clause{'s' if len(clauses) != 1 else ''}", file=out)


def _read_semantics(path: str) -> tuple[str, ...]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(
            f"rule digest {path!r} not found: pass --semantics PATH to an existing file (e.g. docs/rules.md)"
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise UsageError(
            f"cannot read rule digest {path!r} ({reason}): pass --semantics PATH to a readable "
            "UTF-8 Markdown file"
        ) from None
    rule_ids, _vectors = parse_semantics(text)
    if not rule_ids:
        raise UsageError(
            f"no rule IDs found in {path!r}: expected bold rule headings such as **VAL-4 ...** "
            "(is it a rule digest like docs/rules.md?)"
        )
    return rule_ids


def _print_coverage(rule_ids: Sequence[str], source: str, out: TextIO) -> int:
    uncovered, untested = coverage(rule_ids)
    covered = len(rule_ids) - len(uncovered) - len(untested)
    print(f"rules: {len(rule_ids)} (from {source})", file=out)
    print(f"covered by at least one clause: {covered}", file=out)
    if uncovered:
        print(f"uncovered (no clause cites them, not listed as untestable): {len(uncovered)}", file=out)
        for rule_id in uncovered:
            print(f"  {rule_id}", file=out)
    else:
        print("uncovered: none", file=out)
    print(f"deliberately untested: {len(untested)}", file=out)
    id_w = max([0, *(len(r) for r in untested)])
    hanging = " " * (id_w + 4)
    for rule_id, reason in untested.items():
        lines = textwrap.wrap(
            reason, width=_table_width(), initial_indent=f"  {rule_id:<{id_w}}  ", subsequent_indent=hanging
        )
        print("\n".join(lines), file=out)
    stale = sorted(set(UNTESTABLE) - set(rule_ids))
    if stale:
        print(f"listed as untestable but absent from {source}: {', '.join(stale)}", file=out)
    return EXIT_CHECK_FAILED if uncovered else EXIT_OK


def _print_clause_coverage(out: TextIO) -> int:
    """Clause coverage: per clause, the suite tests that declare it, or where else it is checked and why, or that
    nothing checks it (exit 1 then; conformance.judging.coverage)."""
    from conformance.judging.coverage import CoverageStatus, clause_coverage, format_coverage, with_status

    rows = clause_coverage()
    print("", file=out)
    print(format_coverage(rows), end="", file=out)
    gaps = with_status(rows, CoverageStatus.UNCHECKED) + with_status(rows, CoverageStatus.CONFLICT)
    return EXIT_CHECK_FAILED if gaps else EXIT_OK


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the clauses as a JSON list")
    parser.add_argument(
        "--profile", metavar="NAME", help=f"only clauses for this profile ({', '.join(PROFILES)})"
    )
    parser.add_argument("--area", metavar="NAME", help=f"only clauses of this area ({_area_names()})")
    parser.add_argument(
        "--coverage",
        action="store_true",
        help="list the rules (docs/rules.md) no clause covers and those deliberately untested, then per clause the "
        "suite tests that declare it, or where else it is checked and why; exit 1 if any rule is uncovered "
        "or any clause left unchecked",
    )
    parser.add_argument(
        "--semantics",
        metavar="PATH",
        help="with --coverage (implied): read the rule IDs from this rule digest (docs/rules.md or one in its form) "
        "instead of models/rules.py",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    if args.coverage or args.semantics is not None:
        if args.profile is not None or args.area is not None:
            raise UsageError("--coverage checks the whole catalogue: drop --profile/--area")
        if args.semantics is not None:
            return _print_coverage(_read_semantics(args.semantics), args.semantics, out)
        rules_code = _print_coverage(RULE_IDS, "models/rules.py", out)
        return max(rules_code, _print_clause_coverage(out))
    selected: Sequence[Clause] = CLAUSES
    if args.profile is not None:
        profile = check_profile(args.profile)
        selected = [c for c in selected if profile in c.profiles]
    if args.area is not None:
        area = _parse_area(args.area)
        selected = [c for c in selected if c.area is area]
    if args.json:
        json.dump([_clause_json(c) for c in selected], out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        _print_table(selected, out)
    return EXIT_OK
