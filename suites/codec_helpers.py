"""Shared helpers of the codec suites (suites/test_codec_*.py): the library under test beside the reference codec
(conformance.targets.libraries.model.model_codec.ModelCodec), capability gating, and the clause-naming comparisons of
what a library
writes, reads and converts with what the model does for the same input.

Every comparison goes through the model's own codec: a library's bytes are decoded with models/codec.py and
compared field by field with the model's bytes for the same request (so a layout fault is a layout clause's,
a wrong header field its header clause's); a library's reading of bytes the model wrote is compared with the
model's reading of them. The most specific clause comes first (layout, then offsets, then header fields, then
the records), and a check stops a comparison only where what follows would repeat the same departure.

A clause is checked only where the catalogue says it applies to the run's profile (models/clauses.py): under a
profile where it does not, it stays N/A, never PASS. Run the codec targets under kafka-2.8 for the v0/v1 reader
clauses (CON.v0/v1-*: brokers from 3.0 serve no v0/v1 records a client wrote) and under kafka-3.9 or later for
the delete-horizon flag (KIP-534, 3.1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pytest
from hypothesis import strategies as st

from conformance.judging.capabilities import Capability, CodecCapability
from conformance.judging.checks import check_equal
from conformance.judging.observables import Obs, nanosecond_wrapped_written
from conformance.judging.verdicts import UNSUPPORTED_PREFIX
from conformance.targets.kinds.codec_library import BatchRequest, CodecRefused, ReadBatch, RecordCodecLibrary
from conformance.targets.kinds.implementation import Implementation
from conformance.targets.libraries.model.model_codec import ModelCodec
from models.clauses import get_clause
from models.codec import decode_batches, encode_batches
from models.constants import (
    DELETE_HORIZON_MASK,
    LONG_MAX,
    MAGIC_V0,
    MAGIC_V1,
    MAGIC_V2,
    TIMESTAMP_TYPE_MASK,
    Codec,
    TimestampType,
)
from models.errors import CodecError
from models.profiles import Profile
from models.records import AnyBatch, ConsumerRecord, DefaultBatch, LegacyBatch, RecordSpec, all_records
from strategies.records import codecs_for_magic, deltas_fit_int64, record_specs
from strategies.timestamps import REALISTIC_NOW_MS, timestamps

from .helpers import reader_facts

LAT = TimestampType.LOG_APPEND_TIME
CREATE_TIME = TimestampType.CREATE_TIME

# Layout clauses of what a writer's bytes look like to a reader, by magic (FMT-1..3, FMT-9).
LAYOUT: dict[int, tuple[str, ...]] = {
    MAGIC_V0: ("FMT.v0-no-timestamp", "FMT.legacy-entry-framing"),
    MAGIC_V1: ("FMT.legacy-entry-framing",),
    MAGIC_V2: ("FMT.v2-header-layout",),
}
REFUSES_BELOW_MINUS_ONE = "FMT.writer-rejects-below-minus-one"
# The fields of a v2 record (FMT-11) as models.codec names them in a CodecError.
_V2_RECORD_FIELDS = frozenset({
    "record_length", "record_attributes", "timestamp_delta", "offset_delta", "key_length", "key", "value_length",
    "value", "headers_count", "header_key_length", "header_key", "header_value_length", "header_value",
})
RELATIVE_OFFSETS = "FMT.v1-wrapper-relative-offsets"


# ------------------------------------------------------------------------------------ the twin


@dataclass(frozen=True)
class CodecTwin:
    """The library under test and the reference codec, under the run's profile."""

    library: RecordCodecLibrary
    model: ModelCodec
    profile: Profile

    def applies(self, clause: str) -> bool:
        return self.profile.name in get_clause(clause).profiles

    def check(
        self, clause: str, observable: Obs, observed: object, expected: object, where: str,
        facts: Mapping[str, object] | None = None,
    ) -> bool:  # fmt: skip
        """conformance.judging.checks.check_equal where `clause` applies to the profile (else nothing: N/A)."""
        if not self.applies(clause):
            return True
        return check_equal(clause, observable, observed, expected, where, facts=facts)

    def check_all(
        self, clauses: Sequence[str], observable: Obs, observed: object, expected: object, where: str,
        facts: Mapping[str, object] | None = None,
    ) -> bool:  # fmt: skip
        """The same observation under each clause that states it (e.g. CON.* and FMT.* of one reading rule)."""
        results = [self.check(c, observable, observed, expected, where, facts) for c in clauses]
        return all(results)

    def has(self, capability: CodecCapability) -> bool:
        return capability in self.library.capabilities


