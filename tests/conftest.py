"""The project's own tests share the Hypothesis profiles registered by conformance.plugin
(`ci` when CI is set, `dev` otherwise, `thorough` on request: --hypothesis-profile thorough), and one fixture: a
reference broker whose clock reads this machine's time, for the drivers' end-to-end tests."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from conformance.reference.control_client import ControlClient
from conformance.targets.managed.reference_broker import ReferenceBroker, start_reference


@pytest.fixture(scope="module")
def reference_at_now(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReferenceBroker]:
    """One reference broker (kafka-4.0) for a test module, its clock set to now: a driver's client stamps records
    with the machine's time, and the broker's validation bounds (VAL-4) are then what they would be on Kafka."""
    with start_reference(tmp_path_factory.mktemp("reference"), profile="kafka-4.0", brokers=1) as broker:
        ControlClient(broker.control_url).set_clock(0, time.time_ns() // 1_000_000)
        yield broker
