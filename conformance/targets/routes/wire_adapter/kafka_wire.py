"""The `kafka-wire` adapter: any broker reachable at a bootstrap address, over the Kafka protocol.

Batches come from `models` as they are (any magic, codec and timestamps, invalid ones included),
encoded by `models.codec` and sent as the raw record set of a Produce request at the version the suite
chooses; fetched record sets are decoded by the same codec, so what the suite compares is exactly what
the broker stored. Framing is kafka-python's protocol layer
(`conformance.wire`).

A real broker keeps its own wall clock: `clock()` reads this machine's clock and `set_clock` is
UNSUPPORTED (no CLOCK_CONTROL). The suites' `Twin` brackets each request with readings and accepts any
broker `now` inside the bracket. Capabilities come from ApiVersions and from probing topic configs
once per bootstrap address.

A version the profile removed (below its minimum: Produce v0-v2, Fetch v0-v3 and ListOffsets v0 from 4.0) is
sent whatever ApiVersions offers, because the spec says what must happen to it: no answer, the connection
closed (models.constants.NOT_SERVED, read as NETWORK_EXCEPTION). Any other version the broker does not offer is
a missing capability (UNSUPPORTED), not sent.

A control plane (`--control-url`; conformance.control.control_client) turns on what it declares and
nothing more: CLOCK_CONTROL (clocks read and set through it, broker index i being the i-th broker id
Metadata announces, so no clock tolerance), LEADER_FAILOVER (moves through it, then Metadata is awaited
as for a hook; preferred over a `--fault-hook`), RETENTION (see below) and IDEMPOTENCE (a claim about
the Kafka side that no probe can establish).

Safety on someone's cluster: every topic gets the run's unique prefix and is deleted on
`close()`; leader moves happen only through an explicit failover hook (a cluster the suite manages, the
user's `--fault-hook` with `--allow-disruptive`, or a control plane the user names that offers them).

Retention: a broker deletes old segments on its own schedule, which the suite can neither trigger nor
observe (no RETENTION capability), and records with timestamps days in the past would vanish under the
suites (noida applies time retention within about a second). So topics are created with
`retention.ms=-1` unless a test asks for a retention of its own; a broker that refuses it gets the
topic without it, and the run's notes say so. With RETENTION from a control plane, retention runs only
when the suite asks: topics get the test's retention as it is.

Alters: the model takes a new topic config only after the broker did (suites.helpers.Twin), so an alter the
broker refuses raises (ConfigError where the profile refuses the config, else UNSUPPORTED) instead of being
ignored; shaping values a broker refuses for its own limits are left out as at creation, and noted. Kafka applies
an accepted alter through its metadata log after it answers, each broker when it replays the change, so the
adapter waits until every broker's DescribeConfigs shows the configs the alter changed in force.

A target without CreateTopics (librdkafka's mock cluster) gets its topics from the cluster's own
admin hook; such topics have the broker's defaults only, so a test that needs a topic config there is
UNSUPPORTED with the capability it names.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, TypeVar

from conformance.control.control_client import ControlClient
from conformance.errors import TargetError
from conformance.targets.brokers.failovers import failover_cluster
from conformance.targets.kinds.implementation import Capability, Implementation, UnsupportedOperation
from conformance.targets.routes.wire_adapter.fault_hook import FaultHook
from conformance.targets.routes.wire_adapter.health import not_a_kafka_broker
from conformance.wire.client import API_VERSIONS, UnsupportedVersion, WireClient, error_name
from conformance.wire.connection import WireError
from conformance.wire.security import PLAINTEXT, SecuritySettings
from models.cluster import FetchResponse, ProduceResponse
from models.codec import decode_batches, encode_batches
from models.config import TopicConfig, check_config
from models.constants import LONG_MAX, MAGIC_V0, MAGIC_V1, NO_TIMESTAMP, ErrorCode, IsolationLevel, TimestampType
from models.errors import CodecError, ConfigError
from models.list_offsets import ListOffsetsAnswer
from models.profiles import Profile, get_profile
from models.records import RecordSpec, build_batches
from models.validator import RecordError

# Kafka API keys the adapter uses (the protocol guide's numbering).
PRODUCE, FETCH, LIST_OFFSETS = 0, 1, 2
CREATE_TOPICS, DELETE_TOPICS = 19, 20
DESCRIBE_CONFIGS, ALTER_CONFIGS, ELECT_LEADERS, INCREMENTAL_ALTER_CONFIGS = 32, 33, 43, 44

# message.format.version values that select a record magic (CNV-3; ignored from Kafka 3.0): each the first release
# of its format, which every later broker up to 3.9 takes (Kafka 0.10.1.1 refused "0.10.2", a version it did not
# know, when it made the partition's log: "IllegalArgumentException: Version `0.10.2` is not a valid version").
_FORMAT_VERSION = {MAGIC_V0: "0.9.0", MAGIC_V1: "0.10.0", 2: "0.11.0"}

# What a control plane can turn on (conformance/control/openapi.json); any other capability it declares is
# ignored: the Kafka side's capabilities come from ApiVersions and probes.
CONTROLLED = frozenset(
    {Capability.CLOCK_CONTROL, Capability.LEADER_FAILOVER, Capability.RETENTION, Capability.IDEMPOTENCE,
     Capability.FILE_TIMES}
)  # fmt: skip

_DEFAULTS = TopicConfig()
# Fetch rounds per fetch() (a broker that serves one batch per answer; the suites' logs are short).
_MAX_FETCH_ROUNDS = 200
# Polls of an answer that served nothing below the high watermark, and the pause between them (kafka_wire.fetch).
_EMPTY_POLLS = 20
_EMPTY_POLL_PAUSE = 0.05


def kafka_configs(config: TopicConfig) -> dict[str, str]:
    """The topic configs to send for `config`: the timestamp type always, every other value only when it
    differs from Kafka's default (a target that lacks an exotic config can still run the suites that
    do not need it)."""
    out = {
        "message.timestamp.type": "LogAppendTime"
        if config.timestamp_type is TimestampType.LOG_APPEND_TIME
        else "CreateTime"
    }
    optional: list[tuple[str, object, object]] = [
        ("message.timestamp.difference.max.ms", config.difference_max_ms, None),
        ("message.timestamp.before.max.ms", config.before_max_ms, None),
        ("message.timestamp.after.max.ms", config.after_max_ms, None),
        ("compression.type", config.compression_type, _DEFAULTS.compression_type),
        ("segment.ms", config.segment_ms, _DEFAULTS.segment_ms),
        ("segment.jitter.ms", config.segment_jitter_ms, _DEFAULTS.segment_jitter_ms),
        ("segment.bytes", config.segment_bytes, _DEFAULTS.segment_bytes),
        ("retention.ms", config.retention_ms, _DEFAULTS.retention_ms),
        ("index.interval.bytes", config.index_interval_bytes, _DEFAULTS.index_interval_bytes),
        ("segment.index.bytes", config.segment_index_bytes, _DEFAULTS.segment_index_bytes),
        ("max.compaction.lag.ms", config.max_compaction_lag_ms, _DEFAULTS.max_compaction_lag_ms),
    ]
    for name, value, default in optional:
        if value is not None and value != default:
            out[name] = str(value)
    if config.message_format_magic != _DEFAULTS.message_format_magic:
        out["message.format.version"] = _FORMAT_VERSION[config.message_format_magic]
    if config.compacted:
        out["cleanup.policy"] = "compact,delete" if config.retention_deletes else "compact"
    elif config.retention_deletes is False:
        out["cleanup.policy"] = "compact"
    if not config.downconversion_enable:
        out["message.downconversion.enable"] = "false"
    return out


# Configs a broker may refuse for its own limits (Kafka 4.1 raised segment.bytes' minimum to 1 MiB, KIP-1030):
# they shape segments, so the topic is created without them, the difference is noted, and the model's topic
# gets the broker's values (`config_in_force`): retention and roll comparisons then see the same segments.
_MARK_TOPIC = "applied-mark"  # the topic whose changes tell that a broker applied earlier ones (_await_applied)
_MARK_BASE = 10**12  # retention.ms of the mark topic, plus the mark's number: over 31 years (it holds no records)
_INTERNAL_SEGMENT_BYTES = "internal.segment.bytes"  # segment.bytes without its 1 MiB minimum (Kafka 4.1+)
_SHAPING = ("segment.bytes", "segment.ms", "segment.jitter.ms", "index.interval.bytes", "segment.index.bytes",
            _INTERNAL_SEGMENT_BYTES)  # fmt: skip
# Per bootstrap address: whether segment.bytes goes as internal.segment.bytes (True: the broker took it in its
# place; False: it refused that too, so it is not asked again).
_internal_segment_bytes: dict[str, bool] = {}
_V = TypeVar("_V")
_SHAPING_FIELDS = {
    "segment.bytes": "segment_bytes",
    "segment.ms": "segment_ms",
    "segment.jitter.ms": "segment_jitter_ms",
    "index.interval.bytes": "index_interval_bytes",
    "segment.index.bytes": "segment_index_bytes",
}


class TopicAdmin(Protocol):
    """Topic creation outside the Kafka protocol (a managed cluster's own API)."""

    def create_topic(self, topic: str, partitions: int = 1, replication_factor: int = 3) -> None: ...

    def delete_topic(self, topic: str) -> None: ...


@dataclass(frozen=True)
class Probe:
    """What one bootstrap address offers, learnt once per process."""

    api_versions: dict[int, tuple[int, int]]
    broker_ids: tuple[int, ...]
    log_append_time: bool
    kip_937: bool
    difference: bool


_probes: dict[str, Probe] = {}
_probe_lock = threading.Lock()
# The bootstrap addresses whose brokers refused a manual replica placement (WireImplementation._create_placed).
_unplaced: set[str] = set()


@dataclass(frozen=True)
class ControlOffer:
    """What a control plane turns on for one cluster (learnt once per process), and notes on what it
    declared that the suite ignores."""

    capabilities: frozenset[Capability]
    notes: tuple[str, ...] = ()


_offers: dict[tuple[str, str], ControlOffer] = {}


def control_offer(control: ControlClient, broker_ids: Sequence[int], bootstrap: str) -> ControlOffer:
    """Ask the control plane what it offers; a TargetError (one line) when it does not answer or names
    other brokers than the cluster's Metadata."""
    return _offer(control, control.capabilities(), broker_ids, bootstrap)


def _offer(
    control: ControlClient,
    answer: tuple[frozenset[Capability], tuple[int, ...]],
    broker_ids: Sequence[int],
    bootstrap: str,
) -> ControlOffer:
    declared, brokers = answer
    if sorted(brokers) != sorted(broker_ids):
        raise TargetError(
            f"the control plane at {control.url} names brokers {sorted(brokers)} but Metadata at {bootstrap} "
            f"names {sorted(broker_ids)}: pass --control-url of this cluster's control plane (its broker ids "
            "must be the node ids the brokers announce)"
        )
    notes = [
        f"control plane at {control.url}: ignored capability {name!r} (not one this suite knows)"
        for name in control.unknown_capabilities
    ]
    notes += [
        f"control plane at {control.url}: ignored capability {c.value!r} (a control plane turns on only "
        f"{', '.join(sorted(x.value for x in CONTROLLED))})"
        for c in sorted(declared - CONTROLLED, key=lambda c: c.value)
    ]
    return ControlOffer(declared & CONTROLLED, tuple(notes))


@dataclass(frozen=True)
class WireFactory:
    """A picklable recipe for a `WireImplementation` (the Spark engine builds it inside a task)."""

    bootstrap: str
    profile: str = "kafka-4.0"
    target: str = "broker"
    timeout: float = 10.0
    failover: str | None = None  # an in-process managed cluster (conformance.targets.brokers.failovers)
    admin: str | None = None  # the same, creating topics where CreateTopics is not offered
    # the user's command that moves leaders (conformance.targets.routes.wire_adapter.fault_hook)
    fault_hook: str | None = None
    control_url: str | None = None  # the implementation's control plane (conformance.control.control_client)
    # Whether an applied config change is seen by producing to a mark topic (_await_applied): a broker whose
    # DescribeConfigs shows a change before the broker applies it (Kafka in ZooKeeper mode reads ZooKeeper).
    marks_by_produce: bool = False
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    # Topic names are the suite's names behind this prefix (default kts-<run id>-); "" names a user's
    # existing topic as it is (audit mode reads topics it did not create).
    topic_prefix: str | None = None
    # How every connection reaches the brokers (TLS, SASL): the user's cluster's settings, PLAINTEXT otherwise.
    security: SecuritySettings = PLAINTEXT

    @property
    def name(self) -> str:
        return self.target

    def build(self) -> WireImplementation:
        move: Callable[[str, int, int], None] | None = None
        admin: TopicAdmin | None = None
        if self.failover is not None:
            move = failover_cluster(self.failover).set_leader  # type: ignore[attr-defined]
        elif self.fault_hook is not None:
            move = FaultHook(self.fault_hook).move_leader
        if self.admin is not None:
            admin = failover_cluster(self.admin)  # type: ignore[assignment]
        control = ControlClient(self.control_url, timeout=self.timeout) if self.control_url is not None else None
        return WireImplementation(
            WireClient(self.bootstrap, timeout=self.timeout, security=self.security),
            get_profile(self.profile),
            name=self.target,
            topic_prefix=f"kts-{self.run_id}-" if self.topic_prefix is None else self.topic_prefix,
            failover=move,
            admin=admin,
            control=control,
            marks_by_produce=self.marks_by_produce,
        )


    def offered_versions(self) -> dict[int, tuple[int, int]]:
        """The broker's ApiVersions answer (the plugin narrows the profile's version ranges with it)."""
        client = WireClient(self.bootstrap, timeout=self.timeout, security=self.security)
        try:
            return client.api_versions()
        finally:
            client.close()


def check_reachable(bootstrap: str, *, timeout: float = 10.0, security: SecuritySettings = PLAINTEXT) -> None:
    """Fail fast, in one line, when nothing that speaks Kafka answers at `bootstrap` (WireError's text
    names the address and the fix). What answers but is not a Kafka broker (an HTTP server) is named at once; so is
    a TLS listener reached without TLS, a wrong password or an untrusted certificate (`security`), and a SASL
    listener reached without SASL, which answers ApiVersions and then closes the connection on Metadata."""
    try:
        wrong = not_a_kafka_broker(bootstrap, timeout=timeout, security=security)
        if wrong is not None:
            raise TargetError(wrong)
        client = WireClient(bootstrap, timeout=timeout, security=security)
        try:
            client.api_versions()
            client.metadata([])
        except WireError as exc:
            if exc.kind == "closed" and not security.sasl and client.exchanges and _answered_api_versions(client):
                raise TargetError(
                    f"{exc.address or bootstrap} answered ApiVersions and then closed the connection on Metadata, as a "
                    "SASL listener does to a client that does not authenticate: set --security-protocol SASL_SSL or "
                    "SASL_PLAINTEXT (security.protocol) with --sasl-mechanism, --sasl-username and KTS_SASL_PASSWORD"
                ) from None
            raise
        finally:
            client.close()
    except WireError as exc:
        raise TargetError(str(exc)) from None


def _answered_api_versions(client: WireClient) -> bool:
    return any(e.api_key == API_VERSIONS and e.error is None for e in client.exchanges)


def check_control(
    bootstrap: str, control_url: str, *, timeout: float = 10.0, security: SecuritySettings = PLAINTEXT
) -> ControlOffer:
    """Fail fast, in one line, when the control plane at `control_url` does not answer /capabilities, or
    names other brokers than Metadata at `bootstrap` (a TargetError naming the URL and the fix)."""
    control = ControlClient(control_url, timeout=timeout)
    answer = control.capabilities()  # first: a control plane that does not answer is the likelier mistake
    try:
        client = WireClient(bootstrap, timeout=timeout, security=security)
        try:
            brokers = tuple(b.node_id for b in client.metadata().brokers)
        finally:
            client.close()
    except WireError as exc:
        raise TargetError(str(exc)) from None
    return _offer(control, answer, brokers, bootstrap)


class WireImplementation(Implementation):
    """A broker over the wire (see the module doc)."""

    # The suite reads this machine's clock in whole milliseconds, floored; a broker on the same machine may
    # round its finer clock instead, or derive wall time from a monotonic clock read at start-up (noida was
    # seen stamping LogAppendTime 1-2 ms past the bracket's upper reading). A broker `now` within this many
    # ms of the bracket is its own clock, not a departure from the timestamp contract.
    clock_tolerance_ms = 5

    def __init__(
        self,
        client: WireClient,
        profile: Profile,
        *,
        name: str = "broker",
        topic_prefix: str = "kts-",
        failover: Callable[[str, int, int], None] | None = None,
        admin: TopicAdmin | None = None,
        control: ControlClient | None = None,
        marks_by_produce: bool = False,
    ) -> None:
        self.client = client
        self.marks_by_produce = marks_by_produce
        self.admin = admin
        self.name = name
        self.profile = profile
        self.topic_prefix = topic_prefix
        self.failover = failover
        self.control = control
        self.created: list[str] = []
        self.topic_configs: dict[str, dict[str, str]] = {}  # what this adapter set on each topic it created
        self.marks: int | None = 0  # changes made to the mark topic (_await_applied); None: no mark here
        self.notes: list[str] = []
        self.probe = self._probe()
        self.offered_versions = self.probe.api_versions
        self.controlled = self._control_offer()
        # Leaders move through the control plane where it offers that (and there is another broker to lead).
        self.control_moves = Capability.LEADER_FAILOVER in self.controlled and len(self.probe.broker_ids) > 1
        if self.control_moves:
            if failover is not None:
                self.notes.append("leaders move through the control plane; the fault hook is not used")
            self.failover = self._move_through_control
        self.capabilities = self._capabilities()
        # Why a capability the suites gate on is missing, where the adapter knows (the skip reason says it).
        self.lacking: dict[Capability, str] = {}
        if len(self.probe.broker_ids) < 2:
            count = len(self.probe.broker_ids)
            self.lacking[Capability.LEADER_FAILOVER] = f"needs 2 brokers for a leader move; the target has {count}"
        if Capability.CLOCK_CONTROL in self.capabilities:
            self.clock_tolerance_ms = 0  # the suite sets the broker's `now`: no bracket, no tolerance

    # -- capabilities

    def _probe(self) -> Probe:
        with _probe_lock:
            known = _probes.get(self.client.bootstrap)
            if known is not None:
                return known
            versions = self.client.api_versions()
            brokers = tuple(sorted(b.node_id for b in self.client.metadata().brokers))
            if CREATE_TOPICS not in versions:
                # Topics with the broker's defaults only (the admin hook), or none at all.
                probe = Probe(versions, brokers, False, False, False)
                _probes[self.client.bootstrap] = probe
                return probe
            lat = self._accepts({"message.timestamp.type": "LogAppendTime"}, "lat")
            kip_937 = self._accepts({"message.timestamp.before.max.ms": "3600000"}, "kip937")
            difference = self._accepts({"message.timestamp.difference.max.ms": "3600000"}, "diff")
            probe = Probe(versions, brokers, lat, kip_937, difference)
            _probes[self.client.bootstrap] = probe
            return probe

    def _control_offer(self) -> frozenset[Capability]:
        if self.control is None:
            return frozenset()
        key = (self.control.url, self.client.bootstrap)
        with _probe_lock:
            offer = _offers.get(key)
            if offer is None:
                offer = _offers[key] = control_offer(self.control, self.probe.broker_ids, self.client.bootstrap)
        self.notes.extend(offer.notes)
        return offer.capabilities

    def _accepts(self, configs: dict[str, str], what: str) -> bool:
        """Whether the broker creates a topic with these configs (and shows them back where it can)."""
        topic = f"{self.topic_prefix}probe-{what}-{uuid.uuid4().hex[:6]}"
        error, _ = self.client.create_topic(topic, configs=configs)
        if error != 0:
            return False
        try:
            if DESCRIBE_CONFIGS in self.client.api_versions():
                described = self.client.describe_configs(topic)
                return all(described.get(k) == v for k, v in configs.items())
            return True
        finally:
            self._delete([topic])

    def _capabilities(self) -> frozenset[Capability]:
        versions = self.probe.api_versions
        caps = {Capability.FETCH}
        produce = versions.get(PRODUCE)
        if produce is not None:
            if produce[1] >= 3:
                caps.add(Capability.PRODUCE_V2)
            if produce[0] <= 2 and self.profile.produce_versions[0] <= 2:
                caps.add(Capability.PRODUCE_LEGACY)
            if produce[1] >= 8:
                caps.add(Capability.RECORD_ERRORS)
            caps.add(Capability.COMPRESSION)
            if produce[1] >= 7:
                caps.add(Capability.ZSTD)
        fetch = versions.get(FETCH)
        if fetch is not None and fetch[0] <= 3:
            caps.add(Capability.DOWN_CONVERSION)
        list_offsets = versions.get(LIST_OFFSETS)
        if list_offsets is not None and list_offsets[1] >= 1:
            caps.add(Capability.LIST_OFFSETS)
            if list_offsets[1] >= 7:
                caps.add(Capability.MAX_TIMESTAMP_LOOKUP)
        if ALTER_CONFIGS in versions or INCREMENTAL_ALTER_CONFIGS in versions:
            caps.add(Capability.ALTER_CONFIG)
        if self.probe.log_append_time:
            caps.add(Capability.LOG_APPEND_TIME)
        if self.probe.kip_937:
            caps.add(Capability.KIP_937_CONFIGS)
        if self.probe.difference:
            caps.add(Capability.DIFFERENCE_CONFIG)
        if self.failover is not None and len(self.probe.broker_ids) > 1:
            caps.add(Capability.LEADER_FAILOVER)
        caps |= self.controlled - {Capability.LEADER_FAILOVER}
        if Capability.CLOCK_CONTROL not in caps:
            caps.add(Capability.FILE_TIMES)  # a wall clock dates the broker's files as it dates its appends
        return frozenset(caps)

    # -- topics

    def _name(self, topic: str) -> str:
        return self.topic_prefix + topic

    def brokers(self) -> tuple[int, ...]:
        return tuple(range(len(self.probe.broker_ids)))

    def create_topic(self, topic: str, config: TopicConfig, *, partitions: int = 1) -> None:
        with self._guarded():
            self._create_topic(topic, config, partitions)

    def _create_topic(self, topic: str, config: TopicConfig, partitions: int) -> None:
        name = self._name(topic)
        configs = kafka_configs(config)
        replication = min(3, len(self.probe.broker_ids))
        if CREATE_TOPICS not in self.probe.api_versions:
            self._create_with_admin(name, configs, partitions, replication)
            return

        def create(configs: dict[str, str]) -> tuple[int, str | None]:
            return self._create_placed(name, configs, partitions, replication)

        if "retention.ms" not in configs and Capability.RETENTION not in self.capabilities:
            configs["retention.ms"] = "-1"  # see the module doc: the broker's own retention would race the suite
            error, message = create(configs)
            if error == 0:
                self._created(name, configs, partitions)
                return
            del configs["retention.ms"]
            if error == ErrorCode.INVALID_CONFIG:
                self.notes.append(f"{name}: created without retention.ms=-1 (refused: {message})")
        configs = self._sendable(configs)
        error, message = create(configs)
        if error == ErrorCode.INVALID_CONFIG:
            configs, error, message = self._internal_segment_bytes(configs, message, create)
        if error == ErrorCode.INVALID_CONFIG and any(k in configs for k in _SHAPING):
            dropped = {k: v for k, v in configs.items() if k in _SHAPING}
            configs = {k: v for k, v in configs.items() if k not in _SHAPING}
            refusal = message
            error, message = create(configs)
            if error == 0:
                self.notes.append(f"{name}: created without {dropped} (refused: {refusal})")
        if error != 0:
            _refused_as_specified(config, self.profile, error, f"CreateTopics {name} with {configs}: {message}")
            raise UnsupportedOperation(
                _capability_for(configs), f"CreateTopics {name} with {configs} failed: {ErrorCode(error)!r} {message}"
            )
        self._created(name, configs, partitions)

    def _create_placed(
        self, name: str, configs: dict[str, str], partitions: int, replication: int
    ) -> tuple[int, str | None]:
        """CreateTopics; where leaders move through the control plane, with every partition's replicas placed
        first broker first: its leader from the start, at leader epoch 0, as the model's (a broker that placed it
        elsewhere would need a move, and its epochs would run one ahead of the model's). A broker that refuses
        manual placement (INVALID_REQUEST: the reference broker places replicas so itself) is asked with a
        replication factor, here and for the rest of the run."""
        bootstrap = self.client.bootstrap
        if self.control_moves and bootstrap not in _unplaced:
            replicas = self.probe.broker_ids[:replication]
            error, message = self._create_anew(
                name, lambda: self.client.create_topic(
                    name, configs=configs, assignments={p: replicas for p in range(partitions)}
                )
            )  # fmt: skip
            if error != ErrorCode.INVALID_REQUEST:
                return error, message
            _unplaced.add(bootstrap)
        return self._create_anew(
            name,
            lambda: self.client.create_topic(
                name, partitions=partitions, replication_factor=replication, configs=configs
            ),
        )

    def _create_anew(self, name: str, create: Callable[[], tuple[int, str | None]]) -> tuple[int, str | None]:
        """`create()`, asked again while the broker says TOPIC_ALREADY_EXISTS of a name this process deleted, up
        to the client's timeout: a broker in ZooKeeper mode answers DeleteTopics once its metadata drops the
        topic, while the controller may still be removing it from ZooKeeper (a state machine creates the same
        topic in each example)."""
        deadline = time.monotonic() + self.client.timeout
        while True:
            error, message = create()
            if error != ErrorCode.TOPIC_ALREADY_EXISTS or name not in _deleted.get(self.client.bootstrap, ()):
                return error, message
            if time.monotonic() >= deadline:
                return error, f"{message} (deleted by this run {self.client.timeout:g} s before)"
            time.sleep(0.05)

    def _sendable(self, configs: Mapping[str, _V]) -> dict[str, _V]:
        """`configs` as this broker takes them: segment.bytes as internal.segment.bytes where the broker refused
        a segment.bytes below its minimum and took the internal config in its place."""
        if not _internal_segment_bytes.get(self.client.bootstrap) or "segment.bytes" not in configs:
            return dict(configs)
        return {(_INTERNAL_SEGMENT_BYTES if k == "segment.bytes" else k): v for k, v in configs.items()}

    def _internal_segment_bytes(
        self, configs: dict[str, _V], refusal: str | None, send: Callable[[dict[str, _V]], tuple[int, str | None]]
    ) -> tuple[dict[str, _V], int, str | None]:
        """After a refusal (INVALID_CONFIG) of `configs` that set segment.bytes, asked once per broker: the same
        with internal.segment.bytes in its place, sent with `send`; the configs that stand and the answer. Kafka
        4.1 raised segment.bytes' minimum to 1 MiB (KIP-1030) and kept the topic config internal.segment.bytes
        without it, which its own tests use for small segments. A broker that refuses that too is not asked so
        again, and its callers then try without the shaping configs."""
        bootstrap = self.client.bootstrap
        if configs.get("segment.bytes") is None or bootstrap in _internal_segment_bytes:
            return configs, ErrorCode.INVALID_CONFIG, refusal
        _internal_segment_bytes[bootstrap] = True
        retried = self._sendable(configs)
        error, message = send(retried)
        if error == 0:
            self.notes.append(f"segment.bytes sent as {_INTERNAL_SEGMENT_BYTES} (segment.bytes refused: {refusal})")
            return retried, error, message
        _internal_segment_bytes[bootstrap] = False
        return configs, ErrorCode.INVALID_CONFIG, refusal

    def config_in_force(self, topic: str, config: TopicConfig) -> TopicConfig:
        """`config` as the broker holds it for `topic`: a segment-shaping config it refused and this adapter left
        out is the broker's value (its default, or what it held before), so that the model's topic has the
        segments the broker's has (the suites' Twin creates the model's topic with it). A topic this adapter did
        not configure (created by a cluster's admin) is taken as asked."""
        applied = self.topic_configs.get(self._name(topic))
        if applied is None:
            return config
        if _INTERNAL_SEGMENT_BYTES in applied:
            applied = {**applied, "segment.bytes": applied[_INTERNAL_SEGMENT_BYTES]}
        changes: dict[str, int] = {}
        for key, field_name in _SHAPING_FIELDS.items():
            held = int(applied[key]) if key in applied else getattr(_DEFAULTS, field_name)
            if getattr(config, field_name) != held:
                changes[field_name] = held
        return replace(config, **changes) if changes else config  # type: ignore[arg-type]

    def _created(self, name: str, configs: dict[str, str], partitions: int) -> None:
        self.created.append(name)
        self.topic_configs[name] = dict(configs)
        self._lead_from_first_broker(name, partitions)

    def _lead_from_first_broker(self, name: str, partitions: int) -> None:
        """Where the control plane moves leaders, a new partition starts led by the first broker, as in the
        model (its first replica, broker 0): a clock the suite sets on the model's leader is the real
        leader's clock."""
        if not self.control_moves:
            return
        first = self.probe.broker_ids[0]
        for partition in range(partitions):
            if self.client.leader(name, partition) not in (first, -1):  # -1: no leader known yet, nothing to move
                self._elect(name, partition, first)

    def _create_with_admin(self, name: str, configs: dict[str, str], partitions: int, replication: int) -> None:
        """A topic from the cluster's own API: broker defaults only, so any config beyond CreateTime (shaping
        configs aside, which a conforming broker's answers do not depend on) is UNSUPPORTED."""
        if self.admin is None:
            raise UnsupportedOperation(
                Capability.ALTER_CONFIG,
                f"{self.name} offers no CreateTopics and the suite has no other way to create {name}",
            )
        wanted = {k: v for k, v in configs.items() if k not in _SHAPING and k != "message.timestamp.type"}
        if configs.get("message.timestamp.type") != "CreateTime" or wanted:
            raise UnsupportedOperation(
                _capability_for(configs), f"{self.name} creates topics with its defaults only; wanted {configs}"
            )
        dropped = {k: v for k, v in configs.items() if k in _SHAPING}
        if dropped:
            self.notes.append(f"{name}: created without {dropped} (no topic configs on {self.name})")
        self.admin.create_topic(name, partitions, replication)
        self.created.append(name)
        # The model's leader of a new partition is its first replica, broker 0: start from the same place.
        if self.failover is not None:
            for partition in range(partitions):
                self.failover(name, partition, self.probe.broker_ids[0])
        self.client.metadata([name])

    def alter_config(self, topic: str, config: TopicConfig) -> None:
        """Alter the topic to `config`, and return once the broker shows the change in force. A refusal raises
        (ConfigError where the profile refuses the config, UnsupportedOperation otherwise) and leaves the topic
        as it was, so that the suites' model is not altered either."""
        if Capability.ALTER_CONFIG not in self.capabilities:
            raise UnsupportedOperation(Capability.ALTER_CONFIG)
        name = self._name(topic)
        previous = self.topic_configs.get(name, {})
        configs: dict[str, str | None] = dict(self._sendable(kafka_configs(config)))
        if Capability.RETENTION not in self.capabilities and (not previous or "retention.ms" in previous):
            configs.setdefault("retention.ms", "-1")  # as at creation (the module doc), unless refused there
        # A value back at Kafka's default is not sent (kafka_configs), and both AlterConfigs and
        # IncrementalAlterConfigs keep what a request does not name: delete what this adapter set before, so
        # the broker returns to the default as the model does (e.g. compression.type back to `producer`).
        for key in previous:
            configs.setdefault(key, None)
        with self._guarded():
            applied = self._alter(name, config, configs)
            kept = {k: v for k, v in previous.items() if k not in applied}  # a shaping value the retry left out
            self.topic_configs[name] = kept | {k: v for k, v in applied.items() if v is not None}
            if DESCRIBE_CONFIGS in self.probe.api_versions:
                self._await_in_force(name, applied, previous)

    def _alter(self, name: str, config: TopicConfig, configs: dict[str, str | None]) -> dict[str, str | None]:
        """Send the alter; the configs the broker applied. As at creation, a broker that refuses a shaping
        config for its own limits (Kafka 4.1's 1 MiB minimum for segment.bytes, KIP-1030) is asked again with
        internal.segment.bytes in its place, then without the shaping values, and the run's notes say so."""
        error, message = self.client.alter_configs(name, configs)
        if error == ErrorCode.INVALID_CONFIG:
            configs, error, message = self._internal_segment_bytes(
                configs, message, lambda c: self.client.alter_configs(name, c)
            )
        dropped = {k: v for k, v in configs.items() if k in _SHAPING and v is not None}
        if error == ErrorCode.INVALID_CONFIG and dropped:
            configs = {k: v for k, v in configs.items() if k not in dropped}
            refusal = message
            error, message = self.client.alter_configs(name, configs)
            if error == 0:
                self.notes.append(f"{name}: altered without {dropped} (refused: {refusal})")
        if error != 0:
            wanted = {k: v for k, v in configs.items() if v is not None}
            what = f"altering {name} to {configs} failed: {error_name(error)} {message}"
            _refused_as_specified(config, self.profile, error, what)
            raise UnsupportedOperation(_capability_for(wanted), what)
        return configs

    def _await_in_force(self, name: str, applied: dict[str, str | None], previous: dict[str, str]) -> None:
        """Poll DescribeConfigs on every broker, under one deadline (the client's timeout), until each shows
        what the alter changed: Kafka answers an alter before its brokers apply the change from the metadata
        log, each when it replays the ConfigRecord (KRaft), and a Produce right after it was seen validated or
        compressed under the old config by a leader other than the broker that answered (Kafka 4.4, 1 time in
        40; Kafka 3.9 with three brokers, compression.type)."""
        expected = _expected_shown(applied, previous, self.profile)
        if not expected:
            return
        # A config the broker does not describe cannot be awaited (the probe found the ones it has).
        late = self._await_every_broker(
            name, lambda shown: {k: shown[k] for k, w in expected.items() if k in shown and not w.shown_by(shown[k])}
        )
        if late is not None:
            node, behind = late
            raise ConfigNotInForce(
                f"{name}: the cluster accepted the configs {applied} but broker {node}'s DescribeConfigs still "
                f"shows {behind} after {self.client.timeout:g} s: check that broker's log (it may not be "
                "replaying the metadata log, or its controller may be stuck), or allow it longer with "
                "--wire-timeout SECONDS"
            )
        self._await_applied()

    def _await_every_broker(
        self, name: str, behind: Callable[[dict[str, str]], dict[str, str]]
    ) -> tuple[int, dict[str, str]] | None:
        """Poll DescribeConfigs of `name` on every broker, under one deadline (the client's timeout), until
        `behind` finds nothing late in what each shows: None then, else the first broker still late and what."""
        deadline = time.monotonic() + self.client.timeout
        pause = 0.005
        waiting = list(self.probe.broker_ids)
        while True:
            pending: dict[int, dict[str, str]] = {}
            for node in waiting:
                late = behind(self.client.describe_configs(name, node=node))
                if late:
                    pending[node] = late
            if not pending:
                return None
            if time.monotonic() >= deadline:
                return next(iter(pending.items()))
            waiting = list(pending)
            time.sleep(pause)
            pause = min(2 * pause, 0.1)

    def _await_applied(self) -> None:
        """Return once every broker has applied, to its logs too, the metadata its DescribeConfigs showed.
        DescribeConfigs reads a broker's metadata image, and Kafka (KRaft) sets the image before it applies the
        image's topic configs to the logs (BrokerMetadataPublisher.onMetadataUpdate: metadataCache.setImage
        first, the DynamicConfigPublisher's TopicConfigHandler later), so a Produce right after the change is
        seen can still be validated under the old config: Kafka 4.0, 3 produces in 400 right after
        message.timestamp.type was seen altered were stamped under the old type. A broker's loader publishes
        one image after another, so a later change seen there means the earlier image was applied in full.
        The later change is a mark on a topic of this adapter's own (its retention.ms: it holds no records); a
        broker that refuses the mark topic, or does not show its retention.ms, gets no mark, and the run's notes
        say so."""
        if self.marks is None:
            return
        if self.marks_by_produce:
            self._await_applied_by_produce()
            return
        name = self._name(_MARK_TOPIC)
        if self.marks == 0:
            error, message = self.client.create_topic(name, partitions=1, replication_factor=1)
            if error != 0:
                self._no_marks(f"CreateTopics {name} failed: {error_name(error)} {message}")
                return
            self.created.append(name)
        self.marks += 1
        value = str(_MARK_BASE + self.marks)
        error, message = self.client.alter_configs(name, {"retention.ms": value})
        if error != 0:
            self._no_marks(f"altering {name}'s retention.ms failed: {error_name(error)} {message}")
            return
        undescribed: list[int] = []

        def behind(shown: dict[str, str]) -> dict[str, str]:
            retention = shown.get("retention.ms")
            if retention is None:  # nothing to await here: the marks end below
                undescribed.append(1)
                return {}
            return {} if retention == value else {"retention.ms": retention}

        late = self._await_every_broker(name, behind)
        if undescribed:
            self._no_marks(f"DescribeConfigs of {name} shows no retention.ms")
        elif late is not None:
            node, shown = late
            raise ConfigNotInForce(
                f"{name}: broker {node} still shows retention.ms={shown['retention.ms']} after the alter to {value} "
                f"({self.client.timeout:g} s): check that broker's log (it may not be replaying the metadata log), "
                "or allow it longer with --wire-timeout SECONDS"
            )

    def _await_applied_by_produce(self) -> None:
        """`_await_applied` on a broker whose DescribeConfigs shows a change before the broker applies it: Kafka in
        ZooKeeper mode describes a topic's configs from ZooKeeper, while each broker applies a change when its
        listener processes the change's notification, in the order they were made (Kafka 2.8.2: a produce right
        after message.timestamp.type was seen altered back to CreateTime was stamped LogAppendTime). The mark is a
        change of the mark topic's message.timestamp.type, which every one of its partitions (one led by each
        broker) shows in force in a produce's answer: log_append_time -1 under CreateTime, the broker's time under
        LogAppendTime."""
        assert self.marks is not None
        name = self._name(_MARK_TOPIC)
        brokers = self.probe.broker_ids
        if self.marks == 0:
            error, message = self.client.create_topic(name, assignments={p: [b] for p, b in enumerate(brokers)})
            if error != 0:
                self._no_marks(f"CreateTopics {name} failed: {error_name(error)} {message}")
                return
            self.created.append(name)
        self.marks += 1
        stamped = self.marks % 2 == 1  # LogAppendTime on odd marks
        wanted = "LogAppendTime" if stamped else "CreateTime"
        error, message = self.client.alter_configs(name, {"message.timestamp.type": wanted})
        if error != 0:
            self._no_marks(f"altering {name}'s message.timestamp.type failed: {error_name(error)} {message}")
            return
        version = min(self.client.max_version(PRODUCE, 8), 8)
        now = int(time.time() * 1000)
        record = encode_batches(build_batches([RecordSpec(now, value=b"mark")], magic=2 if version >= 3 else 1))
        deadline = time.monotonic() + self.client.timeout
        for partition, broker in enumerate(brokers):
            while True:
                answer = self.client.produce(name, partition, record, version=version, acks=1)
                shown = answer.log_append_time is not None and answer.log_append_time != NO_TIMESTAMP
                if answer.error_code == 0 and shown == stamped:
                    break
                if time.monotonic() >= deadline:
                    raise ConfigNotInForce(
                        f"{name}: broker {broker} did not stamp a produce as {wanted} within "
                        f"{self.client.timeout:g} s of the alter (error {error_name(answer.error_code)}): check that "
                        "broker's log (it may not be processing ZooKeeper's config changes), or allow it longer with "
                        "--wire-timeout SECONDS"
                    )
                time.sleep(0.005)

    def _no_marks(self, why: str) -> None:
        self.marks = None
        self.notes.append(f"an alter counts as applied once DescribeConfigs shows it (no later mark: {why})")

    def _delete(self, names: Sequence[str]) -> None:
        # Best effort on the way out; the topics carry the run's prefix. (Also called while probing,
        # before `self.probe` exists.)
        with contextlib.suppress(WireError):
            if DELETE_TOPICS in self.client.api_versions():
                self.client.delete_topics(list(names))
                _deleted.setdefault(self.client.bootstrap, set()).update(names)
                return
        if self.admin is not None:
            for name in names:
                with contextlib.suppress(Exception):
                    self.admin.delete_topic(name)

    # -- data

    def produce(
        self, topic: str, partition: int, batches: Sequence[object], *, produce_version: int
    ) -> ProduceResponse:
        self._check_not_lost()
        records = encode_batches(batches)  # type: ignore[arg-type]
        try:
            result = self.client.produce(
                self._name(topic), partition, records, version=produce_version,
                beyond_offer=produce_version < self.profile.produce_versions[0],
            )
        except UnsupportedVersion as exc:
            raise UnsupportedOperation(_produce_capability(produce_version), str(exc)) from None
        except WireError as exc:
            return ProduceResponse(self._transport_error(exc), error_message=str(exc))
        return ProduceResponse(
            ErrorCode(result.error_code),
            base_offset=result.base_offset,
            log_append_time=-1 if result.log_append_time is None else result.log_append_time,
            log_start_offset=-1 if result.log_start_offset is None else result.log_start_offset,
            error_message=result.error_message,
            record_errors=tuple(RecordError(index, message) for index, message in result.record_errors or ()),
        )

    def fetch(self, topic: str, partition: int, offset: int, *, fetch_version: int) -> FetchResponse:
        """Everything from `offset` up to the high watermark, as a consumer reads it: a broker may answer a
        Fetch with fewer batches than fit (librdkafka's mock cluster sends one per answer), so the adapter
        fetches again from the next offset until it reaches the high watermark or nothing more comes."""
        self._check_not_lost()
        if fetch_version >= 13 and self._without_topic_id(topic):
            # As a Java consumer does: topic ids (Fetch v13+) only where Metadata gives the topic one.
            self.notes.append(f"fetch {topic}: no topic id in Metadata, Fetch v{fetch_version} sent as v12")
            fetch_version = 12
        batches: list[object] = []
        position = offset
        first = None
        empty_polls = 0
        for _ in range(_MAX_FETCH_ROUNDS):
            try:
                result = self.client.fetch(
                    self._name(topic), partition, position, version=fetch_version,
                    beyond_offer=fetch_version < self.profile.fetch_versions[0],
                )
            except UnsupportedVersion as exc:
                capability = Capability.DOWN_CONVERSION if fetch_version <= 3 else Capability.FETCH
                raise UnsupportedOperation(capability, str(exc)) from None
            except WireError as exc:
                self.notes.append(f"fetch {topic}: {exc}")
                if first is None:
                    return FetchResponse(self._transport_error(exc))
                break  # keep what was read; the comparison shows the missing tail
            try:
                more = decode_batches(result.records, partial_tail=True)
            except CodecError as exc:
                # What a Java consumer meets as CorruptRecordException: compared as an error code under the
                # clause of what was stored, with the codec's reason kept for the report.
                self.notes.append(f"fetch {topic} at {position}: served bytes do not decode: {exc}")
                return FetchResponse(ErrorCode.CORRUPT_MESSAGE, high_watermark=result.high_watermark)
            if not more and result.error_code == 0 and result.high_watermark > position and empty_polls < _EMPTY_POLLS:
                # Nothing served below the high watermark: the broker's wait (max_wait_ms) ran out before it read
                # the log (Tansu on a loaded machine). A consumer polls again; so does the adapter, a bounded
                # number of times, and a broker that never serves the records is compared as it answered.
                empty_polls += 1
                self.notes.append(
                    f"fetch {topic} at {position}: nothing served below the high watermark "
                    f"{result.high_watermark}; polled again ({empty_polls})"
                )
                time.sleep(_EMPTY_POLL_PAUSE)
                continue
            if first is None:
                first = result
            elif result.error_code != 0:
                break
            batches.extend(more)
            if result.error_code != 0 or not more:
                break
            following = max(b.last_offset for b in more) + 1  # type: ignore[attr-defined]
            if following <= position or following >= result.high_watermark:
                break
            position = following
        assert first is not None
        return FetchResponse(
            ErrorCode(first.error_code),
            batches=tuple(batches),  # type: ignore[arg-type]
            high_watermark=first.high_watermark,
            log_start_offset=-1 if first.log_start_offset is None else first.log_start_offset,
        )

    def list_offsets(
        self,
        topic: str,
        partition: int,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> ListOffsetsAnswer:
        self._check_not_lost()
        try:
            result = self.client.list_offsets(
                self._name(topic), partition, target, version=version, isolation_level=int(isolation),
                beyond_offer=version < self.profile.list_offsets_versions[0],
            )
        except UnsupportedVersion as exc:
            raise UnsupportedOperation(Capability.LIST_OFFSETS, str(exc)) from None
        except WireError as exc:
            self.notes.append(f"list_offsets {topic} {target}: {exc}")
            return ListOffsetsAnswer(self._transport_error(exc), -1, -1, -1)
        return ListOffsetsAnswer(
            ErrorCode(result.error_code),
            result.offset,
            -1 if result.timestamp is None else result.timestamp,  # v0 answers offsets only (LO-7)
            -1 if result.leader_epoch is None else result.leader_epoch,
        )

    # -- clocks and faults

    def clock(self, broker: int) -> int:
        if self.control is not None and Capability.CLOCK_CONTROL in self.capabilities:
            self._check_not_lost()
            return self.control.clock(self.probe.broker_ids[broker])
        # The broker's wall clock, read on this machine (a loopback broker shares it).
        return time.time_ns() // 1_000_000

    def set_clock(self, broker: int, now: int) -> None:
        if self.control is None or Capability.CLOCK_CONTROL not in self.capabilities:
            raise UnsupportedOperation(Capability.CLOCK_CONTROL, "a real broker keeps its own wall clock")
        self._check_not_lost()
        self.control.set_clock(self.probe.broker_ids[broker], now)

    def elect_leader(self, topic: str, partition: int, broker: int) -> None:
        if self.failover is None:
            raise UnsupportedOperation(Capability.LEADER_FAILOVER)
        with self._guarded():
            self._elect(self._name(topic), partition, self.probe.broker_ids[broker])

    def _move_through_control(self, name: str, partition: int, node: int) -> None:
        assert self.control is not None
        self.control.move_leader(name, partition, node)

    def _elect(self, name: str, partition: int, node: int) -> None:
        assert self.failover is not None
        self.failover(name, partition, node)
        # Wait (bounded) until Metadata names the new leader: requests after the move go to it.
        deadline = time.monotonic() + self.client.timeout
        while True:
            described = self.client.metadata([name]).topics.get(name)
            current = described.partitions.get(partition) if described is not None else None
            if (current is not None and current.leader == node) or time.monotonic() > deadline:
                return
            time.sleep(0.05)

    def leader(self, topic: str, partition: int) -> int:
        with self._guarded():
            node = self.client.leader(self._name(topic), partition)
        return self.probe.broker_ids.index(node)

    def retention_tick(self) -> None:
        if self.control is None or Capability.RETENTION not in self.capabilities:
            raise UnsupportedOperation(Capability.RETENTION, "retention runs on the broker's own schedule")
        self._check_not_lost()
        self.control.run_retention()

    def _without_topic_id(self, topic: str) -> bool:
        with self._guarded():
            return self.client.topic_id(self._name(topic)) is None

    def _check_not_lost(self) -> None:
        if self.client.bootstrap in _lost:
            raise BrokerLost(_lost[self.client.bootstrap], address=self.client.bootstrap, kind="unreachable")

    @contextlib.contextmanager
    def _guarded(self) -> Iterator[None]:
        """Requests outside the compared data path (topics, configs, leaders): a lost broker raises
        BrokerLost at once, and a request that gets no answer checks whether the broker is lost."""
        self._check_not_lost()
        try:
            yield
        except BrokerLost:
            raise
        except WireError as exc:
            self._transport_error(exc)  # raises BrokerLost when the broker no longer answers at all
            raise

    def _transport_error(self, exc: WireError) -> ErrorCode:
        """The error code a client sees for a request that got no answer, once one ApiVersions probe shows the
        broker still answers; if it does not, the broker is lost (BrokerLost), so that a hung or dead broker
        costs one timeout per run instead of one per request while the tests go on generating examples."""
        bootstrap = self.client.bootstrap
        if bootstrap in _lost:
            raise BrokerLost(_lost[bootstrap], address=bootstrap, kind="unreachable") from None
        if exc.kind in ("timeout", "unreachable", "closed"):
            from conformance.targets.brokers.process import ApiVersionsProbeError, probe_api_versions

            host, _, port = bootstrap.split(",")[0].rpartition(":")
            try:
                probe_api_versions(host, int(port), timeout=self.client.timeout, security=self.client.security)
            except (ApiVersionsProbeError, OSError, ValueError) as probe:
                _lost[bootstrap] = (
                    f"broker at {bootstrap} stopped answering during the run ({exc.kind}: {exc}; an ApiVersions "
                    f"probe then failed too: {probe}): is it still running? check it and its log, then run again"
                )
                raise BrokerLost(_lost[bootstrap], address=bootstrap, kind=exc.kind) from None
        return _client_error_code(exc)

    def close(self) -> None:
        try:
            if self.created:
                self._delete(self.created)
        finally:
            self.created = []
            self.client.close()


class BrokerLost(WireError):
    """The broker stopped answering altogether (not one request: an ApiVersions probe gets no answer
    either); every later request of this process to it fails at once with this error."""


_lost: dict[str, str] = {}
# The topics this process deleted, by bootstrap address: a create of one of them waits out its deletion.
_deleted: dict[str, set[str]] = {}


def _client_error_code(exc: WireError) -> ErrorCode:
    """A data request the broker did not answer reads as a Java client would see it: REQUEST_TIMED_OUT or
    NETWORK_EXCEPTION, compared like any other error code under the clause being checked (a broker that
    drops the connection on a valid request fails that clause, and the next request reconnects)."""
    return ErrorCode.REQUEST_TIMED_OUT if exc.kind == "timeout" else ErrorCode.NETWORK_EXCEPTION


class ConfigNotInForce(Exception):
    """A broker accepted a config change but does not show it in force within the client's timeout."""


def _timestamp_config_defaults(profile: Profile) -> dict[str, str]:
    """The timestamp configs a broker of `profile` validates with, and the value each shows when not set
    on the topic (VAL-6)."""
    defaults = {"message.timestamp.type": "CreateTime"}
    if profile.has_before_after_configs:
        defaults["message.timestamp.before.max.ms"] = str(profile.default_before_ms)
        defaults["message.timestamp.after.max.ms"] = str(profile.default_after_ms)
    if profile.has_difference_config:
        defaults["message.timestamp.difference.max.ms"] = str(LONG_MAX)
    return defaults


@dataclass(frozen=True)
class _InForce:
    """What DescribeConfigs shows for one config once an alter is in force: the value set or, for a config
    deleted, anything but the value it had (its default, which a broker of another version than the profile
    may not share)."""

    value: str | None
    had: str | None = None

    def shown_by(self, shown: str) -> bool:
        return shown == self.value if self.value is not None else shown != self.had


# Configs whose DescribeConfigs form is what kafka_configs sends, besides the timestamp configs: each is awaited
# after an alter that sets or deletes it (message.format.version is not: brokers show their own spelling of it).
_AWAITED = ("compression.type", *_SHAPING, "retention.ms", "max.compaction.lag.ms", "cleanup.policy",
            "message.downconversion.enable")  # fmt: skip


def _expected_shown(applied: dict[str, str | None], previous: dict[str, str], profile: Profile) -> dict[str, _InForce]:
    """The configs the alter changes, each with what shows it in force: a value set, or for a config deleted
    anything but the value it had. A timestamp config deleted that had the profile's default already changes
    nothing; the others this adapter sets only away from Kafka's defaults (kafka_configs)."""
    defaults: dict[str, str | None] = {**_timestamp_config_defaults(profile), **dict.fromkeys(_AWAITED)}
    expected: dict[str, _InForce] = {}
    for key, default in defaults.items():
        value = applied.get(key)
        if value is not None:
            expected[key] = _InForce(value)
        elif key in applied and key in previous and previous[key] != default:
            expected[key] = _InForce(None, previous[key])
    return expected


def _refused_as_specified(config: TopicConfig, profile: Profile, error: int, what: str) -> None:
    """A config the claimed profile does not have (VAL-6: the difference config in 4.0, KIP-724), refused with
    INVALID_CONFIG: the refusal the spec asks for, raised as the model raises it (ConfigError), so that the
    suites compare it, instead of a missing capability (UNSUPPORTED)."""
    if error != ErrorCode.INVALID_CONFIG:
        return
    try:
        check_config(config, profile)
    except ConfigError as exc:
        raise ConfigError(f"{what} (refused as {profile.name} refuses it: {exc})") from None


def _capability_for(configs: dict[str, str]) -> Capability:
    if configs.get("message.timestamp.type") == "LogAppendTime":
        return Capability.LOG_APPEND_TIME
    if "message.timestamp.before.max.ms" in configs or "message.timestamp.after.max.ms" in configs:
        return Capability.KIP_937_CONFIGS
    if "message.timestamp.difference.max.ms" in configs:
        return Capability.DIFFERENCE_CONFIG
    return Capability.ALTER_CONFIG


def _produce_capability(version: int) -> Capability:
    return Capability.PRODUCE_LEGACY if version <= 2 else Capability.PRODUCE_V2
