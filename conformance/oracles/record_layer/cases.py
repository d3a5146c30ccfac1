"""The generated cases of the differential oracle: batches of every magic, codec and timestamp type.

A case is a pure function of (seed, magic, index), so any Spark task can make its own cases (nothing is
shipped from the driver), a rerun makes the same ones, and `kafka-conformance differential --case
SEED:MAGIC:INDEX` replays one. Each case is a `BatchRequest` (what a producer or a broker-side builder asks to
write) plus the down-conversions to try (every magic below the case's, CNV-5).

What is drawn, and why (the edges are where a codec goes wrong):
- codec: every codec the magic allows (zstd on v2 only, FMT-4), uniformly; rarely zstd below v2 (a refusal).
- timestamp type: CreateTime or LogAppendTime (a broker-side builder's append time: 0, a wall clock, Long.MAX
  and neighbours), including on v0 (which has no timestamp to write, FMT-5).
- timestamps: a wall clock with skew (negative deltas), increasing, all equal, all -1 (NO_TIMESTAMP), edge
  values (-1, 0, 1, 2^31, 2^32, Long.MAX - 1, Long.MAX: the largest v2 deltas, FMT-11), random over [0,
  Long.MAX] (huge deltas), and rarely one below -1 (the builder refuses it, FMT-8; readers do not check it).
- records: 0 to 1,500 per batch (rarely none: the builder then writes nothing); keys and values null, empty,
  short, compressible or random; headers on v2
  (rarely on v0/v1, a refusal); base offsets from 0 to near Long.MAX.
- the stored form the readers and the down-conversion get (`Case.stored`): what the builder writes
  (`built`), or, for a compressed v1 LogAppendTime batch, what a broker's in-place path stores
  (`in-place-lat`: the producer's CreateTime wrapper with only the outer timestamp and type rewritten, the
  inner messages keeping their own timestamps, CMP-8 and DIS-4: where readers that take inner timestamps go
  wrong, FMT-7), a v1 wrapper at offset 0 as some librdkafka versions produce (`offset-zero-wrapper`: its
  inner offsets are then absolute from 0, FMT-7), and rarely a v1 wrapper holding v0 inner messages
  (`v0-inner`, FMT-7's last sentence).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from conformance.targets.kinds.codec_library import BatchRequest
from models.constants import LONG_MAX, LONG_MIN, MAGIC_V2, MAGICS, Codec, TimestampType
from models.records import Header, RecordSpec

BUILT, IN_PLACE_LAT, V0_INNER, OFFSET_ZERO_WRAPPER = "built", "in-place-lat", "v0-inner", "offset-zero-wrapper"
WALL_CLOCK = 1_700_000_000_000  # 2023-11-14, a plausible broker clock
EDGE_TIMESTAMPS = (-1, 0, 1, 1 << 31, 1 << 32, WALL_CLOCK, LONG_MAX - 1, LONG_MAX)
_HEADER_KEY_ALPHABET = "abcxyz-_.é€😀"


@dataclass(frozen=True)
class Case:
    seed: int
    magic: int
    index: int
    request: BatchRequest
    # (to_magic, first_offset) of each down-conversion to try, magics below the case's own.
    conversions: tuple[tuple[int, int], ...]
    style: str  # how the timestamps were drawn (for the report)
    stored: str = BUILT  # the stored form the readers and the conversion get (module doc)

    @property
    def case_id(self) -> str:
        return f"{self.seed}:{self.magic}:{self.index}"


def codecs_for(magic: int) -> tuple[Codec, ...]:
    return tuple(Codec) if magic == MAGIC_V2 else tuple(c for c in Codec if c is not Codec.ZSTD)


def _count(rng: random.Random) -> int:
    roll = rng.random()
    if roll < 0.01:
        return 0  # the builder writes no batch at all (MemoryRecordsBuilder.close); the model's builder can
    if roll < 0.35:
        return 1
    if roll < 0.65:
        return rng.randint(2, 5)
    if roll < 0.90:
        return rng.randint(6, 50)
    if roll < 0.98:
        return rng.randint(51, 500)
    return rng.randint(501, 1500)


def _timestamps(rng: random.Random, count: int) -> tuple[str, list[int]]:
    style = rng.choice(("wall-clock", "increasing", "equal", "no-timestamp", "edges", "edges", "huge"))
    if style == "wall-clock":
        now = WALL_CLOCK + rng.randint(0, 10**10)
        out = [now + rng.randint(-3_600_000, 3_600_000) for _ in range(count)]
    elif style == "increasing":
        ts = rng.choice((0, WALL_CLOCK, LONG_MAX - 10 * count))
        out = []
        for _ in range(count):
            ts += rng.randint(0, 10)
            out.append(ts)
    elif style == "equal":
        out = [rng.choice(EDGE_TIMESTAMPS)] * count
    elif style == "no-timestamp":
        out = [-1] * count
    elif style == "edges":
        out = [rng.choice(EDGE_TIMESTAMPS) for _ in range(count)]
    else:
        out = [rng.randint(0, LONG_MAX) for _ in range(count)]
    if count and rng.random() < 0.02:
        style += "+invalid"
        out[rng.randrange(count)] = rng.choice((-2, LONG_MIN, -rng.randint(2, 1 << 62)))
    return style, out


def _payload(rng: random.Random, small: bool) -> bytes | None:
    roll = rng.random()
    if roll < 0.15:
        return None
    if roll < 0.30:
        return b""
    if roll < 0.80 or small:
        return rng.randbytes(rng.randint(1, 20))
    if roll < 0.95:
        return rng.randbytes(rng.randint(1, 8)) * rng.randint(10, 600)  # compressible
    return rng.randbytes(rng.randint(100, 2000))


def _headers(rng: random.Random) -> tuple[Header, ...]:
    if rng.random() < 0.6:
        return ()
    return tuple(
        Header(
            "".join(rng.choices(_HEADER_KEY_ALPHABET, k=rng.randint(0, 8))),
            _payload(rng, small=True),
        )
        for _ in range(rng.randint(1, 3))
    )


def _base_offset(rng: random.Random, count: int) -> int:
    roll = rng.random()
    if roll < 0.4:
        return 0
    if roll < 0.7:
        return rng.randint(1, 1000)
    if roll < 0.95:
        return rng.randint(1000, 1 << 40)
    return LONG_MAX - count - rng.randint(0, 1000)


def _log_append_time(rng: random.Random) -> int:
    return rng.choice((0, 1, WALL_CLOCK, WALL_CLOCK + rng.randint(0, 10**10), LONG_MAX - 1, LONG_MAX))


def _first_offset(rng: random.Random, base_offset: int, count: int) -> int:
    roll = rng.random()
    if roll < 0.6:
        return base_offset
    if roll < 0.9:
        return base_offset + rng.randint(0, max(count - 1, 0))
    return min(base_offset + count + rng.randint(0, 5), LONG_MAX)


def generate_case(seed: int, magic: int, index: int) -> Case:
    """Case `index` of `magic` under `seed` (deterministic: string seeding does not depend on PYTHONHASHSEED)."""
    if magic not in MAGICS:
        raise ValueError(f"magic must be 0, 1 or 2, not {magic}")
    rng = random.Random(f"kafka-conformance differential {seed}/{magic}/{index}")
    codec = rng.choice(codecs_for(magic))
    if magic < MAGIC_V2 and rng.random() < 0.01:
        codec = Codec.ZSTD  # FMT-4: the builder refuses zstd below v2
    count = _count(rng)
    style, timestamps = _timestamps(rng, count)
    small = count > 50
    with_headers = magic == MAGIC_V2 or rng.random() < 0.01  # headers below v2: the builder refuses (FMT-8)
    records = tuple(
        RecordSpec(
            timestamp=ts,
            key=_payload(rng, small),
            value=_payload(rng, small),
            headers=_headers(rng) if with_headers else (),
        )
        for ts in timestamps
    )
    lat = rng.random() < 0.5
    base_offset = _base_offset(rng, count)
    request = BatchRequest(
        magic=magic,
        records=records,
        codec=codec,
        timestamp_type=TimestampType.LOG_APPEND_TIME if lat else TimestampType.CREATE_TIME,
        log_append_time=_log_append_time(rng) if lat else None,
        base_offset=base_offset,
    )
    conversions = tuple((to_magic, _first_offset(rng, base_offset, count)) for to_magic in range(magic - 1, -1, -1))
    stored = BUILT
    if magic == 1 and codec in (Codec.GZIP, Codec.SNAPPY, Codec.LZ4):
        roll = rng.random()
        if roll < 0.05:
            stored = V0_INNER
        elif roll < 0.15:
            stored = OFFSET_ZERO_WRAPPER
        elif lat and roll < 0.6:
            stored = IN_PLACE_LAT
    return Case(seed, magic, index, request, conversions, style, stored)


def parse_case_id(text: str) -> tuple[int, int, int]:
    """`SEED:MAGIC:INDEX` -> (seed, magic, index), or ValueError naming the form."""
    parts = text.split(":")
    try:
        seed, magic, index = (int(p) for p in parts)
    except ValueError:
        raise ValueError(f"case id {text!r}: expected SEED:MAGIC:INDEX, e.g. 1:2:42") from None
    if magic not in MAGICS or index < 0:
        raise ValueError(f"case id {text!r}: the magic must be 0, 1 or 2 and the index >= 0")
    return seed, magic, index