def codec_twin(impl: Implementation, profile: Profile, *needs: CodecCapability) -> CodecTwin:
    """The twin of a codec target, or UNSUPPORTED where the library lacks a capability the test needs."""
    if Capability.CODEC not in impl.capabilities:
        pytest.skip(f"{UNSUPPORTED_PREFIX}codec (the target is not a codec library)")
    library: RecordCodecLibrary = impl.codec  # type: ignore[attr-defined]
    missing = [c.value for c in needs if c not in library.capabilities]
    if missing:
        pytest.skip(f"{UNSUPPORTED_PREFIX}{', '.join(missing)} ({library.name} {library.version})")
    return CodecTwin(library, ModelCodec(), profile)


def forms(
    twin: CodecTwin, magics: Sequence[int], codecs: Sequence[Codec], *, building: bool
) -> tuple[tuple[int, Codec], ...]:
    """The (magic, codec) pairs among those asked that the library builds (or reads), in the order asked; none
    is UNSUPPORTED (a magic or codec the library lacks is never checked, so never PASS)."""
    have = twin.library.build_magics if building else twin.library.read_magics
    pairs = tuple(
        (m, c) for m in magics for c in codecs if m in have and c in twin.library.codecs and c in codecs_for_magic(m)
    )
    if not pairs:
        what = "builds" if building else "reads"
        pytest.skip(
            f"{UNSUPPORTED_PREFIX}{twin.library.name} {what} none of magics {list(magics)} with codecs "
            f"{[c.name.lower() for c in codecs]}"
        )
    return pairs


# ------------------------------------------------------------------------------------ strategies

COMPRESSIBLE = b"timestamp" * 24  # a value compression shrinks: a builder that skips useless compression keeps it


def producer_timestamps() -> st.SearchStrategy[int]:
    """What producers hand a builder: realistic clock readings, -1, 0, near Long.MAX_VALUE and unit mistakes
    (strategies.timestamps with unbounded windows); never below -1 (the builder refuses those, FMT-8)."""
    return timestamps(REALISTIC_NOW_MS, before=LONG_MAX, after=LONG_MAX)


def producer_records(
    magic: int, ts: st.SearchStrategy[int] | None = None, *, max_size: int = 6
) -> st.SearchStrategy[list[RecordSpec]]:
    """Records for one batch (headers on v2 only), whose v2 deltas fit an int64 (deltas_fit_int64)."""
    return record_specs(
        ts if ts is not None else producer_timestamps(), min_size=1, max_size=max_size, with_headers=magic == MAGIC_V2
    ).filter(deltas_fit_int64)


def compressible(records: Sequence[RecordSpec]) -> tuple[RecordSpec, ...]:
    """The same records with values compression shrinks, so a compressed build is compressed."""
    return tuple(RecordSpec(r.timestamp, r.key, COMPRESSIBLE, r.headers) for r in records)


# ------------------------------------------------------------------------------------ what a builder writes


def _shape(batches: Sequence[AnyBatch]) -> list[tuple[int, int]]:
    return [(b.magic, b.record_count) for b in batches]


def _entry_offsets(batch: LegacyBatch) -> tuple[int, tuple[int, ...]]:
    return batch.offset, tuple(e.offset for e in batch.message.inner)


def _read_with_bit_cleared(batch: DefaultBatch) -> list[int]:
    """FMT-12: what the records read once bit 3 is cleared (BaseTimestamp + delta, the deltas kept)."""
    return [r.timestamp for r in batch.with_header(timestamp_type=CREATE_TIME, max_timestamp=batch.max_timestamp)
            .records()]


