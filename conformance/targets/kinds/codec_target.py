"""`codec:<library>` targets: a record library as an implementation of kind codec
(conformance.targets.kinds.implementation.Kind).

The table (conformance.targets.registry) has a row per library; its parser reads the names. The implementation has
one capability, CODEC, and its library at `.codec`; the broker operations are not there
(the codec suites never call them, and the plugin leaves the broker suites out of a codec run)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from conformance.errors import TargetError
from conformance.judging.capabilities import Capability
from conformance.targets.kinds.codec_library import CodecUnavailable, RecordCodecLibrary
from conformance.targets.kinds.implementation import Implementation, ImplementationFactory, Kind, UnsupportedOperation
from conformance.targets.kinds.library import CODEC_ROLE
from conformance.targets.kinds.seeding import seeded_faults
from conformance.targets.libraries import library_playing
from conformance.targets.routes.driver.driver_builds import driver_command
from conformance.targets.routes.driver.driver_codec import DriverCodec
from conformance.targets.routes.in_process import adapter_class, require_adapter
from conformance.targets.target import Opened, Opening, Target, library_name
from models.profiles import Profile, get_profile


def open_library(
    library: str,
    *,
    version: str | None = None,
    path: str | None = None,
    log_dir: Path = Path("reports/out/logs"),
    timeout: float = 10.0,
) -> RecordCodecLibrary:
    """The adapter of `library` (its driver, where it runs through one), or TargetError naming the choices
    (unknown) or the fix (not installed, not built)."""
    row = library_playing(CODEC_ROLE, library)
    adapter = row.adapter(CODEC_ROLE)
    if adapter is None or row.uses_driver(CODEC_ROLE, version, path):
        return DriverCodec(library, version=version, path=path, log_dir=log_dir, timeout=timeout)
    try:
        built: RecordCodecLibrary = adapter_class(adapter, CodecUnavailable)()
    except CodecUnavailable as exc:
        raise TargetError(str(exc)) from None
    return built


def check_codec(target: Target, opening: Opening) -> None:
    """A usage check before anything starts: a driver-backed codec's driver is built, an adapter in this process
    says whether its library is there (e.g. not installed: the extra to install); a TargetError naming the fix
    otherwise."""
    row = library_playing(CODEC_ROLE, target.library)
    adapter = row.adapter(CODEC_ROLE)
    if adapter is None or row.uses_driver(CODEC_ROLE, target.version, target.path):
        driver_command(target.library, version=target.version, path=target.path)
        return
    require_adapter(adapter, CodecUnavailable)


def _not_a_broker(operation: str) -> Callable[..., NoReturn]:
    """A broker operation of a codec target: it refuses, whatever it is asked, with UnsupportedOperation (an
    UNSUPPORTED verdict), naming the target and `operation`."""

    def refuse(self: CodecImplementation, *args: object, **kwargs: object) -> NoReturn:
        raise UnsupportedOperation(Capability.PRODUCE_V2, f"{self.name} is a codec, not a broker ({operation})")

    refuse.__name__, refuse.__qualname__ = operation, f"CodecImplementation.{operation}"
    return refuse


class CodecImplementation:
    """A codec library seen through the implementation protocol: capability CODEC, the library at `.codec`."""

    kind = Kind.CODEC
    capabilities = frozenset({Capability.CODEC})

    def __init__(self, name: str, profile: Profile, codec: RecordCodecLibrary) -> None:
        self.name = name
        self.profile = profile
        self.codec = codec

    @property
    def implementation_version(self) -> str:
        """The record library's version, as its adapter or driver reports it."""
        return self.codec.version

    def brokers(self) -> tuple[int, ...]:
        return ()

    # The broker operations, each refused (a codec is not a broker): there for the implementation protocol, never
    # called by the codec suites.
    create_topic = _not_a_broker("create_topic")
    alter_config = _not_a_broker("alter_config")
    produce = _not_a_broker("produce")
    fetch = _not_a_broker("fetch")
    list_offsets = _not_a_broker("list_offsets")
    clock = _not_a_broker("clock")
    set_clock = _not_a_broker("set_clock")
    elect_leader = _not_a_broker("elect_leader")
    leader = _not_a_broker("leader")
    retention_tick = _not_a_broker("retention_tick")

    def close(self) -> None:
        self.codec.close()


@dataclass(frozen=True)
class CodecFactory:
    """Picklable recipe for `--target codec:<library>`."""

    library: str
    profile: str = "kafka-4.0"
    version: str | None = None  # codec:<library>==VERSION
    path: str | None = None  # codec:<library>=PATH
    log_dir: str = "reports/out/logs"  # where a driver's stderr goes

    @property
    def name(self) -> str:
        return library_name(Kind.CODEC, self.library)

    def build(self) -> Implementation:
        codec = open_library(self.library, version=self.version, path=self.path, log_dir=Path(self.log_dir))
        return CodecImplementation(self.name, get_profile(self.profile), codec)


@contextlib.contextmanager
def open_codec(target: Target, opening: Opening) -> Iterator[Opened]:
    """A codec library, or a codec mutant seeded into the model's codec, in this process (the library is imported
    when the implementation is built): nothing to start or stop."""
    factory: ImplementationFactory
    if target.seeded is not None:
        factory = seeded_faults().factory(target.seeded, opening.profile)
    else:
        factory = CodecFactory(
            library=target.library, profile=opening.profile, version=target.version, path=target.path,
            log_dir=str(opening.log_dir),
        )  # fmt: skip
    yield factory, []
