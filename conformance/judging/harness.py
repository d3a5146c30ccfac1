"""Telling the harness's own errors apart from the implementation's: a test that broke because the suite's code
has a bug says nothing about the implementation's timestamps, so its clauses are BLOCKED (not decided), never
FAIL. Pure functions over an exception and the file its innermost frame is in.

The rule is conservative: an error is the harness's only when both hold, and anything else stays a FAIL for a
person to read (as before):
- it is a programming error (`PROGRAMMING_ERRORS`: an index, key, type, attribute or name error), not a clause
  violation, not a missing capability, not a network error or a value the implementation produced;
- its innermost frame is in the harness: a module of the `conformance` package outside the parts that read or
  run what the implementation under test produced (`IMPLEMENTATION_FACING`): the Kafka protocol client decoding
  a broker's bytes, the control-plane client reading its answers, the served reference broker, the seeded
  mutants, the model adapter (the implementation itself under `--target model`), the codec and client library
  adapters. A broker answering garbage that makes the wire client raise is still the implementation's FAIL.
Two more kinds are the harness's wherever they are raised: an `EnvironmentFailure` (conformance.errors), a part
around the implementation that failed, such as a control plane answering 5xx or not reachable: the clock could not
be driven, so the test decided nothing; and Hypothesis' FlakyStrategyDefinition, a test whose draws went another way
on its replay than on its first run: the suite's data generation depended on something outside it, a defect of the
suite's test, not an answer of the implementation (an answer that fails once and passes on the replay is a
FlakyFailure, and stays the implementation's FAIL).
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from hypothesis.errors import FlakyStrategyDefinition

from conformance.errors import EnvironmentFailure

# The errors a bug of the suite's own code raises (a value the implementation produced shows as a ValueError, a
# codec error or a protocol error, and is judged as the implementation's).
PROGRAMMING_ERRORS: tuple[type[BaseException], ...] = (IndexError, KeyError, TypeError, AttributeError, NameError)

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # conformance/

# Parts of conformance/ (relative to it) whose errors may come from what the implementation under test produced.
IMPLEMENTATION_FACING: tuple[str, ...] = (
    "wire",  # the Kafka protocol client: decoding the broker's bytes
    "reference",  # the served reference broker
    "control",  # the client of any control plane reading its answers, and the control plane's server
    "faults",  # seeded mutants: the implementation under --target mutant:ID
    # the model's adapters (broker, client, codec): the implementation under --target model and its mutants
    "targets/libraries/model",
    # library adapters in this process and what they share: reading what the library returned
    "targets/libraries/kafka_python",
    "targets/libraries/aiokafka",
    "targets/libraries/confluent_kafka",
    "targets/libraries/java/java_client.py",
    "targets/libraries/java/java_records.py",
    "targets/libraries/pylibs.py",
    "targets/libraries/pyrecords.py",
    # the client and codec kinds: their protocols, the client rules, the implementations around a library
    "targets/kinds/client_library.py",
    "targets/kinds/client_rules.py",
    "targets/kinds/client_target.py",
    "targets/kinds/codec_library.py",
    "targets/kinds/codec_target.py",
    "targets/routes/wire_adapter/tap.py",  # the client tap: reading what the broker answered a library
)

# The first line of a harness error's message (verdicts.json, the report): the plugin writes it, reports read it.
HARNESS_ERROR_PREFIX = "HARNESS ERROR: "


def in_harness(filename: str | None, package_dir: Path = PACKAGE_DIR) -> bool:
    """Whether `filename` (a frame's code file) is harness code: under `package_dir`, outside IMPLEMENTATION_FACING."""
    if not filename:
        return False
    try:
        relative = Path(filename).resolve().relative_to(package_dir)
    except ValueError:
        return False
    parts = relative.as_posix()
    return not any(parts == part or parts.startswith(part + "/") for part in IMPLEMENTATION_FACING)


def is_harness_error(error: type[BaseException], innermost_file: str | None, package_dir: Path = PACKAGE_DIR) -> bool:
    """Whether an exception of type `error` raised in `innermost_file` is a bug of the harness (the module doc), or
    a failure of its environment wherever it was raised (`EnvironmentFailure`: a control plane that broke)."""
    if issubclass(error, (EnvironmentFailure, FlakyStrategyDefinition)):
        return True
    return issubclass(error, PROGRAMMING_ERRORS) and in_harness(innermost_file, package_dir)


def innermost_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """Where `exc` was raised: the last frame of its traceback (None without one)."""
    tb: TracebackType | None = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    return traceback.FrameSummary(tb.tb_frame.f_code.co_filename, tb.tb_lineno, tb.tb_frame.f_code.co_name)


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def harness_error(exc: BaseException | None, package_dir: Path = PACKAGE_DIR) -> BaseException | None:
    """The harness error behind a failure, or None when the failure may be the implementation's. Hypothesis
    raises several distinct failures as an ExceptionGroup: a harness error only when every one of them is."""
    if exc is None:
        return None
    leaves = list(_leaves(exc))
    for leaf in leaves:
        frame = innermost_frame(leaf)
        if not is_harness_error(type(leaf), frame.filename if frame else None, package_dir):
            return None
    return leaves[0] if leaves else None


def harness_error_text(exc: BaseException) -> str:
    """What a harness error's result says: the prefix, the error and where it was raised, what it means for the
    verdicts, and the traceback (for the bug report)."""
    frame = innermost_frame(exc)
    where = f" at {frame.filename}:{frame.lineno} ({frame.name})" if frame is not None else ""
    trace = "".join(traceback.format_exception(exc)).rstrip()
    if isinstance(exc, EnvironmentFailure):
        return (
            f"{HARNESS_ERROR_PREFIX}a part around the implementation failed: {exc}. This says nothing about the "
            f"implementation's timestamps: the test's clauses are BLOCKED (not decided).\n{trace}"
        )
    return (
        f"{HARNESS_ERROR_PREFIX}the suite's own code raised {type(exc).__name__}: {exc}{where}. This is a bug of "
        "the suite, not a departure of the implementation: the test's clauses are BLOCKED (not decided). Report "
        f"it with this traceback.\n{trace}"
    )
