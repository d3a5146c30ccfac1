"""Shared helpers of the clause-tagged suites: the side-by-side `Twin`, request choices per profile and
clause-naming comparisons (as array-api-tests' `pytest_helpers` do).

The expectation always comes from a separate reference model (`reference_factory`) driven with the same
operations as the implementation under test, never from the implementation's own answers (engine
rules). Where several clauses could explain one difference, the comparisons run in an order that names
the most specific clause first: batch headers (what the broker wrote) before record reads (how a reader
interprets it), error codes before fields.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from conformance.judging.capabilities import Capability
from conformance.judging.checks import NOT_GIVEN, check_equal
from conformance.judging.draws import Draws, note_clock, recorded
from conformance.judging.observables import GO_ZERO_TIME_MS, Obs, int64_wrapped, nanosecond_wrapped
from conformance.targets.kinds.implementation import Implementation, ImplementationFactory, producible_codecs
from conformance.targets.kinds.implementation import producible_magics as magics_for_capabilities
from models.cluster import FetchResponse, ProduceResponse
from models.config import TopicConfig, effective_bounds, target_magic
from models.constants import (
    LONG_MAX,
    MAGIC_V0,
    MAGIC_V1,
    MAGIC_V2,
    ErrorCode,
    IsolationLevel,
    TimestampType,
)
from models.list_offsets import ListOffsetsAnswer, max_timestamp_lookup
from models.log import PartitionLog
from models.profiles import MaxTimestampLookup, Profile, narrow_versions
from models.records import AnyBatch, ConsumerRecord, DefaultBatch, LegacyBatch, java_long
from strategies.records import batches
from strategies.timestamps import DEFAULT_MARGIN_MS, timestamps

# ------------------------------------------------------------------------------------ readers' known departures


def own_reads(stored: Sequence[AnyBatch]) -> dict[int, tuple[int, TimestampType]]:
    """Each stored record's offset with the timestamp and type its own record or message says, the containing v2
    batch's or v1 wrapper's type ignored: a v2 record's BaseTimestamp + delta (FMT-11; a LogAppendTime append keeps
    it in place, CMP-3) as CreateTime, a v1 message's own timestamp field and bit 3 (FMT-6), inner ones under a
    compressed wrapper included (FMT-7), a v0 message's -1 and NoTimestampType (FMT-5)."""
    out: dict[int, tuple[int, TimestampType]] = {}
    for batch in stored:
        if isinstance(batch, DefaultBatch):
            for record in batch.records_:
                created = java_long(batch.base_timestamp + record.timestamp_delta)
                out[batch.base_offset + record.offset_delta] = (created, TimestampType.CREATE_TIME)
        elif batch.is_compressed:
            for offset, entry in zip(batch.inner_offsets(), batch.message.inner, strict=True):
                out[offset] = (entry.message.stored_timestamp, entry.message.own_timestamp_type)
        else:
            out[batch.offset] = (batch.message.stored_timestamp, batch.message.own_timestamp_type)
    return out


