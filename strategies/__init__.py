"""Hypothesis strategies for the conformance engine: timestamps, records and batches, topic configs,
producer and broker clocks, leader failover. They import models/ and hypothesis only."""

from .clocks import ClockMove, ClockMoveKind, ProducerClock, broker_clock_offsets, clock_moves, producer_clocks
from .configs import timestamp_bounds, topic_configs
from .failover import LeaderMove, failover_sequences
from .records import Invalidity, batches, invalid_batches, labelled_invalid_batches, record_specs
from .timestamps import bound_probe_values, bound_probes, timestamps, unit_mistakes

__all__ = [
    "ClockMove",
    "ClockMoveKind",
    "Invalidity",
    "LeaderMove",
    "ProducerClock",
    "batches",
    "bound_probe_values",
    "bound_probes",
    "broker_clock_offsets",
    "clock_moves",
    "failover_sequences",
    "invalid_batches",
    "labelled_invalid_batches",
    "producer_clocks",
    "record_specs",
    "timestamp_bounds",
    "timestamps",
    "topic_configs",
    "unit_mistakes",
]
