"""The reference client (`client:model`): the client rules of the spec (VAL-11, VAL-12, CON-1, LO-9) implemented
on the project's wire client, the oracle every client library is compared with.

It behaves as Apache Kafka's Java client does where docs/rules.md states it, one named step per rule, so that a client
mutant (conformance/faults/client_faults.py) changes exactly one step:
- `metadata_timestamp`: RecordMetadata.timestamp() = log_append_time if it is not -1, else the record's create
  timestamp (VAL-12, FutureRecordMetadata);
- `record_failures`: the exception of each record of a rejected batch (VAL-11, Sender.failBatch);
- `read_batch` and `delivered`: the consumer's view of a stored batch (CON-1, CompletedFetch.parseRecord: the
  model's own reader, models.records) and the records a consumer hands over from its position (those below it,
  fetched with their batch, are dropped);
- `check_target`, `lookup_version`, `lookup_answer`: offsetsForTimes refuses a negative target, asks ListOffsets
  v1 or later, and answers null for offset -1 or UNSUPPORTED_FOR_MESSAGE_FORMAT (LO-9, LO-8);
- `spec_answer`: what beginningOffsets / endOffsets / Admin listOffsets report of a special-target answer;
- `seek_position`: seek by time goes to the offset offsetsForTimes answered.

Records a caller gives no timestamp are stamped with this machine's clock (KafkaProducer uses
System.currentTimeMillis()). Every request is bounded by `timeout` (the wire client's).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from conformance.judging.capabilities import ClientCapability
from conformance.targets.kinds import client_rules as rules
from conformance.targets.kinds.client_library import (
    ClientAdapter,
    ClientFailed,
    ClientRefused,
    OffsetAndTimestamp,
    Outgoing,
    RecordMetadata,
    SendFailure,
    SendOutcome,
    java_refusal_text,
)
from conformance.targets.kinds.implementation import reference_version
from conformance.wire.client import FETCH, LIST_OFFSETS, PRODUCE, ListOffsetsResult, ProduceResult, WireClient
from conformance.wire.connection import WireError
from models.codec import decode_batches, encode_batches
from models.constants import MAGIC_V0, MAGIC_V1, MAGIC_V2, Codec, ErrorCode, SpecialTarget
from models.errors import CodecError
from models.records import AnyBatch, ConsumerRecord, RecordSpec, build_batches

# Versions the reference client asks at most (the newest the wire client encodes by topic name).
_NEWEST = {PRODUCE: 12, FETCH: 12, LIST_OFFSETS: 10}


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class ReferenceClient(ClientAdapter):
    """The reference client over one WireClient (see the module doc)."""

    name = "model"
    version = reference_version()  # the reference implementations' version: this package's
    capabilities = frozenset(ClientCapability)
    codecs = frozenset(Codec)

    def __init__(self, bootstrap: str, *, timeout: float = 10.0, clock: Callable[[], int] = wall_clock_ms) -> None:
        self.timeout = timeout
        self.clock = clock
        self.wire = WireClient(bootstrap, timeout=timeout, client_id="kts-reference-client")

    def close(self) -> None:
        self.wire.close()

    # -- producing (VAL-11, VAL-12)

    def send(
        self, topic: str, partition: int, records: Sequence[Outgoing], *, codec: Codec = Codec.NONE
    ) -> tuple[SendOutcome, ...]:
        version = self._newest(PRODUCE)
        # The record format the Produce version carries (CNV-1), as the Java producer picks it.
        magic = MAGIC_V2 if version >= 3 else MAGIC_V1 if version == 2 else MAGIC_V0
        specs = [RecordSpec(self.clock() if r.timestamp is None else r.timestamp, r.key, r.value) for r in records]
        batches = build_batches(specs, magic=magic, codec=codec)
        try:
            result = self.wire.produce(topic, partition, encode_batches(batches), version=version)
        except WireError as exc:
            raise ClientFailed(f"Produce to {topic}-{partition}: {exc}") from None
        if result.error_code != ErrorCode.NONE:
            return self.record_failures(result, len(records))
        return tuple(
            RecordMetadata(result.base_offset + i, self.metadata_timestamp(result.log_append_time, spec.timestamp))
            for i, spec in enumerate(specs)
        )

    def metadata_timestamp(self, log_append_time: int | None, create_time: int) -> int:
        """VAL-12: the broker's log_append_time where it sent one, else the create time."""
        return rules.metadata_timestamp(log_append_time, create_time)

    def record_failures(self, result: ProduceResult, count: int) -> tuple[SendFailure, ...]:
        """VAL-11: each record's failure of a rejected batch (Sender.failBatch)."""
        return rules.record_failures(result.error_code, dict(result.record_errors or ()), result.error_message, count)

    # -- consuming (CON-1)

    def consume(self, topic: str, partition: int, offset: int, *, until: int) -> tuple[ConsumerRecord, ...]:
        out: list[ConsumerRecord] = []
        position = offset
        deadline = time.monotonic() + self.timeout
        while position < until and time.monotonic() < deadline:
            try:
                batches = self._fetch(topic, partition, position)
            except ClientFailed as exc:
                raise ClientFailed(str(exc), delivered=tuple(out)) from None
            if not batches:
                break
            for batch in batches:
                out.extend(self.delivered(self.read_batch(batch), position))
            following = max(b.last_offset for b in batches) + 1
            if following <= position:
                break
            position = following
        return tuple(r for r in out if r.offset < until)

    def _fetch(self, topic: str, partition: int, position: int) -> tuple[AnyBatch, ...]:
        version = self._newest(FETCH)
        try:
            result = self.wire.fetch(topic, partition, position, version=version)
        except WireError as exc:
            raise ClientFailed(f"Fetch {topic}-{partition} at {position}: {exc}") from None
        if result.error_code != ErrorCode.NONE:
            raise ClientFailed(f"Fetch {topic}-{partition} at {position}: {ErrorCode(result.error_code).name}")
        try:
            return decode_batches(result.records, partial_tail=True)
        except CodecError as exc:
            raise ClientFailed(f"Fetch {topic}-{partition} at {position}: served bytes do not decode: {exc}") from None

    def read_batch(self, batch: AnyBatch) -> tuple[ConsumerRecord, ...]:
        """CON-1: each record of a stored batch as a consumer reads it (the model's reader)."""
        return batch.records()

    def delivered(self, records: Sequence[ConsumerRecord], position: int) -> tuple[ConsumerRecord, ...]:
        """A fetch answers whole batches: the records below the consumer's position are not handed over."""
        return tuple(r for r in records if r.offset >= position)

    # -- lookups (LO-9)

    def offsets_for_times(self, topic: str, partition: int, target: int) -> OffsetAndTimestamp | None:
        self.check_target(topic, partition, target)
        return self.lookup_answer(self._list_offsets(topic, partition, target, self.lookup_version()))

    def check_target(self, topic: str, partition: int, target: int) -> None:
        """LO-9: a negative target is refused before any request (IllegalArgumentException)."""
        if target < 0:
            raise ClientRefused("IllegalArgumentException", java_refusal_text(topic, partition, target))

    def lookup_version(self) -> int:
        """LO-9: the newest ListOffsets version both sides speak, v1 at least (ListOffsetsRequest.Builder)."""
        version = self._newest(LIST_OFFSETS)
        if version < rules.TIMESTAMP_LOOKUP_MIN_VERSION:
            raise ClientFailed(
                f"the broker offers no ListOffsets v{rules.TIMESTAMP_LOOKUP_MIN_VERSION}+: "
                "offsetsForTimes needs it (LO-9)"
            )
        return version

    def lookup_answer(self, result: ListOffsetsResult) -> OffsetAndTimestamp | None:
        """LO-9 / LO-8: null for offset -1 or UNSUPPORTED_FOR_MESSAGE_FORMAT; any other error is raised."""
        if result.error_code not in (ErrorCode.NONE, ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT):
            raise ClientFailed(f"ListOffsets answered {ErrorCode(result.error_code).name}")
        return rules.lookup_answer(result.error_code, result.offset, result.timestamp)

    def list_offsets(self, topic: str, partition: int, spec: SpecialTarget) -> OffsetAndTimestamp:
        version = self._newest(LIST_OFFSETS)
        if spec is SpecialTarget.MAX_TIMESTAMP and version < rules.MAX_TIMESTAMP_MIN_VERSION:
            raise ClientFailed(f"the broker offers ListOffsets up to v{version}: MAX_TIMESTAMP needs v7 (LO-1)")
        result = self._list_offsets(topic, partition, int(spec), version)
        if result.error_code != ErrorCode.NONE:
            raise ClientFailed(f"ListOffsets {spec.name} answered {ErrorCode(result.error_code).name}")
        return self.spec_answer(spec, result)

    def spec_answer(self, spec: SpecialTarget, result: ListOffsetsResult) -> OffsetAndTimestamp:
        """An Admin ListOffsetsResultInfo for `spec`: the answer's offset and timestamp as they came."""
        return OffsetAndTimestamp(result.offset, -1 if result.timestamp is None else result.timestamp)

    def first_record(
        self, topic: str, partition: int, found: OffsetAndTimestamp, *, until: int
    ) -> ConsumerRecord | None:
        records = self.consume(topic, partition, self.seek_position(found), until=until)
        return records[0] if records else None

    def seek_position(self, found: OffsetAndTimestamp) -> int:
        """Seek by time: the consumer's position becomes the offset offsetsForTimes answered."""
        return found.offset

    def _list_offsets(self, topic: str, partition: int, target: int, version: int) -> ListOffsetsResult:
        try:
            return self.wire.list_offsets(topic, partition, target, version=version)
        except WireError as exc:
            raise ClientFailed(f"ListOffsets {topic}-{partition} target {target}: {exc}") from None

    def _newest(self, api_key: int) -> int:
        return self.wire.max_version(api_key, _NEWEST[api_key])
