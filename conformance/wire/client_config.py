"""The security settings of a run against a user's cluster, read from where Kafka users keep them: command-line
options, environment variables, and a client properties file (`--client-config FILE`) with Kafka's own key names.

An option wins over its environment variable, which wins over the file. Every problem is a `SecurityConfigError`
whose text is one line naming the setting and the fix, never a secret.

    option (env: KTS_ and the option's name)    properties key
    --security-protocol                         security.protocol
    --sasl-mechanism                            sasl.mechanism
    --sasl-username                             sasl.jaas.config username=
    --sasl-password                             sasl.jaas.config password=
    --ssl-ca-file                               ssl.truststore.location
    --ssl-cert-file                             ssl.keystore.location
    --ssl-key-file                              (in ssl.keystore.location)
    --ssl-key-password                          ssl.key.password
    --ssl-endpoint-identification-algorithm     ssl.endpoint.identification.algorithm
    --client-config                             (the file; env KTS_CLIENT_CONFIG)

The file's `bootstrap.servers` is the cluster's address where --bootstrap-servers (KAFKA_BOOTSTRAP_SERVERS) is not
given. The file also takes librdkafka's names (sasl.username, sasl.password, ssl.ca.location, ssl.certificate.location,
ssl.key.location): a Confluent Cloud client file works as it is. Stores must be PEM: a JKS or PKCS12 store is
refused with the command that converts it. Keys the suite has no use for (client.id, timeouts, ...) are ignored.

A run passes its settings to the pytest process it starts without putting a secret in its settings document or on
its command line (which it prints): `security_given` gives the options of everything else (`pytest_arguments`: as
a replay command writes them), `secret_environment` the two secrets as the environment variables the plugin reads.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.wire.security import MECHANISMS, PLAINTEXT, PROTOCOLS, SecuritySettings, TlsSetupError, tls_context

__all__ = [
    "CLIENT_CONFIG_ENV",
    "PASSWORD_ENV",
    "SecurityConfigError",
    "config_bootstrap",
    "pytest_arguments",
    "read_properties",
    "resolve_security",
    "secret_environment",
    "security_given",
    "security_options",
]

CLIENT_CONFIG_ENV = "KTS_CLIENT_CONFIG"
PASSWORD_ENV = "KTS_SASL_PASSWORD"
KEY_PASSWORD_ENV = "KTS_SSL_KEY_PASSWORD"


class SecurityConfigError(ValueError):
    """A security setting that cannot be used: one line naming it and the fix."""


@dataclass(frozen=True)
class _Setting:
    """One setting: its SecuritySettings field, option, environment variable and properties keys (Kafka's first)."""

    field: str
    flag: str
    env: str
    keys: tuple[str, ...]
    help: str
    secret: bool = False


_SETTINGS = (
    _Setting("protocol", "--security-protocol", "KTS_SECURITY_PROTOCOL", ("security.protocol",),
             f"the security protocol: {', '.join(PROTOCOLS)} (default PLAINTEXT)"),
    _Setting("mechanism", "--sasl-mechanism", "KTS_SASL_MECHANISM", ("sasl.mechanism", "sasl.mechanisms"),
             f"the SASL mechanism of a SASL_* protocol: {', '.join(MECHANISMS)}"),
    _Setting("username", "--sasl-username", "KTS_SASL_USERNAME", ("sasl.username",), "the SASL user"),
    _Setting("password", "--sasl-password", PASSWORD_ENV, ("sasl.password",),
             "the SASL password", secret=True),
    _Setting("ca_file", "--ssl-ca-file", "KTS_SSL_CA_FILE", ("ssl.truststore.location", "ssl.ca.location"),
             "PEM file of the CA certificates that signed the brokers' (default: the system's CAs)"),
    _Setting("cert_file", "--ssl-cert-file", "KTS_SSL_CERT_FILE",
             ("ssl.keystore.location", "ssl.certificate.location"),
             "PEM file of the client certificate, for brokers that ask for one (it may hold the key too)"),
    _Setting("key_file", "--ssl-key-file", "KTS_SSL_KEY_FILE", ("ssl.key.location",),
             "PEM file of the client certificate's private key"),
    _Setting("key_password", "--ssl-key-password", KEY_PASSWORD_ENV, ("ssl.key.password",),
             "the password of an encrypted client key", secret=True),
    _Setting("check_hostname", "--ssl-endpoint-identification-algorithm", "KTS_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM",
             ("ssl.endpoint.identification.algorithm",),
             "https (the default) checks the broker's certificate names the address connected to; '' turns it off"),
)  # fmt: skip

_JAAS_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": "PLAIN",
    "org.apache.kafka.common.security.scram.ScramLoginModule": None,  # SCRAM-SHA-256 or -512: sasl.mechanism says
}
_CONVERT = {
    "truststore": "convert it to PEM: keytool -exportcert -rfc -keystore FILE -alias ALIAS > ca.pem (JKS), or "
    "openssl pkcs12 -in FILE -nokeys -out ca.pem (PKCS12)",
    "keystore": "convert it to PEM: openssl pkcs12 -in FILE -nodes -out client.pem (a JKS store first through "
    "keytool -importkeystore -deststoretype PKCS12)",
}


