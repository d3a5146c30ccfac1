"""The project's HTTP control plane: capabilities, broker clocks (read, set, advance), leader moves, retention
now and reset, over one `Controlled` (conformance.control.controlled: the reference broker's `ServedCluster`,
Apache Kafka on the suite's clock in conformance.targets.brokers.kafka_control, or franz-go's kfake), as the
OpenAPI document beside this module (openapi.json, served at GET /openapi.json) describes them.

Why the standard library's `http.server` (ThreadingHTTPServer) and not a web framework: the API is eight
small JSON routes on loopback, the reference broker must start in any environment the suite runs in
(no extra dependency, no event loop to share with the Kafka listeners), and owning the request loop is
what lets this server promise what the contract asks of every control plane: a socket timeout on every
read, a body limit checked before reading, a Content-Length that lies answered with a 4xx, and
problem+json for every error, the protocol-level ones (bad request line, oversized headers) included.

The request constraints are not restated here: the validator below reads them from the OpenAPI document
(types, minimum/maximum, minLength/maxLength, pattern, required, additionalProperties false), so the
document schemathesis checks against and the server cannot drift apart; a keyword it does not know
stops the control plane from starting.

Errors: a schema violation is 400 (a value out of range 422), naming the field ("path.broker",
"body.now_ms", "body", "header.content-type"); what the served cluster refuses (`ControlError`) keeps its
status and field. An unexpected exception is answered 500 and logged with its traceback: that is a bug
in this module, and the schemathesis tests must never see one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import unquote, urlsplit

from conformance.control.controlled import ControlError, Controlled

__all__ = ["MAX_BODY_BYTES", "OPENAPI_PATH", "ControlPlane", "openapi_document"]

OPENAPI_PATH = Path(__file__).with_name("openapi.json")

# Control bodies are a few dozen bytes; anything near this is not a control request. Large enough that no
# generated negative body reaches it (413 is not among the statuses schemathesis expects for bad data).
MAX_BODY_BYTES = 64 * 1024
DEFAULT_READ_TIMEOUT = 5.0

JSON = "application/json"
PROBLEM_JSON = "application/problem+json"
_LOGGER = logging.getLogger("conformance.control.control_plane")


def openapi_document() -> dict[str, Any]:
    """The control plane's OpenAPI 3.1 document (the contract the suite relies on)."""
    loaded: dict[str, Any] = json.loads(OPENAPI_PATH.read_text(encoding="utf-8"))
    return loaded


class _Refused(Exception):
    """A request this module refuses before it reaches the served cluster (a problem+json answer)."""

    def __init__(self, status: int, field: str, detail: str, *, close: bool = False) -> None:
        super().__init__(detail)
        self.status = status
        self.field = field
        self.detail = detail
        self.close = close


# --- the validator: the subset of JSON Schema the document uses, read from the document --------------

_IGNORED_KEYWORDS = frozenset({"description", "example", "examples", "title", "$comment"})


@dataclass(frozen=True)
class _Integer:
    minimum: int | None
    maximum: int | None

    def check(self, value: object, field: str) -> int:
        # JSON Schema: an integer is any number with a zero fractional part (1.0 is an integer); true is not.
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Refused(400, field, f"{field} must be an integer, not {_json_type(value)}")
        if isinstance(value, float):
            if not value.is_integer():
                raise _Refused(400, field, f"{field} must be an integer, not {value!r}")
            value = int(value)
        if (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum):
            raise _Refused(422, field, f"{field} is {value}, outside {self.minimum}..{self.maximum}")
        return value


@dataclass(frozen=True)
class _String:
    min_length: int
    max_length: int | None
    full_match: re.Pattern[str] | None

    def check(self, value: object, field: str) -> str:
        if not isinstance(value, str):
            raise _Refused(400, field, f"{field} must be a string, not {_json_type(value)}")
        if len(value) < self.min_length or (self.max_length is not None and len(value) > self.max_length):
            raise _Refused(400, field, f"{field} must be {self.min_length}..{self.max_length} characters long")
        if self.full_match is not None and not self.full_match.fullmatch(value):
            raise _Refused(400, field, f"{field} {value!r} must match {self.full_match.pattern}")
        return value


