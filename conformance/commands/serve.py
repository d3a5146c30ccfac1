"""`kafka-conformance serve`: the reference model (or a seeded mutant) behind the Kafka protocol on
loopback, N brokers each on its own listener, with the HTTP control plane beside them.

    kafka-conformance serve --target model|mutant:ID --profile P [--brokers N] [--host 127.0.0.1]
                            [--port P] [--control-port Q] [--ready-file PATH] [--log-file PATH]

When it serves, it prints one line on stdout (the brokers' addresses and the control plane's URL) and, with
--ready-file, writes the same facts as JSON ({"bootstrap", "control_url", "pid", "target", "profile",
"brokers"}) to that file atomically (a process that starts it waits for the file). Every request is logged
in one line on stderr (or --log-file). SIGTERM or SIGINT stops the listeners and the control plane and
exits 0 within a second. Exit 2, with one line naming the problem and the fix: bad arguments, or a port
that cannot be listened on (in use, or not ours to bind), as for every usage error of `kafka-conformance`.

--brokers N serves the model, or a mutant, as a cluster of N brokers: a mutant's fault is in its cluster's
class or its implementation's methods, so the same mutant is served with N brokers in place of the 3 it is
built with.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, TextIO

from conformance.control.control_plane import ControlPlane
from conformance.errors import TargetError
from conformance.reference.kafka_server import DEFAULT_HOST, KafkaServer, ServeError, check_host
from conformance.reference.served import ServedCluster
from conformance.targets.brokers.reference_broker import MAX_REFERENCE_BROKERS
from conformance.targets.kinds.implementation import Implementation, ImplementationFactory, Kind
from conformance.targets.libraries.model.model_broker import ModelImplementation
from conformance.targets.registry import TargetSpec, parse_target, resolve_target, spec_of, targets_help
from conformance.targets.target import ServedBy
from models.profiles import DEFAULT_PROFILE

PROG = "kafka-conformance serve"
EXIT_OK, EXIT_USAGE = 0, 2
DEFAULT_BROKERS = 3
MAX_BROKERS = MAX_REFERENCE_BROKERS
_LOG_FORMAT = "%(asctime)s %(levelname)s %(message)s"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target",
        default="model",
        help=f"what to serve (default model): {targets_help(servable)}",
    )
    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE.name,
        help=f"behaviour profile, e.g. kafka-3.9 (default {DEFAULT_PROFILE.name})",
    )
    parser.add_argument(
        "--brokers",
        type=int,
        default=None,
        help=f"number of brokers, each on its own listener (default {DEFAULT_BROKERS})",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help="a loopback address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=0, help="broker i listens on PORT+i (default 0: a free port for each broker)"
    )
    parser.add_argument(
        "--control-port", type=int, default=0, help="the HTTP control plane's port (default 0: a free port)"
    )
    parser.add_argument("--ready-file", help="when serving, write the addresses as JSON to this file (atomically)")
    parser.add_argument("--log-file", help="write the request log here instead of stderr")


def run(args: argparse.Namespace, out: TextIO, *, stop: threading.Event | None = None) -> int:
    """Serve until SIGTERM/SIGINT (or until `stop` is set, for callers outside the main thread)."""
    try:
        served = _served(args)
        host = check_host(args.host)
        _check_ports(args, len(served.broker_ids()))
    except (TargetError, ServeError) as exc:
        print(f"kafka-conformance: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    handler = _log_handler(args.log_file)
    logger = logging.getLogger("conformance.reference")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    stop = stop if stop is not None else threading.Event()
    restore = _on_signals(stop)
    server = KafkaServer(served, host=host, port=args.port)
    control: ControlPlane | None = None
    ready_file = Path(args.ready_file) if args.ready_file else None
    try:
        try:
            server.start()
        except ServeError as exc:
            print(f"kafka-conformance: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        try:
            control = ControlPlane(served, host=host, port=args.control_port).start()
        except OSError as exc:
            print(
                f"kafka-conformance: error: the control plane cannot listen on {host}:{args.control_port} "
                f"({exc.strerror or exc}): pass --control-port with a free port, or --control-port 0",
                file=sys.stderr,
            )
            return EXIT_USAGE
        facts = {
            "bootstrap": server.bootstrap,
            "control_url": control.url,
            "pid": os.getpid(),
            "target": args.target,
            "profile": args.profile,
            "brokers": served.broker_ids(),
        }
        out.write(f"serving {args.target} ({args.profile}) on {server.bootstrap} control {control.url}\n")
        out.flush()
        if ready_file is not None:
            _write_atomically(ready_file, facts)
        while not stop.wait(0.2):
            pass
        return EXIT_OK
    finally:
        if control is not None:
            control.stop()
        server.stop()
        restore()
        logger.removeHandler(handler)
        handler.close()
        if ready_file is not None:
            _remove_if_ours(ready_file)


def servable(spec: TargetSpec) -> bool:
    """What the reference broker serves: a broker that runs in this process (the model and its seeded mutants)."""
    return spec.kind is Kind.BROKER and spec.served_by is ServedBy.IN_PROCESS


def _served(args: argparse.Namespace) -> ServedCluster:
    target = parse_target(args.target)
    if not servable(spec_of(target)):
        why = f" ({target.mutant!r} is a {target.kind.value} mutant)" if target.mutant is not None else ""
        raise TargetError(f"--target {args.target!r}{why}: serve runs {targets_help(servable)}")
    factory: ImplementationFactory = resolve_target(target, args.profile)
    if args.brokers is not None and not 1 <= args.brokers <= MAX_BROKERS:
        raise TargetError(f"--brokers {args.brokers}: give 1..{MAX_BROKERS}")
    try:
        return ServedCluster(WithBrokers(factory, args.brokers or DEFAULT_BROKERS))
    except TypeError as exc:
        raise TargetError(str(exc)) from None


@dataclasses.dataclass(frozen=True)
class WithBrokers:
    """`inner`'s implementation on a cluster of `brokers` brokers: the same cluster class (a mutant's seams
    are its methods), profile and clocks, built afresh before anything is stored (ServedCluster builds again
    for POST /reset)."""

    inner: ImplementationFactory
    brokers: int

    @property
    def name(self) -> str:
        return self.inner.name

    def build(self) -> Implementation:
        impl = self.inner.build()
        if isinstance(impl, ModelImplementation) and len(impl.cluster.brokers) != self.brokers:
            built = impl.cluster
            start_time = min(broker.clock for broker in built.brokers.values())
            impl.cluster = type(built)(
                profile=built.profile,
                broker_ids=tuple(range(self.brokers)),
                start_time=start_time,
                auto_replicate=built.auto_replicate,
            )
        return impl


def _check_ports(args: argparse.Namespace, brokers: int) -> None:
    if args.port != 0 and not 1 <= args.port <= 65536 - brokers:
        highest = 65536 - brokers
        raise ServeError(f"--port {args.port}: brokers listen on PORT..PORT+{brokers - 1}; give 1..{highest} or 0")
    if not 0 <= args.control_port <= 65535:
        raise ServeError(f"--control-port {args.control_port}: give 1..65535, or 0 for a free port")


def _log_handler(path: str | None) -> logging.Handler:
    handler: logging.Handler
    handler = logging.FileHandler(path, encoding="utf-8") if path else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(_LOG_FORMAT))
    return handler


def _on_signals(stop: threading.Event) -> Any:
    """SIGTERM and SIGINT set `stop` (main thread only); returns what puts the old handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {sig: signal.signal(sig, lambda signum, frame: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


def _write_atomically(path: Path, facts: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)


def _remove_if_ours(path: Path) -> None:
    """Remove the ready file on the way out, unless another server has written it since."""
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
