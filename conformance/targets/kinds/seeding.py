"""Where seeded faults plug into the targets: conformance.faults registers its mutants here when it is imported, and
the registry, the model's and the codecs' openers and the client targets look them up here, so that targets/ never
imports faults/ (the faults sit above the targets: they are built from the model's adapters).

Whoever names a mutant imports conformance.faults first (the command line, the pytest plugin, the Spark tasks);
until then no mutant is known, and `mutant:<id>` is an unknown mutant.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from conformance.targets.kinds.client_library import ClientLibrary
from conformance.targets.kinds.implementation import ImplementationFactory, Kind


class KindOf(Protocol):
    """A registered mutant, as the targets see it: of which kind it is."""

    @property
    def kind(self) -> Kind: ...


@dataclass(frozen=True)
class SeededFaults:
    """What conformance.faults registers: its mutants by id, the factory of one seeded into the reference
    implementation of its kind (a picklable recipe, mutant and profile), and the reference client with a client
    mutant's fault seeded (called as a client adapter: bootstrap, timeout=)."""

    mutants: Mapping[str, KindOf]
    factory: Callable[[str, str], ImplementationFactory]
    client: Callable[[str], Callable[..., ClientLibrary]]


_registered: list[SeededFaults] = []


def register_seeded_faults(faults: SeededFaults) -> None:
    """Plug the seeded faults in (conformance.faults does, on import); the last registration wins."""
    _registered[:] = [faults]


def mutants() -> Mapping[str, KindOf]:
    """The registered mutants by id (none before conformance.faults is imported)."""
    return _registered[0].mutants if _registered else {}


def seeded_faults() -> SeededFaults:
    """The registered faults, or a LookupError saying that conformance.faults was not imported (a bug of the
    caller, which named a mutant without importing them)."""
    if not _registered:
        raise LookupError("no seeded faults are registered: import conformance.faults before naming a mutant")
    return _registered[0]
