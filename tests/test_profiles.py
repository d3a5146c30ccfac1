"""Profiles differ exactly where Kafka versions do, and the effective bounds follow VAL-6."""

from __future__ import annotations

from dataclasses import fields

import pytest

from models.config import TopicConfig, check_config, effective_bounds, target_magic
from models.constants import LONG_MAX
from models.errors import ConfigError
from models.profiles import PROFILES, get_profile

# For each step between consecutive profiles: the Profile fields that change, and the §9 rows
# (versions) that explain them. A change to a profile that is not in this table fails the test.
STEPS = {
    ("kafka-0.10.0", "kafka-0.10"): {
        # 0.10.1: time index, retention by largest timestamp, roll by first append, ListOffsets v1.
        "index_granularity",
        "roll_base",
        "retention_basis",
        "list_offsets_versions",
        "fetch_versions",
        "kafka_version",
    },
    ("kafka-0.10", "kafka-0.11"): {
        # 0.11: format v2, -1 exempt, a v1 message's timestamp rewritten in place, inner messages stamped in a
        # LogAppendTime rebuild, a fetch down-converted batch by batch, the offset in record errors'
        # text, Produce v3, Fetch v4-5, ListOffsets v2.
        "max_magic",
        "exempt_no_timestamp",
        "in_place_rewrites_v1_timestamp",
        "lat_rebuild_stamps_inner",
        "down_conversion_merges",
        "error_text",
        "produce_versions",
        "fetch_versions",
        "list_offsets_versions",
        "kafka_version",
    },
    ("kafka-0.11", "kafka-1.0"): {
        # 1.0: cap < last fetchable; Produce v5, Fetch v6-7.
        "visibility_cap",
        "produce_versions",
        "fetch_versions",
        "kafka_version",
    },
    ("kafka-1.0", "kafka-2.0"): {
        # 2.0: message.downconversion.enable (KIP-283); Produce v6, Fetch v8, ListOffsets v3.
        "has_downconversion_config",
        "produce_versions",
        "fetch_versions",
        "list_offsets_versions",
        "kafka_version",
    },
    ("kafka-2.0", "kafka-2.1"): {
        # 2.1: zstd (KIP-110) with the Produce request checks answered per partition; Produce v7, Fetch v10,
        # ListOffsets v4.
        "has_zstd",
        "request_checks_answered",
        "produce_versions",
        "fetch_versions",
        "list_offsets_versions",
        "kafka_version",
    },
    ("kafka-2.1", "kafka-2.2"): {
        # 2.2: a fresh leader refuses (KIP-207), ListOffsets v5.
        "fresh_leader_check",
        "list_offsets_versions",
        "kafka_version",
    },
    ("kafka-2.2", "kafka-2.3"): {
        # 2.3: max.compaction.lag.ms (KIP-354), Fetch v11.
        "has_max_compaction_lag",
        "fetch_versions",
        "kafka_version",
    },
    ("kafka-2.3", "kafka-2.4"): {
        # 2.4: the first failing record in record errors (KIP-467), Produce v8.
        "record_errors",
        "produce_versions",
        "kafka_version",
    },
    ("kafka-2.4", "kafka-2.5"): {
        # 2.5: every failing record in record errors.
        "record_errors",
        "kafka_version",
    },
    ("kafka-2.5", "kafka-2.8"): {
        # 2.6: PartialDefaultRecord in in-place record errors (KAFKA-9820); 2.7/2.8: Fetch v12, Produce v9,
        # ListOffsets v6.
        "partial_in_place_records",
        "produce_versions",
        "fetch_versions",
        "list_offsets_versions",
        "kafka_version",
    },
    ("kafka-2.8", "kafka-3.0"): {
        # 3.0: MAX_TIMESTAMP (KIP-734, ListOffsets v7), IBP >= 3.0 ignores message.format.version; 3.1: Fetch v13.
        "honours_message_format_version",
        "max_timestamp_lookup",
        "special_target_min_versions",
        "fetch_versions",
        "list_offsets_versions",
        "kafka_version",
    },
    ("kafka-3.0", "kafka-3.2"): {
        # 3.2: the INVALID_RECORD top-level wording.
        "invalid_record_text_3_2",
        "kafka_version",
    },
    ("kafka-3.2", "kafka-3.5"): {
        # 3.5: EARLIEST_LOCAL (KIP-405, ListOffsets v8), Fetch v15.
        "special_target_min_versions",
        "fetch_versions",
        "list_offsets_versions",
        "kafka_version",
    },
    ("kafka-3.5", "kafka-3.6"): {
        # 3.6: KIP-937 and the LAT-flag regression; 3.7: Produce v10, Fetch v16 (KIP-951).
        "range_rule",
        "has_before_after_configs",
        "lat_flag_check",
        "error_text",
        "produce_versions",
        "fetch_versions",
        "kafka_version",
    },
    ("kafka-3.6", "kafka-3.8"): {
        # 3.8: the offset of the max timestamp is the batch's last (KAFKA-16310/16341/16342); Produce v11.
        "shallow_offset_of_max",
        "produce_versions",
        "kafka_version",
    },
    ("kafka-3.8", "kafka-3.9"): {
        # 3.9: LATEST_TIERED (KIP-1005, ListOffsets v9) and UNSUPPORTED_VERSION for unknown targets (KAFKA-17331);
        # Fetch v17.
        "unknown_special_target",
        "special_target_min_versions",
        "fetch_versions",
        "list_offsets_versions",
        "kafka_version",
    },
    ("kafka-3.9", "kafka-4.0"): {
        # 4.0: difference removed, after default 1 h, Produce v0-2 / Fetch v0-3 / ListOffsets v0 and
        # down-conversion removed, ListOffsets v10.
        "has_difference_config",
        "default_after_ms",
        "down_conversion",
        "produce_versions",
        "fetch_versions",
        "list_offsets_versions",
        "kafka_version",
    },
    ("kafka-4.0", "kafka-4.1"): {
        # 4.1: KAFKA-806 per-batch index entries and roll base; Produce v13, Fetch v18.
        "index_granularity",
        "roll_base",
        "shallow_offset_of_max",
        "produce_versions",
        "fetch_versions",
        "kafka_version",
    },
    ("kafka-4.1", "kafka-4.2"): {
        # 4.2: ListOffsets v11 and EARLIEST_PENDING_UPLOAD (KIP-1023).
        "special_target_min_versions",
        "list_offsets_versions",
        "kafka_version",
    },
}