def check_build(twin: CodecTwin, request: BatchRequest, where: str = "") -> None:
    """What the library writes for a valid `request`, decoded by the model, against what the model writes:
    layout (FMT-1..3, FMT-9), then per entry the type bit (VAL-8 / TV-26), a v1 wrapper's offsets (FMT-7,
    KIP-31) and timestamp (FMT-7), a v2 batch's BaseTimestamp and MaxTimestamp (FMT-11) and LogAppendTime deltas
    (FMT-12), then every record as Kafka's reader reads it (CON-1)."""
    lat = request.timestamp_type is LAT
    record_clause = "FMT.builder-log-append-time" if lat else "FMT.builder-keeps-record-timestamps"
    want = decode_batches(twin.model.build(request))
    try:
        written = twin.library.build(request)
    except CodecRefused as exc:
        twin.check(record_clause, Obs.CODEC_REFUSED, True, False, f"{where}: {twin.library.name} refused: {exc.detail}")
        return
    layout = LAYOUT[request.magic]
    try:
        got = decode_batches(written)
    except CodecError as exc:
        # A v2 record that does not decode is a record written wrong (e.g. a delta beyond 64 bits), not the header.
        blamed = (record_clause,) if exc.field in _V2_RECORD_FIELDS and request.magic == MAGIC_V2 else layout
        twin.check_all(blamed, Obs.BATCH_LAYOUT, exc.field, _shape(want), f"{where}: {exc}")
        return
    if not twin.check_all(layout, Obs.BATCH_LAYOUT, _shape(got), _shape(want), f"{where} (magic, records) per entry"):
        return
    for index, (g, w) in enumerate(zip(got, want, strict=True)):
        at = f"{where} entry {index}"
        if w.magic >= MAGIC_V1:
            type_clause = "FMT.builder-log-append-time" if lat else "FMT.builder-createtime-type"
            twin.check(type_clause, Obs.BATCH_TIMESTAMP_TYPE, g.timestamp_type, w.timestamp_type, at)
        if isinstance(g, LegacyBatch) and isinstance(w, LegacyBatch):
            if w.magic == MAGIC_V1 and w.is_compressed:
                twin.check(RELATIVE_OFFSETS, Obs.BATCH_OFFSETS, _entry_offsets(g), _entry_offsets(w), at)
                if lat:
                    twin.check(record_clause, Obs.BATCH_MAX_TIMESTAMP, g.max_timestamp, w.max_timestamp, at)
                    twin.check(record_clause, Obs.INNER_TIMESTAMPS,
                               [e.message.stored_timestamp for e in g.message.inner],
                               [e.message.stored_timestamp for e in w.message.inner], at)
                else:
                    first = w.message.inner[0].message.stored_timestamp
                    twin.check("FMT.builder-v1-wrapper-max", Obs.BATCH_MAX_TIMESTAMP, g.max_timestamp,
                               w.max_timestamp, at,
                               {"first-nanosecond-wrapped-written": nanosecond_wrapped_written(first)})
        elif isinstance(g, DefaultBatch) and isinstance(w, DefaultBatch):
            written = [nanosecond_wrapped_written(r.timestamp) for r in w.records()]
            twin.check("FMT.builder-v2-base-first", Obs.BATCH_BASE_TIMESTAMP, g.base_timestamp, w.base_timestamp, at,
                       {"nanosecond-wrapped-written": written[0]})
            max_clause = "FMT.builder-log-append-time" if lat else "FMT.builder-v2-max"
            twin.check(max_clause, Obs.BATCH_MAX_TIMESTAMP, g.max_timestamp, w.max_timestamp, at,
                       {"nanosecond-wrapped-written": max(written)})
            if lat:
                twin.check("FMT.v2-lat-deltas-kept", Obs.RECORD_TIMESTAMPS, _read_with_bit_cleared(g),
                           _read_with_bit_cleared(w), f"{at}, read with bit 3 cleared")
    # Offsets are the relative-offsets clause's (above): records compare in append order.
    got_records, want_records = all_records(got), all_records(want)
    in_order = f"{where} (timestamp, type) of each record in append order"
    twin.check(record_clause, Obs.RECORD_TIMESTAMPS, [(r.timestamp, r.timestamp_type) for r in got_records],
               [(r.timestamp, r.timestamp_type) for r in want_records], in_order,
               {"nanosecond-wrapped-written": [(nanosecond_wrapped_written(r.timestamp), r.timestamp_type)
                                               for r in want_records]})
    twin.check(record_clause, Obs.RECORD_PAYLOADS, [(r.key, r.value) for r in got_records],
               [(r.key, r.value) for r in want_records], where)


