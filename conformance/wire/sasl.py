"""SASL authentication of one new connection, as Kafka's clients do it (KIP-43, KIP-152): ApiVersions (which a SASL
listener answers before authentication) for the versions of the two SASL APIs, SaslHandshake v1 naming the
mechanism, then SaslAuthenticate rounds carrying the mechanism's tokens until it is done.

The mechanisms' tokens are kafka-python's (`kafka.net.sasl`: PLAIN as RFC 4616 lays it out, SCRAM-SHA-256/512 as
RFC 5802 does, the server's signature checked), so this module only runs the exchange. Brokers older than Kafka 1.0
(no SaslAuthenticate, raw tokens after a SaslHandshake v0) are refused with a message.

`authenticate` gets a `send(request, version)` that must not keep the bytes it moves (the PLAIN token holds the
password): conformance.wire.connection sends these round trips outside its exchange history.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka.net.sasl.plain import SaslMechanismPlain
from kafka.net.sasl.scram import SaslMechanismScram
from kafka.protocol.metadata import ApiVersionsRequest
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

from conformance.wire.security import SecuritySettings

__all__ = ["SaslError", "authenticate"]

_SASL_HANDSHAKE, _SASL_AUTHENTICATE = 17, 36
_UNSUPPORTED_SASL_MECHANISM, _ILLEGAL_SASL_STATE, _SASL_AUTHENTICATION_FAILED = 33, 34, 58
_MAX_ROUNDS = 8  # PLAIN takes one, SCRAM two: a broker that keeps asking is not doing SASL


class SaslError(Exception):
    """Authentication did not succeed; `str(error)` is one line naming the fix, never a secret. `kind` is "auth"
    (the broker refused the credentials or the mechanism) or "protocol" (it broke the exchange)."""

    def __init__(self, message: str, *, kind: str = "auth") -> None:
        super().__init__(message)
        self.kind = kind


def _mechanism(settings: SecuritySettings) -> Any:
    config = {
        "sasl_mechanism": settings.mechanism,
        "sasl_plain_username": settings.username or "",
        "sasl_plain_password": settings.password or "",
        "security_protocol": settings.protocol,
    }
    if settings.mechanism == "PLAIN":
        return SaslMechanismPlain(**config)
    return SaslMechanismScram(**config)


def authenticate(send: Callable[[Any, int], Any], settings: SecuritySettings, address: str) -> None:
    """Authenticate the connection behind `send` with `settings` (its mechanism and credentials); SaslError if the
    broker refuses. Transport failures of `send` propagate."""
    offered = {k.api_key: (k.min_version, k.max_version) for k in send(ApiVersionsRequest(), 0).api_keys}
    handshake, auth = offered.get(_SASL_HANDSHAKE), offered.get(_SASL_AUTHENTICATE)
    if auth is None or handshake is None or handshake[1] < 1:
        raise SaslError(
            f"{address} does not offer SaslHandshake v1 and SaslAuthenticate (a broker older than Kafka 1.0, or a "
            "listener without SASL): check --security-protocol (SSL or PLAINTEXT for a listener without SASL)"
        )
    answer = send(SaslHandshakeRequest(mechanism=settings.mechanism), 1)
    if answer.error_code == _UNSUPPORTED_SASL_MECHANISM:
        raise SaslError(
            f"{address} does not enable SASL mechanism {settings.mechanism} (it offers "
            f"{', '.join(answer.mechanisms) or 'none'}): set --sasl-mechanism (sasl.mechanism) to one of those"
        )
    if answer.error_code == _ILLEGAL_SASL_STATE:
        raise SaslError(
            f"{address} does not take SASL on this listener (SaslHandshake answered ILLEGAL_SASL_STATE): set "
            "--security-protocol SSL or PLAINTEXT (security.protocol) for a listener without SASL"
        )
    if answer.error_code != 0:
        raise SaslError(f"{address} refused SaslHandshake for {settings.mechanism} (error {answer.error_code})")
    version = min(auth[1], int(SaslAuthenticateRequest.max_version))
    mechanism = _mechanism(settings)
    for _ in range(_MAX_ROUNDS):
        if mechanism.is_done():
            break
        try:
            token = mechanism.auth_bytes()
        except ValueError as exc:
            raise SaslError(f"{address}: the SASL exchange broke ({exc})", kind="protocol") from None
        answer = send(SaslAuthenticateRequest(auth_bytes=token), version)
        if answer.error_code == _SASL_AUTHENTICATION_FAILED:
            said = f" (the broker said: {answer.error_message})" if answer.error_message else ""
            raise SaslError(
                f"SASL authentication as {settings.username!r} with {settings.mechanism} failed at {address}{said}: "
                "check the username and password (--sasl-username, KTS_SASL_PASSWORD or sasl.jaas.config) and "
                "--sasl-mechanism"
            )
        if answer.error_code != 0:
            said = f": {answer.error_message}" if answer.error_message else ""
            raise SaslError(f"{address} refused SaslAuthenticate (error {answer.error_code}{said})")
        try:
            mechanism.receive(bytes(answer.auth_bytes))
        except (ValueError, KeyError) as exc:
            # The server-final message did not carry the signature the password gives: not the broker we trust.
            raise SaslError(
                f"{address} answered {settings.mechanism} with a proof that does not check ({exc}): it does not "
                "hold this user's credentials; check --bootstrap-servers",
                kind="protocol",
            ) from None
    if not mechanism.is_done() or not mechanism.is_authenticated():
        raise SaslError(f"{address} did not complete the {settings.mechanism} exchange", kind="protocol")
