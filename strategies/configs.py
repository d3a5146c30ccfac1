"""Topic configurations valid for a profile (VAL-6, CMP-1, CNV-3, IDX-4, IDX-9, IDX-10).

`topic_configs(profile)` only sets configs the profile has (`models.config.check_config` passes):
`message.timestamp.difference.max.ms` where `has_difference_config` (removed in 4.0, KIP-724),
`before/after.max.ms` where `has_before_after_configs` (3.6+, KIP-937). Segment and index sizes
are small so that rolls and time-index entries happen within a short run.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from models.config import SEVEN_DAYS_MS, TopicConfig, effective_bounds
from models.constants import LONG_MAX, MAGIC_V2, TimestampType
from models.profiles import PROFILES, Profile

SECOND_MS = 1_000
HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
# Finite validation bounds: 1 s .. 2 days, so that both in-range and out-of-range values exist.
MIN_BOUND_MS = SECOND_MS
MAX_BOUND_MS = 2 * DAY_MS
# Small sizes make rolls (IDX-9 by size) and index entries (IDX-4) frequent with 32-byte records.
SEGMENT_BYTES_CHOICES = (512, 1_024, 4_096, 1 << 30)
INDEX_INTERVAL_BYTES_CHOICES = (1, 64, 256, 4_096)
# 10 entries of 12 bytes (a full time index forces a roll), or Kafka's 10 MiB default.
SEGMENT_INDEX_BYTES_CHOICES = (120, 10 * 1024 * 1024)
SEGMENT_MS_CHOICES = (60_000, HOUR_MS, SEVEN_DAYS_MS)
# Without `retention`: no deletion in a short run (-1 disables it, IDX-10; or large values).
LONG_RETENTION_CHOICES = (-1, SEVEN_DAYS_MS, 30 * DAY_MS)
COMPRESSION_TYPES = ("producer", "uncompressed", "gzip", "snappy", "lz4")


def compression_types(profile: Profile) -> tuple[str, ...]:
    """CMP-1: the topic's `compression.type` values; zstd needs magic 2 (FMT-4)."""
    return COMPRESSION_TYPES + (("zstd",) if profile.max_magic >= MAGIC_V2 else ())


def bounds_ms() -> st.SearchStrategy[int]:
    """A finite validation bound: round values a user sets, or anything in 1 s .. 2 days."""
    return st.one_of(
        st.sampled_from((SECOND_MS, 60_000, HOUR_MS, DAY_MS, MAX_BOUND_MS)),
        st.integers(MIN_BOUND_MS, MAX_BOUND_MS),
    )


def _optional_bound(bounded: bool) -> st.SearchStrategy[int | None]:
    # Unset, explicitly Long.MAX_VALUE (3.6-3.9: same as unset, VAL-6) or finite.
    if bounded:
        return st.one_of(st.none(), bounds_ms())
    return st.one_of(st.none(), st.just(LONG_MAX), bounds_ms())


@st.composite
def timestamp_bounds(
    draw: st.DrawFn, profile: Profile, *, bounded: bool = True
) -> tuple[int | None, int | None, int | None]:
    """(difference, before, after) as set on a topic, only the configs the profile has (VAL-6). With
    `bounded` the effective bounds (`effective_bounds`) are finite on both sides."""
    difference = draw(_optional_bound(bounded)) if profile.has_difference_config else None
    before = draw(_optional_bound(bounded)) if profile.has_before_after_configs else None
    after = draw(_optional_bound(bounded)) if profile.has_before_after_configs else None
    if bounded:
        eff_before, eff_after = effective_bounds(
            TopicConfig(difference_max_ms=difference, before_max_ms=before, after_max_ms=after), profile
        )
        if eff_before == LONG_MAX or eff_after == LONG_MAX:
            # Close the open side(s) with the config this profile resolves them from (VAL-6).
            if profile.has_difference_config:
                difference = draw(bounds_ms())
            else:
                if eff_before == LONG_MAX:
                    before = draw(bounds_ms())
                if eff_after == LONG_MAX:
                    after = draw(bounds_ms())
    return difference, before, after


@st.composite
def topic_configs(
    draw: st.DrawFn,
    profile: Profile | str,
    *,
    timestamp_types: Sequence[TimestampType] = (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME),
    bounded: bool = True,
    retention: bool = False,
    message_format_magics: Sequence[int] | None = None,
    compacted: bool = False,
) -> TopicConfig:
    """A TopicConfig that `check_config(config, profile)` accepts. `bounded` gives finite effective
    validation bounds (VAL-6); `retention` allows short retention.ms (1 min .. 2 days) so retention
    ticks delete segments (IDX-10), otherwise -1 or large; `message_format_magics` (default: the
    profile's max magic) is the topic's `message.format.version` as a magic (CNV-3); `compacted`
    sets cleanup.policy=compact (keys required, VAL-9)."""
    prof = PROFILES[profile] if isinstance(profile, str) else profile
    difference, before, after = draw(timestamp_bounds(prof, bounded=bounded))
    magics = tuple(m for m in (message_format_magics or (prof.max_magic,)) if m <= prof.max_magic)
    if not magics:
        raise ValueError(f"no message format among {message_format_magics} exists in {prof.name}")
    retention_ms = draw(
        st.one_of(st.sampled_from(LONG_RETENTION_CHOICES), st.integers(60_000, MAX_BOUND_MS))
        if retention
        else st.sampled_from(LONG_RETENTION_CHOICES)
    )
    return TopicConfig(
        timestamp_type=draw(st.sampled_from(tuple(timestamp_types))),
        difference_max_ms=difference,
        before_max_ms=before,
        after_max_ms=after,
        compression_type=draw(st.sampled_from(compression_types(prof))),
        message_format_magic=draw(st.sampled_from(magics)),
        segment_ms=draw(st.sampled_from(SEGMENT_MS_CHOICES)),
        segment_bytes=draw(st.sampled_from(SEGMENT_BYTES_CHOICES)),
        retention_ms=retention_ms,
        index_interval_bytes=draw(st.sampled_from(INDEX_INTERVAL_BYTES_CHOICES)),
        segment_index_bytes=draw(st.sampled_from(SEGMENT_INDEX_BYTES_CHOICES)),
        compacted=compacted,
        downconversion_enable=draw(st.booleans()) if prof.down_conversion and prof.has_downconversion_config else True,
    )
