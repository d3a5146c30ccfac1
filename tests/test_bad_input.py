"""Bad input, as a new user gives it: each command line below ends in one line naming the problem and the fix,
with exit 2 for a usage or environment error (pytest's own usage error is 4), never a traceback and never a wait
for a timeout. The commands run in process through `conformance.cli.main`; `pytest suites` runs as a subprocess.
Helpers listen on 127.0.0.1 only (port 0): a plain HTTP server, a socket that accepts and never answers, a port
that is taken, and the reference broker in process (a Kafka broker that answers at once)."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.cli import build_parser, main
from conformance.commands import serve
from conformance.judging.expectations import load_expectations
from conformance.judging.run_state import RunState
from conformance.plugin.collection import check_expectation_tests
from conformance.plugin.launcher import SuitesRun
from conformance.plugin.state import SETTINGS, STATE
from conformance.reference.kafka_server import KafkaServer
from conformance.reference.served import ServedCluster
from conformance.targets.libraries.model.model_broker import ModelFactory
from models.config import TopicConfig
from tests import dyingbroker

REPO = Path(__file__).resolve().parents[1]
LIST = "`kafka-conformance mutants --list`"
NOT_A_TEST = "suites/test_list_offsets.py::test_no_such_test"
A_TEST = "suites/test_list_offsets.py::test_timestamp_lookup"


class _WebPage(http.server.BaseHTTPRequestHandler):
    """A web server that is neither a Kafka broker nor a control plane: a page at /, 404 elsewhere."""

    timeout = 5  # a Kafka frame never ends a request line: give up on it

    def do_GET(self) -> None:
        found = self.path == "/"
        body = b"<html><body>hello</body></html>" if found else b"not found"
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "text/html" if found else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def _web_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _WebPage)
    server.block_on_close = False
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def _silent_listener() -> Iterator[socket.socket]:
    """Accepts connections (the backlog) and never answers: a hung broker."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        yield silent


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port  # nothing listens on it once closed


@contextlib.contextmanager
def _reference_broker() -> Iterator[str]:
    served = ServedCluster(ModelFactory(brokers=1))
    served.impl.create_topic("orders", TopicConfig())
    with KafkaServer(served) as server:
        yield server.bootstrap


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """What the command lines' {placeholders} stand for."""
    tmp = tmp_path_factory.mktemp("bad-input")
    expectations = tmp / "no-such-test.toml"
    expectations.write_text(
        '[[expected]]\nclause = "LO.first-ge-target"\nobservable = "list-offsets.offset"\nreason = "a typo"\n'
        f'link = "none"\ntest = "{NOT_A_TEST}"\n',
        encoding="utf-8",
    )
    jks = tmp / "client-jks.properties"
    jks.write_text(
        f"security.protocol=SSL\nssl.truststore.type=JKS\nssl.truststore.location={expectations}\n", encoding="utf-8"
    )
    with _web_server() as web, _silent_listener() as silent, _silent_listener() as taken, _reference_broker() as kafka:
        yield {
            "jks_config": str(jks),
            "web": web,
            "web_url": f"http://{web}",
            "silent": f"127.0.0.1:{silent.getsockname()[1]}",
            "closed_url": f"http://127.0.0.1:{_closed_port()}",
            "taken_port": str(taken.getsockname()[1]),
            "kafka": kafka,
            "out": str(tmp / "out"),
            "no_such_test": str(expectations),
        }


