"""The wire adapter's topic-config alters (conformance.targets.routes.wire_adapter.kafka_wire `alter_config`), against
a stand-in for WireClient that answers as Apache Kafka 4.x does: no network.

Kafka 4.1 refuses segment.bytes below 1 MiB (KIP-1030), which the suites' small segments ask for, and takes the
topic config internal.segment.bytes without that minimum (a broker that refuses both is asked without the
shaping configs); an alter the adapter took as done while Kafka refused it left the model on another config than
the broker's (a false VAL.range-before-after FAIL). And Kafka applies an accepted alter after it answers, through
its metadata log.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping

import pytest

from conformance.judging.capabilities import Capability
from conformance.targets.kinds.implementation import UnsupportedOperation
from conformance.targets.libraries.model.model_broker import ModelFactory
from conformance.targets.routes.wire_adapter.kafka_wire import ConfigNotInForce, WireImplementation
from conformance.wire.client import ApiResult, BrokerMetadata, ClusterMetadata
from models.config import TopicConfig
from models.constants import ErrorCode, TimestampType
from models.errors import ConfigError
from models.profiles import get_profile
from suites.helpers import Twin
from suites.machine import machine_for

PROFILE = "kafka-4.1"
MARK = "applied-mark"
LAT = TimestampType.LOG_APPEND_TIME
KAFKA_4_DEFAULTS = {
    "message.timestamp.type": "CreateTime",
    "message.timestamp.before.max.ms": "9223372036854775807",
    "message.timestamp.after.max.ms": "3600000",
    "segment.bytes": "1073741824",
    "retention.ms": "-1",
}

Refusal = Callable[[Mapping[str, str | None]], str | None]


def segment_bytes_below_1_mib(configs: Mapping[str, str | None]) -> str | None:
    """A broker with KIP-1030's minimum and without internal.segment.bytes."""
    if configs.get("internal.segment.bytes") is not None:
        return "Unknown topic config name: internal.segment.bytes"
    value = configs.get("segment.bytes")
    if value is not None and int(value) < 1 << 20:
        return f"Invalid value {value} for configuration segment.bytes: Value must be at least 1048576"
    return None


def segment_bytes_below_1_mib_but_internal(configs: Mapping[str, str | None]) -> str | None:
    """Kafka 4.1+: KIP-1030's minimum on segment.bytes, none on internal.segment.bytes."""
    value = configs.get("segment.bytes")
    if value is not None and int(value) < 1 << 20:
        return f"Invalid value {value} for configuration segment.bytes: Value must be at least 1048576"
    return None


class StubKafka:
    """What WireImplementation asks of a WireClient, answered as Kafka 4.x answers: every config described
    (defaults included); an alter refused with INVALID_CONFIG where `refuse` gives a reason; an accepted alter
    shown by a broker's DescribeConfigs only after `lag` more polls of that broker (`lags`: per broker id, as
    each KRaft broker applies a change when it replays it)."""

    timeout = 0.3

    def __init__(
        self, refuse: Refusal = segment_bytes_below_1_mib, *, lag: int = 0, lags: Mapping[int, int] | None = None
    ) -> None:
        self.bootstrap = f"stub-{uuid.uuid4().hex[:8]}:9092"  # the adapter caches its probe per address
        self.refuse = refuse
        self.lags = dict(lags) if lags is not None else {1: lag}
        self.overrides: dict[str, dict[str, str]] = {}  # what the broker applied, by topic
        self.shown: dict[str, dict[str, str]] = {}  # what DescribeConfigs shows until the lag runs out
        self.behind: dict[int, int] = {}  # polls each broker still shows `shown` for
        self.alters: list[dict[str, str | None]] = []  # of the topics under test (the mark's go to `marks`)
        self.describes = 0
        self.polled: list[int] = []  # the broker each DescribeConfigs went to
        self.marks: list[str] = []  # the mark topic's retention.ms, alter by alter
        self.mark_polled: list[int] = []
        self.refuse_mark = False

    @property
    def lag(self) -> int:
        return self.lags[self.home]

    @lag.setter
    def lag(self, polls: int) -> None:
        self.lags = dict.fromkeys(self.lags, polls)

    @property
    def home(self) -> int:
        return min(self.lags)

    @property
    def polls_behind(self) -> int:
        return max(self.behind.values(), default=0)

    def api_versions(self) -> dict[int, tuple[int, int]]:
        return {0: (3, 13), 1: (4, 17), 2: (1, 10), 3: (0, 12), 19: (2, 7), 20: (1, 6), 32: (1, 4), 44: (0, 1)}

    def metadata(self, topics: list[str] | None = None) -> ClusterMetadata:
        brokers = tuple(BrokerMetadata(node, "127.0.0.1", 9091 + node) for node in sorted(self.lags))
        return ClusterMetadata(brokers, None, None, {})

    def leader(self, topic: str, partition: int) -> int:
        return self.home

    def create_topic(
        self, name: str, partitions: int = 1, replication_factor: int = 1, configs: Mapping[str, str] | None = None
    ) -> ApiResult:
        reason = self.refuse(configs or {})
        if self.refuse_mark and name.endswith(MARK):
            reason = "Authorization failed."
        if reason is not None:
            return ApiResult(ErrorCode.INVALID_CONFIG, reason)
        self.overrides[name] = dict(configs or {})
        return ApiResult(0, None)

    def alter_configs(self, topic: str, configs: Mapping[str, str | None]) -> ApiResult:
        if topic.endswith(MARK):
            self.marks.append(str(configs["retention.ms"]))
        else:
            self.alters.append(dict(configs))
        reason = self.refuse(configs)
        if reason is not None:
            return ApiResult(ErrorCode.INVALID_CONFIG, reason)
        self.shown[topic] = self.describe_now(topic)
        self.behind = dict(self.lags)
        applied = self.overrides.setdefault(topic, {})
        for key, value in configs.items():
            if value is None:
                applied.pop(key, None)
            else:
                applied[key] = value
        return ApiResult(0, None)

    def describe_now(self, topic: str) -> dict[str, str]:
        return KAFKA_4_DEFAULTS | self.overrides[topic]

    def describe_configs(self, topic: str, *, node: int | None = None) -> dict[str, str]:
        node = self.home if node is None else node
        if topic.endswith(MARK):
            self.mark_polled.append(node)
        else:
            self.describes += 1
            self.polled.append(node)
        if self.behind.get(node, 0) > 0:
            self.behind[node] -= 1
            return self.shown[topic]
        return self.describe_now(topic)

    def delete_topics(self, names: list[str]) -> dict[str, ApiResult]:
        self.deleted = list(names)
        return {}

    def close(self) -> None:
        pass


