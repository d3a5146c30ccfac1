"""Topic configs in Kafka's spelling and the model's `TopicConfig`, both ways: what CreateTopics,
AlterConfigs and IncrementalAlterConfigs send is parsed into a TopicConfig (`topic_config`), and
DescribeConfigs answers a TopicConfig in Kafka's names and value syntax (`describe`).

It is the inverse of `conformance.targets.routes.wire_adapter.kafka_wire.kafka_configs` (every key that writes parses
back to the same fields; tests/test_reference_server.py checks the round trip). A config the model does not know is
refused (INVALID_CONFIG naming it), as is a value Kafka's ConfigDef would not parse or that `models.config.check_config`
rejects for the profile (VAL-6: the difference config does not exist in 4.0, the KIP-937 configs not before 3.6).

Lower bounds are Kafka's own where the model has none (LogConfig's ConfigDef: segment.bytes >= 14 before
4.0, segment.index.bytes >= 4, segment.ms >= 1, max.compaction.lag.ms >= 1, retention.ms >= -1); Kafka
4.0's 1 MiB minimum for segment.bytes is not applied: the suites build small segments, and the in-process
model takes them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from models.config import TopicConfig, check_config
from models.constants import INT_MAX, LONG_MAX, LONG_MIN, MAGIC_V0, MAGIC_V1, MAGIC_V2, ErrorCode, TimestampType
from models.errors import ConfigError
from models.profiles import Profile

# DescribeConfigs ConfigSource and ConfigType (the protocol's numbering).
DYNAMIC_TOPIC_CONFIG = 1
DEFAULT_CONFIG = 5
TYPE_BOOLEAN, TYPE_STRING, TYPE_INT, TYPE_LONG, TYPE_LIST = 1, 2, 3, 5, 7

_DEFAULTS = TopicConfig()
_TIMESTAMP_TYPES = {"CreateTime": TimestampType.CREATE_TIME, "LogAppendTime": TimestampType.LOG_APPEND_TIME}
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)?(?:-IV\d+)?$")


class Refused(Exception):
    """A part of a request the reference broker refuses: the error code and the sentence it answers."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ConfigProblem(Refused):
    """A topic config the reference broker refuses (INVALID_CONFIG): `name` and a sentence for the client."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(ErrorCode.INVALID_CONFIG, message)
        self.name = name


@dataclass(frozen=True)
class DescribedConfig:
    """One DescribeConfigs entry."""

    name: str
    value: str
    is_default: bool
    config_type: int

    @property
    def source(self) -> int:
        return DEFAULT_CONFIG if self.is_default else DYNAMIC_TOPIC_CONFIG


# -- parsing one value


def _number(name: str, value: str, low: int, high: int) -> int:
    try:
        number = int(value.strip())
    except ValueError:
        raise ConfigProblem(name, f"invalid value {value!r} for {name}: expected an integer") from None
    if not low <= number <= high:
        raise ConfigProblem(name, f"invalid value {number} for {name}: it must be in {low}..{high}")
    return number


def _timestamp_type(name: str, value: str) -> dict[str, Any]:
    if value not in _TIMESTAMP_TYPES:
        raise ConfigProblem(name, f"invalid value {value!r} for {name}: expected CreateTime or LogAppendTime")
    return {"timestamp_type": _TIMESTAMP_TYPES[value]}


def _compression(name: str, value: str) -> dict[str, Any]:
    return {"compression_type": value}  # check_config names the valid codecs


def _format_version(name: str, value: str) -> dict[str, Any]:
    """CNV-3: message.format.version as the record magic it selects (0.8-0.9: v0, 0.10: v1, later: v2)."""
    match = _VERSION.match(value.strip())
    if match is None:
        raise ConfigProblem(name, f"invalid value {value!r} for {name}: expected a Kafka version such as 0.10.2 or 2.8")
    major, minor = int(match.group(1)), int(match.group(2))
    if (major, minor) < (0, 8):
        raise ConfigProblem(name, f"invalid value {value!r} for {name}: Kafka versions start at 0.8.0")
    if (major, minor) < (0, 10):
        return {"message_format_magic": MAGIC_V0}
    if (major, minor) < (0, 11):
        return {"message_format_magic": MAGIC_V1}
    return {"message_format_magic": MAGIC_V2}


def _cleanup_policy(name: str, value: str) -> dict[str, Any]:
    policies = {p.strip() for p in value.split(",") if p.strip()}
    unknown = policies - {"compact", "delete"}
    if unknown:
        raise ConfigProblem(name, f"invalid value {value!r} for {name}: expected compact, delete or both")
    compact, delete = "compact" in policies, "delete" in policies
    if compact:
        return {"compacted": True, "retention_deletes": True if delete else None}
    # "delete" is the default reading of a policy without compact; an empty policy deletes nothing.
    return {"compacted": False, "retention_deletes": None if delete else False}


def _boolean(field_name: str) -> Callable[[str, str], dict[str, Any]]:
    def parse(name: str, value: str) -> dict[str, Any]:
        lowered = value.strip().lower()
        if lowered not in ("true", "false"):
            raise ConfigProblem(name, f"invalid value {value!r} for {name}: expected true or false")
        return {field_name: lowered == "true"}

    return parse


# -- describing one value


def _cleanup_value(config: TopicConfig) -> str:
    if config.compacted:
        return "compact,delete" if config.retention_deletes else "compact"
    return "delete" if config.deletes_by_retention else ""


_MAGIC_VERSION = {MAGIC_V0: "0.9.0", MAGIC_V1: "0.10.0", MAGIC_V2: "2.8"}


@dataclass(frozen=True)
class _Key:
    name: str
    parse: Callable[[str, str], dict[str, Any]]
    describe: Callable[[TopicConfig, Profile], str]
    config_type: int
    fields: tuple[str, ...]  # the TopicConfig fields it sets: a value other than their default is an override
    offered: Callable[[Profile], bool] = lambda profile: True


def _plain(
    name: str, field_name: str, low: int, config_type: int, offered: Callable[[Profile], bool] = lambda p: True
) -> _Key:
    """A number stored as it is in one TopicConfig field."""
    high = INT_MAX if config_type == TYPE_INT else LONG_MAX
    return _Key(
        name,
        lambda n, v: {field_name: _number(n, v, low, high)},
        lambda c, p: str(getattr(c, field_name)),
        config_type,
        (field_name,),
        offered,
    )


def _bound(name: str, field_name: str, default: Callable[[Profile], int], offered: Callable[[Profile], bool]) -> _Key:
    """A VAL-6 bound: None in TopicConfig means unset, described as the profile's default."""

    def value(config: TopicConfig, profile: Profile) -> str:
        set_to = getattr(config, field_name)
        return str(default(profile) if set_to is None else set_to)

    return _Key(
        name, lambda n, v: {field_name: _number(n, v, LONG_MIN, LONG_MAX)}, value, TYPE_LONG, (field_name,), offered
    )


