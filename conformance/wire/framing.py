"""Kafka's framing on a blocking socket: every request and every response is ``size int32 | frame``, the size
big-endian and counting the bytes that follow it.

`read_frame` reads one frame (its size checked against the caller's bounds) and returns it without the prefix,
`recv_exactly` reads n bytes, `send_all` writes bytes that are already framed and `write_frame` frames and writes.
The standard library only, so that a broker's readiness probe needs nothing else installed.

How a call waits, by the arguments it is given:
- neither `deadline` nor `stop`: the socket's own timeout bounds each recv, and its TimeoutError propagates (the
  reference broker's idle clients, the managed brokers' readiness probe);
- `deadline` (a `time.monotonic()` instant): the whole read or write must be done by then; each socket call may
  wait what remains, and running out raises FrameTimeout (the wire client's round trips);
- `stop` (a relay's socket, polling with a short timeout): a call that times out looks at `stop` and waits again,
  a set `stop` raises Stopped, and a socket error while reading ends the stream as EOF does (a relayed
  connection that a peer resets has ended); with a `deadline` as well, the call gives up once it passes.

Any other socket error (OSError) propagates. The peer closing the stream raises StreamEnded, saying how far it
got; a size out of bounds raises FrameSizeError with the bytes it was read from, which tell what a listener that
is not Kafka answered ("HTTP" reads as a size of 1 213 486 160).
"""

from __future__ import annotations

import socket
import struct
import threading
import time

__all__ = [
    "FRAME",
    "REQUEST_HEAD",
    "SIZE",
    "SIZE_PREFIX",
    "FrameError",
    "FrameSizeError",
    "FrameTimeout",
    "Stopped",
    "StreamEnded",
    "read_frame",
    "recv_exactly",
    "send_all",
    "write_frame",
]

SIZE = struct.Struct(">i")
# api_key int16, api_version int16, correlation_id int32: the fixed start of every request header version.
REQUEST_HEAD = struct.Struct(">hhi")

# The parts of a frame an error can name.
SIZE_PREFIX = "size"
FRAME = "frame"

_CHUNK = 1 << 20  # the most one recv asks for


class FrameError(Exception):
    """A frame could not be read or written: `done` of the `expected` bytes of `part` (SIZE_PREFIX or FRAME)
    had been moved."""

    def __init__(self, message: str, *, part: str, done: int, expected: int) -> None:
        super().__init__(message)
        self.part = part
        self.done = done
        self.expected = expected


class StreamEnded(FrameError):
    """The peer closed the stream (or, on a relay's socket, the stream failed) before the bytes asked for."""

    def __init__(self, part: str, done: int, expected: int) -> None:
        super().__init__(f"end of stream after {done} of {expected} bytes", part=part, done=done, expected=expected)

    @property
    def between_frames(self) -> bool:
        """Whether the stream ended where a frame would start: a peer that is done, not one cut off."""
        return self.part == SIZE_PREFIX and self.done == 0


class FrameTimeout(FrameError):
    """The `deadline` passed before the bytes were moved."""

    def __init__(self, part: str, done: int, expected: int) -> None:
        super().__init__(f"timed out after {done} of {expected} bytes", part=part, done=done, expected=expected)


class Stopped(FrameError):
    """`stop` was set: the relay is shutting down."""

    def __init__(self, part: str, done: int, expected: int) -> None:
        super().__init__(f"stopped after {done} of {expected} bytes", part=part, done=done, expected=expected)


class FrameSizeError(FrameError):
    """A size prefix outside the caller's bounds: `size`, read from the four bytes `head`."""

    def __init__(self, size: int, head: bytes, min_size: int, max_size: int) -> None:
        super().__init__(
            f"a frame size of {size} bytes (first bytes {head!r}) is not within {min_size}..{max_size}",
            part=SIZE_PREFIX,
            done=len(head),
            expected=SIZE.size,
        )
        self.size = size
        self.head = head


def _ready(
    sock: socket.socket, deadline: float | None, stop: threading.Event | None, part: str, done: int, expected: int
) -> None:
    """Before each socket call: give up when stopping or past the deadline, else bound the call by what remains."""
    if stop is not None and stop.is_set():
        raise Stopped(part, done, expected)
    if deadline is not None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise FrameTimeout(part, done, expected)
        if stop is None:  # a polling socket keeps its short timeout
            sock.settimeout(remaining)


def recv_exactly(
    sock: socket.socket,
    n: int,
    *,
    part: str = FRAME,
    deadline: float | None = None,
    stop: threading.Event | None = None,
) -> bytes:
    """Exactly `n` bytes from `sock`, waiting as the module docstring says; `part` names them in errors."""
    data = bytearray()
    while len(data) < n:
        _ready(sock, deadline, stop, part, len(data), n)
        try:
            chunk = sock.recv(min(n - len(data), _CHUNK))
        except TimeoutError:
            if stop is not None:
                continue  # polling: look at `stop` (and the deadline) again
            if deadline is not None:
                raise FrameTimeout(part, len(data), n) from None
            raise
        except OSError:
            if stop is None:
                raise
            chunk = b""  # a relayed stream that fails has ended
        if not chunk:
            raise StreamEnded(part, len(data), n)
        data += chunk
    return bytes(data)


def read_frame(
    sock: socket.socket,
    *,
    min_size: int,
    max_size: int,
    deadline: float | None = None,
    stop: threading.Event | None = None,
) -> bytes:
    """The next frame from `sock`, without its size prefix; FrameSizeError when the size is not within
    `min_size`..`max_size`, StreamEnded when the peer closes first (`between_frames` where a frame would start)."""
    head = recv_exactly(sock, SIZE.size, part=SIZE_PREFIX, deadline=deadline, stop=stop)
    (size,) = SIZE.unpack(head)
    if not min_size <= size <= max_size:
        raise FrameSizeError(size, head, min_size, max_size)
    return recv_exactly(sock, size, part=FRAME, deadline=deadline, stop=stop)


def send_all(
    sock: socket.socket, data: bytes, *, deadline: float | None = None, stop: threading.Event | None = None
) -> None:
    """Write all of `data` (one or more frames, prefixes included), waiting as the module docstring says."""
    if deadline is None and stop is None:
        sock.sendall(data)
        return
    view = memoryview(data)
    while view:
        _ready(sock, deadline, stop, FRAME, len(data) - len(view), len(data))
        try:
            sent = sock.send(view)
        except TimeoutError:
            if stop is not None:
                continue  # polling: look at `stop` (and the deadline) again
            raise FrameTimeout(FRAME, len(data) - len(view), len(data)) from None
        view = view[sent:]


def write_frame(
    sock: socket.socket, frame: bytes, *, deadline: float | None = None, stop: threading.Event | None = None
) -> None:
    """Write `frame` behind its size prefix."""
    send_all(sock, SIZE.pack(len(frame)) + frame, deadline=deadline, stop=stop)
