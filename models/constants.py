"""Constants of the Kafka timestamp contract (docs/rules.md: FMT-4, FMT-10, LO-1)."""

from __future__ import annotations

from enum import IntEnum

NO_TIMESTAMP = -1
LONG_MAX = (1 << 63) - 1
LONG_MIN = -(1 << 63)
INT_MAX = (1 << 31) - 1
INT_MIN = -(1 << 31)
NO_PARTITION_LEADER_EPOCH = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1

# FMT-4 / FMT-10: bit masks of the attributes fields.
CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

MAGIC_V0 = 0
MAGIC_V1 = 1
MAGIC_V2 = 2
MAGICS = (MAGIC_V0, MAGIC_V1, MAGIC_V2)


class _KafkaEnum(IntEnum):
    """An IntEnum whose repr is the Python expression naming it (`Codec.GZIP`), so that a printed
    counterexample can be pasted back as code."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


class TimestampType(_KafkaEnum):
    """`TimestampType` ids (docs/rules.md: FMT-4, FMT-5, FMT-10)."""

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class Codec(_KafkaEnum):
    """Compression codec ids in bits 0-2 of the attributes (FMT-4, FMT-10)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @classmethod
    def from_name(cls, name: str) -> Codec:
        try:
            return cls[name.upper()]
        except KeyError:
            known = ", ".join(c.name.lower() for c in cls)
            raise ValueError(f"unknown compression codec {name!r}: expected one of {known}") from None


class ErrorCode(_KafkaEnum):
    """Kafka error codes the timestamp contract can produce (Apache Kafka's `Errors.java`)."""

    NONE = 0
    UNKNOWN_SERVER_ERROR = -1
    OFFSET_OUT_OF_RANGE = 1
    CORRUPT_MESSAGE = 2
    UNKNOWN_TOPIC_OR_PARTITION = 3
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    BROKER_NOT_AVAILABLE = 8
    REPLICA_NOT_AVAILABLE = 9
    MESSAGE_TOO_LARGE = 10
    NETWORK_EXCEPTION = 13  # a client's reading of a dropped connection (no answer from the broker)
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    INVALID_TIMESTAMP = 32
    UNSUPPORTED_VERSION = 35
    TOPIC_ALREADY_EXISTS = 36
    INVALID_CONFIG = 40
    INVALID_REQUEST = 42
    UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
    POLICY_VIOLATION = 44
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    UNSUPPORTED_COMPRESSION_TYPE = 76
    OFFSET_NOT_AVAILABLE = 78
    INVALID_RECORD = 87

    @classmethod
    def _missing_(cls, value: object) -> ErrorCode | None:
        # A real broker may answer any code of Errors.java; keep it as a pseudo-member rather than fail.
        if not isinstance(value, int):
            return None
        member = int.__new__(cls, value)
        member._name_ = f"CODE_{value}"
        member._value_ = value
        return member


# A request at a version the broker does not serve gets no answer at all: Kafka's network layer
# (`Processor.parseRequestHeader`, `ApiVersionManager.isApiEnabled`) throws UnsupportedVersionException before
# any handler, logs "Closing socket ... because of error" and closes the connection, in every release (4.0
# included for Produce v0-v2, which its ApiVersions still lists: KAFKA-18659). ApiVersions is the exception
# (KIP-511). A client reads the dropped connection as NETWORK_EXCEPTION, and so does the model (CNV-1, CNV-7).
NOT_SERVED = ErrorCode.NETWORK_EXCEPTION


class SpecialTarget(_KafkaEnum):
    """Negative ListOffsets targets (LO-1)."""

    LATEST = -1
    EARLIEST = -2
    MAX_TIMESTAMP = -3
    EARLIEST_LOCAL = -4
    LATEST_TIERED = -5
    EARLIEST_PENDING_UPLOAD = -6


class IsolationLevel(_KafkaEnum):
    READ_UNCOMMITTED = 0
    READ_COMMITTED = 1


CONSUMER_REPLICA_ID = -1
DEBUG_REPLICA_ID = -2