_KEYS: dict[str, _Key] = {
    k.name: k
    for k in (
        _Key(
            "message.timestamp.type",
            _timestamp_type,
            lambda c, p: "LogAppendTime" if c.timestamp_type is TimestampType.LOG_APPEND_TIME else "CreateTime",
            TYPE_STRING,
            ("timestamp_type",),
        ),
        _bound(
            "message.timestamp.difference.max.ms",
            "difference_max_ms",
            lambda p: LONG_MAX,
            lambda p: p.has_difference_config,
        ),
        _bound(
            "message.timestamp.before.max.ms",
            "before_max_ms",
            lambda p: p.default_before_ms,
            lambda p: p.has_before_after_configs,
        ),
        _bound(
            "message.timestamp.after.max.ms",
            "after_max_ms",
            lambda p: p.default_after_ms,
            lambda p: p.has_before_after_configs,
        ),
        _Key("compression.type", _compression, lambda c, p: c.compression_type, TYPE_STRING, ("compression_type",)),
        _plain("segment.ms", "segment_ms", 1, TYPE_LONG),
        _plain("segment.jitter.ms", "segment_jitter_ms", 0, TYPE_LONG),
        _plain("segment.bytes", "segment_bytes", 14, TYPE_INT),
        _plain("retention.ms", "retention_ms", -1, TYPE_LONG),
        _plain("index.interval.bytes", "index_interval_bytes", 0, TYPE_INT),
        _plain("segment.index.bytes", "segment_index_bytes", 4, TYPE_INT),
        _plain("max.compaction.lag.ms", "max_compaction_lag_ms", 1, TYPE_LONG, lambda p: p.has_max_compaction_lag),
        # KIP-724 removed message.format.version and message.downconversion.enable in 4.0, with
        # down-conversion itself (CNV-7): they are described where the profile down-converts (and wherever
        # they are set: the model accepts them on every profile, CNV-3 deciding what they do).
        _Key(
            "message.format.version",
            _format_version,
            lambda c, p: _MAGIC_VERSION[c.message_format_magic],
            TYPE_STRING,
            ("message_format_magic",),
            lambda p: p.down_conversion,
        ),
        _Key(
            "cleanup.policy",
            _cleanup_policy,
            lambda c, p: _cleanup_value(c),
            TYPE_LIST,
            ("compacted", "retention_deletes"),
        ),
        _Key(
            "message.downconversion.enable",
            _boolean("downconversion_enable"),
            lambda c, p: "true" if c.downconversion_enable else "false",
            TYPE_BOOLEAN,
            ("downconversion_enable",),
            lambda p: p.down_conversion,
        ),
    )
}

