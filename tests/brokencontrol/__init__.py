"""A control plane that breaks the contract on purpose (issue 12), for `kafka-conformance check-control`
to catch. It is written the way a small shim would be (its own routes, no shared code with the reference
control plane) and honours the contract everywhere except in two places:

- PUT /brokers/{broker}/clock crashes (500) when now_ms is not an integer, where the contract wants a 4xx
  naming body.now_ms;
- GET /brokers/{broker}/clock answers {"broker": b, "now": ms}: the wrong shape (now_ms is required).

So check-control must FAIL it, and blame those two operations and no other.
`BrokenControlPlane().start()` serves it on a free loopback port; `stop()` closes it.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from conformance.control.control_plane import OPENAPI_PATH

BROKERS = (0, 1, 2)
START_MS = 1_700_000_000_000
CLOCK_MAX = 2**53 - 1
INT32_MAX = 2**31 - 1
TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")
DECIMAL = re.compile(r"[0-9]{1,10}")

# path template -> allowed methods
ROUTES = {
    ("openapi.json",): ("GET",),
    ("capabilities",): ("GET",),
    ("brokers", "*", "clock"): ("GET", "PUT"),
    ("brokers", "*", "clock", "advance"): ("POST",),
    ("topics", "*", "partitions", "*", "leader"): ("GET", "PUT"),
    ("retention",): ("POST",),
    ("reset",): ("POST",),
}


class Problem(Exception):
    def __init__(self, status: int, field: str) -> None:
        super().__init__(field)
        self.status = status
        self.field = field


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the tests read check-control's output, not this server's."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):
            return self._route
        raise AttributeError(name)

    def _reply(self, status: int, payload: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _route(self) -> None:
        segments = tuple(self.path.split("?")[0].strip("/").split("/"))
        try:
            for template, methods in ROUTES.items():
                if _matches(template, segments):
                    if self.command not in methods:
                        self._problem(405, "method", {"Allow": ", ".join(methods)})
                        return
                    answer = self._answer(segments)
                    payload = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                    self._reply(200, payload, "application/json")
                    return
            raise Problem(404, "path")
        except Problem as problem:
            self._problem(problem.status, problem.field)
        except Exception:  # what a careless shim does: a bare 500
            self._reply(500, b"internal error", "text/plain")

    def _problem(self, status: int, field: str, headers: dict[str, str] | None = None) -> None:
        problem = {"type": "about:blank", "title": "error", "status": status, "detail": f"bad {field}", "field": field}
        self._reply(status, json.dumps(problem).encode(), "application/problem+json", headers)

    def _body(self, *, required: tuple[str, ...]) -> dict[str, Any]:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not raw and not required:
            return {}
        if self.headers.get("Content-Type", "application/json").split(";")[0].strip() != "application/json":
            raise Problem(415, "header.content-type")
        try:
            body = json.loads(raw)
        except ValueError:
            raise Problem(400, "body") from None
        if not isinstance(body, dict):
            raise Problem(400, "body")
        for name in body:
            if name not in required:
                raise Problem(400, f"body.{name}")
        for name in required:
            if name not in body:
                raise Problem(400, f"body.{name}")
        return body

    @staticmethod
    def _integer(value: str, field: str, maximum: int) -> int:
        if not DECIMAL.fullmatch(value) or int(value) > maximum:
            raise Problem(400, field)
        return int(value)

    def _answer(self, segments: tuple[str, ...]) -> Any:
        clocks = self.server.clocks
        if segments[0] == "openapi.json":
            return OPENAPI_PATH.read_bytes()
        if segments[0] == "capabilities":
            return {"capabilities": ["clock-control", "retention"], "brokers": list(BROKERS)}
        if segments[0] == "brokers":
            broker = self._integer(segments[1], "path.broker", INT32_MAX)
            if self.command == "PUT":
                now_ms = self._body(required=("now_ms",))["now_ms"]
                if not isinstance(now_ms, int):
                    # Broken on purpose: the shim crashes where it should answer 400 naming body.now_ms.
                    raise TypeError(f"now_ms is {type(now_ms).__name__}")
                if not 0 <= now_ms <= CLOCK_MAX:
                    raise Problem(422, "body.now_ms")
            elif self.command == "POST":
                delta = _json_integer(self._body(required=("delta_ms",))["delta_ms"], "body.delta_ms")
                if broker in clocks and not 0 <= clocks[broker] + delta <= CLOCK_MAX:
                    raise Problem(422, "body.delta_ms")
            if broker not in clocks:
                raise Problem(404, "path.broker")
            if self.command == "PUT":
                clocks[broker] = now_ms
                return {"broker": broker, "now_ms": now_ms}
            if self.command == "POST":
                clocks[broker] += delta
                return {"broker": broker, "now_ms": clocks[broker]}
            # Broken on purpose: the contract's field is now_ms.
            return {"broker": broker, "now": clocks[broker]}
        if segments[0] == "topics":
            if not TOPIC.fullmatch(segments[1]):
                raise Problem(400, "path.topic")
            self._integer(segments[3], "path.partition", INT32_MAX)
            if self.command == "PUT":
                broker = _json_integer(self._body(required=("broker",))["broker"], "body.broker")
                if not 0 <= broker <= INT32_MAX:
                    raise Problem(422, "body.broker")
            raise Problem(404, "path.topic")  # this shim's cluster has no topics
        self._body(required=())
        if segments[0] == "retention":
            return {"segments_deleted": 0}
        clocks.update(dict.fromkeys(BROKERS, START_MS))
        return {"reset": True}


def _json_integer(value: object, field: str) -> int:
    """JSON Schema's integer: 3 and 3.0, not true or 3.5."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise Problem(400, field)
    return value


def _matches(template: tuple[str, ...], segments: tuple[str, ...]) -> bool:
    return len(template) == len(segments) and all(t in ("*", s) for t, s in zip(template, segments, strict=True))


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.clocks = dict.fromkeys(BROKERS, START_MS)


class BrokenControlPlane:
    """The broken control plane on a free loopback port, served from a daemon thread."""

    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> BrokenControlPlane:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=1.0)
