"""The client rules of the spec as pure functions, each in one place: the reference client's steps call them
(conformance/targets/libraries/model/model_client.py) and the client checks compute their expectations with them
(suites/client_helpers.py), so a client mutant that changes a step of the reference client is caught by the same rule
it breaks. Each follows Apache Kafka's Java client where docs/rules.md states it."""

from __future__ import annotations

from collections.abc import Mapping

from conformance.targets.kinds.client_library import BATCH_FAILED, OffsetAndTimestamp, SendFailure
from models.constants import ErrorCode

# What Java's Sender gives the records of a rejected batch that were not themselves listed (VAL-11, sic).
BATCH_FAILED_TEXT = "Failed to append record because it was part of a batch which had one more more invalid records"
# LO-9 / LO-1: the oldest ListOffsets version offsetsForTimes may ask (v1, KIP-79; v2 for read_committed), and
# the oldest that carries MAX_TIMESTAMP (v7, KIP-734).
TIMESTAMP_LOOKUP_MIN_VERSION = 1
READ_COMMITTED_MIN_VERSION = 2
MAX_TIMESTAMP_MIN_VERSION = 7


def metadata_timestamp(log_append_time: int | None, create_time: int) -> int:
    """VAL-12 (FutureRecordMetadata): RecordMetadata.timestamp() is the ProduceResponse's log_append_time where it
    is not -1 (absent before Produce v2), else the record's create timestamp."""
    return create_time if log_append_time is None or log_append_time == -1 else log_append_time


def record_failures(
    error_code: int, listed: Mapping[int, str | None], error_message: str | None, count: int
) -> tuple[SendFailure, ...]:
    """VAL-11 (Sender.failBatch): the failure of each of the `count` records of a batch rejected with
    `error_code`. Without record_errors every record fails with the partition's error; with exactly one listed
    record, that record gets the partition's error type; with several, each listed record gets INVALID_RECORD; a
    record not listed gets the generic BATCH_FAILED. A listed record's message is its own, else the answer's."""
    code = ErrorCode(error_code)
    fallback = error_message or code.name
    if not listed:
        return tuple(SendFailure(code.name, fallback) for _ in range(count))
    kind = code.name if len(listed) == 1 else ErrorCode.INVALID_RECORD.name
    return tuple(
        SendFailure(kind, listed[i] or fallback) if i in listed else SendFailure(BATCH_FAILED, BATCH_FAILED_TEXT)
        for i in range(count)
    )


def lookup_answer(error_code: int, offset: int, timestamp: int | None) -> OffsetAndTimestamp | None:
    """LO-9 / LO-8 (OffsetFetcherUtils): offsetsForTimes answers null for a partition answered with offset -1 or
    with UNSUPPORTED_FOR_MESSAGE_FORMAT, else the answer's offset and timestamp. (Any other error is raised or
    retried by a client; the caller decides.)"""
    if error_code == ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT or offset == -1:
        return None
    return OffsetAndTimestamp(offset, -1 if timestamp is None else timestamp)


def lookup_min_version(isolation_level: int) -> int:
    """LO-9 (ListOffsetsRequest.Builder.forConsumer): the oldest version offsetsForTimes may send."""
    return READ_COMMITTED_MIN_VERSION if isolation_level else TIMESTAMP_LOOKUP_MIN_VERSION