def check_refusal(twin: CodecTwin, request: BatchRequest, where: str = "") -> None:
    """FMT-8: a writer refuses what Kafka's builders refuse (a timestamp below -1)."""
    try:
        twin.model.build(request)
        model_refuses = False
    except CodecRefused:
        model_refuses = True
    try:
        twin.library.build(request)
        refused, detail = False, "it wrote the batch"
    except CodecRefused as exc:
        refused, detail = True, exc.detail
    twin.check(REFUSES_BELOW_MINUS_ONE, Obs.CODEC_REFUSED, refused, model_refuses, f"{where}: {detail}")


# ------------------------------------------------------------------------------------ what a reader reads


def _inner_bits_differ(batch: LegacyBatch) -> bool:
    wrapper_bit = batch.message.attributes & TIMESTAMP_TYPE_MASK
    return any(
        e.message.magic >= MAGIC_V1 and (e.message.attributes & TIMESTAMP_TYPE_MASK) != wrapper_bit
        for e in batch.message.inner
    )


def _v0_type_bit(batch: AnyBatch) -> tuple[str, ...]:
    """FMT-4: a v0 message with bit 3 set still reads NoTimestampType."""
    assert isinstance(batch, LegacyBatch)
    return ("FMT.legacy-type-bit",) if batch.message.attributes & TIMESTAMP_TYPE_MASK else ()


def reader_clauses(batch: AnyBatch) -> tuple[str, ...]:
    """The clauses that state how a consumer reads `batch`'s records (CON-1 table, with the FMT rule of the
    same reading): a stored form's consumer-view clause first, then the format clause; a crafted feature's own
    clause (the delete-horizon flag) before both. A MUST departure stops at the first that applies."""
    clauses: tuple[str, ...]
    if batch.magic == MAGIC_V0:
        clauses = ("CON.v0-no-timestamp", "FMT.v0-no-timestamp", *_v0_type_bit(batch))
    elif isinstance(batch, LegacyBatch):
        if not batch.is_compressed:
            clauses = ("CON.v1-uncompressed-own", "FMT.v1-uncompressed-own-timestamp", "FMT.legacy-type-bit")
        elif any(e.message.magic == MAGIC_V0 for e in batch.message.inner):
            clauses = ("CON.v1-wrapper-v0-inner",)
        elif batch.timestamp_type is LAT:
            clauses = ("CON.v1-wrapper-lat-wrapper-value",)
        else:
            clauses = ("CON.v1-wrapper-createtime-inner",)
        if batch.is_compressed and _inner_bits_differ(batch):
            clauses += ("FMT.v1-inner-type-bit-ignored",)
    elif batch.timestamp_type is LAT:
        clauses = ("CON.v2-lat-max-timestamp", "FMT.v2-lat-reads-max")
    else:
        clauses = ("CON.v2-createtime-base-plus-delta", "FMT.v2-record-delta")
        if batch.attributes & DELETE_HORIZON_MASK:
            clauses = ("FMT.v2-delete-horizon-base", *clauses)  # the most specific first
    if any(r.timestamp < -1 for r in batch.records()):
        clauses += (REFUSES_BELOW_MINUS_ONE,)  # its reader half: readers do not check the sign
    return clauses


