"""Proved over the wire: single realistic timestamp bugs put into a real broker's answers
by a loopback proxy (tests/wirefaults) must each FAIL a clause and fail the run, with that broker's
expectations file in force; the same run through a faithful proxy must have no FAIL and exit 0, and give
the same clause verdicts three times.

The broker is the managed Tansu (conformance/targets/brokers/tansu.py), a fresh empty one per run, and the suite
reaches it as a cluster it did not start (`--target broker --bootstrap-servers <proxy>`): it creates its
topics with CreateTopics under a `kts-<run>-` prefix and deletes them with DeleteTopics at the end, all
through the proxy. Each run is `pytest suites` in a subprocess, restricted with `--clauses` to the clauses
whose tests can see the fault. Slow (each test is one or three suite runs): `tox -e wire-faults`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.judging.verdicts import Verdict
from conformance.targets.brokers.process import ManagedBroker
from conformance.targets.brokers.tansu import start_tansu
from conformance.wire.client import WireClient
from models.codec import decode_batches, encode_batches
from models.constants import MAGIC_V1, MAGIC_V2, Codec, TimestampType
from models.records import RecordSpec, build_batches
from tests.wirefaults import FAULTS, KafkaProxy, WireFault
from tests.wirefaults.batches import rewrite_v2_headers
from tests.wirefaults.faults import LogAppendTimeBitOnCreateTime, MaxTimestampOfLastRecord

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
EXPECTATIONS = ROOT / "suites" / "expectations" / "tansu.toml"
PROFILE = "kafka-4.0"
RUN_TIMEOUT = 900  # seconds for one suite run; a whole unrestricted run against Tansu takes about 12 s
# The unfaulted run covers every fault's selection, so each fault's FAIL is measured against the same tests.
ALL_FAULT_CLAUSES = tuple(sorted({clause for fault in FAULTS.values() for clause in fault.clauses}))
TOPIC_PREFIX = "kts-"


@dataclass(frozen=True)
class SuiteRun:
    """One `pytest suites` run through the proxy: exit code, clause verdicts, seconds, and its output."""

    exit_code: int
    verdicts: dict[str, Verdict]
    seconds: float
    output: str

    def clauses(self, verdict: Verdict) -> list[str]:
        return sorted(clause for clause, seen in self.verdicts.items() if seen is verdict)

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for verdict in self.verdicts.values():
            counts[verdict.value] = counts.get(verdict.value, 0) + 1
        shown = ", ".join(f"{n} {word}" for word, n in sorted(counts.items()))
        return f"exit {self.exit_code} in {self.seconds:.1f} s; {len(self.verdicts)} clauses ({shown})"


def suite_command(bootstrap: str, clauses: tuple[str, ...], verdicts_json: Path, log_dir: Path) -> list[str]:
    """What `kafka-conformance run --target broker` runs (conformance/cli.py), with the verdicts file."""
    return [
        sys.executable, "-m", "pytest", "suites", "-p", "conformance.plugin", "-p", "no:cacheprovider",
        "-p", "no:schemathesis",
        "--target", "broker", "--bootstrap-servers", bootstrap, "--profile", PROFILE,
        "--expectations", str(EXPECTATIONS), "--verdicts-json", str(verdicts_json),
        "--hypothesis-profile", "broker", "--clauses", ",".join(clauses), "--log-dir", str(log_dir),
        "-q", "-rfE",
    ]  # fmt: skip


def run_suites(proxy: KafkaProxy, clauses: tuple[str, ...], out: Path) -> SuiteRun:
    out.mkdir(parents=True, exist_ok=True)
    verdicts_json = out / "verdicts.json"
    # The run's target is the command line alone: no KTS_* or KAFKA_BOOTSTRAP_SERVERS of the caller's.
    env = {k: v for k, v in os.environ.items() if not k.startswith("KTS_") and k != "KAFKA_BOOTSTRAP_SERVERS"}
    started = time.monotonic()
    done = subprocess.run(
        suite_command(proxy.bootstrap, clauses, verdicts_json, out / "logs"),
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False,
    )  # fmt: skip
    seconds = time.monotonic() - started
    output = done.stdout + done.stderr
    assert verdicts_json.is_file(), f"the suite run wrote no verdicts.json (exit {done.returncode}):\n{output[-4000:]}"
    data = json.loads(verdicts_json.read_text(encoding="utf-8"))
    verdicts = {clause: Verdict.parse(word) for clause, word in data["clauses"].items()}
    (out / "output.txt").write_text(output, encoding="utf-8")
    return SuiteRun(done.returncode, verdicts, seconds, output)


@dataclass(frozen=True)
class Proxied:
    """A fresh managed Tansu and the proxy in front of it."""

    broker: ManagedBroker
    proxy: KafkaProxy

    def leftover_topics(self) -> list[str]:
        """The suite's topics still on the broker (asked of the broker itself, not through the proxy)."""
        with WireClient(self.broker.bootstrap, timeout=10.0) as client:
            return sorted(name for name in client.metadata().topics if name.startswith(TOPIC_PREFIX))


StartProxied = Callable[[WireFault | None], Proxied]


@pytest.fixture
def proxied_tansu(tmp_path: Path) -> Iterator[StartProxied]:
    """Starts a fresh Tansu with a proxy in front (with `fault`, or faithful for None); both are stopped
    when the test ends, however it ends (the proxy first: it closes its listener and every connection)."""
    with ExitStack() as stack:

        def start(fault: WireFault | None) -> Proxied:
            broker = stack.enter_context(start_tansu(tmp_path / "broker-logs"))
            return Proxied(broker, stack.enter_context(KafkaProxy(broker.bootstrap, fault)))

        yield start


