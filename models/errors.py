"""Exceptions of the reference model.

`CodecError` is the one documented exception the byte codec raises for bad input (truncated
bytes, bad CRC, unknown magic, unknown codec bits, a length that lies, a varint that runs off
the end). It always names the field and the absolute byte offset where decoding stopped, so a
conformance failure can point at the exact byte of a broker's response.
"""

from __future__ import annotations


class ModelError(Exception):
    """Base class of every exception raised by `models`."""


class CodecError(ModelError):
    """Bytes that do not decode as a Kafka record batch (FMT-*).

    Attributes: `field` (e.g. ``"crc"``, ``"magic"``, ``"length"``), `offset` (absolute byte offset
    into the buffer given to the decoder) and `reason` (one sentence).
    """

    def __init__(self, field: str, offset: int, reason: str) -> None:
        self.field = field
        self.offset = offset
        self.reason = reason
        super().__init__(f"cannot decode field {field!r} at byte {offset}: {reason}")


class BuildError(ModelError):
    """A batch that the Java record builders refuse to write (FMT-8, VAL-15): e.g. a timestamp < -1."""


class IndexError_(ModelError):
    """Base of time-index / offset-index failures (IDX-3)."""


class InvalidOffsetError(IndexError_):
    """An index append with an offset smaller than the last entry's (IDX-3, `InvalidOffsetException`)."""


class IndexTimestampOrderError(IndexError_):
    """An index append with a timestamp smaller than the last entry's (IDX-3, `IllegalStateException`)."""


class IndexFullError(IndexError_):
    """An append to a full index without the skip-full-check flag (IDX-3, `IllegalArgumentException`)."""


class ConfigError(ModelError):
    """A topic configuration that the profile does not know or that is out of range (VAL-6)."""
