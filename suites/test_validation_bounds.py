"""Exact validation bounds (docs/rules.md, VAL-4..6, VAL-9): each bound probed on its own, the two KIP-937
sides checked independently, the 3.6-3.9 fallback to message.timestamp.difference.max.ms, its removal
in 4.0, and whole-batch rejection of a batch with one out-of-range record.

test_validation.test_range_check sends mixed batches in which the farthest value decides for the whole
batch, so a fault at one exact bound shows only when the probe happens to be the deciding value. Here
every probe is produced as its own single-record batch, on every example, so each comparison names the
one rule it exercises: an exact bound is VAL.range-inclusive-bounds, a value between the two sides'
bounds is VAL.range-before-after, a value past the difference on a side that falls back to it is
VAL.bounds-fallback-to-difference (checked before the exact probes, which are inclusive-bounds).
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.judging.checks import check_equal
from conformance.judging.draws import Draws, draws
from conformance.judging.observables import Obs
from conformance.targets.implementation import Capability
from models.config import TopicConfig
from models.constants import LONG_MAX, MAGIC_V1, MAGIC_V2, Codec, TimestampType
from models.errors import ConfigError
from models.profiles import Profile, RangeRule
from models.records import AnyBatch, RecordSpec, build_batches
from strategies.configs import bounds_ms, topic_configs
from strategies.timestamps import timestamps

from .helpers import (
    Suite,
    Twin,
    bounds,
    check_fetch,
    check_produce,
    newest_fetch,
    produce_version_for,
    producible_codecs,
    producible_magics,
    suite_settings,
    unique_topic,
)

DAY_MS = 24 * 3_600_000


def _one_record(ts: int, magic: int, codec: Codec) -> tuple[AnyBatch, ...]:
    return build_batches([RecordSpec(ts, b"k", b"v")], magic=magic, codec=codec)


def _produce_each(
    twin: Twin,
    topic: str,
    config: TopicConfig,
    probes: Iterable[tuple[int, str]],
    *,
    magic: int,
    codec: Codec,
    context: str,
) -> None:
    """Each (timestamp, clause) as its own single-record batch: accepted or rejected as the model says,
    the difference named by the probe's clause (the error code first, then the KIP-467 fields)."""
    for ts, clause in probes:
        sent = _one_record(ts, magic, codec)
        observed, expected = twin.produce(topic, sent, produce_version=produce_version_for(magic, twin.profile))
        check_produce(observed, expected, config=config, error_clause=clause, context=f"{context} ts={ts}")


def _codecs_for(magic: int, capabilities: frozenset[Capability]) -> tuple[Codec, ...]:
    """The producible codecs at `magic` (zstd needs magic 2, FMT-4)."""
    return tuple(c for c in producible_codecs(capabilities) if magic == MAGIC_V2 or c is not Codec.ZSTD)


def _shape(twin: Twin, profile: Profile, data: Draws) -> tuple[int, Codec]:
    magics = tuple(m for m in producible_magics(twin, profile) if m >= MAGIC_V1)
    if not magics:
        pytest.skip("UNSUPPORTED: no timestamped magic (v1 or v2) can be produced")
    magic = data.draw(st.sampled_from(magics), label="magic")
    codec = data.draw(st.sampled_from(_codecs_for(magic, twin.impl.capabilities)), label="codec")
    return magic, codec


def _bound() -> st.SearchStrategy[int]:
    """A finite KIP-937 bound; 0 (only `now` itself on that side) included."""
    return st.one_of(st.just(0), bounds_ms())


