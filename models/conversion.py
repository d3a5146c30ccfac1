"""Up- and down-conversion between record formats (docs/rules.md, CNV-1..7).

Produce-side conversion (CNV-4 up, CNV-6 down) happens inside the leader's validator
(`models.validator`); this module holds what the fetch side does: which magic a Fetch version can
read (CNV-2), how stored batches are rewritten for an old client (CNV-5, Kafka 0.10.0-3.9) and what
a fetch at a given version returns under a profile (CNV-5, CNV-7: 4.0 serves everything as it is).

It also holds `check_buildable`, the record builders' refusals (FMT-8) shared by every path that
writes records anew: a rebuilt or converted batch cannot carry a timestamp below -1 (VAL-15).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from .config import TopicConfig, target_magic
from .constants import (
    MAGIC_V0,
    MAGIC_V1,
    MAGIC_V2,
    NO_TIMESTAMP,
    NOT_SERVED,
    Codec,
    ErrorCode,
    TimestampType,
)
from .errors import BuildError, ModelError
from .profiles import Profile
from .records import AnyBatch, ConsumerRecord, DefaultBatch, LegacyBatch, RecordSpec, build_legacy

ZSTD_DOWN_CONVERSION_TEXT = "Down-conversion of zstandard-compressed batches is not supported"
ZSTD_MIN_FETCH_VERSION = 10  # KIP-110: Fetch v10 is the first a client that reads zstd sends


class DownConversionError(ModelError):
    """A stored batch that cannot be served in an older format (CNV-5): zstd below magic 2.

    `error` is the Kafka error code the fetch answers with (UNSUPPORTED_COMPRESSION_TYPE)."""

    def __init__(
        self,
        message: str = ZSTD_DOWN_CONVERSION_TEXT,
        error: ErrorCode = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
    ) -> None:
        self.error = error
        self.message = message
        super().__init__(message)


def fetch_magic_for_version(version: int) -> int:
    """CNV-2: the highest record magic a Fetch request of `version` can read (v0-1 → 0, v2-3 → 1, v4+ → 2)."""
    if version < 0:
        raise ValueError(f"a Fetch version is >= 0, not {version}")
    if version <= 1:
        return MAGIC_V0
    if version <= 3:
        return MAGIC_V1
    return MAGIC_V2


def check_buildable(
    timestamps: Iterable[int],
    *,
    magic: int,
    codec: Codec,
    has_headers: bool = False,
) -> None:
    """Raise BuildError where Kafka's record builder refuses to write (FMT-8, VAL-15).

    The builder rejects any timestamp below -1 ("Invalid negative timestamp <ts>"), whatever the
    target magic or timestamp type (the check runs before the magic-specific write), headers on
    magic < 2 and zstd on magic < 2 (FMT-4). The texts are those of the Java exceptions; on the
    produce path they surface as UNKNOWN_SERVER_ERROR without a message (VAL-15)."""
    if codec is Codec.ZSTD and magic < MAGIC_V2:
        raise BuildError(f"ZStandard compression is not supported for magic {magic}")
    for ts in timestamps:
        if ts < 0 and ts != NO_TIMESTAMP:
            raise BuildError(f"Invalid negative timestamp {ts}")
    if has_headers and magic < MAGIC_V2:
        raise BuildError(f"Magic v{magic} does not support record headers")


def _legacy_entries(batch: AnyBatch, *, to_magic: int, fetch_offset: int) -> tuple[LegacyBatch, ...]:
    """CNV-5 for one batch whose magic is above `to_magic` (< 2): its records rewritten as v0/v1
    entries keeping their offsets (gaps left by compaction included) and the batch's codec."""
    records = batch.records()
    if batch.codec is Codec.NONE:
        # An uncompressed v2 batch served to a v0/v1 client starts at the fetch offset: v0/v1
        # entries are single records, so the ones below it are dropped (CNV-5, librdkafka relies on it).
        records = tuple(r for r in records if r.offset >= fetch_offset)
    if not records:
        return ()
    lat = batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    # Headers are ignored on the way down (v0/v1 cannot carry them), never an error (CNV-5).
    check_buildable((r.timestamp for r in records), magic=to_magic, codec=batch.codec)
    specs = [RecordSpec(timestamp=r.timestamp, key=r.key, value=r.value) for r in records]
    built = build_legacy(
        specs,
        magic=to_magic,
        base_offset=records[0].offset,
        codec=batch.codec,
        timestamp_type=batch.timestamp_type if to_magic == MAGIC_V1 else TimestampType.CREATE_TIME,
        # CNV-5: a LogAppendTime batch becomes v1 with every message and the wrapper carrying the
        # batch MaxTimestamp as LogAppendTime.
        log_append_time=batch.max_timestamp if lat else None,
    )
    return _at_record_offsets(built, records, to_magic=to_magic, codec=batch.codec)


