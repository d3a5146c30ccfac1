"""Expectation files: the clauses an implementation is known to fail, with their evidence.

A file is TOML, one `[[expected]]` table per known failure:

    [[expected]]
    clause = "LO.first-ge-target"                  # required: a catalogue clause ID
    reason = "answers the closest record"          # required: one line of explanation
    link = "https://github.com/org/repo/issues/1"  # required: the upstream issue (or "none")
    test = "suites/test_list_offsets.py::test_first_ge_target"   # optional: the test that pins it
    example = "data=Replay([('topic type', TimestampType.CREATE_TIME), ...])"
                                                   # optional: the minimal counterexample as the
                                                   #   pinned test's keyword arguments (Python)

A failing run prints the entry to paste (section "pin" of the pytest report): the suites draw through
`conformance.draws`, so the counterexample is `data=Replay([...])`, every (label, value) drawn.

A failure of an expected clause is reported KNOWN. With `test` and `example` the counterexample is
added to that Hypothesis test as an `@example`, so the known failure is reproduced on every run
(xfail plus random generation alone is flaky); if that pinned test then passes, the run reports
UNEXPECTED-PASS: the expectation is stale and must be removed.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.clauses import CLAUSES


class ExpectationsError(ValueError):
    """A malformed expectations file; the message names the file, the entry and the fix."""


@dataclass(frozen=True)
class Expectation:
    clause: str
    reason: str
    link: str
    test: str | None = None
    example: str | None = None

    @property
    def pinned(self) -> bool:
        return self.test is not None and self.example is not None


_KNOWN_KEYS = {"clause", "reason", "link", "test", "example"}


def load_expectations(path: str | Path) -> tuple[Expectation, ...]:
    """Parse and check an expectations file (see the module doc for the format)."""
    p = Path(path)
    if not p.is_file():
        raise ExpectationsError(f"expectations file {p} does not exist: pass an existing file to --expectations")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ExpectationsError(f"expectations file {p} is not valid TOML: {exc}") from None
    unknown_top = set(data) - {"expected"}
    if unknown_top:
        raise ExpectationsError(f"{p}: unknown top-level keys {sorted(unknown_top)}: only [[expected]] tables")
    entries = data.get("expected", [])
    if not isinstance(entries, list):
        raise ExpectationsError(f"{p}: 'expected' must be an array of tables ([[expected]])")
    clause_ids = {c.id for c in CLAUSES}
    out: list[Expectation] = []
    for n, entry in enumerate(entries, start=1):
        where = f"{p}: entry {n}"
        if not isinstance(entry, dict):
            raise ExpectationsError(f"{where}: must be a table")
        out.append(_entry(entry, where, clause_ids))
    return tuple(out)


def _entry(entry: dict[str, Any], where: str, clause_ids: set[str]) -> Expectation:
    unknown = set(entry) - _KNOWN_KEYS
    if unknown:
        raise ExpectationsError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(_KNOWN_KEYS)}")
    for key in ("clause", "reason", "link"):
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ExpectationsError(f"{where}: '{key}' is required and must be a non-empty string")
    if entry["clause"] not in clause_ids:
        raise ExpectationsError(
            f"{where}: unknown clause {entry['clause']!r}: `kafka-conformance clauses` lists the IDs"
        )
    for key in ("test", "example"):
        if key in entry and not isinstance(entry[key], str):
            raise ExpectationsError(f"{where}: '{key}' must be a string")
    if ("example" in entry) != ("test" in entry):
        raise ExpectationsError(f"{where}: 'example' and 'test' go together (the example is pinned on that test)")
    if "example" in entry:
        try:
            compile(f"dict({entry['example']})", "<example>", "eval")
        except SyntaxError as exc:
            raise ExpectationsError(
                f"{where}: 'example' must be keyword arguments in Python syntax (a=1, b=[2]): {exc.msg}"
            ) from None
    return Expectation(
        clause=entry["clause"],
        reason=entry["reason"],
        link=entry["link"],
        test=entry.get("test"),
        example=entry.get("example"),
    )


def example_namespace() -> dict[str, object]:
    """Names an `example` may use: the model's values, so a printed counterexample pastes back."""
    import models.constants as constants
    import models.records as records
    from models.config import TopicConfig

    from .draws import Replay

    names: dict[str, object] = {"TopicConfig": TopicConfig, "Replay": Replay}
    # The values the suites' strategies draw (a leader move, a clock move) appear in pins too.
    from strategies.clocks import ClockMove, ClockMoveKind, ProducerClock
    from strategies.failover import LeaderMove
    from strategies.records import Invalidity

    for value in (ClockMove, ClockMoveKind, ProducerClock, LeaderMove, Invalidity):
        names[value.__name__] = value
    for module in (constants, records):
        names.update({k: v for k, v in vars(module).items() if not k.startswith("_")})
    return names


def parse_example(expectation: Expectation) -> dict[str, object]:
    """The pinned example's keyword arguments (evaluated with the model's names only)."""
    assert expectation.example is not None
    # The expectations file is the user's own test input, evaluated with the model's names only.
    value = eval(
        f"dict({expectation.example})", {"__builtins__": {"dict": dict, "range": range}}, example_namespace()
    )
    assert isinstance(value, dict)
    return value
