"""The protocol's values as the model's types and back (docs/driver-protocol.md): bytes as base64, timestamp types
and codecs by name, records, lookups' answers, batches. Used on both sides: by the adapters that make a driver a
client or codec library, and by the Python driver that serves an in-process adapter."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.targets.kinds.client_library import (
    OffsetAndTimestamp,
    Outgoing,
    RecordMetadata,
    SendFailure,
    SendOutcome,
)
from conformance.targets.kinds.codec_library import BatchRequest, ReadBatch
from models.constants import Codec, SpecialTarget, TimestampType
from models.records import ConsumerRecord, Header, RecordSpec

TIMESTAMP_TYPES = {
    TimestampType.CREATE_TIME: "CreateTime",
    TimestampType.LOG_APPEND_TIME: "LogAppendTime",
    TimestampType.NO_TIMESTAMP_TYPE: "NoTimestampType",
}
TIMESTAMP_TYPE_OF = {name: kind for kind, name in TIMESTAMP_TYPES.items()}
CODECS = {codec: codec.name.lower() for codec in Codec}
CODEC_OF = {name: codec for codec, name in CODECS.items()}
SPECS = {
    SpecialTarget.EARLIEST: "earliest",
    SpecialTarget.LATEST: "latest",
    SpecialTarget.MAX_TIMESTAMP: "max-timestamp",
}
SPEC_OF = {name: spec for spec, name in SPECS.items()}


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text, validate=True)


def headers_json(headers: Sequence[Header]) -> list[dict[str, Any]]:
    return [{"key": h.key, "value": b64(h.value)} for h in headers]


def headers_of(values: Sequence[Mapping[str, Any]]) -> tuple[Header, ...]:
    return tuple(Header(str(h["key"]), unb64(h["value"])) for h in values)


# -- client values


def outgoing_json(record: Outgoing) -> dict[str, Any]:
    return {"key": b64(record.key), "value": b64(record.value), "timestamp": record.timestamp}


def outgoing_of(value: Mapping[str, Any]) -> Outgoing:
    return Outgoing(unb64(value["key"]) or b"", unb64(value["value"]), value["timestamp"])


def outcome_json(outcome: SendOutcome) -> dict[str, Any]:
    if isinstance(outcome, SendFailure):
        return {"error": {"kind": outcome.kind, "message": outcome.message}}
    return {"offset": outcome.offset, "timestamp": outcome.timestamp}


def outcome_of(value: Mapping[str, Any]) -> SendOutcome:
    if "error" in value:
        return SendFailure(str(value["error"]["kind"]), str(value["error"].get("message", "")))
    return RecordMetadata(int(value["offset"]), int(value["timestamp"]))


def record_json(record: ConsumerRecord) -> dict[str, Any]:
    return {
        "offset": record.offset,
        "timestamp": record.timestamp,
        "timestamp_type": None if record.timestamp_type is None else TIMESTAMP_TYPES[record.timestamp_type],
        "key": b64(record.key),
        "value": b64(record.value),
        "headers": headers_json(record.headers),
    }


def record_of(value: Mapping[str, Any], *, typed: bool = True) -> ConsumerRecord:
    """A record as the driver delivered it; its timestamp type None where the driver gives null or, with `typed`
    False, where the library exposes none (a client driver that does not declare timestamp-type)."""
    name = value["timestamp_type"] if typed else None
    return ConsumerRecord(
        int(value["offset"]), int(value["timestamp"]), None if name is None else TIMESTAMP_TYPE_OF[name],
        unb64(value["key"]), unb64(value["value"]), headers_of(value.get("headers", ())),
    )  # fmt: skip


def answer_json(answer: OffsetAndTimestamp | None) -> dict[str, Any] | None:
    return None if answer is None else {"offset": answer.offset, "timestamp": answer.timestamp}


def answer_of(value: Mapping[str, Any] | None) -> OffsetAndTimestamp | None:
    if value is None:
        return None
    timestamp = value["timestamp"]
    return OffsetAndTimestamp(int(value["offset"]), None if timestamp is None else int(timestamp))


# -- codec values


def record_spec_json(record: RecordSpec) -> dict[str, Any]:
    return {
        "timestamp": record.timestamp, "key": b64(record.key), "value": b64(record.value),
        "headers": headers_json(record.headers),
    }  # fmt: skip


def record_spec_of(value: Mapping[str, Any]) -> RecordSpec:
    return RecordSpec(int(value["timestamp"]), unb64(value["key"]), unb64(value["value"]), headers_of(value["headers"]))


def batch_request_json(request: BatchRequest) -> dict[str, Any]:
    return {
        "magic": request.magic,
        "codec": CODECS[request.codec],
        "timestamp_type": TIMESTAMP_TYPES[request.timestamp_type],
        "log_append_time": request.log_append_time,
        "base_offset": request.base_offset,
        "records": [record_spec_json(r) for r in request.records],
    }


def batch_request_of(value: Mapping[str, Any]) -> BatchRequest:
    return BatchRequest(
        magic=int(value["magic"]),
        records=tuple(record_spec_of(r) for r in value["records"]),
        codec=CODEC_OF[value["codec"]],
        timestamp_type=TIMESTAMP_TYPE_OF[value["timestamp_type"]],
        log_append_time=value["log_append_time"],
        base_offset=int(value["base_offset"]),
    )


def read_batch_json(batch: ReadBatch) -> dict[str, Any]:
    return {
        "magic": batch.magic,
        "base_offset": batch.base_offset,
        "last_offset": batch.last_offset,
        "timestamp_type": TIMESTAMP_TYPES[batch.timestamp_type],
        "max_timestamp": batch.max_timestamp,
        "records": [record_json(r) for r in batch.records],
    }


def read_batch_of(value: Mapping[str, Any]) -> ReadBatch:
    return ReadBatch(
        magic=int(value["magic"]),
        base_offset=int(value["base_offset"]),
        last_offset=int(value["last_offset"]),
        timestamp_type=TIMESTAMP_TYPE_OF[value["timestamp_type"]],
        max_timestamp=value["max_timestamp"],
        records=tuple(record_of(r) for r in value["records"]),
    )