def _at_record_offsets(
    built: tuple[LegacyBatch, ...], records: Sequence[ConsumerRecord], *, to_magic: int, codec: Codec
) -> tuple[LegacyBatch, ...]:
    """Legacy entries built from `records`, given the records' own offsets (gaps left by compaction included): one
    entry per record if uncompressed; else the one wrapper, whose inner offsets are relative to the first record
    for v1 and absolute for v0 (as the builder writes them) and whose own offset is the last record's (FMT-7)."""
    if codec is Codec.NONE:
        return tuple(replace(entry, offset=r.offset) for entry, r in zip(built, records, strict=True))
    (wrapper,) = built
    first = records[0].offset
    inner = tuple(
        replace(entry, offset=(r.offset - first) if to_magic == MAGIC_V1 else r.offset)
        for entry, r in zip(wrapper.message.inner, records, strict=True)
    )
    return (replace(wrapper, offset=records[-1].offset, message=replace(wrapper.message, inner=inner)),)


def down_convert(batches: Sequence[AnyBatch], *, to_magic: int, fetch_offset: int) -> tuple[AnyBatch, ...]:
    """CNV-5 (Kafka 0.10.0-3.9 `RecordsUtil.downConvert`): stored batches as a client reading at most
    `to_magic` receives them.

    Per batch, in order: when `to_magic` < 2, control batches are dropped and a zstd batch raises
    DownConversionError (UNSUPPORTED_COMPRESSION_TYPE); a batch whose magic is already <= `to_magic`
    is served unchanged; otherwise its records are rewritten in `to_magic` with the same codec (a
    compressed batch becomes one wrapper, an uncompressed one becomes one entry per record, and an
    uncompressed batch drops its records below `fetch_offset`). The timestamp type is preserved; a
    LogAppendTime batch gives every v1 message (and the wrapper) its MaxTimestamp; CreateTime keeps
    record timestamps (wrapper = max); v0 drops timestamps and type; headers are dropped.
    A record timestamp below -1 makes the builder refuse (BuildError, FMT-8)."""
    if to_magic not in (MAGIC_V0, MAGIC_V1, MAGIC_V2):
        raise ValueError(f"to_magic must be 0, 1 or 2, not {to_magic}")
    out: list[AnyBatch] = []
    for batch in batches:
        if to_magic < MAGIC_V2:
            if isinstance(batch, DefaultBatch) and batch.is_control:
                continue
            if batch.codec is Codec.ZSTD:
                raise DownConversionError()
        if batch.magic <= to_magic:
            out.append(batch)
            continue
        out.extend(_legacy_entries(batch, to_magic=to_magic, fetch_offset=fetch_offset))
    return tuple(out)


def merged_down_convert(batches: Sequence[AnyBatch], *, to_magic: int) -> tuple[AnyBatch, ...]:
    """CNV-5 before 0.11 (`down_conversion_merges`): every message of the fetched batches, those of the first
    wrapper below the fetch offset included, converted to `to_magic` and written as ONE message set in the
    codec of the first batch: one entry per message if it is uncompressed, else one wrapper holding them all
    (Kafka 0.10.2.2 AbstractRecords.toMessageFormat, "we are essentially merging multiple message sets";
    0.10.0-0.10.1 FileMessageSet.toMessageFormat the same). Seen on 0.10.2.2 and 0.10.1.1: a Fetch v0 of a gzip
    wrapper at offset 5 followed by uncompressed messages 6 to 10 answers one v0 gzip wrapper, 5 to 10."""
    records = [r for batch in batches for r in batch.records()]
    if not records:
        return ()
    codec = batches[0].codec
    specs = [RecordSpec(timestamp=r.timestamp, key=r.key, value=r.value) for r in records]
    built = build_legacy(specs, magic=to_magic, base_offset=records[0].offset, codec=codec)
    return _at_record_offsets(built, records, to_magic=to_magic, codec=codec)


