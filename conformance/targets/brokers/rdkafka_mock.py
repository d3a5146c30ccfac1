"""librdkafka's mock cluster as a managed target: N in-process Kafka-protocol
brokers on 127.0.0.1, driven through librdkafka's C API with ctypes, whose partition leaders and
broker availability the suite changes at will (the failover operations: leader moves, broker down and up).

The library is the librdkafka bundled in the `confluent-kafka` wheel (`confluent_kafka.libs/`);
`find_librdkafka` locates it and names the fix (`pip install confluent-kafka`) when it is absent.
The mock API is declared "experimental, not covered by API/ABI stability" by librdkafka, so every
function this module calls has its argtypes/restype declared here, is looked up once, and a missing
symbol is reported as a version problem instead of a segfault. Pinned in pyproject.toml
(`confluent-kafka==2.16.1`, librdkafka 2.16.0); observed with that pair.

The cluster lives inside this process: it needs an `rd_kafka_t` handle for its bookkeeping (a
producer handle with no bootstrap servers, which never connects anywhere), and runs on librdkafka's
own threads, so the Python thread that calls into it only blocks for the duration of one command.
Each broker binds its own ephemeral port on INADDR_LOOPBACK (127.0.0.1, checked: never 0.0.0.0).
It is stopped by `close()`, by leaving a `with` block, and at interpreter exit (`atexit`); a process
killed by SIGKILL takes the cluster with it, as it is only threads.

What the mock cluster does with timestamps (librdkafka 2.16.0, observed over TCP with confluent_kafka
and with raw kafka-wire requests; the issue-4 report has the evidence). It is a protocol mock, not a
Kafka log: the conformance suite should expect most timestamp clauses to be UNSUPPORTED or FAIL there,
and use it for what it is good at, real leader moves.
- Produce stores the record set byte for byte after patching the first batch's base offset and
  partition leader epoch: CreateTime timestamps come back exactly as sent, including negative ones
  (-5) and far-future ones (2^40); a client-set LogAppendTime attribute is kept with the client's
  timestamp; magic 0 and 1 entries are stored too (and Fetch never down-converts). No VAL-* rule is
  enforced. Only the first batch of a partition's record set is counted: a second batch in the same
  request keeps base offset 0 and takes no offsets.
- Topics have no configurations: CreateTopics, DeleteTopics, DescribeConfigs, AlterConfigs,
  IncrementalAlterConfigs, DeleteRecords and ElectLeaders are not advertised (and Metadata names
  controller 0, which is no broker, so admin clients wait for a controller until they time out).
  Topics come from `create_topic` here or from Metadata auto-creation. So message.timestamp.type=
  LogAppendTime cannot be set, and nothing is ever stamped; yet every successful Produce answer (v2+)
  carries log_append_time = 1234, a constant, which clients read as "the broker stamped 1234"
  (confluent_kafka's delivery reports say TIMESTAMP_LOG_APPEND_TIME 1234); -1 on errors.
- ListOffsets (v0..v7): EARLIEST (-2) is the log start offset and LATEST (-1) the end offset, with
  timestamp -1; every timestamp lookup (any T >= 0) and MAX_TIMESTAMP (-3) answer offset -1,
  timestamp -1, no error, as if no record had a timestamp >= T (LO-*: not implemented).
- `set_leader` moves leadership and keeps the log: the old leader answers NOT_LEADER_OR_FOLLOWER to
  Produce, Fetch and ListOffsets, the new one serves the same offsets with the same stored bytes and
  timestamps, the leader epoch in Metadata goes up by one per move, and batches appended afterwards
  carry the new epoch.
- ApiVersions itself is implemented up to v2: a client's first ApiVersions v3 gets UNSUPPORTED_VERSION
  (in the v0 layout, KIP-511) and must retry at a version the answer allows.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import importlib.util
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from conformance.extras import install_hint
from conformance.targets.brokers.failovers import register_failover, unregister_failover
from conformance.targets.brokers.opening import check_found, wire_factory
from conformance.targets.brokers.process import ApiVersionsProbeError, probe_api_versions
from conformance.targets.target import Opened, Opening, Target

__all__ = [
    "ENV_LIBRARY",
    "INSTALL_HINT",
    "LibrdkafkaNotFound",
    "MockCluster",
    "MockClusterError",
    "MockRequest",
    "check_mock_cluster",
    "find_librdkafka",
    "librdkafka_version",
    "load_librdkafka",
    "open_mock_cluster",
]

# An explicit path wins over the wheel's copy (a locally built librdkafka, a debug build).
ENV_LIBRARY = "KTS_LIBRDKAFKA"
INSTALL_HINT = f"{install_hint('targets')} (or pip install confluent-kafka)"
LOOPBACK = "127.0.0.1"

_RD_KAFKA_PRODUCER = 0
_RD_KAFKA_CONF_OK = 0
_ERRSTR_SIZE = 512
# Our bound, not librdkafka's: a conformance run needs three; dozens would be a usage mistake.
_MAX_BROKERS = 32
MAX_MOCK_BROKERS = _MAX_BROKERS
_PROBE_TIMEOUT = 5.0


class MockClusterError(RuntimeError):
    """A mock-cluster command failed; the message names the command, its arguments and librdkafka's
    error (name and description)."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


