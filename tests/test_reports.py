"""The clause pages of the report (reports.clauses): one Allure result per clause whose description tells a
reader the verdict, the clause, the known failure's reason and the evidence."""

from __future__ import annotations

import json
from pathlib import Path

from reports.clauses import write_clause_results


def test_a_known_clause_page_shows_the_reason_the_observation_and_the_replay(tmp_path: Path) -> None:
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text(json.dumps({
        "target": "tansu",
        "profile": "kafka-4.0",
        "clauses": {"LO.first-ge-target": "KNOWN", "LO.record-own-timestamp": "UNSUPPORTED"},
        "tests": [{
            "nodeid": "suites/test_list_offsets.py::test_timestamp_lookup",
            "outcome": "skipped",
            "clauses": ["LO.first-ge-target", "LO.record-own-timestamp"],
            "verdicts": {"LO.first-ge-target": "KNOWN", "LO.record-own-timestamp": "UNSUPPORTED"},
            "message": "LO.first-ge-target (MUST, LO-2): offset: observed 0, the reference model expects 2.",
            "replay": "pytest suites/test_list_offsets.py::test_timestamp_lookup --target tansu",
            "finished_at": 1.0,
        }],
    }))
    expectations = tmp_path / "known.toml"
    expectations.write_text('[[expected]]\nclause = "LO.first-ge-target"\nreason = "answers offset 0"\nlink = "none"\n')
    assert write_clause_results(verdicts, tmp_path / "results", expectations) == 2
    pages = {p["labels"][4]["value"]: p for p in map(json.loads, map(Path.read_text,
                                                                      (tmp_path / "results").glob("*.json")))}
    known = pages["LO.first-ge-target"]
    assert known["name"].startswith("KNOWN  LO.first-ge-target: ")
    assert known["status"] == "skipped"
    assert "*Known failure*: answers offset 0" in known["description"]
    assert "observed 0, the reference model expects 2" in known["description"]
    replay = "pytest suites/test_list_offsets.py::test_timestamp_lookup --target tansu"
    assert f"*Replay*: `{replay}`" in known["description"]
    unsupported = pages["LO.record-own-timestamp"]
    assert "without any check of it running" in unsupported["description"]
    assert "Known failure" not in unsupported["description"]
