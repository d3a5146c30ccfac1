"""The suite's client of a control plane (the contract is conformance/control/openapi.json).

A control plane is an HTTP API next to a Kafka-compatible implementation that lets the suite read, set and
advance each broker's clock, move a partition's leader, run time-based retention now and reset the cluster.
`ControlClient` calls it with the standard library only (`http.client`: no proxy from the environment ever
sits between the suite and a loopback control plane), one connection per call, each call bounded by the
timeout. Every failure is one `ControlPlaneError` whose message is one line: the URL, the operation, the
problem (a problem+json answer's detail and field) and the fix.

Capability names the answer lists that this version of the suite does not know are ignored, never a crash;
`unknown_capabilities` keeps them so the adapter can note them.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Mapping
from typing import Any, NoReturn
from urllib.parse import quote, urlsplit

from conformance.errors import EnvironmentFailure, TargetError
from conformance.judging.capabilities import Capability

# What a user does when the control plane does not answer (or answers outside the contract).
FIX_UNREACHABLE = (
    "is the control plane running? pass --control-url URL or set KTS_CONTROL_URL; "
    "`kafka-conformance check-control URL` checks it"
)
FIX_CONTRACT = "`kafka-conformance check-control URL` checks a control plane against the contract"


class ControlPlaneError(TargetError):
    """A control-plane call that failed; `str()` is one line naming the URL, the operation, the problem and
    the fix. `status` and `field` are the HTTP status and the problem's field when the control plane
    answered with a problem (None otherwise)."""

    def __init__(
        self, url: str, operation: str, problem: str, fix: str, *, status: int | None = None, field: str | None = None
    ) -> None:
        self.url = url
        self.operation = operation
        self.problem = problem
        self.status = status
        self.field = field
        super().__init__(f"control plane at {url}: {operation} failed: {problem}: {fix}")


class ControlPlaneBroke(ControlPlaneError, EnvironmentFailure):
    """A control plane that failed on a request (HTTP 5xx) or could not be reached: an environment failure, not
    the implementation's (its test's clauses are BLOCKED)."""


class ControlClient:
    """One control plane, at `url` (http:// or https://, with an optional base path)."""

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ControlPlaneError(
                url,
                "reading the URL",
                "not an http:// or https:// URL with a host",
                "pass --control-url http://HOST:PORT (or set KTS_CONTROL_URL)",
            )
        try:
            self._port = parts.port
        except ValueError:
            raise ControlPlaneError(
                url, "reading the URL", "its port is not a number", "pass --control-url http://HOST:PORT"
            ) from None
        self.url = url.strip().rstrip("/")
        self.timeout = timeout
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._base = parts.path.rstrip("/")
        self.unknown_capabilities: tuple[str, ...] = ()

    # -- the contract's operations

    def capabilities(self) -> tuple[frozenset[Capability], tuple[int, ...]]:
        """What the control plane offers, in the suite's Capability names, and its broker ids (sorted)."""
        answer = self._call("GET", "/capabilities", "GET /capabilities")
        names = answer.get("capabilities")
        brokers = answer.get("brokers")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            self._contract("GET /capabilities", f"'capabilities' is {names!r}, not a list of strings")
        if not isinstance(brokers, list) or not all(_is_int(b) for b in brokers):
            self._contract("GET /capabilities", f"'brokers' is {brokers!r}, not a list of integers")
        by_value = {c.value: c for c in Capability}
        self.unknown_capabilities = tuple(n for n in names if n not in by_value)
        return frozenset(by_value[n] for n in names if n in by_value), tuple(sorted(brokers))

    def clock(self, broker: int) -> int:
        operation = f"GET clock of broker {broker}"
        return self._now(self._call("GET", f"/brokers/{broker}/clock", operation), operation)

    def set_clock(self, broker: int, now_ms: int) -> int:
        operation = f"PUT clock of broker {broker} to {now_ms}"
        return self._now(self._call("PUT", f"/brokers/{broker}/clock", operation, {"now_ms": now_ms}), operation)

    def advance_clock(self, broker: int, delta_ms: int) -> int:
        operation = f"advance clock of broker {broker} by {delta_ms} ms"
        body = {"delta_ms": delta_ms}
        return self._now(self._call("POST", f"/brokers/{broker}/clock/advance", operation, body), operation)

    def leader(self, topic: str, partition: int) -> tuple[int, int]:
        """(leader broker id, leader epoch) of a partition."""
        operation = f"GET leader of {topic}-{partition}"
        return self._leader(self._call("GET", _leader_path(topic, partition), operation), operation)

    def move_leader(self, topic: str, partition: int, broker: int) -> tuple[int, int]:
        """Move the partition's leadership to `broker`; (leader, leader epoch) after the move."""
        operation = f"move leader of {topic}-{partition} to broker {broker}"
        answer = self._call("PUT", _leader_path(topic, partition), operation, {"broker": broker})
        return self._leader(answer, operation)

    def run_retention(self) -> int:
        """Time-based retention now on every replica; the number of segments deleted."""
        answer = self._call("POST", "/retention", "POST /retention", {})
        return self._integer(answer, "segments_deleted", "POST /retention")

    def reset(self) -> None:
        self._call("POST", "/reset", "POST /reset", {})

    # -- HTTP

    def _call(self, method: str, path: str, operation: str, body: Mapping[str, Any] | None = None) -> dict[str, Any]:
        payload = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Accept": "application/json, application/problem+json", "Connection": "close"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = kind(self._host, self._port, timeout=self.timeout)
        try:
            conn.request(method, self._base + path, body=payload, headers=headers)
            response = conn.getresponse()
            status, raw = response.status, response.read()
        except TimeoutError:
            raise self._unreachable(operation, f"no answer within {self.timeout:g} s") from None
        except ConnectionRefusedError:
            raise self._unreachable(operation, "connection refused") from None
        except (OSError, http.client.HTTPException) as exc:
            problem = f"{type(exc).__name__}: {exc}".rstrip(": ")
            raise self._unreachable(operation, problem) from None
        finally:
            conn.close()
        answer = _json(raw)
        if status >= 400:
            raise self._problem(operation, status, answer, raw)
        if not 200 <= status < 300:
            self._contract(operation, f"HTTP {status}, not 200")
        if not isinstance(answer, dict):
            shown = _excerpt(raw) or "an empty body"
            self._contract(operation, f"HTTP {status} with {shown}, not a JSON object")
        return answer

    def _problem(self, operation: str, status: int, answer: object, raw: bytes) -> ControlPlaneError:
        """A 4xx/5xx answer: the problem's detail and field (RFC 9457, the contract's `field`)."""
        if isinstance(answer, dict):
            detail = answer.get("detail") or answer.get("title") or "no detail"
            field = answer.get("field")
            where = f" (field {field})" if isinstance(field, str) and field else ""
            problem = f"HTTP {status}{where}: {_one_line(str(detail))}"
            field_name = field if isinstance(field, str) else None
        else:
            problem = f"HTTP {status}: {_excerpt(raw) or 'an empty body'} (not problem+json)"
            field_name = None
        fix = FIX_CONTRACT if status >= 500 else f"fix the request or the control plane; {FIX_CONTRACT}"
        kind = ControlPlaneBroke if status >= 500 else ControlPlaneError
        return kind(self.url, operation, problem, fix, status=status, field=field_name)

    def _error(self, operation: str, problem: str, fix: str) -> ControlPlaneError:
        return ControlPlaneError(self.url, operation, problem, fix)

    def _unreachable(self, operation: str, problem: str) -> ControlPlaneBroke:
        """No answer at all: the control plane is down or elsewhere (an environment failure)."""
        return ControlPlaneBroke(self.url, operation, problem, FIX_UNREACHABLE)

    def _contract(self, operation: str, problem: str) -> NoReturn:
        raise self._error(operation, f"the answer breaks the contract: {problem}", FIX_CONTRACT)

    def _integer(self, answer: dict[str, Any], key: str, operation: str) -> int:
        value = answer.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        self._contract(operation, f"{key!r} is {value!r}, not an integer")

    def _now(self, answer: dict[str, Any], operation: str) -> int:
        return self._integer(answer, "now_ms", operation)

    def _leader(self, answer: dict[str, Any], operation: str) -> tuple[int, int]:
        return self._integer(answer, "leader", operation), self._integer(answer, "leader_epoch", operation)


def _leader_path(topic: str, partition: int) -> str:
    return f"/topics/{quote(topic, safe='')}/partitions/{partition}/leader"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _json(raw: bytes) -> object:
    """The body as JSON, or None when it is not JSON (a body that parses is taken as JSON whatever its
    Content-Type says; one that does not is reported as it is)."""
    try:
        return json.loads(raw.decode("utf-8")) if raw.strip() else None
    except (UnicodeDecodeError, ValueError):
        return None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _excerpt(raw: bytes, limit: int = 80) -> str:
    text = _one_line(raw.decode("utf-8", errors="replace"))
    return repr(text if len(text) <= limit else text[:limit] + "...") if text else ""