class LibrdkafkaNotFound(MockClusterError):
    """No librdkafka with the mock-cluster API could be found or loaded; the message names the fix."""


# ---------------------------------------------------------------------------------------------------
# locating and binding the library


def _wheel_candidates() -> list[Path]:
    """librdkafka copies bundled next to the confluent_kafka package, without importing it (importing
    would start nothing, but finding should not depend on the package importing cleanly)."""
    spec = importlib.util.find_spec("confluent_kafka")
    if spec is None or not spec.submodule_search_locations:
        return []
    package = Path(next(iter(spec.submodule_search_locations)))
    site = package.parent
    # Linux wheels (auditwheel): confluent_kafka.libs/librdkafka-<hash>.so.1; macOS (delocate):
    # confluent_kafka/.dylibs/librdkafka.1.dylib; Windows (delvewheel): confluent_kafka.libs/ or the
    # package directory itself, librdkafka.dll.
    places = [site / "confluent_kafka.libs", package / ".dylibs", package]
    patterns = ("librdkafka*.so*", "librdkafka*.dylib", "librdkafka*.dll")
    found: list[Path] = []
    for place in places:
        if place.is_dir():
            for pattern in patterns:
                found.extend(sorted(p for p in place.glob(pattern) if "++" not in p.name))
    return found


def find_librdkafka() -> Path:
    """The path of a librdkafka shared library: `$KTS_LIBRDKAFKA`, else the copy bundled in the
    confluent-kafka wheel, else a system librdkafka. LibrdkafkaNotFound names the fix otherwise."""
    explicit = os.environ.get(ENV_LIBRARY)
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise LibrdkafkaNotFound(f"{ENV_LIBRARY}={explicit} is not a file: unset it or point it at librdkafka.so")
        return path
    candidates = _wheel_candidates()
    if candidates:
        return candidates[0]
    system = ctypes.util.find_library("rdkafka")
    if system:
        return Path(system)
    raise LibrdkafkaNotFound(
        f"librdkafka not found (the rdkafka-mock target uses the copy bundled in the confluent-kafka wheel): "
        f"{INSTALL_HINT}, or set {ENV_LIBRARY}=/path/to/librdkafka.so"
    )


def check_mock_cluster(target: Target, opening: Opening) -> None:
    """Before anything starts: a librdkafka to load (the targets extra), else one line naming the fix."""
    check_found(find_librdkafka, LibrdkafkaNotFound)


