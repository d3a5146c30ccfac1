"""Records and batches as producers send them, and crafted bad ones (FMT-*, VAL-8, VAL-13, VAL-15).

`batches()` returns what a well-behaved producer at a given magic puts in one Produce request for one
partition (the models' builders: one v2 batch, or legacy entries: one per record uncompressed, one
wrapper compressed). `invalid_batches()` returns the same shapes with one crafted defect, labelled
by an `Invalidity` kind. Keys, values and headers are small (up to 32 bytes) so runs stay fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from enum import StrEnum

from hypothesis import strategies as st

from models.constants import (
    LONG_MAX,
    LONG_MIN,
    MAGIC_V1,
    MAGIC_V2,
    TIMESTAMP_TYPE_MASK,
    Codec,
    TimestampType,
)
from models.records import (
    AnyBatch,
    DefaultBatch,
    Header,
    LegacyBatch,
    RecordSpec,
    build_legacy,
    build_v2,
)

from .timestamps import below_minus_one

MAX_PAYLOAD_BYTES = 32
ALL_CODECS: tuple[Codec, ...] = tuple(Codec)
LEGACY_CODECS: tuple[Codec, ...] = (Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4)


def codecs_for_magic(magic: int) -> tuple[Codec, ...]:
    """FMT-4: zstd exists only for magic 2."""
    return ALL_CODECS if magic == MAGIC_V2 else LEGACY_CODECS


def combinations(magics: Sequence[int], codecs: Sequence[Codec]) -> tuple[tuple[int, Codec], ...]:
    """The (magic, codec) pairs a producer can send among those asked (zstd only with magic 2)."""
    pairs = tuple((m, c) for m in magics for c in codecs if c in codecs_for_magic(m))
    if not pairs:
        raise ValueError(f"no producible (magic, codec) pair among magics {tuple(magics)} and codecs {tuple(codecs)}")
    return pairs


def payloads() -> st.SearchStrategy[bytes | None]:
    """A key or value: null or up to 32 bytes."""
    return st.none() | st.binary(max_size=MAX_PAYLOAD_BYTES)


def headers() -> st.SearchStrategy[tuple[Header, ...]]:
    """v2 record headers (FMT-11); legacy formats have none."""
    header = st.builds(
        Header,
        key=st.text(alphabet="abcdefghijklmnopqrstuvwxyz-._", min_size=1, max_size=12),
        value=payloads(),
    )
    return st.lists(header, max_size=3).map(tuple)


def record_specs(
    ts_strategy: st.SearchStrategy[int],
    *,
    min_size: int = 1,
    max_size: int = 8,
    with_headers: bool = True,
) -> st.SearchStrategy[list[RecordSpec]]:
    """Records as a producer hands them to the builders: timestamp from `ts_strategy`, small key,
    value and (when `with_headers`) headers."""
    spec = st.builds(
        RecordSpec,
        timestamp=ts_strategy,
        key=payloads(),
        value=payloads(),
        headers=headers() if with_headers else st.just(()),
    )
    return st.lists(spec, min_size=min_size, max_size=max_size)


def deltas_fit_int64(specs: Sequence[RecordSpec]) -> bool:
    """FMT-11: a v2 TimestampDelta is an int64 (varlong); Java would wrap an overflowing delta, the
    model's encoder refuses it, so such record sets (e.g. -1 next to Long.MAX_VALUE) are skipped."""
    if not specs:
        return True
    base = specs[0].timestamp
    return all(LONG_MIN <= s.timestamp - base <= LONG_MAX for s in specs)


@st.composite
def producer_fields(draw: st.DrawFn) -> tuple[int, int, int]:
    """(producer_id, producer_epoch, base_sequence): unset (-1s) or those of an idempotent producer."""
    if not draw(st.booleans()):
        return (-1, -1, -1)
    return (draw(st.integers(0, 1_000)), draw(st.integers(0, 5)), draw(st.integers(0, 1_000)))


