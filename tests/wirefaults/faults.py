"""Single realistic timestamp bugs, each a small named object that rewrites one field of one kind of answer.

A fault gets the decoded request (for the APIs the proxy decodes: ListOffsets, to know the targets), the
decoded answer (kafka-python objects, changed in place), the API version and what the proxy knows of the
topics; it returns how many fields it changed (0: this answer is passed on byte for byte).

`FAULTS` is a registry of the mutants' shape (conformance.faults.seeded): each fault's record says its id, kind
broker (a broker's bug), the clauses whose tests can see it (the run's `--clauses`), one sentence ending with the
rules it breaks, and the Fault class that builds it.
Chosen so that Tansu 0.6.0 does not already show the same departure (suites/expectations/tansu.toml):
its timestamp lookups search its own append clock, so a wrong lookup offset is already a known departure there;
Tansu closes the connection on MAX_TIMESTAMP (-3) and never applies LogAppendTime, so the bugs "MAX_TIMESTAMP
answers the last record holding the max", "log_append_time off by one on LogAppendTime topics" and "the
LogAppendTime bit cleared on fetch" have nothing to act on there; their mirror images on CreateTime topics
stand in for the last two.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from conformance.faults.seeded import FaultRegistry, SeededFault
from conformance.targets.kinds.implementation import Kind
from conformance.wire.client import FETCH, LIST_OFFSETS, PRODUCE
from models.constants import TIMESTAMP_TYPE_MASK, TimestampType
from models.records import DefaultBatch

from .batches import rewrite_v2_headers
from .topics import TopicBook

__all__ = [
    "FAULTS",
    "LOOKUP_NEXT_OFFSET",
    "CreateTimeAnswersLogAppendTime",
    "EarliestAnswersNextOffset",
    "Fault",
    "LatestIsHighWatermarkMinusOne",
    "LeaderEpochUnknown",
    "LogAppendTimeBitOnCreateTime",
    "LookupAnswersNextOffset",
    "MaxTimestampOfLastRecord",
    "WireFault",
    "fault_named",
]

LATEST = -1
EARLIEST = -2
NO_LEADER_EPOCH = -1
NO_TIMESTAMP = -1


class Fault(ABC):
    """One bug in the broker's answers to one API (`api_key`)."""

    api_key: ClassVar[int]

    @abstractmethod
    def rewrite(self, request: Any, response: Any, version: int, topics: TopicBook) -> int:
        """Change `response` in place; the number of fields changed."""


WireFault = SeededFault[type[Fault]]
# Not registered: LOOKUP_NEXT_OFFSET. Tansu's timestamp lookup searches its own append times, not the records'
# timestamps (probed: records stamped now+5, +1, +9, +3 in four batches; target now+4 answers offset 1, a target
# past every record answers 0 or 1), so tansu.toml must cover any offset under the lookup clauses and an off-by-one
# there is indistinguishable from Tansu's own departure. It stays for targets whose lookups are right.
FAULTS: FaultRegistry[WireFault] = FaultRegistry("wire fault")

_F = TypeVar("_F", bound=type[Fault])


def _wire_fault(fault_id: str, description: str, clauses: Sequence[str]) -> Callable[[_F], _F]:
    def register(cls: _F) -> _F:
        FAULTS.register(SeededFault(fault_id, Kind.BROKER, tuple(clauses), description, cls))
        return cls

    return register


def fault_named(name: str) -> WireFault:
    """The wire fault `name` (UnknownFault, a KeyError, naming the faults otherwise)."""
    return FAULTS[name]


# -- ListOffsets


def _targets(request: Any) -> dict[tuple[str, int], int]:
    """(topic, partition) -> the timestamp (target) the request asked for."""
    return {(t.name, p.partition_index): p.timestamp for t in request.topics for p in t.partitions}


def _answered(request: Any, response: Any) -> list[tuple[int, Any]]:
    """(target, partition answer) for every partition answered without error."""
    targets = _targets(request)
    return [
        (targets[(t.name, p.partition_index)], p)
        for t in response.topics
        for p in t.partitions
        if p.error_code == 0 and (t.name, p.partition_index) in targets
    ]


class _OffsetShift(Fault):
    """A ListOffsets answer found without error, to the targets `moves` picks, off by `shift` offsets."""

    api_key = LIST_OFFSETS
    shift: ClassVar[int]

    @abstractmethod
    def moves(self, target: int) -> bool:
        """Whether the answer to `target` is moved."""

    def rewrite(self, request: Any, response: Any, version: int, topics: TopicBook) -> int:
        if version < 1:  # v0 answers a list of offsets; the suite asks v1+
            return 0
        changed = 0
        for target, answer in _answered(request, response):
            if self.moves(target) and answer.offset >= 0:
                answer.offset += self.shift
                changed += 1
        return changed


@_wire_fault(
    "latest-hw-minus-one",
    "ListOffsets LATEST (-1) answers the high watermark - 1, the last offset and not the next one (LO-1).",
    ("LO.latest-is-high-watermark",),
)
class LatestIsHighWatermarkMinusOne(_OffsetShift):
    shift = -1

    def moves(self, target: int) -> bool:
        return target == LATEST


