"""A loopback relay of the Kafka protocol: a client connects to it as to a broker, and it passes every request
on to that broker and every answer back, frame by frame, letting its owner look at (and change) each.

Its owners are the client tap (conformance/targets/routes/wire_adapter/tap.py: what a broker answered a client library)
and the wire-fault proxy of the project's tests (tests/wirefaults/proxy.py: one bug put into a real broker's answers).
Each gives two hooks: `on_request(api_key, version, frame)` returns what to keep of a request until its answer (a
decoded request, or None), and `on_answer(asked, frame)` returns the answer frame to pass on, given the request it
answers (paired by correlation id). A frame is passed whole, size prefix included; a request is passed on byte for byte,
an answer as the hook returns it; an answer to a request the relay did not see (none: a broker answers only what it is
asked) is passed on as it came.

One listener per upstream broker, on 127.0.0.1 at a free port (`listen(upstream)`, idempotent). Threads: one
accepts per listener (polling with a short timeout) and each relayed connection has one per direction; every
socket has a timeout. `stop()` closes every listener and connection and joins every thread. A failure inside the
relay (a frame that is not Kafka, a hook that raises) closes that connection and is kept in `errors`: a broken
relay must not pass for a broken peer.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from conformance.wire.connection import MAX_RESPONSE_BYTES
from conformance.wire.framing import (
    REQUEST_HEAD,
    SIZE,
    SIZE_PREFIX,
    FrameSizeError,
    FrameTimeout,
    Stopped,
    StreamEnded,
    read_frame,
    send_all,
)

__all__ = ["LOOPBACK", "Asked", "OnAnswer", "OnRequest", "Relay", "RelayError"]

LOOPBACK = "127.0.0.1"
_POLL = 0.2  # how often a blocked socket call wakes up to see whether the relay is stopping


class RelayError(Exception):
    """The relay could not relay a frame, or did not stop in time."""


@dataclass(frozen=True)
class Asked:
    """A request relayed and not answered yet: its API, its version and what `on_request` kept of it."""

    api_key: int
    version: int
    request: Any


OnRequest = Callable[[int, int, bytes], Any]
OnAnswer = Callable[[Asked, bytes], bytes]


class Relay:
    """Relays loopback ports to upstream brokers through `on_request` and `on_answer`. `name` names its threads
    and its messages ("tap threads still running ..."); `error` is the exception class it raises, its owner's."""

    def __init__(
        self,
        on_request: OnRequest,
        on_answer: OnAnswer,
        *,
        timeout: float,
        name: str,
        error: type[RelayError] = RelayError,
    ) -> None:
        self.timeout = timeout
        self.name = name
        self.errors: list[str] = []
        self.connections = 0
        self._on_request = on_request
        self._on_answer = on_answer
        self._error = error
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._listeners: dict[tuple[str, int], tuple[socket.socket, int]] = {}  # upstream -> (listener, port)
        self._sockets: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []

    # -- lifecycle

    def listen(self, upstream: tuple[str, int]) -> int:
        """The relay's port for `upstream`, listening from the first time that broker is named."""
        with self._lock:
            known = self._listeners.get(upstream)
            if known is not None:
                return known[1]
            if self._stopping.is_set():
                raise self._error(f"the {self.name} is stopped")
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((LOOPBACK, 0))
            listener.listen(16)
            listener.settimeout(_POLL)
            port = int(listener.getsockname()[1])
            self._listeners[upstream] = (listener, port)
        self._spawn(self._accept_loop, f"accept-{port}", listener, upstream)
        return port

    def stop(self) -> None:
        """Close every listener and connection, and join every thread (idempotent)."""
        self._stopping.set()
        with self._lock:
            sockets = [listener for listener, _ in self._listeners.values()] + list(self._sockets)
            self._sockets.clear()
        for sock in sockets:
            _close(sock)
        deadline = time.monotonic() + self.timeout
        # An accept loop still starting a connection's pumps when stop() began spawns them after it: join until no
        # thread is left unjoined (the accept loops end on _stopping, so the set is finite).
        joined = {threading.current_thread()}
        while True:
            with self._lock:
                pending = [t for t in self._threads if t not in joined]
            if not pending:
                break
            for thread in pending:
                thread.join(max(0.0, deadline - time.monotonic()))
                joined.add(thread)
        alive = [t.name for t in self._threads if t.is_alive()]
        if alive:
            raise self._error(f"{self.name} threads still running after {self.timeout:g} s: {', '.join(alive)}")

    def _spawn(self, target: Callable[..., None], name: str, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, name=f"{self.name}-{name}", daemon=True)
        with self._lock:  # started before stop() can see it: a thread not started yet cannot be joined
            self._threads.append(thread)
            thread.start()

    def _track(self, *socks: socket.socket) -> bool:
        with self._lock:
            if self._stopping.is_set():
                return False
            self._sockets.update(socks)
            return True

    def _fail(self, what: str) -> None:
        with self._lock:
            self.errors.append(what)

    # -- connections

    def _accept_loop(self, listener: socket.socket, upstream: tuple[str, int]) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed by stop()
            client.settimeout(_POLL)
            try:
                broker = socket.create_connection(upstream, timeout=self.timeout)
            except OSError as exc:
                self._fail(f"cannot reach the broker at {upstream[0]}:{upstream[1]}: {exc}")
                _close(client)
                continue
            broker.settimeout(_POLL)
            if not self._track(client, broker):
                _close(client)
                _close(broker)
                return
            with self._lock:
                self.connections += 1
                number = self.connections
            pending: dict[int, Asked] = {}  # by correlation id
            self._spawn(self._pump, f"{number}-requests", "a request", client, broker, partial(self._asked, pending))
            self._spawn(self._pump, f"{number}-answers", "an answer", broker, client, partial(self._answered, pending))

    def _asked(self, pending: dict[int, Asked], frame: bytes) -> bytes:
        api_key, version, correlation_id = REQUEST_HEAD.unpack_from(frame, SIZE.size)
        request = self._on_request(api_key, version, frame)
        with self._lock:
            pending[correlation_id] = Asked(api_key, version, request)
        return frame

    def _answered(self, pending: dict[int, Asked], frame: bytes) -> bytes:
        (correlation_id,) = SIZE.unpack_from(frame, SIZE.size)  # the response header starts with it
        with self._lock:
            asked = pending.pop(correlation_id, None)
        return frame if asked is None else self._on_answer(asked, frame)

    def _pump(
        self, what: str, source: socket.socket, sink: socket.socket, handle: Callable[[bytes], bytes]
    ) -> None:
        """Relay every frame from `source` to `sink` as `handle` returns it; on any end, close both."""
        try:
            for frame in self._frames(source):
                self._send(sink, handle(frame))
        except Exception as exc:
            if not self._stopping.is_set():
                self._fail(f"relaying {what}: {type(exc).__name__}: {exc}")
        finally:
            _close(source)
            _close(sink)

    # -- frames

    def _frames(self, sock: socket.socket) -> Iterator[bytes]:
        """Whole frames, size prefix included, until the stream ends (quietly outside a frame) or the relay stops."""
        while True:
            try:
                body = read_frame(sock, min_size=4, max_size=MAX_RESPONSE_BYTES, stop=self._stopping)
            except Stopped:
                return
            except StreamEnded as ended:
                if ended.part == SIZE_PREFIX:
                    return
                raise self._error(f"the stream ended inside a {ended.expected}-byte frame") from None
            except FrameSizeError as bad:
                raise self._error(f"a frame size of {bad.size} bytes is not Kafka") from None
            yield SIZE.pack(len(body)) + body

    def _send(self, sock: socket.socket, frame: bytes) -> None:
        try:
            send_all(sock, frame, deadline=time.monotonic() + self.timeout, stop=self._stopping)
        except Stopped:
            return
        except FrameTimeout as late:
            left = late.expected - late.done
            raise self._error(f"the peer did not take {left} bytes within {self.timeout:g} s") from None


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
