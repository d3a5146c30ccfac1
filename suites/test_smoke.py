"""Smoke check of the harness: a LogAppendTime topic stamps the leader's clock (VAL-12)."""

from __future__ import annotations

import pytest

from conformance.judging.capabilities import Capability
from conformance.judging.checks import check_equal, check_true
from conformance.judging.observables import Obs
from conformance.targets.kinds.implementation import Implementation
from models.config import TopicConfig
from models.constants import TimestampType
from models.profiles import Profile
from models.records import RecordSpec, build_v2


@pytest.mark.clause("VAL.lat-response-time")
@pytest.mark.requires(Capability.LOG_APPEND_TIME, Capability.PRODUCE_V2)
def test_lat_response_time(impl: Implementation, profile: Profile) -> None:
    impl.create_topic("t", TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME))
    leader = impl.leader("t", 0)
    # A clock the suite sets reads the same before and after; a wall clock moves, so the broker's `now` is
    # known within the bracket of two readings (and the adapter's tolerance for a broker's own clock).
    tolerance = getattr(impl, "clock_tolerance_ms", 0)
    before = impl.clock(leader) - tolerance
    version = min(9, profile.produce_versions[1])  # v9, or the newest an older line serves (v3+: a v2 batch)
    response = impl.produce("t", 0, [build_v2([RecordSpec(1, None, b"v")])], produce_version=version)
    after = impl.clock(leader) + tolerance
    stamped = response.log_append_time
    if before == after:
        check_equal("VAL.lat-response-time", Obs.PRODUCE_LOG_APPEND_TIME, stamped, before)
    else:
        check_true("VAL.lat-response-time", Obs.PRODUCE_LOG_APPEND_TIME, before <= stamped <= after, stamped,
                   expectation=f"log_append_time within [{before}, {after}]")
