"""The rule IDs of the project's rule digest, as data; docs/rules.md is generated from them and the catalogue.

Every clause of the catalogue (`models.clauses`) cites these IDs; `RULE_IDS` is what coverage is
measured against. The DIS-* IDs (section "Where KIP text and code disagree") are
rules too: a clause that cites one says which side it follows (the code, for the `kafka-*` profiles).
The test vectors TV-01..TV-27 (section "Test vectors") are kept apart: they are facts a test restates, not rules.

`models.rules_doc` renders docs/rules.md from this module and `models.clauses`. `parse_semantics` reads the
IDs back out of a digest's text (docs/rules.md, or another digest in the same form), so the document, or a
newer digest, can be checked against the catalogue; it is pure (the caller reads the file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    section: str


_FMT = "1. Record formats"
_VAL = "2. Broker validation on append"
_CMP = "3. Compression, rewriting and offset of max timestamp"
_IDX = "4. Time index, segment max, roll and retention"
_LO = "5. ListOffsets / offsetsForTimes"
_CNV = "6. Up- and down-conversion"
_REP = "7. Replication and leader failover"
_CON = "8. Consumer view"
_DIS = "10. Where KIP text and code disagree"
_TV = "11. Test vectors"

RULES: tuple[Rule, ...] = (
    Rule("FMT-1", "Legacy log entry framing", _FMT),
    Rule("FMT-2", "v0 message layout", _FMT),
    Rule("FMT-3", "v1 message layout", _FMT),
    Rule("FMT-4", "Legacy attributes", _FMT),
    Rule("FMT-5", "v0 read semantics", _FMT),
    Rule("FMT-6", "v1 uncompressed", _FMT),
    Rule("FMT-7", "v1 compressed (wrapper) semantics", _FMT),
    Rule("FMT-8", "Negative timestamps", _FMT),
    Rule("FMT-9", "v2 batch header byte layout", _FMT),
    Rule("FMT-10", "v2 attributes", _FMT),
    Rule("FMT-11", "v2 record", _FMT),
    Rule("FMT-12", "v2 LogAppendTime read rule", _FMT),
    Rule("FMT-13", "Rewriting the header", _FMT),
    Rule("FMT-14", "Batch-level getters", _FMT),
    Rule("VAL-1", "Who validates", _VAL),
    Rule("VAL-2", 'What "now" is', _VAL),
    Rule("VAL-3", "When the range check applies", _VAL),
    Rule("VAL-4", "Range rule, 3.6+", _VAL),
    Rule("VAL-5", "Range rule, 0.10.0-3.5", _VAL),
    Rule("VAL-6", "Effective bounds by version", _VAL),
    Rule("VAL-7", "Out-of-range error", _VAL),
    Rule("VAL-8", "Producer-set LogAppendTime flag", _VAL),
    Rule("VAL-9", "Per-record check, whole-batch rejection", _VAL),
    Rule("VAL-10", "Multi-batch legacy sets", _VAL),
    Rule("VAL-11", "ProduceResponse on rejection", _VAL),
    Rule("VAL-12", "ProduceResponse on success", _VAL),
    Rule("VAL-13", "Header max recomputed on CreateTime", _VAL),
    Rule("VAL-14", "Other request-level checks that interact", _VAL),
    Rule("VAL-15", "Sign of timestamps", _VAL),
    Rule("CMP-1", "Path selection", _CMP),
    Rule("CMP-2", "In-place, CreateTime", _CMP),
    Rule("CMP-3", "In-place, LogAppendTime", _CMP),
    Rule("CMP-4", "Rebuild with LogAppendTime", _CMP),
    Rule("CMP-5", "Rebuild with CreateTime", _CMP),
    Rule("CMP-6", "Result max timestamp", _CMP),
    Rule("CMP-7", '"Offset of max timestamp" fed to the segment', _CMP),
    Rule("CMP-8", "KIP-32's compressed LogAppendTime plan vs code", _CMP),
    Rule("IDX-1", "File format", _IDX),
    Rule("IDX-2", "Entry meaning (code)", _IDX),
    Rule("IDX-3", "Append rule", _IDX),
    Rule("IDX-4", "When entries are attempted", _IDX),
    Rule("IDX-5", "Segment max", _IDX),
    Rule("IDX-6", "largestTimestamp", _IDX),
    Rule("IDX-7", "Lookup", _IDX),
    Rule("IDX-8", "Segment search", _IDX),
    Rule("IDX-9", "Time-based roll", _IDX),
    Rule("IDX-10", "Time-based retention", _IDX),
    Rule("IDX-11", "Compaction lags", _IDX),
    Rule("IDX-12", "Monotonicity scope", _IDX),
    Rule("IDX-13", "Follower and recovery indexes", _IDX),
    Rule("IDX-14", "Truncation", _IDX),
    Rule("LO-1", "Special targets and minimum versions", _LO),
    Rule("LO-2", "Timestamp search (target >= 0)", _LO),
    Rule("LO-3", "Visibility cap", _LO),
    Rule("LO-4", "LATEST (-1)", _LO),
    Rule("LO-5", "EARLIEST (-2)", _LO),
    Rule("LO-6", "MAX_TIMESTAMP (-3), 3.8+", _LO),
    Rule("LO-7", "v0 (removed in 4.0)", _LO),
    Rule("LO-8", "UNSUPPORTED_FOR_MESSAGE_FORMAT (43)", _LO),
    Rule("LO-9", "Client semantics", _LO),
    Rule("LO-10", "Tiered storage", _LO),
    Rule("CNV-1", "Produce version -> record magic", _CNV),
    Rule("CNV-2", "Fetch version -> highest magic the client can read", _CNV),
    Rule("CNV-3", "Target magic on produce", _CNV),
    Rule("CNV-4", "Up-conversion timestamps", _CNV),
    Rule("CNV-5", "Down-conversion on fetch (0.10.0-3.9)", _CNV),
    Rule("CNV-6", "Produce-side down-conversion", _CNV),
    Rule("CNV-7", "4.0: no conversion, cleaner rewrites legacy batches as v2", _CNV),
    Rule("REP-1", "Followers copy the leader's bytes, never re-stamp", _REP),
    Rule("REP-2", "LogAppendTime is the current leader's clock, no clamp", _REP),
    Rule("REP-3", "Effects of a backward clock step", _REP),
    Rule("REP-4", "Replica agreement on segment boundaries and index offsets", _REP),
    Rule("CON-1", "ConsumerRecord timestamp and timestampType", _CON),
    Rule("DIS-1", "Roll measured from the first batch, not the largest timestamp", _DIS),
    Rule("DIS-2", "Time-index entry offset is the batch last offset, not the next offset", _DIS),
    Rule("DIS-3", "No time-index entry for timestamp-less segments; mtime at read time", _DIS),
    Rule("DIS-4", "Compressed LogAppendTime inner timestamps are never checked", _DIS),
    Rule("DIS-5", "InvalidTimestampException / code 32 and message.timestamp.difference.max.ms", _DIS),
    Rule("DIS-6", "Inner-message timestamp type bit ignored; wrapper type used", _DIS),
    Rule("DIS-7", "MAX_TIMESTAMP offset correct only from 3.8", _DIS),
    Rule("DIS-8", "Producer LogAppendTime flag accepted on CreateTime topics from 3.6", _DIS),
    Rule("DIS-9", "Segment search returns the actual record, not the base offset", _DIS),
    Rule("DIS-10", "Time-index append allows an equal offset", _DIS),
)

VECTORS: tuple[Rule, ...] = (
    Rule("TV-01", "Empty time index lookup and last entry", _TV),
    Rule("TV-02", "Time index entries, lookups and isFull", _TV),
    Rule("TV-03", "Full time index append and truncate", _TV),
    Rule("TV-04", "Segment findOffsetByTimestamp", _TV),
    Rule("TV-05", "Largest timestamp and next offset after truncation", _TV),
    Rule("TV-06", "Roll wait without timestamps, truncation of empty segments", _TV),
    Rule("TV-07", "First batch timestamp of a segment", _TV),
    Rule("TV-08", "Per-batch index entries (4.1+)", _TV),
    Rule("TV-09", "Follower appends build the time index", _TV),
    Rule("TV-10", "Time-based roll during append", _TV),
    Rule("TV-11", "Time-based roll with jitter", _TV),
    Rule("TV-12", "Time-based retention", _TV),
    Rule("TV-13", "Log-level lookups with leader epochs", _TV),
    Rule("TV-14", "MAX_TIMESTAMP lookup", _TV),
    Rule("TV-15", "Admin listOffsets across leader change and recovery", _TV),
    Rule("TV-16", "ListOffsets answers by request version", _TV),
    Rule("TV-17", "CreateTime, uncompressed, in place", _TV),
    Rule("TV-18", "CreateTime, compressed in place and recompressed", _TV),
    Rule("TV-19", "LogAppendTime, uncompressed", _TV),
    Rule("TV-20", "LogAppendTime, compressed in place", _TV),
    Rule("TV-21", "LogAppendTime, rebuilt from v0", _TV),
    Rule("TV-22", "CreateTime up-conversion", _TV),
    Rule("TV-23", "Invalid CreateTime rejected with record errors", _TV),
    Rule("TV-24", "KIP-937 past and future bounds", _TV),
    Rule("TV-25", "Invalid records and invalid timestamp in one batch", _TV),
    Rule("TV-26", "MemoryRecordsBuilder max timestamp and shallow offset", _TV),
    Rule("TV-27", "Down-conversion of mixed CreateTime/LogAppendTime batches", _TV),
)

RULE_IDS: tuple[str, ...] = tuple(r.id for r in RULES)
VECTOR_IDS: tuple[str, ...] = tuple(v.id for v in VECTORS)

# Rules no clause covers on purpose, with the reason. Kept short: a rule an implementation can be
# tested against belongs in a clause.
UNTESTABLE: dict[str, str] = {
    "LO-10": "not modelled: local-only model; tiered storage (remote segments, KIP-405/1075) is out of scope",
    "IDX-11": "not modelled: the model has no log cleaner, and the compaction lags only bound when a "
    "cleaner may run, a scheduling property with no deterministic observable over the wire",
}

_RULE_BY_ID: dict[str, Rule] = {r.id: r for r in (*RULES, *VECTORS)}


def get_rule(rule_id: str) -> Rule:
    """The rule or test vector with this ID; KeyError naming the fix if unknown."""
    try:
        return _RULE_BY_ID[rule_id]
    except KeyError:
        raise KeyError(
            f"unknown rule ID {rule_id!r}: use an ID from docs/rules.md such as VAL-4, IDX-8 or TV-04"
        ) from None


# Bold rule headings start a line ("**VAL-4 Range rule ...**", "**REP-1** Followers ..."); in a digest that
# tabulates them, disagreements are table rows ("| DIS-3 | ..."); vectors are "- **TV-01** ...".
_BOLD_RULE = re.compile(r"^\*\*([A-Z]{2,4}-\d+)\b", re.MULTILINE)
_DIS_ROW = re.compile(r"^\|\s*(DIS-\d+)\s*\|", re.MULTILINE)
_VECTOR = re.compile(r"\*\*(TV-\d+)\*\*")


def _unique(ids: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ids))


def parse_semantics(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(rule IDs, vector IDs) found in the text of a rule digest such as docs/rules.md, in document order."""
    rules = [m for m in _BOLD_RULE.findall(text) if not m.startswith("TV-")]
    rules += _DIS_ROW.findall(text)
    return _unique(rules), _unique(_VECTOR.findall(text))