@pytest.mark.clause("VAL.range-inclusive-bounds")
@pytest.mark.requires(Capability.CLOCK_CONTROL, Capability.KIP_937_CONFIGS)
@given(data=draws())
@suite_settings(20)
def test_bound_probes(suite: Suite, data: Draws) -> None:
    """VAL-4: with finite before/after, ts = now - before and ts = now + after are accepted, one
    millisecond further on either side is rejected; each probe is its own batch."""
    data = suite.draws(data)
    before = data.draw(_bound(), label='before')
    after = data.draw(_bound(), label='after')
    twin = suite.twin()
    magic, codec = _shape(twin, suite.profile, data)
    # Finite (never Long.MAX_VALUE) values, so 3.6-3.9 use them without falling back (VAL-6).
    config = TopicConfig(before_max_ms=before, after_max_ms=after)
    topic = unique_topic("bound-probe")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    probes = dict.fromkeys((now - before, now - before - 1, now + after, now + after + 1))
    context = f"now={now} bounds=({before}, {after})"
    _produce_each(
        twin, topic, config, ((ts, "VAL.range-inclusive-bounds") for ts in probes),
        magic=magic, codec=codec, context=context,
    )
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    check_fetch(
        got, want, config=config, profile=suite.profile, stored_clause="VAL.range-inclusive-bounds", context=context
    )


@st.composite
def _asymmetric_bounds(draw: st.DrawFn) -> tuple[int, int]:
    """(before, after) at least 2 ms apart, so that the mirror of one side's bound is neither that
    side's exact bound nor one past it (those are the inclusive-bounds probes)."""
    small = draw(_bound())
    large = small + draw(st.integers(2, DAY_MS))
    return (small, large) if draw(st.booleans()) else (large, small)


@pytest.mark.clause("VAL.range-before-after")
@pytest.mark.requires(Capability.CLOCK_CONTROL, Capability.KIP_937_CONFIGS)
@given(data=draws())
@suite_settings(20)
def test_sides_are_independent(suite: Suite, data: Draws) -> None:
    """VAL-4 (KIP-937): before bounds the past and after the future, independently. The mirror of each
    bound (now - after, now + before) is accepted only when it is within the other side's own bound,
    which a single symmetric bound (the pre-3.6 rule, VAL-5) gets wrong on the narrower side."""
    data = suite.draws(data)
    sides = data.draw(_asymmetric_bounds(), label="sides")
    before, after = sides
    twin = suite.twin()
    magic, codec = _shape(twin, suite.profile, data)
    config = TopicConfig(before_max_ms=before, after_max_ms=after)
    topic = unique_topic("sides")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    narrow = min(before, after)
    wide = max(before, after)
    # Strictly between the narrow and the wide distance, on the narrow side: rejected by VAL-4.
    between = data.draw(st.integers(narrow + 2, wide), label="distance past the narrow bound")
    sign = -1 if before < after else 1
    probes = (now - after, now + before, now + sign * between, now - sign * between)
    context = f"now={now} bounds=({before}, {after})"
    _produce_each(
        twin,
        topic,
        config,
        ((ts, "VAL.range-before-after") for ts in probes),
        magic=magic,
        codec=codec,
        context=context,
    )
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    check_fetch(
        got, want, config=config, profile=suite.profile, stored_clause="VAL.range-before-after", context=context
    )


_UNSET_OR_MAX = st.sampled_from((None, LONG_MAX))


@st.composite
def _fallback_configs(draw: st.DrawFn) -> TopicConfig:
    """A 3.6-3.9 topic with message.timestamp.difference.max.ms set and at least one KIP-937 side unset
    or explicitly Long.MAX_VALUE (VAL-6: both fall back); the other side unset, Long.MAX_VALUE or finite."""
    difference = draw(bounds_ms())
    before = draw(st.one_of(_UNSET_OR_MAX, bounds_ms()))
    after = draw(_UNSET_OR_MAX) if before not in (None, LONG_MAX) else draw(st.one_of(_UNSET_OR_MAX, bounds_ms()))
    return TopicConfig(difference_max_ms=difference, before_max_ms=before, after_max_ms=after)