def add_security_arguments(parser: argparse.ArgumentParser) -> None:
    """`security_options` as one argparse group of a command that reaches a user's cluster (run, audit: through
    conformance.plugin.run_options, which adds them where a command takes the security settings)."""
    group = parser.add_argument_group(
        "TLS and SASL (--target broker)",
        "how to reach your cluster, as Kafka clients set it: options, KTS_ environment variables or a client "
        "properties file; an option wins over its variable, which wins over the file (docs/tls-sasl.md)",
    )
    for flag, options in security_options():
        group.add_argument(flag, **options)


def security_options() -> list[tuple[str, dict[str, Any]]]:
    """The options (flag, argparse/pytest keywords) of `kafka-conformance run` and the pytest plugin. Each defaults to
    None: `resolve_security` reads the environment and the file for what is not given."""
    options: list[tuple[str, dict[str, Any]]] = [
        (
            "--client-config",
            {
                "default": None,
                "metavar": "FILE",
                "help": "--target broker: a Kafka client properties file (security.protocol, sasl.mechanism, "
                f"sasl.jaas.config, ssl.truststore.location, ... PEM stores; env {CLIENT_CONFIG_ENV})",
            },
        )
    ]
    for s in _SETTINGS:
        env = f"env {s.env}" + (", safer than the option: other users of this machine can read a command line"
                                if s.secret else "")  # fmt: skip
        options.append((s.flag, {"default": None, "metavar": s.flag.rsplit("-", 1)[-1].upper(),
                                 "help": f"--target broker: {s.help} ({env})"}))  # fmt: skip
    return options


def config_bootstrap(given: Callable[[str], str | None], environ: Mapping[str, str] | None = None) -> str | None:
    """`bootstrap.servers` of the client properties file (`--client-config`, else KTS_CLIENT_CONFIG), if it has one:
    the cluster's address where --bootstrap-servers is not given."""
    env = os.environ if environ is None else environ
    path = given("client_config") or env.get(CLIENT_CONFIG_ENV) or None
    return (read_properties(path).get("bootstrap.servers") or "").strip() or None if path else None


