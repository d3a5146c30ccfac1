"""The observables: what a check compares, one name per field of an answer that an implementation can get
wrong on its own (a ListOffsets answer's offset, its timestamp, its leader epoch and its error are four).

Every check names one (conformance.judging.checks), and an expectations entry says which observable(s) of a clause
it covers (conformance.judging.expectations), so a known departure in one field never hides a new one in another
(WPT expects per subtest, not per file). The IDs are stable API: expectations files name them.
"""

from __future__ import annotations

from enum import Enum


class Obs(Enum):
    """One observable: its stable ID (as expectations files write it) and what it is."""

    # Produce (VAL-*, KIP-467)
    PRODUCE_ERROR = ("produce.error", "the produce response's error code")
    PRODUCE_ACCEPTED = ("produce.accepted", "whether the produce was accepted (error NONE)")
    PRODUCE_BASE_OFFSET = ("produce.base-offset", "the produce response's base_offset")
    PRODUCE_LOG_APPEND_TIME = ("produce.log-append-time", "the produce response's log_append_time")
    PRODUCE_LOG_START_OFFSET = ("produce.log-start-offset", "the produce response's log_start_offset")
    PRODUCE_REJECTION_FIELDS = (
        "produce.rejection-fields",
        "base_offset, log_append_time and log_start_offset of a rejected produce",
    )
    PRODUCE_RECORD_ERROR_COUNT = ("produce.record-error-count", "how many record_errors a rejection lists")
    PRODUCE_RECORD_ERROR_INDEXES = ("produce.record-error-indexes", "the batch_index of each record error")
    PRODUCE_RECORD_ERROR_MESSAGES = ("produce.record-error-messages", "the text of each record error")
    PRODUCE_ERROR_MESSAGE = ("produce.error-message", "the produce response's error_message")
    # Topic administration
    CREATE_TOPICS_REFUSED = ("create-topics.refused", "whether CreateTopics refused the topic config")
    # Fetch: what was stored and served (CNV-*, CMP-*, VAL-13, CON-1)
    FETCH_ERROR = ("fetch.error", "the fetch response's error code")
    FETCH_BATCHES = ("fetch.batches", "the served batches' (base offset, last offset, magic)")
    FETCH_SERVED_LOG = ("fetch.served-log", "the whole log served, batch by batch, compared with an earlier read")
    BATCH_CODEC = ("batch.codec", "a stored batch's compression codec")
    BATCH_TIMESTAMP_TYPE = ("batch.timestamp-type", "a stored batch's timestamp type attribute")
    BATCH_MAX_TIMESTAMP = ("batch.max-timestamp", "a stored batch's MaxTimestamp (v2) or wrapper timestamp (v1)")
    BATCH_BASE_TIMESTAMP = ("batch.base-timestamp", "a stored v2 batch's BaseTimestamp")
    BATCH_PARTITION_LEADER_EPOCH = ("batch.partition-leader-epoch", "a stored v2 batch's PartitionLeaderEpoch")
    INNER_TIMESTAMPS = ("records.inner-timestamps", "the stored timestamps of a v1 wrapper's inner messages")
    RECORD_TIMESTAMPS = ("records.timestamps", "each record's (offset, timestamp, timestamp type) as read")
    RECORD_PAYLOADS = ("records.payloads", "each record's (key, value) as read")
    # Codec libraries (conformance/targets/libraries, suites/test_codec_*.py)
    CODEC_REFUSED = ("codec.refused", "whether the codec library refused the operation (build, read or convert)")
    BATCH_LAYOUT = (
        "batch.layout",
        "the bytes a codec wrote as the model's decoder reads them: None, or the field where decoding stops",
    )
    BATCH_OFFSETS = ("batch.offsets", "a written legacy entry's offset and its inner entries' stored offsets")
    RECORD_OFFSETS = ("records.offsets", "each record's offset as a codec's reader gives it")
    # Client libraries (conformance/targets/libraries, suites/test_client_*.py), compared with the broker's answers
    CLIENT_METADATA_OFFSET = ("client.metadata-offset", "the offset a client reports for a sent record")
    CLIENT_METADATA_TIMESTAMP = (
        "client.metadata-timestamp",
        "the timestamp a client reports for a sent record (RecordMetadata.timestamp())",
    )
    CLIENT_SEND_FAILURES = ("client.send-failures", "the failure a client reports for each record of a rejected batch")
    CLIENT_LOOKUP = ("client.lookup", "a client's lookup result: (offset, timestamp), or None for null")
    CLIENT_REFUSAL = ("client.refusal", "whether a client refused the call, and the requests it sent for it")
    CLIENT_REFUSAL_MESSAGE = ("client.refusal-message", "the text of a client's refusal")
    CLIENT_REQUEST_VERSION = ("client.request-version", "the API version of a request a client sent")
    # ListOffsets (LO-*, IDX-*)
    LIST_OFFSETS_ERROR = ("list-offsets.error", "the ListOffsets answer's error code")
    LIST_OFFSETS_OFFSET = ("list-offsets.offset", "the ListOffsets answer's offset")
    LIST_OFFSETS_TIMESTAMP = ("list-offsets.timestamp", "the ListOffsets answer's timestamp")
    LIST_OFFSETS_EPOCH = ("list-offsets.leader-epoch", "the ListOffsets answer's leader epoch")
    # The log as a whole (retention, replication)
    LOG_RANGE = ("log.range", "(log start offset, high watermark)")
    LOG_START_OFFSET = ("log.start-offset", "the log start offset")
    HIGH_WATERMARK = ("log.high-watermark", "the high watermark")
    LEADER = ("metadata.leader", "the partition's leader as Metadata shows it")

    def __init__(self, id: str, description: str) -> None:
        self.id = id
        self.description = description

    def __str__(self) -> str:
        return self.id

    @classmethod
    def by_id(cls, observable_id: str) -> Obs:
        """The observable with this ID; KeyError naming the known IDs otherwise."""
        for obs in cls:
            if obs.id == observable_id:
                return obs
        raise KeyError(f"unknown observable {observable_id!r}; known: {', '.join(o.id for o in cls)}")


