"""The capability vocabulary: what a clause's test needs of what it drives. A test names the capabilities it needs
(`@pytest.mark.requires(Capability.X)`, or a suite's helper asks a library's `capabilities`); an implementation or
library lacking one gives UNSUPPORTED, never FAIL (test262's feature flags). Names are stable: expectation files and
reports use them.

Three enums, one for each thing a test drives, kept apart on purpose:
- `Capability`: an implementation (a broker over the wire, the model, a seeded mutant; a codec or client target is
  an implementation too, with the one capability CODEC or CLIENT and its library at `.codec` / `.client`);
- `ClientCapability`: a client library at `impl.client` (the calls an application makes: send, consume, lookups);
- `CodecCapability`: a record library at `impl.codec` (build, read, convert batches).
They are not one vocabulary: each is the `capabilities` of a different object, and the same word means different
things on two of them ("record-errors" is a broker's Produce v8+ record_errors answer as a `Capability`, and a
producer's per-record exceptions as a `ClientCapability`; a broker with the first does not give a client library the
second).
"""

from __future__ import annotations

from enum import Enum


class Capability(Enum):
    """What an implementation can do. Names are stable: expectation files and reports use them."""

    PRODUCE_V2 = "produce-v2"  # Produce v3+ with magic 2 batches
    PRODUCE_LEGACY = "produce-legacy"  # Produce v0-v2 with magic 0/1 entries
    LOG_APPEND_TIME = "log-append-time"  # topics with message.timestamp.type=LogAppendTime
    KIP_937_CONFIGS = "kip-937-configs"  # message.timestamp.before/after.max.ms
    DIFFERENCE_CONFIG = "difference-config"  # message.timestamp.difference.max.ms
    RECORD_ERRORS = "record-errors"  # Produce v8+ record_errors (KIP-467)
    COMPRESSION = "compression"  # gzip, snappy, lz4 (zstd is separate)
    ZSTD = "zstd"
    FETCH = "fetch"
    DOWN_CONVERSION = "down-conversion"  # fetch at v0-v3 converts to magic 0/1
    LIST_OFFSETS = "list-offsets"  # ListOffsets v1+ timestamp lookups
    MAX_TIMESTAMP_LOOKUP = "max-timestamp-lookup"  # ListOffsets v7+ MAX_TIMESTAMP (-3)
    ALTER_CONFIG = "alter-config"  # change a topic's configuration
    CLOCK_CONTROL = "clock-control"  # the suite sets each broker's clock
    LEADER_FAILOVER = "leader-failover"  # the suite moves partition leadership
    RETENTION = "retention"  # the suite can trigger time-based retention and observe it
    IDEMPOTENCE = "idempotence"  # idempotent producers (producer id, sequence)
    # A segment file's time is the broker clock the suite reads (IDX-6: it dates a segment without timestamps):
    # a wall-clock broker's, or a controlled clock that dates files too (Apache Kafka 2.4+ on the suite's clock:
    # its launcher dates the files the operating system dated with the machine's clock).
    FILE_TIMES = "file-times"
    CODEC = "codec"  # a record library: `impl.codec` is a RecordCodecLibrary (conformance.targets.kinds.codec_library)
    CLIENT = "client"  # a client library against a broker: `impl.client` (conformance.targets.kinds.client_target)


class ClientCapability(Enum):
    """What a client library can do. Names are stable: expectation files and reports use them."""

    SEND = "send"  # send(): RecordMetadata per record
    RECORD_ERRORS = "record-errors"  # send() reports each record's own failure of a rejected batch (KIP-467)
    CONSUME = "consume"  # consume(): assign, seek, poll
    OFFSETS_FOR_TIMES = "offsets-for-times"  # offsets_for_times()
    EARLIEST = "earliest"  # list_offsets(EARLIEST): beginningOffsets or an OffsetSpec
    LATEST = "latest"  # list_offsets(LATEST): endOffsets or an OffsetSpec
    MAX_TIMESTAMP = "max-timestamp"  # list_offsets(MAX_TIMESTAMP): an Admin OffsetSpec (KIP-734)
    SEEK_BY_TIME = "seek-by-time"  # seek_by_time()
    # A consumed record's timestamp type (CON-1's timestampType): a library whose records carry none (Sarama's
    # ConsumerMessage, kafka-go's Message) leaves it out, its records' timestamp_type is None, and the client suites
    # compare what it does expose (offset, timestamp, key, value) without a type.
    TIMESTAMP_TYPE = "timestamp-type"


class CodecCapability(Enum):
    """What a codec library can do. Names are stable: expectation files and reports use them."""

    BUILD = "build"  # build(): write batches (the magics in `build_magics`)
    READ = "read"  # read(): a consumer's view of batches (the magics in `read_magics`)
    BUILD_LOG_APPEND_TIME = "build-log-append-time"  # build() with log_append_time (a broker-side builder)
    DOWN_CONVERT = "down-convert"  # convert() to a lower magic (CNV-5)
    BATCH_MAX_TIMESTAMP = "batch-max-timestamp"  # read() reports each batch's max timestamp (FMT-14)