# (id, command line, exit code, a piece of the one line printed)
CASES = [
    # An unknown mutant points at the command that lists them, everywhere a target is named.
    ("run-unknown-mutant", "run --target mutant:nope", 2, LIST),
    ("run-unknown-served-mutant", "run --target reference:mutant:nope", 2, LIST),
    ("run-unknown-target", "run --target nope", 2, "unknown target 'nope' (--target): choose one of model,"),
    ("mutants-only-unknown", "mutants --only nope", 2, LIST),
    ("serve-unknown-mutant", "serve --target mutant:nope", 2, LIST),
    ("campaign-unknown-mutant", "campaign --targets mutant:nope --out {out}", 2, LIST),
    ("audit-unknown-mutant", "audit --target mutant:nope", 2, LIST),
    # A bootstrap address where something else answers: named at once, not after the wire timeout.
    (
        "run-bootstrap-is-http",
        "run --target broker --bootstrap-servers {web}",
        2,
        "{web} is not a Kafka broker (it answered HTTP: 'HTTP/1.0 200 OK'): pass the broker's address with "
        "--bootstrap-servers HOST:PORT",
    ),
    ("audit-bootstrap-is-http", "audit --target broker --bootstrap-servers {web} --topic t", 2, "not a Kafka broker"),
    # A broker that accepts and never answers: the wire timeout, and the flag that sets it.
    (
        "run-bootstrap-silent",
        "run --target broker --bootstrap-servers {silent} --wire-timeout 0.2",
        2,
        "is it overloaded or hung? raise --wire-timeout (env KTS_WIRE_TIMEOUT)",
    ),
    # TLS and SASL settings that cannot be used, named before anything connects (tests/test_tls_sasl.py has the
    # rows that need a broker with TLS and SASL: a wrong password, an untrusted CA, the TLS port as PLAINTEXT).
    (
        "run-unknown-security-protocol",
        "run --target broker --bootstrap-servers {kafka} --security-protocol TLS",
        2,
        "--security-protocol 'TLS': unknown security protocol: choose one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL",
    ),
    (
        "run-sasl-mechanism-without-credentials",
        "run --target broker --bootstrap-servers {kafka} --security-protocol SASL_SSL --sasl-mechanism SCRAM-SHA-512",
        2,
        "SASL mechanism SCRAM-SHA-512 needs a username: pass --sasl-username and set env KTS_SASL_PASSWORD",
    ),
    (
        "run-sasl-without-sasl-protocol",
        "run --target broker --bootstrap-servers {kafka} --sasl-mechanism PLAIN",
        2,
        "--sasl-mechanism is set but the security protocol is PLAINTEXT: set --security-protocol SASL_SSL",
    ),
    (
        "run-ca-file-missing",
        "run --target broker --bootstrap-servers {kafka} --security-protocol SSL --ssl-ca-file /no/such/ca.pem",
        2,
        "--ssl-ca-file /no/such/ca.pem: no such file: give the path of a PEM file",
    ),
    (
        "run-client-config-jks",
        "run --target broker --bootstrap-servers {kafka} --client-config {jks_config}",
        2,
        "is JKS: the suite reads PEM stores only; convert it to PEM: keytool -exportcert -rfc",
    ),
    ("run-client-config-missing", "run --target broker --bootstrap-servers {kafka} --client-config /no/such.properties",
     2, "--client-config /no/such.properties: cannot read it (No such file or directory)"),
    (
        "run-security-for-a-managed-target",
        "run --target tansu --security-protocol SSL",
        2,
        "--security-protocol SSL is for --target broker; target 'tansu' is started by the suite on a PLAINTEXT",
    ),
    ("audit-sasl-without-sasl-protocol", "audit --target broker --bootstrap-servers {kafka} --sasl-username u", 2,
     "--sasl-username is set but the security protocol is PLAINTEXT"),
    ("run-out-not-writable", "run --target model --out /proc/nope/out", 2, "cannot create the output directory"),
    ("run-hypothesis-profile", "run --target model --hypothesis-profile turbo", 2, "invalid choice: 'turbo'"),
    (
        "campaign-bad-master",
        "campaign --targets model --master bogus://x --out {out}",
        2,
        "'bogus://x' is not a master URL Spark accepts: use local[N] (N cores of this machine) or spark://HOST:PORT",
    ),
    ("campaign-out-not-writable", "campaign --targets model --out /proc/nope/out", 2, "pass --out DIR you can write"),
    ("audit-bad-master", "audit --target model --master local[0]", 2, "is not a master URL Spark accepts"),
    ("differential-bad-master", "differential --master bogus://x --out {out}", 2, "is not a master URL Spark accepts"),
    (
        "broker-differential-no-clock",
        "broker-differential --target tansu --out {out}",
        2,
        "--target tansu: the broker differential sets the broker's clock, so it runs against kafka[:<line>], "
        "reference or reference:mutant:<id>",
    ),
    ("broker-differential-no-ops", "broker-differential --target reference --ops 0 --out {out}", 2,
     "--ops 0: give a positive number"),
    ("broker-differential-no-replay", "broker-differential --target reference --replay /nope.json --out {out}", 2,
     "--replay /nope.json: no such file (reproducers are in OUT/reproducers/)"),
    # The user's topic is checked before Spark starts.
    (
        "audit-no-such-topic",
        "audit --target broker --bootstrap-servers {kafka} --topic no-such-topic --out {out}",
        2,
        "--topic 'no-such-topic': no such topic on {kafka} (Metadata answered UNKNOWN_TOPIC_OR_PARTITION): pass "
        "an existing topic, or leave out --topic",
    ),
    (
        "audit-no-such-partition",
        "audit --target broker --bootstrap-servers {kafka} --topic orders --partition 5 --out {out}",
        2,
        "--partition 5: topic 'orders' has partitions 0..0",
    ),
    # check-control: what answers is not a control plane, nothing answers, a URL that is not one.
    (
        "check-control-web-server",
        "check-control {web_url}",
        2,
        "{web_url} is not a control plane (no /capabilities: GET /capabilities answered 404",
    ),
    ("check-control-unreachable", "check-control {closed_url} --timeout 1", 2, "cannot reach a control plane"),
    ("check-control-bad-url", "check-control 127.0.0.1:8080", 2, "pass http://HOST:PORT"),
    ("check-control-bad-number", "check-control {web_url} --max-examples 0", 2, "must be a positive number"),
    # serve: a port in use is a usage error like every other.
    ("serve-port-in-use", "serve --port {taken_port}", 2, "--port 0"),
    ("serve-control-port-in-use", "serve --control-port {taken_port}", 2, "--control-port 0"),
    ("serve-brokers-out-of-range", "serve --brokers 0", 2, "--brokers 0: give 1..64"),
    # up lists only what it starts (not the model, a codec or a client it would refuse next).
    (
        "up-unknown-target",
        "up kafak:4.0",
        2,
        "unknown target 'kafak:4.0': up starts tansu, kafka, noida, rdkafka-mock, kfake, reference or "
        "reference:mutant:<id>",
    ),
    # A local path that is not there says so, whatever the target would look for in it.
    (
        "run-path-does-not-exist",
        "run --target client:kafkajs=/no/such/path",
        2,
        "target 'client:kafkajs=/no/such/path': /no/such/path does not exist: give the path of a local checkout or "
        "build of kafkajs (=PATH)",
    ),
    ("run-driver-path-does-not-exist", "run --target client:driver=/no/such/driver", 2,
     "/no/such/driver does not exist: give the path of your driver's executable (=PATH)"),
    ("run-kafka-path-does-not-exist", "run --target kafka=/no/such/kafka", 2,
     "kafka=/no/such/kafka: /no/such/kafka does not exist: give an unpacked Kafka distribution or a built checkout"),
]