@st.composite
def batches(
    draw: st.DrawFn,
    ts_strategy: st.SearchStrategy[int],
    *,
    magics: Sequence[int] = (MAGIC_V2,),
    codecs: Sequence[Codec] = ALL_CODECS,
    timestamp_types: Sequence[TimestampType] = (TimestampType.CREATE_TIME,),
    min_records: int = 1,
    max_records: int = 8,
    base_offset: int = 0,
    producer: bool = True,
) -> tuple[AnyBatch, ...]:
    """What a producer sends to one partition in one request: any (magic, codec) pair asked (zstd only
    with magic 2, FMT-4), a timestamp type among those asked (LogAppendTime = the producer set the
    flag, VAL-8; meaningless for magic 0), built by `build_v2` (with optional idempotent-producer
    fields when `producer`) or `build_legacy` (uncompressed: one entry per record; compressed: one
    wrapper whose timestamp is the inner max, FMT-7)."""
    magic, codec = draw(st.sampled_from(combinations(magics, codecs)))
    timestamp_type = draw(st.sampled_from(tuple(timestamp_types)))
    specs = draw(record_specs(ts_strategy, min_size=min_records, max_size=max_records, with_headers=magic == MAGIC_V2))
    if magic != MAGIC_V2:
        return build_legacy(specs, magic=magic, base_offset=base_offset, codec=codec, timestamp_type=timestamp_type)
    if not deltas_fit_int64(specs):
        # Rare (needs values near both ends of int64): fall back to one record, always encodable.
        specs = specs[:1]
    pid, epoch, seq = draw(producer_fields()) if producer else (-1, -1, -1)
    return (
        build_v2(
            specs,
            base_offset=base_offset,
            codec=codec,
            timestamp_type=timestamp_type,
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=seq,
        ),
    )


# --------------------------------------------------------------------------------------------
# Crafted bad input


class Invalidity(StrEnum):
    """The defects `invalid_batches` crafts, with the rules they exercise."""

    # VAL-8: a producer set the LogAppendTime bit (rejected, or in 3.6+ accepted on CreateTime topics).
    PRODUCER_LOG_APPEND_TIME = "producer-log-append-time"
    # FMT-7: a compressed v1 wrapper whose timestamp is not the max of its inner messages.
    WRAPPER_NOT_MAX = "wrapper-not-max"
    # VAL-13 / FMT-11: a v2 header MaxTimestamp that is not the max of the record timestamps.
    HEADER_MAX_NOT_MAX = "header-max-not-max"
    # FMT-8 / VAL-15: a record timestamp below -1 (Java writers refuse it, the broker does not).
    TIMESTAMP_BELOW_MINUS_ONE = "timestamp-below-minus-one"
    # FMT-11: a v2 record delta far from zero (|delta| >= 2**40 ms, ~35 years), base + delta in int64.
    HUGE_DELTA = "huge-delta"
    # FMT-11: BaseTimestamp above a record's timestamp (negative delta): not what the Java builder
    # writes for the first record, legal for any other client.
    NEGATIVE_DELTA = "negative-delta"


HUGE_DELTA_MS = 1 << 40


def invalidity_magics(kind: Invalidity) -> tuple[int, ...]:
    """The magics a defect can be expressed in (v0 has no timestamp at all, FMT-2)."""
    if kind is Invalidity.WRAPPER_NOT_MAX:
        return (MAGIC_V1,)
    if kind in (Invalidity.PRODUCER_LOG_APPEND_TIME, Invalidity.TIMESTAMP_BELOW_MINUS_ONE):
        return (MAGIC_V1, MAGIC_V2)
    return (MAGIC_V2,)


def _kind_pairs(kind: Invalidity, pairs: Sequence[tuple[int, Codec]]) -> tuple[tuple[int, Codec], ...]:
    ok = [(m, c) for m, c in pairs if m in invalidity_magics(kind)]
    if kind is Invalidity.WRAPPER_NOT_MAX:
        ok = [(m, c) for m, c in ok if c is not Codec.NONE]
    return tuple(ok)


def _set_lat_bit(batch: AnyBatch) -> AnyBatch:
    """Set bit 3 without touching the timestamps (a producer that sets the flag, VAL-8)."""
    if isinstance(batch, DefaultBatch):
        return replace(batch, attributes=batch.attributes | TIMESTAMP_TYPE_MASK, crc=None)
    message = replace(batch.message, attributes=batch.message.attributes | TIMESTAMP_TYPE_MASK, crc=None)
    return replace(batch, message=message)


