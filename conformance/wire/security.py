"""How the suite's connections reach a secured cluster: the settings Kafka clients use (security protocol, SASL
mechanism and credentials, TLS files, hostname verification) as one value, `SecuritySettings`, and the socket they
give (`open_socket`: TCP, then TLS where the protocol says so).

The settings travel from the command line to every connection (bootstrap, each broker from Metadata, the health
probe), into the pytest process and into Spark tasks, so they are a plain picklable value. The two secrets (the
SASL password, the client key's password) never show in its repr, in `describe()` or in an error message; the
command line of the pytest process carries the other settings only (conformance.wire.client_config).

TLS is Python's `ssl` module: a context made once per settings value in a process, verifying the broker's
certificate against the CA file (the system's CAs without one), its name checked against the address connected
to unless hostname verification is off (Kafka's `ssl.endpoint.identification.algorithm` empty). SASL runs on the
connection once it is open (conformance.wire.sasl).
"""

from __future__ import annotations

import functools
import socket
import ssl
from dataclasses import dataclass, field

__all__ = [
    "MECHANISMS",
    "PLAINTEXT",
    "PROTOCOLS",
    "SecuritySettings",
    "TlsError",
    "TlsSetupError",
    "open_socket",
    "tls_context",
]

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


@dataclass(frozen=True)
class SecuritySettings:
    """A client's security settings, as Kafka's client properties name them (see the module doc). Checked by
    conformance.wire.client_config when read; `tls_context` loads the files."""

    protocol: str = "PLAINTEXT"  # security.protocol
    mechanism: str | None = None  # sasl.mechanism
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: str | None = None  # ssl.truststore.location (PEM); None: the system's CAs
    cert_file: str | None = None  # the client certificate (PEM; may hold the key too)
    key_file: str | None = None  # its private key (PEM)
    key_password: str | None = field(default=None, repr=False)  # ssl.key.password
    check_hostname: bool = True  # ssl.endpoint.identification.algorithm=https (empty turns it off)

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @property
    def plaintext(self) -> bool:
        return self.protocol == "PLAINTEXT"

    def secrets(self) -> tuple[str, ...]:
        """The values no output may show (a test greps for them)."""
        return tuple(s for s in (self.password, self.key_password) if s)

    def describe(self) -> str:
        """One line without secrets: "SASL_SSL (SCRAM-SHA-512 as 'alice'; CA ca.pem)"."""
        parts: list[str] = []
        if self.sasl:
            parts.append(f"{self.mechanism} as {self.username!r}")
        if self.tls:
            parts.append(f"CA {self.ca_file}" if self.ca_file else "the system's CAs")
            if self.cert_file:
                parts.append(f"client certificate {self.cert_file}")
            if not self.check_hostname:
                parts.append("no hostname verification")
        return self.protocol + (f" ({'; '.join(parts)})" if parts else "")


PLAINTEXT = SecuritySettings()
# OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH and X509_V_ERR_IP_ADDRESS_MISMATCH.
_NAME_MISMATCH = frozenset({62, 64})


class TlsSetupError(ValueError):
    """The TLS files cannot be loaded (a CA that is not PEM, a key that does not match, a wrong key password): the
    message names the file and the fix, never a secret."""


class TlsError(OSError):
    """The TLS handshake with a broker failed; `verify` when its certificate did not verify."""

    def __init__(self, reason: str, *, verify: bool, name_mismatch: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.verify = verify
        self.name_mismatch = name_mismatch  # the certificate verified, but for other names than the address


@functools.lru_cache(maxsize=8)
def tls_context(settings: SecuritySettings) -> ssl.SSLContext:
    """The client's TLS context for `settings` (made once per process and settings value)."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    context.check_hostname = settings.check_hostname
    try:
        if settings.ca_file:
            context.load_verify_locations(cafile=settings.ca_file)
    except (ssl.SSLError, OSError) as exc:
        raise TlsSetupError(
            f"CA file {settings.ca_file} cannot be loaded ({_reason(exc)}): pass a PEM file of the CA certificates "
            "that signed the brokers' certificates with --ssl-ca-file (ssl.truststore.location)"
        ) from None
    if settings.cert_file or settings.key_file:
        if not settings.cert_file:
            raise TlsSetupError(
                f"a client key ({settings.key_file}) without a client certificate: pass --ssl-cert-file too"
            )
        try:
            # Never OpenSSL's own prompt for a pass phrase on the terminal: an encrypted key without a password fails.
            context.load_cert_chain(settings.cert_file, settings.key_file, password=settings.key_password or _none)
        except (ssl.SSLError, OSError) as exc:
            encrypted = _encrypted_key(settings.key_file or settings.cert_file)
            if encrypted and not settings.key_password:
                hint = "the key is encrypted: set env KTS_SSL_KEY_PASSWORD (ssl.key.password)"
            elif encrypted:
                hint = "check the key's password (--ssl-key-password, env KTS_SSL_KEY_PASSWORD, ssl.key.password)"
            else:
                hint = "pass a PEM certificate and its PEM private key (--ssl-cert-file, --ssl-key-file)"
            raise TlsSetupError(
                f"client certificate {settings.cert_file} (key {settings.key_file or 'in the same file'}) cannot be "
                f"loaded ({_reason(exc)}): {hint}"
            ) from None
    return context


def _none() -> bytes:
    return b""


def _encrypted_key(path: str) -> bool:
    """Whether the PEM file at `path` holds an encrypted private key (PKCS#8 or OpenSSL's legacy form)."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return False
    return b"BEGIN ENCRYPTED PRIVATE KEY" in head or b"Proc-Type: 4,ENCRYPTED" in head


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLError) and exc.reason:
        return str(exc.reason).replace("_", " ").lower()
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return type(exc).__name__


def open_socket(host: str, port: int, *, timeout: float, settings: SecuritySettings = PLAINTEXT) -> socket.socket:
    """A connected socket to `host:port` (its timeout `timeout`), TLS already negotiated where `settings` asks.
    OSError when the TCP connection fails (TimeoutError: no answer); TlsError when the handshake does."""
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.settimeout(timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if not settings.tls:
        return sock
    try:
        return tls_context(settings).wrap_socket(sock, server_hostname=host)
    except ssl.SSLCertVerificationError as exc:
        sock.close()
        mismatch = exc.verify_code in _NAME_MISMATCH
        raise TlsError(exc.verify_message or _reason(exc), verify=True, name_mismatch=mismatch) from None
    except TimeoutError:
        sock.close()
        raise TlsError("no answer to the TLS handshake", verify=False) from None
    except (ssl.SSLError, OSError) as exc:
        sock.close()
        raise TlsError(_reason(exc) if not isinstance(exc, ssl.SSLEOFError) else "the broker closed the connection",
                       verify=False) from None
