"""Behaviour profiles: where Kafka versions differ, as data (docs/model.md, "Behaviour profiles").

A profile is chosen per run; model code reads its fields and never tests a version number.
The `kafka-*` profiles follow Apache Kafka's code where the KIP text disagrees (the DIS-* rules of
docs/rules.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from .constants import LONG_MAX


class RangeRule(Enum):
    """VAL-4 (before/after, 3.6+) or VAL-5 (symmetric difference, 0.10.0-3.5)."""

    SYMMETRIC = "symmetric"
    BEFORE_AFTER = "before-after"


class LogAppendTimeFlagCheck(Enum):
    """VAL-8: when a producer-set LogAppendTime bit is rejected."""

    ALWAYS = "always"  # 0.10.0-3.5: every flagged batch is rejected
    ELSE_BRANCH = "else-branch"  # 3.6+: only when not (CreateTime topic and ts != -1)


class RecordErrorsStyle(Enum):
    """VAL-11: what a rejected produce reports per record (KIP-467)."""

    NONE = "none"  # < 2.4: only the error code
    FIRST = "first"  # 2.4: only the first failing record
    ALL = "all"  # 2.5+: every failing record of the batch


class ErrorTextStyle(Enum):
    """VAL-7: wording of the per-record out-of-range text."""

    V0_10 = "0.10"  # no offset, no closing bracket
    V0_11 = "0.11"  # with offset, [now-diff, now+diff]
    V3_6 = "3.6"  # with offset, [now-before, now+after]


class MaxTimestampLookup(Enum):
    """LO-6: how ListOffsets MAX_TIMESTAMP (-3) answers."""

    ABSENT = "absent"  # < 3.0: the target is not special
    CACHED = "cached"  # 3.0-3.7: the cached segment offset with the latest epoch
    EXACT = "exact"  # 3.8+: the first record holding the max


class ShallowOffsetOfMax(Enum):
    """CMP-7: the "offset of max timestamp" the leader feeds the segment."""

    EXACT_RECORD = "exact-record"  # 0.10.1-3.7 leader: exact record offset (followers: batch last)
    BATCH_LAST = "batch-last"  # 3.8-4.0: last offset of the batch holding the max
    PER_BATCH = "per-batch"  # 4.1+: derived from each batch header by the segment


class IndexGranularity(Enum):
    """IDX-4: whether the index-interval test runs per append call or per batch."""

    NONE = "none"  # 0.10.0: no time index
    PER_APPEND = "per-append"
    PER_BATCH = "per-batch"  # 4.1+ (KAFKA-806)


class RollBase(Enum):
    """IDX-9: what a time-based roll measures from."""

    WALL_CLOCK = "wall-clock"  # 0.10.0: now - segment creation
    FIRST_APPEND = "first-append"  # 0.10.1-4.0: max timestamp of the first append into the segment
    FIRST_BATCH = "first-batch"  # 4.1+: MaxTimestamp of the first batch


class RetentionBasis(Enum):
    """IDX-10: what time-based retention compares with retention.ms."""

    MTIME = "mtime"  # 0.10.0: segment file last-modified time
    LARGEST_TIMESTAMP = "largest-timestamp"  # 0.10.1+


class VisibilityCap(Enum):
    """LO-3: how a consumer's timestamp lookup is capped."""

    LE_HIGH_WATERMARK = "le-hw"  # 0.10.1-0.11: offset <= HW
    LT_LAST_FETCHABLE = "lt-last-fetchable"  # 1.0+: offset < HW (or LSO)


class UnknownSpecialTarget(Enum):
    """LO-1: a negative target that is unknown or below its minimum version."""

    SEARCH = "search"  # < 3.9: falls through to the timestamp search
    UNSUPPORTED_VERSION = "unsupported-version"  # 3.9+ (KAFKA-17331)


