"""The target registry: one name picks the implementation under test (`--target`, `KTS_TARGET`).

`model` is the reference model; `mutant:<id>` a seeded fault (conformance.adapters.mutants). Later
issues add managed brokers and `broker` (any bootstrap address). Every factory is picklable.
"""

from __future__ import annotations

from models.profiles import PROFILES

from .adapters.model import ModelFactory
from .implementation import ImplementationFactory


class TargetError(ValueError):
    """A target name or profile that cannot be resolved; the message names the fix."""


def known_targets() -> list[str]:
    names = ["model"]
    try:
        from .adapters.mutants import MUTANTS
    except ImportError:  # the mutants adapter is optional while it is being built
        return names
    return names + [f"mutant:{m}" for m in sorted(MUTANTS)]


def resolve_target(name: str, profile: str) -> ImplementationFactory:
    """The factory for target `name` under `profile`, or TargetError naming the choices."""
    if profile not in PROFILES:
        raise TargetError(f"unknown profile {profile!r}: choose one of {', '.join(PROFILES)} (--profile)")
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
    raise TargetError(f"unknown target {name!r}: choose one of {', '.join(known_targets())} (--target)")
