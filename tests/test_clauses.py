"""Meta tests of the clause catalogue (models/clauses.py) and the rule list (models/rules.py).

The catalogue is stable API: every test, verdict and expectation file names its clause IDs, and
every rule (models/rules.py, listed in docs/rules.md) must be covered by a clause or listed in UNTESTABLE with a reason.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from models.clauses import (
    CLAUSES,
    Area,
    Clause,
    Level,
    clauses_for_area,
    clauses_for_profile,
    clauses_for_rule,
    clauses_for_vector,
    coverage,
    get_clause,
)
from models.profiles import PROFILES, IndexGranularity, MaxTimestampLookup
from models.rules import RULE_IDS, RULES, UNTESTABLE, VECTOR_IDS, VECTORS, get_rule, parse_semantics

RULES_DOC = Path(__file__).resolve().parents[1] / "docs" / "rules.md"
# A rule digest kept outside the repository (e.g. a newer draft) is checked too when KTS_RULE_DIGEST names it;
# nothing here needs a file the repository does not hold.
EXTRA_DIGEST = "KTS_RULE_DIGEST"

CLAUSE_ID = re.compile(r"^(FMT|VAL|CMP|IDX|LO|CNV|REP|CON)\.[a-z0-9]+(?:-[a-z0-9]+)*$")
KIP = re.compile(r"^(KIP|KAFKA)-\d+$")


def _ids(clauses: tuple[Clause, ...]) -> list[str]:
    return [c.id for c in clauses]


# --- the rule list ---------------------------------------------------------------------------------


def test_rule_ids_unique_and_titled() -> None:
    assert len(set(RULE_IDS)) == len(RULE_IDS)
    assert all(r.title and r.section for r in (*RULES, *VECTORS))
    assert not set(RULE_IDS) & set(VECTOR_IDS)


def test_rule_families_complete() -> None:
    """The rule families and their counts, DIS-* included, vectors apart."""
    expected = {"FMT": 14, "VAL": 15, "CMP": 8, "IDX": 14, "LO": 10, "CNV": 7, "REP": 4, "CON": 1, "DIS": 10}
    for family, count in expected.items():
        assert [r for r in RULE_IDS if r.split("-")[0] == family] == [
            f"{family}-{i}" for i in range(1, count + 1)
        ]
    assert len(RULE_IDS) == sum(expected.values())
    assert tuple(f"TV-{i:02d}" for i in range(1, 28)) == VECTOR_IDS


def test_get_rule() -> None:
    assert get_rule("VAL-4").title == "Range rule, 3.6+"
    assert get_rule("TV-04").id == "TV-04"
    with pytest.raises(KeyError, match="unknown rule ID 'VAL-99'"):
        get_rule("VAL-99")


def test_rule_ids_match_the_digest() -> None:
    """models.rules lists exactly the rule IDs parse_semantics reads from docs/rules.md (which is rendered from
    models.rules, so this pins the document's form to the parser), and from the digest at $KTS_RULE_DIGEST if set."""
    digests = [RULES_DOC]
    if os.environ.get(EXTRA_DIGEST):
        digests.append(Path(os.environ[EXTRA_DIGEST]))
    for digest in digests:
        rules, vectors = parse_semantics(digest.read_text(encoding="utf-8"))
        assert rules == RULE_IDS, digest
        assert vectors == VECTOR_IDS, digest


def test_parse_semantics_forms() -> None:
    text = (
        "**VAL-4 Range rule.** text **[DISAGREE]** and a mention of **IDX-2** mid-line\n"
        "**REP-1** Followers copy.\n"
        "| DIS-3 | KIP says | code does |\n"
        "- **TV-01** TimeIndex ...\n"
        "**VAL-4 again**\n"
    )
    assert parse_semantics(text) == (("VAL-4", "REP-1", "DIS-3"), ("TV-01",))
    assert parse_semantics("no rules here") == ((), ())


# --- the catalogue ---------------------------------------------------------------------------------


def test_catalogue_size() -> None:
    assert len(CLAUSES) >= 70


def test_clause_ids_unique() -> None:
    ids = _ids(CLAUSES)
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"duplicate clause IDs: {duplicates}"


@pytest.mark.parametrize("clause", CLAUSES, ids=lambda c: c.id)
def test_clause_well_formed(clause: Clause) -> None:
    assert CLAUSE_ID.match(clause.id), f"{clause.id}: want AREA.kebab-case"
    assert len(clause.id) <= 48, f"{clause.id}: keep IDs short enough for a table column"
    assert clause.id.split(".")[0] == clause.area.prefix, f"{clause.id}: prefix does not match {clause.area}"
    assert clause.rules, f"{clause.id}: cites no rule"
    unknown = [r for r in clause.rules if r not in RULE_IDS]
    assert not unknown, f"{clause.id}: unknown rule IDs {unknown} (vectors go in `vectors`)"
    assert len(set(clause.rules)) == len(clause.rules)
    assert all(v in VECTOR_IDS for v in clause.vectors), f"{clause.id}: unknown vector in {clause.vectors}"
    assert KIP.match(clause.kip), f"{clause.id}: kip {clause.kip!r} is not KIP-n or KAFKA-n"
    assert isinstance(clause.level, Level)
    assert clause.profiles, f"{clause.id}: applies to no profile"
    assert all(p in PROFILES for p in clause.profiles), f"{clause.id}: unknown profile in {clause.profiles}"
    in_order = [p for p in PROFILES if p in clause.profiles]
    assert list(clause.profiles) == in_order, f"{clause.id}: profiles not in PROFILES order"
    assert clause.summary.strip() == clause.summary and "\n" not in clause.summary
    assert clause.summary.rstrip('"').endswith((".", ")")), f"{clause.id}: summary is one full sentence"
    assert len(clause.summary) <= 220, f"{clause.id}: summary longer than one sentence should be"


def test_every_rule_covered_or_untestable() -> None:
    uncovered, untested = coverage()
    assert uncovered == [], f"rules no clause covers: {uncovered}"
    assert untested == UNTESTABLE
    for rule_id in RULE_IDS:
        assert clauses_for_rule(rule_id) or rule_id in UNTESTABLE, rule_id


def test_untestable_is_short_honest_and_consistent() -> None:
    assert len(UNTESTABLE) <= 5, "a rule an implementation can be tested against belongs in a clause"
    for rule_id, reason in UNTESTABLE.items():
        assert rule_id in RULE_IDS, f"UNTESTABLE lists unknown rule {rule_id}"
        assert reason.strip(), f"{rule_id}: no reason given"
        cited_by = _ids(clauses_for_rule(rule_id))
        assert not cited_by, f"{rule_id} is listed as untestable but covered by {cited_by}"


def test_every_disagreement_follows_kafka_code() -> None:
    """DIS-* (docs/rules.md, "Where KIP text and code disagree"): a clause citing DIS-* follows Apache Kafka's
    code and its summary says so."""
    for rule_id in (r for r in RULE_IDS if r.startswith("DIS-")):
        clauses = clauses_for_rule(rule_id)
        assert clauses, f"{rule_id} is cited by no clause"
        for clause in clauses:
            assert "code" in clause.summary, f"{clause.id} cites {rule_id} but does not say it follows code"


def test_every_vector_restates_a_clause() -> None:
    for vector_id in VECTOR_IDS:
        assert clauses_for_vector(vector_id), f"{vector_id} restates no clause"


def test_every_area_has_clauses() -> None:
    for area in Area:
        assert clauses_for_area(area), area


# --- profiles fit the behaviour the clause describes ------------------------------------------------


def test_kip937_clauses_only_where_before_after_exist() -> None:
    with_configs = {p.name for p in PROFILES.values() if p.has_before_after_configs}
    assert with_configs == {"kafka-3.6", "kafka-3.8", "kafka-3.9", "kafka-4.0", "kafka-4.1", "kafka-4.2"}
    for clause in CLAUSES:
        if clause.kip == "KIP-937":
            assert set(clause.profiles) <= with_configs, clause.id


def test_index_structure_clauses_need_a_time_index() -> None:
    """IDX-1..8 and IDX-12..14 describe the time index, which kafka-0.10.0 does not have (KIP-33)."""
    structural = {f"IDX-{i}" for i in (1, 2, 3, 4, 5, 7, 8, 12, 13, 14)}
    unindexed = {p.name for p in PROFILES.values() if p.index_granularity is IndexGranularity.NONE}
    assert "kafka-0.10.0" in unindexed
    for clause in CLAUSES:
        if structural & set(clause.rules):
            assert not unindexed & set(clause.profiles), clause.id


def test_exact_max_timestamp_clauses_only_where_fixed() -> None:
    """LO-6 / DIS-7: the exact MAX_TIMESTAMP answer exists only from 3.8 (profiles 3.9+)."""
    exact = {p.name for p in PROFILES.values() if p.max_timestamp_lookup is MaxTimestampLookup.EXACT}
    for clause in clauses_for_rule("LO-6"):
        assert set(clause.profiles) <= exact, clause.id
    assert "kafka-2.8" not in get_clause("LO.max-timestamp-first-record").profiles


def test_down_conversion_clauses_are_optional() -> None:
    """CNV-5: down-conversion is an optional feature (MAY), absent from 4.0 (CNV-7)."""
    converting = {p.name for p in PROFILES.values() if p.down_conversion}
    for clause in clauses_for_rule("CNV-5"):
        assert clause.level is Level.MAY, clause.id
        assert set(clause.profiles) <= converting, clause.id


def test_consumer_view_has_one_clause_per_con1_row() -> None:
    rows = [c for c in clauses_for_area(Area.CONSUMER_VIEW) if "CON-1" in c.rules]
    assert len(rows) == 7


# --- lookups ---------------------------------------------------------------------------------------


def test_get_clause() -> None:
    for clause in CLAUSES:
        assert get_clause(clause.id) is clause
    with pytest.raises(KeyError, match=r"unknown clause 'LO\.nope'"):
        get_clause("LO.nope")


@pytest.mark.parametrize("name", list(PROFILES))
def test_clauses_for_profile(name: str) -> None:
    selected = clauses_for_profile(name)
    assert selected == tuple(c for c in CLAUSES if name in c.profiles)
    assert selected, name


def test_clauses_for_profile_differs_by_version() -> None:
    old = set(_ids(clauses_for_profile("kafka-0.10.0")))
    new = set(_ids(clauses_for_profile("kafka-4.0")))
    assert "VAL.range-symmetric" in old - new
    assert "VAL.range-before-after" in new - old
    assert "VAL.after-default-one-hour" not in clauses_for_profile("kafka-3.9")


def test_clauses_for_unknown_profile() -> None:
    with pytest.raises(KeyError, match="unknown profile 'kafka-9'"):
        clauses_for_profile("kafka-9")


def test_clauses_for_rule() -> None:
    assert "LO.first-ge-target" in _ids(clauses_for_rule("LO-2"))
    assert clauses_for_rule("IDX-11") == ()
    assert clauses_for_rule("NOPE-1") == ()


def test_coverage_against_another_rule_list() -> None:
    """coverage(rule_ids) checks the catalogue against a newer digest's IDs."""
    uncovered, untested = coverage(["VAL-4", "VAL-99", "LO-10"])
    assert uncovered == ["VAL-99"]
    assert untested == {"LO-10": UNTESTABLE["LO-10"]}
    uncovered, _ = coverage(clauses=[get_clause("LO.first-ge-target")])
    assert "VAL-4" in uncovered and "LO-2" not in uncovered


def test_legacy_consumer_view_only_where_legacy_records_are_stored() -> None:
    """CON-1 / CNV-3 (issue 11): from 3.0 every produce is stored as v2 and 4.0 converts nothing, so the
    consumer-view clauses of v0/v1 records are N/A there (catalogue data, not UNSUPPORTED)."""
    legacy = ("CON.v0-no-timestamp", "CON.v1-uncompressed-own", "CON.v1-wrapper-createtime-inner",
              "CON.v1-wrapper-lat-wrapper-value", "CON.v1-wrapper-v0-inner")
    for cid in legacy:
        honoured = tuple(p.name for p in PROFILES.values() if p.honours_message_format_version)
        assert get_clause(cid).profiles == honoured, cid
        assert "kafka-2.8" in get_clause(cid).profiles and "kafka-3.0" not in get_clause(cid).profiles
    assert "kafka-4.0" in get_clause("CON.v2-lat-max-timestamp").profiles


def test_wrapped_bounds_only_where_each_side_has_its_own_bound() -> None:
    """VAL-7: a Long.MAX_VALUE side prints wrapped only under KIP-937's before/after configs."""
    assert get_clause("VAL.error-bounds-wraparound").profiles == (
        "kafka-3.6", "kafka-3.8", "kafka-3.9", "kafka-4.0", "kafka-4.1", "kafka-4.2")


def test_checked_elsewhere_is_catalogue_data() -> None:
    """Issue 11: a clause no suite checks says where it is checked instead and why (conformance.judging.coverage)."""
    from models.clauses import CLIENT_AND_CODEC_SUITES, MODEL_TESTS

    elsewhere = [c for c in CLAUSES if c.checked_elsewhere]
    assert elsewhere and all(c.checked_elsewhere in (CLIENT_AND_CODEC_SUITES, MODEL_TESTS) for c in elsewhere)
    assert all(c.elsewhere_reason for c in elsewhere)
    assert not any(c.elsewhere_reason for c in CLAUSES if not c.checked_elsewhere)
    assert get_clause("IDX.entry-layout").checked_elsewhere == MODEL_TESTS
    assert get_clause("LO.client-min-version").checked_elsewhere == ""  # the client suites check it (issue 13)
    assert get_clause("LO.first-ge-target").checked_elsewhere == ""