@dataclass(frozen=True, kw_only=True)
class Profile:
    name: str
    kafka_version: str
    description: str
    # Formats and versions (CNV-1..3, §9)
    max_magic: int
    produce_versions: tuple[int, int]
    fetch_versions: tuple[int, int]
    list_offsets_versions: tuple[int, int]
    honours_message_format_version: bool  # CNV-3: IBP < 3.0
    down_conversion: bool  # CNV-5 (0.10.0-3.9); CNV-7 removed in 4.0
    has_downconversion_config: bool  # CNV-5: message.downconversion.enable (KIP-283, 2.0)
    # CNV-5: a down-converting fetch merges every fetched message into one v0 set in the first batch's codec (0.10's
    # toMessageFormat); 0.11 converts batch by batch (KAFKA-4816's AbstractRecords.downConvert)
    down_conversion_merges: bool
    has_zstd: bool  # FMT-4, CNV-5: the zstd codec, id 4 (KIP-110, 2.1: Produce v7, Fetch v10)
    # Validation (VAL-3..8)
    exempt_no_timestamp: bool  # VAL-3: -1 exempt from the range check (0.11+)
    range_rule: RangeRule
    has_difference_config: bool  # VAL-6: message.timestamp.difference.max.ms
    has_before_after_configs: bool  # VAL-6: KIP-937 configs (3.6+)
    default_before_ms: int
    default_after_ms: int  # KIP-1030: 1 h in 4.0+
    lat_flag_check: LogAppendTimeFlagCheck
    record_errors: RecordErrorsStyle
    error_text: ErrorTextStyle
    # VAL-8: the compressed path validating in place reads records without key and value, which a record error
    # prints as PartialDefaultRecord (2.6+: KAFKA-9820 put KAFKA-8106's skipKeyValueIterator to use)
    partial_in_place_records: bool
    # VAL-13: the in-place path rewrites an uncompressed v1 CreateTime message's timestamp to the batch max (-1 for
    # a timestamp below -1), as it does a v2 batch's MaxTimestamp (0.11's LogValidator); 0.10 only set offsets
    in_place_rewrites_v1_timestamp: bool
    # CMP-4/CMP-8: a v1 set rebuilt compressed on a LogAppendTime topic gets now in every inner message too (0.11's
    # MemoryRecordsBuilder, KAFKA-4816); 0.10's builder stamped the wrapper and copied the inner messages as written
    lat_rebuild_stamps_inner: bool
    invalid_record_text_3_2: bool  # VAL-9 top-level wording for INVALID_RECORD since 3.2
    # VAL-14: the request-level checks of a Produce v3+ are answered per partition (2.1, with zstd's
    # UNSUPPORTED_COMPRESSION_TYPE, KIP-110); before, they ran while the request was parsed, closing the connection.
    # 2.1.0 still parsed them so (KAFKA-7549, fixed in 2.1.1): a bug of that release, not of the line's contract
    request_checks_answered: bool
    # Compression / index (CMP-7, IDX-4, IDX-9, IDX-10)
    shallow_offset_of_max: ShallowOffsetOfMax
    index_granularity: IndexGranularity
    roll_base: RollBase
    has_max_compaction_lag: bool  # IDX-9: max.compaction.lag.ms bounds a compacted topic's roll (KIP-354, 2.3)
    retention_basis: RetentionBasis
    # ListOffsets (LO-1, LO-3, LO-6)
    visibility_cap: VisibilityCap
    fresh_leader_check: bool  # LO-3: a leader whose epoch starts above the HW refuses (KIP-207, 2.2)
    max_timestamp_lookup: MaxTimestampLookup
    unknown_special_target: UnknownSpecialTarget
    special_target_min_versions: tuple[tuple[int, int], ...]  # (target, minimum ListOffsets version)

    def __repr__(self) -> str:
        # Short: Hypothesis prints every argument of a failing test, the profile fixture included, and the
        # reader needs its name and the API versions in play, not thirty behaviour fields.
        produce, fetch, lookups = self.produce_versions, self.fetch_versions, self.list_offsets_versions
        return (
            f"Profile({self.name!r}, produce v{produce[0]}-{produce[1]}, fetch v{fetch[0]}-{fetch[1]}, "
            f"list_offsets v{lookups[0]}-{lookups[1]})"
        )

    def min_version_for_target(self, target: int) -> int | None:
        """LO-1: the minimum ListOffsets version at which `target` is special, None if unknown here."""
        for t, v in self.special_target_min_versions:
            if t == target:
                return v
        return None

    def supports_produce_version(self, version: int) -> bool:
        lo, hi = self.produce_versions
        return lo <= version <= hi

    def supports_fetch_version(self, version: int) -> bool:
        lo, hi = self.fetch_versions
        return lo <= version <= hi

    def supports_list_offsets_version(self, version: int) -> bool:
        lo, hi = self.list_offsets_versions
        return lo <= version <= hi


