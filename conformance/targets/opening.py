"""The openers of the targets that start nothing of the suite's own: the model and the codec libraries in this
process (with their seeded mutants), and the user's cluster at `--bootstrap-servers`. The managed brokers' openers
are in their modules (conformance.targets.managed), the clients' in conformance.targets.clients.client_target;
the table (conformance.targets.registry) names them all."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from conformance.errors import TargetError
from conformance.faults import MutantFactory
from conformance.targets.codecs.codec_target import CodecFactory
from conformance.targets.implementation import ImplementationFactory
from conformance.targets.kafka_wire import WireFactory, check_control, check_reachable
from conformance.targets.model import ModelFactory
from conformance.targets.target import Opened, Opening, Target


@contextlib.contextmanager
def open_model(target: Target, opening: Opening) -> Iterator[Opened]:
    """The model, or a broker mutant seeded into it, in this process: nothing to start or stop."""
    factory: ImplementationFactory
    if target.seeded is not None:
        factory = MutantFactory(mutant=target.seeded, profile=opening.profile)
    else:
        factory = ModelFactory(profile=opening.profile)
    yield factory, []


@contextlib.contextmanager
def open_codec(target: Target, opening: Opening) -> Iterator[Opened]:
    """A codec library, or a codec mutant seeded into the model's codec, in this process (the library is imported
    when the implementation is built): nothing to start or stop."""
    factory: ImplementationFactory
    if target.seeded is not None:
        factory = MutantFactory(mutant=target.seeded, profile=opening.profile)
    else:
        factory = CodecFactory(
            library=target.library, profile=opening.profile, version=target.version, path=target.path,
            log_dir=str(opening.log_dir),
        )  # fmt: skip
    yield factory, []


@contextlib.contextmanager
def open_cluster(target: Target, opening: Opening) -> Iterator[Opened]:
    """The user's cluster at `--bootstrap-servers`, checked reachable (and its control plane answering) before the
    run; with a fault hook, leaders move through the user's command (conformance.targets.fault_hook)."""
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
