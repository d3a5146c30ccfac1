"""A driver as a client library (conformance.targets.kinds.client_library.ClientLibrary): every operation is one
request of the driver protocol, every answer the model's types (driver_values.py).

A consumed record's timestamp type is the driver's where its hello declares `timestamp-type`, None (no type: the
library exposes none) otherwise. What a driver's error values become: `failed` a ClientFailed (the records a failed
consume delivered kept), `refused` a ClientRefused (its kind is the library's exception type), `unsupported` an
UnsupportedOperation (UNSUPPORTED, never FAIL). A broken driver (dead, hung, off the protocol) is a DriverBroken, which
stops the run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from conformance.judging.capabilities import Capability, ClientCapability
from conformance.targets.kinds.client_library import (
    ClientFailed,
    ClientRefused,
    OffsetAndTimestamp,
    Outgoing,
    SendOutcome,
)
from conformance.targets.kinds.implementation import UnsupportedOperation
from conformance.targets.kinds.library import CLIENT_ROLE
from conformance.targets.routes.driver.driver_process import DriverAdapter, DriverAnswered
from conformance.targets.routes.driver.driver_values import (
    CODECS,
    SPECS,
    answer_of,
    outcome_of,
    outgoing_json,
    record_of,
)
from models.constants import Codec, SpecialTarget
from models.records import ConsumerRecord


class DriverClient(DriverAdapter):
    """The client library a driver drives, connected to `bootstrap`."""

    role = CLIENT_ROLE
    known = ClientCapability
    capabilities: frozenset[ClientCapability]

    @property
    def _typed(self) -> bool:
        """Whether a consumed record keeps the type the driver gives: a type given without declaring
        timestamp-type is not the library's to be judged on."""
        return ClientCapability.TIMESTAMP_TYPE in self.capabilities

    def failed(self, answered: DriverAnswered) -> NoReturn:
        _raise(answered, self._typed)

    def send(
        self, topic: str, partition: int, records: Sequence[Outgoing], *, codec: Codec = Codec.NONE
    ) -> tuple[SendOutcome, ...]:
        answer = self._ask(
            "send", topic=topic, partition=partition, codec=CODECS[codec], records=[outgoing_json(r) for r in records]
        )
        outcomes = tuple(outcome_of(o) for o in answer["outcomes"])
        if len(outcomes) != len(records):
            raise ClientFailed(
                f"the {self.name} driver answered {len(outcomes)} outcomes for {len(records)} records sent"
            )
        return outcomes

    def consume(self, topic: str, partition: int, offset: int, *, until: int) -> tuple[ConsumerRecord, ...]:
        answer = self._ask("consume", topic=topic, partition=partition, offset=offset, until=until)
        return tuple(record_of(r, typed=self._typed) for r in answer["records"])

    def offsets_for_times(self, topic: str, partition: int, target: int) -> OffsetAndTimestamp | None:
        return answer_of(self._ask("offsets_for_times", topic=topic, partition=partition, target=target)["answer"])

    def list_offsets(self, topic: str, partition: int, spec: SpecialTarget) -> OffsetAndTimestamp:
        answer = answer_of(self._ask("list_offsets", topic=topic, partition=partition, spec=SPECS[spec]))
        assert answer is not None  # the schema requires an object
        return answer

    def seek_by_time(
        self, topic: str, partition: int, target: int, *, until: int
    ) -> tuple[OffsetAndTimestamp | None, ConsumerRecord | None]:
        answer = self._ask("seek_by_time", topic=topic, partition=partition, target=target, until=until)
        record = answer["record"]
        return answer_of(answer["answer"]), None if record is None else record_of(record, typed=self._typed)


def _raise(answered: DriverAnswered, typed: bool) -> NoReturn:
    if answered.type == "refused":
        raise ClientRefused(answered.kind or "refused", answered.message)
    if answered.type == "unsupported":
        raise UnsupportedOperation(Capability.CLIENT, f"{answered.op}: {answered.message or answered.kind}")
    delivered = tuple(record_of(r, typed=typed) for r in answered.delivered)
    raise ClientFailed(f"{answered.kind}: {answered.message}".strip(": "), delivered=delivered)