_BASE_TARGETS = ((-1, 0), (-2, 0))

KAFKA_0_10_0 = Profile(
    name="kafka-0.10.0",
    kafka_version="0.10.0",
    description="KIP-32 only: message format v1, symmetric difference check (-1 not exempt), "
    "no time index, roll by segment age, retention by file mtime, ListOffsets v0 only",
    max_magic=1,
    produce_versions=(0, 2),
    fetch_versions=(0, 2),
    list_offsets_versions=(0, 0),
    honours_message_format_version=True,
    down_conversion=True,
    has_downconversion_config=False,
    down_conversion_merges=True,
    has_zstd=False,
    exempt_no_timestamp=False,
    range_rule=RangeRule.SYMMETRIC,
    has_difference_config=True,
    has_before_after_configs=False,
    default_before_ms=LONG_MAX,
    default_after_ms=LONG_MAX,
    lat_flag_check=LogAppendTimeFlagCheck.ALWAYS,
    record_errors=RecordErrorsStyle.NONE,
    error_text=ErrorTextStyle.V0_10,
    partial_in_place_records=False,
    in_place_rewrites_v1_timestamp=False,
    lat_rebuild_stamps_inner=False,
    invalid_record_text_3_2=False,
    request_checks_answered=False,
    shallow_offset_of_max=ShallowOffsetOfMax.EXACT_RECORD,
    index_granularity=IndexGranularity.NONE,
    roll_base=RollBase.WALL_CLOCK,
    has_max_compaction_lag=False,
    retention_basis=RetentionBasis.MTIME,
    visibility_cap=VisibilityCap.LE_HIGH_WATERMARK,
    fresh_leader_check=False,
    max_timestamp_lookup=MaxTimestampLookup.ABSENT,
    unknown_special_target=UnknownSpecialTarget.SEARCH,
    special_target_min_versions=_BASE_TARGETS,
)

# Each later profile is the previous one plus exactly Kafka's changes in between, so a
# reader can put the version timeline and this file side by side (tests/test_profiles.py pins it).

KAFKA_0_10 = replace(
    KAFKA_0_10_0,
    name="kafka-0.10",
    kafka_version="0.10.1-0.10.2",
    description="KIP-32 + KIP-33 + KIP-79: format v1, time index, ListOffsets v1, symmetric "
    "difference check with -1 not exempt",
    # 0.10.1: time index, retention by largest timestamp, roll by first-append timestamp (KIP-33);
    # ListOffsets v1 (KIP-79).
    fetch_versions=(0, 3),
    list_offsets_versions=(0, 1),
    index_granularity=IndexGranularity.PER_APPEND,
    roll_base=RollBase.FIRST_APPEND,
    retention_basis=RetentionBasis.LARGEST_TIMESTAMP,
)