# Values a check may know besides the observed and expected ones, by name: an expectations entry can say the
# implementation showed one of them (`observed_is = "sent"`), which describes a known departure exactly
# where a constant cannot (a header stored as the producer wrote it; LATEST one past the last batch's base).
FACTS: dict[str, str] = {
    "sent": "what the producer sent for this field",
    "last-batch-base-plus-one": "one past the base offset of the last batch in the model's log (where the "
    "high watermark is one past its last offset)",
    "max-timestamp-batch-last-offset": "the last offset of the batch holding the record MAX_TIMESTAMP should answer "
    "(the offset a segment cached for its max timestamp from 3.0 to 3.7, KAFKA-16310)",
    "batch-first-create-time": "the create time the producer wrote for the first record of the same batch (a "
    "client's RecordMetadata)",
    "requested-timestamp": "a by-time lookup reported as the broker's offset with the requested target as its "
    "timestamp, offset -1 included where the broker found nothing (kafka-go's Client.ListOffsets: Response.Merge "
    "overrides the answer's timestamp with the request's, and offset -1 is an answer like any other)",
    "end-offset": "a by-time lookup the broker answered with offset -1 reported as the broker's answer to the LATEST "
    "request the library sent next (kadm's ListOffsetsAfterMilli, which asks for the end offset then)",
    "end-offset-asked-first": "a by-time lookup the broker answered with offset -1 reported as the offset alone of "
    "the broker's answer to the LATEST request the library sent before it (KafkaJS's fetchTopicOffsetsByTimestamp, "
    "which asks for the high watermarks first and puts one in place of a negative offset)",
    "sent-as-given": "a negative offsetsForTimes target sent in ListOffsets as given (not refused), with the broker's "
    "answer reported as a by-time answer (null for offset -1), or its error answer as the library's failure",
    "sent-as-given-requested-timestamp": "as sent-as-given, the answer then filed as kafka-go's Client.ListOffsets "
    "files it: -1 and -2 as its LastOffset and FirstOffset (no by-time answer: null), any other at the broker's "
    "offset with no time (-1: the requested target, through makeTime)",
    "sent-as-given-offset-only": "as sent-as-given, the answer then reported as its offset alone, -1 included "
    "(Sarama's Client.GetOffset)",
    "nanosecond-wrapped-written": "what a writer that holds a timestamp in int64 nanoseconds writes (ms x 10^6 "
    "wrapped to 64 bits, divided by 10^6 toward zero: Go's Time.UnixNano() / 1e6, kgo's producer): each record's "
    "timestamp so, and a batch's BaseTimestamp and MaxTimestamp as Kafka's builder computes them from those",
    "first-nanosecond-wrapped-written": "a v1 wrapper's timestamp as the first inner message's, written as "
    "nanosecond-wrapped-written says, not the largest (kgo's appendToAsMessageSet)",
    "unreadable-lz4": "the consumer's failure, where it also left a stored LZ4 batch of the range undelivered (the "
    "batches it failed with it: after it, and before it in the same fetch where a library decodes a fetch response "
    "whole, as Sarama does): a reader that decompresses every LZ4 batch as a standard LZ4 frame cannot read a magic-0 "
    "one, whose header checksum Kafka computes over the magic bytes too (KIP-57)",
    "delta-nanosecond-wrapped": "each record of a CreateTime v2 batch read as its BaseTimestamp plus its delta held "
    "as a Go time.Duration (delta x 10^6 wrapped to int64 nanoseconds), a negative BaseTimestamp read as Go's zero "
    "time (year 1) and a record that is then at the zero time as no timestamp (-1): Sarama's Record.decode and "
    "parseRecords",
    "partition-error": "each record of a batch rejected with record_errors failed with the partition's error, "
    "record_errors ignored",
    "create-times": "each record read as the create time its producer put in the stored batch (a v2 record's "
    "BaseTimestamp + delta, a v1 message's own timestamp, inner ones included), typed CreateTime where the library "
    "exposes a type: a reader that ignores a LogAppendTime batch's or wrapper's type (kafka-go's readMessageV2)",
    "create-times-nonpositive-as-none": "as create-times, and a create time of 0 or below read as no timestamp (-1, "
    "NoTimestampType) as in nonpositive-as-none: kafka-go's readMessageV2 and readMessageV1, then makeTime",
    "own-messages": "each record read as its own stored message says, the wrapper's type ignored: an inner message "
    "of a compressed v1 wrapper with its own timestamp and its own bit-3 type (a v0 one with -1 and "
    "NoTimestampType); a v2 record as create-times (kgo's v1MessageToRecord)",
    "own-messages-nanosecond-wrapped": "as own-messages, each timestamp then read as nanosecond-wrapped says: kgo's "
    "v1MessageToRecord with timeFromMillis",
    "nonpositive-as-none": "each record read right (typed CreateTime where the library exposes a type) but one whose "
    "timestamp is 0 or negative read as no timestamp (-1, NoTimestampType): a reader that turns such a timestamp "
    "into Go's zero time (kafka-go's makeTime)",
    "empty-as-null": "each record's key and value as a reader that delivers an empty one as null reads them "
    "(kafka-go's readNewBytes)",
    "nanosecond-wrapped": "each record's timestamp as a reader that holds it in int64 nanoseconds reads it (ms x 10^6 "
    "wrapped to 64 bits, then floor-divided by 10^6: Go's time.Unix(0, ms*1e6)); the timestamp itself within about "
    "292 years of 1970",
}


# Go's zero time.Time (January 1, year 1, UTC) in Unix milliseconds.
GO_ZERO_TIME_MS = -62_135_596_800_000


def int64_wrapped(value: int) -> int:
    """`value` wrapped to a signed 64-bit integer, as Go's int64 arithmetic overflows."""
    value %= 1 << 64
    return value - (1 << 64) if value >= 1 << 63 else value


def nanosecond_wrapped_written(ms: int) -> int:
    """A timestamp in ms as a writer holding it in int64 nanoseconds writes it (FACTS "nanosecond-wrapped-written"):
    ms x 10^6 wrapped to 64 bits, then divided by 10^6 toward zero (Go's time.UnixMilli(ms).UnixNano() / 1e6)."""
    ns = int64_wrapped(ms * 1_000_000)
    return -(-ns // 1_000_000) if ns < 0 else ns // 1_000_000


def nanosecond_wrapped(ms: int) -> int:
    """A timestamp in ms as a reader holding it in int64 nanoseconds gets it back (FACTS "nanosecond-wrapped")."""
    return int64_wrapped(ms * 1_000_000) // 1_000_000
