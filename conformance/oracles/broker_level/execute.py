"""One program against an implementation and the reference model, operation by operation, every answer compared
field by field (conformance.oracles.broker_level.answer_diff).

The implementation must let the suite set its broker clock (CLOCK_CONTROL: Apache Kafka on the suite's clock, the
reference broker): before each operation both sides are set to the program's `now` (Program.clock_at), so a
LogAppendTime stamp, a validation bound or a time-based roll is decided at the same instant on both and compared
exactly. Several Spark tasks share one broker through their own topics, but a broker has one clock: an operation
runs under a `ClockLease`, a file lock that every task on this machine takes before setting the clock and releases
after the answer (tasks reach a managed broker on loopback only, so they all run on this machine).
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.oracles.broker_level.answer_diff import compare
from conformance.oracles.record_layer.case_compare import Difference
from conformance.targets.kinds.implementation import Implementation, UnsupportedOperation
from conformance.targets.libraries.model.model_broker import ModelImplementation
from models.cluster import ProduceResponse
from models.constants import NOT_SERVED, IsolationLevel
from models.records import AnyBatch, build_legacy, build_v2
from strategies.programs import Alter, Fetch, Lookup, MoveClock, Produce, Program, kind_of

UNTIMED_SEGMENT = "untimed-segment"  # a fact: the model's log holds a non-empty segment without timestamps
REMOVED_VERSION = "removed-version"  # a fact: the request's version is below the profile's oldest


class ClockLease:
    """The right to set the shared broker's clock and be answered at it: an exclusive lock on a file named after
    the broker's bootstrap address, in this machine's temporary directory."""

    def __init__(self, bootstrap: str) -> None:
        digest = hashlib.sha256(bootstrap.encode()).hexdigest()[:16]
        self.path = Path(tempfile.gettempdir()) / f"kts-clock-{digest}.lock"

    @contextmanager
    def held(self) -> Iterator[None]:
        with open(self.path, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class OpOutcome:
    index: int
    kind: str
    version: int
    differences: tuple[Difference, ...]
    facts: frozenset[str]
    seconds: float  # the implementation's side, lease included
    unsupported: str | None = None  # the implementation cannot do it (UnsupportedOperation): nothing compared


def batches_of(op: Produce) -> tuple[AnyBatch, ...]:
    """The request's batches, built from the drawn records (FMT-6/7: one v2 batch, or legacy entries/wrapper)."""
    if op.magic >= 2:
        return (build_v2(list(op.records), codec=op.codec, timestamp_type=op.timestamp_type),)
    return tuple(build_legacy(list(op.records), magic=op.magic, codec=op.codec, timestamp_type=op.timestamp_type))


def _untimed(model: ModelImplementation, topic: str) -> bool:
    log = model.cluster.leader_log(topic)
    return any(segment.batches and segment.max_timestamp < 0 for segment in log.segments)


def run_program(
    program: Program, impl: Implementation, model: ModelImplementation, topic: str, lease: ClockLease
) -> list[OpOutcome]:
    """Create `topic` on both sides with the program's configuration, then run every operation; one outcome per
    operation with an answer (a clock move has none)."""
    profile = model.profile
    with lease.held():
        impl.set_clock(0, program.start_ms)
        impl.create_topic(topic, program.config)
    model.set_clock(0, program.start_ms)
    model.create_topic(topic, _in_force(impl, topic, program.config))
    outcomes: list[OpOutcome] = []
    now = program.start_ms
    for index, op in enumerate(program.ops):
        if isinstance(op, MoveClock):
            now = program.clock_at(index + 1)
            continue
        model.set_clock(0, now)
        facts: set[str] = set()
        began = time.monotonic()
        try:
            if isinstance(op, Produce):
                batches = batches_of(op)
                if op.version < profile.produce_versions[0]:
                    facts.add(REMOVED_VERSION)
                with lease.held():
                    impl.set_clock(0, now)
                    observed: Any = impl.produce(topic, 0, batches, produce_version=op.version)
                expected: Any = model.produce(topic, 0, batches, produce_version=op.version)
                version = op.version
            elif isinstance(op, Fetch):
                if op.version < profile.fetch_versions[0]:
                    facts.add(REMOVED_VERSION)
                offset = model.cluster.leader_log(topic).log_start_offset if op.offset is None else op.offset
                observed = impl.fetch(topic, 0, offset, fetch_version=op.version)
                expected = model.fetch(topic, 0, offset, fetch_version=op.version)
                version = op.version
            elif isinstance(op, Lookup):
                if _untimed(model, topic):
                    facts.add(UNTIMED_SEGMENT)
                isolation = IsolationLevel.READ_COMMITTED if op.read_committed else IsolationLevel.READ_UNCOMMITTED
                with lease.held():
                    impl.set_clock(0, now)
                    observed = impl.list_offsets(topic, 0, op.target, version=op.version, isolation=isolation)
                expected = model.list_offsets(topic, 0, op.target, version=op.version, isolation=isolation)
                version = op.version
            else:
                assert isinstance(op, Alter)
                impl.alter_config(topic, op.config)
                observed = expected = _in_force(impl, topic, op.config)
                model.alter_config(topic, observed)
                version = -1
        except UnsupportedOperation as exc:
            outcomes.append(OpOutcome(index, kind_of(op), getattr(op, "version", -1), (), frozenset(facts),
                                      time.monotonic() - began, unsupported=str(exc)))  # fmt: skip
            continue
        seconds = time.monotonic() - began
        if isinstance(observed, ProduceResponse) and expected.error is NOT_SERVED and observed.error is NOT_SERVED:
            # A version the broker no longer serves: it closes the connection, so there is no answer but the
            # closing (the model's NOT_SERVED); the adapter's text describes its own socket, not the broker.
            observed = dataclasses.replace(observed, error_message=expected.error_message)
        differences = tuple(compare(kind_of(op), expected, observed))
        outcomes.append(OpOutcome(index, kind_of(op), version, differences, frozenset(facts), seconds))
    return outcomes


def _in_force(impl: Implementation, topic: str, config: Any) -> Any:
    """The configuration the implementation holds (a wire target may have left out a segment-shaping config its
    broker refused, Kafka 4.1+: segment.bytes of at least 1 MiB; suites.helpers.Twin does the same)."""
    in_force = getattr(impl, "config_in_force", None)
    return config if in_force is None else in_force(topic, config)