@dataclass(frozen=True)
class _Object:
    properties: Mapping[str, _Integer | _String]
    required: tuple[str, ...]

    def check(self, value: object, field: str) -> dict[str, object]:
        if not isinstance(value, dict):
            raise _Refused(400, field, f"the body must be a JSON object, not {_json_type(value)}")
        for name in value:
            if name not in self.properties:
                allowed = ", ".join(self.properties) or "none"
                raise _Refused(400, f"{field}.{name}", f"unknown property {name!r} (properties: {allowed})")
        for name in self.required:
            if name not in value:
                raise _Refused(400, f"{field}.{name}", f"the body needs {name!r}")
        return {name: self.properties[name].check(item, f"{field}.{name}") for name, item in value.items()}


_Schema = _Integer | _String | _Object


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


class _Compiler:
    """Turns the document's request schemas into validators; refuses any keyword it would ignore."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document

    def resolve(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        while "$ref" in node:
            ref = node["$ref"]
            if not ref.startswith("#/"):
                raise ValueError(f"openapi.json: only local $refs are supported, not {ref!r}")
            target: Any = self.document
            for part in ref[2:].split("/"):
                target = target[part]
            node = target
        return node

    def schema(self, node: Mapping[str, Any]) -> _Schema:
        node = self.resolve(node)
        kind = node.get("type")
        if kind == "integer":
            self._known(node, {"type", "minimum", "maximum"})
            return _Integer(node.get("minimum"), node.get("maximum"))
        if kind == "string":
            self._known(node, {"type", "minLength", "maxLength", "pattern"})
            pattern = node.get("pattern")
            full: re.Pattern[str] | None = None
            if pattern is not None:
                # ECMA-262 anchors, read as a full match: Python's `$` would also accept a trailing newline.
                if not (pattern.startswith("^") and pattern.endswith("$")):
                    raise ValueError(f"openapi.json: pattern {pattern!r} must be anchored with ^...$")
                full = re.compile(pattern[1:-1])
            return _String(node.get("minLength", 0), node.get("maxLength"), full)
        if kind == "object":
            self._known(node, {"type", "properties", "required", "additionalProperties"})
            if node.get("additionalProperties") is not False:
                raise ValueError("openapi.json: request objects must set additionalProperties: false")
            properties = {name: self.schema(sub) for name, sub in node.get("properties", {}).items()}
            for name, sub in properties.items():
                if isinstance(sub, _Object):
                    raise ValueError(f"openapi.json: nested object {name!r} is not supported")
            return _Object(properties, tuple(node.get("required", ())))  # type: ignore[arg-type]
        raise ValueError(f"openapi.json: schema type {kind!r} is not supported by the control plane's validator")

    @staticmethod
    def _known(node: Mapping[str, Any], allowed: set[str]) -> None:
        unknown = set(node) - allowed - _IGNORED_KEYWORDS
        if unknown:
            raise ValueError(f"openapi.json: keywords {sorted(unknown)} are not enforced by the control plane")


@dataclass(frozen=True)
class _Operation:
    method: str
    template: tuple[str, ...]  # path segments; "{name}" for a parameter
    operation_id: str
    parameters: Mapping[str, _Schema]
    body: _Object | None
    body_required: bool


def _operations(document: Mapping[str, Any]) -> tuple[_Operation, ...]:
    compiler = _Compiler(document)
    found = []
    for path, item in document["paths"].items():
        shared = item.get("parameters", [])
        for method, spec in item.items():
            if method == "parameters":
                continue
            parameters: dict[str, _Schema] = {}
            for raw in [*shared, *spec.get("parameters", [])]:
                param = compiler.resolve(raw)
                if param["in"] != "path":
                    raise ValueError(f"openapi.json: {param['in']} parameters are not supported")
                parameters[param["name"]] = compiler.schema(param["schema"])
            body: _Object | None = None
            body_required = False
            if "requestBody" in spec:
                request_body = compiler.resolve(spec["requestBody"])
                media = set(request_body["content"])
                if media != {JSON}:
                    raise ValueError(f"openapi.json: request bodies must be {JSON}, not {sorted(media)}")
                schema = compiler.schema(request_body["content"][JSON]["schema"])
                if not isinstance(schema, _Object):
                    raise ValueError(f"openapi.json: the body of {spec['operationId']} must be an object")
                body, body_required = schema, bool(request_body.get("required", False))
            template = tuple(path.strip("/").split("/"))
            found.append(_Operation(method.upper(), template, spec["operationId"], parameters, body, body_required))
    return tuple(found)


# --- the routes ------------------------------------------------------------------------------------


_Handler = Callable[[Controlled, Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]


def _capabilities(served: Controlled, _p: Mapping[str, Any], _b: Mapping[str, Any]) -> dict[str, Any]:
    return {"capabilities": list(served.capabilities()), "brokers": list(served.broker_ids())}


def _clock(served: Controlled, p: Mapping[str, Any], _b: Mapping[str, Any]) -> dict[str, Any]:
    return {"broker": p["broker"], "now_ms": served.clock(p["broker"])}


def _set_clock(served: Controlled, p: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    return {"broker": p["broker"], "now_ms": served.set_clock(p["broker"], b["now_ms"])}


def _advance_clock(served: Controlled, p: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    return {"broker": p["broker"], "now_ms": served.advance_clock(p["broker"], b["delta_ms"])}


def _leader_answer(topic: str, partition: int, leader_and_epoch: tuple[int, int]) -> dict[str, Any]:
    leader, epoch = leader_and_epoch
    return {"topic": topic, "partition": partition, "leader": leader, "leader_epoch": epoch}


def _leader(served: Controlled, p: Mapping[str, Any], _b: Mapping[str, Any]) -> dict[str, Any]:
    return _leader_answer(p["topic"], p["partition"], served.leader(p["topic"], p["partition"]))


def _move_leader(served: Controlled, p: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    moved = served.move_leader(p["topic"], p["partition"], b["broker"])
    return _leader_answer(p["topic"], p["partition"], moved)


def _retention(served: Controlled, _p: Mapping[str, Any], _b: Mapping[str, Any]) -> dict[str, Any]:
    return {"segments_deleted": served.run_retention()}


def _reset(served: Controlled, _p: Mapping[str, Any], _b: Mapping[str, Any]) -> dict[str, Any]:
    served.reset()
    return {"reset": True}


# By operationId: the document names the routes, this table says what each one does.
_HANDLERS: dict[str, _Handler | None] = {
    "getOpenApi": None,  # answered with the document's bytes
    "getCapabilities": _capabilities,
    "getClock": _clock,
    "setClock": _set_clock,
    "advanceClock": _advance_clock,
    "getLeader": _leader,
    "moveLeader": _move_leader,
    "runRetention": _retention,
    "reset": _reset,
}


# --- the HTTP side ---------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, plane: ControlPlane, address: tuple[str, int]) -> None:
        self.plane = plane
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(address, _RequestHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that failed outside a request's answer (socketserver would print a traceback)."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            return  # the client went away or stalled: nothing to answer
        self.plane.log_line(f"connection from {client_address} failed:\n{traceback.format_exc()}")


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: schemathesis sends thousands of requests
    # Headers and body leave in two writes: with Nagle's algorithm the second waits for the client's
    # delayed ACK (40 ms a request on Linux loopback).
    disable_nagle_algorithm = True
    server: _Server
    _started = 0.0

    # StreamRequestHandler applies this socket timeout to every read and write of the connection.
    @property
    def timeout(self) -> float:  # type: ignore[override]
        return self.server.plane.read_timeout

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        super().finish()

    def parse_request(self) -> bool:
        self._started = time.monotonic()
        return super().parse_request()

    def __getattr__(self, name: str) -> Any:
        # Every method reaches the router (405 or 404 as problem+json), never http.server's 501.
        if name.startswith("do_"):
            return self._dispatch
        raise AttributeError(name)

    # -- logging: one line per request, through the plane

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        elapsed_ms = (time.monotonic() - self._started) * 1000 if self._started else 0.0
        status = code.value if isinstance(code, HTTPStatus) else code
        command = getattr(self, "command", None) or "-"
        path = getattr(self, "path", None) or "-"
        self._started = 0.0
        self.server.plane.count_request()
        self.server.plane.log_line(f"{command} {path} {status} {elapsed_ms:.1f} ms")

    def log_message(self, format: str, *args: Any) -> None:
        """http.server's own messages (timeouts, protocol errors) are folded into the request line."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # Protocol-level errors of http.server (bad request line, headers too large, URI too long):
        # problem+json like every other answer, and the connection is closed.
        # http.server answers an HTTP version it does not speak with 505; the contract promises a 4xx for any
        # bad input, and a request line with HTTP/2.0 on an HTTP/1.1 socket is bad input.
        status = HTTPStatus.BAD_REQUEST if code == HTTPStatus.HTTP_VERSION_NOT_SUPPORTED else HTTPStatus(code)
        field = {
            HTTPStatus.REQUEST_URI_TOO_LONG: "path",
            HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE: "headers",
        }.get(status, "request")
        detail = message or status.phrase
        self.close_connection = True
        # A request line http.server cannot read leaves it on HTTP/0.9, which has no status line or headers:
        # answer in HTTP/1.1, so that a client sees the status and the problem.
        if getattr(self, "request_version", "HTTP/0.9") == "HTTP/0.9":
            self.request_version = self.protocol_version
        self._send_problem(status.value, field, f"{detail}: send one HTTP/1.1 request with a valid request line")

    # -- answering

    def _send(self, status: int, content_type: str, body: bytes, headers: Mapping[str, str] = {}) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_json(self, status: int, payload: object) -> None:
        self._send(status, JSON, json.dumps(payload).encode())

    def _send_problem(self, status: int, field: str, detail: str, headers: Mapping[str, str] = {}) -> None:
        problem = {
            "type": "about:blank",
            "title": HTTPStatus(status).phrase,
            "status": status,
            "detail": detail,
            "field": field,
        }
        self._send(status, PROBLEM_JSON, json.dumps(problem).encode(), headers)

    def _dispatch(self) -> None:
        plane = self.server.plane
        try:
            self._answer(plane)
        except _Refused as refused:
            if refused.close:
                self.close_connection = True
            self._send_problem(refused.status, refused.field, refused.detail)
        except ControlError as error:
            self._send_problem(error.status, error.field, error.detail)
        except (ConnectionError, TimeoutError):
            self.close_connection = True
            raise
        except Exception:  # a bug here; never what a client did
            plane.log_line(f"internal error on {self.command} {self.path}:\n{traceback.format_exc()}")
            self.close_connection = True
            self._send_problem(500, "server", "the control plane failed on this request: see its log")

    def _answer(self, plane: ControlPlane) -> None:
        body = self._read_body()
        segments = self._path_segments()
        matches = [op for op in plane.operations if _matches(op.template, segments)]
        if not matches:
            raise _Refused(404, "path", f"no route {urlsplit(self.path).path!r}: see GET /openapi.json")
        operation = next((op for op in matches if op.method == self.command), None)
        if operation is None:
            allowed = ", ".join(sorted({op.method for op in matches}))
            self._send_problem(
                405, "method", f"{self.command} is not allowed here: use {allowed}", headers={"Allow": allowed}
            )
            return
        parameters = {
            name: _path_value(schema, segments[operation.template.index("{" + name + "}")], f"path.{name}")
            for name, schema in operation.parameters.items()
        }
        payload = self._payload(operation, body)
        handler = _HANDLERS[operation.operation_id]
        if handler is None:
            self._send(200, JSON, plane.document_bytes)
            return
        self._send_json(200, handler(plane.served, parameters, payload))

    def _path_segments(self) -> tuple[str, ...]:
        raw = urlsplit(self.path).path
        try:
            return tuple(unquote(part, errors="strict") for part in raw.strip("/").split("/"))
        except UnicodeDecodeError:
            raise _Refused(400, "path", "the path is not percent-encoded UTF-8") from None

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise _Refused(400, "header.transfer-encoding", "send the body with a Content-Length", close=True)
        lengths = self.headers.get_all("Content-Length") or []
        if not lengths:
            return b""
        if len(lengths) > 1 or not _DECIMAL.fullmatch(lengths[0].strip()) or lengths[0].strip().startswith("-"):
            raise _Refused(400, "header.content-length", f"Content-Length {lengths} is not one number", close=True)
        length = int(lengths[0])
        if length > MAX_BODY_BYTES:
            raise _Refused(
                413, "body", f"the body is {length} bytes; a control request is under {MAX_BODY_BYTES}", close=True
            )
        try:
            body = self.rfile.read(length)
        except TimeoutError:
            raise _Refused(
                408, "body", f"the body did not arrive within {self.server.plane.read_timeout} s", close=True
            ) from None
        if len(body) < length:
            raise _Refused(400, "body", f"the body ended after {len(body)} of {length} bytes", close=True)
        return body

    def _payload(self, operation: _Operation, body: bytes) -> dict[str, object]:
        if operation.body is None:
            return {}  # a body on a route without one is read and ignored
        if not body:
            if operation.body_required:
                raise _Refused(400, "body", f"{operation.operation_id} needs a JSON object body")
            return {}
        media_type = self.headers.get("Content-Type", JSON).split(";")[0].strip().lower()
        if media_type != JSON and not media_type.endswith("+json"):
            raise _Refused(415, "header.content-type", f"the body must be {JSON}, not {media_type or 'empty'}")
        try:
            value = json.loads(body.decode("utf-8"), parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as error:
            raise _Refused(400, "body", f"the body is not JSON: {error}") from None
        return operation.body.check(value, "body")


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _matches(template: tuple[str, ...], segments: tuple[str, ...]) -> bool:
    return len(template) == len(segments) and all(
        t.startswith("{") or t == s for t, s in zip(template, segments, strict=True)
    )


_DECIMAL = re.compile(r"-?[0-9]+")


def _path_value(schema: _Schema, raw: str, field: str) -> object:
    """A path segment read as its parameter's schema says; any violation is 400 (a malformed URL)."""
    if isinstance(schema, _Integer):
        if not _DECIMAL.fullmatch(raw) or len(raw) > 20:
            raise _Refused(400, field, f"{field} must be a decimal integer, not {raw!r}")
        try:
            return schema.check(int(raw), field)
        except _Refused as refused:
            raise _Refused(400, field, refused.detail) from None
    return schema.check(raw, field)


class ControlPlane:
    """The HTTP control plane over `served`, on `host`:`port` (0: a free port), served from a daemon
    thread between `start()` and `stop()`. One log line per request goes to `log` (a logger, a text
    stream, or this module's logger when None)."""

    def __init__(
        self,
        served: Controlled,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        log: logging.Logger | TextIO | None = None,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
    ) -> None:
        self.served = served
        self.host = host
        self.port = port
        self.read_timeout = read_timeout
        self.document_bytes = OPENAPI_PATH.read_bytes()
        self.operations = _operations(json.loads(self.document_bytes))
        missing = {op.operation_id for op in self.operations} ^ set(_HANDLERS)
        if missing:
            raise ValueError(f"openapi.json and the control plane's routes differ on {sorted(missing)}")
        self._log = log if log is not None else _LOGGER
        self._log_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._requests = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> ControlPlane:
        if self._server is not None:
            raise RuntimeError("the control plane is already started")
        self._server = _Server(self, (self.host, self.port))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, name="control-plane", daemon=True
        )
        self._thread.start()
        return self

    @property
    def address(self) -> tuple[str, int]:
        if self._server is None:
            raise RuntimeError("the control plane is not started: call start() first")
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}"

    def stop(self) -> None:
        """Stop serving (within a second): the listener closes and open connections are shut down."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        with server.connections_lock:
            open_connections = list(server.connections)
        for connection in open_connections:
            with contextlib.suppress(OSError):  # already closed by its client
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    # -- what the handlers report

    @property
    def requests_served(self) -> int:
        """Requests answered since start (every method and path, errors included)."""
        return self._requests

    def count_request(self) -> None:
        with self._count_lock:
            self._requests += 1

    def log_line(self, line: str) -> None:
        if isinstance(self._log, logging.Logger):
            self._log.info("control: %s", line)
            return
        with self._log_lock:
            self._log.write(f"control: {line}\n")
            self._log.flush()
