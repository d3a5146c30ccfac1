"""The driver self-test (`kafka-conformance check-driver --target client:<library>`): does a driver speak the
protocol (docs/driver-protocol.md)? It tells a broken driver from a broken client: every check here is about the
driver's side of the protocol (answers shaped as the schema says, one per request with its id, bytes carried
intact, error values for what it does not know, an exit on close and on end of input), never about a timestamp,
which is what the suites judge.

Client role: against a reference broker of its own (the model, kafka-4.0) with one topic; every operation the
driver's hello declares is asked once with a well-formed request. Codec role: a v2 batch built and read back where
the driver declares both.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE
from conformance.targets.libraries import LIBRARIES
from conformance.targets.routes.driver.driver_builds import driver_title
from conformance.targets.routes.driver.driver_process import (
    DriverAnswered,
    DriverBroken,
    DriverProcess,
    driver_log,
    schema_problem,
)
from conformance.targets.routes.driver.driver_values import b64

EXIT_WAIT = 5.0  # seconds a driver has to exit after close or end of input
KEYS = (b"\x00\xffkey-0", b"k\xc3\x28-1", b"k-2")  # not UTF-8, on purpose: bytes must travel as base64
# A null value travels as null; no empty key or value: whether a library keeps b"" apart from null is the
# library's business (kafka-go delivers an empty value as null), not the driver's.
VALUES = (b"\x80value-0", None, b"v-2")


@dataclass
class CheckResult:
    name: str
    problem: str | None  # None: PASS
    detail: str = ""
    skipped: str | None = None  # why it was not run (a capability the driver does not declare)

    @property
    def word(self) -> str:
        return "SKIP" if self.skipped is not None else ("PASS" if self.problem is None else "FAIL")

    def line(self) -> str:
        said = self.skipped if self.skipped is not None else (self.problem or self.detail)
        return f"{self.word:4} {self.name}" + (f": {said}" if said else "")


@dataclass
class DriverCheck:
    """The checks of one driver command, for one role, collected in order."""

    name: str
    argv: list[str]
    _: KW_ONLY
    target: str
    log_dir: Path
    timeout: float
    results: list[CheckResult] = field(default_factory=list)

    def process(self, role: str) -> DriverProcess:
        return DriverProcess(
            driver_title(self.name), self.argv, target=self.target, timeout=self.timeout,
            log_path=driver_log(self.log_dir, self.name, role),
        )  # fmt: skip

    def record(self, name: str, check: Callable[[], str | None], *, needs: str | None = None,
               declared: frozenset[str] = frozenset()) -> None:  # fmt: skip
        if needs is not None and needs not in declared:
            self.results.append(CheckResult(name, None, skipped=f"the driver does not declare {needs!r}"))
            return
        try:
            problem = check()
        except DriverAnswered as answered:
            problem = f"answered an error value ({answered.type} {answered.kind}: {answered.message[:200]})"
        except DriverBroken as broken:
            problem = str(broken)
        self.results.append(CheckResult(name, problem))

    @property
    def passed(self) -> bool:
        return all(r.problem is None for r in self.results)


def _round_trip(sent: list[tuple[bytes, bytes | None]], records: list[dict[str, Any]], what: str) -> str | None:
    got = [(r["key"], r["value"]) for r in records]
    want = [(b64(k), b64(v)) for k, v in sent]
    if got[: len(want)] != want:
        return f"{what}: keys and values came back as {got[:3]}, sent {want}: bytes must travel as base64 intact"
    return None


@contextmanager
def _reference_topic(log_dir: Path, timeout: float) -> Iterator[tuple[str, str, int]]:
    """A reference broker (the model, kafka-4.0) with one fresh topic: its bootstrap address, the topic and the
    broker's clock (the reference broker keeps its own, far from the machine's: timestamps near it are valid)."""
    from conformance.targets.brokers.reference_broker import start_reference
    from conformance.targets.routes.wire_adapter.kafka_wire import WireFactory
    from models.config import TopicConfig

    with start_reference(log_dir, profile="kafka-4.0", brokers=1) as reference:
        wire = WireFactory(
            bootstrap=reference.bootstrap, profile="kafka-4.0", target="reference", timeout=timeout,
            control_url=reference.control_url,
        ).build()  # fmt: skip
        try:
            topic = f"driver-check-{uuid.uuid4().hex[:8]}"
            wire.create_topic(topic, TopicConfig(retention_ms=-1))
            yield reference.bootstrap, wire.topic_prefix + topic, wire.clock(wire.brokers()[0])
        finally:
            wire.close()


def _say_hello(
    check: DriverCheck,
    driver: DriverProcess,
    role: str,
    bootstrap: str | None,
    declares: Callable[[dict[str, Any]], str],
) -> dict[str, Any]:
    """The driver started in `role` and the hello check recorded, its detail the library, the capabilities it
    declares and what `declares` reads from the hello for the role; empty, and the driver stopped, where the hello
    failed, so that no other check of the role runs."""
    hello: dict[str, Any] = {}

    def say_hello() -> str | None:
        hello.update(driver.start(role, bootstrap=bootstrap))
        return None

    check.record(f"hello ({role} role)", say_hello)
    if not hello:
        driver.stop()
        return hello
    check.results[-1].detail = (
        f"{hello['library']} {hello['version']} ({hello['language']}): {', '.join(hello['capabilities'])}; "
        f"{declares(hello)}"
    )
    return hello


def check_client_driver(check: DriverCheck) -> None:
    """Every client operation the driver declares, once, against a reference broker."""
    with _reference_topic(check.log_dir, check.timeout) as (bootstrap, topic, now):
        driver = check.process(CLIENT_ROLE)
        hello = _say_hello(check, driver, CLIENT_ROLE, bootstrap, lambda hello: f"codecs {', '.join(hello['codecs'])}")
        if not hello:
            return
        declared = frozenset(hello["capabilities"])
        sent = list(zip(KEYS, VALUES, strict=True))
        try:
            check.record("send: one outcome per record, in order", lambda: _send(driver, topic, sent, now),
                         needs="send", declared=declared)  # fmt: skip
            check.record("consume: the records sent, bytes intact", lambda: _consume(driver, topic, sent),
                         needs="consume", declared=declared)  # fmt: skip
            check.record("consume: a timestamp type as declared",
                         lambda: _consume_types(driver, topic, len(sent), "timestamp-type" in declared),
                         needs="consume", declared=declared)  # fmt: skip
            check.record(
                "offsets_for_times: an answer or null", lambda: _ask(driver, "offsets_for_times", topic, target=now),
                needs="offsets-for-times", declared=declared,
            )
            for spec in ("earliest", "latest", "max-timestamp"):
                check.record(f"list_offsets {spec}", lambda spec=spec: _ask(driver, "list_offsets", topic, spec=spec),  # type: ignore[misc]
                             needs=spec, declared=declared)  # fmt: skip
            check.record(
                "seek_by_time: an answer and a record, or null",
                lambda: _ask(driver, "seek_by_time", topic, target=now, until=len(sent)),
                needs="seek-by-time", declared=declared,
            )
            for codec in sorted(set(hello["codecs"]) - {"none"}):
                check.record(f"send with codec {codec}", lambda codec=codec: _send(driver, topic, sent[:1], now, codec),  # type: ignore[misc]
                             needs="send", declared=declared)  # fmt: skip
            _protocol_checks(check, driver)
        finally:
            driver.stop()
        _end_of_input_check(check, CLIENT_ROLE, bootstrap)
        _other_role_check(check, CODEC_ROLE)


def check_codec_driver(check: DriverCheck) -> None:
    """A v2 batch built and read back, where the driver declares build and read."""
    driver = check.process(CODEC_ROLE)
    hello = _say_hello(
        check, driver, CODEC_ROLE, None,
        lambda hello: f"build magics {hello.get('build_magics', [])}, read magics {hello.get('read_magics', [])}",
    )  # fmt: skip
    if not hello:
        return
    declared = frozenset(hello["capabilities"])
    built: dict[str, str] = {}
    now = int(time.time() * 1000)
    records = [{"timestamp": now + i, "key": b64(k), "value": b64(v), "headers": [{"key": "h", "value": None}]}
               for i, (k, v) in enumerate(zip(KEYS, VALUES, strict=True))]  # fmt: skip
    try:
        if 2 in hello.get("build_magics", []):

            def build() -> str | None:
                built["data"] = driver.request(
                    "build", magic=2, codec="none", timestamp_type="CreateTime", log_append_time=None,
                    base_offset=0, records=records,
                )["data"]  # fmt: skip
                return None

            check.record("build: a v2 batch", build, needs="build", declared=declared)

        def read() -> str | None:
            batches = driver.request("read", data=built["data"])["batches"]
            got = [r for b in batches for r in b["records"]]
            return _round_trip([(k, v) for k, v in zip(KEYS, VALUES, strict=True)], got, "read")

        if "data" in built and 2 in hello.get("read_magics", []):
            check.record("read: the batch built, bytes intact", read, needs="read", declared=declared)
        _protocol_checks(check, driver)
    finally:
        driver.stop()
    _end_of_input_check(check, CODEC_ROLE, None)
    _other_role_check(check, CLIENT_ROLE)


def _send(driver: DriverProcess, topic: str, sent: list[tuple[bytes, bytes | None]], now: int,
          codec: str = "none") -> str | None:  # fmt: skip
    records = [{"key": b64(k), "value": b64(v), "timestamp": now + i} for i, (k, v) in enumerate(sent)]
    outcomes = driver.request("send", topic=topic, partition=0, codec=codec, records=records)["outcomes"]
    if len(outcomes) != len(records):
        return f"{len(outcomes)} outcomes for {len(records)} records"
    failed = [o["error"] for o in outcomes if "error" in o]
    if failed:
        # Valid records to a broker that takes them: a failure here leaves the checks that read them nothing.
        return f"the reference broker's valid records came back failed: {failed[0]}"
    return None


def _consume(driver: DriverProcess, topic: str, sent: list[tuple[bytes, bytes | None]]) -> str | None:
    records = driver.request("consume", topic=topic, partition=0, offset=0, until=len(sent))["records"]
    if len(records) < len(sent):
        return f"{len(records)} records delivered from offset 0 until {len(sent)}, {len(sent)} were sent"
    return _round_trip(sent, records, "consume")


def _consume_types(driver: DriverProcess, topic: str, count: int, typed: bool) -> str | None:
    """A driver that declares timestamp-type gives every record's type; one that does not gives null (a type it
    gives anyway is not judged: the suite reads it as no type, docs/driver-protocol.md)."""
    records = driver.request("consume", topic=topic, partition=0, offset=0, until=count)["records"]
    missing = [r["offset"] for r in records if r["timestamp_type"] is None]
    if typed and missing:
        return f"timestamp-type is declared, but the records at offsets {missing} came with a null timestamp_type"
    return None


def _ask(driver: DriverProcess, op: str, topic: str, **fields: Any) -> str | None:
    driver.request(op, topic=topic, partition=0, **fields)  # the schema check is the request's own
    return None


def _protocol_checks(check: DriverCheck, driver: DriverProcess) -> None:
    """An unknown operation and a malformed line get bad-request values and the driver keeps going; close gets
    an empty ok and an exit."""

    def unknown() -> str | None:
        answer = driver.send_raw(b'{"id":9000,"op":"no-such-operation"}\n')
        problem = schema_problem("answer", answer)
        if problem is not None:
            return f"the answer breaks the schema ({problem}): {answer}"
        if answer.get("id") != 9000 or answer.get("error", {}).get("type") != "bad-request":
            return f"answered {answer}, not an error of type bad-request with id 9000"
        return None

    def malformed() -> str | None:
        answer = driver.send_raw(b"this is not json\n")
        problem = schema_problem("answer", answer)
        if problem is not None:
            return f"the answer breaks the schema ({problem}): {answer}"
        if answer.get("error", {}).get("type") != "bad-request":
            return f"answered {answer}, not an error of type bad-request"
        return None

    def close() -> str | None:
        answer = driver.request("close")
        if answer != {}:
            return f"answered close with {answer}, not {{}}"
        status = driver.close_input_and_wait(EXIT_WAIT)
        if status is None:
            return f"still running {EXIT_WAIT:g} s after answering close"
        if status != 0:
            return f"exited with status {status} after close, not 0"
        return None

    check.record("an unknown op: bad-request, same id", unknown)
    check.record("a malformed line: bad-request, and it keeps going", malformed)
    check.record("close: {} and exit 0", close)


def _end_of_input_check(check: DriverCheck, role: str, bootstrap: str | None) -> None:
    def end_of_input() -> str | None:
        driver = check.process(role)
        try:
            driver.start(role, bootstrap=bootstrap)
            status = driver.close_input_and_wait(EXIT_WAIT)
            if status is None:
                return f"still running {EXIT_WAIT:g} s after its input ended"
            return None if status == 0 else f"exited with status {status} at the end of its input, not 0"
        finally:
            driver.stop(say_close=False)

    check.record("end of input: exit 0", end_of_input)


def _other_role_check(check: DriverCheck, role: str) -> None:
    """A driver asked for a role it does not play answers unsupported (only for the project's drivers, whose
    roles the table knows)."""
    spec = LIBRARIES.get(check.name)
    if spec is None or spec.build is None or role in spec.roles:
        return

    def other_role() -> str | None:
        driver = check.process(role)
        try:
            driver.start(role, bootstrap="127.0.0.1:9" if role == CLIENT_ROLE else None)
            return f"answered hello for the {role} role, which it does not play"
        except DriverAnswered as answered:
            return None if answered.type == "unsupported" else f"answered {answered.type}, not unsupported"
        finally:
            driver.stop()

    check.record(f"hello for the {role} role it does not play: unsupported", other_role)


def report(check: DriverCheck, out: TextIO) -> None:
    for result in check.results:
        print(result.line(), file=out)
    failed = sum(1 for r in check.results if r.problem is not None)
    ran = sum(1 for r in check.results if r.skipped is None)
    verdict = "PASS" if failed == 0 else "FAIL"
    print(f"check-driver {check.target}: {verdict} ({ran - failed} of {ran} checks passed)", file=out)
