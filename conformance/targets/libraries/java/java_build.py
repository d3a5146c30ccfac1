"""Building the Java driver (java/kafkaclients/, `Build` of conformance.targets.routes.driver): Apache Kafka's client
library (org.apache.kafka:kafka-clients) at any release Maven Central serves, or a jar of the user's own, behind the
driver protocol.

Two folders under CACHE/java, each built once under a file lock and marked `.complete`:

- the libraries, `deps-<key>/lib/`: `mvn dependency:copy-dependencies` of a generated pom naming kafka-clients at
  the version with its runtime dependencies (the compression codecs, slf4j-api), jackson-databind (the driver's
  JSON) and slf4j-simple (Kafka's log lines to the driver's stderr, at WARN). Keyed by the pom's text. For a jar of
  the user's (`=PATH`) the pom names the pinned release and leaves kafka-clients itself out: the user's jar stands
  in its place, with the pinned release's dependencies (they change rarely and stay compatible across releases);
- the driver, `kafkaclients-<key>/classes/`: javac of the driver's sources against those libraries, keyed by the
  sources, the libraries' key, the user's jar (path, size, modification time: a rebuilt jar recompiles, a few
  seconds) and the JDK (javac's resolved path).

PATH is a kafka-clients jar, or an Apache Kafka source checkout whose `clients/build/libs/kafka-clients-*.jar`
exists (`./gradlew :clients:jar` there makes it). The driver then reports the path as its version, as the protocol
asks of a local checkout. Maven runs with the user's own settings (~/.m2/settings.xml: a mirror, a proxy).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

from conformance.jvm.locate import JvmUnavailable
from conformance.jvm.locate import java_tool as locate_java_tool
from conformance.progress import step
from conformance.targets.kinds.library import Library
from conformance.targets.routes.driver import CACHE, SOURCES, DriverUnavailable, VersionNotServed
from conformance.targets.routes.driver.driver_builds import BuildLock, cache_key, sources_digest

JAVA_FIX = "install a JDK 17 or newer (apt-get install openjdk-17-jdk-headless), or point JAVA_HOME at one"
MAVEN_FIX = "install Maven 3.8 or newer (apt-get install maven): it fetches kafka-clients from Maven Central"
GROUP, ARTIFACT = "org.apache.kafka", "kafka-clients"
# The driver's own libraries: JSON, and an slf4j binding for Kafka's log lines. slf4j-api is named too, so that a
# kafka-clients 3.x (slf4j-api 1.7) logs through the 2.x binding (the 2.x API serves 1.7 callers).
EXTRAS = (
    ("com.fasterxml.jackson.core", "jackson-databind", "2.21.7"),
    ("org.slf4j", "slf4j-api", "2.0.17"),
    ("org.slf4j", "slf4j-simple", "2.0.17"),
)
MAIN_CLASS = "kts.kafkaclients.KafkaClientsDriver"
JVM_OPTIONS = ("-Xmx512m", "-XX:+UseSerialGC", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
               "-Dorg.slf4j.simpleLogger.logFile=System.err")  # fmt: skip
PRODUCER_CLASS = "org/apache/kafka/clients/producer/KafkaProducer.class"
CHECKOUT_JARS = Path("clients") / "build" / "libs"
_NOT_SERVED = re.compile(r"Could not find artifact|could not be resolved|Failure to find|was not found in")
_UNREACHABLE = re.compile(r"Could not transfer|Connection refused|Unknown host|timed out|Network is unreachable")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_JAVAC_ERROR = re.compile(r"\.java:\d+: error: .*")


def build_java_driver(spec: Library, *, version: str | None, path: str | None, timeout: float) -> list[str]:
    """The command that runs the Java driver against kafka-clients at `version` (None: spec.pinned) or the user's
    jar at `path` (a jar or a Kafka checkout); built once (see the module doc)."""
    java, javac = java_tool("java"), java_tool("javac")
    deadline = time.monotonic() + timeout
    jar = user_jar(path) if path is not None else None
    wanted = spec.pinned if jar is not None else (version or spec.pinned)
    if not wanted:
        raise DriverUnavailable(f"no version of {GROUP}:{ARTIFACT} to fetch: give one, --target client:{spec.name}==V")
    lib = _libraries(wanted, own_jar=jar is not None, deadline=deadline)
    source = SOURCES / spec.source
    key = build_key(source, lib.parent.name, _jar_identity(jar), os.path.realpath(javac))
    root = CACHE / "java" / f"{source.name}-{key}"
    classpath = os.pathsep.join([str(root / "classes"), *([str(jar)] if jar is not None else []), str(lib / "*")])
    with BuildLock(root):
        if not (root / ".complete").is_file():
            with step("building the java driver with javac...", "built the java driver"):
                _compile(javac, source, root, classpath, deadline=deadline)
    said = [f"-Dkts.library.path={path}"] if path is not None else []
    return [java, *JVM_OPTIONS, *said, "-cp", classpath, MAIN_CLASS]


def java_tool(name: str) -> str:
    """`name` (java, javac) as the JVM bridge finds it (conformance.jvm.locate: JAVA_HOME where it is set,
    else PATH); DriverUnavailable naming the fix."""
    try:
        return str(locate_java_tool(name))
    except JvmUnavailable as exc:
        if os.environ.get("JAVA_HOME"):
            raise DriverUnavailable(str(exc)) from None
        raise DriverUnavailable(
            f"the java driver is built and run with a JDK and `{name}` is not on PATH: {JAVA_FIX}"
        ) from None


def user_jar(path: str) -> Path:
    """The kafka-clients jar that `path` names: the jar itself, or a Kafka checkout's clients/build/libs one."""
    given = Path(path).expanduser().resolve()
    if given.is_dir():
        built = sorted(
            (j for j in (given / CHECKOUT_JARS).glob(f"{ARTIFACT}-*.jar")
             if not j.name.endswith(("-test.jar", "-sources.jar", "-javadoc.jar"))),
            key=lambda j: j.stat().st_mtime_ns,
        )  # fmt: skip
        if built:
            return built[-1]
        if (given / "clients").is_dir():
            raise DriverUnavailable(
                f"{path} is an Apache Kafka checkout with no {CHECKOUT_JARS}/{ARTIFACT}-*.jar: run `./gradlew "
                ":clients:jar` there first"
            )
        raise DriverUnavailable(
            f"{path} is neither a {ARTIFACT} jar nor an Apache Kafka checkout (it has no clients/ folder): =PATH is a "
            f"{ARTIFACT}-*.jar or a Kafka source checkout"
        )
    if not given.is_file():
        raise DriverUnavailable(
            f"{path} does not exist: =PATH is a {ARTIFACT}-*.jar or an Apache Kafka source checkout"
        )
    try:
        with zipfile.ZipFile(given) as archive:
            has_client = PRODUCER_CLASS in archive.namelist()
    except (zipfile.BadZipFile, OSError):
        has_client = False
    if not has_client:
        raise DriverUnavailable(
            f"{path} is not a {ARTIFACT} jar (it has no {PRODUCER_CLASS}): give a {ARTIFACT}-*.jar or an Apache "
            "Kafka source checkout"
        )
    return given


