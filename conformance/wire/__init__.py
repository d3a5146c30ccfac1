"""The Kafka protocol client of the `kafka-wire` adapter (issue 4, item 1): `KafkaConnection` frames
requests with kafka-python's protocol layer on one socket, `WireClient` negotiates versions, routes
partition requests to leaders and offers the requests the suites send, each at an explicit version."""

from __future__ import annotations

from conformance.wire.client import (
    KAFKA_PYTHON_VERSION,
    SUPPORTED_VERSIONS,
    ApiError,
    ApiResult,
    BrokerMetadata,
    ClusterMetadata,
    FetchResult,
    ListOffsetsResult,
    PartitionMetadata,
    ProduceResult,
    TopicMetadata,
    UnsupportedVersion,
    WireClient,
    parse_bootstrap,
)
from conformance.wire.connection import DEFAULT_TIMEOUT, Exchange, KafkaConnection, WireError

__all__ = [
    "DEFAULT_TIMEOUT",
    "KAFKA_PYTHON_VERSION",
    "SUPPORTED_VERSIONS",
    "ApiError",
    "ApiResult",
    "BrokerMetadata",
    "ClusterMetadata",
    "Exchange",
    "FetchResult",
    "KafkaConnection",
    "ListOffsetsResult",
    "PartitionMetadata",
    "ProduceResult",
    "TopicMetadata",
    "UnsupportedVersion",
    "WireClient",
    "WireError",
    "parse_bootstrap",
]
