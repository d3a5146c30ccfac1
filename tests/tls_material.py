"""Certificates made at test time for the TLS and SASL tests: a private CA, a broker certificate it signs for
127.0.0.1 and localhost, a client certificate with an encrypted key, and a second CA that signed nothing the
broker shows (an untrusted one). PEM files, as Kafka's `ssl.keystore.type=PEM` and a Python client read them."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

import pytest

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402


@dataclass(frozen=True)
class TlsFiles:
    ca: Path  # the CA that signed the broker's certificate
    other_ca: Path  # a CA that signed nothing the broker shows
    broker_keystore: Path  # the broker's key and certificate chain (Kafka's PEM keystore)
    broker_cert: Path
    broker_key: Path
    client_cert: Path
    client_key: Path  # encrypted with `client_key_password`
    client_keystore: Path  # the encrypted key and the certificate in one file (Kafka's PEM keystore form)
    client_key_password: str


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _ca(common_name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _leaf(
    common_name: str, ca_key: ec.EllipticCurvePrivateKey, ca_cert: x509.Certificate, *, server: bool
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    )
    if server:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return key, builder.sign(ca_key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> bytes:
    encryption = (
        serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption()
    )
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def make_tls_files(folder: Path) -> TlsFiles:
    """A CA, a broker certificate for 127.0.0.1 and localhost, a client certificate, and an unrelated CA."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = _ca("kts test CA")
    _, other_cert = _ca("kts unrelated CA")
    broker_key, broker_cert = _leaf("kts broker", ca_key, ca_cert, server=True)
    client_key, client_cert = _leaf("kts client", ca_key, ca_cert, server=False)
    password = "client-key-secret-7c1f"
    files = TlsFiles(
        ca=folder / "ca.pem",
        other_ca=folder / "other-ca.pem",
        broker_keystore=folder / "broker-keystore.pem",
        broker_cert=folder / "broker.pem",
        broker_key=folder / "broker-key.pem",
        client_cert=folder / "client.pem",
        client_key=folder / "client-key.pem",
        client_keystore=folder / "client-keystore.pem",
        client_key_password=password,
    )
    files.ca.write_bytes(_pem(ca_cert))
    files.other_ca.write_bytes(_pem(other_cert))
    files.broker_keystore.write_bytes(_key(broker_key) + _pem(broker_cert) + _pem(ca_cert))
    files.broker_cert.write_bytes(_pem(broker_cert) + _pem(ca_cert))
    files.broker_key.write_bytes(_key(broker_key))
    files.client_cert.write_bytes(_pem(client_cert))
    files.client_key.write_bytes(_key(client_key, password))
    files.client_keystore.write_bytes(_key(client_key, password) + _pem(client_cert))
    for path in (files.broker_keystore, files.broker_key, files.client_key, files.client_keystore):
        path.chmod(0o600)
    return files