def _jar_identity(jar: Path | None) -> str:
    if jar is None:
        return ""
    stat = jar.stat()
    return f"{jar}:{stat.st_size}:{stat.st_mtime_ns}"


def pom(version: str) -> str:
    """The pom whose runtime dependencies are the driver's libraries: kafka-clients `version` and EXTRAS."""
    deps = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>"
        for g, a, v in ((GROUP, ARTIFACT, version), *EXTRAS)
    )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n  <modelVersion>4.0.0</modelVersion>\n'
        "  <groupId>kafka-conformance</groupId><artifactId>kts-java-driver</artifactId><version>1</version>\n"
        f"  <dependencies>\n{deps}\n  </dependencies>\n</project>\n"
    )


def maven_command(mvn: str, pom_file: Path, output: Path, *, own_jar: bool) -> list[str]:
    command = [mvn, "-q", "-B", "-f", str(pom_file), "dependency:copy-dependencies", f"-DoutputDirectory={output}",
               "-DincludeScope=runtime"]  # fmt: skip
    if own_jar:  # the user's jar stands in for the release's
        command.append(f"-DexcludeArtifactIds={ARTIFACT}")
    return command


def _libraries(version: str, *, own_jar: bool, deadline: float) -> Path:
    """The folder of jars the driver runs with (see the module doc), fetched with Maven on first use."""
    text = pom(version)
    folder = CACHE / "java" / f"deps-{cache_key(text, 'own-jar' if own_jar else 'release')}"
    lib = folder / "lib"
    with BuildLock(folder) as lock:
        if (folder / ".complete").is_file():
            return lib
        mvn = shutil.which("mvn")
        if mvn is None:
            raise DriverUnavailable(
                f"the java driver fetches {GROUP}:{ARTIFACT} with Maven and `mvn` is not on PATH: {MAVEN_FIX}"
            )
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        (folder / "pom.xml").write_text(text, encoding="utf-8")
        staging = Path(tempfile.mkdtemp(prefix="lib-", dir=folder))
        log = folder / "mvn.log"
        fetched = f"{GROUP}:{ARTIFACT}:{version}"
        with step(f"fetching {fetched} from Maven Central...", f"fetched {fetched}"):
            output = _run(maven_command(mvn, folder / "pom.xml", staging, own_jar=own_jar), log=log,
                          deadline=deadline, what=f"Maven's fetch of {fetched}")  # fmt: skip
            if output is not None or not any(staging.glob("*.jar")):
                shutil.rmtree(staging, ignore_errors=True)
                if not_served(output or "", version):
                    lock.discard()  # nothing to keep: Maven Central does not have that version
                    raise VersionNotServed(explain_maven(output or "", version, log))
                raise DriverUnavailable(explain_maven(output or "", version, log))
        staging.rename(lib)
        (folder / ".complete").write_text(f"{GROUP}:{ARTIFACT}:{version}\n", encoding="utf-8")
    return lib