@pytest.mark.clause("VAL.bounds-fallback-to-difference", "VAL.range-inclusive-bounds")
@pytest.mark.requires(Capability.CLOCK_CONTROL, Capability.KIP_937_CONFIGS, Capability.DIFFERENCE_CONFIG)
@given(data=draws())
@suite_settings(20)
def test_fallback_to_difference(suite: Suite, data: Draws) -> None:
    """VAL-6 (3.6-3.9): a side whose KIP-937 config is unset or Long.MAX_VALUE is bounded by the
    difference config. Values clearly past the difference on such a side are rejected (the fallback),
    then the exact bound and one past it (inclusive bounds); values within it accepted."""
    data = suite.draws(data)
    config = data.draw(_fallback_configs(), label="config")
    assert config.difference_max_ms is not None
    difference = config.difference_max_ms
    twin = suite.twin()
    magic, codec = _shape(twin, suite.profile, data)
    topic = unique_topic("fallback")
    twin.create_topic(topic, config)
    now = twin.leader_clock(topic)
    signs = [s for s, side in ((-1, config.before_max_ms), (1, config.after_max_ms)) if side in (None, LONG_MAX)]
    beyond = data.draw(st.integers(2, DAY_MS), label="distance past the difference")
    within = data.draw(st.integers(0, difference), label="distance within the difference")
    far = [(now + s * (difference + beyond), "VAL.bounds-fallback-to-difference") for s in signs]
    far += [(now + s * within, "VAL.bounds-fallback-to-difference") for s in signs]
    exact = [(now + s * (difference + d), "VAL.range-inclusive-bounds") for s in signs for d in (0, 1)]
    context = f"now={now} config=(difference={difference}, before={config.before_max_ms}, after={config.after_max_ms})"
    _produce_each(twin, topic, config, far + exact, magic=magic, codec=codec, context=context)
    got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
    check_fetch(
        got,
        want,
        config=config,
        profile=suite.profile,
        stored_clause="VAL.bounds-fallback-to-difference",
        context=context,
    )


def _refuses(create: object, topic: str, config: TopicConfig) -> bool:
    try:
        create(topic, config)  # type: ignore[operator]
    except ConfigError:
        return True
    return False


@pytest.mark.clause("VAL.difference-config-removed")
@pytest.mark.requires(Capability.CLOCK_CONTROL)
@given(data=draws())
@suite_settings(20)
def test_difference_config_removed(suite: Suite, data: Draws) -> None:
    """VAL-6 (4.0+, KIP-724): message.timestamp.difference.max.ms no longer exists. A topic created with
    it is refused as the model refuses it; an implementation that accepts it anyway must at least not
    let it change the bounds: every value is then accepted or rejected as on a topic with only
    before/after (the rule restated: the reference topic is created without the difference config)."""
    data = suite.draws(data)
    difference = data.draw(bounds_ms(), label="difference")
    before = data.draw(st.one_of(st.none(), bounds_ms()), label="before")
    after = data.draw(st.one_of(st.none(), bounds_ms()), label="after")
    twin = suite.twin()
    magic, codec = _shape(twin, suite.profile, data)
    with_difference = TopicConfig(difference_max_ms=difference, before_max_ms=before, after_max_ms=after)
    only_kip_937 = TopicConfig(before_max_ms=before, after_max_ms=after)
    topic = unique_topic("no-difference")
    expected_refused = _refuses(twin.ref.create_topic, topic, with_difference)
    observed_refused = _refuses(twin.impl.create_topic, topic, with_difference)
    context = f"difference={difference} before={before} after={after}"
    if not observed_refused:
        if expected_refused:
            twin.ref.create_topic(topic, only_kip_937)
        now = twin.leader_clock(topic)
        beyond = data.draw(st.integers(1, DAY_MS), label="distance past the difference")
        distances = (difference, difference + 1, difference + beyond)
        probes = [now - d for d in distances] + [now + d for d in distances]
        _produce_each(
            twin,
            topic,
            only_kip_937,
            ((ts, "VAL.difference-config-removed") for ts in probes if ts >= 0),
            magic=magic,
            codec=codec,
            context=f"now={now} {context}",
        )
    check_equal(
        "VAL.difference-config-removed",
        Obs.CREATE_TOPICS_REFUSED,
        observed_refused,
        expected_refused,
        context,
    )


