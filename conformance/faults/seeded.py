"""One shape for every registry of seeded faults: a `SeededFault` record per fault, kept in a `FaultRegistry`.

A seeded fault is one small, realistic deviation planted on purpose to prove that a check can fail. The project
plants them in four places, each with its own registry of this shape:
- `MUTANTS` (conformance/faults/mutant.py): the model, a codec or the reference client with one step changed,
  run by the suites (`Mutant`, which adds the profiles it can be seeded into and whether only a reader sees it);
- `CLIENT_FAULTS` (conformance/faults/client_faults.py): the faulty reference client of each client mutant;
- `MODEL_FAULTS` (conformance/oracles/record_layer/model_side.py): the model with one seam changed, for the differential
  oracle against Apache Kafka's record layer;
- `FAULTS` (tests/wirefaults/faults.py): one bug put into a real broker's answers by the wire-fault proxy.

A record says what a fault is (its kebab-case `id`, the `kind` of implementation it is a fault of and so which
suites see it, the clauses it breaks, one sentence) and `build`, what makes the faulty thing; what `build` takes
and gives is the registry's own.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from conformance.targets.kinds.implementation import Kind

__all__ = ["FaultRegistry", "SeededFault", "UnknownFault"]

B = TypeVar("B")


@dataclass(frozen=True)
class SeededFault(Generic[B]):
    """One seeded fault. `kind`: the implementation it is a fault of (a broker's, a codec's, a client's), so the
    suites that can see it; `clauses`: the clause IDs (models/clauses.py) whose checks must catch it;
    `description`: one sentence, the deviation and the rule it breaks; `build`: what makes the faulty thing."""

    id: str
    kind: Kind
    clauses: tuple[str, ...]
    description: str
    build: B


F = TypeVar("F", bound=SeededFault[Any])


class UnknownFault(KeyError):
    """No fault has this id; the message names the ids there are."""

    def __str__(self) -> str:
        return str(self.args[0])  # the message itself, not KeyError's quoted repr of it


class FaultRegistry(Mapping[str, F]):
    """Seeded faults by id, in the order they were registered. `what` names them in errors ("mutant",
    "model fault"): `registry[id]` of an unknown id raises UnknownFault naming every id."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._faults: dict[str, F] = {}

    def register(self, fault: F) -> F:
        """Add `fault` (ValueError if its id is taken) and return it."""
        if fault.id in self._faults:
            raise ValueError(f"duplicate {self.what} id {fault.id!r}")
        self._faults[fault.id] = fault
        return fault

    def ids(self) -> tuple[str, ...]:
        """Every id, sorted."""
        return tuple(sorted(self._faults))

    def __getitem__(self, fault_id: str) -> F:
        try:
            return self._faults[fault_id]
        except KeyError:
            raise UnknownFault(f"unknown {self.what} {fault_id!r}: one of {', '.join(self.ids())}") from None

    def __contains__(self, fault_id: object) -> bool:
        return fault_id in self._faults

    def __iter__(self) -> Iterator[str]:
        return iter(self._faults)

    def __len__(self) -> int:
        return len(self._faults)

    def __repr__(self) -> str:
        return f"FaultRegistry({self.what!r}: {', '.join(self._faults)})"
