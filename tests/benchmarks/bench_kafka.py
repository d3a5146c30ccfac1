"""Benchmark: what an Apache Kafka target costs before the first test (issue 20): per supported line, the time to
fetch it from Maven Central (0 once cached), from spawn to its first ApiVersions answer (storage format
included), its resident memory once ready and after a warm-up of requests, and the time it takes to stop.

    python tests/benchmarks/bench_kafka.py [--lines 4.4,4.0,3.9] [--rounds 3]

Each round starts a fresh broker (a fresh log directory). The best round is the figure to compare: other load on
the machine only ever adds time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.targets.brokers.kafka import (
    KAFKA_LINES,
    cluster_nodes,
    kafka_cluster,
    release,
    resident_megabytes,
    resolve_runtime,
)
from conformance.targets.brokers.process import probe_api_versions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default=",".join(KAFKA_LINES), help="comma-separated lines (default: all)")
    parser.add_argument("--rounds", type=int, default=3, help="fresh starts per line (default 3)")
    args = parser.parse_args()
    print(f"{'kafka':<8} {'fetch s':>8} {'ready s':>8} {'RSS MB':>7} {'RSS warm':>9} {'stop s':>7}")
    for line in args.lines.split(","):
        found = release(line.strip())
        began = time.monotonic()
        resolve_runtime(found.version)
        fetch = time.monotonic() - began
        ready, rss, warm, stop = [], [], [], []
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory(prefix="bench-kafka-") as tmp:
                # One node (and its ZooKeeper, for a line before 3.9); the stop is the cluster's, ZooKeeper's too.
                cluster = kafka_cluster(found, Path(tmp) / "logs", Path(tmp) / "work", cluster_nodes(1))
                (broker,) = cluster.__enter__()
                try:
                    ready.append(broker.startup_seconds or 0.0)
                    rss.append(resident_megabytes(broker.pid) or 0.0)
                    for _ in range(200):  # a little traffic: ApiVersions on fresh connections
                        probe_api_versions("127.0.0.1", broker.port)
                    warm.append(resident_megabytes(broker.pid) or 0.0)
                finally:
                    began = time.monotonic()
                    cluster.__exit__(None, None, None)
                    stop.append(time.monotonic() - began)
        print(f"{found.version:<8} {fetch:>8.1f} {min(ready):>8.2f} {statistics.median(rss):>7.0f} "
              f"{statistics.median(warm):>9.0f} {min(stop):>7.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