@pytest.mark.parametrize(("command", "code", "line"), [case[1:] for case in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_line(
    command: str, code: int, line: str, places: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    assert main([part.format(**places) for part in command.split()]) == code
    captured = capsys.readouterr()
    printed = [text for text in (captured.out + captured.err).splitlines() if text.strip()]
    assert len(printed) == 1, printed
    assert line.format(**places) in printed[0]
    assert "Traceback" not in printed[0]
    assert time.monotonic() - started < 5  # named at once: no wire timeout of 10 s, no Spark


def test_run_help_shows_how_a_target_name_is_written(capsys: pytest.CaptureFixture[str]) -> None:
    """`run --help` names the forms a --target takes, not only the rows of the table."""
    assert main(["run", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    shown = shown.replace("- ", "-")  # argparse breaks a long name at its hyphen
    for form in ("kafka:4.4 (a Kafka line)", "kafka==4.4.0 (an exact release)", "T==VERSION", "T=PATH",
                 "client:<library>@kafka:4.4", "client:kafkajs"):
        assert form in shown, form


# A version the registry does not serve, through the driver's own build (npm, the Go module proxy, PyPI): one
# line naming the command that lists the versions, and nothing of it left in the cache (KTS_CACHE, a temporary
# folder here). They ask the registries, so they run with the slow tests.
CACHE_CASES = [
    pytest.param("client:kafkajs==9.9.9", "kafkajs@9.9.9 is not served by npm: `npm view kafkajs versions`",
                 marks=[pytest.mark.e2e, pytest.mark.skipif(shutil.which("npm") is None, reason="needs npm")],
                 id="npm"),
    pytest.param("client:sarama==nope", "github.com/IBM/sarama@nope is not served by the Go module proxy",
                 marks=[pytest.mark.e2e, pytest.mark.skipif(shutil.which("go") is None, reason="needs go")],
                 id="go"),
    pytest.param("client:kafka-python==99.0.0",
                 "kafka-python==99.0.0 is not served by PyPI: `pip index versions kafka-python` lists the versions",
                 marks=pytest.mark.e2e, id="pip"),
]  # fmt: skip


@pytest.mark.parametrize(("target", "line"), CACHE_CASES)
def test_a_version_that_is_not_served_leaves_nothing_in_the_cache(target: str, line: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--target", target, "--out", str(tmp_path / "out"), "--quiet"],
        cwd=REPO, env={**os.environ, "KTS_CACHE": str(cache)}, capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip
    printed = [text for text in (done.stdout + done.stderr).splitlines() if text.strip()]
    assert done.returncode == 2 and len(printed) == 1 and line in printed[0], printed
    library = target.partition(":")[2].partition("=")[0]  # its build folder is <library>-<key>
    left = sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file() or p.name.startswith(library))
    assert left == [], left  # no build folder, no lock file, no log


# The same without the network: a stand-in npm or go on PATH that answers as the registry does for a version it does
# not have, and the build's cache folder in a temporary directory.
FAKE_TOOLS = [
    pytest.param("npm", "kafkajs", "node", "printf 'npm error code ETARGET\\nnpm error notarget No matching version "
                 "found for kafkajs@9.9.9.\\n'; exit 1", "kafkajs@9.9.9 is not served by npm", id="npm"),
    pytest.param("go", "sarama", "go", 'if [ "$1" = env ]; then echo go1.22.5; exit 0; fi\n'
                 "echo 'go: github.com/IBM/sarama@nope: invalid version: unknown revision nope' >&2; exit 1",
                 "github.com/IBM/sarama@nope is not served by the Go module proxy", id="go"),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "library", "language", "script", "line"), FAKE_TOOLS)
def test_a_refused_version_s_build_folder_is_removed(
    tool: str, library: str, language: str, script: str, line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.targets.libraries import LIBRARIES
    from conformance.targets.routes.driver import VersionNotServed, go_build, node_build

    if tool == "npm" and shutil.which("node") is None:
        pytest.skip("the Node build checks node itself before npm")
    bin_dir, cache = tmp_path / "bin", tmp_path / "cache"
    bin_dir.mkdir()
    (bin_dir / tool).write_text(f"#!/bin/sh\n{script}\n")
    (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("KTS_QUIET", "1")
    build = node_build.install_node_driver if tool == "npm" else go_build.build_go_driver
    monkeypatch.setattr(node_build if tool == "npm" else go_build, "CACHE", cache)
    version = "9.9.9" if tool == "npm" else "nope"
    with pytest.raises(VersionNotServed, match=re.escape(line)):
        build(LIBRARIES[library], version=version, path=None, timeout=60)
    assert sorted(str(p.relative_to(cache)) for p in cache.rglob("*")) == [language]  # its parent folder only


# --- setup failures (docs/setup-failures.md) -------------------------------------------------------------------
# A target that cannot be obtained (a release its registry does not have, a build that fails) or started stops the
# run before any test: exit 2 and one line naming the cause and the fix, never a FAIL, a test's error or a report.
# These ask the registries (Maven Central through mvn, the Go module proxy through go), so they are e2e; each is a
# few seconds (Maven's first look-up of a missing release about ten).

NEEDS_MAVEN = pytest.mark.skipif(shutil.which("mvn") is None or shutil.which("java") is None, reason="needs mvn, java")
NEEDS_GO = pytest.mark.skipif(shutil.which("go") is None, reason="needs go on PATH")
MISSING_PSEUDO_VERSION = "v0.0.0-20990101000000-000000000000"  # a Go pseudo-version of a commit of 2099
CACHE = Path(os.environ.get("KTS_CACHE", Path.home() / ".cache" / "kafka-timestamp-conformance"))

# (id, command line, a piece of the one line printed, what must not be left in the cache)
SETUP_CASES = [
    pytest.param("run --target kafka==4.1.99 --no-html --out {out}",
                 "Apache Kafka 4.1.99 is not on Maven Central (org.apache.kafka:kafka_2.13:4.1.99): choose a released "
                 "version, e.g. kafka==", "kafka-4.1.99", id="run-kafka-release-not-on-maven-central",
                 marks=NEEDS_MAVEN),
    pytest.param("up kafka==4.1.99 --log-dir {out}",
                 "Apache Kafka 4.1.99 is not on Maven Central", "kafka-4.1.99",
                 id="up-kafka-release-not-on-maven-central", marks=NEEDS_MAVEN),
    pytest.param(f"run --target kfake=={MISSING_PSEUDO_VERSION} --no-html --out {{out}}",
                 f"the Go module proxy does not serve github.com/twmb/franz-go/pkg/kfake@{MISSING_PSEUDO_VERSION} (",
                 f"kfake-{MISSING_PSEUDO_VERSION}-*", id="run-kfake-pseudo-version-not-served", marks=NEEDS_GO),
    pytest.param(f"run --target client:franz-go=={MISSING_PSEUDO_VERSION} --no-html --out {{out}}",
                 f"github.com/twmb/franz-go@{MISSING_PSEUDO_VERSION} is not served by the Go module proxy", None,
                 id="run-go-driver-pseudo-version-not-served", marks=NEEDS_GO),
]  # fmt: skip


@pytest.mark.e2e
@pytest.mark.parametrize(("command", "line", "left"), SETUP_CASES)
def test_a_target_that_cannot_be_had_is_one_line_before_any_test(
    command: str, line: str, left: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    before = set(CACHE.glob(left)) if left is not None else set()  # what an older version of the suite left
    started = time.monotonic()
    assert main(command.format(out=out).split()) == 2
    captured = capsys.readouterr()
    printed = [text for text in (captured.out + captured.err).splitlines() if text.strip()]
    errors = [text for text in printed if text.startswith("kafka-conformance: error: ")]
    assert len(errors) == 1 and printed[-1] == errors[0] and line in errors[0], printed
    # Nothing else is an error or a test's outcome (a progress line may come before), and no colour code of Maven's.
    assert not [text for text in printed if "Traceback" in text or "\x1b" in text or text.startswith("$ pytest")]
    assert not (out / "verdicts.json").exists()  # pytest never started: no report claims anything
    assert left is None or set(CACHE.glob(left)) <= before, f"the failed look-up left {left} in {CACHE}"
    assert time.monotonic() - started < 60


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("route", "target"),
    [
        pytest.param("pytest", "kafka==4.1.99", marks=NEEDS_MAVEN, id="pytest-kafka-not-on-central"),
        # pytest-xdist: the process that hands out the tests obtains the target before its workers start.
        pytest.param("pytest -n 2", "kafka==4.1.99", marks=NEEDS_MAVEN, id="xdist-kafka-not-on-central"),
        pytest.param("pytest", dyingbroker.NAME, id="pytest-broker-dies-at-start"),
        pytest.param("run", dyingbroker.NAME, id="run-broker-dies-at-start"),
    ],
)
def test_a_setup_failure_reports_no_test_and_no_fail(
    route: str, target: str, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The suites' pytest (directly, or under `kafka-conformance run`) obtains and starts the target before the first
    test: one that cannot be had or dies at start is one line naming the cause, no test is reported, and
    verdicts.json, where one is written, holds no verdict (where a failing session fixture made every test an error,
    which the judge read as FAIL)."""
    out, plugin = tmp_path / "out", ("-p", "tests.dyingbroker")
    monkeypatch.chdir(REPO)  # where the suites' pytest finds tests.dyingbroker
    if route == "run":
        unregister = dyingbroker.register()  # for run's own check, in this process
        try:
            code = main(["run", "--target", target, "--no-html", "--out", str(out), "--", *plugin])
        finally:
            unregister()
        captured = capfd.readouterr()
        text = captured.out + captured.err
    else:
        done = subprocess.run(
            [sys.executable, "-m", *route.split(), "suites", "-p", "no:cacheprovider", "-q", *plugin, "--target",
             target, "--verdicts-json", str(out / "verdicts.json"), "--log-dir", str(out / "logs")],
            cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        code, text = done.returncode, done.stdout + done.stderr
    assert code == (2 if route == "run" else pytest.ExitCode.USAGE_ERROR), text[-3000:]
    assert "INTERNALERROR" not in text and "Traceback" not in text, text[-3000:]
    why = "not on Maven Central" if target.startswith("kafka") else "did not start: dying-broker on 127.0.0.1:"
    said = [line for line in text.splitlines() if why in line]
    assert len(said) == 1 and "\x1b" not in said[0], text[-3000:]
    if target == dyingbroker.NAME:  # the cause, and where to read more
        assert "exited with code 3 during start-up; log " in said[0] and dyingbroker.SAYS in said[0]
    reported = re.compile(r"\d+ (passed|failed|errors?|xfailed|skipped)\b|ERROR at setup|^(FAILED|ERROR) suites/|^E ")
    assert not [line for line in text.splitlines() if reported.search(line)], text[-3000:]
    if (out / "verdicts.json").exists():  # not where pytest stopped before its session began (the xdist route)
        verdicts = json.loads((out / "verdicts.json").read_text(encoding="utf-8"))
        assert verdicts["tests"] == [] and verdicts["clauses"] == {}
    else:
        assert route.endswith("-n 2")


# `pytest suites`: pytest's usage error (exit 4) with the plugin's one line, not an INTERNALERROR traceback. Each
# is a pytest process of a few seconds: the two whose check `run` shares (the target) or that has a unit test
# below (the expectations entry) run with the slow tests.
SUITE_CASES = [
    pytest.param("--target model --hypothesis-profile turbo",
                 "--hypothesis-profile turbo: no such Hypothesis profile: choose one of fast, ci, broker, dev",
                 id="hypothesis-profile"),
    pytest.param("--target mutant:nope", LIST, id="unknown-mutant", marks=pytest.mark.e2e),
    pytest.param("--target broker --bootstrap-servers {kafka} --security-protocol SASL_SSL --sasl-mechanism PLAIN "
                 "--sasl-username u", "SASL mechanism PLAIN needs a password: pass --sasl-username and set env "
                 "KTS_SASL_PASSWORD", id="sasl-without-password", marks=pytest.mark.e2e),
    pytest.param("--target model --expectations {no_such_test} --collect-only",
                 f"entry 1 (LO.first-ge-target) names test '{NOT_A_TEST}', which the suites do not have: fix its node",
                 id="expectations-no-such-test", marks=pytest.mark.e2e),
    # A target that cannot be had: the plugin obtains it before the first test, and stops there.
    pytest.param("--target kafka==4.1.99", "Apache Kafka 4.1.99 is not on Maven Central", id="kafka-not-on-central",
                 marks=[pytest.mark.e2e, NEEDS_MAVEN]),
]  # fmt: skip


@pytest.mark.parametrize(("options", "line"), SUITE_CASES)
def test_bad_suite_options_are_one_usage_line(options: str, line: str, places: dict[str, str]) -> None:
    command = [sys.executable, "-m", "pytest", "suites/test_list_offsets.py", "-p", "no:cacheprovider", "-q"]
    done = subprocess.run(
        [*command, *(part.format(**places) for part in options.split())],
        cwd=REPO,
        env={**os.environ, "KTS_QUIET": "1"},  # no progress line of a fetch before the error (conformance/progress.py)
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    errors = [text for text in done.stderr.splitlines() if text.strip()]
    assert done.returncode == 4, done.stdout + done.stderr
    assert len(errors) == 1 and errors[0].startswith("ERROR: ") and line.format(**places) in errors[0], done.stderr
    assert "INTERNALERROR" not in done.stdout + done.stderr and "Traceback" not in done.stderr


# A stand-in for the collected module suites/test_list_offsets.py: the names it defines.
_LIST_OFFSETS = types.SimpleNamespace(test_timestamp_lookup=None, test_special_targets=None)
ALL_SUITES = ("suites",)
ONE_TEST = (A_TEST,)  # `pytest suites/test_list_offsets.py::test_timestamp_lookup`: a module collected in part


@pytest.mark.parametrize(
    ("test", "args", "error"),
    [
        (NOT_A_TEST, ALL_SUITES, True),  # a test its collected module does not have
        ("suites/test_list_offset.py::test_timestamp_lookup", ALL_SUITES, True),  # a module that does not exist
        (A_TEST, ALL_SUITES, False),  # collected, and perhaps deselected later (--clauses, -k, the kind): fine
        ("suites/test_compression.py::test_createtime_storage", ALL_SUITES, False),  # a module not in this run
        ("suites/test_list_offsets.py::test_special_targets[x]", ONE_TEST, False),  # not picked, but there
        (NOT_A_TEST, ONE_TEST, True),  # not picked, and not there
    ],
)
def test_an_expectation_names_a_test_the_suites_have(
    test: str, args: tuple[str, ...], error: bool, tmp_path: Path
) -> None:
    path = tmp_path / "expectations.toml"
    path.write_text(
        f'[[expected]]\nclause = "LO.first-ge-target"\nobservable = "list-offsets.offset"\nreason = "r"\n'
        f'link = "none"\ntest = "{test}"\n',
        encoding="utf-8",
    )
    config = types.SimpleNamespace(rootpath=REPO, args=list(args), stash=pytest.Stash())
    config.stash[STATE] = RunState("model", "kafka-4.0", "fast", None, load_expectations(path))
    config.stash[SETTINGS] = SuitesRun("model", "kafka-4.0", "fast", expectations=str(path))
    items = [types.SimpleNamespace(nodeid=A_TEST, module=_LIST_OFFSETS)]
    if error:
        with pytest.raises(pytest.UsageError, match=rf"entry 1 .* names test '{re.escape(test)}', which the suites"):
            check_expectation_tests(config, items)  # type: ignore[arg-type]
    else:
        check_expectation_tests(config, items)  # type: ignore[arg-type]


def test_the_readme_serves_a_mutant_on_one_broker(tmp_path: Path) -> None:
    """docs/reference-broker.md: `kafka-conformance serve --target mutant:lookup-last-match --brokers 1 --port
    9092 --control-port 8081` (here on free ports): one broker serving the mutant, and its control plane."""
    args = build_parser().parse_args(
        ["serve", "--target", "mutant:lookup-last-match", "--brokers", "1", "--port", "0", "--control-port", "0",
         "--ready-file", str(tmp_path / "ready.json"), "--log-file", str(tmp_path / "log")]
    )  # fmt: skip
    out, stop, codes = _Lines(), threading.Event(), []
    thread = threading.Thread(target=lambda: codes.append(serve.run(args, out, stop=stop)))
    thread.start()
    try:
        line = out.first(timeout=10)
    finally:
        stop.set()
        thread.join(10)
    assert codes == [0]
    assert line.startswith("serving mutant:lookup-last-match (kafka-4.0) on 127.0.0.1:") and "," not in line


class _Lines:
    """A text stream whose first line a test can wait for."""

    def __init__(self) -> None:
        self.text = ""
        self._written = threading.Event()

    def write(self, text: str) -> int:
        self.text += text
        if "\n" in self.text:
            self._written.set()
        return len(text)

    def flush(self) -> None:
        pass

    def first(self, *, timeout: float) -> str:
        assert self._written.wait(timeout), "serve printed nothing"
        return self.text.splitlines()[0]
