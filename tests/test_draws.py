"""Pinned draws (conformance.judging.draws): recorded values come back in order, moved with the clock."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from conformance.judging.draws import PinExhausted, PinMismatch, Replay, note_clock, recorded, shift_timestamps
from models.constants import Codec, TimestampType
from models.records import RecordSpec, build_v2

ANCHOR = 1_700_000_000_000


def test_timestamps_move_with_the_clock_and_other_values_do_not() -> None:
    batch = build_v2([RecordSpec(ANCHOR + 5, b"k", b"v"), RecordSpec(ANCHOR - 7, b"k", b"w")], codec=Codec.GZIP)
    moved = shift_timestamps((batch, 3, -1, 2**63 - 1, TimestampType.CREATE_TIME), ANCHOR, 1_000)
    assert [r.timestamp for r in moved[0].records()] == [ANCHOR + 1_005, ANCHOR + 993]
    assert moved[1:] == (3, -1, 2**63 - 1, TimestampType.CREATE_TIME)


def test_a_replay_hands_back_its_draws_shifted_by_the_first_clock_reading_and_each_run_starts_over() -> None:
    pinned = Replay([("topic type", TimestampType.CREATE_TIME), ("timestamp", ANCHOR + 60_000)], anchor=ANCHOR)
    for _ in range(2):
        data = recorded(pinned)
        assert data.draw(st.sampled_from(TimestampType), label="topic type") is TimestampType.CREATE_TIME
        note_clock(ANCHOR + 3_600_000)  # the broker's clock an hour later
        assert data.draw(st.integers(), label="timestamp") == ANCHOR + 3_660_000


def test_a_replay_that_no_longer_fits_the_test_says_which_draw() -> None:
    data = recorded(Replay([("records", 3)]))
    with pytest.raises(PinMismatch, match="draw 1 of the pinned example is 'records' but the test asks for 'gaps'"):
        data.draw(st.integers(), label="gaps")
    # Past its last draw the pin ends (the recorded run failed there); the plugin ends the example quietly.
    data = recorded(Replay([]))
    with pytest.raises(PinExhausted, match="has 0 draws"):
        data.draw(st.integers(), label="records")