_c = ctypes
_vp = _c.c_void_p
_str = _c.c_char_p
_err = _c.c_int  # rd_kafka_resp_err_t is a C enum
# name: (restype, argtypes). Every function this module calls is here and nowhere else.
_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    # core
    "rd_kafka_version_str": (_str, []),
    "rd_kafka_err2name": (_str, [_err]),
    "rd_kafka_err2str": (_str, [_err]),
    "rd_kafka_conf_new": (_vp, []),
    "rd_kafka_conf_set": (_c.c_int, [_vp, _str, _str, _c.c_char_p, _c.c_size_t]),
    "rd_kafka_conf_destroy": (None, [_vp]),
    "rd_kafka_new": (_vp, [_c.c_int, _vp, _c.c_char_p, _c.c_size_t]),
    "rd_kafka_destroy": (None, [_vp]),
    # the mock cluster (rdkafka_mock.h)
    "rd_kafka_mock_cluster_new": (_vp, [_vp, _c.c_int]),
    "rd_kafka_mock_cluster_destroy": (None, [_vp]),
    "rd_kafka_mock_cluster_bootstraps": (_str, [_vp]),
    "rd_kafka_mock_topic_create": (_err, [_vp, _str, _c.c_int, _c.c_int]),
    "rd_kafka_mock_topic_delete": (_err, [_vp, _str]),
    "rd_kafka_mock_partition_set_leader": (_err, [_vp, _str, _c.c_int32, _c.c_int32]),
    "rd_kafka_mock_partition_set_follower": (_err, [_vp, _str, _c.c_int32, _c.c_int32]),
    "rd_kafka_mock_partition_set_follower_wmarks": (_err, [_vp, _str, _c.c_int32, _c.c_int64, _c.c_int64]),
    "rd_kafka_mock_partition_delete_records": (_err, [_vp, _str, _c.c_int32, _c.c_int64]),
    "rd_kafka_mock_broker_set_down": (_err, [_vp, _c.c_int32]),
    "rd_kafka_mock_broker_set_up": (_err, [_vp, _c.c_int32]),
    "rd_kafka_mock_broker_set_rtt": (_err, [_vp, _c.c_int32, _c.c_int]),
    "rd_kafka_mock_broker_set_rack": (_err, [_vp, _c.c_int32, _str]),
    "rd_kafka_mock_broker_decommission": (_err, [_vp, _c.c_int32]),
    "rd_kafka_mock_broker_add": (_err, [_vp, _c.c_int32]),
    "rd_kafka_mock_set_apiversion": (_err, [_vp, _c.c_int16, _c.c_int16, _c.c_int16]),
    "rd_kafka_mock_push_request_errors_array": (None, [_vp, _c.c_int16, _c.c_size_t, _c.POINTER(_err)]),
    "rd_kafka_mock_clear_request_errors": (None, [_vp, _c.c_int16]),
    "rd_kafka_mock_start_request_tracking": (None, [_vp]),
    "rd_kafka_mock_stop_request_tracking": (None, [_vp]),
    "rd_kafka_mock_get_requests": (_c.POINTER(_vp), [_vp, _c.POINTER(_c.c_size_t)]),
    "rd_kafka_mock_request_id": (_c.c_int32, [_vp]),
    "rd_kafka_mock_request_api_key": (_c.c_int16, [_vp]),
    "rd_kafka_mock_request_timestamp": (_c.c_int64, [_vp]),
    "rd_kafka_mock_request_destroy_array": (None, [_c.POINTER(_vp), _c.c_size_t]),
    "rd_kafka_mock_clear_requests": (None, [_vp]),
}
# Without these there is no mock cluster to speak of; the others fail only when called.
_REQUIRED = (
    "rd_kafka_conf_new",
    "rd_kafka_new",
    "rd_kafka_destroy",
    "rd_kafka_mock_cluster_new",
    "rd_kafka_mock_cluster_destroy",
    "rd_kafka_mock_cluster_bootstraps",
    "rd_kafka_mock_partition_set_leader",
    "rd_kafka_mock_broker_set_down",
    "rd_kafka_mock_broker_set_up",
)

_loaded: dict[str, ctypes.CDLL] = {}
_load_lock = threading.Lock()