def _type_clauses(batch: AnyBatch) -> tuple[str, ...]:
    """The clauses of a batch's own timestamp type as a reader reports it (FMT-4, FMT-10, FMT-14)."""
    if batch.magic == MAGIC_V0:
        return ("FMT.v0-no-timestamp", *_v0_type_bit(batch))
    if isinstance(batch, LegacyBatch):
        return ("FMT.v1-uncompressed-own-timestamp", "FMT.legacy-type-bit") if not batch.is_compressed else ()
    return ("FMT.v2-type-never-none",)


def _max_clauses(batch: AnyBatch) -> tuple[str, ...]:
    """The clauses of a batch's max timestamp as a reader reports it (FMT-5, FMT-6, FMT-14)."""
    if batch.magic == MAGIC_V0:
        return ("FMT.v0-no-timestamp",)
    if isinstance(batch, LegacyBatch) and not batch.is_compressed:
        return ("FMT.v1-uncompressed-own-timestamp",)
    return ()


def _timestamps(records: Sequence[ConsumerRecord]) -> list[tuple[int, int, TimestampType]]:
    return [(r.offset, r.timestamp, r.timestamp_type) for r in records]


def _payloads(records: Sequence[ConsumerRecord]) -> list[tuple[bytes | None, bytes | None]]:
    return [(r.key, r.value) for r in records]


def check_read(
    twin: CodecTwin,
    batches: Sequence[AnyBatch],
    where: str = "",
    clauses_of: Callable[[AnyBatch], tuple[str, ...]] = reader_clauses,
) -> None:
    """The library's reading of the bytes of `batches` (written by the model, possibly crafted) against the
    model's reading: per batch, a v1 wrapper's record offsets (FMT-7, KIP-31), the batch's type and max timestamp
    where the library reports them (FMT-14), then every record (CON-1) under `clauses_of(batch)`."""
    data = encode_batches(batches)
    want = twin.model.read(data)
    try:
        got = twin.library.read(data)
    except CodecRefused as exc:
        twin.check_all(clauses_of(batches[0]), Obs.CODEC_REFUSED, True, False,
                       f"{where}: {twin.library.name} refused to read: {exc.detail}")
        return
    if len(got) != len(want):
        flat_got = [r for b in got for r in b.records]
        flat_want = [r for b in want for r in b.records]
        clauses = clauses_of(batches[0])
        if twin.check_all(clauses, Obs.RECORD_OFFSETS, [r.offset for r in flat_got], [r.offset for r in flat_want],
                          f"{where}: {len(got)} batches read, {len(want)} written"):
            twin.check_all(clauses, Obs.RECORD_TIMESTAMPS, _timestamps(flat_got), _timestamps(flat_want), where)
        return
    for g, w, batch in zip(got, want, batches, strict=True):
        at = f"{where} batch at offset {batch.base_offset}"
        _check_read_batch(twin, g, w, batch, clauses_of(batch), at)


def _check_read_batch(
    twin: CodecTwin, got: ReadBatch, want: ReadBatch, batch: AnyBatch, clauses: tuple[str, ...], at: str
) -> None:
    if isinstance(batch, LegacyBatch) and batch.magic == MAGIC_V1 and batch.is_compressed:
        offsets_held = twin.check(RELATIVE_OFFSETS, Obs.RECORD_OFFSETS, [r.offset for r in got.records],
                                  [r.offset for r in want.records], at)
        if not offsets_held:
            return  # known: the records below would repeat the offsets' departure
    # A wrapper's type is what its records read (each record's type is compared below, CON-1); some readers
    # expose no batch-level getter for legacy batches (conformance/targets/libraries/pyrecords.py).
    if _type_clauses(batch):
        twin.check_all(_type_clauses(batch), Obs.BATCH_TIMESTAMP_TYPE, got.timestamp_type, want.timestamp_type, at)
    if got.max_timestamp is not None and _max_clauses(batch):
        twin.check_all(_max_clauses(batch), Obs.BATCH_MAX_TIMESTAMP, got.max_timestamp, want.max_timestamp, at)
    twin.check_all(clauses, Obs.RECORD_TIMESTAMPS, _timestamps(got.records), _timestamps(want.records), at,
                   reader_facts(want.records, [batch]))  # fmt: skip
    twin.check_all(clauses, Obs.RECORD_PAYLOADS, _payloads(got.records), _payloads(want.records), at)


