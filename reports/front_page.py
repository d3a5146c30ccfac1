"""The report's first page (allure-report/index.html): the run's verdict line as the exit code says it, the
clause verdicts and the tests counted apart, the quality gate's outcome and the expectations file in force, then
links to the two Allure reports beside it (clauses/ and tests/, reports.allure).

Plain HTML and CSS, no script: it opens from disk, prints, and reads on a phone. Allure's own first page counts
pytest tests and clause results in one ring, has one word per Allure status (KNOWN and NON-STRICT are "skipped"
there, beside UNSUPPORTED and N/A: docs/report-counts.md) and hides the quality gate under its attachments; this
page is what a person reads before opening either report.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from conformance.judging.headline import headline_of
from conformance.judging.results import RunResults
from conformance.judging.verdicts import MEANING, TRIAGE_ORDER, EntryStatus, Verdict
from reports.known_issues import verdict_of_test

FRONT_PAGE = "index.html"
CLAUSES_REPORT = "clauses"  # the Allure report of the clause results: allure-report/clauses/index.html
TESTS_REPORT = "tests"  # the Allure report of the pytest tests: allure-report/tests/index.html


@dataclass(frozen=True)
class RunFacts:
    """What the page says besides the verdicts: the title, the exit code `kafka-conformance run` returns, the
    quality gate's first line and words (quality-gate.txt), the expectations line and the settings shown."""

    title: str
    exit_code: int
    gate: str  # "passed", "failed" or "not evaluated"
    gate_words: str
    expectations: str  # "expectations: suites/expectations/tansu.toml (shipped with tansu)"
    settings: tuple[tuple[str, str], ...] = ()


_CSS = """
body { font: 16px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1d232b;
  background: #f6f7f9; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem 1.25rem 3rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 .25rem; overflow-wrap: anywhere; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
.settings { color: #4a5563; margin: 0 0 .75rem; overflow-wrap: anywhere; }
.verdict { font-size: 1.2rem; font-weight: 600; padding: .75rem 1rem; border-radius: .5rem; margin: .5rem 0;
  overflow-wrap: anywhere; }
.ok { background: #e3f6e8; border-left: .4rem solid #1f9d4c; }
.failed { background: #fde8e8; border-left: .4rem solid #d0312d; }
.incomplete { background: #fff4d6; border-left: .4rem solid #c98a00; }
.gate, .expectations { margin: .25rem 0; overflow-wrap: anywhere; }
.open { display: flex; flex-wrap: wrap; gap: .75rem; margin: 1rem 0; }
.open a { display: inline-block; padding: .6rem 1rem; border-radius: .4rem; background: #2357c6; color: #fff;
  text-decoration: none; font-weight: 600; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #e2e5ea; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.files { color: #4a5563; }
"""


def _rows(counts: Counter[Verdict], meanings: bool) -> str:
    rows = []
    for verdict in TRIAGE_ORDER:
        if counts[verdict]:
            meaning = f"<td>{html.escape(MEANING[verdict])}</td>" if meanings else ""
            rows.append(f"<tr><th>{verdict.value}</th><td class=n>{counts[verdict]}</td>{meaning}</tr>")
    return "\n".join(rows)


def render(run: RunResults, facts: RunFacts) -> str:
    """The page's HTML (see the module doc); a pure function of the run's verdicts and `facts`."""
    said = headline_of(run)
    state = "incomplete" if said.incomplete else ("failed" if facts.exit_code != 0 else "ok")
    clauses: Counter[Verdict] = Counter(run.clauses.values())
    tests: Counter[Verdict] = Counter()
    undecided = 0
    for test in run.tests:
        # A clause outside the profile says nothing of what the test did: N/A only when every clause is.
        applicable = [v for v in test.verdicts.values() if v is not Verdict.NOT_APPLICABLE]
        verdict = verdict_of_test(applicable or test.verdicts.values())
        if verdict is None:
            undecided += 1
        else:
            tests[verdict] += 1
    entries = Counter(e.status for e in run.expectations)
    esc = html.escape
    settings = " · ".join(f"{esc(k)} {esc(v)}" for k, v in facts.settings)
    entry_line = ", ".join(f"{entries[s]} {s.value}" for s in EntryStatus if entries[s])
    undecided_row = f"<tr><th>no clause verdict</th><td class=n>{undecided}</td></tr>" if undecided else ""
    lost = "".join(f"<p class='verdict failed'>TARGET LOST: {esc(cause)}</p>" for cause in run.target_lost)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(facts.title)}: {esc(said.with_exit(facts.exit_code))}</title>
<style>{_CSS}</style>
</head>
<body>
<main>
<h1 id="title">{esc(facts.title)}</h1>
<p class="settings" id="settings">{settings}</p>
<p class="verdict {state}" id="verdict">{esc(said.with_exit(facts.exit_code))}</p>
{lost}
<p class="gate" id="gate">Quality gate (counts what fails the run): <strong>{esc(facts.gate)}</strong>: \
{esc(facts.gate_words)}</p>
<p class="expectations" id="expectations">{esc(facts.expectations)}\
{f" ({esc(entry_line)})" if entry_line else ""}</p>
<nav class="open">
<a href="{CLAUSES_REPORT}/index.html">Clause verdicts ({len(run.clauses)})</a>
<a href="{TESTS_REPORT}/index.html">Tests ({len(run.tests)})</a>
</nav>
<h2 id="clauses">Clauses: {len(run.clauses)} verdicts</h2>
<table>
{_rows(clauses, meanings=True)}
</table>
<h2 id="tests">Tests: {len(run.tests)} pytest tests, by the verdict each shows</h2>
<table>
{_rows(tests, meanings=False)}
{undecided_row}
</table>
<p class="files">Beside this page: <code>{CLAUSES_REPORT}/index.html</code> and <code>{TESTS_REPORT}/index.html</code> \
(the Allure reports: evidence, counterexamples, wire exchanges, the target's log), <code>quality-gate.txt</code>; \
the verdicts as data in <code>verdicts.json</code> next to this folder.</p>
</main>
</body>
</html>
"""


def write_front_page(output: Path, run: RunResults, facts: RunFacts) -> Path:
    """Write the page into the report folder `output` (over Allure's own summary page); returns its path."""
    page = Path(output) / FRONT_PAGE
    page.write_text(render(run, facts), encoding="utf-8")
    return page
