"""The user's own cluster at `--bootstrap-servers` (`--target broker`): never started or stopped by the suite, checked
reachable (and its control plane answering) before the run."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from conformance.errors import TargetError
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