def adapter(stub: StubKafka) -> WireImplementation:
    return WireImplementation(stub, get_profile(PROFILE))  # type: ignore[arg-type]


def created(stub: StubKafka, config: TopicConfig | None = None) -> tuple[WireImplementation, str]:
    impl = adapter(stub)
    impl.create_topic("t", config or TopicConfig())
    return impl, impl.topic_prefix + "t"


def test_a_refused_segment_size_is_left_out_and_noted_and_the_timestamp_configs_still_change() -> None:
    stub = StubKafka()
    impl, name = created(stub)
    impl.alter_config("t", TopicConfig(timestamp_type=LAT, before_max_ms=60_000, segment_bytes=4_096))
    # asked again with internal.segment.bytes (refused: this broker has no such config), then without either
    assert [(a.get("segment.bytes"), a.get("internal.segment.bytes")) for a in stub.alters] == [
        ("4096", None), (None, "4096"), (None, None)
    ]
    assert "segment.bytes" not in stub.alters[2] and "internal.segment.bytes" not in stub.alters[2]
    assert stub.overrides[name]["message.timestamp.type"] == "LogAppendTime"
    assert stub.overrides[name]["message.timestamp.before.max.ms"] == "60000"
    assert "segment.bytes" not in impl.topic_configs[name]
    assert impl.topic_configs[name]["message.timestamp.type"] == "LogAppendTime"
    assert any(f"{name}: altered without {{'segment.bytes': '4096'}}" in n and "1048576" in n for n in impl.notes)


def test_a_refused_segment_size_goes_as_internal_segment_bytes_where_the_broker_takes_it() -> None:
    stub = StubKafka(segment_bytes_below_1_mib_but_internal)
    impl, name = created(stub, TopicConfig(segment_bytes=512))
    assert stub.overrides[name].get("internal.segment.bytes") == "512" and "segment.bytes" not in stub.overrides[name]
    assert impl.config_in_force("t", TopicConfig(segment_bytes=512)).segment_bytes == 512  # the model's too
    assert sum("segment.bytes sent as internal.segment.bytes" in n and "1048576" in n for n in impl.notes) == 1
    impl.alter_config("t", TopicConfig(timestamp_type=LAT, segment_bytes=4_096))
    assert stub.alters[-1].get("internal.segment.bytes") == "4096" and "segment.bytes" not in stub.alters[-1]
    assert len(stub.alters) == 1  # asked once: the broker's answer was learnt at creation
    impl.alter_config("t", TopicConfig())
    assert stub.alters[-1]["internal.segment.bytes"] is None  # back to the default: the override deleted
    assert impl.config_in_force("t", TopicConfig()).segment_bytes == TopicConfig().segment_bytes


