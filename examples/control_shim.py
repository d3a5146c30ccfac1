"""A minimal control plane (docs/control-plane.md), standard library only: the HTTP API the
suite calls (conformance/control/openapi.json) around a fake's clocks, leaders and retention. Replace `Fake`
with calls into your implementation and keep the rest. Run it, check it, then use it:

    python examples/control_shim.py 8081
    kafka-conformance check-control http://127.0.0.1:8081
    kafka-conformance run --target broker --bootstrap-servers HOST:PORT --control-url http://127.0.0.1:8081
"""

import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

MAX_MS, MAX_ID = 2**53 - 1, 2**31 - 1


class Fake:  # stands in for your fake: three brokers' clocks, partition leaders, retention
    def __init__(self) -> None:
        self.clocks = {broker: 1_700_000_000_000 for broker in (0, 1, 2)}
        self.leaders: dict[tuple[str, int], tuple[int, int]] = {}  # (topic, partition): (leader, epoch)

    def run_retention(self) -> int:
        return 0  # segments deleted


class Problem(Exception):  # answered as application/problem+json: status, field, detail
    pass


def integer(value: object, field: str, low: int, high: int) -> int:
    path = field.startswith("path.")
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON Schema's integer: 5.0 is one
    if path and isinstance(value, str) and re.fullmatch(r"\d{1,16}", value):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise Problem(400 if path else 422, field, f"{value!r} is not an integer")
    if not low <= value <= high:
        raise Problem(404 if path else 422, field, f"{value} is outside {low}..{high}")
    return value


ROUTES = {  # path pattern: {method: Shim's handler}
    r"/capabilities": {"GET": "capabilities"},
    r"/openapi\.json": {"GET": "openapi"},
    r"/brokers/([^/]*)/clock": {"GET": "clock", "PUT": "set_clock"},
    r"/brokers/([^/]*)/clock/advance": {"POST": "advance_clock"},
    r"/topics/([^/]*)/partitions/([^/]*)/leader": {"GET": "leader", "PUT": "move_leader"},
    r"/retention": {"POST": "retention"},
    r"/reset": {"POST": "reset"},
}


class Shim(BaseHTTPRequestHandler):
    fake = Fake()
    timeout = 5  # seconds a client may take to send its request

    def capabilities(self) -> dict:
        return {"capabilities": ["clock-control", "leader-failover", "retention"], "brokers": sorted(self.fake.clocks)}

    def openapi(self) -> dict:
        from importlib.resources import files  # the suite's copy of the contract

        return json.loads(files("conformance").joinpath("control/openapi.json").read_text("utf-8"))

    def clock(self, broker: str | int) -> dict:
        b = integer(broker, "path.broker", 0, MAX_ID)
        if b not in self.fake.clocks:
            raise Problem(404, "path.broker", f"no broker {b}: the brokers are {sorted(self.fake.clocks)}")
        return {"broker": b, "now_ms": self.fake.clocks[b]}

    def set_clock(self, broker: str) -> dict:
        b = self.clock(broker)["broker"]
        self.fake.clocks[b] = integer(self.body("now_ms")["now_ms"], "body.now_ms", 0, MAX_MS)
        return self.clock(b)

    def advance_clock(self, broker: str) -> dict:
        b = self.clock(broker)["broker"]
        delta = integer(self.body("delta_ms")["delta_ms"], "body.delta_ms", -MAX_MS, MAX_MS)
        self.fake.clocks[b] = integer(self.fake.clocks[b] + delta, "body.delta_ms", 0, MAX_MS)
        return self.clock(b)

    def leader(self, topic: str, partition: str | int) -> dict:
        key = (unquote(topic), integer(partition, "path.partition", 0, MAX_ID))
        if key not in self.fake.leaders:
            raise Problem(404, "path.topic", f"no partition {key[1]} of topic {key[0]!r}: create it over Kafka first")
        return {"topic": key[0], "partition": key[1], "leader": self.fake.leaders[key][0],
                "leader_epoch": self.fake.leaders[key][1]}

    def move_leader(self, topic: str, partition: str) -> dict:
        key = (answer := self.leader(topic, partition))["topic"], answer["partition"]
        to = integer(self.body("broker")["broker"], "body.broker", 0, MAX_ID)
        if to not in self.fake.clocks:
            raise Problem(422, "body.broker", f"no broker {to}: the brokers are {sorted(self.fake.clocks)}")
        self.fake.leaders[key] = (to, answer["leader_epoch"] + 1)  # here your fake moves the leader
        return self.leader(*key)

    def retention(self) -> dict:
        self.body()
        return {"segments_deleted": self.fake.run_retention()}

    def reset(self) -> dict:
        self.body()
        type(self).fake = Fake()
        return {"reset": True}

    def body(self, *names: str) -> dict:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if raw and self.headers.get_content_type() != "application/json":
            raise Problem(415, "header.content-type", "send the body as application/json")
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            raise Problem(400, "body", "the body is not JSON") from None
        if not isinstance(body, dict):
            raise Problem(400, "body", "the body is not a JSON object")
        for name in sorted(set(body) ^ set(names)):
            raise Problem(400 if name in body else 422, f"body.{name}", "unknown" if name in body else "required")
        return body

    def __getattr__(self, name: str):  # do_GET, do_PUT, do_TRACE, ...: every HTTP method is answered
        if name.startswith("do_"):
            return lambda: self.answer(name[3:])
        raise AttributeError(name)

    def answer(self, method: str) -> None:
        path, headers = urlsplit(self.path).path, {}
        try:
            for pattern, methods in ROUTES.items():
                if found := re.fullmatch(pattern, path):
                    if method not in methods:
                        headers["Allow"] = ", ".join(methods)
                        raise Problem(405, "method", f"{method} is not allowed here: use {headers['Allow']}")
                    status, kind, answer = 200, "application/json", getattr(self, methods[method])(*found.groups())
                    break
            else:
                raise Problem(404, "path", f"no route {path!r}: see GET /openapi.json")
        except Problem as problem:
            status, field, detail = problem.args
            kind, answer = "application/problem+json", {"type": "about:blank", "title": "refused", "status": status,
                                                        "detail": detail, "field": field}
        data = json.dumps(answer).encode()
        self.send_response(status)
        for name, value in {**headers, "Content-Type": kind, "Content-Length": str(len(data))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 8081), Shim).serve_forever()