# ------------------------------------------------------------------------------------ what a converter writes


def conversion_clause(source: AnyBatch, to_magic: int) -> str:
    """CNV-5: the clause of one stored batch's down-conversion."""
    if to_magic == MAGIC_V0:
        return "CNV.down-convert-v0-drops"
    if source.timestamp_type is LAT:
        return "CNV.down-convert-keeps-type"
    return "CNV.down-convert-createtime-keeps-timestamps"


def _source_of(offset: int, batches: Sequence[AnyBatch]) -> AnyBatch:
    return next(b for b in batches if b.base_offset <= offset <= b.last_offset)


def _served(batches: Sequence[AnyBatch]) -> list[tuple[int, int, int]]:
    return [(b.base_offset, b.last_offset, b.magic) for b in batches]


def check_conversion(twin: CodecTwin, batches: Sequence[AnyBatch], to_magic: int, where: str = "") -> None:
    """The library's down-conversion of `batches` (CNV-5) against the model's: refused for zstd, then which
    batches come out (control batches dropped), then per converted batch its type, max timestamp and records."""
    data = encode_batches(batches)
    zstd = any(b.codec is Codec.ZSTD for b in batches)
    control = any(isinstance(b, DefaultBatch) and b.is_control for b in batches)
    first = next(b for b in batches if not (isinstance(b, DefaultBatch) and b.is_control))
    try:
        expected: bytes | None = twin.model.convert(data, to_magic=to_magic)
    except CodecRefused:
        expected = None
    try:
        converted: bytes | None = twin.library.convert(data, to_magic=to_magic)
        detail = "it converted them"
    except CodecRefused as exc:
        converted, detail = None, exc.detail
    refusal_clause = "CNV.down-convert-zstd-unsupported" if zstd else conversion_clause(first, to_magic)
    if not twin.check(refusal_clause, Obs.CODEC_REFUSED, converted is None, expected is None, f"{where}: {detail}"):
        return
    if converted is None or expected is None:
        return
    want = decode_batches(expected)
    try:
        got = decode_batches(converted)
    except CodecError as exc:
        twin.check(conversion_clause(first, to_magic), Obs.BATCH_LAYOUT, exc.field, _shape(want), f"{where}: {exc}")
        return
    # Which batches come out: the offsets they cover are the markers' clause where markers were stored (dropped,
    # and the order kept), their magic the conversion's.
    if control and not twin.check("CNV.down-convert-drops-control", Obs.FETCH_BATCHES,
                                  [b[:2] for b in _served(got)], [b[:2] for b in _served(want)],
                                  f"{where} (base offset, last offset) of each batch"):
        return
    if not twin.check(conversion_clause(first, to_magic), Obs.FETCH_BATCHES, _served(got), _served(want), where):
        return
    for g, w in zip(got, want, strict=True):
        clause = conversion_clause(_source_of(w.base_offset, batches), to_magic)
        at = f"{where} converted batch at offset {w.base_offset}"
        twin.check(clause, Obs.BATCH_TIMESTAMP_TYPE, g.timestamp_type, w.timestamp_type, at)
        twin.check(clause, Obs.BATCH_MAX_TIMESTAMP, g.max_timestamp, w.max_timestamp, at)
        twin.check(clause, Obs.RECORD_TIMESTAMPS, _timestamps(g.records()), _timestamps(w.records()), at)
        twin.check(clause, Obs.RECORD_PAYLOADS, _payloads(g.records()), _payloads(w.records()), at)


__all__ = [
    "CREATE_TIME",
    "LAT",
    "CodecTwin",
    "check_build",
    "check_conversion",
    "check_read",
    "check_refusal",
    "codec_twin",
    "compressible",
    "conversion_clause",
    "forms",
    "producer_records",
    "producer_timestamps",
    "reader_clauses",
]