def lazy_down_convert(batches: Sequence[AnyBatch], *, to_magic: int, fetch_offset: int) -> tuple[AnyBatch, ...]:
    """What a consumer reading at most `to_magic` receives of a down-converting fetch (KIP-283, Kafka 2.0-3.9),
    fetching on from the next offset until it reaches a batch it cannot have: each Fetch response converts its
    first batch that converts to something eagerly (LazyDownConversionRecords), where a zstd batch fails the fetch
    (DownConversionError: UNSUPPORTED_COMPRESSION_TYPE); the rest is converted as the response is sent
    (LazyDownConversionRecordsSend), where a zstd batch ends the response (an overflow batch, which the consumer
    skips before fetching from there). So: every batch before the first zstd one, converted; the error only when
    nothing comes before it."""
    served: list[AnyBatch] = []
    for batch in batches:
        try:
            served.extend(down_convert([batch], to_magic=to_magic, fetch_offset=fetch_offset))
        except DownConversionError:
            if not served:
                raise
            break
    return tuple(served)


def fetch_view(
    batches: Sequence[AnyBatch],
    *,
    fetch_version: int,
    profile: Profile,
    config: TopicConfig,
    replica: bool = False,
    fetch_offset: int | None = None,
) -> tuple[ErrorCode, tuple[AnyBatch, ...]]:
    """What a Fetch at `fetch_version` returns for `batches` (the stored batches from the fetch
    position on): (error code, batches served).

    - A version the profile does not serve gets no answer (NOT_SERVED, the connection closed; CNV-7: 4.0
      removed Fetch v0-3).
    - Profiles without down-conversion (4.0+, CNV-7) serve the stored batches as they are, v0/v1 included.
    - A topic whose compression.type is zstd answers every fetch below v10 UNSUPPORTED_COMPRESSION_TYPE
      (KafkaApis.maybeConvertFetchedData, 2.1-3.9).
    - Otherwise (CNV-5) conversion runs when the topic's record version is above what the request
      can read (CNV-2); before IBP 3.0 only where some fetched batch is not readable as it is
      (`hasCompatibleMagic`). With IBP >= 3.0 (`honours_message_format_version` False) the record
      version is always 2 and every fetch <= v3 takes the conversion path (3.0-3.9 KafkaApis).
      `message.downconversion.enable=false` turns a client fetch on that path into UNSUPPORTED_VERSION
      (replicas exempt). Conversion is lazy (`lazy_down_convert`): a zstd batch met before anything
      converted → UNSUPPORTED_COMPRESSION_TYPE; met after, the response ends before it.
    `fetch_offset` (default: the first batch's base offset) is where an uncompressed v2 batch starts
    being served to a v0/v1 client."""
    stored = tuple(batches)
    if not profile.supports_fetch_version(fetch_version):
        return NOT_SERVED, ()
    if not profile.down_conversion:
        return ErrorCode.NONE, stored
    if config.compression_type == "zstd" and fetch_version < ZSTD_MIN_FETCH_VERSION:
        # "Fetching messages is disabled for ZStandard compressed partition" (KafkaApis, 2.1-3.9).
        return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, ()
    readable = fetch_magic_for_version(fetch_version)
    if target_magic(config, profile) <= readable:
        return ErrorCode.NONE, stored
    if profile.honours_message_format_version and all(b.magic <= readable for b in stored):
        # CNV-5: before IBP 3.0 Kafka (`KafkaApis`, 0.11-2.8) converts only when some fetched batch is not
        # already readable (`hasCompatibleMagic`); otherwise the data goes out as it is, and
        # message.downconversion.enable=false does not matter. From 3.0 every fetch <= v3 takes the
        # conversion path (KafkaApis.maybeConvertFetchedData, 3.0-3.9; seen on 3.9.1: Fetch v0 of readable
        # batches answered UNSUPPORTED_VERSION with down-conversion disabled).
        return ErrorCode.NONE, stored
    if not replica and not config.downconversion_enable:
        return ErrorCode.UNSUPPORTED_VERSION, ()
    start = fetch_offset if fetch_offset is not None else (stored[0].base_offset if stored else 0)
    if profile.down_conversion_merges:
        return ErrorCode.NONE, merged_down_convert(stored, to_magic=readable)
    try:
        return ErrorCode.NONE, lazy_down_convert(stored, to_magic=readable, fetch_offset=start)
    except DownConversionError as exc:
        return exc.error, ()
    except BuildError:
        # FMT-8 [DERIVED]: the builder's IllegalArgumentException is not an API error.
        return ErrorCode.UNKNOWN_SERVER_ERROR, ()


__all__ = [
    "ZSTD_DOWN_CONVERSION_TEXT",
    "DownConversionError",
    "check_buildable",
    "down_convert",
    "fetch_magic_for_version",
    "fetch_view",
    "lazy_down_convert",
    "merged_down_convert",
]