def load_librdkafka(path: Path | str | None = None) -> ctypes.CDLL:
    """librdkafka loaded once per path, with the signature of every function used here declared.
    LibrdkafkaNotFound if it cannot be loaded or lacks the mock-cluster API."""
    where = Path(path) if path is not None else find_librdkafka()
    key = str(where)
    with _load_lock:
        if key in _loaded:
            return _loaded[key]
        try:
            lib = ctypes.CDLL(key)
        except OSError as exc:
            raise LibrdkafkaNotFound(
                f"cannot load librdkafka from {where}: {exc}; reinstall it: `{INSTALL_HINT}`"
            ) from exc
        missing = [name for name in _REQUIRED if not hasattr(lib, name)]
        if missing:
            raise LibrdkafkaNotFound(
                f"{where} has no mock-cluster API (missing {', '.join(missing)}): it is too old or built "
                f"without it; use the librdkafka in the confluent-kafka wheel (`{INSTALL_HINT}`)"
            )
        for name, (restype, argtypes) in _SIGNATURES.items():
            if hasattr(lib, name):
                function = getattr(lib, name)
                function.restype = restype
                function.argtypes = argtypes
        _loaded[key] = lib
        return lib


def librdkafka_version(lib: ctypes.CDLL | None = None) -> str:
    """librdkafka's version string, e.g. "2.16.0"."""
    version: bytes = (lib or load_librdkafka()).rd_kafka_version_str()
    return version.decode()


def _function(lib: ctypes.CDLL, name: str) -> Callable[..., Any]:
    try:
        function: Callable[..., Any] = getattr(lib, name)
    except AttributeError:
        raise MockClusterError(
            f"this librdkafka ({librdkafka_version(lib)}) has no {name}(): the mock API changed; "
            f"install the pinned version (pip install confluent-kafka==2.16.1)"
        ) from None
    return function


# ---------------------------------------------------------------------------------------------------
# the cluster


@dataclass(frozen=True)
class MockRequest:
    """One request a mock broker received while tracking was on (`MockCluster.start_tracking`)."""

    broker_id: int
    api_key: int
    timestamp_us: int  # librdkafka's monotonic clock, microseconds: only differences mean anything