KAFKA_0_11 = replace(
    KAFKA_0_10,
    name="kafka-0.11",
    kafka_version="0.11",
    description="0.10 plus format v2 (KIP-98): -1 exempt from the range check, the offset in record errors' text, "
    "Produce v3, ListOffsets v2",
    # 0.11: format v2, Produce v3 / Fetch v4-5, ListOffsets v2 (KIP-98), -1 exempt from the range check (VAL-3);
    # the in-place path rewrites a v1 CreateTime message's timestamp to the batch max (VAL-13; 0.11.0.0's
    # LogValidator, apache/kafka 5cf64f0 "MINOR: Log append validation improvements"); a v1 set rebuilt on a
    # LogAppendTime topic gets now in its inner messages too (CMP-4; MemoryRecordsBuilder, KAFKA-4816); a
    # down-converting fetch converts batch by batch (CNV-5; AbstractRecords.downConvert, KAFKA-4816).
    max_magic=2,
    exempt_no_timestamp=True,
    in_place_rewrites_v1_timestamp=True,
    lat_rebuild_stamps_inner=True,
    down_conversion_merges=False,
    error_text=ErrorTextStyle.V0_11,
    produce_versions=(0, 3),
    fetch_versions=(0, 5),
    list_offsets_versions=(0, 2),
)

KAFKA_1_0 = replace(
    KAFKA_0_11,
    name="kafka-1.0",
    kafka_version="1.0-1.1",
    description="0.11 plus lookups capped below the last fetchable offset",
    # 1.0: ListOffsets answers only offsets < the last fetchable offset (LO-3); Produce v5, Fetch v6-7.
    visibility_cap=VisibilityCap.LT_LAST_FETCHABLE,
    produce_versions=(0, 5),
    fetch_versions=(0, 7),
)

KAFKA_2_0 = replace(
    KAFKA_1_0,
    name="kafka-2.0",
    kafka_version="2.0",
    description="1.0 plus message.downconversion.enable (KIP-283)",
    # 2.0: message.downconversion.enable (KIP-283; 0.10.2.2 refuses it: "Unknown Log configuration"); Produce v6,
    # Fetch v8, ListOffsets v3.
    has_downconversion_config=True,
    produce_versions=(0, 6),
    fetch_versions=(0, 8),
    list_offsets_versions=(0, 3),
)

KAFKA_2_1 = replace(
    KAFKA_2_0,
    name="kafka-2.1",
    kafka_version="2.1",
    description="2.0 plus zstd (KIP-110) with Produce v3+ request checks answered per partition, ListOffsets v4",
    # 2.1: zstd (KIP-110, Produce v7, Fetch v10) and the request checks answered per partition (VAL-14);
    # ListOffsets v4 (KIP-320; its leader epoch came in 2.2, KAFKA-7568: a Kafka bug of 2.1, not this profile's).
    has_zstd=True,
    request_checks_answered=True,
    produce_versions=(0, 7),
    fetch_versions=(0, 10),
    list_offsets_versions=(0, 4),
)

KAFKA_2_2 = replace(
    KAFKA_2_1,
    name="kafka-2.2",
    kafka_version="2.2",
    description="2.1 plus a fresh leader refusing capped lookups (KIP-207, ListOffsets v5)",
    # 2.2: a fresh leader refuses capped lookups until its HW reaches the epoch start (KIP-207), ListOffsets v5.
    fresh_leader_check=True,
    list_offsets_versions=(0, 5),
)

KAFKA_2_3 = replace(
    KAFKA_2_2,
    name="kafka-2.3",
    kafka_version="2.3",
    description="2.2 plus max.compaction.lag.ms bounding a compacted topic's time roll (KIP-354), Fetch v11",
    # 2.3: max.compaction.lag.ms (KIP-354): a compacted topic rolls at min(max.compaction.lag.ms, segment.ms)
    # (IDX-9; kafka_2.12-2.2.2's LogConfig has no such config, 2.3.1's has); Fetch v11 (KIP-392).
    has_max_compaction_lag=True,
    fetch_versions=(0, 11),
)

KAFKA_2_4 = replace(
    KAFKA_2_3,
    name="kafka-2.4",
    kafka_version="2.4",
    description="2.3 plus the first failing record in record errors (KIP-467, Produce v8)",
    # 2.4: record errors (KIP-467), the first failing record only (VAL-11); Produce v8.
    record_errors=RecordErrorsStyle.FIRST,
    produce_versions=(0, 8),
)