def duration_reads(stored: Sequence[AnyBatch]) -> dict[int, int]:
    """Each record of a CreateTime v2 batch in `stored` by offset, with the timestamp a reader that adds the delta as
    a Go time.Duration reads (FACTS "delta-nanosecond-wrapped": Sarama's Record.decode, record.go:85, and
    parseRecords, consumer.go:866): BaseTimestamp as a time.Time (a negative one as Go's zero time, timestamp.go
    31-37), plus the delta x 10^6 wrapped to int64 nanoseconds; read back in ms, the zero time itself as -1."""
    out: dict[int, int] = {}
    for batch in stored:
        if not isinstance(batch, DefaultBatch) or batch.timestamp_type is not TimestampType.CREATE_TIME:
            continue
        for record in batch.records_:
            nanos = int64_wrapped(record.timestamp_delta * 1_000_000)
            if batch.base_timestamp < 0 and nanos == 0:
                read = -1  # still Go's zero time: no timestamp
            else:
                base = GO_ZERO_TIME_MS if batch.base_timestamp < 0 else batch.base_timestamp
                read = java_long(base + nanos // 1_000_000)
            out[batch.base_offset + record.offset_delta] = read
    return out


def reader_facts(
    want: Sequence[ConsumerRecord], stored: Sequence[AnyBatch], *, typed: bool = True
) -> dict[str, list[tuple[object, ...]]]:
    """What known departures of readers make of `want`, the records of the `stored` batches as CON-1 reads them (the
    FACTS of conformance.judging.observables), each as a check compares a record: (offset, timestamp, type), or
    (offset, timestamp) where the library exposes no type (`typed` False)."""
    own = own_reads(stored)
    durations = duration_reads(stored)

    def shaped(offset: int, timestamp: int, kind: TimestampType | None) -> tuple[object, ...]:
        return (offset, timestamp, kind) if typed else (offset, timestamp)

    def own_of(r: ConsumerRecord) -> tuple[int, TimestampType | None]:
        return own.get(r.offset, (r.timestamp, r.timestamp_type))

    def none_if_nonpositive(offset: int, timestamp: int, kind: TimestampType | None) -> tuple[object, ...]:
        if timestamp <= 0:
            return shaped(offset, -1, TimestampType.NO_TIMESTAMP_TYPE)
        return shaped(offset, timestamp, kind)

    return {
        "nanosecond-wrapped": [shaped(r.offset, nanosecond_wrapped(r.timestamp), r.timestamp_type) for r in want],
        "create-times": [shaped(r.offset, own_of(r)[0], TimestampType.CREATE_TIME) for r in want],
        "own-messages": [shaped(r.offset, *own_of(r)) for r in want],
        "own-messages-nanosecond-wrapped": [
            shaped(r.offset, nanosecond_wrapped(own_of(r)[0]), own_of(r)[1]) for r in want
        ],
        "nonpositive-as-none": [none_if_nonpositive(r.offset, r.timestamp, TimestampType.CREATE_TIME) for r in want],
        "create-times-nonpositive-as-none": [
            none_if_nonpositive(r.offset, own_of(r)[0], TimestampType.CREATE_TIME) for r in want
        ],
        "delta-nanosecond-wrapped": [
            shaped(r.offset, durations.get(r.offset, r.timestamp), r.timestamp_type) for r in want
        ],
    }  # fmt: skip


# ------------------------------------------------------------------------------------ budgets


def suite_settings(examples: int, *, stateful_steps: int | None = None, at_least: int = 2) -> settings:
    """Hypothesis settings for one suite test: `examples` under the 100-example profiles (`ci`, `dev`),
    scaled with the loaded profile (a quarter under `fast`, ten times under `thorough`), and never fewer than
    `at_least` (1 for a test whose every example covers the whole of what it is about). The `impl`
    fixture is per test and shared by the examples (each example uses its own topic), hence the
    function-scoped-fixture health check is off."""
    base = settings.default
    assert base is not None  # the plugin loads a profile before collection
    scaled = max(at_least, base.max_examples * examples // 100)
    kwargs: dict[str, object] = {}
    if stateful_steps is not None:
        kwargs["stateful_step_count"] = stateful_steps
    return settings(
        base,
        max_examples=scaled,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
        **kwargs,  # type: ignore[arg-type]
    )


_topic_counter = itertools.count()


def unique_topic(prefix: str) -> str:
    """A topic name no earlier example of this process used (examples share one implementation)."""
    return f"{prefix}-{next(_topic_counter)}"


# ------------------------------------------------------------------------------------ the twin


@dataclass(frozen=True)
class Suite:
    """What every suite test starts from (the `suite` fixture, suites/conftest.py): the implementation under
    test, the reference model's factory and the profile with the API versions both sides serve. Each example
    takes its draws and a fresh twin from it (`start`), so no test repeats the preamble."""

    impl: Implementation
    reference_factory: ImplementationFactory
    profile: Profile

    def draws(self, data: Draws) -> Draws:
        """The example's draws, recorded (or replayed from a pin: conformance.judging.draws)."""
        return recorded(data)

    def twin(self) -> Twin:
        """The implementation and a fresh reference model, driven side by side."""
        return Twin(self.impl, self.reference_factory)

    def start(self, data: Draws) -> tuple[Draws, Twin]:
        return self.draws(data), self.twin()



# Producer ids the twin gives drawn idempotent batches: far above what a broker allocates and above the ids
# test_idempotence draws (at most 2**40).
_FIRST_NUMBERED_PRODUCER = 1 << 41

class Twin:
    """The implementation under test and a fresh reference model, driven with the same operations.

    Every operation returns (observed, expected). With CLOCK_CONTROL the twin sets the same broker clocks
    on both; without it the model's broker clock follows the implementation's reading before each
    time-dependent operation (a real broker's wall clock)."""

    def __init__(self, impl: Implementation, reference_factory: ImplementationFactory) -> None:
        self.impl = impl
        self.ref = reference_factory.build()
        # The versions both sides serve (a wire target says what it offers; see plugin's `profile`).
        offered = getattr(impl, "offered_versions", None)
        self.profile: Profile = narrow_versions(self.ref.profile, offered) if offered else self.ref.profile
        self.clock_control = Capability.CLOCK_CONTROL in impl.capabilities
        # A wall-clock broker's `now` is known only within [before, after] readings (and this much
        # further when its clock is not this machine's: the adapter says).
        self.clock_tolerance_ms: int = getattr(impl, "clock_tolerance_ms", 0)
        self.configs: dict[str, TopicConfig] = {}
        self._producers = 0  # idempotent producers numbered so far (`_numbered`)
        # What the producer sent, by topic and the base offset the model gave each batch: a check may name
        # the producer's own value of a field (an expectation can match "stored as sent", VAL-13).
        self.sent: dict[str, dict[int, AnyBatch]] = {}
        # The brokers both sides have. A target with fewer brokers than the model has no clock for the others,
        # and no partition is led from them: a leader move needs LEADER_FAILOVER, which a one-broker target
        # lacks, so the tests that move leaders are UNSUPPORTED there.
        target_brokers = set(impl.brokers())
        self.shared_brokers: tuple[int, ...] = tuple(b for b in self.ref.brokers() if b in target_brokers)
        for broker in self.shared_brokers:
            if self.clock_control:
                self.impl.set_clock(broker, self.ref.clock(broker))
            else:
                self.ref.set_clock(broker, self.impl.clock(broker))

    # -- capabilities and profile facts

    def has(self, *capabilities: Capability) -> bool:
        return all(c in self.impl.capabilities for c in capabilities)

    def brokers(self) -> tuple[int, ...]:
        return self.shared_brokers

    # -- clocks

    def set_clock(self, broker: int, now: int) -> None:
        self.impl.set_clock(broker, now)
        self.ref.set_clock(broker, now)

    def clock(self, broker: int) -> int:
        return self.ref.clock(broker)

    def leader_clock(self, topic: str) -> int:
        """The leader's `now`: the clock the suite set, or a fresh reading of a wall clock."""
        self._follow_clock(topic)
        now = self.ref.clock(self.ref.leader(topic, 0))
        note_clock(now)  # anchors a recorded example's timestamps (conformance.judging.draws)
        return now

    def _follow_clock(self, topic: str) -> None:
        if not self.clock_control:
            leader = self.ref.leader(topic, 0)
            self.ref.set_clock(leader, self.impl.clock(leader))

    # -- operations

    def create_topic(self, topic: str, config: TopicConfig) -> None:
        self.impl.create_topic(topic, config)
        config = self._in_force(topic, config)
        self.ref.create_topic(topic, config)
        self.configs[topic] = config

    def new_topic(self, prefix: str, config: TopicConfig) -> tuple[str, int]:
        """A topic of `config` under a name no earlier example used (`unique_topic`), created on both sides, and its
        leader's `now` (`leader_clock`): where most examples start."""
        topic = unique_topic(prefix)
        self.create_topic(topic, config)
        return topic, self.leader_clock(topic)

    def alter_config(self, topic: str, config: TopicConfig) -> None:
        self.impl.alter_config(topic, config)
        config = self._in_force(topic, config)
        self.ref.alter_config(topic, config)
        self.configs[topic] = config

    def _in_force(self, topic: str, config: TopicConfig) -> TopicConfig:
        """The config the implementation holds: a wire target may have left out a segment-shaping config its
        broker refused (Kafka 4.1+: segment.bytes of at least 1 MiB), and the model's topic must have the same
        segments for retention, roll and segment-search comparisons to mean anything."""
        in_force = getattr(self.impl, "config_in_force", None)
        return config if in_force is None else in_force(topic, config)  # type: ignore[no-any-return]

    def produce(
        self, topic: str, batches: Sequence[AnyBatch], *, produce_version: int, as_drawn: bool = False
    ) -> tuple[ProduceResponse, ProduceResponse]:
        """Both sides get the same request. An idempotent batch is first numbered as an idempotent producer numbers
        it, unless `as_drawn` (a deliberate retry): see `_numbered`."""
        if not as_drawn:
            batches = self._numbered(batches)
        observed, expected = self._produce(topic, batches, produce_version=produce_version)
        if expected.error is ErrorCode.NONE:
            offset = expected.base_offset
            for batch in batches:
                self.sent.setdefault(topic, {})[offset] = batch
                offset += sum(1 for _ in batch.records())
        return observed, expected

    def _numbered(self, batches: Sequence[AnyBatch]) -> Sequence[AnyBatch]:
        """Each drawn idempotent batch as the first batch of a producer of its own (a fresh producer id, sequence
        0, its drawn epoch): generated producer fields repeat (Hypothesis favours small values), and Kafka refuses
        a known producer's batch whose sequence does not follow its last one (OUT_OF_ORDER_SEQUENCE_NUMBER,
        ProducerAppendInfo.checkSequence), which is no timestamp rule and which the model does not model. A new
        producer's first batch is accepted whatever its sequence; its retry is test_idempotence's (`as_drawn`)."""
        if not any(isinstance(b, DefaultBatch) and b.producer_id >= 0 for b in batches):
            return batches
        numbered: list[AnyBatch] = []
        for batch in batches:
            if isinstance(batch, DefaultBatch) and batch.producer_id >= 0:
                self._producers += 1
                batch = replace(batch, producer_id=_FIRST_NUMBERED_PRODUCER + self._producers, base_sequence=0,
                                crc=None)  # fmt: skip
            numbered.append(batch)
        return numbered

    def _produce(
        self, topic: str, batches: Sequence[AnyBatch], *, produce_version: int
    ) -> tuple[ProduceResponse, ProduceResponse]:
        if self.clock_control:
            observed = self.impl.produce(topic, 0, batches, produce_version=produce_version)
            return observed, self.ref.produce(topic, 0, batches, produce_version=produce_version)
        # A wall clock: bracket the request with readings; the model appends at the broker's own `now`
        # when the broker shows it (log_append_time) inside the bracket, else at the first reading, so a
        # stamp outside the bracket is a difference. Generated timestamps keep a
        # margin from the validation bounds, so any `now` in the bracket decides them alike.
        leader = self.ref.leader(topic, 0)
        before = self.impl.clock(leader) - self.clock_tolerance_ms
        observed = self.impl.produce(topic, 0, batches, produce_version=produce_version)
        after = self.impl.clock(leader) + self.clock_tolerance_ms
        stamped = observed.log_append_time
        config = self.configs[topic]
        lat = config.timestamp_type is TimestampType.LOG_APPEND_TIME
        if lat and observed.error is ErrorCode.NONE and produce_version < 2:
            # ProduceResponse v0/v1 has no log_append_time (ProduceResponse.json: "2+"). Kafka stamps the stored
            # batch with the same one reading (LogValidator's `now`, which UnifiedLog.append also answers with;
            # VAL-2, VAL-12), so the stored stamp is that `now`, trusted like the field: only inside the bracket.
            stamped = self._stored_log_append_time(topic, observed.base_offset)
        shown = _now_in_range_errors(observed, config, self.profile)
        if lat and before <= stamped <= after:
            self.ref.set_clock(leader, stamped)
        elif shown is not None and before <= shown <= after:
            # The broker's `now` as its out-of-range record errors print it ([now - before, now + after], one
            # reading for the whole batch: Kafka's LogValidator): the texts compare exactly (VAL-7).
            self.ref.set_clock(leader, shown)
        else:
            self.ref.set_clock(leader, before)
        return observed, self.ref.produce(topic, 0, batches, produce_version=produce_version)

    def _stored_log_append_time(self, topic: str, base_offset: int) -> int:
        """The LogAppendTime stamp the implementation stored at `base_offset` (v2 MaxTimestamp, v1 message or
        wrapper timestamp), read back with a fetch at the newest version both sides serve; -1 when it cannot tell
        (a fetch error, nothing at that offset, a v0 or CreateTime batch). A fetch only reads: the log, the high
        watermark and what later comparisons fetch stay as they were."""
        answer = self.impl.fetch(topic, 0, base_offset, fetch_version=newest_fetch(self.profile))
        if answer.error is not ErrorCode.NONE:
            return -1
        for batch in answer.batches:
            if batch.last_offset < base_offset:
                continue
            if batch.magic > MAGIC_V0 and batch.timestamp_type is TimestampType.LOG_APPEND_TIME:
                return batch.max_timestamp
            return -1
        return -1

    def fetch(
        self, topic: str, offset: int | None = None, *, fetch_version: int
    ) -> tuple[FetchResponse, FetchResponse]:
        """Both sides' answer from `offset`, by default the model's log start offset (a consumer reading from the
        earliest offset). Below an implementation's log start a fetch is OFFSET_OUT_OF_RANGE with no offsets, so a
        log start ahead of the model's shows as that error, one behind it as a smaller log start offset."""
        if offset is None:
            offset = self.ref.cluster.leader_log(topic).log_start_offset  # type: ignore[attr-defined]
        return (
            self.impl.fetch(topic, 0, offset, fetch_version=fetch_version),
            self.ref.fetch(topic, 0, offset, fetch_version=fetch_version),
        )

    def list_offsets(
        self,
        topic: str,
        target: int,
        *,
        version: int,
        isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> tuple[ListOffsetsAnswer, ListOffsetsAnswer]:
        self._follow_clock(topic)
        return (
            self.impl.list_offsets(topic, 0, target, version=version, isolation=isolation),
            self.ref.list_offsets(topic, 0, target, version=version, isolation=isolation),
        )

    def list_offsets_facts(self, topic: str) -> dict[str, object]:
        """Values from the model's log that a known ListOffsets departure may equal (observables.FACTS)."""
        log = self.ref.cluster.leader_log(topic)  # type: ignore[attr-defined]
        batches = log.batches()
        if not batches:
            return {}
        facts: dict[str, object] = {"last-batch-base-plus-one": batches[-1].base_offset + 1}
        found = max_timestamp_lookup(log, MaxTimestampLookup.EXACT)
        if found is not None:
            offset = found[1]
            facts["max-timestamp-batch-last-offset"] = next(
                b.last_offset for b in batches if b.base_offset <= offset <= b.last_offset
            )
        return facts

    def elect_leader(self, topic: str, broker: int) -> None:
        self.impl.elect_leader(topic, 0, broker)
        self.ref.elect_leader(topic, 0, broker)

    def leader(self, topic: str) -> int:
        return self.ref.leader(topic, 0)

    def retention_tick(self) -> None:
        self.impl.retention_tick()
        self.ref.retention_tick()

    def close(self) -> None:
        self.ref.close()

    # -- steps: an operation with the checks that always follow it
    #
    # A derandomized run seeds each @given test from the text of the test function itself (Hypothesis'
    # function_digest), so moving a test body onto these steps gives that test other examples, however faithful
    # the rewrite; the helpers such tests call can use them freely.

    def produce_checked(
        self,
        topic: str,
        batches: Sequence[AnyBatch],
        *,
        profile: Profile,
        error_clause: str,
        context: str = "",
        produce_version: int | None = None,
        as_drawn: bool = False,
    ) -> tuple[ProduceResponse, ProduceResponse]:
        """`produce` followed by `check_produce` against the topic's config: `batches` at `produce_version`, by default
        the version for their magic under `profile` (`produce_version_for`), the answers compared under
        `error_clause`. `profile` is the one the test judges by (the suite's), passed in as the test would pass it to
        `produce_version_for` itself. Returns both answers for the checks a test adds."""
        if produce_version is None:
            produce_version = produce_version_for(batches[0].magic, profile)
        observed, expected = self.produce(topic, batches, produce_version=produce_version, as_drawn=as_drawn)
        check_produce(observed, expected, config=self.configs[topic], error_clause=error_clause, context=context)
        return observed, expected

    def read_back(
        self,
        topic: str,
        *,
        profile: Profile,
        fetch_version: int | None = None,
        stored_clause: str = "CNV.stored-magic",
        record_clause: Callable[[AnyBatch], str] | None = None,
        header_clause: Callable[[AnyBatch], str | None] | None = None,
        as_sent: bool = False,
        context: str = "",
    ) -> tuple[FetchResponse, FetchResponse]:
        """`fetch` from the log start followed by `check_fetch` against the topic's config: at `fetch_version`, by
        default the newest `profile` serves (`newest_fetch`), compared under the clauses given (`check_fetch`'s,
        `record_clause` by default the CON-1 table); `as_sent` gives the checks the producer's own header values
        (`sent`). Returns both answers for the checks a test adds."""
        if fetch_version is None:
            fetch_version = newest_fetch(profile)
        got, want = self.fetch(topic, fetch_version=fetch_version)
        check_fetch(got, want, config=self.configs[topic], profile=profile, stored_clause=stored_clause,
                    record_clause=record_clause or consumer_view_clause, header_clause=header_clause,
                    sent=self.sent.get(topic) if as_sent else None, context=context)  # fmt: skip
        return got, want

    def produce_and_read(
        self,
        topic: str,
        batches: Sequence[AnyBatch],
        *,
        profile: Profile,
        error_clause: str,
        stored_clause: str = "CNV.stored-magic",
        record_clause: Callable[[AnyBatch], str] | None = None,
        as_sent: bool = False,
        context: str = "",
    ) -> tuple[FetchResponse, FetchResponse]:
        """One produce read back: `produce_checked`, then `read_back` at the newest fetch version, both under the
        same `context` (what a storage test does with one request). Returns the fetch answers."""
        self.produce_checked(topic, batches, profile=profile, error_clause=error_clause, context=context)
        return self.read_back(topic, profile=profile, stored_clause=stored_clause, record_clause=record_clause,
                              as_sent=as_sent, context=context)  # fmt: skip


_RANGE_IN_TEXT = re.compile(r"The timestamp should be within \[(-?\d+), (-?\d+)\]?$")


def _now_in_range_errors(observed: ProduceResponse, config: TopicConfig, profile: Profile) -> int | None:
    """The `now` a wall-clock broker validated with, read back from its out-of-range record errors: the printed
    interval is [now - before, now + after] with 64-bit wraparound (models.validator.out_of_range_text), so one
    `now` explains every error of the batch or the texts tell nothing (None)."""
    before, after = effective_bounds(config, profile)
    found: set[int] = set()
    for error in observed.record_errors:
        match = _RANGE_IN_TEXT.search(error.message or "")
        if match is None:
            return None
        low, high = int(match.group(1)), int(match.group(2))
        now = java_long(low + before)
        if java_long(now + after) != high:
            return None
        found.add(now)
    return found.pop() if len(found) == 1 else None


# ------------------------------------------------------------------------------------ request choices


def v2_produce_version(profile: Profile) -> int:
    """The newest Produce version (magic 2 only from v3, VAL-14)."""
    return profile.produce_versions[1]


LEGACY_PRODUCE_VERSION = 2  # CNV-1: Produce v2 carries magic 1 (and brokers < 4.0 accept v0 there too)


def produce_version_for(magic: int, profile: Profile) -> int:
    return v2_produce_version(profile) if magic == MAGIC_V2 else LEGACY_PRODUCE_VERSION


def producible_magics(twin_or_caps: Twin | frozenset[Capability], profile: Profile) -> tuple[int, ...]:
    """The record magics a producer can send to this implementation (CNV-1, VAL-14)."""
    caps = twin_or_caps.impl.capabilities if isinstance(twin_or_caps, Twin) else twin_or_caps
    return magics_for_capabilities(caps, profile)


def sent_batches(twin: Twin, ts: st.SearchStrategy[int], **kwargs: Any) -> st.SearchStrategy[tuple[AnyBatch, ...]]:
    """`strategies.records.batches` as this target's producers send them: idempotent-producer fields only
    where the target has IDEMPOTENCE (a real broker answers an unknown producer id with its own errors,
    which are outside the timestamp contract)."""
    return batches(ts, producer=twin.has(Capability.IDEMPOTENCE), **kwargs)


def newest_fetch(profile: Profile) -> int:
    return profile.fetch_versions[1]


def list_offsets_versions(profile: Profile) -> tuple[int, ...]:
    """ListOffsets versions with timestamp search (v1+, KIP-79) that the profile serves."""
    lo, hi = profile.list_offsets_versions
    return tuple(range(max(lo, 1), hi + 1))


def bounds(config: TopicConfig, profile: Profile) -> tuple[int, int]:
    return effective_bounds(config, profile)


def lifted_after(twin: Twin, profile: Profile) -> int | None:
    """message.timestamp.after.max.ms for a test that is not about validation and wants far-future
    timestamps accepted: Long.MAX_VALUE where the profile's default would reject them (4.0's 1 h, VAL-6) and
    the target can set it (KIP-937 configs); otherwise None, and `accepted_timestamps` keeps the draws
    inside the default bounds."""
    if profile.has_before_after_configs and profile.default_after_ms != LONG_MAX and twin.has(
        Capability.KIP_937_CONFIGS
    ):
        return LONG_MAX
    return None


def accepted_timestamps(now: int, config: TopicConfig, profile: Profile, **kwargs: Any) -> st.SearchStrategy[int]:
    """Producer timestamps that `config` accepts at `now` (tests of storage, lookups and conversion, not of
    validation): the whole range where the bounds are lifted or the topic is LogAppendTime, else only values
    inside the effective bounds with the usual margin (-1, exempt since 0.11, included: VAL-3)."""
    before, after = bounds(config, profile)
    if config.timestamp_type is TimestampType.LOG_APPEND_TIME or (before == LONG_MAX and after == LONG_MAX):
        return timestamps(now, before=LONG_MAX, after=LONG_MAX, **kwargs)
    low, high = now - before + DEFAULT_MARGIN_MS, now + after - DEFAULT_MARGIN_MS
    exempt = profile.exempt_no_timestamp
    return timestamps(now, before=before, after=after, **kwargs).filter(
        lambda t: (t == -1 and exempt) or low <= t <= high
    )


# ------------------------------------------------------------------------------------ comparisons


def check_produce_error(clause: str, observed: ProduceResponse, expected: ProduceResponse, context: str) -> bool:
    """False when the codes differ and the clause is a known failure (the test goes on: conformance.judging.checks)."""
    return check_equal(clause, Obs.PRODUCE_ERROR, observed.error, expected.error, context)


def check_produce(
    observed: ProduceResponse,
    expected: ProduceResponse,
    *,
    config: TopicConfig,
    error_clause: str,
    context: str = "",
) -> None:
    """A produce answer against the model's: the error code first (under `error_clause`, the rule the
    test exercises), then on rejection the KIP-467 fields, on success log_append_time (VAL-12)."""
    same_error = check_produce_error(error_clause, observed, expected, context)
    if expected.error is not ErrorCode.NONE:
        if not same_error:
            # Accepted (or refused otherwise) where Kafka refuses: that difference is the error clause's,
            # already recorded as known; the fields of a rejection (VAL-11) are judged on rejections only.
            return
        check_equal(
            "VAL.rejection-response-fields",
            Obs.PRODUCE_REJECTION_FIELDS,
            (observed.base_offset, observed.log_append_time, observed.log_start_offset),
            (expected.base_offset, expected.log_append_time, expected.log_start_offset),
            context,
        )
        if expected.error is ErrorCode.INVALID_TIMESTAMP and expected.record_errors:
            check_equal(
                "VAL.record-errors-batch-index",
                Obs.PRODUCE_RECORD_ERROR_INDEXES,
                [e.batch_index for e in observed.record_errors],
                [e.batch_index for e in expected.record_errors],
                context,
            )
        return
    if config.timestamp_type is TimestampType.LOG_APPEND_TIME:
        check_equal("VAL.lat-response-time", Obs.PRODUCE_LOG_APPEND_TIME, observed.log_append_time,
                    expected.log_append_time, context)
    else:
        check_equal("VAL.createtime-response-minus-one", Obs.PRODUCE_LOG_APPEND_TIME, observed.log_append_time,
                    expected.log_append_time, context)
    check_equal(error_clause, Obs.PRODUCE_BASE_OFFSET, observed.base_offset, expected.base_offset, context)


def consumer_view_clause(batch: AnyBatch) -> str:
    """CON-1: the consumer-view clause of a record read from `batch` (docs/rules.md, Consumer view)."""
    if batch.magic == MAGIC_V0:
        return "CON.v0-no-timestamp"
    if isinstance(batch, LegacyBatch):
        if not batch.is_compressed:
            return "CON.v1-uncompressed-own"
        if batch.timestamp_type is TimestampType.LOG_APPEND_TIME:
            return "CON.v1-wrapper-lat-wrapper-value"
        if any(e.message.magic == MAGIC_V0 for e in batch.message.inner or ()):
            return "CON.v1-wrapper-v0-inner"
        return "CON.v1-wrapper-createtime-inner"
    if batch.timestamp_type is TimestampType.LOG_APPEND_TIME:
        return "CON.v2-lat-max-timestamp"
    return "CON.v2-createtime-base-plus-delta"


def batch_header(batch: AnyBatch) -> tuple[int, int, int]:
    return (batch.base_offset, batch.last_offset, batch.magic)


def check_fetch(
    observed: FetchResponse,
    expected: FetchResponse,
    *,
    config: TopicConfig,
    profile: Profile,
    stored_clause: str = "CNV.stored-magic",
    record_clause: Callable[[AnyBatch], str] = consumer_view_clause,
    header_clause: Callable[[AnyBatch], str | None] | None = None,
    sent: Mapping[int, AnyBatch] | None = None,
    context: str = "",
) -> None:
    """A fetch against the model's, most specific first: the error code and which batches/magics were
    served (`stored_clause`), then what the broker wrote into each header (codec: CMP-1; LogAppendTime
    type and max = now: CMP-3/4; CreateTime max recomputed: VAL-13), then each record as a consumer reads
    it (`record_clause` of the expected batch, default the CON-1 table).

    `header_clause` names the header comparisons instead, for a caller that has already compared the
    stored headers under the append clauses and now reads them through something else that rewrites or
    copies them (a down-conversion, CNV-5; a new leader's replica, REP-1). `sent` (Twin.sent[topic]) gives
    the checks the producer's own header values, where the caller has them."""
    same_error = check_equal(stored_clause, Obs.FETCH_ERROR, observed.error, expected.error, context)
    same_batches = check_equal(
        stored_clause,
        Obs.FETCH_BATCHES,
        [batch_header(b) for b in observed.batches],
        [batch_header(b) for b in expected.batches],
        context,
    )
    if not (same_error and same_batches):
        return  # a KNOWN difference: the batch-by-batch comparison below assumes the same batches
    lat_topic = config.timestamp_type is TimestampType.LOG_APPEND_TIME
    stored_v0 = target_magic(config, profile) == MAGIC_V0
    written = _written_timestamps(sent)
    for obs, exp in zip(observed.batches, expected.batches, strict=True):
        where = f"{context} batch at offset {exp.base_offset}"
        override = header_clause(exp) if header_clause is not None else None
        check_equal(override or "CMP.topic-codec-recompresses", Obs.BATCH_CODEC, obs.codec, exp.codec, where)
        if override is not None:
            check_equal(override, Obs.BATCH_TIMESTAMP_TYPE, obs.timestamp_type, exp.timestamp_type, where)
            check_equal(override, Obs.BATCH_MAX_TIMESTAMP, obs.max_timestamp, exp.max_timestamp, where)
        elif lat_topic and stored_v0:
            check_equal("CMP.lat-v0-target-max-minus-one", Obs.BATCH_MAX_TIMESTAMP, obs.max_timestamp,
                        exp.max_timestamp, where)
        elif lat_topic and exp.magic > MAGIC_V0:
            check_equal("CMP.lat-every-record-reads-now", Obs.BATCH_TIMESTAMP_TYPE, obs.timestamp_type,
                        exp.timestamp_type, where)
            check_equal("CMP.lat-every-record-reads-now", Obs.BATCH_MAX_TIMESTAMP, obs.max_timestamp,
                        exp.max_timestamp, where, sent=_written_max(exp, written))
        else:
            check_equal("VAL.header-max-recomputed", Obs.BATCH_TIMESTAMP_TYPE, obs.timestamp_type,
                        exp.timestamp_type, where)
            as_sent = sent.get(exp.base_offset) if sent is not None else None
            check_equal("VAL.header-max-recomputed", Obs.BATCH_MAX_TIMESTAMP, obs.max_timestamp,
                        exp.max_timestamp, where, sent=as_sent.max_timestamp if as_sent is not None else NOT_GIVEN)
        clause = record_clause(exp)
        check_equal(
            clause,
            Obs.RECORD_TIMESTAMPS,
            [(r.offset, r.timestamp, r.timestamp_type) for r in obs.records()],
            [(r.offset, r.timestamp, r.timestamp_type) for r in exp.records()],
            where,
            sent=_written_records(exp, written) if lat_topic else NOT_GIVEN,
        )
        check_equal(
            clause,
            Obs.RECORD_PAYLOADS,
            [(r.key, r.value) for r in obs.records()],
            [(r.key, r.value) for r in exp.records()],
            where,
        )


def _written_timestamps(sent: Mapping[int, AnyBatch] | None) -> dict[int, int]:
    """Each sent record's offset in the log with the timestamp its producer wrote (`sent`: Twin.sent[topic], each
    request's batches by the offset the log gave the first): for the facts of a LogAppendTime topic's checks."""
    written: dict[int, int] = {}
    for base, batch in (sent or {}).items():
        for i, record in enumerate(batch.records()):
            written[base + i] = record.timestamp
    return written


def _written_max(stored: AnyBatch, written: Mapping[int, int]) -> object:
    """FACTS "sent" of a stored batch's max timestamp: the max of its records' timestamps as their producer wrote
    them, where every one is known."""
    stamps = [written.get(r.offset) for r in stored.records()]
    return NOT_GIVEN if not stamps or None in stamps else max(t for t in stamps if t is not None)


def _written_records(stored: AnyBatch, written: Mapping[int, int]) -> object:
    """FACTS "sent" of a stored batch's records: each (offset, timestamp, CreateTime) as their producer wrote
    them, where every one is known (a LogAppendTime topic's records kept as written: Kafka 0.10's rebuild)."""
    records = list(stored.records())
    if not records or any(r.offset not in written for r in records):
        return NOT_GIVEN
    return [(r.offset, written[r.offset], TimestampType.CREATE_TIME) for r in records]


def list_offsets_clause(target: int, version: int, expected: ListOffsetsAnswer, profile: Profile) -> str:
    """The LO clause that names the answer to `target` at `version` (LO-1..6)."""
    if target >= 0:
        return "LO.not-found-minus-one" if expected.offset == -1 else "LO.first-ge-target"
    minimum = profile.min_version_for_target(target)
    if minimum is None or version < minimum:
        from models.profiles import UnknownSpecialTarget

        if profile.unknown_special_target is UnknownSpecialTarget.SEARCH:
            if minimum is None:
                return "LO.unknown-target-searched"
            # Before 3.9 a target the broker knows is special at any version (LO-1): its own clause, below.
        else:
            return "LO.special-target-min-version" if minimum is not None else "LO.unknown-target-unsupported"
    return {
        -1: "LO.latest-is-high-watermark",
        -2: "LO.earliest-is-log-start",
        -3: "LO.max-timestamp-empty" if expected.offset == -1 else "LO.max-timestamp-first-record",
        -4: "LO.earliest-local-equals-earliest",
        -5: "LO.latest-tiered-none",
        -6: "LO.earliest-pending-upload-none",
    }.get(target, "LO.unknown-target-unsupported")


def check_list_offsets(
    observed: ListOffsetsAnswer,
    expected: ListOffsetsAnswer,
    *,
    target: int,
    version: int,
    profile: Profile,
    clause: str | None = None,
    context: str = "",
    facts: Mapping[str, object] | None = None,
) -> None:
    """A ListOffsets answer against the model's: error and offset under the target's clause (or
    `clause`), then the found record's own timestamp (LO-2), then the leader epoch (KIP-320). `facts`
    (Twin.list_offsets_facts) go with the offset check, for expectations that name one."""
    main = clause or list_offsets_clause(target, version, expected, profile)
    where = f"{context} target {target} v{version}".strip()
    check_equal(main, Obs.LIST_OFFSETS_ERROR, observed.error, expected.error, where)
    check_equal(main, Obs.LIST_OFFSETS_OFFSET, observed.offset, expected.offset, where, facts=facts)
    ts_clause = "LO.record-own-timestamp" if target >= 0 and expected.offset >= 0 else main
    check_equal(ts_clause, Obs.LIST_OFFSETS_TIMESTAMP, observed.timestamp, expected.timestamp, where)
    if version < 4:
        epoch_clause = "LO.no-epoch-before-v4"
    elif target >= 0 and expected.offset >= 0:
        epoch_clause = "LO.epoch-of-found-batch"
    else:
        epoch_clause = main
    check_equal(epoch_clause, Obs.LIST_OFFSETS_EPOCH, observed.leader_epoch, expected.leader_epoch, where)


def check_list_offsets_under(
    observed: ListOffsetsAnswer,
    expected: ListOffsetsAnswer,
    *,
    target: int,
    version: int,
    profile: Profile,
    clause: str | None,
    context: str = "",
    facts: Mapping[str, object] | None = None,
) -> None:
    """`check_list_offsets`, except that a departure of the error or offset under `clause` (a SHOULD clause
    is recorded, not raised) ends the comparison: the timestamp and epoch of a wrong record are not news."""
    if clause is not None:
        where = f"{context} target {target} v{version}".strip()
        if not (check_equal(clause, Obs.LIST_OFFSETS_ERROR, observed.error, expected.error, where)
                and check_equal(clause, Obs.LIST_OFFSETS_OFFSET, observed.offset, expected.offset, where,
                                facts=facts)):
            return
    check_list_offsets(observed, expected, target=target, version=version, profile=profile, clause=clause,
                       context=context, facts=facts)


def timestampless_segments(log: PartitionLog) -> list[int]:
    """Indexes of the segments holding records but no timestamp (IDX-6: dated by their file's mtime)."""
    return [i for i, s in enumerate(log.segments) if not s.is_empty() and s.max_timestamp < 0]


def segment_clause(log: PartitionLog, target: int) -> str | None:
    """LO-2 with IDX-6: the clause that decides `target`'s answer where a segment without timestamps is in
    the way. Stopping at it (its mtime >= target) is LO.first-qualifying-segment; passing it (its mtime is
    below target) is IDX.largest-timestamp-mtime; None where no such segment comes first. Where it is not
    None the answer hangs on a file's mtime, which a target without FILE_TIMES does not date by its clock."""
    without = set(timestampless_segments(log))
    for i, segment in enumerate(log.segments):
        if segment.largest_timestamp() >= target:
            if i in without:
                return "LO.first-qualifying-segment"
            return "IDX.largest-timestamp-mtime" if any(j < i for j in without) else None
    return "IDX.largest-timestamp-mtime" if without else None


def magic_ok(magic: int, profile: Profile) -> bool:
    return magic <= profile.max_magic


__all__ = [
    "LEGACY_PRODUCE_VERSION",
    "MAGIC_V1",
    "Suite",
    "Twin",
    "bounds",
    "check_fetch",
    "check_list_offsets",
    "check_list_offsets_under",
    "check_produce",
    "consumer_view_clause",
    "list_offsets_clause",
    "list_offsets_versions",
    "newest_fetch",
    "produce_version_for",
    "producible_codecs",
    "producible_magics",
    "segment_clause",
    "suite_settings",
    "timestampless_segments",
    "unique_topic",
    "v2_produce_version",
]
