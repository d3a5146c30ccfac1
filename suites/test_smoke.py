"""Smoke check of the harness: a LogAppendTime topic stamps the leader's clock (VAL-12)."""

from __future__ import annotations

import pytest

from conformance.checks import check_equal
from conformance.implementation import Capability, Implementation
from models.config import TopicConfig
from models.constants import TimestampType
from models.records import RecordSpec, build_v2


@pytest.mark.clause("VAL.lat-response-time")
@pytest.mark.requires(Capability.LOG_APPEND_TIME, Capability.PRODUCE_V2)
def test_lat_response_time(impl: Implementation) -> None:
    impl.create_topic("t", TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME))
    leader = impl.leader("t", 0)
    now = impl.clock(leader)
    response = impl.produce("t", 0, [build_v2([RecordSpec(1, None, b"v")])], produce_version=9)
    check_equal("VAL.lat-response-time", "log_append_time", response.log_append_time, now)
