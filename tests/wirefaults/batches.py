"""Rewriting the header of v2 batches inside a fetched record set, in place, CRC included.

The layout is FMT-9 (docs/rules.md; `models.codec` writes and reads it): ``BaseOffset int64 @0, Length
int32 @8, PartitionLeaderEpoch int32 @12, Magic int8 @16, CRC uint32 @17, Attributes int16 @21, ...,
MaxTimestamp int64 @35``. The CRC-32C covers Attributes..end (FMT-9), so a changed type bit (FMT-10) or
MaxTimestamp must come with a new CRC, or the suite's codec would refuse the batch as corrupt instead of
reading the fault. Only whole v2 entries are touched: legacy entries (a down-converted fetch) and a
partial last entry (a fetch cut at its byte limit) are passed on as the broker sent them.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import crc32c

from models.codec import LOG_OVERHEAD, decode_batch
from models.constants import MAGIC_V2
from models.records import DefaultBatch

__all__ = ["ATTRIBUTES_AT", "MAX_TIMESTAMP_AT", "HeaderEdit", "rewrite_v2_headers"]

LENGTH_AT = 8
MAGIC_AT = 16
CRC_AT = 17
ATTRIBUTES_AT = 21
MAX_TIMESTAMP_AT = 35

# What to change in one batch: its new (attributes, max_timestamp), or None to leave it as it is.
HeaderEdit = Callable[[DefaultBatch], tuple[int, int] | None]


def rewrite_v2_headers(records: bytes, edit: HeaderEdit) -> tuple[bytes, int]:
    """`records` with the header of each whole v2 batch changed as `edit` says; the number changed."""
    out = bytearray(records)
    changed = 0
    pos = 0
    while len(out) - pos >= LOG_OVERHEAD:
        (length,) = struct.unpack_from(">i", out, pos + LENGTH_AT)
        end = pos + LOG_OVERHEAD + length
        if length < 0 or end > len(out):
            break  # the partial tail of a fetch cut at its byte limit
        if out[pos + MAGIC_AT] == MAGIC_V2:
            batch = decode_batch(bytes(out[pos:end]), verify_crc=False)
            assert isinstance(batch, DefaultBatch)
            wanted = edit(batch)
            if wanted is not None and wanted != (batch.attributes, batch.max_timestamp):
                attributes, max_timestamp = wanted
                struct.pack_into(">h", out, pos + ATTRIBUTES_AT, attributes)
                struct.pack_into(">q", out, pos + MAX_TIMESTAMP_AT, max_timestamp)
                struct.pack_into(">I", out, pos + CRC_AT, crc32c.crc32c(bytes(out[pos + ATTRIBUTES_AT : end])))
                changed += 1
        pos = end
    return bytes(out), changed
