"""TLS and SASL to a user's cluster (conformance.wire.security, conformance.wire.sasl, conformance.wire.client_config).

Fast: the settings as options, KTS_ variables and a client properties file (Kafka's key names, librdkafka's, PEM
stores only), their checks, the command line and environment of the pytest process (no secret on the command line),
and TLS against a loopback TLS listener with certificates made at test time (an untrusted CA, a plaintext listener
reached over TLS).

e2e: an Apache Kafka 4.0 started with a SASL_SSL listener (SCRAM and PLAIN users) beside its PLAINTEXT one. The
suites over SASL_SSL with SCRAM-SHA-512 give the clause verdicts they give over PLAINTEXT, and neither password (the
SASL one, the client key's) appears in any file the run wrote or on its terminal; a wrong password, an untrusted CA,
the TLS port given as PLAINTEXT and the SASL port given as SSL each end in one line naming the fix, exit 2.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.errors import TargetError
from conformance.plugin.launcher import SuitesRun, pytest_command, suites_environment
from conformance.reference.kafka_server import KafkaServer
from conformance.reference.served import ServedCluster
from conformance.targets.libraries.model.model_broker import ModelFactory
from conformance.targets.routes.wire_adapter.health import TargetHealth
from conformance.targets.routes.wire_adapter.kafka_wire import check_reachable
from conformance.wire.client import WireClient
from conformance.wire.client_config import (
    SecurityConfigError,
    config_bootstrap,
    pytest_arguments,
    read_properties,
    resolve_security,
    secret_environment,
    security_given,
)
from conformance.wire.connection import KafkaConnection
from conformance.wire.security import PLAINTEXT, SecuritySettings
from tests.tls_material import TlsFiles, make_tls_files

REPO = Path(__file__).resolve().parents[1]
PASSWORD = "sasl-secret-5d2e91"


def _resolve(options: dict[str, str] | None = None, env: dict[str, str] | None = None) -> SecuritySettings:
    given = options or {}
    return resolve_security(lambda dest: given.get(dest), env or {})


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls_files(tmp_path_factory.mktemp("tls"))


# --- the settings ---------------------------------------------------------------------------------------------


def test_a_confluent_cloud_style_file_gives_sasl_ssl_plain(tmp_path: Path) -> None:
    config = tmp_path / "client.properties"
    config.write_text(
        "# as Confluent Cloud hands it out\n"
        "bootstrap.servers=pkc-xxxx.confluent.cloud:9092\n"
        "security.protocol=SASL_SSL\n"
        "sasl.mechanisms=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n"
        f"    username='KEY123' password=\"{PASSWORD}\";\n"
        "session.timeout.ms=45000\n",
        encoding="utf-8",
    )
    settings = _resolve({"client_config": str(config)})
    assert (settings.protocol, settings.mechanism, settings.password) == ("SASL_SSL", "PLAIN", PASSWORD)
    assert settings.username in ("KEY123", "'KEY123'")  # a bare JAAS value is kept as written
    assert settings.check_hostname and settings.ca_file is None
    assert PASSWORD not in repr(settings) and PASSWORD not in settings.describe()
    assert config_bootstrap(lambda dest: str(config) if dest == "client_config" else None, {}) == (
        "pkc-xxxx.confluent.cloud:9092"
    )


def test_scram_with_a_private_ca_from_kafka_keys(tmp_path: Path, tls: TlsFiles) -> None:
    config = tmp_path / "client.properties"
    config.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" '
        f'password="{PASSWORD}";\n'
        f"ssl.truststore.type=PEM\nssl.truststore.location={tls.ca}\n"
        f"ssl.keystore.type=PEM\nssl.keystore.location={tls.client_keystore}\n"
        f"ssl.key.password={tls.client_key_password}\n"
        "ssl.endpoint.identification.algorithm=\n",
        encoding="utf-8",
    )
    settings = _resolve({"client_config": str(config)})
    assert settings == SecuritySettings(
        "SASL_SSL", "SCRAM-SHA-512", "alice", PASSWORD, ca_file=str(tls.ca), cert_file=str(tls.client_keystore),
        key_password=tls.client_key_password, check_hostname=False,
    )  # fmt: skip
    # An option wins over its variable, which wins over the file.
    assert _resolve({"client_config": str(config)}, {"KTS_SASL_USERNAME": "bob"}).username == "bob"
    assert _resolve({"client_config": str(config), "sasl_username": "carol"}, {"KTS_SASL_USERNAME": "bob"}).username \
        == "carol"


@pytest.mark.parametrize(
    ("options", "env", "message"),
    [
        ({"security_protocol": "TLS"}, {}, "unknown security protocol: choose one of PLAINTEXT, SSL"),
        ({"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512"}, {}, "needs a username"),
        ({"security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN", "sasl_username": "u"}, {}, "needs a password"),
        ({"security_protocol": "SASL_SSL", "sasl_username": "u"}, {"KTS_SASL_PASSWORD": "p"}, "needs a SASL mech"),
        ({"security_protocol": "SASL_SSL", "sasl_mechanism": "GSSAPI"}, {}, "GSSAPI and OAUTHBEARER are not"),
        ({"sasl_mechanism": "PLAIN"}, {}, "--sasl-mechanism is set but the security protocol is PLAINTEXT"),
        ({"security_protocol": "SASL_PLAINTEXT"}, {"KTS_SSL_CA_FILE": "ca.pem"}, "KTS_SSL_CA_FILE is set but"),
        ({"security_protocol": "SSL", "ssl_ca_file": "/no/such/ca.pem"}, {}, "/no/such/ca.pem: no such file"),
        ({"security_protocol": "SSL", "ssl_endpoint_identification_algorithm": "http"}, {}, "give https"),
    ],
)
def test_a_setting_that_cannot_be_used_is_one_line(options: dict[str, str], env: dict[str, str], message: str) -> None:
    with pytest.raises(SecurityConfigError, match=message.replace("(", r"\(")) as raised:
        _resolve(options, env)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("ssl.truststore.location={ca}\nssl.truststore.type=JKS\n", "keytool -exportcert -rfc"),
        ("ssl.truststore.location={binary}\n", "is not PEM: the suite reads PEM stores only"),
        ("ssl.keystore.location={ca}\nssl.keystore.type=PKCS12\n", "openssl pkcs12 -in FILE -nodes"),
        ("ssl.truststore.certificates=-----BEGIN CERTIFICATE-----\n", "put the PEM in a file"),
        ("ssl.keystore.location={ca}\nssl.keystore.password=x\n", "give the password of an encrypted key as ssl.key"),
        ("sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required;\n", "PlainLoginModule or Scram"),
        ("sasl.jaas.config=username=a password=b\n", "is not `LoginModule required"),
    ],
)
def test_a_client_file_the_suite_cannot_read_is_refused_with_the_fix(
    lines: str, message: str, tmp_path: Path, tls: TlsFiles
) -> None:
    binary = tmp_path / "store.jks"
    binary.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SSL\n" + lines.format(ca=tls.ca, binary=binary), encoding="utf-8")
    with pytest.raises(SecurityConfigError, match=message.replace("(", r"\(")):
        _resolve({"client_config": str(config)})


def test_properties_are_read_as_java_reads_them(tmp_path: Path) -> None:
    config = tmp_path / "c.properties"
    config.write_text("! comment\n  a = 1\nb:2\nc 3\nd=one \\\n    two\ne=back\\\\slash\nf\n", encoding="utf-8")
    assert read_properties(config) == {"a": "1", "b": "2", "c": "3", "d": "one two", "e": "back\\slash", "f": ""}


def test_a_wrong_key_password_is_named_without_showing_it(tls: TlsFiles) -> None:
    with pytest.raises(SecurityConfigError, match="check the key's password") as raised:
        _resolve({"security_protocol": "SSL", "ssl_ca_file": str(tls.ca), "ssl_cert_file": str(tls.client_cert),
                  "ssl_key_file": str(tls.client_key), "ssl_key_password": "not-it-3141"})  # fmt: skip
    assert "not-it-3141" not in str(raised.value)
    with pytest.raises(SecurityConfigError, match="the key is encrypted: set env KTS_SSL_KEY_PASSWORD"):
        _resolve({"security_protocol": "SSL", "ssl_cert_file": str(tls.client_keystore)})


def test_secrets_reach_pytest_by_its_environment_never_its_command_line(tls: TlsFiles) -> None:
    settings = SecuritySettings("SASL_SSL", "SCRAM-SHA-512", "alice", PASSWORD, ca_file=str(tls.ca),
                                cert_file=str(tls.client_keystore), key_password=tls.client_key_password)  # fmt: skip
    run = SuitesRun(target="broker", profile="kafka-4.0", hypothesis_profile="fast", bootstrap_servers="h:1",
                    security=settings)  # fmt: skip
    cmd = pytest_command(run)
    assert not any(PASSWORD in arg or tls.client_key_password in arg for arg in cmd)
    document = json.loads(cmd[cmd.index("--run-settings") + 1])
    assert document["security"]["security_protocol"] == "SASL_SSL"
    assert document["security"]["sasl_username"] == "alice"
    env = suites_environment(run)
    assert env is not None and env["KTS_SASL_PASSWORD"] == PASSWORD
    assert env["KTS_SSL_KEY_PASSWORD"] == tls.client_key_password
    # What the pytest process reads back is what the run resolved.
    assert resolve_security(lambda dest: document["security"].get(dest), env) == settings
    assert security_given(settings) == document["security"]
    assert pytest_arguments(PLAINTEXT) == [] and secret_environment(PLAINTEXT) == {}
    assert suites_environment(SuitesRun(target="model", profile="kafka-4.0", hypothesis_profile="fast")) is None


def test_security_settings_for_a_managed_target_are_one_usage_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--target", "tansu", "--security-protocol", "SSL"]) == 2
    printed = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(printed) == 1 and "is for --target broker; target 'tansu' is started by the suite" in printed[0]


# --- TLS on loopback --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _tls_listener(tls: TlsFiles, host: str = "127.0.0.1") -> Iterator[str]:
    """A TLS listener on `host` with the broker's certificate (for 127.0.0.1 and localhost) that speaks nothing after
    the handshake."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tls.broker_cert, tls.broker_key)
    server = socket.create_server((host, 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with contextlib.suppress(OSError), conn:
                conn.settimeout(2)
                with context.wrap_socket(conn, server_side=True) as wrapped:
                    wrapped.recv(16)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"{host}:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        server.close()


def test_an_untrusted_certificate_names_the_ca_option(tls: TlsFiles) -> None:
    with _tls_listener(tls) as address, pytest.raises(TargetError) as raised:
        check_reachable(address, timeout=2, security=SecuritySettings("SSL", ca_file=str(tls.other_ca)))
    assert str(raised.value).startswith(f"TLS verification of the broker at {address} failed (")
    assert "pass the CA that signed the broker's certificate with --ssl-ca-file" in str(raised.value)


def test_hostname_verification_is_on_by_default_and_can_be_turned_off(tls: TlsFiles) -> None:
    """127.0.0.2 is not a name of the broker's certificate: refused, naming the option that turns the check off;
    with it off the handshake succeeds (and the listener, which speaks no Kafka, is named as such)."""
    try:
        listener = _tls_listener(tls, host="127.0.0.2")
        address = listener.__enter__()
    except OSError:
        pytest.skip("127.0.0.2 is not a loopback address here")
    try:
        with pytest.raises(TargetError) as raised:
            check_reachable(address, timeout=2, security=SecuritySettings("SSL", ca_file=str(tls.ca)))
        assert str(raised.value).startswith(f"TLS verification of the broker at {address} failed (")
        assert "--ssl-endpoint-identification-algorithm ''" in str(raised.value)
        unchecked = SecuritySettings("SSL", ca_file=str(tls.ca), check_hostname=False)
        with pytest.raises(TargetError, match="does not speak the Kafka protocol"):
            check_reachable(address, timeout=2, security=unchecked)
    finally:
        listener.__exit__(None, None, None)


def test_a_plaintext_listener_reached_over_tls_names_the_protocol_option(tls: TlsFiles) -> None:
    served = ServedCluster(ModelFactory(brokers=1))
    with KafkaServer(served) as server, pytest.raises(TargetError) as raised:
        address = server.bootstrap
        check_reachable(address, timeout=2, security=SecuritySettings("SSL", ca_file=str(tls.ca)))
    assert f"TLS handshake with {address} failed" in str(raised.value)
    assert "set --security-protocol PLAINTEXT or SASL_PLAINTEXT" in str(raised.value)


# --- SASL on loopback ------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _plain_sasl_listener(password: str) -> Iterator[tuple[str, list[bytes]]]:
    """A loopback listener that does what a Kafka SASL_PLAINTEXT listener with PLAIN does up to authentication:
    ApiVersions, SaslHandshake v1 (PLAIN only), SaslAuthenticate of `alice` with `password`, then ApiVersions again.
    Every request frame it got is kept, to show what went over the wire."""
    from kafka.protocol.metadata import ApiVersionsResponse
    from kafka.protocol.sasl import (
        SaslAuthenticateRequest,
        SaslAuthenticateResponse,
        SaslHandshakeRequest,
        SaslHandshakeResponse,
    )

    from conformance.wire.framing import REQUEST_HEAD, FrameError, read_frame

    offered = {18: (0, 3), 17: (0, 1), 36: (0, 2)}
    version_of = ApiVersionsResponse.ApiVersion
    keys = [version_of(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in offered.items()]
    server = socket.create_server(("127.0.0.1", 0))
    frames: list[bytes] = []

    def answer(frame: bytes) -> Any:
        api_key, version, _ = REQUEST_HEAD.unpack_from(frame)
        if api_key == 18:
            return ApiVersionsResponse(error_code=0, api_keys=keys, throttle_time_ms=0, version=version)
        if api_key == 17:
            mechanism = SaslHandshakeRequest.decode(frame, version=version, header=True).mechanism
            return SaslHandshakeResponse(error_code=0 if mechanism == "PLAIN" else 33, mechanisms=["PLAIN"],
                                         version=version)  # fmt: skip
        token = bytes(SaslAuthenticateRequest.decode(frame, version=version, header=True).auth_bytes)
        good = token.split(b"\0")[1:] == [b"alice", password.encode()]
        return SaslAuthenticateResponse(
            error_code=0 if good else 58, error_message=None if good else "Invalid username or password",
            auth_bytes=b"", session_lifetime_ms=0, version=version,
        )  # fmt: skip

    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)  # closing a socket does not wake a thread blocked in its accept(): poll
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with contextlib.suppress(OSError, FrameError), conn:  # the client is done: the next one
                conn.settimeout(2)
                while True:
                    frame = read_frame(conn, min_size=8, max_size=1 << 20)
                    frames.append(frame)
                    response = answer(frame)
                    response.with_header(correlation_id=REQUEST_HEAD.unpack_from(frame)[2])
                    conn.sendall(response.encode(header=True, framed=True))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}", frames
    finally:
        stop.set()
        thread.join(5)
        server.close()


def test_sasl_plain_authenticates_and_keeps_its_bytes_out_of_the_history() -> None:
    from kafka.protocol.metadata import ApiVersionsRequest

    with _plain_sasl_listener(PASSWORD) as (address, frames):
        host, _, port = address.rpartition(":")
        settings = SecuritySettings("SASL_PLAINTEXT", "PLAIN", "alice", PASSWORD)
        with KafkaConnection(host, int(port), timeout=2, security=settings) as conn:
            conn.connect()
            assert conn.send(ApiVersionsRequest(), 0).error_code == 0
    # ApiVersions, SaslHandshake, SaslAuthenticate (the token with the password), then the recorded ApiVersions.
    assert [REQUEST_HEAD_KEY(f) for f in frames] == [18, 17, 36, 18]
    assert PASSWORD.encode() in frames[2]
    assert [e.api_key for e in conn.exchanges] == [18]
    assert not any(PASSWORD.encode() in e.request_bytes + e.response_bytes for e in conn.exchanges)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (SecuritySettings("SASL_PLAINTEXT", "PLAIN", "alice", "not-" + PASSWORD),
         "SASL authentication as 'alice' with PLAIN failed at {address} (the broker said: Invalid username or password)"
         ": check the username and password"),
        (SecuritySettings("SASL_PLAINTEXT", "SCRAM-SHA-512", "alice", PASSWORD),
         "{address} does not enable SASL mechanism SCRAM-SHA-512 (it offers PLAIN): set --sasl-mechanism"),
    ],
)  # fmt: skip
def test_a_refused_login_is_one_line_naming_the_fix(settings: SecuritySettings, message: str) -> None:
    with _plain_sasl_listener(PASSWORD) as (address, _frames), pytest.raises(TargetError) as raised:
        check_reachable(address, timeout=2, security=settings)
    assert str(raised.value).startswith(message.format(address=address))
    assert PASSWORD not in str(raised.value)


