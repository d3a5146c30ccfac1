"""A target as a typed value: what `--target` / `KTS_TARGET` names, read once.

The syntax of a name (`read_name`: no table, no mutant registry, so stored names of an earlier campaign still
read) and its parts (`TargetName`); the checked value (`Target`: kind, implementation, where it is served, the
seeded mutant, a version or a local path), built only by `conformance.targets.registry.parse_target`, which
checks a name against the table; and what an opener gets and gives (`Opening`, `Opener`).

    model | tansu | codec:aiokafka | client:java ...   an implementation of the table
    NAME==VERSION | NAME=PATH                         ... at a version, or from a local checkout
    kafka | kafka:4.0                                 Apache Kafka from Maven Central, the newest or a given line
    mutant:<id>                                       a seeded mutant (conformance.faults), run as its kind runs
    reference:mutant:<id>                             a broker mutant served by the reference broker
    client:<library>@reference:mutant:<id>            a client against the reference broker serving a broker mutant
    client:<library>@kafka[:<line>]                   a client against Apache Kafka (the newest, or a given line)
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from conformance.errors import TargetError
from conformance.targets.kinds.implementation import ImplementationFactory, Kind
from conformance.wire.security import PLAINTEXT, SecuritySettings

MODEL = "model"
REFERENCE = "reference"  # the reference broker (`kafka-conformance serve`), and the target serving the model
MUTANT_PREFIX = "mutant:"
REFERENCE_MUTANT = f"{REFERENCE}:{MUTANT_PREFIX}"  # + a mutant id: that mutant served over the wire
SERVED_AT = "@"  # client:<library>@reference[:mutant:<id>] or @kafka[:<line>]: what the client runs against
KAFKA = "kafka"  # Apache Kafka's row, which a client may also run against
VERSION_SEP = "=="
PATH_SEP = "="
# Implementations whose versions are written NAME:VERSION as well (`kafka:4.0`, the form Apache Kafka's users
# know), and shown that way; NAME==VERSION reads the same.
COLON_VERSIONED = frozenset({"kafka"})
# A library of a codec or a client is named after its kind: codec:<library>, client:<library>.
CODEC_PREFIX = f"{Kind.CODEC.value}:"
CLIENT_PREFIX = f"{Kind.CLIENT.value}:"


class ServedBy(Enum):
    """Where a target runs, which decides the addresses it takes (`--bootstrap-servers`, `--control-url`)."""

    IN_PROCESS = "in process"  # nothing to start, nothing to reach
    REFERENCE = "the reference broker"  # `kafka-conformance serve`, started by the suite, with its control plane
    MANAGED = "a managed process"  # a broker the suite starts on loopback and always stops
    CLUSTER = "your cluster"  # at --bootstrap-servers, never managed


@dataclass(frozen=True)
class TargetName:
    """A target name's parts by syntax alone. `implementation` is None for `mutant:<id>` (the reference model of
    the mutant's kind, which only the mutant registry knows); `served_mutant`: the mutant is served by the
    reference broker (reference:mutant:<id>, client:<library>@reference:mutant:<id>), not seeded in process."""

    implementation: str | None
    mutant: str | None = None
    served_mutant: bool = False
    version: str | None = None
    path: str | None = None
    against: str | None = None  # the Apache Kafka a client runs against ("kafka", "kafka:4.0"); None: the reference

    @property
    def base(self) -> str:
        """The implementation with its version or path, as written: `tansu==0.5`, `client:java`."""
        name = self.implementation or MODEL
        if self.version is not None:
            return f"{name}{':' if name in COLON_VERSIONED else VERSION_SEP}{self.version}"
        if self.path is not None:
            return f"{name}{PATH_SEP}{self.path}"
        return name

    @property
    def mutant_served_to(self) -> str | None:
        """The implementation a served mutant is served to (`client:<library>`), None when the mutant is itself
        what runs (mutant:<id>, reference:mutant:<id>) or there is none."""
        if self.mutant is None or not self.served_mutant or self.implementation == REFERENCE:
            return None
        return self.base

    def __str__(self) -> str:
        if self.against is not None:
            return f"{self.base}{SERVED_AT}{self.against}"
        if self.mutant is None:
            return self.base
        if not self.served_mutant:
            return f"{MUTANT_PREFIX}{self.mutant}"
        if self.implementation == REFERENCE:
            return f"{REFERENCE_MUTANT}{self.mutant}"
        return f"{self.base}{SERVED_AT}{REFERENCE_MUTANT}{self.mutant}"


def read_name(name: str) -> TargetName:
    """The parts of `name` by syntax alone (a TargetError for a malformed one); whether they name a row of the
    table, a known mutant, an accepted version, is `parse_target`'s to say."""
    if name.startswith(REFERENCE_MUTANT):
        return TargetName(REFERENCE, _mutant_id(name, name.removeprefix(REFERENCE_MUTANT)), served_mutant=True)
    if name.startswith(MUTANT_PREFIX):
        return TargetName(None, _mutant_id(name, name.removeprefix(MUTANT_PREFIX)))
    base, at, server = name.partition(SERVED_AT)
    mutant: str | None = None
    if at:
        if server.startswith(REFERENCE_MUTANT):
            mutant = _mutant_id(name, server.removeprefix(REFERENCE_MUTANT))
        elif server == KAFKA or server.startswith(f"{KAFKA}:"):
            parts = read_name(base)
            return TargetName(parts.implementation, version=parts.version, path=parts.path, against=server)
        elif server != REFERENCE:
            what = base.partition(VERSION_SEP)[0].partition(PATH_SEP)[0]
            raise TargetError(
                f"target {name!r}: a client runs against the reference broker or Apache Kafka: write {what}, "
                f"{what}{SERVED_AT}{REFERENCE_MUTANT}<id> (a broker mutant from `kafka-conformance mutants --list`) "
                f"or {what}{SERVED_AT}{KAFKA}:<line>"
            )
    prefix, colon, rest = base.partition(":")
    if colon and prefix in COLON_VERSIONED and VERSION_SEP not in base:
        return TargetName(prefix, mutant, mutant is not None, version=_given(name, rest, "a version"))
    implementation, versioned, version = base.partition(VERSION_SEP)
    if versioned:
        return TargetName(implementation, mutant, mutant is not None, version=_given(name, version, "a version"))
    implementation, located, path = base.partition(PATH_SEP)
    if located:
        return TargetName(implementation, mutant, mutant is not None, path=_given(name, path, "a local path"))
    return TargetName(implementation, mutant, mutant is not None)


