"""The clause catalogue: one entry per testable behaviour of the timestamp contract.

A clause is what a test checks and what a verdict names. Its ID is stable API (reports, expectation
files and `@example`-pinned counterexamples refer to it): an area prefix and a kebab-case name,
e.g. ``LO.first-ge-target``. Each clause cites the rule IDs (docs/rules.md) it comes from, the KIP (or
the Kafka JIRA where no KIP exists), an RFC 2119 level, the behaviour profiles it applies to, and one
sentence saying what an implementation must do to pass.

Levels: MUST for behaviour clients rely on; SHOULD where Kafka's behaviour is an implementation
choice a compatible broker may reasonably differ on (index placement, roll timing, rewriting
details); MAY for optional features (down-conversion, legacy ListOffsets v0).

Where a KIP's text and Kafka's code disagree (the DIS-* rules of docs/rules.md), the clause follows
Apache Kafka's code, which the `kafka-*` profiles encode, cites the DIS-* ID and says so in its summary.

Profiles are selected by predicates on `Profile` fields, never by version numbers, so a new profile
picks up the clauses that fit its behaviour.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

from .constants import LONG_MAX
from .profiles import (
    PROFILES,
    IndexGranularity,
    LogAppendTimeFlagCheck,
    MaxTimestampLookup,
    Profile,
    RangeRule,
    RecordErrorsStyle,
    RetentionBasis,
    RollBase,
    ShallowOffsetOfMax,
    UnknownSpecialTarget,
    VisibilityCap,
    get_profile,
)
from .profiles import ErrorTextStyle as _Text
from .rules import RULE_IDS, UNTESTABLE


class Level(Enum):
    """RFC 2119 requirement level of a clause."""

    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"


class Area(Enum):
    """The spec area of a clause; `prefix` is the first part of its ID."""

    FORMAT = "format"
    VALIDATION = "validation"
    COMPRESSION = "compression"
    TIME_INDEX = "time-index"
    LIST_OFFSETS = "list-offsets"
    CONVERSION = "conversion"
    REPLICATION = "replication"
    CONSUMER_VIEW = "consumer-view"

    @property
    def prefix(self) -> str:
        return _PREFIX[self]


_PREFIX: dict[Area, str] = {
    Area.FORMAT: "FMT",
    Area.VALIDATION: "VAL",
    Area.COMPRESSION: "CMP",
    Area.TIME_INDEX: "IDX",
    Area.LIST_OFFSETS: "LO",
    Area.CONVERSION: "CNV",
    Area.REPLICATION: "REP",
    Area.CONSUMER_VIEW: "CON",
}
_AREA_BY_PREFIX: dict[str, Area] = {prefix: area for area, prefix in _PREFIX.items()}


@dataclass(frozen=True)
class Clause:
    id: str
    area: Area
    rules: tuple[str, ...]
    kip: str
    level: Level
    profiles: tuple[str, ...]
    summary: str
    # The test vectors (TV-01..TV-27, docs/rules.md) that restate this clause (TV-xx); a test of the vector names both.
    vectors: tuple[str, ...] = ()
    # Where a clause no suite test checks against implementations is checked instead (CLIENT_AND_CODEC_SUITES
    # or MODEL_TESTS), and why no broker answer can show it ("" for a clause the suites check).
    checked_elsewhere: str = ""
    elsewhere_reason: str = ""


# --- profile selections (predicates on Profile fields, in PROFILES order) ---------------------------


def _where(predicate: Callable[[Profile], bool]) -> tuple[str, ...]:
    return tuple(p.name for p in PROFILES.values() if predicate(p))


ALL = _where(lambda p: True)
# FMT-10/11: format v2 exists (0.11+)
V2 = _where(lambda p: p.max_magic == 2)
# CNV-1: Produce v0-v2 (legacy magic on the produce path) still served (removed in 4.0)
LEGACY_PRODUCE = _where(lambda p: p.produce_versions[0] < 3)
LEGACY_PRODUCE_V2 = _where(lambda p: p.produce_versions[0] < 3 and p.max_magic == 2)
# CON-1 / CNV-3: v0/v1 records can be stored, and so served as stored: a format below v2 is honoured
# (< IBP 3.0), or v2 does not exist. From 3.0 every produce is stored as v2 (KIP-724) and 4.0 serves no
# conversion (KIP-896), so a consumer of such a broker is never served a v0/v1 record it wrote.
LEGACY_STORED = _where(lambda p: p.honours_message_format_version or p.max_magic < 2)
# CMP-3/4 on v1 storage: a LogAppendTime append is stamped into v1 messages only where v1 is still produced and
# stored (a topic format below v2 honoured, < IBP 3.0, or no v2 at all); 3.x up-converts every v1 set to v2.
V1_PRODUCED_AND_STORED = _where(
    lambda p: p.produce_versions[0] < 3 and (p.honours_message_format_version or p.max_magic < 2)
)
# IDX-*: the time index exists (KIP-33, 0.10.1+)
INDEXED = _where(lambda p: p.index_granularity is not IndexGranularity.NONE)
PER_APPEND_INDEX = _where(lambda p: p.index_granularity is IndexGranularity.PER_APPEND)
PER_BATCH_INDEX = _where(lambda p: p.index_granularity is IndexGranularity.PER_BATCH)
# LO-2: ListOffsets v1+ (timestamp search, KIP-79)
TIMESTAMP_SEARCH = _where(lambda p: p.list_offsets_versions[1] >= 1)
# VAL-3..8
NO_TS_EXEMPT = _where(lambda p: p.exempt_no_timestamp)
NO_TS_CHECKED = _where(lambda p: not p.exempt_no_timestamp)
SYMMETRIC = _where(lambda p: p.range_rule is RangeRule.SYMMETRIC)
BEFORE_AFTER = _where(lambda p: p.range_rule is RangeRule.BEFORE_AFTER)
DIFFERENCE_FALLBACK = _where(lambda p: p.has_difference_config and p.has_before_after_configs)
NO_DIFFERENCE = _where(lambda p: not p.has_difference_config)
AFTER_DEFAULT_FINITE = _where(lambda p: p.default_after_ms != LONG_MAX)
LAT_FLAG_ALWAYS = _where(lambda p: p.lat_flag_check is LogAppendTimeFlagCheck.ALWAYS)
LAT_FLAG_ELSE = _where(lambda p: p.lat_flag_check is LogAppendTimeFlagCheck.ELSE_BRANCH)
NO_RECORD_ERRORS = _where(lambda p: p.record_errors is RecordErrorsStyle.NONE)
ALL_RECORD_ERRORS = _where(lambda p: p.record_errors is RecordErrorsStyle.ALL)
LEGACY_ALL_RECORD_ERRORS = _where(
    lambda p: p.record_errors is RecordErrorsStyle.ALL and p.produce_versions[0] < 3
)
# VAL-7: a side left at Long.MAX_VALUE prints wrapped only where each side has its own bound (KIP-937); a
# symmetric difference of Long.MAX_VALUE rejects nothing, so no message prints it.
BOUNDS_PRINTED_WRAPPED = _where(
    lambda p: p.record_errors is RecordErrorsStyle.ALL and p.range_rule is RangeRule.BEFORE_AFTER
)
TEXT_0_10 = _where(lambda p: p.error_text is _Text.V0_10)
TEXT_0_11 = _where(lambda p: p.error_text is _Text.V0_11)
TEXT_3_6 = _where(lambda p: p.error_text is _Text.V3_6)
INVALID_RECORD_TEXT = _where(lambda p: p.invalid_record_text_3_2)
# CMP-7 / FMT-14
EXACT_RECORD_OFFSET = _where(
    lambda p: p.shallow_offset_of_max is ShallowOffsetOfMax.EXACT_RECORD
    and p.index_granularity is not IndexGranularity.NONE
)
BATCH_LAST_OFFSET = _where(lambda p: p.shallow_offset_of_max is ShallowOffsetOfMax.BATCH_LAST)
OFFSET_OF_MAX_FIXED = _where(lambda p: p.shallow_offset_of_max is not ShallowOffsetOfMax.EXACT_RECORD)
# IDX-9 / IDX-10
ROLL_BY_TIMESTAMP = _where(lambda p: p.roll_base is not RollBase.WALL_CLOCK)
ROLL_BY_FIRST_BATCH = _where(lambda p: p.roll_base is RollBase.FIRST_BATCH)
RETENTION_BY_TIMESTAMP = _where(lambda p: p.retention_basis is RetentionBasis.LARGEST_TIMESTAMP)
RETENTION_BY_MTIME = _where(lambda p: p.retention_basis is RetentionBasis.MTIME)
# LO-*
CAP_LT_FETCHABLE = _where(lambda p: p.visibility_cap is VisibilityCap.LT_LAST_FETCHABLE)
CAP_LE_HW = _where(
    lambda p: p.visibility_cap is VisibilityCap.LE_HIGH_WATERMARK and p.list_offsets_versions[1] >= 1
)
READ_COMMITTED = _where(lambda p: p.list_offsets_versions[1] >= 2)  # ListOffsets v2, KIP-98
WITH_EPOCH = _where(lambda p: p.list_offsets_versions[1] >= 4)  # ListOffsets v4, KIP-320
EPOCHLESS_VERSIONS = _where(lambda p: p.list_offsets_versions[0] <= 3 and p.list_offsets_versions[1] >= 1)
OFFSET_NOT_AVAILABLE = _where(lambda p: p.list_offsets_versions[1] >= 5)  # ListOffsets v5, KIP-207
MAX_TS_EXACT = _where(lambda p: p.max_timestamp_lookup is MaxTimestampLookup.EXACT)
EARLIEST_LOCAL = _where(lambda p: p.min_version_for_target(-4) is not None)
LATEST_TIERED = _where(lambda p: p.min_version_for_target(-5) is not None)
PENDING_UPLOAD = _where(lambda p: p.min_version_for_target(-6) is not None)
TARGETS_VERSIONED = _where(lambda p: p.unknown_special_target is UnknownSpecialTarget.UNSUPPORTED_VERSION)
TARGETS_SEARCHED = _where(
    lambda p: p.unknown_special_target is UnknownSpecialTarget.SEARCH and p.list_offsets_versions[1] >= 1
)
LIST_OFFSETS_V0 = _where(lambda p: p.list_offsets_versions[0] == 0)
# CNV-*
FORMAT_VERSION_HONOURED = _where(lambda p: p.honours_message_format_version)
FORMAT_VERSION_WITH_SEARCH = _where(
    lambda p: p.honours_message_format_version and p.list_offsets_versions[1] >= 1
)
DOWN_CONVERSION = _where(lambda p: p.down_conversion)
DOWN_CONVERSION_V2 = _where(lambda p: p.down_conversion and p.max_magic == 2)
NO_DOWN_CONVERSION = _where(lambda p: not p.down_conversion)
# FMT-4/CNV-5: the zstd codec exists (KIP-110, 2.1): where Produce v0-v2 are still served, and where fetches
# down-convert
ZSTD_LEGACY_PRODUCE = _where(lambda p: p.has_zstd and p.produce_versions[0] < 3)
ZSTD_DOWN_CONVERSION = _where(lambda p: p.has_zstd and p.down_conversion)
# IDX-9: max.compaction.lag.ms (KIP-354, 2.3)
COMPACTION_LAG_ROLL = _where(lambda p: p.has_max_compaction_lag)
# CNV-5: message.downconversion.enable (KIP-283, 2.0)
DOWN_CONVERSION_CONFIG = _where(lambda p: p.down_conversion and p.has_downconversion_config)
# FMT-10/11: the delete-horizon flag (KIP-534, 3.1) has no profile field of its own; it exists in
# every profile that has the 3.8 offset-of-max fix, which is the closest behavioural marker.
DELETE_HORIZON = OFFSET_OF_MAX_FIXED
# REP-4: replicas agree on time-index offsets since 3.8 and on segment boundaries since 4.1.
REPLICA_INDEX_AGREES = OFFSET_OF_MAX_FIXED


def _clause(
    id: str,
    rules: tuple[str, ...],
    kip: str,
    level: Level,
    profiles: tuple[str, ...],
    summary: str,
    vectors: tuple[str, ...] = (),
) -> Clause:
    area = _AREA_BY_PREFIX[id.split(".", 1)[0]]
    where, why = _ELSEWHERE.get(id, ("", ""))
    return Clause(id, area, rules, kip, level, profiles, summary, vectors, where, why)


MUST, SHOULD, MAY = Level.MUST, Level.SHOULD, Level.MAY

# --- clauses checked outside the suites ---------------------------------------------------------------
# A clause that no suite test checks against implementations says where it is checked instead and why no
# broker answer can show it. `conformance.judging.coverage` lists these beside the clauses the suites declare; a
# clause in neither list is a gap (tests/test_clause_coverage.py).

CLIENT_AND_CODEC_SUITES = "the client and codec suites (suites/test_client_*.py, suites/test_codec_*.py)"
MODEL_TESTS = "the model's own tests (tests/)"

_INDEX_INTERNAL = (
    "internal to the time index (its entries, their offsets and when they are written); a broker shows only "
    "the lookup answers, which the LO.* and IDX.segment-search-first-ge checks compare"
)
_NO_DIVERGENCE = (
    "needs a replica whose log diverges from the new leader's (an unclean election or a lost acks=1 append); "
    "with acks=all, which is how every target is driven, replicas never diverge (tests/test_cluster.py, "
    "tests/test_log_properties.py check the model)"
)
_HW_BELOW_LEO = (
    "needs a high watermark below the log end offset at the moment of the request (a follower lagging behind "
    "an acks=1 append, or a leader just elected); acks=all produces leave none to a client "
    "(tests/test_audit_log.py, tests/test_cluster.py check the model)"
)
_REPLICA_STATE = (
    "compares replicas' internal index and segment files; through the protocol it shows only as lookups after "
    "a failover, which REP.lookups-agree-after-failover checks"
)
_ELSEWHERE: dict[str, tuple[str, str]] = {
    # FMT: how a codec writes and reads bytes
    "FMT.set-max-timestamp-keeps-base": (
        MODEL_TESTS,
        "the record-layer operation itself (tests/test_codec.py checks the model's bytes); what a broker writes "
        "with it is CMP.lat-inplace-v2-keeps-base",
    ),
    "FMT.offset-of-max-first-occurrence": (
        MODEL_TESTS,
        "a batch-level derived value; a broker shows it only as the MAX_TIMESTAMP answer, which "
        "LO.max-timestamp-first-record checks",
    ),
    # VAL: response versions without the fields
    "VAL.error-text-legacy": (
        MODEL_TESTS,
        "the text exists only in the broker's exception: 0.10 serves Produce v0-v2, whose responses carry "
        "no error_message or record_errors",
    ),
    "VAL.no-record-errors-legacy": (
        MODEL_TESTS,
        "0.10 serves Produce v0-v2, whose responses have no record_errors or error_message field: no answer "
        "can depart",
    ),
    "VAL.legacy-first-failing-batch": (
        MODEL_TESTS,
        "which errors a v0/v1 set reports is visible only in record_errors (Produce v8+), and v0/v1 sets can "
        "only be sent with Produce v0-v2; that nothing of the set is written is VAL.whole-batch-rejected",
    ),
    # CMP: what the broker keeps of the producer's compressed bytes
    "CMP.same-codec-in-place": (
        MODEL_TESTS,
        "in place or rebuilt with the same codec decodes to the same records; the stored size and the "
        "compressed bytes are not part of what the suites' decoded view compares",
    ),
    "CMP.level-does-not-recompress": (
        MODEL_TESTS,
        "a recompression with the same codec decodes to the same records; only the compressed bytes differ, "
        "which the suites' decoded view does not compare",
    ),
    "CMP.lat-v0-target-max-minus-one": (
        MODEL_TESTS,
        "a v0 batch has no timestamp: fetched, it reads -1 whatever the append's max was, and a segment "
        "without timestamps is dated by its mtime, the same append time; the max is internal",
    ),
    "CMP.offset-of-max-batch-last": (
        MODEL_TESTS,
        "the offset the leader pairs with an append's max is internal (segment max and time-index entry); "
        "lookups and MAX_TIMESTAMP answers show only its effect, checked under LO.*",
    ),
    "CMP.offset-of-max-exact-record": (
        MODEL_TESTS,
        "the offset the leader pairs with an append's max is internal (segment max and time-index entry); "
        "lookups answer the same record either way",
    ),
    # IDX: index internals, truncation
    "IDX.entry-layout": (MODEL_TESTS, _INDEX_INTERNAL),
    "IDX.append-rejects-regressions": (MODEL_TESTS, _INDEX_INTERNAL),
    "IDX.entry-offset-batch-last": (MODEL_TESTS, _INDEX_INTERNAL),
    "IDX.interval-per-append": (MODEL_TESTS, _INDEX_INTERNAL),
    "IDX.interval-per-batch": (MODEL_TESTS, _INDEX_INTERNAL),
    "IDX.entry-on-roll": (MODEL_TESTS, _INDEX_INTERNAL),
    "IDX.follower-index-from-headers": (MODEL_TESTS, _REPLICA_STATE),
    "IDX.max-after-truncation": (MODEL_TESTS, _NO_DIVERGENCE),
    "IDX.truncation-drops-entries": (MODEL_TESTS, _NO_DIVERGENCE),
    "IDX.roll-jitter": (
        MODEL_TESTS,
        "the jitter is a random draw per segment, so a broker's roll points can be bounded but not predicted "
        "or compared with the model's; the window itself is checked on the model",
    ),
    "IDX.roll-never-empty": (
        MODEL_TESTS,
        "an empty segment rolled or kept holds the same (no) offsets, so retention, lookups and fetches answer "
        "the same either way",
    ),
    "IDX.retention-needs-high-watermark": (
        MODEL_TESTS,
        "the high watermark equals the log end offset after every acks=all produce, and deleting an empty "
        "active segment moves no offset a client can read",
    ),
    # LO: what the Implementation protocol cannot ask or arrange
    "LO.visibility-cap-le-hw": (MODEL_TESTS, _HW_BELOW_LEO),
    "LO.fresh-leader-not-available": (MODEL_TESTS, _HW_BELOW_LEO),
    "LO.replica-capped-at-leo": (
        MODEL_TESTS,
        "a replica or debug request (replica_id >= 0 or -2) is a follower's, not a client's; the suites speak "
        "as a consumer (tests/test_audit_log.py checks the model)",
    ),
    "LO.max-timestamp-ignores-log-start": (
        MODEL_TESTS,
        "needs DeleteRecords to move the log start offset inside a segment; retention moves it to a segment "
        "boundary, below which MAX_TIMESTAMP cannot answer",
    ),
    # CNV, REP, CON
    "REP.replica-index-agrees": (MODEL_TESTS, _REPLICA_STATE),
    "REP.replica-segments-agree": (MODEL_TESTS, _REPLICA_STATE),
}

# --- the catalogue ------------------------------------------------------------------------------

_FORMAT: tuple[Clause, ...] = (
    _clause("FMT.legacy-entry-framing", ("FMT-1",), "KIP-32", MUST, ALL,
            "A v0/v1 log entry is an int64 offset and an int32 message size (12 bytes) followed by "
            "exactly one message."),
    _clause("FMT.v0-no-timestamp", ("FMT-2", "FMT-5", "FMT-14"), "KIP-32", MUST, ALL,
            "A v0 message has no timestamp field (14-byte overhead) and reads as timestamp -1 with "
            "NoTimestampType; a v0 batch reports max timestamp -1."),
    # Checked through a broker's Produce path, which takes v0/v1 only where legacy produce is served: a 4.x profile
    # cannot exercise it (N/A, not UNSUPPORTED); the codec suites (suites/test_codec_*.py) check the format itself.
    _clause("FMT.v1-timestamp-field", ("FMT-3",), "KIP-32", MUST, LEGACY_PRODUCE,
            "A v1 message carries an int64 timestamp at byte 6 inside the CRC32, so a decoder rejects "
            "a v1 message whose timestamp or type bit changed without recomputing the CRC."),
    _clause("FMT.legacy-type-bit", ("FMT-4",), "KIP-32", MUST, ALL,
            "Bit 3 (0x08) of v1 attributes is the timestamp type (0 CreateTime, 1 LogAppendTime); a v0 "
            "message reports NoTimestampType whatever bit 3 holds."),
    _clause("FMT.zstd-requires-v2", ("FMT-4",), "KIP-110", MUST, ZSTD_LEGACY_PRODUCE,
            "The zstd codec (id 4) is only valid in v2 batches; a v0/v1 message with codec 4 is "
            "rejected."),
    _clause("FMT.v1-uncompressed-own-timestamp", ("FMT-6", "FMT-14"), "KIP-32", MUST, ALL,
            "An uncompressed v1 message is its own batch: batch max timestamp = its timestamp and "
            "batch type = its own bit 3."),
    _clause("FMT.v1-wrapper-relative-offsets", ("FMT-7",), "KIP-31", MUST, ALL,
            "Inner messages of a compressed v1 wrapper carry relative offsets 0..n-1 and the wrapper "
            "offset is the absolute offset of the last inner message."),
    _clause("FMT.v1-wrapper-timestamp-is-max", ("FMT-7",), "KIP-32", MUST, ALL,
            "A writer sets a CreateTime v1 wrapper's timestamp to the largest inner timestamp and a "
            "LogAppendTime wrapper's to the append time.", ("TV-26",)),
    _clause("FMT.v1-inner-type-bit-ignored", ("FMT-7", "DIS-6"), "KIP-32", MUST, ALL,
            "On read, an inner v1 message's own bit 3 is ignored and the wrapper's type wins (Kafka's "
            "code; the KIP-32-era design comment said inner messages must carry CreateTime)."),
    _clause("FMT.writer-rejects-below-minus-one", ("FMT-8",), "KIP-32", MUST, ALL,
            "A record writer refuses any timestamp below -1, while readers accept such values "
            "without a sign check."),
    _clause("FMT.v2-header-layout", ("FMT-9",), "KIP-98", MUST, V2,
            "A v2 batch header holds attributes at byte 21, BaseTimestamp at 27 and MaxTimestamp at 35 "
            "(61-byte overhead), both timestamps int64 big-endian."),
    _clause("FMT.v2-crc-coverage", ("FMT-9",), "KIP-98", MUST, V2,
            "The v2 CRC-32C covers attributes through the end (both timestamps and the type bit) but not "
            "the partition leader epoch, so re-stamping the epoch keeps the CRC valid."),
    _clause("FMT.v2-type-never-none", ("FMT-10",), "KIP-98", MUST, V2,
            "A v2 batch reports CreateTime or LogAppendTime from attribute bit 3, never NoTimestampType."),
    _clause("FMT.v2-record-delta", ("FMT-11",), "KIP-98", MUST, V2,
            "In a CreateTime v2 batch each record reads BaseTimestamp + its zig-zag varlong "
            "TimestampDelta, and negative deltas are valid."),
    _clause("FMT.v2-base-is-first-record", ("FMT-11",), "KIP-98", SHOULD, V2,
            "A v2 writer sets BaseTimestamp to the first appended record's timestamp (not the minimum), "
            "MaxTimestamp to the maximum, and BaseTimestamp -1 for an empty batch.", ("TV-26",)),
    _clause("FMT.v2-delete-horizon-base", ("FMT-10", "FMT-11"), "KIP-534", SHOULD, DELETE_HORIZON,
            "With the delete-horizon flag (bit 6) set, BaseTimestamp holds the delete horizon and records "
            "still read BaseTimestamp + delta."),
    _clause("FMT.v2-lat-reads-max", ("FMT-12",), "KIP-98", MUST, V2,
            "In a v2 batch with bit 3 set every record reads MaxTimestamp, whatever BaseTimestamp and "
            "the deltas hold."),
    _clause("FMT.v2-lat-deltas-kept", ("FMT-12",), "KIP-98", SHOULD, V2,
            "The deltas of a LogAppendTime v2 batch stay physically present: clearing bit 3 makes the "
            "records read BaseTimestamp + delta again."),
    _clause("FMT.set-max-timestamp-keeps-base", ("FMT-13",), "KIP-32", MUST, ALL,
            "Setting a batch's (type, max timestamp) rewrites only attributes and max timestamp with a "
            "fresh CRC, never BaseTimestamp, and is a no-op when both are unchanged."),
    _clause("FMT.offset-of-max-first-occurrence", ("FMT-14", "FMT-11"), "KIP-734", MUST, OFFSET_OF_MAX_FIXED,
            "A batch's offset of max timestamp is the first record whose timestamp equals the batch max; "
            "a v0 batch has none."),
    # --- what a record builder writes: a producer's builder, or a broker-side one given a LogAppendTime,
    # checked on codec libraries (suites/test_codec_producer.py); what the broker itself writes is the clauses above.
    _clause("FMT.builder-createtime-type", ("VAL-8", "FMT-4", "FMT-10"), "KIP-32", MUST, ALL,
            "A producer's builder writes CreateTime (bit 3 clear) on every v1 message and v2 batch, since a broker "
            "rejects a producer batch flagged LogAppendTime (or, from 3.6, may store it with unvalidated times)."),
    _clause("FMT.builder-keeps-record-timestamps", ("FMT-3", "FMT-5", "FMT-7", "FMT-11", "CON-1"), "KIP-32", MUST,
            ALL,
            "Every record a builder writes reads back through Kafka's reader with the timestamp it was given (v0: "
            "-1), its key and its value."),
    _clause("FMT.builder-v1-wrapper-max", ("FMT-7", "VAL-13"), "KIP-32", SHOULD, ALL,
            "A producer writes a compressed CreateTime v1 wrapper's timestamp as the largest inner timestamp; a "
            "broker recomputes it on append (VAL-13), so another value only misleads readers of the raw bytes."),
    _clause("FMT.builder-v2-base-first", ("FMT-11",), "KIP-98", SHOULD, V2,
            "A producer writes a v2 batch's BaseTimestamp as its first record's timestamp (not the minimum), "
            "with every delta relative to it."),
    _clause("FMT.builder-v2-max", ("FMT-11", "VAL-13"), "KIP-98", SHOULD, V2,
            "A producer writes a CreateTime v2 batch's MaxTimestamp as its largest record timestamp; a broker "
            "recomputes it on append (VAL-13)."),
    _clause("FMT.builder-log-append-time", ("FMT-7", "FMT-12", "CMP-3"), "KIP-32", MUST, ALL,
            "A broker-side builder given LogAppendTime L sets bit 3 and writes L as the v2 MaxTimestamp or as every "
            "v1 message's and wrapper's timestamp, so every v1/v2 record reads L.", ("TV-26",)),
)

_VALIDATION: tuple[Clause, ...] = (
    _clause("VAL.no-timestamp-exempt", ("VAL-3",), "KIP-32", MUST, NO_TS_EXEMPT,
            "A CreateTime record with timestamp -1 is accepted whatever the before/after/difference "
            "bounds are."),
    _clause("VAL.no-timestamp-range-checked", ("VAL-3",), "KIP-32", SHOULD, NO_TS_CHECKED,
            "Before 0.11, timestamp -1 is range-checked like any value, so it is rejected once "
            "now + 1 exceeds the difference bound."),
    _clause("VAL.lat-topic-skips-range-check", ("VAL-3", "VAL-6"), "KIP-32", MUST, ALL,
            "On a LogAppendTime topic a record is accepted whatever its producer timestamp, since the "
            "bounds only apply to CreateTime topics."),
    _clause("VAL.range-before-after", ("VAL-4",), "KIP-937", MUST, BEFORE_AFTER,
            "A CreateTime record is rejected with INVALID_TIMESTAMP (32) iff now - ts > before or "
            "ts - now > after.", ("TV-23", "TV-24")),
    _clause("VAL.range-inclusive-bounds", ("VAL-4",), "KIP-937", MUST, BEFORE_AFTER,
            "Timestamps exactly now - before and now + after are accepted; one millisecond further is "
            "rejected."),
    _clause("VAL.range-long-min-is-future", ("VAL-4",), "KIP-937", SHOULD, BEFORE_AFTER,
            "With 64-bit wraparound a timestamp of Long.MIN_VALUE counts as ~2^63 ms in the future and "
            "is rejected whenever after is finite."),
    _clause("VAL.range-symmetric", ("VAL-5",), "KIP-32", MUST, SYMMETRIC,
            "Before 3.6 a CreateTime record is rejected iff |ts - now| > "
            "message.timestamp.difference.max.ms, the bound itself being accepted."),
    _clause("VAL.symmetric-long-min-accepted", ("VAL-5",), "KIP-32", SHOULD, SYMMETRIC,
            "Under the symmetric rule a timestamp exactly Long.MIN_VALUE ms from now (ts = now + "
            "Long.MIN_VALUE) is never rejected: Java's abs() of that distance stays negative."),
    _clause("VAL.bounds-fallback-to-difference", ("VAL-6",), "KIP-937", MUST, DIFFERENCE_FALLBACK,
            "In 3.6-3.9 a before or after bound that is unset or Long.MAX_VALUE falls back to "
            "message.timestamp.difference.max.ms, independently per side."),
    _clause("VAL.after-default-one-hour", ("VAL-6",), "KIP-1030", MUST, AFTER_DEFAULT_FINITE,
            "With default configs a record stamped more than 3600000 ms after now is rejected while any "
            "non-negative past timestamp is accepted."),
    _clause("VAL.difference-config-removed", ("VAL-6",), "KIP-937", SHOULD, NO_DIFFERENCE,
            "From 4.0 message.timestamp.difference.max.ms no longer exists and cannot change the "
            "effective bounds; only before/after apply."),
    _clause("VAL.out-of-range-error-code", ("VAL-7", "VAL-11", "DIS-5"), "KIP-32", MUST, ALL,
            "An out-of-range timestamp fails the partition with error code 32 INVALID_TIMESTAMP (Kafka's "
            "code, not KIP-32's TimestampExceededThresholdException).", ("TV-23",)),
    _clause("VAL.error-text-before-after", ("VAL-7",), "KIP-937", MUST, TEXT_3_6,
            "Each out-of-range record's error reads exactly \"Timestamp <ts> of message with offset "
            "<offset> is out of range. The timestamp should be within [<now-before>, <now+after>]\".",
            ("TV-25",)),
    _clause("VAL.error-text-difference", ("VAL-7",), "KIP-32", MUST, TEXT_0_11,
            "Before 3.6 each out-of-range record's error reads \"Timestamp <ts> of message with offset "
            "<offset> is out of range. The timestamp should be within [<now-diff>, <now+diff>]\"."),
    _clause("VAL.error-text-legacy", ("VAL-7",), "KIP-32", SHOULD, TEXT_0_10,
            "In 0.10 the out-of-range text is \"Timestamp <ts> of message is out of range. The timestamp "
            "should be within [<a>, <b>\" (no offset, no closing bracket)."),
    _clause("VAL.error-offset-from-request", ("VAL-7",), "KIP-467", MUST, ALL_RECORD_ERRORS,
            "The <offset> in an out-of-range message is the record's offset as sent in the request "
            "(relative), not the offset the log would have assigned."),
    _clause("VAL.error-bounds-wraparound", ("VAL-7",), "KIP-467", SHOULD, BOUNDS_PRINTED_WRAPPED,
            "The printed bounds use 64-bit wraparound, so with after = Long.MAX_VALUE the upper bound "
            "now + after prints as a large negative number."),
    _clause("VAL.lat-flag-rejected-on-lat-topic", ("VAL-8",), "KIP-32", MUST, ALL,
            "A producer batch flagged LogAppendTime on a LogAppendTime topic is rejected with "
            "INVALID_TIMESTAMP (32)."),
    _clause("VAL.lat-flag-rejected-always", ("VAL-8",), "KIP-32", MUST, LAT_FLAG_ALWAYS,
            "Before 3.6 a producer batch flagged LogAppendTime is rejected with INVALID_TIMESTAMP on "
            "CreateTime topics too."),
    _clause("VAL.lat-flag-accepted-on-createtime", ("VAL-8", "DIS-8"), "KIP-937", SHOULD, LAT_FLAG_ELSE,
            "From 3.6 a LogAppendTime-flagged batch on a CreateTime topic whose records read in range is "
            "accepted (Kafka's code; KIP-937 intended no change, so rejecting is also compatible)."),
    _clause("VAL.lat-flag-stored-as-createtime", ("VAL-8", "DIS-8"), "KIP-937", SHOULD, LAT_FLAG_ELSE,
            "An accepted LogAppendTime-flagged v2 batch is stored as CreateTime in place, so its records "
            "then read BaseTimestamp + delta (Kafka's code)."),
    _clause("VAL.lat-flag-error-text", ("VAL-8",), "KIP-467", SHOULD, ALL_RECORD_ERRORS,
            "The record error for a producer-set LogAppendTime flag starts \"Invalid timestamp type in "
            "message \" and ends \"Producer should not set timestamp type to LogAppendTime.\"."),
    _clause("VAL.whole-batch-rejected", ("VAL-9",), "KIP-32", MUST, ALL,
            "If any record of a batch fails validation nothing of the batch is written and no offsets "
            "are consumed (the log end offset is unchanged).", ("TV-23",)),
    _clause("VAL.timestamp-error-wins", ("VAL-9",), "KIP-467", MUST, ALL_RECORD_ERRORS,
            "A batch with both timestamp and other record errors fails with 32 and error_message \"One or "
            "more records have been rejected due to invalid timestamp\".", ("TV-25",)),
    _clause("VAL.first-failure-per-record", ("VAL-9",), "KIP-467", SHOULD, ALL_RECORD_ERRORS,
            "Only a record's first failure is reported, in the order magic, inner CRC, key on compacted "
            "topics, timestamp.", ("TV-25",)),
    _clause("VAL.invalid-record-summary-text", ("VAL-9",), "KIP-467", SHOULD, INVALID_RECORD_TEXT,
            "A batch failing only non-timestamp checks gets 87 with \"One or more records have been "
            "rejected due to <n> record errors in total, and only showing the first three errors at "
            "most: [...]\"."),
    _clause("VAL.corrupt-inner-crc", ("VAL-9",), "KIP-32", SHOULD, LEGACY_PRODUCE,
            "A compressed v0/v1 set whose inner message fails its CRC is rejected with CORRUPT_MESSAGE "
            "(2) and no record_errors."),
    _clause("VAL.legacy-first-failing-batch", ("VAL-10",), "KIP-467", SHOULD, LEGACY_ALL_RECORD_ERRORS,
            "An uncompressed v0/v1 set of single-message batches is aborted at the first failing batch, "
            "reporting only its errors with batch_index 0."),
    _clause("VAL.record-errors-batch-index", ("VAL-10", "VAL-11"), "KIP-467", MUST, ALL_RECORD_ERRORS,
            "A rejected v2 batch lists every failing record in record_errors with its 0-based position "
            "in the batch as batch_index and its own message.", ("TV-23", "TV-24", "TV-25")),
    _clause("VAL.rejection-response-fields", ("VAL-11",), "KIP-467", MUST, ALL,
            "A rejected partition's ProduceResponse has base_offset -1, log_append_time -1 and (v5+) the "
            "current log_start_offset, or -1 where the log never saw the batch (a request refused before it, "
            "a corrupt or too large batch)."),
    _clause("VAL.no-record-errors-legacy", ("VAL-11",), "KIP-467", SHOULD, NO_RECORD_ERRORS,
            "Before KIP-467 a rejected produce carries only error code 32, without record_errors or "
            "error_message."),
    _clause("VAL.producer-future-exceptions", ("VAL-11",), "KIP-467", SHOULD, ALL_RECORD_ERRORS,
            "A client fails one listed record with InvalidTimestampException, several with "
            "InvalidRecordException each, and the batch's other records with a KafkaException."),
    _clause("VAL.lat-response-time", ("VAL-12", "VAL-2"), "KIP-32", MUST, ALL,
            "A successful produce to a LogAppendTime topic returns log_append_time = the broker's now, "
            "and every v1/v2 record of the append reads exactly that value."),
    _clause("VAL.createtime-response-minus-one", ("VAL-12",), "KIP-32", MUST, ALL,
            "A successful produce to a CreateTime topic returns log_append_time -1."),
    _clause("VAL.duplicate-returns-cached-max", ("VAL-12",), "KIP-98", SHOULD, V2,
            "A retried idempotent duplicate returns the cached batch's MaxTimestamp as log_append_time, "
            "even on a CreateTime topic."),
    _clause("VAL.validation-before-dedup", ("VAL-12",), "KIP-98", SHOULD, V2,
            "A retried idempotent duplicate whose timestamps are now out of range is rejected with 32 "
            "rather than de-duplicated."),
    _clause("VAL.record-metadata-timestamp", ("VAL-12",), "KIP-32", MUST, ALL,
            "A client reports a sent record's timestamp as log_append_time when it is not -1, else the "
            "record's create timestamp."),
    _clause("VAL.header-max-recomputed", ("VAL-13",), "KIP-32", MUST, ALL,
            "On a CreateTime topic the stored batch max timestamp is the max of the record timestamps "
            "(-1 if all are -1) even when the producer's header said otherwise."),
    _clause("VAL.produce-v3-one-v2-batch", ("VAL-14", "CNV-1"), "KIP-98", MUST, V2,
            "Produce v3+ accepts exactly one batch per partition, of magic 2 (\"Produce requests with "
            "version N are only allowed to contain record batches with magic version 2\")."),
    _clause("VAL.records-count-matches", ("VAL-14",), "KAFKA-5031", MUST, V2,
            "A v2 batch whose RecordsCount agrees with its LastOffsetDelta but not with the records it holds is "
            "rejected whole with INVALID_RECORD (87) (\"Incorrect declared batch size\")."),
    _clause("VAL.idempotent-needs-v2", ("VAL-14", "CNV-6"), "KIP-98", SHOULD,
            _where(lambda p: p.honours_message_format_version and p.max_magic == 2),
            "A transactional or idempotent batch for a topic whose format is below v2 is rejected with "
            "UNSUPPORTED_FOR_MESSAGE_FORMAT (43)."),
    _clause("VAL.below-minus-one-range-checked", ("VAL-15", "FMT-8"), "KIP-32", SHOULD, V2,
            "A v2 record with timestamp below -1 is range-checked like any value (accepted under "
            "before = Long.MAX_VALUE), not rejected for its sign."),
    _clause("VAL.below-minus-one-rebuild-fails", ("VAL-15",), "KIP-32", SHOULD, V2,
            "A record with timestamp below -1 that goes through recompression or conversion fails with "
            "UNKNOWN_SERVER_ERROR (-1)."),
)

_COMPRESSION: tuple[Clause, ...] = (
    _clause("CMP.same-codec-in-place", ("CMP-1",), "KIP-32", SHOULD, ALL,
            "A batch whose codec and magic match the topic's is validated in place: its stored size is "
            "unchanged.", ("TV-17", "TV-18")),
    _clause("CMP.topic-codec-recompresses", ("CMP-1",), "KIP-32", MUST, ALL,
            "When the topic's compression.type differs from the producer's codec the stored batch uses "
            "the topic's codec.", ("TV-18",)),
    _clause("CMP.level-does-not-recompress", ("CMP-1",), "KIP-390", SHOULD, V2,
            "A different compression level with the same codec does not cause recompression."),
    _clause("CMP.inplace-createtime-untouched", ("CMP-2",), "KIP-32", MUST, ALL,
            "On a CreateTime topic an in-place batch keeps every record timestamp exactly as produced.",
            ("TV-17", "TV-18")),
    _clause("CMP.lat-every-record-reads-now", ("CMP-3", "CMP-4", "FMT-12"), "KIP-32", MUST, ALL,
            "On a LogAppendTime topic every stored v1/v2 record reads the append's now, whatever the "
            "producer stamped and whichever path the batch took.", ("TV-19", "TV-20", "TV-21")),
    _clause("CMP.lat-v1-uncompressed-overwrites", ("CMP-3",), "KIP-32", MUST, V1_PRODUCED_AND_STORED,
            "An uncompressed v1 message on a LogAppendTime topic is stored with timestamp now and bit 3 "
            "set (the producer time is lost).", ("TV-19",)),
    _clause("CMP.lat-v1-compressed-wrapper-only", ("CMP-3", "CMP-8", "DIS-4"), "KIP-32", SHOULD,
            V1_PRODUCED_AND_STORED,
            "A compressed v1 set on a LogAppendTime topic stamps only the wrapper in place, and inner "
            "timestamps keep producer values (Kafka's code; KIP-32 planned to check them for -1).",
            ("TV-20",)),
    _clause("CMP.lat-inplace-v2-keeps-base", ("CMP-3",), "KIP-32", SHOULD, V2,
            "A v2 batch stamped LogAppendTime in place gets MaxTimestamp = now and bit 3 while "
            "BaseTimestamp and deltas keep the producer's values.", ("TV-19", "TV-20")),
    _clause("CMP.lat-v0-target-max-minus-one", ("CMP-3", "CMP-6"), "KIP-32", SHOULD,
            FORMAT_VERSION_HONOURED,
            "On a LogAppendTime topic stored as v0 nothing is stamped and the append's max timestamp "
            "is -1.", ("TV-19",)),
    # SHOULD, settled on Kafka's evidence: Kafka's writer always stamps every inner message
    # (MemoryRecordsBuilder.appendLegacyRecord: LOG_APPEND_TIME -> timestamp = logAppendTime, 0.10-3.9), but no Kafka
    # reader sees an inner value under a LogAppendTime wrapper (AbstractLegacyRecordBatch's deep iterator gives each
    # inner record timestampFromWrapper), so a writer that leaves KIP-32's -1 breaks no consumer: not a MUST.
    _clause("CMP.lat-rebuild-v1-inner-now", ("CMP-4", "CMP-8", "DIS-4"), "KIP-32", SHOULD, V1_PRODUCED_AND_STORED,
            "A v1 set rebuilt on a LogAppendTime topic has now in the wrapper and, from 0.11, in every inner "
            "message (Kafka's code; not KIP-32's -1 inner timestamps); 0.10 kept the inner messages as written.",
            ("TV-21",)),
    _clause("CMP.lat-rebuild-v2-base-first-source", ("CMP-4",), "KIP-32", SHOULD, V2,
            "A v2 batch rebuilt on a LogAppendTime topic has MaxTimestamp = now and BaseTimestamp = the "
            "first source record's read timestamp (-1 from v0).", ("TV-21",)),
    _clause("CMP.rebuild-createtime-copies", ("CMP-5",), "KIP-32", MUST, ALL,
            "A recompressed or converted batch on a CreateTime topic keeps every record timestamp and "
            "has header max = the largest of them.", ("TV-18", "TV-22")),
    _clause("CMP.append-max-timestamp", ("CMP-6",), "KIP-33", MUST, INDEXED,
            "An append's max timestamp (fed to the segment) is the largest record timestamp for CreateTime "
            "(-1 if none or v0) and now for LogAppendTime.", ("TV-26",)),
    _clause("CMP.offset-of-max-batch-last", ("CMP-7",), "KAFKA-16310", SHOULD, BATCH_LAST_OFFSET,
            "The offset paired with an append's max timestamp is the last offset of the earliest batch "
            "holding the max (uncompressed v1: that message for CreateTime, the append's first offset for "
            "LogAppendTime).",
            ("TV-17",)),
    _clause("CMP.offset-of-max-exact-record", ("CMP-7",), "KIP-33", SHOULD, EXACT_RECORD_OFFSET,
            "Before 3.8 the leader pairs an uncompressed append's max with the exact record offset while "
            "followers and recovery use batch last offsets."),
)

_TIME_INDEX: tuple[Clause, ...] = (
    _clause("IDX.entry-layout", ("IDX-1",), "KIP-33", SHOULD, INDEXED,
            "A time-index entry is 12 bytes: int64 timestamp and int32 offset relative to the segment's "
            "base offset."),
    _clause("IDX.full-index-forces-roll", ("IDX-1",), "KIP-33", SHOULD, INDEXED,
            "A time index counts as full at capacity - 1 entries (capacity = segment.index.bytes / 12) "
            "and a full index forces a roll.", ("TV-02", "TV-03")),
    _clause("IDX.strictly-increasing", ("IDX-3", "DIS-10"), "KIP-33", MUST, INDEXED,
            "Time-index timestamps are strictly increasing and offsets non-decreasing (an equal offset "
            "is allowed: Kafka's code, not its javadoc); -1 is never indexed, 0 is.", ("TV-02",)),
    _clause("IDX.append-rejects-regressions", ("IDX-3",), "KIP-33", SHOULD, INDEXED,
            "Appending a smaller offset, a smaller timestamp, or to a full index without the skip flag "
            "is refused.", ("TV-03",)),
    _clause("IDX.entry-offset-batch-last", ("IDX-2", "DIS-2"), "KIP-33", SHOULD, INDEXED,
            "An entry (T, O) pairs the segment's largest timestamp T with the last offset of the earliest "
            "batch that reached it (Kafka's code, not KIP-33's next offset)."),
    _clause("IDX.interval-per-append", ("IDX-4",), "KIP-33", SHOULD, PER_APPEND_INDEX,
            "An index entry is attempted per append call once more than index.interval.bytes were "
            "appended since the last one, so the first append never indexes.", ("TV-04", "TV-05")),
    _clause("IDX.interval-per-batch", ("IDX-4",), "KAFKA-806", SHOULD, PER_BATCH_INDEX,
            "The index-interval test runs per batch inside an append, each entry pairing the segment max "
            "so far with its offset.", ("TV-08",)),
    _clause("IDX.entry-on-roll", ("IDX-4",), "KIP-33", SHOULD, INDEXED,
            "When a segment rolls or closes, an entry with the segment max is attempted even if the "
            "index is full."),
    _clause("IDX.segment-max-strictly-greater", ("IDX-5",), "KIP-33", MUST, INDEXED,
            "A segment's max timestamp changes only when an incoming max is strictly greater, so ties "
            "keep the earliest batch's offset."),
    _clause("IDX.max-after-truncation", ("IDX-5", "IDX-14"), "KIP-33", MUST, INDEXED,
            "After truncation a segment's max timestamp and next offset come from the records that "
            "remain.", ("TV-05",)),
    _clause("IDX.largest-timestamp-mtime", ("IDX-6", "DIS-3"), "KIP-33", SHOULD, INDEXED,
            "A segment without timestamps gets no index entry and its largest timestamp is the file's "
            "mtime (Kafka's code; KIP-33 planned an mtime entry)."),
    _clause("IDX.lookup-largest-le-target", ("IDX-7",), "KIP-33", MUST, INDEXED,
            "An index lookup returns the entry with the largest timestamp <= target, or "
            "(-1, base offset) when there is none.", ("TV-01", "TV-02")),
    _clause("IDX.segment-search-first-ge", ("IDX-8", "DIS-9"), "KIP-33", MUST, INDEXED,
            "A segment search returns the first record with timestamp >= target at or after the "
            "starting offset, with its own timestamp (the code; the javadoc's base offset is stale).",
            ("TV-04",)),
    _clause("IDX.roll-by-first-batch", ("IDX-9", "DIS-1"), "KIP-33", SHOULD, ROLL_BY_TIMESTAMP,
            "A segment rolls when incoming max - roll base > segment.ms - jitter, the base being the first "
            "append's (4.1+: batch's) max (Kafka's code, not KIP-33's largest timestamp).",
            ("TV-07", "TV-10")),
    _clause("IDX.roll-by-age-without-timestamps", ("IDX-9",), "KIP-33", SHOULD, ALL,
            "When a segment has no roll base (no timestamps; always in 0.10.0) it rolls once "
            "now - creation time > segment.ms - jitter.", ("TV-06", "TV-10")),
    _clause("IDX.roll-jitter", ("IDX-9",), "KIP-33", SHOULD, ALL,
            "The roll threshold is segment.ms minus a per-segment jitter drawn from "
            "[0, min(segment.jitter.ms, segment.ms)).", ("TV-11",)),
    _clause("IDX.roll-never-empty", ("IDX-9",), "KIP-33", SHOULD, ALL,
            "An empty segment never rolls on time and an empty append never rolls.", ("TV-06", "TV-10")),
    _clause("IDX.future-first-timestamp-blocks-roll", ("IDX-9",), "KIP-33", SHOULD, ROLL_BY_TIMESTAMP,
            "A far-future first timestamp blocks time rolls, and an incoming batch with max -1 never "
            "time-rolls a segment that has a roll base."),
    _clause("IDX.compacted-roll-max-lag", ("IDX-9",), "KIP-354", SHOULD, COMPACTION_LAG_ROLL,
            "On a compacted topic with a positive max.compaction.lag.ms the time-roll threshold is "
            "min(max.compaction.lag.ms, segment.ms)."),
    _clause("IDX.retention-by-largest-timestamp", ("IDX-10", "IDX-6"), "KIP-33", MUST, RETENTION_BY_TIMESTAMP,
            "A segment is deletable iff now - its largest timestamp > retention.ms (strict); "
            "retention.ms = -1 disables.", ("TV-12",)),
    _clause("IDX.retention-prefix-rule", ("IDX-10",), "KIP-33", MUST, RETENTION_BY_TIMESTAMP,
            "Retention deletes oldest-first and stops at the first non-deletable segment, so one "
            "future-stamped segment shields every later segment."),
    _clause("IDX.retention-needs-high-watermark", ("IDX-10",), "KIP-33", SHOULD, RETENTION_BY_TIMESTAMP,
            "A segment is deleted by retention only once the high watermark reaches the next segment's "
            "base offset, and an empty active segment is never deleted."),
    _clause("IDX.retention-by-mtime", ("IDX-10",), "KIP-32", SHOULD, RETENTION_BY_MTIME,
            "Before the time index (0.10.0), time retention compares retention.ms with the segment file's "
            "mtime, not record timestamps."),
    _clause("IDX.monotonic-per-segment-only", ("IDX-12",), "KIP-33", MUST, INDEXED,
            "A later segment may hold smaller timestamps than an earlier one; lookups still return the "
            "first offset at or after the target in the first qualifying segment."),
    _clause("IDX.follower-index-from-headers", ("IDX-13",), "KIP-33", SHOULD, INDEXED,
            "Follower and recovery index entries come from batch headers (MaxTimestamp, last offset).",
            ("TV-09",)),
    _clause("IDX.truncation-drops-entries", ("IDX-14",), "KIP-33", MUST, INDEXED,
            "Truncation removes every index entry with offset >= the truncation point, and an emptied "
            "segment restarts its age and forgets its roll base.", ("TV-03", "TV-05", "TV-06")),
)

_LIST_OFFSETS: tuple[Clause, ...] = (
    _clause("LO.first-ge-target", ("LO-2",), "KIP-79", MUST, TIMESTAMP_SEARCH,
            "A timestamp lookup returns the smallest offset whose record timestamp is >= target, not the "
            "record with the closest timestamp.", ("TV-04", "TV-13")),
    _clause("LO.record-own-timestamp", ("LO-2",), "KIP-79", MUST, TIMESTAMP_SEARCH,
            "The timestamp returned with a found offset is that record's own timestamp.", ("TV-13",)),
    _clause("LO.not-found-minus-one", ("LO-2",), "KIP-79", MUST, TIMESTAMP_SEARCH,
            "When no record has timestamp >= target the answer is error NONE, offset -1, timestamp -1.",
            ("TV-13", "TV-15")),
    _clause("LO.first-qualifying-segment", ("LO-2", "IDX-6"), "KIP-79", SHOULD, TIMESTAMP_SEARCH,
            "Only the first segment whose largest timestamp >= target is searched, so a v0-only segment "
            "there yields not-found even if later segments match."),
    _clause("LO.search-from-log-start", ("LO-2",), "KIP-79", MUST, TIMESTAMP_SEARCH,
            "A timestamp lookup never returns an offset below the log start offset (e.g. after "
            "DeleteRecords)."),
    _clause("LO.epoch-of-found-batch", ("LO-2",), "KIP-320", MUST, WITH_EPOCH,
            "From ListOffsets v4 the leader epoch returned is that of the batch holding the found record.",
            ("TV-13",)),
    _clause("LO.no-epoch-before-v4", ("LO-9",), "KIP-320", MUST, EPOCHLESS_VERSIONS,
            "ListOffsets v1-v3 responses carry leader epoch -1.", ("TV-16",)),
    _clause("LO.visibility-cap", ("LO-3",), "KIP-98", MUST, CAP_LT_FETCHABLE,
            "For a consumer, a found offset must be < the high watermark (read_uncommitted), otherwise "
            "the answer is -1/-1 with error NONE."),
    _clause("LO.visibility-cap-le-hw", ("LO-3",), "KIP-79", SHOULD, CAP_LE_HW,
            "Before 1.0 a consumer's timestamp lookup may return an offset up to and including the "
            "high watermark."),
    _clause("LO.read-committed-lso", ("LO-3", "LO-4"), "KIP-98", MUST, READ_COMMITTED,
            "A read_committed lookup is capped at the last stable offset and LATEST returns the LSO."),
    _clause("LO.cap-exempts-earliest", ("LO-3", "LO-5"), "KIP-79", MUST, TIMESTAMP_SEARCH,
            "EARLIEST (and EARLIEST_LOCAL) are not subject to the visibility cap."),
    _clause("LO.fresh-leader-not-available", ("LO-3",), "KIP-207", SHOULD, OFFSET_NOT_AVAILABLE,
            "While a new leader's epoch start offset is above the high watermark, LATEST and capped "
            "lookups fail with OFFSET_NOT_AVAILABLE (v5+) or LEADER_NOT_AVAILABLE (< v5)."),
    _clause("LO.replica-capped-at-leo", ("LO-3", "LO-4"), "KIP-79", SHOULD, TIMESTAMP_SEARCH,
            "A replica or debug ListOffsets request is capped at the log end offset, and its LATEST is "
            "the LEO."),
    _clause("LO.latest-is-high-watermark", ("LO-4",), "KIP-79", MUST, TIMESTAMP_SEARCH,
            "LATEST (-1) returns the high watermark with timestamp -1 and (v4+) the current leader epoch.",
            ("TV-13", "TV-15", "TV-16")),
    _clause("LO.earliest-is-log-start", ("LO-5",), "KIP-79", MUST, TIMESTAMP_SEARCH,
            "EARLIEST (-2) returns the log start offset with timestamp -1.", ("TV-13", "TV-15", "TV-16")),
    _clause("LO.earliest-local-equals-earliest", ("LO-5",), "KIP-405", MUST, EARLIEST_LOCAL,
            "Without tiered storage EARLIEST_LOCAL (-4) answers exactly like EARLIEST (-2).",
            ("TV-13", "TV-16")),
    _clause("LO.latest-tiered-none", ("LO-5",), "KIP-1005", MUST, LATEST_TIERED,
            "Without tiered storage LATEST_TIERED (-5) returns offset -1 and epoch -1."),
    _clause("LO.earliest-pending-upload-none", ("LO-5",), "KIP-1023", MUST, PENDING_UPLOAD,
            "Without tiered storage EARLIEST_PENDING_UPLOAD (-6, ListOffsets v11) returns offset -1 and epoch -1."),
    _clause("LO.max-timestamp-first-record", ("LO-6", "DIS-7"), "KIP-734", MUST, MAX_TS_EXACT,
            "MAX_TIMESTAMP (-3) returns the largest timestamp with the offset of the first record holding "
            "it and its batch's epoch (Kafka's code since 3.8, as KIP-734 intended).", ("TV-14", "TV-15")),
    _clause("LO.max-timestamp-earliest-on-ties", ("LO-6",), "KIP-734", MUST, MAX_TS_EXACT,
            "When several segments or batches reach the same max timestamp, MAX_TIMESTAMP returns the "
            "earliest of them.", ("TV-14",)),
    _clause("LO.max-timestamp-lat-batch-first-record", ("LO-6",), "KIP-734", MUST, MAX_TS_EXACT,
            "When the max belongs to a LogAppendTime batch, MAX_TIMESTAMP returns that batch's first "
            "record.", ("TV-15",)),
    _clause("LO.max-timestamp-empty", ("LO-6",), "KIP-734", MUST, MAX_TS_EXACT,
            "MAX_TIMESTAMP on an empty log (or a v0-only log) returns offset -1, timestamp -1.",
            ("TV-15",)),
    _clause("LO.max-timestamp-capped", ("LO-6", "LO-3"), "KIP-734", MUST, MAX_TS_EXACT,
            "MAX_TIMESTAMP is subject to the consumer visibility cap: a max whose offset is at or beyond "
            "the high watermark answers -1/-1."),
    _clause("LO.max-timestamp-ignores-log-start", ("LO-6",), "KIP-734", SHOULD, MAX_TS_EXACT,
            "MAX_TIMESTAMP does not consult the log start offset, so after DeleteRecords it may return an "
            "offset below it while the segment exists."),
    _clause("LO.special-target-min-version", ("LO-1",), "KAFKA-17331", MUST, TARGETS_VERSIONED,
            "MAX_TIMESTAMP below v7, EARLIEST_LOCAL below v8, LATEST_TIERED below v9 or (4.2+) "
            "EARLIEST_PENDING_UPLOAD below v11 gets UNSUPPORTED_VERSION (35) with offset -1, timestamp -1.",
            ("TV-16",)),
    _clause("LO.unknown-target-unsupported", ("LO-1",), "KAFKA-17331", MUST, TARGETS_VERSIONED,
            "A negative target the broker does not know (e.g. -7) gets UNSUPPORTED_VERSION with "
            "offset -1, timestamp -1."),
    _clause("LO.unknown-target-searched", ("LO-1",), "KIP-79", SHOULD, TARGETS_SEARCHED,
            "Before 3.9 an unknown negative target falls through to the timestamp search and matches the "
            "first record."),
    _clause("LO.v0-segment-offsets", ("LO-7",), "KIP-79", MAY, LIST_OFFSETS_V0,
            "ListOffsets v0 answers with a descending list of segment base offsets (LATEST: the LEO "
            "first), chosen by segment file mtime, never an offset inside a segment."),
    _clause("LO.unsupported-for-message-format", ("LO-8",), "KIP-79", SHOULD, FORMAT_VERSION_WITH_SEARCH,
            "A timestamp or MAX_TIMESTAMP lookup on a topic whose format is below 0.10.0 fails with "
            "UNSUPPORTED_FOR_MESSAGE_FORMAT (43)."),
    _clause("LO.client-rejects-negative-target", ("LO-9",), "KIP-79", MUST, TIMESTAMP_SEARCH,
            "offsetsForTimes refuses a negative target with \"The target time for partition <tp> is <ts>. "
            "The target time cannot be negative.\""),
    _clause("LO.client-null-when-not-found", ("LO-9", "LO-8"), "KIP-79", MUST, TIMESTAMP_SEARCH,
            "offsetsForTimes returns null for a partition answered with offset -1 (or error 43)."),
    _clause("LO.client-min-version", ("LO-9",), "KIP-79", SHOULD, TIMESTAMP_SEARCH,
            "offsetsForTimes sends ListOffsets v1 or later (v2+ for read_committed)."),
    # --- what a client library reports of a lookup: checked on client libraries against the broker's own
    # ListOffsets answers and stored records (suites/test_client_lookups.py), never against the model's.
    _clause("LO.client-offsets-for-times-answer", ("LO-9", "LO-2"), "KIP-79", MUST, TIMESTAMP_SEARCH,
            "offsetsForTimes returns, for a partition the broker found a record for, the offset and timestamp of "
            "the broker's ListOffsets answer."),
    _clause("LO.client-special-target-answer", ("LO-9", "LO-4", "LO-5"), "KIP-734", MUST, TIMESTAMP_SEARCH,
            "beginningOffsets, endOffsets and an Admin listOffsets with OffsetSpec earliest, latest or maxTimestamp "
            "report the offset (and timestamp) the broker answered for EARLIEST (-2), LATEST (-1) and "
            "MAX_TIMESTAMP (-3)."),
    _clause("LO.client-seek-by-time", ("LO-9", "LO-2", "CON-1"), "KIP-79", MUST, TIMESTAMP_SEARCH,
            "After a seek to the offset offsetsForTimes found for a target, the first record the consumer delivers "
            "is the stored record at that offset (not an earlier record of its batch), read as CON-1 says."),
)

_CONVERSION: tuple[Clause, ...] = (
    _clause("CNV.legacy-produce-any-magic", ("CNV-1",), "KIP-32", SHOULD, LEGACY_PRODUCE,
            "Before 4.0 Produce v0-v2 accept v0 or v1 batches whatever magic the version nominally "
            "implies."),
    _clause("CNV.fetch-version-caps-magic", ("CNV-2", "CNV-5"), "KIP-32", MAY, DOWN_CONVERSION,
            "Fetch v0-v1 returns magic 0 and v2-v3 at most magic 1, down-converting newer batches; v4+ "
            "returns batches as stored."),
    _clause("CNV.stored-magic", ("CNV-3",), "KIP-724", MUST, ALL,
            "Produced data is stored in the topic's message.format.version magic where honoured "
            "(< IBP 3.0), otherwise always as v2."),
    _clause("CNV.up-convert-v0-createtime", ("CNV-4",), "KIP-32", MUST, LEGACY_PRODUCE,
            "A v0 record up-converted on a CreateTime topic reads timestamp -1 with type CreateTime.",
            ("TV-22",)),
    _clause("CNV.up-convert-v0-lat", ("CNV-4",), "KIP-32", MUST, LEGACY_PRODUCE,
            "A v0 record up-converted on a LogAppendTime topic reads now with type LogAppendTime.",
            ("TV-21",)),
    _clause("CNV.up-convert-v1-v2-preserves", ("CNV-4",), "KIP-98", MUST, LEGACY_PRODUCE_V2,
            "A v1 record up-converted to v2 keeps its timestamp and type (LogAppendTime still applied if "
            "the topic says so).", ("TV-22",)),
    _clause("CNV.down-convert-keeps-type", ("CNV-5",), "KIP-98", MAY, DOWN_CONVERSION_V2,
            "A down-converted LogAppendTime v2 batch becomes v1 LogAppendTime with every message and the "
            "wrapper carrying the batch MaxTimestamp.", ("TV-27",)),
    _clause("CNV.down-convert-createtime-keeps-timestamps", ("CNV-5",), "KIP-98", MAY, DOWN_CONVERSION_V2,
            "A down-converted CreateTime batch keeps every record timestamp and gets wrapper = max.",
            ("TV-27",)),
    _clause("CNV.down-convert-v0-drops", ("CNV-5", "CNV-6"), "KIP-32", MAY, DOWN_CONVERSION,
            "Converting to v0 (on fetch or on a v0-format topic's produce) drops timestamps and type; "
            "records read -1 / NoTimestampType."),
    _clause("CNV.down-convert-drops-control", ("CNV-5",), "KIP-98", MAY, DOWN_CONVERSION_V2,
            "Down-conversion drops control batches (and headers) and preserves keys and batch order.",
            ("TV-27",)),
    _clause("CNV.down-convert-zstd-unsupported", ("CNV-5",), "KIP-110", MAY, ZSTD_DOWN_CONVERSION,
            "Below v4 a zstd batch ends what a consumer gets (converted batches before it), and one met first, or "
            "any fetch below v10 of a zstd topic, is UNSUPPORTED_COMPRESSION_TYPE (76).", ("TV-27",)),
    _clause("CNV.down-conversion-disabled", ("CNV-5",), "KIP-283", MAY, DOWN_CONVERSION_CONFIG,
            "With message.downconversion.enable=false a client fetch on the conversion path gets "
            "UNSUPPORTED_VERSION (from 3.0 every fetch below v4; before, only one reaching a batch it "
            "cannot read); follower fetches are exempt."),
    _clause("CNV.no-conversion", ("CNV-7", "CNV-1", "CNV-2"), "KIP-896", MUST, NO_DOWN_CONVERSION,
            "From 4.0 Produce v0-v2 and Fetch v0-v3 get no answer (the broker closes the connection, which "
            "a client reads as NETWORK_EXCEPTION) and v0/v1 batches already on disk are served as stored, "
            "never converted."),
)

_REPLICATION: tuple[Clause, ...] = (
    _clause("REP.follower-no-restamp", ("REP-1", "VAL-1"), "KIP-32", MUST, ALL,
            "A follower stores the leader's batches verbatim, without validation or re-stamping: "
            "timestamps, type and MaxTimestamp are identical on every replica."),
    _clause("REP.lookups-agree-after-failover", ("REP-1", "IDX-13"), "KIP-79", MUST, TIMESTAMP_SEARCH,
            "Timestamp lookups (and MAX_TIMESTAMP where supported) answer the same after leadership "
            "moves to a follower or the index is rebuilt by recovery.", ("TV-15",)),
    _clause("REP.lat-from-current-leader-clock", ("REP-2",), "KIP-32", SHOULD, ALL,
            "After a failover LogAppendTime is the new leader's wall clock, even when it is below "
            "timestamps the previous leader stamped."),
    _clause("REP.lat-not-clamped", ("REP-2", "VAL-2"), "KIP-32", SHOULD, ALL,
            "When the leader's clock steps backwards, LogAppendTime follows it: there is no "
            "max(previous, now) clamp, so LogAppendTime need not be monotone in offset."),
    _clause("REP.backward-step-lookup", ("REP-3", "LO-2", "IDX-5"), "KIP-79", MUST, TIMESTAMP_SEARCH,
            "After a backward clock step a lookup still returns the smallest offset with timestamp >= "
            "target, possibly from before the step, and the segment max keeps the highest value."),
    _clause("REP.replica-index-agrees", ("REP-4", "CMP-7"), "KAFKA-16310", SHOULD, REPLICA_INDEX_AGREES,
            "From 3.8 leader and followers pair each time-index timestamp with the same offset."),
    _clause("REP.replica-segments-agree", ("REP-4", "IDX-9"), "KAFKA-806", SHOULD, ROLL_BY_FIRST_BATCH,
            "From 4.1 leader and followers roll time-based segments at the same offsets, the roll base "
            "being the first batch's MaxTimestamp on both."),
)

_CONSUMER_VIEW: tuple[Clause, ...] = (
    _clause("CON.v0-no-timestamp", ("CON-1", "FMT-5"), "KIP-32", MUST, LEGACY_STORED,
            "A consumer reads a v0 record with timestamp -1 and NoTimestampType."),
    _clause("CON.v1-uncompressed-own", ("CON-1", "FMT-6"), "KIP-32", MUST, LEGACY_STORED,
            "A consumer reads an uncompressed v1 record with its own timestamp field and its own bit-3 "
            "type."),
    _clause("CON.v1-wrapper-createtime-inner", ("CON-1", "FMT-7"), "KIP-32", MUST, LEGACY_STORED,
            "A consumer reads an inner record of a CreateTime v1 wrapper with its own stored timestamp "
            "and type CreateTime."),
    _clause("CON.v1-wrapper-lat-wrapper-value", ("CON-1", "FMT-7"), "KIP-32", MUST, LEGACY_STORED,
            "A consumer reads every inner record of a LogAppendTime v1 wrapper with the wrapper's "
            "timestamp and type LogAppendTime."),
    _clause("CON.v1-wrapper-v0-inner", ("CON-1", "FMT-7"), "KIP-32", MUST, LEGACY_STORED,
            "A consumer reads a v0 inner record of a v1 wrapper with timestamp -1 and the wrapper's "
            "type."),
    _clause("CON.v2-createtime-base-plus-delta", ("CON-1", "FMT-11"), "KIP-98", MUST, V2,
            "A consumer reads a CreateTime v2 record as BaseTimestamp + delta with type CreateTime."),
    _clause("CON.v2-lat-max-timestamp", ("CON-1", "FMT-12"), "KIP-98", MUST, V2,
            "A consumer reads every record of a LogAppendTime v2 batch as the batch MaxTimestamp with "
            "type LogAppendTime."),
)

CLAUSES: tuple[Clause, ...] = (
    *_FORMAT,
    *_VALIDATION,
    *_COMPRESSION,
    *_TIME_INDEX,
    *_LIST_OFFSETS,
    *_CONVERSION,
    *_REPLICATION,
    *_CONSUMER_VIEW,
)

_BY_ID: dict[str, Clause] = {c.id: c for c in CLAUSES}


def get_clause(clause_id: str) -> Clause:
    """The clause with this ID; KeyError naming the fix if unknown."""
    try:
        return _BY_ID[clause_id]
    except KeyError:
        raise KeyError(
            f"unknown clause {clause_id!r}: list the IDs with `kafka-conformance clauses`"
        ) from None


def clauses_for_profile(name: str) -> tuple[Clause, ...]:
    """The clauses that apply under profile `name` (KeyError naming the known profiles if unknown)."""
    get_profile(name)
    return tuple(c for c in CLAUSES if name in c.profiles)


def clauses_for_area(area: Area) -> tuple[Clause, ...]:
    return tuple(c for c in CLAUSES if c.area is area)


def clauses_for_rule(rule_id: str) -> tuple[Clause, ...]:
    """The clauses citing rule `rule_id` (docs/rules.md; empty if none)."""
    return tuple(c for c in CLAUSES if rule_id in c.rules)


def clauses_for_vector(vector_id: str) -> tuple[Clause, ...]:
    """The clauses a test vector (TV-xx) restates."""
    return tuple(c for c in CLAUSES if vector_id in c.vectors)


def coverage(
    rule_ids: Iterable[str] | None = None, clauses: Iterable[Clause] | None = None
) -> tuple[list[str], dict[str, str]]:
    """(rules no clause cites and not deliberately untested, the deliberately untested ones with why).

    Defaults to `models.rules.RULE_IDS` and the whole catalogue; pass the IDs parsed from another
    rule digest (`models.rules.parse_semantics`) to check the catalogue against it.
    """
    ids = tuple(RULE_IDS if rule_ids is None else rule_ids)
    cited = {r for c in (CLAUSES if clauses is None else clauses) for r in c.rules}
    uncovered = [r for r in ids if r not in cited and r not in UNTESTABLE]
    untested = {r: UNTESTABLE[r] for r in ids if r in UNTESTABLE}
    return uncovered, untested


__all__ = [
    "CLAUSES",
    "CLIENT_AND_CODEC_SUITES",
    "MODEL_TESTS",
    "Area",
    "Clause",
    "Level",
    "clauses_for_area",
    "clauses_for_profile",
    "clauses_for_rule",
    "clauses_for_vector",
    "coverage",
    "get_clause",
]


def kip_url(kip: str) -> str:
    """Where a KIP or a KAFKA JIRA is described."""
    if kip.startswith("KAFKA-"):
        return f"https://issues.apache.org/jira/browse/{kip}"
    return f"https://cwiki.apache.org/confluence/dosearchsite.action?queryString={kip}"