def test_a_broker_that_refuses_internal_segment_bytes_too_is_not_asked_it_again() -> None:
    stub = StubKafka()
    impl, name = created(stub, TopicConfig(segment_bytes=512))
    assert "internal.segment.bytes" not in stub.overrides[name] and "segment.bytes" not in stub.overrides[name]
    assert impl.config_in_force("t", TopicConfig(segment_bytes=512)).segment_bytes == TopicConfig().segment_bytes
    impl.alter_config("t", TopicConfig(segment_bytes=4_096))
    assert [sorted(k for k in a if "segment" in k) for a in stub.alters] == [["segment.bytes"], []]


def test_a_refused_timestamp_config_raises_and_neither_the_adapter_nor_the_model_takes_it() -> None:
    def no_before_bound(configs: Mapping[str, str | None]) -> str | None:
        return "Unknown topic config" if configs.get("message.timestamp.before.max.ms") else None

    stub = StubKafka(no_before_bound)
    twin = Twin(adapter(stub), ModelFactory(PROFILE))
    twin.create_topic("t", TopicConfig())
    name = twin.impl.topic_prefix + "t"  # type: ignore[attr-defined]
    recorded = dict(twin.impl.topic_configs[name])  # type: ignore[attr-defined]
    bounded = TopicConfig(before_max_ms=60_000)
    with pytest.raises(UnsupportedOperation, match="kip-937-configs") as raised:
        twin.alter_config("t", bounded)
    assert "Unknown topic config" in str(raised.value)
    assert twin.impl.topic_configs[name] == recorded  # type: ignore[attr-defined]
    assert twin.configs["t"] == TopicConfig()
    assert twin.ref.cluster.partition("t").config == TopicConfig()  # type: ignore[attr-defined]


def test_a_config_the_profile_does_not_have_is_refused_as_the_spec_says() -> None:
    def no_difference(configs: Mapping[str, str | None]) -> str | None:
        return "Unknown topic config name" if "message.timestamp.difference.max.ms" in configs else None

    stub = StubKafka(no_difference)
    impl, name = created(stub)
    recorded = dict(impl.topic_configs[name])
    with pytest.raises(ConfigError, match=re.escape("refused as kafka-4.1 refuses it")):
        impl.alter_config("t", TopicConfig(difference_max_ms=60_000))  # gone in 4.0 (KIP-724)
    assert impl.topic_configs[name] == recorded


def test_an_accepted_alter_returns_once_describe_configs_shows_it() -> None:
    stub = StubKafka(lag=1)
    impl, _ = created(stub)
    stub.describes = 0
    impl.alter_config("t", TopicConfig(timestamp_type=LAT, after_max_ms=60_000))
    assert stub.describes == 2  # the first poll still showed CreateTime
    assert stub.polls_behind == 0


def test_a_deleted_bound_is_awaited_until_the_broker_no_longer_shows_it() -> None:
    stub = StubKafka()
    impl, name = created(stub, TopicConfig(before_max_ms=60_000))
    stub.lag, stub.describes = 2, 0
    impl.alter_config("t", TopicConfig())  # before.max.ms deleted: back to the default
    assert stub.alters[-1]["message.timestamp.before.max.ms"] is None
    assert stub.describes == 3
    assert "message.timestamp.before.max.ms" not in impl.topic_configs[name]


def test_a_change_never_shown_is_an_error_naming_the_topic_and_what_is_still_shown() -> None:
    stub = StubKafka(lag=10**9)
    impl, name = created(stub)
    with pytest.raises(ConfigNotInForce, match=name) as raised:
        impl.alter_config("t", TopicConfig(timestamp_type=LAT))
    assert "'message.timestamp.type': 'CreateTime'" in str(raised.value)
    assert impl.topic_configs[name]["message.timestamp.type"] == "LogAppendTime"  # applied, not yet shown


def test_an_alter_of_the_codec_alone_returns_once_every_broker_shows_it() -> None:
    # Kafka 3.9, three brokers: the leader replayed the ConfigRecord after the broker that answered, and a
    # produce right after the alter was compressed with the old codec (CMP.topic-codec-recompresses).
    stub = StubKafka(lags={1: 0, 2: 1, 3: 4})
    impl, name = created(stub, TopicConfig(compression_type="lz4"))
    stub.polled.clear()
    impl.alter_config("t", TopicConfig(compression_type="gzip"))
    assert stub.alters[-1]["compression.type"] == "gzip"
    assert stub.behind == {1: 0, 2: 0, 3: 0}  # returned only once broker 3 showed gzip
    assert set(stub.polled) == {1, 2, 3}
    assert stub.polled.count(3) == 5 and stub.polled.count(1) == 1  # a broker is asked until it shows the change
    assert stub.describe_configs(name, node=3)["compression.type"] == "gzip"


