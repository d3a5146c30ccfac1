"""The per-segment time index and offset index (docs/rules.md: IDX-1, IDX-3, IDX-7, IDX-14).

Both indexes are in-memory lists of entries; the 12-byte / 8-byte file encodings (IDX-1) only
matter here through the capacities, which the caller derives from `segment.index.bytes`.
These are the only mutable objects of the model besides the partition log that owns them.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from .constants import NO_TIMESTAMP
from .errors import IndexFullError, IndexTimestampOrderError, InvalidOffsetError

TIME_INDEX_ENTRY_BYTES = 12  # IDX-1: int64 timestamp + int32 relative offset
OFFSET_INDEX_ENTRY_BYTES = 8  # int32 relative offset + int32 file position


class TimeIndex:
    """A segment's time index: entries (timestamp, offset), strictly increasing in timestamp and
    non-decreasing in offset (IDX-3). An empty index behaves as if its last entry were
    (-1, base_offset), so a timestamp of -1 is never indexed and 0 is."""

    def __init__(self, base_offset: int, max_entries: int) -> None:
        if max_entries < 1:
            raise ValueError(f"a time index needs room for at least one entry, not {max_entries}")
        self.base_offset = base_offset
        self.max_entries = max_entries
        self._timestamps: list[int] = []
        self._offsets: list[int] = []

    def __len__(self) -> int:
        return len(self._timestamps)

    def __repr__(self) -> str:
        return f"TimeIndex(base_offset={self.base_offset}, entries={list(self.entries)})"

    @property
    def entries(self) -> tuple[tuple[int, int], ...]:
        return tuple(zip(self._timestamps, self._offsets, strict=True))

    def entry(self, i: int) -> tuple[int, int]:
        return self._timestamps[i], self._offsets[i]

    def is_full(self) -> bool:
        # IDX-1: full one entry early; the last slot is kept for the roll/close entry (IDX-4).
        return len(self._timestamps) >= self.max_entries - 1

    def last_entry(self) -> tuple[int, int]:
        # IDX-3: the empty index answers (-1, base_offset).
        if not self._timestamps:
            return NO_TIMESTAMP, self.base_offset
        return self._timestamps[-1], self._offsets[-1]

    def maybe_append(self, timestamp: int, offset: int, *, skip_full_check: bool = False) -> bool:
        """IDX-3: append (timestamp, offset) iff `timestamp` is strictly greater than the last entry's.

        Raises IndexFullError when full and `skip_full_check` is false (checked first, as Kafka's
        `IllegalArgumentException`), InvalidOffsetError for an offset below the last entry's, and
        IndexTimestampOrderError for a timestamp below it. An equal offset is allowed (DIS-10).
        Returns whether an entry was written."""
        if not skip_full_check and self.is_full():
            raise IndexFullError(
                f"attempt to append to a full time index (size {len(self)}, max entries {self.max_entries})"
            )
        if self._timestamps and offset < self._offsets[-1]:
            raise InvalidOffsetError(
                f"attempt to append an offset ({offset}) to the time index below the last one "
                f"({self._offsets[-1]}), base offset {self.base_offset}"
            )
        if self._timestamps and timestamp < self._timestamps[-1]:
            raise IndexTimestampOrderError(
                f"attempt to append a timestamp ({timestamp}) to the time index below the last one "
                f"({self._timestamps[-1]})"
            )
        if not self._supersedes_last_entry(timestamp, offset):
            return False
        if len(self._timestamps) >= self.max_entries:
            # Only reachable with skip_full_check on an index already holding max_entries entries;
            # Kafka's buffer would overflow here, the model refuses.
            raise IndexFullError(f"time index has no slot left (max entries {self.max_entries})")
        self._timestamps.append(timestamp)
        self._offsets.append(offset)
        return True

    def _supersedes_last_entry(self, timestamp: int, offset: int) -> bool:
        """IDX-3: a new entry is written only when its timestamp is strictly greater than the last
        entry's (the empty index's last entry is (-1, base_offset)), so equal timestamps keep the
        earliest offset."""
        last_timestamp, _ = self.last_entry()
        return timestamp > last_timestamp

    def lookup(self, target: int) -> tuple[int, int]:
        """IDX-7: the entry with the largest timestamp <= target, or (-1, base_offset) if none."""
        i = bisect_right(self._timestamps, target)
        if i == 0:
            return NO_TIMESTAMP, self.base_offset
        return self._timestamps[i - 1], self._offsets[i - 1]

    def truncate_to(self, offset: int) -> None:
        """IDX-14: remove every entry whose offset is >= `offset`."""
        keep = bisect_left(self._offsets, offset)
        del self._timestamps[keep:]
        del self._offsets[keep:]

    def clear(self) -> None:
        self._timestamps.clear()
        self._offsets.clear()


class OffsetIndex:
    """A segment's offset index: entries (offset, byte position of a batch at or before it),
    strictly increasing in offset. Used by IDX-8 and LO-6 to find where to start scanning."""

    def __init__(self, base_offset: int, max_entries: int) -> None:
        if max_entries < 1:
            raise ValueError(f"an offset index needs room for at least one entry, not {max_entries}")
        self.base_offset = base_offset
        self.max_entries = max_entries
        self._offsets: list[int] = []
        self._positions: list[int] = []

    def __len__(self) -> int:
        return len(self._offsets)

    def __repr__(self) -> str:
        return f"OffsetIndex(base_offset={self.base_offset}, entries={list(self.entries)})"

    @property
    def entries(self) -> tuple[tuple[int, int], ...]:
        return tuple(zip(self._offsets, self._positions, strict=True))

    def entry(self, i: int) -> tuple[int, int]:
        return self._offsets[i], self._positions[i]

    def is_full(self) -> bool:
        # Unlike the time index, the offset index keeps no reserved slot.
        return len(self._offsets) >= self.max_entries

    def append(self, offset: int, position: int) -> None:
        if self.is_full():
            raise IndexFullError(f"attempt to append to a full offset index (max entries {self.max_entries})")
        if self._offsets and offset <= self._offsets[-1]:
            raise InvalidOffsetError(
                f"attempt to append an offset ({offset}) to the offset index at or below the last one "
                f"({self._offsets[-1]}), base offset {self.base_offset}"
            )
        self._offsets.append(offset)
        self._positions.append(position)

    def lookup(self, target_offset: int) -> tuple[int, int]:
        """The entry with the largest offset <= target, or (base_offset, 0) if none."""
        i = bisect_right(self._offsets, target_offset)
        if i == 0:
            return self.base_offset, 0
        return self._offsets[i - 1], self._positions[i - 1]

    def truncate_to(self, offset: int) -> None:
        """IDX-14: remove every entry whose offset is >= `offset`."""
        keep = bisect_left(self._offsets, offset)
        del self._offsets[keep:]
        del self._positions[keep:]

    def clear(self) -> None:
        self._offsets.clear()
        self._positions.clear()


__all__ = ["OFFSET_INDEX_ENTRY_BYTES", "TIME_INDEX_ENTRY_BYTES", "OffsetIndex", "TimeIndex"]