def REQUEST_HEAD_KEY(frame: bytes) -> int:
    from conformance.wire.framing import REQUEST_HEAD

    return int(REQUEST_HEAD.unpack_from(frame)[0])


# --- e2e: Apache Kafka with a SASL_SSL listener -------------------------------------------------------------------

# A few clauses of ListOffsets and of validation, at the derandomized `fast` budget (the same examples on both
# listeners): the wire path end to end, about 15 s a run.
CLAUSES = "LO.first-ge-target,LO.not-found-minus-one,LO.max-timestamp-first-record,VAL.range-before-after"


def _need_kafka() -> None:
    if shutil.which("java") is None or shutil.which("javac") is None or shutil.which("mvn") is None:
        pytest.skip("needs java, javac and mvn on PATH")


class SecureKafka:
    def __init__(self, plain: str, secure: str, control_url: str, tls: TlsFiles) -> None:
        self.plain, self.secure, self.control_url, self.tls = plain, secure, control_url, tls


@pytest.fixture(scope="module")
def kafka(tls: TlsFiles, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureKafka]:
    _need_kafka()
    from conformance.targets.brokers.kafka import SecureListener, kafka_on_the_suites_clock, release
    from conformance.targets.brokers.ports import free_loopback_port
    from conformance.targets.target import Opening

    secure = SecureListener(free_loopback_port(), tls.broker_keystore, (("alice", PASSWORD),))
    opening = Opening("kafka-4.0", log_dir=tmp_path_factory.mktemp("kafka-logs"))
    with kafka_on_the_suites_clock(release("4.0"), opening, secure=secure) as running:
        yield SecureKafka(running.bootstrap, f"127.0.0.1:{secure.port}", running.control_url, tls)


