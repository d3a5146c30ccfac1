"""The timestamp-contract state machine (suites/machine.py) against the target, side by side with the
reference model: producers with skewed clocks, broker clock moves, leader failover, retention, fetches at
old and new versions, ListOffsets with every target, configuration changes."""

from __future__ import annotations

import pytest
from hypothesis import seed
from hypothesis.stateful import run_state_machine_as_test

from conformance.targets.kinds.implementation import ImplementationFactory

from .helpers import suite_settings
from .machine import DERANDOMIZED_SEED, machine_for

MACHINE_CLAUSES = (
    "VAL.range-before-after",
    "VAL.range-symmetric",
    "VAL.lat-topic-skips-range-check",
    "VAL.lat-flag-rejected-on-lat-topic",
    "VAL.lat-response-time",
    "VAL.createtime-response-minus-one",
    "VAL.rejection-response-fields",
    "VAL.record-errors-batch-index",
    "VAL.whole-batch-rejected",
    "VAL.header-max-recomputed",
    "CMP.topic-codec-recompresses",
    "CMP.lat-every-record-reads-now",
    "CNV.stored-magic",
    "CNV.fetch-version-caps-magic",
    "LO.first-ge-target",
    "LO.not-found-minus-one",
    "LO.record-own-timestamp",
    "LO.epoch-of-found-batch",
    "LO.latest-is-high-watermark",
    "LO.earliest-is-log-start",
    "LO.max-timestamp-first-record",
    "LO.max-timestamp-empty",
    "IDX.retention-by-largest-timestamp",
    "REP.follower-no-restamp",
    "CON.v2-createtime-base-plus-delta",
    "CON.v2-lat-max-timestamp",
    "CON.v1-uncompressed-own",
    "CON.v1-wrapper-createtime-inner",
    "CON.v1-wrapper-lat-wrapper-value",
)


@pytest.mark.clause(*MACHINE_CLAUSES)
def test_timestamp_contract_machine(
    target_factory: ImplementationFactory, reference_factory: ImplementationFactory
) -> None:
    """Random programs of the machine's rules; after every step the target must show what the model shows."""
    machine = machine_for(target_factory, reference_factory)
    budget = suite_settings(20, stateful_steps=25)
    if budget.derandomize:
        machine = seed(DERANDOMIZED_SEED)(machine)  # the same programs whatever the module's code looks like
    run_state_machine_as_test(machine, settings=budget)
