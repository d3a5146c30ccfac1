"""The campaign's task table: one task per (target, suite, profile, seed), each a picklable value that a
Spark task turns into rows (`conformance.campaign.worker`)."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from conformance.errors import TargetError
from conformance.faults import MUTANTS
from conformance.targets.registry import check_target, fixed_profile, parse_target
from conformance.targets.target import ServedBy, read_name
from models.profiles import PROFILES

# The suites a campaign may name (`--machines`): a module of suites/ without its test_ prefix, or all.
ALL = "all"


class CampaignError(ValueError):
    """A campaign that cannot be planned as asked; the message names the problem and the fix."""


@dataclass(frozen=True)
class CampaignTask:
    """One Hypothesis run: the suites of `machine` against `target` under `profile`, with `seed`, for at most
    `budget_s` seconds (then the task is reported as timed out, not lost)."""

    target: str
    machine: str
    profile: str
    seed: int
    budget_s: float
    hypothesis_profile: str = "dev"  # the suite's Hypothesis budget (suites/conftest.py profiles)

    @property
    def task_id(self) -> str:
        """Stable across runs of the same table (what --resume keys on)."""
        key = f"{self.target}|{self.machine}|{self.profile}|{self.seed}|{self.budget_s:g}"
        if self.hypothesis_profile != "dev":
            key += f"|{self.hypothesis_profile}"
        slug = "".join(c if c.isalnum() else "-" for c in f"{self.target}-{self.machine}-{self.profile}-{self.seed}")
        return f"{slug}-{hashlib.sha1(key.encode()).hexdigest()[:8]}"

    def as_dict(self) -> dict[str, object]:
        return {"task_id": self.task_id, **asdict(self)}


def suite_paths(machine: str, suites: Path) -> list[str]:
    """The pytest paths of `machine` (`all`, or a module name such as `list_offsets` / `test_list_offsets`)."""
    if machine == ALL:
        return [str(suites)]
    name = machine if machine.startswith("test_") else f"test_{machine}"
    path = suites / f"{name}.py"
    if not path.is_file():
        known = sorted(p.stem.removeprefix("test_") for p in suites.glob("test_*.py"))
        raise CampaignError(f"unknown suite {machine!r} (--machines): choose all or some of {', '.join(known)}")
    return [str(path)]


def task_table(
    targets: Sequence[str],
    machines: Sequence[str],
    profiles: Sequence[str],
    seeds: int,
    budget_s: float,
    *,
    suites: Path = Path("suites"),
    first_seed: int = 1,
    hypothesis_profile: str = "dev",
) -> list[CampaignTask]:
    """Every combination, in a stable order; bad names are CampaignErrors before anything starts."""
    if seeds < 1:
        raise CampaignError(f"--seeds {seeds}: a campaign needs at least one seed")
    if budget_s <= 0:
        raise CampaignError(f"--budget {budget_s}: give a positive number of seconds per task, e.g. --budget 60")
    for profile in profiles:
        if profile not in PROFILES:
            raise CampaignError(f"unknown profile {profile!r} (--profiles): choose from {', '.join(PROFILES)}")
    for target in targets:
        try:
            parsed = parse_target(target)
            if parsed.served_by is ServedBy.CLUSTER:
                raise CampaignError(f"a campaign starts its own targets: {target!r} needs `kafka-conformance run`")
            check_target(parsed, profile_for(target, profiles[0] if profiles else "kafka-4.0"))
        except TargetError as exc:
            raise CampaignError(str(exc)) from None
    for machine in machines:
        suite_paths(machine, suites)
    tasks = [
        CampaignTask(target, machine, profile_for(target, profile), seed, budget_s, hypothesis_profile)
        for target, machine, profile, seed in itertools.product(
            targets, machines, profiles, range(first_seed, first_seed + seeds)
        )
    ]
    return list(dict.fromkeys(tasks))


def profile_for(target: str, profile: str) -> str:
    """The profile a target runs under: a mutant runs under the chosen profile when its fault can be
    seeded there and all its declared clauses apply, else under its own profile (the first main profile
    where they do, derived from the clauses: `Mutant.profile`), as `kafka-conformance mutants` does; so
    does a mutant served over the wire (`reference:mutant:<id>`). A client served a mutant runs under the chosen
    profile: the client is under test. A target that behaves as one profile (a Kafka line, `fixed_profile`) runs
    under that one, so its tasks of every chosen profile are one. Mutants are read by syntax alone: the target was
    checked when the campaign was planned."""
    parts = read_name(target)
    if parts.mutant is None:
        with contextlib.suppress(TargetError):
            fixed = fixed_profile(target)
            if fixed is not None:
                return fixed
    if parts.mutant is None or parts.mutant_served_to is not None:
        return profile
    mutant = MUTANTS.get(parts.mutant)
    if mutant is not None and not mutant.runs_under(profile):
        return mutant.profile
    return profile