class LookupAnswersNextOffset(_OffsetShift):
    """Not in FAULTS (see there): its record is LOOKUP_NEXT_OFFSET."""

    shift = 1

    def moves(self, target: int) -> bool:
        return target >= 0


LOOKUP_NEXT_OFFSET: WireFault = SeededFault(
    "lookup-next-offset",
    Kind.BROKER,
    ("LO.first-ge-target", "IDX.segment-search-first-ge"),
    "A timestamp lookup that finds a record answers the offset after it, offset + 1 (LO-2, IDX-8).",
    LookupAnswersNextOffset,
)


@_wire_fault(
    "earliest-next-offset",
    "ListOffsets EARLIEST (-2) answers the log start offset + 1 (LO-5).",
    ("LO.earliest-is-log-start",),
)
class EarliestAnswersNextOffset(_OffsetShift):
    shift = 1

    def moves(self, target: int) -> bool:
        return target == EARLIEST


@_wire_fault(
    "leader-epoch-unknown",
    "ListOffsets v4+ answers leader epoch -1 (unknown) instead of the epoch of the batch found (LO-2, "
    "KIP-320).",
    ("LO.epoch-of-found-batch", "LO.latest-is-high-watermark"),
)
class LeaderEpochUnknown(Fault):
    api_key = LIST_OFFSETS

    def rewrite(self, request: Any, response: Any, version: int, topics: TopicBook) -> int:
        if version < 4:  # no leader epoch before v4
            return 0
        changed = 0
        for _, answer in _answered(request, response):
            if answer.leader_epoch != NO_LEADER_EPOCH:
                answer.leader_epoch = NO_LEADER_EPOCH
                changed += 1
        return changed


# -- Produce


@_wire_fault(
    "log-append-time-on-create-time",
    "Produce v2+ answers the broker's clock as log_append_time on a CreateTime topic, where -1 is due "
    "(VAL-12).",
    ("VAL.createtime-response-minus-one",),
)
class CreateTimeAnswersLogAppendTime(Fault):
    api_key = PRODUCE

    def rewrite(self, request: Any, response: Any, version: int, topics: TopicBook) -> int:
        if version < 2:  # no log_append_time before v2
            return 0
        changed = 0
        now = time.time_ns() // 1_000_000
        for topic in response.responses:
            name = topics.name(getattr(topic, "name", None), getattr(topic, "topic_id", None))
            if topics.timestamp_type(name) is not TimestampType.CREATE_TIME:
                continue
            for answer in topic.partition_responses:
                if answer.error_code == 0 and answer.log_append_time_ms == NO_TIMESTAMP:
                    answer.log_append_time_ms = now
                    changed += 1
        return changed


# -- Fetch


class _FetchedBatchFault(Fault):
    """A fault in the header of fetched v2 batches (see batches.py), on the topics `applies_to` picks."""

    api_key = FETCH

    def applies_to(self, timestamp_type: TimestampType) -> bool:
        return timestamp_type is TimestampType.CREATE_TIME

    @abstractmethod
    def edit(self, batch: DefaultBatch) -> tuple[int, int] | None:
        """The batch's new (attributes, max_timestamp), or None."""

    def rewrite(self, request: Any, response: Any, version: int, topics: TopicBook) -> int:
        changed = 0
        for topic in response.responses:
            name = topics.name(getattr(topic, "topic", None), getattr(topic, "topic_id", None))
            if not self.applies_to(topics.timestamp_type(name)):
                continue
            for partition in topic.partitions:
                if partition.records:
                    partition.records, count = rewrite_v2_headers(bytes(partition.records), self.edit)
                    changed += count
        return changed


@_wire_fault(
    "max-timestamp-last-record",
    "A fetched v2 batch's MaxTimestamp is its last record's timestamp, not the largest, CRC recomputed "
    "(VAL-13, FMT-11).",
    ("VAL.header-max-recomputed", "CMP.inplace-createtime-untouched", "CON.v2-createtime-base-plus-delta"),
)
class MaxTimestampOfLastRecord(_FetchedBatchFault):
    def edit(self, batch: DefaultBatch) -> tuple[int, int] | None:
        if not batch.records_ or batch.attributes & TIMESTAMP_TYPE_MASK:
            return None
        last = batch.base_timestamp + batch.records_[-1].timestamp_delta  # FMT-11: base + delta
        return batch.attributes, last


@_wire_fault(
    "lat-bit-on-create-time",
    "A fetched v2 batch of a CreateTime topic carries the LogAppendTime type bit, CRC recomputed (FMT-10, "
    "FMT-12, CON-1).",
    ("VAL.header-max-recomputed", "CMP.inplace-createtime-untouched", "CON.v2-createtime-base-plus-delta"),
)
class LogAppendTimeBitOnCreateTime(_FetchedBatchFault):
    def edit(self, batch: DefaultBatch) -> tuple[int, int] | None:
        if not batch.records_ or batch.attributes & TIMESTAMP_TYPE_MASK:
            return None
        return batch.attributes | TIMESTAMP_TYPE_MASK, batch.max_timestamp