_FIELDS = {f.name for f in fields(TopicConfig)}
assert all(name in _FIELDS for key in _KEYS.values() for name in key.fields)

KNOWN_CONFIGS: tuple[str, ...] = tuple(_KEYS)


def topic_config(configs: Mapping[str, str | None], profile: Profile) -> TopicConfig:
    """The TopicConfig with these overrides (every other field at its default). Raises ConfigProblem
    naming the first config that is unknown, has no value, does not parse, or that the profile refuses."""
    changes: dict[str, Any] = {}
    for name, value in configs.items():
        key = _KEYS.get(name)
        if key is None:
            raise ConfigProblem(
                name, f"unknown topic config {name!r}: the reference broker serves {', '.join(_KEYS)}"
            )
        if value is None:
            raise ConfigProblem(name, f"null value not supported for topic config {name}")
        changes.update(key.parse(name, value))
    config = TopicConfig(**changes)
    try:
        check_config(config, profile)
    except ConfigError as exc:
        culprit = next((n for n in configs if n in str(exc)), next(iter(configs), ""))
        raise ConfigProblem(culprit, str(exc)) from None
    return config


def _overridden(config: TopicConfig, key: _Key) -> bool:
    return any(getattr(config, f) != getattr(_DEFAULTS, f) for f in key.fields)


def overrides(config: TopicConfig, profile: Profile) -> dict[str, str]:
    """The configs of `config` that differ from the defaults, in Kafka's spelling: what
    IncrementalAlterConfigs starts from, and what DescribeConfigs reports as set on the topic."""
    return {name: key.describe(config, profile) for name, key in _KEYS.items() if _overridden(config, key)}


def describe(config: TopicConfig, profile: Profile, names: Iterable[str] | None = None) -> list[DescribedConfig]:
    """DescribeConfigs for a topic: every config the profile has (and any set on the topic), or only
    `names` (unknown names are left out, as Kafka does), with defaults marked."""
    wanted = None if names is None else set(names)
    out: list[DescribedConfig] = []
    for name, key in _KEYS.items():
        if wanted is not None and name not in wanted:
            continue
        overridden = _overridden(config, key)
        if not overridden and not key.offered(profile):
            continue
        out.append(DescribedConfig(name, key.describe(config, profile), not overridden, key.config_type))
    return out
