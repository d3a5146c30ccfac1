"""Benchmark: the suite's overhead per operation against a real broker (issue 4).

In one run, against one managed Tansu on loopback:
- raw: a produce round trip with the protocol client alone (a pre-encoded v2 batch, acks=-1);
- suite: the same produce as a suite test does it: build the batch, encode it, bracket the request
  with clock readings, produce through the kafka-wire adapter, apply it to the reference model and
  compare the answers clause by clause (`Twin.produce` + `check_produce`).
The ratio suite/raw is the suite's overhead per operation (goal: within 1.5x).

    python tests/benchmarks/bench_wire.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.targets.libraries.model.model_broker import ModelFactory
from conformance.targets.registry import open_target
from models.codec import encode_batches
from models.config import TopicConfig
from models.records import RecordSpec, build_v2
from suites.helpers import Twin, check_produce

PRODUCE_VERSION = 9


def _rate(operation, seconds: float) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    count = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        operation(count)
        count += 1
    return count / (time.perf_counter() - started), count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement (default 3)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of each (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as logs, open_target("tansu", "kafka-4.0", log_dir=Path(logs)) as (factory, _):
        impl = factory.build()
        twin = Twin(impl, ModelFactory(profile="kafka-4.0"))
        config = TopicConfig()
        twin.create_topic("bench-suite", config)
        impl.create_topic("bench-raw", config)
        raw_topic = impl._name("bench-raw")
        now = twin.leader_clock("bench-suite")
        payload = encode_batches([build_v2([RecordSpec(now, b"k", b"v" * 100)])])

        def raw(i: int) -> None:
            impl.client.produce(raw_topic, 0, payload, version=PRODUCE_VERSION)

        def suite(i: int) -> None:
            batch = build_v2([RecordSpec(now + i, b"k%d" % i, b"v" * 100)])
            observed, expected = twin.produce("bench-suite", [batch], produce_version=PRODUCE_VERSION)
            check_produce(observed, expected, config=config, error_clause="VAL.createtime-response-minus-one")

        raw(0)
        suite(0)
        raws, suites = [], []
        for _ in range(args.rounds):
            raws.append(_rate(raw, args.seconds)[0])
            suites.append(_rate(suite, args.seconds)[0])
        impl.close()
    raw_ops, suite_ops = statistics.median(raws), statistics.median(suites)
    print(f"raw produce round trip (protocol client only): {raw_ops:,.0f} ops/s ({1e3 / raw_ops:.3f} ms/op)")
    print(f"suite produce (build, encode, bracket, broker, model, compare): {suite_ops:,.0f} ops/s "
          f"({1e3 / suite_ops:.3f} ms/op)")
    print(f"overhead per operation: {raw_ops / suite_ops:.2f}x (goal: within 1.5x); "
          f"medians of {args.rounds} rounds of {args.seconds:.0f} s each, Tansu on loopback")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
