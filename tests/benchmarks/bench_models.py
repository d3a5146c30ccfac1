"""Benchmark of the reference model (a script, not a test: it prints figures and never fails).

Figures: codec encode/decode MB/s per codec and magic, leader appends per second for 10-record
batches (validate-and-assign plus the partition log), and ListOffsets timestamp lookups per second
on a 100,000-record log.

    python tests/benchmarks/bench_models.py [--seconds 1.0]
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
from collections.abc import Callable, Iterator

from models.cluster import Cluster
from models.codec import decode_batches, encode_batches
from models.config import TopicConfig
from models.constants import Codec, TimestampType
from models.list_offsets import list_offsets
from models.profiles import get_profile
from models.records import AnyBatch, RecordSpec, build_batches


def _rate(fn: Callable[[], object], seconds: float) -> tuple[int, float]:
    """Call `fn` until `seconds` have passed; return (calls, elapsed)."""
    fn()  # warm-up
    calls = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        fn()
        calls += 1
        now = time.perf_counter()
        if now >= deadline:
            return calls, now - start


def _payload(rng: random.Random, n: int) -> bytes:
    # Half-compressible record values, like JSON-ish payloads.
    words = [b"timestamp", b"offset", b"kafka", b"record", b"value", b"%d" % rng.randrange(10**6)]
    out = bytearray()
    while len(out) < n:
        out += rng.choice(words) + b" "
    return bytes(out[:n])


def bench_codec(seconds: float) -> None:
    rng = random.Random(7)
    print("codec: 100 records of 200-byte values per batch; MB/s of uncompressed record data")
    print(f"  {'magic':>5} {'codec':>7} {'batch bytes':>11} {'encode MB/s':>12} {'decode MB/s':>12}")
    specs = [RecordSpec(1_700_000_000_000 + i, b"key-%d" % i, _payload(rng, 200)) for i in range(100)]
    data_bytes = sum(len(s.value or b"") + len(s.key or b"") for s in specs)
    for magic in (0, 1, 2):
        for codec in Codec:
            if codec is Codec.ZSTD and magic < 2:
                continue
            batches = build_batches(specs, magic=magic, codec=codec)
            encoded = encode_batches(batches)
            n_enc, t_enc = _rate(lambda b=batches: encode_batches(b, cache=False), seconds)
            n_dec, t_dec = _rate(lambda e=encoded: decode_batches(e), seconds)
            enc = n_enc * data_bytes / t_enc / 1e6
            dec = n_dec * data_bytes / t_dec / 1e6
            print(f"  {magic:>5} {codec.name.lower():>7} {len(encoded):>11} {enc:>12.1f} {dec:>12.1f}")


def _appender(cluster: Cluster, batches: Iterator[tuple[AnyBatch, ...]]) -> Callable[[], None]:
    def append_one() -> None:
        cluster.produce("t", 0, next(batches))
        cluster.advance_clock(0, 1)

    return append_one


def bench_appends(seconds: float) -> None:
    print("leader appends: 10-record v2 batches, validate-and-assign + partition log (profile kafka-4.0)")
    for ts_type, codec in (
        (TimestampType.CREATE_TIME, Codec.NONE),
        (TimestampType.LOG_APPEND_TIME, Codec.NONE),
        (TimestampType.CREATE_TIME, Codec.LZ4),
    ):
        cluster = Cluster(profile=get_profile("kafka-4.0"), broker_ids=(0,), start_time=1_700_000_000_000)
        cluster.create_topic("t", TopicConfig(timestamp_type=ts_type, retention_ms=-1))

        # Batches are built beforehand so that only the broker side is timed.
        now0 = cluster.clock(0)
        specs = [RecordSpec(now0 - 10 + i, None, b"v%d" % i) for i in range(10)]
        append_one = _appender(cluster, itertools.cycle([build_batches(specs, magic=2, codec=codec)]))
        n, t = _rate(append_one, seconds)
        print(f"  {ts_type.name.lower():>16} {codec.name.lower():>5}: {n / t:>9.0f} appends/s")


def bench_list_offsets(seconds: float) -> None:
    print("ListOffsets: timestamp lookups on a 100,000-record log (10,000 batches of 10)")
    cluster = Cluster(profile=get_profile("kafka-4.0"), broker_ids=(0,), start_time=1_700_000_000_000)
    cluster.create_topic("t", TopicConfig(retention_ms=-1, segment_bytes=1 << 20, index_interval_bytes=4096))
    base = 1_700_000_000_000
    built_start = time.perf_counter()
    for b in range(10_000):
        specs = [RecordSpec(base + b * 10 + i, None, b"x" * 16) for i in range(10)]
        cluster.produce("t", 0, build_batches(specs, magic=2))
    build_s = time.perf_counter() - built_start
    log = cluster.leader_log("t", 0)
    profile = get_profile("kafka-4.0")
    rng = random.Random(3)
    targets = [base + rng.randrange(100_000) for _ in range(4096)]
    i = [0]

    def lookup() -> None:
        i[0] += 1
        list_offsets(log, targets[i[0] % len(targets)], version=9, profile=profile)

    n, t = _rate(lookup, seconds)
    print(f"  log built in {build_s:.1f} s ({len(log.segments)} segments); {n / t:>9.0f} lookups/s")


def bench_state_machine(seconds: float) -> None:
    """Steps per second of the timestamp-contract state machine against the model (issue 3): each
    step drives the target and the reference model and compares them."""
    from hypothesis import settings
    from hypothesis.stateful import run_state_machine_as_test

    from conformance.targets.libraries.model.model_broker import ModelFactory
    from suites.machine import machine_for

    machine = machine_for(ModelFactory("kafka-4.0"), ModelFactory("kafka-4.0"))
    steps = [0]

    class Counted(machine):  # type: ignore[misc, valid-type]
        def check_invariants(self, *args: object, **kwargs: object) -> None:
            steps[0] += 1
            super().check_invariants(*args, **kwargs)

    examples = max(5, int(20 * seconds))
    start = time.perf_counter()
    run_state_machine_as_test(
        Counted, settings=settings(max_examples=examples, stateful_step_count=30, deadline=None, database=None)
    )
    elapsed = time.perf_counter() - start
    print("state machine: model vs model, profile kafka-4.0 (steps include initialisation)")
    print(f"  {examples} programs, {steps[0]} steps in {elapsed:.1f} s: {steps[0] / elapsed:>7.0f} steps/s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement (default 1.0)")
    args = parser.parse_args()
    bench_codec(args.seconds)
    bench_appends(args.seconds)
    bench_list_offsets(args.seconds)
    bench_state_machine(args.seconds)


if __name__ == "__main__":
    main()
