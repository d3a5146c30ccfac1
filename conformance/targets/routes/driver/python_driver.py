"""The Python driver: any of the project's in-process client or codec adapters served over the driver protocol
(docs/driver-protocol.md), so that a Python library runs at another version or from a local checkout in a process
of its own (driver_builds.build_python_driver puts that version first on its path), and so that the reference
client and codec (`model`) speak the protocol too: the suite's own check of its side of it.

    python -m conformance.targets.routes.driver.python_driver LIBRARY

One request at a time from stdin, one answer per line on stdout, the adapter's own logging on stderr.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from conformance.targets.kinds.client_library import (
    ClientFailed,
    ClientLibrary,
    ClientRefused,
    ClientUnavailable,
)
from conformance.targets.kinds.codec_library import CodecRefused, CodecUnavailable, RecordCodecLibrary
from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE
from conformance.targets.libraries import LIBRARIES
from conformance.targets.routes.driver import PROTOCOL_VERSION
from conformance.targets.routes.driver.driver_values import (
    CODEC_OF,
    CODECS,
    SPEC_OF,
    answer_json,
    b64,
    batch_request_of,
    outcome_json,
    outgoing_of,
    read_batch_json,
    record_json,
    unb64,
)


class BadRequest(Exception):
    """A request the driver does not understand: answered `bad-request`."""


class Unsupported(Exception):
    """An operation the adapter cannot do: answered `unsupported`."""


def _adapter(where: str) -> Any:
    module, _, cls = where.partition(":")
    return getattr(importlib.import_module(module), cls)


class PythonDriver:
    """The state of one driver process: the adapter, once hello has made it."""

    def __init__(self, library: str) -> None:
        self.library = library
        self.client: ClientLibrary | None = None
        self.codec: RecordCodecLibrary | None = None

    def hello(self, request: Mapping[str, Any]) -> dict[str, Any]:
        if request.get("protocol") != PROTOCOL_VERSION:
            raise BadRequest(f"this driver speaks protocol {PROTOCOL_VERSION}, not {request.get('protocol')}")
        role = request.get("role")
        timeout = int(request["timeout_ms"]) / 1000
        row = LIBRARIES.get(self.library)
        adapter = row.adapter(role) if row is not None and isinstance(role, str) else None
        if role == CLIENT_ROLE and adapter is not None:
            client: ClientLibrary = _adapter(adapter)(request["bootstrap"], timeout=timeout)
            self.client = client
            return {
                "protocol": PROTOCOL_VERSION, "library": self.library, "version": client.version or "unknown",
                "language": "python", "capabilities": sorted(c.value for c in client.capabilities),
                "codecs": sorted(CODECS[c] for c in client.codecs),
            }  # fmt: skip
        if role == CODEC_ROLE and adapter is not None:
            codec: RecordCodecLibrary = _adapter(adapter)()
            self.codec = codec
            return {
                "protocol": PROTOCOL_VERSION, "library": self.library, "version": codec.version or "unknown",
                "language": "python", "capabilities": sorted(c.value for c in codec.capabilities),
                "codecs": sorted(CODECS[c] for c in codec.codecs), "build_magics": sorted(codec.build_magics),
                "read_magics": sorted(codec.read_magics),
            }  # fmt: skip
        raise Unsupported(f"{self.library} does not play the {role} role in this driver")

    # -- client

    def _client(self) -> ClientLibrary:
        if self.client is None:
            raise BadRequest("a client operation before hello with role client")
        return self.client

    def send(self, r: Mapping[str, Any]) -> dict[str, Any]:
        outcomes = self._client().send(
            r["topic"], r["partition"], [outgoing_of(o) for o in r["records"]], codec=CODEC_OF[r["codec"]]
        )
        return {"outcomes": [outcome_json(o) for o in outcomes]}

    def consume(self, r: Mapping[str, Any]) -> dict[str, Any]:
        records = self._client().consume(r["topic"], r["partition"], r["offset"], until=r["until"])
        return {"records": [record_json(c) for c in records]}

    def offsets_for_times(self, r: Mapping[str, Any]) -> dict[str, Any]:
        return {"answer": answer_json(self._client().offsets_for_times(r["topic"], r["partition"], r["target"]))}

    def list_offsets(self, r: Mapping[str, Any]) -> dict[str, Any]:
        answer = self._client().list_offsets(r["topic"], r["partition"], SPEC_OF[r["spec"]])
        return {"offset": answer.offset, "timestamp": answer.timestamp}

    def seek_by_time(self, r: Mapping[str, Any]) -> dict[str, Any]:
        answer, record = self._client().seek_by_time(r["topic"], r["partition"], r["target"], until=r["until"])
        return {"answer": answer_json(answer), "record": None if record is None else record_json(record)}

    # -- codec

    def _codec(self) -> RecordCodecLibrary:
        if self.codec is None:
            raise BadRequest("a codec operation before hello with role codec")
        return self.codec

    def build(self, r: Mapping[str, Any]) -> dict[str, Any]:
        return {"data": b64(self._codec().build(batch_request_of(r)))}

    def read(self, r: Mapping[str, Any]) -> dict[str, Any]:
        return {"batches": [read_batch_json(b) for b in self._codec().read(unb64(r["data"]) or b"")]}

    def convert(self, r: Mapping[str, Any]) -> dict[str, Any]:
        data = self._codec().convert(unb64(r["data"]) or b"", to_magic=r["to_magic"], first_offset=r["first_offset"])
        return {"data": b64(data)}

    def close(self) -> None:
        for library in (self.client, self.codec):
            if library is not None:
                library.close()
        self.client = self.codec = None

    def operations(self) -> dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]]:
        return {
            "hello": self.hello, "send": self.send, "consume": self.consume,
            "offsets_for_times": self.offsets_for_times, "list_offsets": self.list_offsets,
            "seek_by_time": self.seek_by_time, "build": self.build, "read": self.read, "convert": self.convert,
        }  # fmt: skip


def _error(kind: str, exc: BaseException, **more: Any) -> dict[str, Any]:
    return {"type": kind, "kind": getattr(exc, "kind", type(exc).__name__), "message": str(exc)[:2000], **more}


def answer(driver: PythonDriver, line: str) -> tuple[dict[str, Any], bool]:
    """The answer to one line, and whether the driver should exit after it."""
    try:
        request = json.loads(line)
        if not isinstance(request, dict) or not isinstance(request.get("id"), int):
            raise ValueError("not a request object with an integer id")
    except ValueError as exc:
        return {"id": 0, "error": {"type": "bad-request", "kind": "MalformedLine", "message": str(exc)}}, False
    request_id, op = request["id"], request.get("op")
    if op == "close":
        driver.close()
        return {"id": request_id, "ok": {}}, True
    handler = driver.operations().get(str(op))
    if handler is None:
        return {"id": request_id, "error": {"type": "bad-request", "kind": "UnknownOp", "message": f"op {op!r}"}}, False
    try:
        return {"id": request_id, "ok": handler(request)}, False
    except (BadRequest, KeyError, TypeError) as exc:
        return {"id": request_id, "error": _error("bad-request", exc)}, False
    except (Unsupported, ClientUnavailable, CodecUnavailable) as exc:
        return {"id": request_id, "error": _error("unsupported", exc)}, False
    except (ClientRefused, CodecRefused) as exc:
        refusal = {"type": "refused", "kind": getattr(exc, "kind", type(exc).__name__), "message": str(exc)}
        return {"id": request_id, "error": refusal}, False
    except ClientFailed as exc:
        delivered = [record_json(r) for r in exc.delivered]
        return {"id": request_id, "error": _error("failed", exc, delivered=delivered)}, False
    except Exception as exc:  # the library's own failure, as a value (docs/driver-protocol.md)
        return {"id": request_id, "error": _error("failed", exc)}, False


def serve(library: str, source: TextIO, sink: TextIO) -> None:
    driver = PythonDriver(library)
    try:
        for line in source:
            if not line.strip():
                continue
            reply, done = answer(driver, line)
            sink.write(json.dumps(reply, separators=(",", ":")) + "\n")
            sink.flush()
            if done:
                return
    finally:
        driver.close()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m conformance.targets.routes.driver.python_driver LIBRARY", file=sys.stderr)
        return 2
    # The adapters' own prints must not reach the protocol's stdout.
    out, sys.stdout = sys.stdout, sys.stderr
    serve(argv[0], sys.stdin, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
