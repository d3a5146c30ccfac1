"""The differential oracle (conformance/differential): generated cases, the comparison, the explained
differences, and (e2e) a small Spark run that agrees and a seeded model fault that it reports."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.commands.differential import explained_path
from conformance.oracles.record_layer.case_compare import Difference, compare_case
from conformance.oracles.record_layer.cases import BUILT, Case, codecs_for, generate_case, parse_case_id
from conformance.oracles.record_layer.explained import (
    AGREE,
    EXPLAINED,
    UNEXPLAINED,
    ExplainedError,
    classify,
    load_explained,
)
from conformance.oracles.record_layer.model_side import MODEL_FAULTS, Model, model_named
from conformance.targets.libraries.java.compact import ConversionAnswer, JavaBatch, OracleAnswer
from models.constants import LONG_MAX, Codec, TimestampType
from models.records import RecordSpec


def test_a_case_is_a_function_of_seed_magic_and_index() -> None:
    assert generate_case(3, 2, 17) == generate_case(3, 2, 17)
    assert generate_case(3, 2, 17) != generate_case(4, 2, 17)
    assert parse_case_id(generate_case(3, 1, 5).case_id) == (3, 1, 5)
    with pytest.raises(ValueError, match="SEED:MAGIC:INDEX"):
        parse_case_id("3-1-5")


def test_the_cases_reach_every_kind_of_batch() -> None:
    """Meta test: in 1,500 cases per magic, every codec the magic allows, both timestamp types, every
    stored form, the edge timestamps, the refusals and the down-conversions all occur."""
    seen: Counter[tuple[str, object]] = Counter()
    for magic in (0, 1, 2):
        for index in range(1500):
            case = generate_case(11, magic, index)
            r = case.request
            seen[("codec", (magic, r.codec))] += 1
            seen[("type", (magic, r.timestamp_type))] += 1
            seen[("stored", case.stored)] += 1
            seen[("style", case.style.split("+")[0])] += 1
            seen[("invalid", "+invalid" in case.style)] += 1
            seen[("empty", not r.records)] += 1
            seen[("many", len(r.records) > 500)] += 1
            seen[("headers", magic, any(x.headers for x in r.records))] += 1
            seen[("conversions", magic, tuple(m for m, _ in case.conversions))] += 1
            stamps = {x.timestamp for x in r.records}
            seen[("edge", magic, -1 in stamps and LONG_MAX in stamps)] += 1
    for magic in (0, 1, 2):
        for codec in codecs_for(magic):
            assert seen[("codec", (magic, codec))], (magic, codec)
        for ts_type in (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME):
            assert seen[("type", (magic, ts_type))], (magic, ts_type)
        assert seen[("conversions", magic, tuple(range(magic - 1, -1, -1)))] == 1500
        assert seen[("edge", magic, True)], magic  # -1 and Long.MAX in one batch: the widest v2 delta
        assert seen[("headers", magic, True)], magic  # on v2, and rarely on v0/v1 (a refusal)
    assert seen[("codec", (0, Codec.ZSTD))] and seen[("codec", (1, Codec.ZSTD))]  # refused below v2
    for form in (BUILT, "in-place-lat", "offset-zero-wrapper", "v0-inner"):
        assert seen[("stored", form)], form
    for style in ("wall-clock", "increasing", "equal", "no-timestamp", "edges", "huge"):
        assert seen[("style", style)], style
    assert seen[("invalid", True)] and seen[("empty", True)] and seen[("many", True)]


def _model_answer(case: Case, model: Model) -> OracleAnswer:
    """What Kafka would answer if it behaved exactly as the model does (built by the model, no JVM)."""
    built = model.build(case.request)
    encoded = model.encode(built)
    java = _as_java(model, built)
    conversions = []
    for to_magic, first in case.conversions:
        converted = model.convert(built, to_magic, first)
        seen = _as_java(model, converted)
        conversions.append(ConversionAnswer(model.encode(converted), seen, seen))
    return OracleAnswer(encoded, java, java, tuple(conversions))


def _as_java(model: Model, batches) -> tuple[JavaBatch, ...]:
    return tuple(
        JavaBatch(
            magic=v.magic,
            codec=v.codec,
            timestamp_type=v.timestamp_type,
            base_offset=v.base_offset,
            last_offset=v.last_offset,
            max_timestamp=v.max_timestamp,
            offset_of_max_timestamp=v.offset_of_max_timestamp,
            crc_valid=True,
            records=v.records,
        )
        for v in model.view(batches)
    )


def test_the_comparison_finds_a_kafka_reading_that_differs_and_nothing_else() -> None:
    request_case = generate_case(1, 2, 0)
    case = replace(
        request_case,
        request=replace(
            request_case.request,
            records=(RecordSpec(5, b"k"), RecordSpec(9, None, b"v")),
            codec=Codec.GZIP,
            timestamp_type=TimestampType.CREATE_TIME,
            log_append_time=None,
            base_offset=0,
        ),
        conversions=((1, 0),),
        stored=BUILT,
    )
    model = Model()
    answer = _model_answer(case, model)
    assert compare_case(case, answer, model) == []
    (batch,) = answer.read_built
    wrong = replace(batch, records=(replace(batch.records[0], timestamp=6), batch.records[1]))
    found = compare_case(case, replace(answer, read_built=(wrong,)), model)
    assert found == [Difference("read.kafka-bytes", "batch[0].records[0].timestamp", "5", "6")]
    assert found[0].field == "batch.records.timestamp"


def test_a_difference_is_explained_only_inside_its_entry(tmp_path: Path) -> None:
    path = tmp_path / "explained.json"
    entry = {
        "id": "empty",
        "check": "build.batch",
        "fields": ["batch.length"],
        "when": {"records": [0], "magic": [2]},
        "model": "1",
        "kafka": "0",
        "profile": "kafka-3.9",
        "reason": "r",
        "evidence": "e",
        "example": "x",
    }
    path.write_text(json.dumps({"explained": [entry]}))
    explanations = load_explained(path)
    empty = replace(generate_case(1, 2, 0), request=replace(generate_case(1, 2, 0).request, records=()))
    length = Difference("build.batch", "batch.length", "1", "0")
    assert classify(empty, [], explanations) == (AGREE, (), ())
    assert classify(empty, [length], explanations) == (EXPLAINED, ("empty",), ())
    other = Difference("build.batch", "batch.max_timestamp", "1", "0")
    assert classify(empty, [length, other], explanations) == (UNEXPLAINED, ("empty",), (other,))
    not_empty = replace(empty, request=replace(empty.request, records=(RecordSpec(1),)))
    assert classify(not_empty, [length], explanations)[0] == UNEXPLAINED  # outside the scope
    assert classify(empty, [replace(length, kafka="2")], explanations)[0] == UNEXPLAINED  # another value


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"check": "build.everything"}, "unknown check 'build.everything'"),
        ({"evidence": ""}, "missing evidence"),
        ({"when": {"colour": ["red"]}}, "'when' must map some of"),
        ({"surprise": 1}, "unknown keys ['surprise']"),
    ],
)
def test_a_bad_explained_file_is_one_clear_error(tmp_path: Path, change: dict[str, object], message: str) -> None:
    entry = {"id": "a", "check": "build.batch", "fields": ["batch.length"], "profile": "kafka-3.9", "reason": "r",
             "evidence": "e", "example": "x", **change}  # fmt: skip
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"explained": [entry]}))
    with pytest.raises(ExplainedError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_explained(path)


def test_the_shipped_explained_differences_load_with_evidence() -> None:
    entries = load_explained(explained_path(None))
    assert entries and all(e.evidence and e.example and e.profile for e in entries)


def test_the_seeded_model_faults_are_named_seams() -> None:
    assert set(MODEL_FAULTS) == {"lat-inner-timestamps", "v2-max-is-last"}
    assert type(model_named(None)) is Model
    with pytest.raises(ValueError, match="unknown model fault"):
        model_named("nope")


# --- on Spark, against Kafka's record layer ---------------------------------------------------------------


@pytest.mark.e2e
def test_a_small_run_agrees_and_a_seeded_model_fault_is_unexplained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good"
    assert main(["differential", "--batches", "50", "--seed", "2", "--out", str(good), "--master", "local[2]"]) == 0
    table = json.loads((good / "differential.json").read_text())
    assert set(table) == {"magic-0", "magic-1", "magic-2"}
    for row in table.values():
        assert row["batches"] == 50 and row["unexplained"] == 0
        assert row["agree"] + row["explained"] == 50
    assert "| all | 150 |" in (good / "differential.md").read_text()
    made = json.loads((good / "run.json").read_text())["checks_made"]
    every = {"build.refusal", "build.batch", "read.kafka-bytes", "read.model-bytes", "convert.refusal",
             "convert.batch", "convert.records", "convert.read-kafka-bytes", "convert.read-model-bytes"}  # fmt: skip
    assert every <= set(made) and made["read.model-bytes"] >= 140  # each check ran, and on (nearly) every case

    bad = tmp_path / "bad"
    argv = ["differential", "--batches", "40", "--seed", "2", "--magics", "1", "--out", str(bad), "--master",
            "local[2]", "--seed-model-fault", "lat-inner-timestamps", "--examples", "1"]  # fmt: skip
    assert main(argv) == 1
    table = json.loads((bad / "differential.json").read_text())
    assert table["magic-1"]["unexplained"] > 0
    run = json.loads((bad / "run.json").read_text())
    assert run["unexplained_by_check"] == {"read.model-bytes batch.records.timestamp": table["magic-1"]["unexplained"]}
    report = (bad / "differential.md").read_text()
    assert "from conformance.oracles.record_layer import check" in report and "stored='in-place-lat'" in report
    assert "UNEXPLAINED read.model-bytes batch.records.timestamp" in capsys.readouterr().out
