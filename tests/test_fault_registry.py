"""The registries of seeded faults (conformance/faults/seeded.py): one shape for the mutants, the client
mutants' faulty clients, the differential oracle's model faults and the wire-fault proxy's bugs."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any

import pytest

from conformance.faults import MUTANTS
from conformance.faults.client_faults import CLIENT_FAULTS
from conformance.faults.seeded import FaultRegistry, SeededFault, UnknownFault
from conformance.oracles.record_layer.model_side import MODEL_FAULTS
from conformance.targets.kinds.implementation import Kind
from models.clauses import CLAUSES
from tests.wirefaults import FAULTS

REGISTRIES: dict[str, FaultRegistry[Any]] = {
    "mutant": MUTANTS,
    "client mutant": CLIENT_FAULTS,
    "model fault": MODEL_FAULTS,
    "wire fault": FAULTS,
}
CLAUSE_IDS = {clause.id for clause in CLAUSES}


def _fault(fault_id: str) -> SeededFault[str]:
    return SeededFault(fault_id, Kind.BROKER, ("LO.first-ge-target",), "A fault.", "builder")


def test_a_registry_keeps_faults_in_order_and_refuses_a_taken_id() -> None:
    registry: FaultRegistry[SeededFault[str]] = FaultRegistry("thing")
    second, first = registry.register(_fault("b")), registry.register(_fault("a"))
    assert list(registry) == ["b", "a"] and registry.ids() == ("a", "b") and len(registry) == 2
    assert registry["a"] is first and registry.get("b") is second and registry.get("c") is None
    assert "a" in registry and "c" not in registry
    with pytest.raises(ValueError, match="duplicate thing id 'a'"):
        registry.register(_fault("a"))
    with pytest.raises(FrozenInstanceError):
        first.id = "c"  # type: ignore[misc]


def test_an_unknown_id_is_a_key_error_naming_every_id() -> None:
    registry: FaultRegistry[SeededFault[str]] = FaultRegistry("thing")
    registry.register(_fault("b"))
    registry.register(_fault("a"))
    with pytest.raises(KeyError) as caught:
        registry["nope"]
    assert isinstance(caught.value, UnknownFault)
    assert str(caught.value) == "unknown thing 'nope': one of a, b"


@pytest.mark.parametrize("what", REGISTRIES)
def test_every_registry_holds_seeded_faults_with_known_clauses(what: str) -> None:
    registry = REGISTRIES[what]
    assert registry.what == what and len(registry) > 0
    for fault_id, fault in registry.items():
        assert isinstance(fault, SeededFault) and fault.id == fault_id
        assert fault_id == fault_id.lower() and " " not in fault_id and "_" not in fault_id
        assert isinstance(fault.kind, Kind) and fault.description.endswith(".")
        assert fault.clauses and set(fault.clauses) <= CLAUSE_IDS, f"{what} {fault_id}: {fault.clauses}"
        assert fault.build is not None


def test_each_client_mutant_is_one_declaration_in_two_registries() -> None:
    clients = {m for m, mutant in MUTANTS.items() if mutant.kind is Kind.CLIENT}
    assert clients == set(CLIENT_FAULTS)
    for mutant_id in clients:
        mutant, client = MUTANTS[mutant_id], CLIENT_FAULTS[mutant_id]
        assert (mutant.clauses, mutant.description) == (client.clauses, client.description)
