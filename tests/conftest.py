"""The project's own tests share the Hypothesis profiles registered by conformance.plugin
(`ci` when CI is set, `dev` otherwise, `thorough` on request: --hypothesis-profile thorough), and one fixture: a
reference broker whose clock reads this machine's time, for the drivers' end-to-end tests.

The tests that stop a run with Ctrl-C need SIGINT delivered. A shell starts a background job (`tox &`, `setsid bash
-c '...' &`) with SIGINT ignored, Python keeps an ignored SIGINT ignored, and every process it starts inherits
that; so here SIGINT gets Python's own handler back (a process started from this one then starts with SIGINT at its
default, as from a terminal)."""

from __future__ import annotations

import base64
import signal
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from conformance.control.control_client import ControlClient
from conformance.targets.brokers.reference_broker import ReferenceBroker, start_reference
from conformance.wire.client import WireClient

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="module")
def reference_at_now(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReferenceBroker]:
    """One reference broker (kafka-4.0) for a test module, its clock set to now: a driver's client stamps records
    with the machine's time, and the broker's validation bounds (VAL-4) are then what they would be on Kafka."""
    with start_reference(tmp_path_factory.mktemp("reference"), profile="kafka-4.0", brokers=1) as broker:
        ControlClient(broker.control_url).set_clock(0, time.time_ns() // 1_000_000)
        yield broker


def three_records_topic(bootstrap: str, prefix: str) -> tuple[str, int, list[dict[str, Any]]]:
    """A new topic on `bootstrap` and the three records the drivers' client tests send to it, as the protocol's
    `send` takes them: two stamped a second and half a second ago, one the producer stamps (no timestamp)."""
    topic = f"{prefix}-{uuid.uuid4().hex[:6]}"
    with WireClient(bootstrap, timeout=10) as wire:
        assert wire.create_topic(topic).error_code == 0
    now = time.time_ns() // 1_000_000

    def b64(raw: bytes) -> str:
        return base64.b64encode(raw).decode()

    sent = [{"key": b64(b"a"), "value": b64(b"1"), "timestamp": now - 1000},
            {"key": b64(b"b"), "value": None, "timestamp": None},
            {"key": b64(b"c"), "value": b64(b"3"), "timestamp": now - 500}]  # fmt: skip
    return topic, now, sent
