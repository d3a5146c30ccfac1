"""One operation's answers, the model's against the implementation's, field by field. Pure.

The checks (each difference names one; an explanation matches on it):

- `produce`: the ProduceResponse: error code, base offset, log_append_time, log_start_offset, error message and
  every record error (index and message) (VAL-1..15, KIP-467);
- `fetch`: the FetchResponse: error code, high watermark, log start offset, and every batch served, every field of
  its header (magic, offsets, attributes, base and max timestamp, producer fields, leader epoch) and of each record
  (deltas or timestamps, key, value, headers), inner messages of a legacy wrapper included (CMP-*, CNV-5, CON-1);
- `lookup`: the ListOffsets answer: error code, offset, timestamp, leader epoch (LO-*);
- `alter`: the configuration in force after the change.

Fields left out: a batch's CRC, length and record count, and a legacy entry's size. They are derived from the
fields compared (or are None on both sides: they are set only to craft a lie), and a broker that recompresses
writes other compressed bytes for the same records.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any

from conformance.oracles.record_layer.case_compare import Difference

SKIPPED_FIELDS = frozenset({"crc", "length", "records_count", "size"})
MAX_DIFFERENCES = 12
_REPR_LIMIT = 200


def _shown(value: Any) -> str:
    text = value.name if isinstance(value, Enum) else repr(value)
    return text if len(text) <= _REPR_LIMIT else text[: _REPR_LIMIT - 3] + "..."


def compare(check: str, model: Any, implementation: Any) -> list[Difference]:
    """Every difference between the two answers (empty: they agree). `Difference.kafka` holds the
    implementation's value (a real Kafka's, or whatever the target is)."""
    found: list[Difference] = []

    def add(path: str, ours: Any, theirs: Any) -> None:
        if len(found) < MAX_DIFFERENCES:
            found.append(Difference(check, path, _shown(ours), _shown(theirs)))

    def diff(ours: Any, theirs: Any, path: str) -> None:
        if len(found) >= MAX_DIFFERENCES or ours == theirs:
            return
        if dataclasses.is_dataclass(ours) and type(ours) is type(theirs):
            for f in dataclasses.fields(ours):
                if f.name not in SKIPPED_FIELDS:
                    diff(getattr(ours, f.name), getattr(theirs, f.name), f"{path}.{f.name}" if path else f.name)
        elif isinstance(ours, tuple | list) and isinstance(theirs, tuple | list):
            if len(ours) != len(theirs):
                add(f"{path}.length", len(ours), len(theirs))
            for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
                diff(a, b, f"{path}[{i}]")
        else:
            add(path or "answer", ours, theirs)

    diff(model, implementation, "")
    return found