def _option_name(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def resolve_security(
    given: Callable[[str], str | None], environ: Mapping[str, str] | None = None, *, check_files: bool = True
) -> SecuritySettings:
    """The settings of a run: `given(dest)` the options' values (None: not given), then `environ`, then the client
    properties file; checked (SecurityConfigError), and with `check_files` the TLS files loaded once."""
    env = os.environ if environ is None else environ
    config_path = given("client_config") or env.get(CLIENT_CONFIG_ENV) or None
    from_file = _from_properties(config_path) if config_path else {}
    values: dict[str, str] = {}
    origin: dict[str, str] = {}
    for s in _SETTINGS:
        option = given(_option_name(s.flag))
        if option is not None:
            values[s.field], origin[s.field] = option, s.flag
        elif s.env in env:
            values[s.field], origin[s.field] = env[s.env], s.env
        elif s.field in from_file:
            values[s.field], origin[s.field] = from_file[s.field], f"{from_file['_origin_' + s.field]} in {config_path}"
    if "mechanism" not in values and from_file.get("_jaas_mechanism"):
        values["mechanism"], origin["mechanism"] = from_file["_jaas_mechanism"], f"sasl.jaas.config in {config_path}"
    settings = _checked(values, origin)
    if check_files and settings.tls:
        try:
            tls_context(settings)
        except TlsSetupError as exc:
            raise SecurityConfigError(str(exc)) from None
    return settings


def _checked(values: dict[str, str], origin: dict[str, str]) -> SecuritySettings:
    protocol = values.get("protocol", "PLAINTEXT").strip().upper() or "PLAINTEXT"
    if protocol not in PROTOCOLS:
        raise SecurityConfigError(
            f"{origin['protocol']} {values['protocol']!r}: unknown security protocol: choose one of "
            f"{', '.join(PROTOCOLS)}"
        )
    tls, sasl = protocol in ("SSL", "SASL_SSL"), protocol.startswith("SASL_")
    mechanism = values.get("mechanism", "").strip().upper() or None
    sasl_given = [f for f in ("mechanism", "username", "password") if values.get(f)]
    if sasl_given and not sasl:
        raise SecurityConfigError(
            f"{origin[sasl_given[0]]} is set but the security protocol is {protocol}: set --security-protocol "
            f"SASL_SSL or SASL_PLAINTEXT (security.protocol), or drop the SASL settings"
        )
    tls_given = [f for f in ("ca_file", "cert_file", "key_file", "key_password") if values.get(f)]
    if tls_given and not tls:
        raise SecurityConfigError(
            f"{origin[tls_given[0]]} is set but the security protocol is {protocol}: set --security-protocol SSL or "
            "SASL_SSL (security.protocol), or drop the TLS settings"
        )
    if sasl:
        if mechanism is None:
            raise SecurityConfigError(
                f"security protocol {protocol} needs a SASL mechanism: pass --sasl-mechanism "
                f"{' or '.join(MECHANISMS)} (sasl.mechanism)"
            )
        if mechanism not in MECHANISMS:
            raise SecurityConfigError(
                f"{origin['mechanism']} {mechanism}: not a SASL mechanism the suite speaks: choose one of "
                f"{', '.join(MECHANISMS)} (GSSAPI and OAUTHBEARER are not supported)"
            )
        if not values.get("username") or not values.get("password"):
            missing = "a username" if not values.get("username") else "a password"
            raise SecurityConfigError(
                f"SASL mechanism {mechanism} needs {missing}: pass --sasl-username and set env {PASSWORD_ENV} (or "
                "sasl.jaas.config with username and password in --client-config)"
            )
    for name in ("ca_file", "cert_file", "key_file"):
        given = values.get(name)
        if given and not Path(given).expanduser().is_file():
            raise SecurityConfigError(f"{origin[name]} {given}: no such file: give the path of a PEM file")
    algorithm = values.get("check_hostname", "https").strip()
    if algorithm.lower() not in ("https", ""):
        raise SecurityConfigError(
            f"{origin['check_hostname']} {algorithm!r}: give https (check the broker's name, the default) or '' "
            "(do not)"
        )

    def path(name: str) -> str | None:
        value = values.get(name)
        return str(Path(value).expanduser()) if value else None

    return SecuritySettings(
        protocol=protocol,
        mechanism=mechanism if sasl else None,
        username=values.get("username") if sasl else None,
        password=values.get("password") if sasl else None,
        ca_file=path("ca_file"),
        cert_file=path("cert_file"),
        key_file=path("key_file"),
        key_password=values.get("key_password") or None,
        check_hostname=algorithm.lower() == "https",
    )


# --- the client properties file ---------------------------------------------------------------------------------


def read_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """A Java properties file's keys and values (comments, `key=value`, `key: value`, `key value`, lines continued
    with a backslash, backslash escapes); SecurityConfigError when it cannot be read."""
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise SecurityConfigError(
            f"--client-config {path}: cannot read it ({why}): give a Kafka client properties file"
        ) from None
    out: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if _continued(line):
            logical += line[:-1]
            continue
        logical += line
        key, value = _split(logical)
        out[key] = value
        logical = ""
    if logical:
        key, value = _split(logical)
        out[key] = value
    return out


def _continued(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)


def _split(line: str) -> tuple[str, str]:
    match = re.match(r"((?:\\.|[^=:\s\\])*)\s*[=:\s]?\s*(.*)$", line, re.DOTALL)
    assert match is not None  # the pattern matches any line
    return _unescape(match.group(1)), _unescape(match.group(2))


def _from_properties(path: str) -> dict[str, str]:
    """The settings a client properties file gives, by SecuritySettings field (with `_origin_<field>`: the key it
    came from), PEM stores only."""
    props = read_properties(path)
    out: dict[str, str] = {}
    for s in _SETTINGS:
        for key in s.keys:
            if key in props:
                out[s.field], out[f"_origin_{s.field}"] = props[key], key
                break
    for store in ("truststore", "keystore"):
        kind = props.get(f"ssl.{store}.type", "").strip().upper()
        location = props.get(f"ssl.{store}.location")
        if kind in ("JKS", "PKCS12") or (location and not kind and not _is_pem(location)):
            shown = kind or "not PEM"
            raise SecurityConfigError(
                f"--client-config {path}: ssl.{store}.location {location} is {shown}: the suite reads PEM stores "
                f"only; {_CONVERT[store]}, and set ssl.{store}.type=PEM"
            )
        if kind not in ("", "PEM"):
            raise SecurityConfigError(
                f"--client-config {path}: ssl.{store}.type={kind}: the suite reads PEM stores only (set PEM)"
            )
    for inline in ("ssl.truststore.certificates", "ssl.keystore.key", "ssl.keystore.certificate.chain"):
        if inline in props:
            raise SecurityConfigError(
                f"--client-config {path}: {inline} (PEM in the file itself) is not supported: put the PEM in a file "
                "and name it with ssl.truststore.location or ssl.keystore.location"
            )
    if props.get("ssl.keystore.password") and props.get("ssl.keystore.location"):
        raise SecurityConfigError(
            f"--client-config {path}: ssl.keystore.password does not apply to a PEM keystore: give the password of "
            "an encrypted key as ssl.key.password"
        )
    jaas = props.get("sasl.jaas.config")
    if jaas:
        module, options = _parse_jaas(jaas, path)
        if module not in _JAAS_MODULES:
            raise SecurityConfigError(
                f"--client-config {path}: sasl.jaas.config uses {module}: the suite logs in with PlainLoginModule "
                "or ScramLoginModule (username and password) only"
            )
        for name in ("username", "password"):
            if name in options and name not in out:
                out[name], out[f"_origin_{name}"] = options[name], "sasl.jaas.config"
        if _JAAS_MODULES[module]:
            out["_jaas_mechanism"] = str(_JAAS_MODULES[module])
    return out


def _is_pem(location: str) -> bool:
    try:
        with Path(location).expanduser().open("rb") as f:
            return b"-----BEGIN" in f.read(4096)
    except OSError:
        return True  # a missing file is named by the check of the path


_JAAS = re.compile(r"^\s*(?P<module>[\w.$]+)\s+(?:required|requisite|sufficient|optional)(?P<options>.*?);?\s*$",
                   re.DOTALL)  # fmt: skip
_JAAS_OPTION = re.compile(r'\s*([\w.-]+)\s*=\s*(?:"((?:\\.|[^"\\])*)"|([^\s;"]+))')


def _parse_jaas(text: str, path: str) -> tuple[str, dict[str, str]]:
    """`Module required key="value" ...;` as (module, options)."""
    match = _JAAS.match(text)
    if match is None:
        raise SecurityConfigError(
            f"--client-config {path}: sasl.jaas.config is not `LoginModule required username=\"...\" "
            'password="...";`: fix it as Kafka clients write it'
        )
    options: dict[str, str] = {}
    for key, quoted, bare in _JAAS_OPTION.findall(match.group("options")):
        options[key] = re.sub(r"\\(.)", r"\1", quoted) if quoted or not bare else bare
    return match.group("module"), options


# --- passing the settings to a pytest process --------------------------------------------------------------------


def security_given(settings: SecuritySettings) -> dict[str, str]:
    """The options (by dest) that give `settings` again, secrets left out (they go by `secret_environment`): what
    a run's settings document carries to its pytest process; none for PLAINTEXT."""
    if settings == PLAINTEXT:
        return {}
    given = {"security_protocol": settings.protocol}
    for dest, value in (
        ("sasl_mechanism", settings.mechanism),
        ("sasl_username", settings.username),
        ("ssl_ca_file", settings.ca_file),
        ("ssl_cert_file", settings.cert_file),
        ("ssl_key_file", settings.key_file),
    ):
        if value:
            given[dest] = value
    if settings.tls and not settings.check_hostname:
        given["ssl_endpoint_identification_algorithm"] = ""
    return given


def pytest_arguments(settings: SecuritySettings) -> list[str]:
    """`security_given` as the plugin's options on a command line (a replay command)."""
    return [arg for dest, value in security_given(settings).items() for arg in (f"--{dest.replace('_', '-')}", value)]


def secret_environment(settings: SecuritySettings) -> dict[str, str]:
    """The environment variables that carry the secrets of `settings` to a pytest process."""
    secrets = {PASSWORD_ENV: settings.password, KEY_PASSWORD_ENV: settings.key_password}
    return {name: value for name, value in secrets.items() if value}
