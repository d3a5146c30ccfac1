"""What the brokers' openers share: a single managed broker started for a run and stopped on the way out
(`open_started`), the wire implementation's factory for a started broker (`wire_factory`), the usage check that what
one runs is installed (`check_found`); and the opener of the user's own cluster at `--bootstrap-servers` (`--target
broker`), never started or stopped by the suite, checked reachable (and its control plane answering) before the run
(`open_cluster`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TypedDict, Unpack

from conformance.errors import TargetError
from conformance.targets.brokers.process import ManagedBroker
from conformance.targets.routes.wire_adapter.kafka_wire import WireFactory, check_control, check_reachable
from conformance.targets.target import Opened, Opening, Target


@contextlib.contextmanager
def open_cluster(target: Target, opening: Opening) -> Iterator[Opened]:
    """The user's cluster at `--bootstrap-servers`, checked reachable (and its control plane answering) before the
    run; with a fault hook, leaders move through the user's command (conformance.targets.routes.wire_adapter
    .fault_hook)."""
    if not opening.bootstrap:
        raise TargetError(
            f"target {str(target)!r} needs a bootstrap address: pass --bootstrap-servers HOST:PORT "
            "or set KAFKA_BOOTSTRAP_SERVERS"
        )
    check_reachable(opening.bootstrap, timeout=opening.timeout, security=opening.security)
    if opening.control_url:
        check_control(opening.bootstrap, opening.control_url, timeout=opening.timeout, security=opening.security)
    yield WireFactory(
        bootstrap=opening.bootstrap,
        profile=opening.profile,
        target=str(target),
        timeout=opening.timeout,
        fault_hook=opening.fault_hook,
        control_url=opening.control_url or None,
        security=opening.security,
    ), []


class BrokerHooks(TypedDict, total=False):
    """What a started broker offers the wire implementation besides its address (WireFactory's fields)."""

    failover: str | None  # an in-process cluster's leader moves
    admin: str | None  # the same cluster's topic admin, where CreateTopics is not offered
    control_url: str | None  # its control plane
    marks_by_produce: bool  # its DescribeConfigs shows a change before the broker applies it (WireFactory)


def wire_factory(target: Target, opening: Opening, bootstrap: str, **hooks: Unpack[BrokerHooks]) -> WireFactory:
    """The factory of the wire implementation for a run of `target` at `bootstrap`: the run's profile and timeout,
    and the hooks the broker offers."""
    return WireFactory(
        bootstrap=bootstrap, profile=opening.profile, target=str(target), timeout=opening.timeout, **hooks
    )


def check_found(find: Callable[[], object], missing: type[Exception]) -> None:
    """A managed broker's usage check before anything starts: what it runs is found (`find`), else the one line it
    raised (`missing`) as a TargetError naming the fix (the extra to install)."""
    try:
        find()
    except missing as exc:
        raise TargetError(str(exc)) from None


@contextlib.contextmanager
def open_started(
    start: Callable[[Path], AbstractContextManager[ManagedBroker]], target: Target, opening: Opening
) -> Iterator[Opened]:
    """A single managed broker for one run: started by `start` (given the log folder) and stopped on the way out
    (also on errors); the factory of the wire implementation at its address, and its log."""
    opening.log_dir.mkdir(parents=True, exist_ok=True)
    with start(opening.log_dir) as broker:
        yield wire_factory(target, opening, broker.bootstrap), [Path(broker.log_path)]