def _rule_clause(config: TopicConfig, profile: Profile) -> str:
    """The range rule that rejects a value clearly outside the effective bounds (VAL-4/5/6)."""
    if profile.range_rule is RangeRule.SYMMETRIC:
        return "VAL.range-symmetric"
    if (
        profile.has_difference_config
        and config.difference_max_ms is not None
        and (config.before_max_ms in (None, LONG_MAX) or config.after_max_ms in (None, LONG_MAX))
    ):
        return "VAL.bounds-fallback-to-difference"
    return "VAL.range-before-after"


@pytest.mark.clause(
    "VAL.whole-batch-rejected", "VAL.range-before-after", "VAL.range-symmetric", "VAL.bounds-fallback-to-difference"
)
@pytest.mark.requires(Capability.CLOCK_CONTROL)
@given(data=draws())
@suite_settings(20)
def test_whole_batch_rejected(suite: Suite, data: Draws) -> None:
    """VAL-9: one clearly out-of-range record among in-range ones fails the whole batch: nothing of it is
    written, no offset consumed. The record is first produced alone (its rejection is the range rule's
    clause), so that accepting the mixed batch can only be a whole-batch fault. One-batch shapes only:
    a v2 batch or a compressed v1 wrapper (uncompressed legacy sets are VAL-10's batch-by-batch rule)."""
    data, twin = suite.start(data)
    magics = producible_magics(twin, suite.profile)
    compressed = tuple(c for c in _codecs_for(MAGIC_V1, suite.impl.capabilities) if c is not Codec.NONE)
    shapes: list[tuple[int, tuple[Codec, ...]]] = []
    if MAGIC_V2 in magics:
        shapes.append((MAGIC_V2, producible_codecs(suite.impl.capabilities)))
    if MAGIC_V1 in magics and compressed:
        shapes.append((MAGIC_V1, compressed))
    if not shapes:
        pytest.skip("UNSUPPORTED: no one-batch shape (magic 2, or magic 1 with compression) can be produced")
    for magic, codecs in shapes:
        codec = data.draw(st.sampled_from(codecs), label=f"codec for magic {magic}")
        config = data.draw(topic_configs(suite.profile, timestamp_types=(TimestampType.CREATE_TIME,), bounded=True))
        topic = unique_topic("whole-batch")
        twin.create_topic(topic, config)
        now = twin.leader_clock(topic)
        before, after = bounds(config, suite.profile)
        ordinary = timestamps(now, before=before, after=after, specials=False, mistakes=False)
        good = data.draw(st.lists(ordinary, min_size=1, max_size=6), label="in-range timestamps")
        sides = [-1] if now - before - DAY_MS >= 0 else []
        sides += [1] if after < LONG_MAX - now - DAY_MS else []
        sign = data.draw(st.sampled_from(sides), label="side of the bad record")
        past = data.draw(st.integers(2, DAY_MS), label="distance past the bound")
        bad = now - before - past if sign < 0 else now + after + past
        position = data.draw(st.integers(0, len(good)), label="position of the bad record")
        mixed = [*good[:position], bad, *good[position:]]
        context = f"magic={magic} codec={codec.name} now={now} bounds=({before}, {after}) sent={mixed}"
        version = produce_version_for(magic, suite.profile)
        # An accepted batch first, so that "no offsets consumed" is visible past offset 0.
        sent = build_batches([RecordSpec(ts, b"k", b"v") for ts in good], magic=magic, codec=codec)
        observed, expected = twin.produce(topic, sent, produce_version=version)
        check_produce(
            observed, expected, config=config, error_clause=_rule_clause(config, suite.profile), context=context
        )
        _produce_each(
            twin, topic, config, [(bad, _rule_clause(config, suite.profile))], magic=magic, codec=codec, context=context
        )
        sent = build_batches([RecordSpec(ts, b"k", b"v") for ts in mixed], magic=magic, codec=codec)
        observed, expected = twin.produce(topic, sent, produce_version=version)
        check_produce(observed, expected, config=config, error_clause="VAL.whole-batch-rejected", context=context)
        got, want = twin.fetch(topic, fetch_version=newest_fetch(suite.profile))
        check_fetch(
            got, want, config=config, profile=suite.profile, stored_clause="VAL.whole-batch-rejected", context=context
        )