def not_served(output: str, version: str) -> bool:
    """Whether Maven's output says Maven Central does not have kafka-clients `version`."""
    output = _ANSI.sub("", output)
    return bool(_NOT_SERVED.search(output) and re.search(rf"{ARTIFACT}:(jar|pom):{re.escape(version)}\b", output))


def explain_maven(output: str, version: str, log: Path) -> str:
    """One line for a failed `mvn dependency:copy-dependencies`: a version Maven Central does not serve (its folder
    and log are removed), a registry it cannot reach, or Maven's first error (without the colour codes Maven puts
    around it even in batch mode, with the log's path)."""
    output = _ANSI.sub("", output)
    if not_served(output, version):
        return (
            f"{GROUP}:{ARTIFACT}:{version} is not served by Maven Central: give a released version, e.g. "
            "client:java==3.9.1 or codec:java==4.1.1"
        )
    if _UNREACHABLE.search(output):
        return (f"Maven could not reach Maven Central for {GROUP}:{ARTIFACT}:{version}: is it reachable (a proxy or "
                f"mirror in ~/.m2/settings.xml)? Maven's log: {log}")  # fmt: skip
    errors = [line.replace("[ERROR] ", "").strip() for line in output.splitlines() if "ERROR" in line]
    first = errors[0][:300] if errors else "it fetched no jar"
    return f"Maven could not fetch {GROUP}:{ARTIFACT}:{version} ({first}): see {log}"


def _compile(javac: str, source: Path, root: Path, classpath: str, *, deadline: float) -> None:
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    staging = Path(tempfile.mkdtemp(prefix="classes-", dir=root))
    log = root / "javac.log"
    files = sorted(str(f) for f in source.glob("*.java"))
    command = [javac, "-encoding", "UTF-8", "--release", "11", "-nowarn", "-d", str(staging), "-cp", classpath,
               *files]  # fmt: skip
    output = _run(command, log=log, deadline=deadline, what="javac of the java driver")
    if output is not None:
        shutil.rmtree(staging, ignore_errors=True)
        found = _JAVAC_ERROR.search(output)
        first = found.group(0) if found else (output.strip().splitlines() or ["(no output)"])[0]
        raise DriverUnavailable(f"javac of the java driver failed: {first[:300]} (full log: {log})")
    staging.rename(root / "classes")
    (root / ".complete").write_text(classpath + "\n", encoding="utf-8")


def _run(command: list[str], *, log: Path, deadline: float, what: str) -> str | None:
    """Run `command` within what is left of the build's time, its output to `log`: None when it succeeded, its
    output when it failed; DriverUnavailable when it ran out of time."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise DriverUnavailable(f"{what} did not start: the build's time ran out (see {log.parent})")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=left, check=False,
                              stdin=subprocess.DEVNULL)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise DriverUnavailable(
            f"{what} did not finish within {left:.0f} s: is Maven Central reachable (a proxy or mirror in "
            f"~/.m2/settings.xml)? see {log}"
        ) from None
    output = done.stdout + done.stderr
    with log.open("a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(command)}\n{output}\n(exit {done.returncode})\n")
    return None if done.returncode == 0 else output


def build_key(source: Path, *parts: str) -> str:
    """The driver's build folder key: its sources, then `parts` (the libraries' key, the user's jar, the JDK)."""
    return cache_key(sources_digest(source), *parts)