def _check_proxy(proxy: KafkaProxy, run: SuiteRun) -> None:
    assert not proxy.errors, f"the proxy failed, so this run says nothing about the broker: {proxy.errors}"
    assert proxy.connections > 0, f"the suite never connected through the proxy: {run.summary()}"


def test_unfaulted_run_has_no_fail(proxied_tansu: StartProxied, tmp_path: Path) -> None:
    """Through a faithful proxy, Tansu's known failures are all covered by its expectations: exit 0, no FAIL;
    and the suite cleaned up the topics it created on a cluster it did not start."""
    target = proxied_tansu(None)
    proxy = target.proxy
    run = run_suites(proxy, ALL_FAULT_CLAUSES, tmp_path / "unfaulted")
    _check_proxy(proxy, run)
    assert proxy.fields == 0
    failing = {v: run.clauses(v) for v in (Verdict.FAIL, Verdict.UNEXPECTED_PASS, Verdict.BLOCKED) if run.clauses(v)}
    print(f"unfaulted: {run.summary()}")
    assert run.exit_code == 0 and not failing, f"{run.summary()}: {failing}\n{run.output[-4000:]}"
    assert target.leftover_topics() == []


def test_unfaulted_verdicts_are_stable(proxied_tansu: StartProxied, tmp_path: Path) -> None:
    """Three unfaulted runs (a fresh broker and proxy each) give the same verdict for every clause."""
    runs = []
    for attempt in range(3):
        proxy = proxied_tansu(None).proxy
        runs.append(run_suites(proxy, ALL_FAULT_CLAUSES, tmp_path / f"unfaulted-{attempt}"))
        _check_proxy(proxy, runs[-1])
    print("unfaulted x3: " + " | ".join(run.summary() for run in runs))
    first = runs[0].verdicts
    for attempt, run in enumerate(runs[1:], start=2):
        differ = {c: (first.get(c), run.verdicts.get(c)) for c in first.keys() | run.verdicts.keys()
                  if first.get(c) is not run.verdicts.get(c)}  # fmt: skip
        assert not differ, f"run {attempt} differs from run 1 (clause: (run 1, run {attempt})): {differ}"


@pytest.mark.parametrize("fault", FAULTS.values(), ids=list(FAULTS))
def test_fault_fails_a_clause(fault: WireFault, proxied_tansu: StartProxied, tmp_path: Path) -> None:
    """With one fault in Tansu's answers and Tansu's expectations in force, the run exits 1 and at least one
    clause is FAIL. A fault reported only as KNOWN is hidden behind an expectation that covers more than
    what Tansu really does (expectations per observable, not per clause)."""
    proxy = proxied_tansu(fault).proxy
    run = run_suites(proxy, fault.clauses, tmp_path / fault.id)
    _check_proxy(proxy, run)
    assert proxy.fields > 0, (
        f"{fault.id} never fired ({run.summary()}): the selected tests ({', '.join(fault.clauses)}) send no "
        "answer it rewrites, so the run cannot show it"
    )
    failed = run.clauses(Verdict.FAIL)
    print(f"{fault.id}: {run.summary()}; FAIL: {', '.join(failed) or 'none'}; KNOWN: "
          f"{', '.join(run.clauses(Verdict.KNOWN)) or 'none'}; changed {proxy.fields} fields")  # fmt: skip
    fired = ", ".join(f"{n} {api}" for api, n in sorted(proxy.rewritten.items()))
    assert run.exit_code == 1 and failed, (
        f"{fault.id} ({fault.description}) was not caught: {run.summary()}; it changed "
        f"{proxy.fields} fields in {fired} answers, and the run reported KNOWN: {', '.join(run.clauses(Verdict.KNOWN))}"
    )


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP], ids=lambda codec: codec.name)
def test_fetched_batch_faults_keep_a_valid_crc(codec: Codec) -> None:
    """The fetch faults change only what they say, and the batch still passes the suite's CRC-32C check
    (FMT-9): a FAIL they cause is the fault's field, never a corrupt batch. A legacy entry and a partial
    last entry (a fetch cut at its byte limit) are left as they were."""
    stamps = [1_700_000_000_000, 1_700_000_000_500, 1_700_000_000_200]  # the max is not the last record
    v2 = encode_batches(build_batches([RecordSpec(t, b"k", b"v") for t in stamps], magic=MAGIC_V2, codec=codec))
    legacy = encode_batches(build_batches([RecordSpec(stamps[0], b"k", b"v")], magic=MAGIC_V1, base_offset=3))
    records = legacy + v2 + v2[:20]

    last, count = rewrite_v2_headers(records, MaxTimestampOfLastRecord().edit)
    (_legacy, batch) = decode_batches(last, verify_crc=True, partial_tail=True)
    assert count == 1 and batch.max_timestamp == stamps[-1] and batch.timestamp_type is TimestampType.CREATE_TIME
    assert [r.timestamp for r in batch.records()] == stamps
    assert last[: len(legacy)] == legacy and last.endswith(v2[:20])

    lat, count = rewrite_v2_headers(records, LogAppendTimeBitOnCreateTime().edit)
    (_legacy, batch) = decode_batches(lat, verify_crc=True, partial_tail=True)
    assert count == 1 and batch.timestamp_type is TimestampType.LOG_APPEND_TIME and batch.max_timestamp == max(stamps)
    assert [r.timestamp for r in batch.records()] == [max(stamps)] * len(stamps)  # FMT-12
    assert lat[: len(legacy)] == legacy and lat.endswith(v2[:20])