IGNORED = {"name", "description"}


@pytest.mark.parametrize(("old", "new"), list(STEPS))
def test_profiles_differ_exactly_where_the_timeline_says(old: str, new: str) -> None:
    a, b = get_profile(old), get_profile(new)
    changed = {
        f.name for f in fields(a) if f.name not in IGNORED and getattr(a, f.name) != getattr(b, f.name)
    }
    expected = STEPS[(old, new)]
    assert changed == expected, f"{old} -> {new}: unexpected difference {changed ^ expected}"


def test_profile_registry_has_the_required_profiles() -> None:
    for name in ("kafka-0.10", "kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1"):
        assert name in PROFILES


def test_unknown_profile_names_the_choices() -> None:
    with pytest.raises(KeyError, match="choose one of"):
        get_profile("kafka-9.9")


# VAL-6 table ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["kafka-0.10", "kafka-2.8"])
def test_symmetric_profiles_use_the_difference_on_both_sides(name: str) -> None:
    p = get_profile(name)
    assert effective_bounds(TopicConfig(), p) == (LONG_MAX, LONG_MAX)
    assert effective_bounds(TopicConfig(difference_max_ms=1000), p) == (1000, 1000)


def test_3_9_falls_back_to_difference_per_side() -> None:
    p = get_profile("kafka-3.9")
    assert effective_bounds(TopicConfig(), p) == (LONG_MAX, LONG_MAX)
    assert effective_bounds(TopicConfig(difference_max_ms=1000), p) == (1000, 1000)
    assert effective_bounds(TopicConfig(difference_max_ms=1000, before_max_ms=50), p) == (50, 1000)
    # An explicit Long.MAX_VALUE is indistinguishable from unset: it falls back (VAL-6).
    assert effective_bounds(TopicConfig(difference_max_ms=7, after_max_ms=LONG_MAX), p) == (7, 7)


@pytest.mark.parametrize("name", ["kafka-4.0", "kafka-4.1"])
def test_4_x_defaults_after_to_one_hour(name: str) -> None:
    p = get_profile(name)
    assert effective_bounds(TopicConfig(), p) == (LONG_MAX, 3_600_000)
    assert effective_bounds(TopicConfig(before_max_ms=10, after_max_ms=20), p) == (10, 20)


def test_4_0_rejects_the_removed_difference_config() -> None:
    with pytest.raises(ConfigError, match=r"removed in 4\.0"):
        check_config(TopicConfig(difference_max_ms=1000), get_profile("kafka-4.0"))


def test_before_after_configs_do_not_exist_before_3_6() -> None:
    with pytest.raises(ConfigError, match="KIP-937"):
        check_config(TopicConfig(before_max_ms=1000), get_profile("kafka-2.8"))


def test_target_magic_follows_the_format_version_only_before_ibp_3_0() -> None:
    old = TopicConfig(message_format_magic=1)
    assert target_magic(old, get_profile("kafka-2.8")) == 1
    assert target_magic(old, get_profile("kafka-3.9")) == 2
    assert target_magic(TopicConfig(), get_profile("kafka-0.10")) == 1