class MockCluster:
    """A librdkafka mock cluster of `brokers` brokers (ids 1..brokers) on 127.0.0.1.

    Leader moves and broker down/up are the failover operations. Broker down/up
    do NOT move leadership (librdkafka documents this): a partition whose leader is down has no
    reachable leader until `set_leader` names another broker or the broker comes back.
    """

    def __init__(self, brokers: int = 3, *, library: Path | str | None = None, debug: str | None = None) -> None:
        if not 1 <= brokers <= _MAX_BROKERS:
            raise ValueError(f"a mock cluster has 1..{_MAX_BROKERS} brokers, not {brokers}")
        self._lib = load_librdkafka(library)
        self._lock = threading.RLock()
        self._rk: int | None = None
        self._cluster: int | None = None
        self._broker_ids = set(range(1, brokers + 1))  # rdkafka_mock.h: "ids start at 1 up to broker_cnt"
        self._rk = self._new_handle(debug)
        try:
            cluster = self._lib.rd_kafka_mock_cluster_new(self._rk, brokers)
            if not cluster:
                raise MockClusterError(
                    f"rd_kafka_mock_cluster_new({brokers}) failed: no loopback port to listen on? "
                    f"(librdkafka {librdkafka_version(self._lib)})"
                )
            self._cluster = cluster
            raw: bytes = self._lib.rd_kafka_mock_cluster_bootstraps(cluster)
            self.bootstrap: str = raw.decode()
            self.addresses: dict[int, tuple[str, int]] = _parse_bootstraps(self.bootstrap, brokers)
            # Readiness, and the versions the mock implements (set_api_version may only narrow them).
            self.implemented_versions: dict[int, tuple[int, int]] = self._probe(1)
        except BaseException:
            self._destroy()
            raise
        atexit.register(self.close)

    def _probe(self, broker_id: int) -> dict[int, tuple[int, int]]:
        if broker_id not in self.addresses:
            raise MockClusterError(f"the address of broker {broker_id} is unknown (added later): ask Metadata")
        host, port = self.addresses[broker_id]
        try:
            return probe_api_versions(host, port, _PROBE_TIMEOUT)
        except ApiVersionsProbeError as exc:
            raise MockClusterError(
                f"mock broker {broker_id} at {host}:{port} does not answer ApiVersions: {exc}"
            ) from exc

    def api_versions(self, broker_id: int = 1) -> dict[int, tuple[int, int]]:
        """What broker `broker_id` advertises now (ApiVersions v0 over TCP): {api_key: (min, max)}."""
        return self._probe(self._known(broker_id))

    def _new_handle(self, debug: str | None) -> int:
        """The rd_kafka_t the cluster keeps its books on: a producer with no bootstrap servers."""
        lib = self._lib
        conf = lib.rd_kafka_conf_new()
        errstr = ctypes.create_string_buffer(_ERRSTR_SIZE)
        # log_level 4 (warning) hides the notice that this handle has no bootstrap servers: by design.
        settings = {"client.id": "kafka-conformance-rdkafka-mock", "log_level": "4"}
        if debug:
            settings |= {"debug": debug, "log_level": "7"}
        for name, value in settings.items():
            if lib.rd_kafka_conf_set(conf, name.encode(), value.encode(), errstr, _ERRSTR_SIZE) != _RD_KAFKA_CONF_OK:
                lib.rd_kafka_conf_destroy(conf)
                raise MockClusterError(f"rd_kafka_conf_set({name}={value}) failed: {errstr.value.decode()}")
        rk = lib.rd_kafka_new(_RD_KAFKA_PRODUCER, conf, errstr, _ERRSTR_SIZE)
        if not rk:
            # rd_kafka_new only takes ownership of conf when it succeeds.
            lib.rd_kafka_conf_destroy(conf)
            raise MockClusterError(f"rd_kafka_new failed: {errstr.value.decode()}")
        handle: int = rk
        return handle

    # -- life cycle

    @property
    def closed(self) -> bool:
        return self._cluster is None

    @property
    def broker_ids(self) -> tuple[int, ...]:
        """The ids of the brokers in the cluster now (1..brokers, changed by decommission/add)."""
        return tuple(sorted(self._broker_ids))

    @property
    def librdkafka_version(self) -> str:
        return librdkafka_version(self._lib)

    def close(self) -> None:
        """Stop the brokers and free the cluster; idempotent, and also run at interpreter exit.
        Clients still connected see their connections closed."""
        with self._lock:
            self._destroy()
        atexit.unregister(self.close)

    def _destroy(self) -> None:
        cluster, self._cluster = self._cluster, None
        rk, self._rk = self._rk, None
        # The cluster first: it keeps its books on rk.
        if cluster is not None:
            self._lib.rd_kafka_mock_cluster_destroy(cluster)
        if rk is not None:
            self._lib.rd_kafka_destroy(rk)

    def __enter__(self) -> MockCluster:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else self.bootstrap
        return f"MockCluster(brokers={list(self.broker_ids)}, {state})"

    # -- calling librdkafka

    def _handle(self) -> int:
        if self._cluster is None:
            raise MockClusterError("the mock cluster is closed: start a new MockCluster")
        return self._cluster

    def _call(self, name: str, *args: object) -> None:
        """Call mock function `name` on this cluster; raise MockClusterError on a non-zero
        rd_kafka_resp_err_t."""
        with self._lock:
            code: int = _function(self._lib, name)(self._handle(), *args)
        if code != 0:
            shown = ", ".join(a.decode() if isinstance(a, bytes) else repr(a) for a in args)
            raise MockClusterError(f"{name}({shown}) failed: {self._describe(code)}", code)

    def _call_void(self, name: str, *args: object) -> None:
        with self._lock:
            _function(self._lib, name)(self._handle(), *args)

    def _describe(self, code: int) -> str:
        name: bytes | None = self._lib.rd_kafka_err2name(code)
        text: bytes | None = self._lib.rd_kafka_err2str(code)
        return f"{(name or b'?').decode()} ({code}): {(text or b'').decode()}"

    def _known(self, broker_id: int) -> int:
        # librdkafka reports an unknown broker id, but for -1 ("all brokers") it acts on every broker:
        # ids are checked here so that a typo never takes the whole cluster down.
        if broker_id not in self._broker_ids:
            raise MockClusterError(f"no broker {broker_id} in the mock cluster (brokers: {list(self.broker_ids)})")
        return broker_id

    # -- topics and partitions

    def create_topic(self, topic: str, partitions: int = 1, replication_factor: int = 3) -> None:
        """Create `topic` (the mock brokers do not implement CreateTopics). Leaders are spread over the
        brokers by librdkafka. The mock cluster has no topic configurations."""
        self._call("rd_kafka_mock_topic_create", topic.encode(), partitions, replication_factor)

    def delete_topic(self, topic: str) -> None:
        self._call("rd_kafka_mock_topic_delete", topic.encode())

    def set_leader(self, topic: str, partition: int, broker_id: int | None) -> None:
        """Move the leadership of `topic`-`partition` to `broker_id` (None: leaderless). The log stays;
        the leader epoch goes up by one. Creates the topic if it does not exist."""
        self._call(
            "rd_kafka_mock_partition_set_leader",
            topic.encode(),
            partition,
            -1 if broker_id is None else self._known(broker_id),
        )

    def set_follower(self, topic: str, partition: int, broker_id: int) -> None:
        """Name the preferred read replica (KIP-392) that Fetch answers point consumers to."""
        self._call("rd_kafka_mock_partition_set_follower", topic.encode(), partition, broker_id)

    def set_follower_wmarks(self, topic: str, partition: int, low: int | None, high: int | None) -> None:
        """The follower's log start / high watermark (None: the leader's), to model a lagging replica."""
        self._call(
            "rd_kafka_mock_partition_set_follower_wmarks",
            topic.encode(),
            partition,
            -1 if low is None else low,
            -1 if high is None else high,
        )

    def delete_records(self, topic: str, partition: int, before_offset: int) -> None:
        """Advance the log start offset to `before_offset` (what retention or DeleteRecords does)."""
        self._call("rd_kafka_mock_partition_delete_records", topic.encode(), partition, before_offset)

    # -- brokers

    def broker_down(self, broker_id: int) -> None:
        """Disconnect `broker_id`'s clients and refuse new connections. Leadership does not move."""
        self._call("rd_kafka_mock_broker_set_down", self._known(broker_id))

    def broker_up(self, broker_id: int) -> None:
        """Accept connections on `broker_id` again (same port)."""
        self._call("rd_kafka_mock_broker_set_up", self._known(broker_id))

    def set_rtt(self, broker_id: int, rtt_ms: int) -> None:
        """Delay every answer of `broker_id` by `rtt_ms` (0: none)."""
        self._call("rd_kafka_mock_broker_set_rtt", self._known(broker_id), rtt_ms)

    def set_rack(self, broker_id: int, rack: str) -> None:
        self._call("rd_kafka_mock_broker_set_rack", self._known(broker_id), rack.encode())

    def decommission_broker(self, broker_id: int) -> None:
        """Remove `broker_id` from the cluster; its partitions are reassigned to the others."""
        self._call("rd_kafka_mock_broker_decommission", self._known(broker_id))
        self._broker_ids.discard(broker_id)
        self.addresses.pop(broker_id, None)

    def add_broker(self, broker_id: int) -> None:
        """Add a broker with id `broker_id` (on a new port; it is not in `bootstrap`)."""
        self._call("rd_kafka_mock_broker_add", broker_id)
        self._broker_ids.add(broker_id)

    # -- protocol surface and error injection

    def set_api_version(self, api_key: int, min_version: int, max_version: int) -> None:
        """Advertise (and accept) only `min_version`..`max_version` of `api_key`, on every broker, to play
        an older broker (e.g. ListOffsets <= 6: no MAX_TIMESTAMP, LO-1). The range must lie inside what
        the mock implements (`implemented_versions`; in 2.16.0 Produce 0..10, Fetch 0..16, ListOffsets
        0..7, Metadata 0..13): librdkafka does not check it and would answer versions it cannot parse."""
        implemented = self.implemented_versions.get(api_key)
        if implemented is None:
            raise MockClusterError(f"the mock cluster does not implement API key {api_key}: nothing to advertise")
        if not implemented[0] <= min_version <= max_version <= implemented[1]:
            raise MockClusterError(
                f"API key {api_key}: v{min_version}..v{max_version} is outside what the mock implements "
                f"(v{implemented[0]}..v{implemented[1]})"
            )
        self._call("rd_kafka_mock_set_apiversion", api_key, min_version, max_version)

    def disable_api(self, api_key: int) -> None:
        """Stop advertising `api_key`; requests for it are then answered UNSUPPORTED_VERSION."""
        self._call("rd_kafka_mock_set_apiversion", api_key, -1, -1)

    def push_request_errors(self, api_key: int, errors: Sequence[int]) -> None:
        """The next len(errors) requests with `api_key`, on any broker, fail with these error codes in
        order (librdkafka's -195 `_TRANSPORT` disconnects instead)."""
        array = (_err * len(errors))(*errors)
        self._call_void("rd_kafka_mock_push_request_errors_array", api_key, len(errors), array)

    def clear_request_errors(self, api_key: int) -> None:
        self._call_void("rd_kafka_mock_clear_request_errors", api_key)

    # -- request tracking (evidence: which broker got which request)

    def start_tracking(self) -> None:
        self._call_void("rd_kafka_mock_start_request_tracking")

    def stop_tracking(self) -> list[MockRequest]:
        """Stop tracking and return what was tracked: librdkafka 2.16.0 discards the tracked requests
        when tracking stops (rdkafka_mock.h says it does not), so they are read first."""
        with self._lock:
            tracked = self.requests()
            self._call_void("rd_kafka_mock_stop_request_tracking")
        return tracked

    def clear_requests(self) -> None:
        self._call_void("rd_kafka_mock_clear_requests")

    def requests(self) -> list[MockRequest]:
        """The requests received since tracking started (or was last cleared), oldest first."""
        count = ctypes.c_size_t(0)
        with self._lock:
            handle = self._handle()
            array = _function(self._lib, "rd_kafka_mock_get_requests")(handle, ctypes.byref(count))
            if not array:
                return []
            try:
                return [
                    MockRequest(
                        broker_id=self._lib.rd_kafka_mock_request_id(array[i]),
                        api_key=self._lib.rd_kafka_mock_request_api_key(array[i]),
                        timestamp_us=self._lib.rd_kafka_mock_request_timestamp(array[i]),
                    )
                    for i in range(count.value)
                ]
            finally:
                self._lib.rd_kafka_mock_request_destroy_array(array, count.value)


