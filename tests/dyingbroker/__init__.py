"""A managed broker whose process dies at start, for the tests of setup failures (tests/test_bad_input.py).

`register()` adds the target `dying-broker` to the target table: a row whose opener starts a real process through
ManagedBroker, as every managed broker's does, and that process writes a line (with a terminal colour code, as a
broker's logger may) and exits with code 3 before it listens. As a pytest plugin (`-p tests.dyingbroker`) it
registers the row in the suites' pytest; a test that runs `kafka-conformance run` in its own process registers it
there too (and removes it after).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conformance.targets.brokers.process import ManagedBroker
from conformance.targets.kinds.implementation import Kind
from conformance.targets.registry import TargetSpec, register_target, table
from conformance.targets.routes.wire_adapter.kafka_wire import WireFactory
from conformance.targets.target import Opened, Opening, ServedBy, Target

NAME = "dying-broker"
SAYS = "dying-broker: cannot open its data directory"
# What the process prints before it exits: the message wrapped in the colour codes a logger puts on a terminal.
_SCRIPT = f"printf '\\033[31m{SAYS}\\033[0m\\n' >&2; exit 3"


@contextlib.contextmanager
def open_dying_broker(target: Target, opening: Opening) -> Iterator[Opened]:
    broker = ManagedBroker(NAME, lambda port: ["/bin/sh", "-c", _SCRIPT], opening.log_dir, ready_timeout=30)
    with broker:  # starts it: the process exits, and ManagedBroker says so
        factory = WireFactory(bootstrap=broker.bootstrap, profile=opening.profile, target=str(target))
        yield factory, [Path(broker.log_path)]


DYING_BROKER = TargetSpec(
    NAME, Kind.BROKER, ServedBy.MANAGED, obtained="the project's tests", opener=open_dying_broker,
    description="a managed broker whose process exits at start (tests/dyingbroker)", in_groups=False,
)  # fmt: skip


def register() -> Callable[[], None]:
    """Add the row (once); what removes it again."""
    if any(spec.name == NAME for spec in table()):
        return lambda: None
    return register_target(DYING_BROKER)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """As a plugin (`-p tests.dyingbroker`): the row is there before the conformance plugin checks --target."""
    register()
