"""A driver as a record codec library (conformance.targets.kinds.codec_library.RecordCodecLibrary): build, read
and convert are requests of the driver protocol's codec role. A `refused` answer is the library's CodecRefused;
`unsupported` is UNSUPPORTED; `failed` is the library's own failure, raised as it is (a reader that throws on
bytes the model reads is what a codec suite judges)."""

from __future__ import annotations

from typing import NoReturn

from conformance.judging.capabilities import Capability, CodecCapability
from conformance.targets.kinds.codec_library import BatchRequest, CodecRefused, ReadBatch
from conformance.targets.kinds.implementation import UnsupportedOperation
from conformance.targets.kinds.library import CODEC_ROLE
from conformance.targets.routes.driver.driver_process import DriverAdapter, DriverAnswered
from conformance.targets.routes.driver.driver_values import b64, batch_request_json, read_batch_of, unb64


class DriverCodecFailed(Exception):
    """The library failed an operation (its exception, as the driver reported it)."""


class DriverCodec(DriverAdapter):
    """The record layer a driver drives."""

    role = CODEC_ROLE
    known = CodecCapability
    capabilities: frozenset[CodecCapability]

    @property
    def build_magics(self) -> frozenset[int]:
        return frozenset(int(m) for m in self.hello.get("build_magics", ()))

    @property
    def read_magics(self) -> frozenset[int]:
        return frozenset(int(m) for m in self.hello.get("read_magics", ()))

    def failed(self, answered: DriverAnswered) -> NoReturn:
        _raise(answered)

    def build(self, request: BatchRequest) -> bytes:
        return unb64(self._ask("build", **batch_request_json(request))["data"]) or b""

    def read(self, data: bytes) -> tuple[ReadBatch, ...]:
        return tuple(read_batch_of(b) for b in self._ask("read", data=b64(data))["batches"])

    def convert(self, data: bytes, *, to_magic: int, first_offset: int = 0) -> bytes:
        answer = self._ask("convert", data=b64(data), to_magic=to_magic, first_offset=first_offset)
        return unb64(answer["data"]) or b""


def _raise(answered: DriverAnswered) -> NoReturn:
    if answered.type == "refused":
        raise CodecRefused(f"{answered.kind}: {answered.message}".strip(": "))
    if answered.type == "unsupported":
        raise UnsupportedOperation(Capability.CODEC, f"{answered.op}: {answered.message or answered.kind}")
    raise DriverCodecFailed(f"{answered.kind}: {answered.message}".strip(": "))