def _parse_bootstraps(bootstrap: str, brokers: int) -> dict[int, tuple[str, int]]:
    """{broker id: (host, port)} from librdkafka's bootstrap list, which lists brokers 1..n in order.
    Checks the loopback promise: a cluster that listens anywhere else is refused."""
    entries = [entry.strip() for entry in bootstrap.split(",") if entry.strip()]
    if len(entries) != brokers:
        raise MockClusterError(f"mock cluster bootstrap {bootstrap!r} lists {len(entries)} brokers, expected {brokers}")
    addresses: dict[int, tuple[str, int]] = {}
    for broker_id, entry in enumerate(entries, start=1):
        host, _, port = entry.rpartition(":")
        if host != LOOPBACK:
            raise MockClusterError(f"mock broker {broker_id} listens on {entry}, not on {LOOPBACK}: refusing to use it")
        addresses[broker_id] = (host, int(port))
    return addresses


@contextlib.contextmanager
def open_mock_cluster(target: Target, opening: Opening) -> Iterator[Opened]:
    """`--target rdkafka-mock`: three mock brokers in this process for the run, closed on the way out. The suite
    owns this cluster: its leader moves and topic admin disturb nobody."""
    with MockCluster(brokers=opening.brokers or 3) as cluster:
        managed = register_failover(cluster)
        try:
            yield wire_factory(target, opening, cluster.bootstrap, failover=managed, admin=managed), []
        finally:
            unregister_failover(managed)