@st.composite
def labelled_invalid_batches(
    draw: st.DrawFn,
    ts_strategy: st.SearchStrategy[int],
    *,
    magics: Sequence[int] = (MAGIC_V1, MAGIC_V2),
    codecs: Sequence[Codec] = ALL_CODECS,
    kinds: Sequence[Invalidity] = tuple(Invalidity),
    min_records: int = 1,
    max_records: int = 8,
    base_offset: int = 0,
) -> tuple[Invalidity, tuple[AnyBatch, ...]]:
    """(kind, batches): the batches of one producer request with exactly the defect `kind` crafted in
    (other records stay as `ts_strategy` draws them). Kinds that cannot be expressed with the magics
    and codecs asked are left out; none left is a ValueError."""
    pairs = combinations(magics, codecs)
    usable = [k for k in kinds if _kind_pairs(k, pairs)]
    if not usable:
        raise ValueError(f"no invalidity among {tuple(kinds)} fits magics {tuple(magics)} and codecs {tuple(codecs)}")
    kind = draw(st.sampled_from(usable))
    magic, codec = draw(st.sampled_from(_kind_pairs(kind, pairs)))
    min_size = max(min_records, 2) if kind in (Invalidity.HUGE_DELTA, Invalidity.NEGATIVE_DELTA) else min_records
    specs = draw(
        record_specs(
            ts_strategy, min_size=min_size, max_size=max(max_records, min_size), with_headers=magic == MAGIC_V2
        )
    )
    if not deltas_fit_int64(specs):
        specs = specs[:1] * min_size
    position = draw(st.integers(0, len(specs) - 1))

    if kind is Invalidity.TIMESTAMP_BELOW_MINUS_ONE:
        bad = draw(below_minus_one())
        specs = [replace(s, timestamp=bad) if i == position else s for i, s in enumerate(specs)]
        if magic == MAGIC_V2 and not deltas_fit_int64(specs):
            # The defect is the sign, not a delta overflow: give every record the bad value.
            specs = [replace(s, timestamp=bad) for s in specs]
        return kind, _build(specs, magic, codec, base_offset)

    if kind is Invalidity.PRODUCER_LOG_APPEND_TIME:
        built = _build(specs, magic, codec, base_offset)
        return kind, tuple(_set_lat_bit(b) for b in built)

    if kind is Invalidity.WRAPPER_NOT_MAX:
        true_max = max(s.timestamp for s in specs)
        # Below the max (an old client writing the first timestamp, or a stale one) or above it.
        wrong = draw(st.sampled_from((true_max - 1, true_max + 1, specs[0].timestamp - 1, -1)))
        if wrong == true_max or wrong < LONG_MIN or wrong > LONG_MAX:
            wrong = true_max - 1 if true_max > LONG_MIN else true_max + 1
        return kind, build_legacy(specs, magic=magic, base_offset=base_offset, codec=codec, wrapper_timestamp=wrong)

    batch = build_v2(specs, base_offset=base_offset, codec=codec)
    if kind is Invalidity.HEADER_MAX_NOT_MAX:
        true_max = batch.max_timestamp
        shift = draw(st.sampled_from((-1, 1, -60_000, 60_000)))
        wrong = true_max + shift if LONG_MIN <= true_max + shift <= LONG_MAX else true_max - shift
        return kind, (replace(batch, max_timestamp=wrong, crc=None),)

    # HUGE_DELTA / NEGATIVE_DELTA: rewrite one record's delta (not the first: it defines the base) and
    # keep MaxTimestamp consistent, so the delta is the only oddity.
    index = draw(st.integers(1, len(batch.records_) - 1))
    base = batch.base_timestamp
    if kind is Invalidity.HUGE_DELTA:
        magnitude = draw(st.integers(HUGE_DELTA_MS, HUGE_DELTA_MS * 64))
        candidates = [d for d in (magnitude, -magnitude) if LONG_MIN <= base + d <= LONG_MAX]
        delta = draw(st.sampled_from(candidates))
    else:
        delta = -draw(st.integers(1, 3_600_000))
        if base + delta < LONG_MIN:
            base_shift = -delta
            batch = replace(batch, base_timestamp=base + base_shift)
            base = batch.base_timestamp
    records = tuple(replace(r, timestamp_delta=delta) if i == index else r for i, r in enumerate(batch.records_))
    max_ts = max(base + r.timestamp_delta for r in records)
    return kind, (replace(batch, records_=records, max_timestamp=max_ts, crc=None),)


def _build(specs: Sequence[RecordSpec], magic: int, codec: Codec, base_offset: int) -> tuple[AnyBatch, ...]:
    if magic == MAGIC_V2:
        return (build_v2(specs, base_offset=base_offset, codec=codec),)
    return build_legacy(specs, magic=magic, base_offset=base_offset, codec=codec)


def invalid_batches(
    ts_strategy: st.SearchStrategy[int],
    *,
    magics: Sequence[int] = (MAGIC_V1, MAGIC_V2),
    codecs: Sequence[Codec] = ALL_CODECS,
    kinds: Sequence[Invalidity] = tuple(Invalidity),
    min_records: int = 1,
    max_records: int = 8,
    base_offset: int = 0,
) -> st.SearchStrategy[tuple[AnyBatch, ...]]:
    """Crafted bad input, shaped like `batches()` (see `labelled_invalid_batches` for the kind)."""
    return labelled_invalid_batches(
        ts_strategy,
        magics=magics,
        codecs=codecs,
        kinds=kinds,
        min_records=min_records,
        max_records=max_records,
        base_offset=base_offset,
    ).map(lambda labelled: labelled[1])


__all__ = [
    "ALL_CODECS",
    "LEGACY_CODECS",
    "AnyBatch",
    "Invalidity",
    "LegacyBatch",
    "batches",
    "codecs_for_magic",
    "combinations",
    "headers",
    "invalid_batches",
    "labelled_invalid_batches",
    "payloads",
    "producer_fields",
    "record_specs",
]