def _run(args: list[str], out: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "conformance", "run", "--target", "broker", "--profile", "kafka-4.0",
               "--clauses", CLAUSES, "--hypothesis-profile", "fast", "--out", str(out), *args]  # fmt: skip
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("KTS_", "KAFKA_BOOTSTRAP"))}
    environ.update({"PYTHONPATH": str(REPO), **(env or {})})
    return subprocess.run(command, cwd=REPO, env=environ, capture_output=True, text=True, timeout=600, check=False)


def _clause_verdicts(out: Path) -> dict[str, str]:
    return dict(json.loads((out / "verdicts.json").read_text(encoding="utf-8"))["clauses"])


@pytest.mark.e2e
def test_sasl_ssl_scram_gives_the_plaintext_verdicts_and_shows_no_secret(kafka: SecureKafka, tmp_path: Path) -> None:
    """The same clauses, budget and control plane over the PLAINTEXT listener and over the SASL_SSL one (the address,
    SCRAM-SHA-512, the private CA, a client certificate whose key is encrypted, all from a client properties file):
    the same verdicts; then every file under the SASL run's output folder, and its terminal, searched for both
    passwords."""
    started = time.monotonic()
    plain = _run(["--bootstrap-servers", kafka.plain, "--control-url", kafka.control_url, "--no-html"],
                 tmp_path / "plain")  # fmt: skip
    assert plain.returncode == 0, plain.stdout[-3000:] + plain.stderr[-3000:]
    config = tmp_path / "client.properties"
    config.write_text(
        f"bootstrap.servers={kafka.secure}\nsecurity.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required\\\n"
        f'  username="alice" password="{PASSWORD}";\n'
        f"ssl.truststore.type=PEM\nssl.truststore.location={kafka.tls.ca}\n"
        f"ssl.keystore.type=PEM\nssl.keystore.location={kafka.tls.client_keystore}\n"
        f"ssl.key.password={kafka.tls.client_key_password}\n",
        encoding="utf-8",
    )
    out = tmp_path / "sasl"
    secured = _run(["--control-url", kafka.control_url, "--client-config", str(config)], out)  # its address too
    assert secured.returncode == 0, secured.stdout[-3000:] + secured.stderr[-3000:]
    assert "security: SASL_SSL (SCRAM-SHA-512 as 'alice'" in secured.stdout
    verdicts = _clause_verdicts(out)
    assert verdicts == _clause_verdicts(tmp_path / "plain")
    assert {"LO.first-ge-target", "VAL.range-before-after"} <= {c for c, v in verdicts.items() if v == "PASS"}
    secrets = (PASSWORD, kafka.tls.client_key_password)
    for stream in (secured.stdout, secured.stderr):
        assert not any(secret in stream for secret in secrets)
    files = [path for path in out.rglob("*") if path.is_file()]
    assert (out / "verdicts.json") in files and any(p.suffix == ".html" for p in files), sorted(map(str, files))
    for path in files:
        data = path.read_bytes()
        assert not any(secret.encode() in data for secret in secrets), path
    print(f"two runs of {CLAUSES} in {time.monotonic() - started:.0f} s: {verdicts}")