KAFKA_2_5 = replace(
    KAFKA_2_4,
    name="kafka-2.5",
    kafka_version="2.5",
    description="2.4 plus every failing record in record errors (KIP-467)",
    # 2.5: every failing record listed (VAL-11).
    record_errors=RecordErrorsStyle.ALL,
)

KAFKA_2_8 = replace(
    KAFKA_2_5,
    name="kafka-2.8",
    kafka_version="2.6-2.8",
    description="2.5 plus PartialDefaultRecord in in-place record errors (KAFKA-9820), ListOffsets v6",
    # 2.6: in-place validation reads PartialDefaultRecord (VAL-8, KAFKA-9820); 2.8: Produce v9, Fetch v12 (2.7),
    # ListOffsets v6 (flexible versions).
    partial_in_place_records=True,
    produce_versions=(0, 9),
    fetch_versions=(0, 12),
    list_offsets_versions=(0, 6),
)

# The 3.x lines, each the previous profile plus what its first release changed. A profile's API version ranges are
# its newest line's (the lines it covers offer a prefix: ApiVersions narrows them, narrow_versions).

KAFKA_3_0 = replace(
    KAFKA_2_8,
    name="kafka-3.0",
    kafka_version="3.0-3.1",
    description="2.8 plus MAX_TIMESTAMP (KIP-734, ListOffsets v7) and message.format.version ignored (IBP 3.0)",
    # 3.0: IBP >= 3.0 ignores message.format.version (CNV-3); MAX_TIMESTAMP (KIP-734). Before 3.9 the broker checks
    # no target's version: a known target is special at any version (LO-1).
    honours_message_format_version=False,
    max_timestamp_lookup=MaxTimestampLookup.EXACT,
    special_target_min_versions=((-1, 0), (-2, 0), (-3, 7)),
    # 3.1: Fetch v13 (topic ids, KIP-516).
    fetch_versions=(0, 13),
    list_offsets_versions=(0, 7),
)

KAFKA_3_2 = replace(
    KAFKA_3_0,
    name="kafka-3.2",
    kafka_version="3.2-3.4",
    description="3.0 plus the INVALID_RECORD top-level wording (3.2)",
    # 3.2: the INVALID_RECORD top-level wording (VAL-9).
    invalid_record_text_3_2=True,
)

KAFKA_3_5 = replace(
    KAFKA_3_2,
    name="kafka-3.5",
    kafka_version="3.5",
    description="3.2 plus EARLIEST_LOCAL (KIP-405, ListOffsets v8)",
    # 3.5: EARLIEST_LOCAL (-4) at ListOffsets v8; Fetch v15 (KIP-903).
    special_target_min_versions=((-1, 0), (-2, 0), (-3, 7), (-4, 8)),
    fetch_versions=(0, 15),
    list_offsets_versions=(0, 8),
)

KAFKA_3_6 = replace(
    KAFKA_3_5,
    name="kafka-3.6",
    kafka_version="3.6-3.7",
    description="3.5 plus KIP-937 before/after with fallback to difference and LogAppendTime-flag acceptance on "
    "CreateTime topics",
    # 3.6: KIP-937 before/after, and the LogAppendTime-flag regression (VAL-8).
    range_rule=RangeRule.BEFORE_AFTER,
    has_before_after_configs=True,
    lat_flag_check=LogAppendTimeFlagCheck.ELSE_BRANCH,
    error_text=ErrorTextStyle.V3_6,
    # 3.7: Produce v10 and Fetch v16 (KIP-951).
    produce_versions=(0, 10),
    fetch_versions=(0, 16),
)

KAFKA_3_8 = replace(
    KAFKA_3_6,
    name="kafka-3.8",
    kafka_version="3.8",
    description="3.6 plus the offset of the max timestamp as the batch's last offset (KAFKA-16310/16341/16342)",
    # 3.8: KAFKA-16310/16341/16342 (CMP-7); Produce v11.
    shallow_offset_of_max=ShallowOffsetOfMax.BATCH_LAST,
    produce_versions=(0, 11),
)