def _mutant_id(name: str, mutant: str) -> str:
    if not mutant:
        raise TargetError(f"target {name!r} names no mutant: `kafka-conformance mutants --list` lists the ids")
    return mutant


def _given(name: str, value: str, what: str) -> str:
    if not value:
        raise TargetError(f"target {name!r}: give {what} after the = (NAME==VERSION, NAME=PATH)")
    return value


def mutant_name(mutant: str) -> str:
    """`mutant:<id>`: the mutant run as its kind runs (in process, or a client mutant against the reference)."""
    return str(TargetName(None, mutant))


def served_mutant_name(mutant: str, *, to: str = REFERENCE) -> str:
    """`reference:mutant:<id>`, or with `to` a client target, `client:<library>@reference:mutant:<id>`."""
    return str(TargetName(to, mutant, served_mutant=True))


def library_name(kind: Kind, library: str) -> str:
    """`codec:<library>` or `client:<library>`: a library target is named after its kind."""
    return f"{kind.value}:{library}"


def short_name(implementation: str) -> str:
    """A name under its kind's heading: `codec:aiokafka` is `aiokafka` (a broker keeps its name)."""
    for prefix in (CODEC_PREFIX, CLIENT_PREFIX):
        if implementation.startswith(prefix):
            return implementation.removeprefix(prefix)
    return implementation


@dataclass(frozen=True)
class Target:
    """A checked target (`conformance.targets.registry.parse_target`). `implementation` names a row of the
    table (for `mutant:<id>`, the reference implementation of the mutant's kind: model, codec:model or
    client:model); `mutant` is seeded into it, or with `served_mutant` served by the reference broker it runs
    against; `version` / `path` are what `NAME==VERSION` / `NAME=PATH` asked for. `str(target)` is its
    canonical name."""

    kind: Kind
    implementation: str
    served_by: ServedBy
    mutant: str | None = None
    served_mutant: bool = False
    version: str | None = None
    path: str | None = None
    against: str | None = None  # a client's Apache Kafka ("kafka", "kafka:4.0"); None: the reference broker

    @property
    def parts(self) -> TargetName:
        return TargetName(self.implementation, self.mutant, self.served_mutant, self.version, self.path, self.against)

    @property
    def library(self) -> str:
        """The library of a codec or client target (`codec:aiokafka` -> `aiokafka`), else the implementation."""
        return short_name(self.implementation)

    @property
    def served(self) -> str:
        """What the reference broker serves for this target: "model", or "mutant:<id>" for a served mutant."""
        return mutant_name(self.mutant) if self.mutant is not None and self.served_mutant else MODEL

    @property
    def seeded(self) -> str | None:
        """The mutant seeded into the implementation itself (not served to it), or None."""
        return self.mutant if not self.served_mutant else None

    def __str__(self) -> str:
        return str(self.parts)


@dataclass(frozen=True)
class Opening:
    """What a run gives the opener of a target: the profile, and the addresses, logs and hooks it may use."""

    profile: str
    bootstrap: str | None = None
    control_url: str | None = None
    log_dir: Path = Path("reports/out/logs")
    timeout: float = 10.0
    fault_hook: str | None = None
    brokers: int | None = None  # how many brokers to start (`kafka-conformance up --brokers`); None: its own number
    security: SecuritySettings = PLAINTEXT  # how the user's cluster is reached (TLS, SASL); PLAINTEXT otherwise


Opened = tuple[ImplementationFactory, list[Path]]
# Opens a target for one run: the factory and the log files of what it started, stopped on the way out.
Opener = Callable[[Target, Opening], AbstractContextManager[Opened]]
# A usage check of a row before anything starts (a library that is not installed, an address it cannot use).
Check = Callable[[Target, Opening], None]
# Obtains what a row runs before anything starts: a download or a build into the cache, once (a cached one costs a
# look); a TargetError naming the cause and the fix when it cannot be had (a release the registry does not serve, a
# build that fails). Separate from opening, so that `kafka-conformance run` obtains in its own process before pytest
# starts, and a run never starts tests against a target it could not get.
Obtain = Callable[[Target, Opening], object]  # what it returns is not used