def test_a_broker_that_never_shows_the_change_is_named_in_the_error() -> None:
    stub = StubKafka(lags={1: 0, 2: 10**9, 3: 0})
    impl, name = created(stub, TopicConfig(compression_type="lz4"))
    with pytest.raises(ConfigNotInForce, match=f"{name}: .* broker 2's DescribeConfigs still shows") as raised:
        impl.alter_config("t", TopicConfig(compression_type="gzip"))
    assert "'compression.type': 'lz4'" in str(raised.value)
    assert "--wire-timeout SECONDS" in str(raised.value)


def test_an_alter_shown_everywhere_returns_only_once_a_later_mark_is_shown_everywhere() -> None:
    # Kafka 4.0: DescribeConfigs reads the metadata image, which a broker sets before it applies the image's
    # topic configs to its logs; a later change seen on a broker means the earlier one was applied there.
    stub = StubKafka(lags={1: 0, 2: 0, 3: 0})
    impl, name = created(stub)
    stub.lags = {1: 0, 2: 0, 3: 3}  # the mark alter is shown by broker 3 after three more polls
    impl.alter_config("t", TopicConfig(timestamp_type=LAT))
    assert len(stub.marks) == 1 and int(stub.marks[0]) > 10**12
    assert stub.behind == {1: 0, 2: 0, 3: 0}
    assert stub.mark_polled.count(3) == 4 and set(stub.mark_polled) == {1, 2, 3}
    impl.alter_config("t", TopicConfig())
    assert len(stub.marks) == 2 and stub.marks[0] != stub.marks[1]  # each alter gets a mark of its own
    impl.close()
    assert any(topic.endswith(MARK) for topic in stub.deleted) and name in stub.deleted


def test_a_mark_never_shown_is_an_error_naming_the_mark_topic() -> None:
    stub = StubKafka(lags={1: 0})
    impl, _ = created(stub)
    stub.lags = {1: 1}  # the alter is shown after one poll, the mark never
    original = stub.describe_now

    def mark_stuck(topic: str) -> dict[str, str]:
        return original(topic) | ({"retention.ms": "-1"} if topic.endswith(MARK) else {})

    stub.describe_now = mark_stuck  # type: ignore[method-assign]
    with pytest.raises(ConfigNotInForce, match=f"{MARK}: broker 1 still shows retention.ms=-1"):
        impl.alter_config("t", TopicConfig(timestamp_type=LAT))


def test_a_broker_that_refuses_the_mark_topic_gets_alters_awaited_as_shown_and_a_note() -> None:
    stub = StubKafka()
    stub.refuse_mark = True
    impl, _ = created(stub)
    impl.alter_config("t", TopicConfig(timestamp_type=LAT))
    impl.alter_config("t", TopicConfig())
    assert stub.marks == []
    assert [n for n in impl.notes if "no later mark" in n] == [
        f"an alter counts as applied once DescribeConfigs shows it (no later mark: CreateTopics "
        f"{impl.topic_prefix}{MARK} failed: INVALID_CONFIG (40) Authorization failed.)"
    ]


def test_without_describe_configs_the_alter_is_not_awaited() -> None:
    class Undescribed(StubKafka):
        def api_versions(self) -> dict[int, tuple[int, int]]:
            return {k: v for k, v in super().api_versions().items() if k != 32}

    stub = Undescribed(lag=10**9)
    impl, _ = created(stub)
    stub.describes = 0
    impl.alter_config("t", TopicConfig(timestamp_type=LAT))
    assert stub.describes == 0


class StubFactory:
    """An ImplementationFactory for the state machine: a WireImplementation over one StubKafka."""

    name = "stub"
    profile = PROFILE

    def __init__(self, stub: StubKafka) -> None:
        self.stub = stub

    def build(self) -> WireImplementation:
        return adapter(self.stub)


def test_the_state_machine_goes_on_with_the_old_config_when_the_target_refuses_an_alter() -> None:
    def no_log_append_time(configs: Mapping[str, str | None]) -> str | None:
        return "LogAppendTime is not allowed here" if configs.get("message.timestamp.type") == "LogAppendTime" else None

    stub = StubKafka(no_log_append_time)
    machine = machine_for(StubFactory(stub), ModelFactory(PROFILE))()
    assert Capability.ALTER_CONFIG in machine.impl.capabilities
    try:
        machine.create_topic(TopicConfig(before_max_ms=60_000))
        machine.alter_config(TopicConfig(timestamp_type=LAT, before_max_ms=1_000))
        assert machine.config == TopicConfig(before_max_ms=60_000)  # as the model and the broker still are
        assert machine.twin.configs["machine"] == machine.config
        machine.alter_config(TopicConfig(before_max_ms=1_000))
        assert machine.config == TopicConfig(before_max_ms=1_000) == machine.twin.configs["machine"]
    finally:
        machine.teardown()
