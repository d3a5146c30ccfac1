"""Topic configuration relevant to timestamps, and its effective values under a profile (VAL-6)."""

from __future__ import annotations

from dataclasses import dataclass

from .constants import LONG_MAX, MAGIC_V2, Codec, TimestampType
from .errors import ConfigError
from .profiles import Profile, RangeRule

SEVEN_DAYS_MS = 7 * 24 * 3600 * 1000


@dataclass(frozen=True, kw_only=True)
class TopicConfig:
    """The topic-level configs of the timestamp contract. `None` means "not set" (the profile's
    default applies), which matters in 3.6-3.9 where an explicit Long.MAX_VALUE behaves like unset."""

    timestamp_type: TimestampType = TimestampType.CREATE_TIME  # message.timestamp.type
    difference_max_ms: int | None = None  # message.timestamp.difference.max.ms (removed in 4.0)
    before_max_ms: int | None = None  # message.timestamp.before.max.ms (3.6+)
    after_max_ms: int | None = None  # message.timestamp.after.max.ms (3.6+)
    compression_type: str = "producer"  # compression.type: producer|uncompressed|gzip|snappy|lz4|zstd
    message_format_magic: int = MAGIC_V2  # message.format.version as a record magic (CNV-3)
    segment_ms: int = SEVEN_DAYS_MS  # segment.ms
    segment_jitter_ms: int = 0  # segment.jitter.ms
    segment_bytes: int = 1 << 30  # segment.bytes
    retention_ms: int = SEVEN_DAYS_MS  # retention.ms (-1 disables)
    index_interval_bytes: int = 4096  # index.interval.bytes
    segment_index_bytes: int = 10 * 1024 * 1024  # segment.index.bytes
    compacted: bool = False  # cleanup.policy contains compact (VAL-9 key check)
    # cleanup.policy contains delete: None = Kafka's reading of the policy alone (delete unless the
    # topic is compacted); True with compacted=True models "compact,delete".
    retention_deletes: bool | None = None
    max_compaction_lag_ms: int = LONG_MAX  # max.compaction.lag.ms (IDX-9 for compacted topics)
    downconversion_enable: bool = True  # message.downconversion.enable (CNV-5)

    @property
    def deletes_by_retention(self) -> bool:
        """IDX-10: time-based retention deletes segments only when cleanup.policy contains delete."""
        if self.retention_deletes is not None:
            return self.retention_deletes
        return not self.compacted

    def target_codec(self, producer_codec: Codec) -> Codec:
        """CMP-1: topic `compression.type`, or the producer's codec when it is `producer`."""
        if self.compression_type == "producer":
            return producer_codec
        return topic_codec(self.compression_type)

    def time_index_entries(self) -> int:
        """IDX-1: capacity of the time index in 12-byte entries."""
        return self.segment_index_bytes // 12


def topic_codec(compression_type: str) -> Codec:
    """The codec a topic's `compression.type` names. Kafka spells "no compression" `uncompressed`
    at topic level; `none` (the producer's spelling) is accepted too."""
    if compression_type.lower() == "uncompressed":
        return Codec.NONE
    return Codec.from_name(compression_type)


def check_config(config: TopicConfig, profile: Profile) -> None:
    """Raise ConfigError for a config the profile does not have or a value out of range (VAL-6)."""
    if config.difference_max_ms is not None:
        if not profile.has_difference_config:
            raise ConfigError(
                f"message.timestamp.difference.max.ms does not exist in {profile.name} (removed in 4.0, "
                "KIP-724): use message.timestamp.before.max.ms / after.max.ms"
            )
        if config.difference_max_ms < 0:
            raise ConfigError("message.timestamp.difference.max.ms must be >= 0")
    for name, value in (("before", config.before_max_ms), ("after", config.after_max_ms)):
        if value is None:
            continue
        if not profile.has_before_after_configs:
            raise ConfigError(
                f"message.timestamp.{name}.max.ms does not exist in {profile.name} (KIP-937, 3.6)"
            )
        if value < 0:
            raise ConfigError(f"message.timestamp.{name}.max.ms must be >= 0")
    if not config.downconversion_enable and not profile.has_downconversion_config:
        raise ConfigError(f"message.downconversion.enable does not exist in {profile.name} (KIP-283, 2.0)")
    if config.compression_type != "producer":
        try:
            topic_codec(config.compression_type)
        except ValueError as exc:
            raise ConfigError(f"compression.type: {exc}") from None


def effective_bounds(config: TopicConfig, profile: Profile) -> tuple[int, int]:
    """VAL-6: the (before, after) distances the range check uses.

    0.10.0-3.5: both = difference (default Long.MAX_VALUE). 3.6-3.9: each side is its KIP-937
    config unless that equals Long.MAX_VALUE (set or not), then the difference config. 4.0+: the
    KIP-937 configs with their defaults (after = 1 h, KIP-1030)."""
    difference = config.difference_max_ms if config.difference_max_ms is not None else LONG_MAX
    if profile.range_rule is RangeRule.SYMMETRIC:
        return difference, difference
    before = config.before_max_ms if config.before_max_ms is not None else profile.default_before_ms
    after = config.after_max_ms if config.after_max_ms is not None else profile.default_after_ms
    if profile.has_difference_config:
        if before == LONG_MAX:
            before = difference
        if after == LONG_MAX:
            after = difference
    return before, after


def target_magic(config: TopicConfig, profile: Profile) -> int:
    """CNV-3: the record magic the log stores for this topic."""
    if profile.honours_message_format_version:
        return min(config.message_format_magic, profile.max_magic)
    return profile.max_magic