KAFKA_3_9 = replace(
    KAFKA_3_8,
    name="kafka-3.9",
    kafka_version="3.9",
    description="3.8 plus LATEST_TIERED (KIP-1005, ListOffsets v9) and UNSUPPORTED_VERSION for an unknown special "
    "target or one below its version (KAFKA-17331)",
    # 3.9: LATEST_TIERED (KIP-1005), and UNSUPPORTED_VERSION for unknown targets or below their version (LO-1,
    # KAFKA-17331); Fetch v17.
    unknown_special_target=UnknownSpecialTarget.UNSUPPORTED_VERSION,
    special_target_min_versions=((-1, 0), (-2, 0), (-3, 7), (-4, 8), (-5, 9)),
    fetch_versions=(0, 17),
    list_offsets_versions=(0, 9),
)

KAFKA_4_0 = replace(
    KAFKA_3_9,
    name="kafka-4.0",
    kafka_version="4.0",
    description="KIP-724/896 removals (difference config, format version, Produce v0-2, Fetch v0-3, "
    "ListOffsets v0, down-conversion), after.max.ms default 1 h (KIP-1030)",
    has_difference_config=False,
    default_after_ms=3_600_000,
    down_conversion=False,
    produce_versions=(3, 12),
    fetch_versions=(4, 17),
    list_offsets_versions=(1, 10),
)

KAFKA_4_1 = replace(
    KAFKA_4_0,
    name="kafka-4.1",
    kafka_version="4.1",
    description="4.0 plus KAFKA-806: index entries per batch, roll base = first batch MaxTimestamp",
    shallow_offset_of_max=ShallowOffsetOfMax.PER_BATCH,
    index_granularity=IndexGranularity.PER_BATCH,
    roll_base=RollBase.FIRST_BATCH,
    # 4.1: Produce v13 (topic ids, KIP-516) and Fetch v18.
    produce_versions=(3, 13),
    fetch_versions=(4, 18),
)

KAFKA_4_2 = replace(
    KAFKA_4_1,
    name="kafka-4.2",
    kafka_version="4.2",
    description="4.1 plus EARLIEST_PENDING_UPLOAD (-6) at ListOffsets v11 (KIP-1023)",
    # 4.2: ListOffsets v11 and its EARLIEST_PENDING_UPLOAD target (KIP-1023).
    special_target_min_versions=((-1, 0), (-2, 0), (-3, 7), (-4, 8), (-5, 9), (-6, 11)),
    list_offsets_versions=(1, 11),
)

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        KAFKA_0_10_0, KAFKA_0_10, KAFKA_0_11, KAFKA_1_0, KAFKA_2_0, KAFKA_2_1, KAFKA_2_2, KAFKA_2_3, KAFKA_2_4,
        KAFKA_2_5, KAFKA_2_8, KAFKA_3_0, KAFKA_3_2, KAFKA_3_5, KAFKA_3_6, KAFKA_3_8, KAFKA_3_9, KAFKA_4_0, KAFKA_4_1,
        KAFKA_4_2,
    )
}
DEFAULT_PROFILE = KAFKA_4_0


def narrow_versions(profile: Profile, offered: dict[int, tuple[int, int]]) -> Profile:
    """`profile` with its Produce (0), Fetch (1) and ListOffsets (2) version ranges capped at what an
    implementation offers (its ApiVersions answer), never below the profile's own minimum."""
    changes: dict[str, tuple[int, int]] = {}
    for key, field_name in ((0, "produce_versions"), (1, "fetch_versions"), (2, "list_offsets_versions")):
        if key in offered:
            lo, hi = getattr(profile, field_name)
            changes[field_name] = (lo, max(lo, min(hi, offered[key][1])))
    return replace(profile, **changes)  # type: ignore[arg-type]


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(PROFILES)
        raise KeyError(f"unknown profile {name!r}: choose one of {known}") from None
