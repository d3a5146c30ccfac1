"""docs/rules.md, the project's rule digest, generated from the data the model and the suites use.

The rule IDs (`models.rules`) and the clause catalogue (`models.clauses`) are the source; the document is their
readable form, so it is rendered from them rather than written beside them, and tests/test_docs.py fails when
the committed file differs from `render()`. Regenerate with:

    python -m models.rules_doc --write

(without `--write` it prints the document). The rule lines keep the `**ID** title` form that
`models.rules.parse_semantics` reads, so `kafka-conformance clauses --semantics docs/rules.md` checks the
catalogue against this document like against any other digest.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .clauses import CLAUSES, Clause, Level, clauses_for_rule, clauses_for_vector
from .profiles import PROFILES
from .rules import RULES, UNTESTABLE, VECTORS, Rule

# Where the document lives, relative to the repository root (the parent of this package).
DOC_PATH = Path("docs") / "rules.md"
REGENERATE = "python -m models.rules_doc --write"

_INTRO = f"""\
<!-- Generated from models/rules.py and models/clauses.py by `{REGENERATE}`: do not edit by hand. -->

# Rules and clauses

This is the rule digest the reference model (`models/`), the suites and the reports cite: each rule ID used in
this project's code, clauses and reports is listed here with its title and the clauses that cite it.

**The authority is Apache Kafka.** A rule states one piece of Apache Kafka's message-timestamp behaviour: how a
record format carries timestamps, what the leader accepts and stores on append, how the time index and segments
use timestamps, what ListOffsets answers, what conversion, replication and a consumer see. Where a KIP's text
and Kafka's code disagree (the DIS-* rules), the `kafka-*` behaviour profiles follow the code. Where this
document and Apache Kafka disagree, Kafka is right and the digest has a bug.

**A rule ID** (e.g. VAL-4, IDX-8, LO-6) names one rule: an area prefix and a number. The sections below are
numbered by area; there is no section 9 here because behaviour that differs by Kafka version has no rule IDs of
its own: it is data, the behaviour profiles (`models/profiles.py`, and [the profiles](model.md#behaviour-profiles)).

**A clause** is one testable behaviour, derived from one or more rules: what a test checks and what a verdict
names. Its ID is an area and a kebab-case name (e.g. `LO.first-ge-target`); it has a requirement level (MUST,
SHOULD or MAY, as in RFC 2119), the KIP (or Kafka JIRA) it comes from, the profiles it applies to and one
sentence saying what an implementation must do to pass. `kafka-conformance clauses` lists them.

**A verdict is per clause.** A run gives each clause it checks one verdict (PASS, FAIL, KNOWN, UNSUPPORTED, N/A,
...; [Reading the report](reading-the-report.md#the-verdicts)); a rule has no verdict of its own, its clauses do. A
rule with no clause is marked here with the reason it is not tested.

**Test vectors** (TV-01..TV-27, last section) are facts taken from Apache Kafka's own tests; the project's
tests restate each one (`tests/test_vectors_log.py`, `tests/test_vectors_validation.py`, and others that name
the vector).

Each clause line reads: ID, level, KIP, profiles, then its summary.
"""


def _profiles_label(profiles: Sequence[str]) -> str:
    """"all profiles", or the runs of consecutive profiles (in PROFILES order): "kafka-2.8 to kafka-3.9, kafka-4.1"."""
    if list(profiles) == list(PROFILES):
        return "all profiles"
    order = list(PROFILES)
    runs: list[list[str]] = []
    for name in sorted(profiles, key=order.index):
        if runs and order.index(runs[-1][-1]) + 1 == order.index(name):
            runs[-1].append(name)
        else:
            runs.append([name])
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]} to {run[-1]}" for run in runs)


def _clause_line(clause: Clause) -> str:
    return f"- `{clause.id}` {clause.level.value}, {clause.kip}, {_profiles_label(clause.profiles)}: {clause.summary}"


def _rule_block(rule: Rule, clauses: Sequence[Clause], none: str) -> list[str]:
    # The heading line starts with the bold ID: the form models.rules.parse_semantics reads.
    lines = [f"**{rule.id}** {rule.title}", ""]
    lines += [_clause_line(c) for c in clauses] if clauses else [none]
    return [*lines, ""]


def _counts() -> str:
    levels = {level: sum(1 for c in CLAUSES if c.level is level) for level in Level}
    by_level = ", ".join(f"{n} {level.value}" for level, n in levels.items())
    sections = len(dict.fromkeys(r.section for r in RULES))
    return (
        f"{len(RULES)} rules in {sections} sections, {len(CLAUSES)} clauses ({by_level}), "
        f"{len(PROFILES)} behaviour profiles ({', '.join(PROFILES)}), {len(VECTORS)} test vectors."
    )


def render() -> str:
    """The text of docs/rules.md: the intro, then per section each rule with the clauses citing it, then the
    test vectors with the clauses each restates."""
    lines = [_INTRO, _counts(), ""]
    section = ""
    for rule in RULES:
        if rule.section != section:
            section = rule.section
            lines += [f"## {section}", ""]
        untested = UNTESTABLE.get(rule.id)
        none = f"No clause, deliberately untested: {untested}." if untested else "No clause cites this rule."
        lines += _rule_block(rule, clauses_for_rule(rule.id), none)
    if VECTORS:
        lines += [f"## {VECTORS[0].section}", ""]
        for vector in VECTORS:
            lines += _rule_block(vector, clauses_for_vector(vector.id), "Restates no clause.")
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m models.rules_doc", description=f"print (or --write) {DOC_PATH.as_posix()}"
    )
    parser.add_argument(
        "--write", action="store_true", help=f"write {DOC_PATH.as_posix()} in the repository instead of printing it"
    )
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        target = Path(__file__).resolve().parents[1] / DOC_PATH
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