def _one_line(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    started = time.monotonic()
    assert main(["run", "--target", "broker", "--profile", "kafka-4.0", *args]) == 2
    captured = capsys.readouterr()
    printed = [line for line in (captured.out + captured.err).splitlines() if line.strip()]
    assert time.monotonic() - started < 15
    assert len(printed) == 1, printed
    assert "Traceback" not in printed[0] and PASSWORD not in printed[0]
    return printed[0]


@pytest.mark.e2e
def test_a_wrong_password_is_one_line(
    kafka: SecureKafka, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KTS_SASL_PASSWORD", "wrong-" + PASSWORD[::-1])
    line = _one_line(["--bootstrap-servers", kafka.secure, "--security-protocol", "SASL_SSL", "--sasl-mechanism",
                      "SCRAM-SHA-512", "--sasl-username", "alice", "--ssl-ca-file", str(kafka.tls.ca)],
                     capsys)  # fmt: skip
    assert f"SASL authentication as 'alice' with SCRAM-SHA-512 failed at {kafka.secure}" in line
    assert "check the username and password" in line and PASSWORD[::-1] not in line


@pytest.mark.e2e
def test_an_untrusted_broker_certificate_is_one_line(
    kafka: SecureKafka, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KTS_SASL_PASSWORD", PASSWORD)
    line = _one_line(["--bootstrap-servers", kafka.secure, "--security-protocol", "SASL_SSL", "--sasl-mechanism",
                      "SCRAM-SHA-512", "--sasl-username", "alice", "--ssl-ca-file", str(kafka.tls.other_ca)],
                     capsys)  # fmt: skip
    assert f"TLS verification of the broker at {kafka.secure} failed" in line and "--ssl-ca-file" in line


@pytest.mark.e2e
def test_the_tls_port_given_as_plaintext_is_one_line(kafka: SecureKafka, capsys: pytest.CaptureFixture[str]) -> None:
    line = _one_line(["--bootstrap-servers", kafka.secure], capsys)
    assert f"{kafka.secure} is a TLS listener" in line and "set --security-protocol SSL or SASL_SSL" in line


@pytest.mark.e2e
def test_the_sasl_port_given_as_ssl_is_one_line(kafka: SecureKafka, capsys: pytest.CaptureFixture[str]) -> None:
    line = _one_line(["--bootstrap-servers", kafka.secure, "--security-protocol", "SSL", "--ssl-ca-file",
                      str(kafka.tls.ca)], capsys)  # fmt: skip
    assert "as a SASL listener does to a client that does not authenticate" in line
    assert "set --security-protocol SASL_SSL or SASL_PLAINTEXT" in line


@pytest.mark.e2e
def test_plain_and_scram_256_authenticate_and_a_plaintext_port_over_tls_is_named(kafka: SecureKafka) -> None:
    for mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
        settings = SecuritySettings("SASL_SSL", mechanism, "alice", PASSWORD, ca_file=str(kafka.tls.ca))
        with WireClient(kafka.secure, timeout=10, security=settings) as client:
            assert [b.node_id for b in client.metadata([]).brokers] == [1], mechanism
            assert not any(PASSWORD.encode() in e.request_bytes for e in client.exchanges)
    settings = SecuritySettings("SASL_SSL", "SCRAM-SHA-512", "alice", PASSWORD, ca_file=str(kafka.tls.ca))
    with pytest.raises(TargetError, match="is it a TLS listener"):
        check_reachable(kafka.plain, timeout=5, security=settings)
    # SASL on a listener without it: Kafka's request handler answers the handshake ILLEGAL_SASL_STATE.
    sasl_plaintext = SecuritySettings("SASL_PLAINTEXT", "SCRAM-SHA-512", "alice", PASSWORD)
    with pytest.raises(TargetError, match="does not take SASL on this listener"):
        check_reachable(kafka.plain, timeout=5, security=sasl_plaintext)
    # The health probe between tests asks ApiVersions over TLS (before authentication, as a SASL listener allows).
    assert TargetHealth("broker", kafka.secure, timeout=5, security=settings)._unanswered() is None
    lost = TargetHealth("broker", kafka.plain, timeout=1, security=settings)._unanswered()
    assert lost is not None and "TLS handshake failed" in lost
