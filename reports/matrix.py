"""The conformance matrix and the mutant kill table of a campaign, as Markdown, HTML (one self-contained file that
opens from disk) and a PNG heatmap. Reads the views of conformance.campaign.aggregate; writes
nothing else.

Colours say what a verdict means: the departures in reds (FAIL strongest, KNOWN and NON-STRICT lighter: departures
that do not fail the run, which the Allure report shows as skipped with its known flag), then by the Allure status
of each verdict (conformance.judging.verdicts.ALLURE_STATUS): broken in ambers (a task that timed out or crashed
included), skipped in greys, passed in green. A clause a column's kind never checks is white with a dash, never a
verdict colour. A version too long for a narrow header is cut short there and given in full in a note.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from conformance.campaign.aggregate import (
    KIND_TITLE,
    QUIET,
    AreaGroup,
    Cell,
    Column,
    ImplementationMatrix,
    Kill,
    KillRow,
    KillTable,
    Tally,
    clause_level,
    short_name,
)
from conformance.judging.results import UNKNOWN_VERSION
from conformance.judging.verdicts import MEANING, PRECEDENCE, KillStatus, Verdict
from models.clauses import Level, get_clause

V = Verdict
K = KillStatus

# Shades per family: the departures under "failed", every other verdict under the status Allure gives it
# (tests/test_matrix.py checks this).
PALETTE: dict[str, dict[Verdict, str]] = {
    "failed": {
        V.FAIL: "#c62828",
        V.UNEXPECTED_PASS: "#880e4f",
        V.KNOWN: "#ef8a62",
        V.NON_STRICT: "#f9c59f",
    },
    "broken": {V.CRASHED: "#8d6e00", V.TIMEOUT: "#d4a100", V.BLOCKED: "#ffe082"},
    "skipped": {V.UNSUPPORTED: "#c8c8c8", V.NOT_APPLICABLE: "#ececec"},
    "passed": {V.PASS: "#7cc47f"},
}
COLOURS: dict[str, str] = {v.value: colour for shades in PALETTE.values() for v, colour in shades.items()}
NOT_CHECKED = "—"  # the cell of a clause the column's kind never checks (or this campaign did not run)
NOT_CHECKED_COLOUR = "#ffffff"
# Text on the darker shades is white.
_LIGHT_TEXT = frozenset({V.FAIL.value, V.UNEXPECTED_PASS.value, V.CRASHED.value})
# What a cell shows: the verdict word, but short for the quiet verdicts, so the departures are what one reads.
_CELL_TEXT = {V.PASS.value: "✓", V.UNSUPPORTED.value: "unsup.", V.NOT_APPLICABLE.value: "n/a",
              V.UNEXPECTED_PASS.value: "UNEXP. PASS"}  # fmt: skip
# An area's summary is a count and a word in one narrow cell.
_SUMMARY_TEXT = {**_CELL_TEXT, V.UNEXPECTED_PASS.value: "UNEXP.", V.NON_STRICT.value: "NON-STR."}
# The kill table's statuses (conformance.commands.kill_table) in the colours of what they mean for the suite: killed is
# the suite doing its job, a survivor is the suite's failure.
KILL_COLOURS = {
    K.KILLED: COLOURS[V.PASS.value],
    K.WRONG_CLAUSE: COLOURS[V.NON_STRICT.value],
    K.SURVIVED: COLOURS[V.FAIL.value],
    K.TIMEOUT: COLOURS[V.TIMEOUT.value],
    K.CRASHED: COLOURS[V.CRASHED.value],
    K.NOT_RUN: COLOURS[V.UNSUPPORTED.value],
    K.NOT_SERVED: COLOURS[V.NOT_APPLICABLE.value],
}
_KILL_LIGHT = frozenset({K.SURVIVED, K.CRASHED})
KILL_MEANING = {
    K.KILLED: "a clause the mutant declares failed: the suites caught the fault where they should",
    K.WRONG_CLAUSE: "only clauses the mutant does not declare failed: its declaration or the suites' attribution is "
    "wrong",
    K.SURVIVED: "its declared clauses were checked and nothing failed: the suites missed the fault",
    K.TIMEOUT: "a task ran past its budget before anything killed the mutant",
    K.CRASHED: "a task's process died before anything killed the mutant",
    K.NOT_RUN: "no test of its declared clauses ran in this campaign (add the suites that check them)",
    K.NOT_SERVED: "not served over the wire: the fault is in a consumer's reading or in a library (codec, client), "
    "which no broker answer shows",
}


def _css(word: str) -> str:
    return "v-" + re.sub(r"[^A-Za-z]", "", word)


def column_name(matrix: ImplementationMatrix, column: Column, *, short: bool = False) -> str:
    """A column's implementation as its header names it: the target (under its kind's heading with `short`: its
    library) and the version it said it is, `client:sarama v1.61.1` (ImplementationMatrix.shown_version)."""
    name = short_name(column[0]) if short else column[0]
    version = matrix.shown_version(column)
    return f"{name} {version}" if version else name


def column_label(matrix: ImplementationMatrix, column: Column) -> str:
    """`client:sarama v1.61.1 (kafka-4.0)`: the implementation, its version and the profile it ran under."""
    return f"{column_name(matrix, column)} ({column[1]})"


# A header is one narrow column wide: a version longer than this is cut short there (HTML, PNG; a Go pseudo-version or
# a wrapper's version string overlapped its neighbours) and given in full in a note under the table.
VERSION_SHOWN = 20
# A Go pseudo-version: vX.Y.Z-[pre.]yyyymmddhhmmss-<12 hex digits of the commit>.
_PSEUDO_VERSION = re.compile(r"^(v\d+\.\d+\.\d+)-(?:\S*\.)?\d{14}-([0-9a-f]{12})$")


def short_version(version: str, most: int = VERSION_SHOWN) -> str:
    """A version as a narrow header shows it: whole when it fits in `most` characters; a Go pseudo-version as its
    base and commit (`v0.0.0-…01f206a`); else cut at the last space within `most` characters, with an ellipsis."""
    if len(version) <= most:
        return version
    pseudo = _PSEUDO_VERSION.match(version)
    if pseudo:
        return f"{pseudo.group(1)}-…{pseudo.group(2)[:7]}"
    head = version[: most - 1]
    space = head.rfind(" ")
    return (head[:space] if space >= most // 2 else head).rstrip(" (") + "…"


def version_notes(matrix: ImplementationMatrix) -> dict[tuple[str, str], int]:
    """The (target, version) pairs whose headers cut the version short (short_version), numbered in column order:
    the note under the table gives each in full."""
    notes: dict[tuple[str, str], int] = {}
    for column in matrix.columns:
        version = matrix.shown_version(column)
        if version is not None and short_version(version) != version:
            notes.setdefault((column[0], version), len(notes) + 1)
    return notes


def _header_version(matrix: ImplementationMatrix, column: Column, notes: dict[tuple[str, str], int]) -> tuple[str, int]:
    """(the version a header shows, its note's number or 0); ("", 0) for a header without a version."""
    version = matrix.shown_version(column)
    if version is None:
        return "", 0
    return short_version(version), notes.get((column[0], version), 0)


def _version_note(matrix: ImplementationMatrix, column: Column) -> str:
    """What a header's tooltip says of the column's version."""
    version = matrix.versions.get(column)
    if version is None:
        return "version not recorded (a campaign from before rows carried it)"
    if version == UNKNOWN_VERSION:
        return "version unknown (the implementation did not say it)"
    return f"version {version}"


# --- Markdown -------------------------------------------------------------------------------------------------


def _md_cell(cell: Cell | None) -> str:
    if cell is None:
        return NOT_CHECKED
    first = f", first failure {cell.first_failure_s:.1f} s" if cell.first_failure_s is not None else ""
    seeds = f"{cell.seeds} seed{'s' if cell.seeds != 1 else ''}"
    return f"{cell.verdict} ({seeds}, {cell.examples} examples{first})"


def to_markdown(matrix: ImplementationMatrix) -> str:
    """One table: a bold row per area with each column's verdict counts there, then its clauses."""
    columns = matrix.columns
    groups = "; ".join(
        f"{KIND_TITLE[g.kind]}: {', '.join(column_name(matrix, c) for c in g.columns)}"
        for g in matrix.groups
    )
    lines = [
        f"Columns: {groups}. Profiles: {', '.join(matrix.profiles)}. `{NOT_CHECKED}`: no test of the column's kind "
        "checks the clause (or this campaign did not run one); N/A and UNSUPPORTED are verdicts. Mutants: "
        "mutants.md.",
        "",
        "| Clause | " + " | ".join(column_label(matrix, c) for c in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for area in matrix.areas:
        tallies = [matrix.tally(c, area.clauses).line() or NOT_CHECKED for c in columns]
        lines.append(f"| **{area.title}** ({len(area.clauses)}) | " + " | ".join(f"**{t}**" for t in tallies) + " |")
        for clause in area.clauses:
            lines.append(f"| `{clause}` | " + " | ".join(_md_cell(matrix.cell(clause, c)) for c in columns) + " |")
    lines += [
        "",
        "Per column: "
        + "; ".join(f"{column_label(matrix, c)}: {matrix.tally(c, matrix.clauses).line()}" for c in columns),
    ]
    return "\n".join(lines) + "\n"


def summary_counts(matrix: ImplementationMatrix) -> dict[Column, str]:
    """Each column's verdict counts over every clause (the campaign's closing lines)."""
    return {column: matrix.tally(column, matrix.clauses).line() for column in matrix.columns}


# --- HTML ------------------------------------------------------------------------------------------------------

_STYLE = """
body{font:13px/1.35 system-ui,-apple-system,"Segoe UI",sans-serif;margin:14px 18px;color:#1d1d1d}
h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 6px}
p{margin:4px 0 8px;max-width:1100px}.meta{color:#555}
.legend span{display:inline-block;padding:1px 7px;margin:0 3px 3px 0;border-radius:3px;font-size:12px}
table.m{border-collapse:separate;border-spacing:0}
.m th,.m td{padding:2px 3px;font-size:12px;border-bottom:1px solid #fff;border-right:1px solid #fff}
.m td{text-align:center;width:64px;min-width:64px;max-width:64px;overflow:hidden;white-space:nowrap;font-size:11px;
  letter-spacing:-.02em}
.m thead th{background:#fff;vertical-align:bottom;text-align:center;font-weight:600;font-size:11px}
.m thead{position:sticky;top:0;z-index:2}
.m thead tr.kind th{border-bottom:2px solid #333;font-size:12px;letter-spacing:.04em;text-transform:uppercase}
.m thead tr.profile th{font-weight:400;color:#555;font-size:11px}
.m thead small.ver{font-weight:400;color:#555;font-size:10px}
.m thead tr.names th:not(.c){width:64px;min-width:64px;max-width:64px;overflow-wrap:anywhere}
.m th.c{text-align:left;white-space:nowrap;font-weight:400;position:sticky;left:0;background:#fff;z-index:1;
  padding-right:10px}
.m th.c code{font-size:11.5px}.m th.c small{color:#8a5a00;font-size:9px;margin-left:4px}
.m tr.area th,.m tr.area td{border-top:2px solid #333;font-weight:600;padding-top:4px;padding-bottom:4px}
.m tr.area th.c{background:#f4f4f4}
.m tr.total th,.m tr.total td{border-top:2px solid #333}
.m .g{border-left:3px solid #333}
td.nc{background:#fff;color:#b0b0b0}
td.sum-ok{background:#e4f3e4;color:#2e6b30}
td.v-FAIL,td.v-UNEXPECTEDPASS,td.v-KNOWN,td.v-NONSTRICT,td.v-CRASHED,td.v-TIMEOUT,td.v-BLOCKED{font-weight:700}
td.v-NONSTRICT{font-size:9.5px}td.v-PASS{color:#1f5f22}td.v-UNSUPPORTED{color:#555}td.v-NA{color:#888}
#quiet:checked ~ table tr.quiet{display:none}
label{user-select:none;cursor:pointer}
""".strip()


def _verdict_styles() -> str:
    rules = []
    for word, colour in COLOURS.items():
        text = "#fff" if word in _LIGHT_TEXT else "inherit"
        rules.append(f".{_css(word)}{{background:{colour};color:{text}}}")
    return "".join(rules)


def _legend() -> str:
    chips = [
        f'<span class="{_css(v.value)}" title="{html.escape(MEANING[v])}">{html.escape(v.value)}</span>'
        for v in PRECEDENCE
    ]
    chips.append(
        f'<span style="background:#fff;border:1px solid #ccc" title="no test of the column\'s kind checks the '
        f'clause">{NOT_CHECKED} not checked by this kind</span>'
    )
    return '<p class="legend">' + "".join(chips) + "</p>"


def _cell_title(clause: str, cell: Cell) -> str:
    parts = [f"{clause}: {cell.verdict}", MEANING.get(Verdict(cell.verdict), "") if cell.verdict in COLOURS else ""]
    parts.append(f"{cell.seeds} seed(s), {cell.examples} examples")
    if cell.first_failure_s is not None:
        parts.append(f"first failure after {cell.first_failure_s:.1f} s")
    if cell.message:
        parts.append(cell.message[:400])
    if cell.replay:
        parts.append(f"replay: {cell.replay}")
    return "\n".join(p for p in parts if p)


def area_summary(tally: Tally, labels: dict[str, str]) -> tuple[str, str]:
    """What an area's row shows in one column: (key, text). The key is the most severe verdict when the area
    departs or was not decided there (text: how many clauses have it, `+` when other departures too), SUMMARY_OK
    when every check held (text: how many), else the quiet verdict (N/A, UNSUPPORTED), or NOT_CHECKED. `labels`:
    the short words of the verdicts (the HTML's or the PNG's)."""
    worst = tally.worst
    if worst is None:
        return NOT_CHECKED, NOT_CHECKED
    if worst not in QUIET:
        more = "+" if tally.departures > tally.counts.get(worst, 0) else ""
        return worst, f"{tally.counts[worst]} {labels.get(worst, worst)}{more}"
    if tally.checked:
        return SUMMARY_OK, f"✓ {tally.checked}"
    return worst, labels.get(worst, worst)


SUMMARY_OK = "ok"
_SUMMARY_OK_COLOUR = "#e4f3e4"


def _summary_td(tally: Tally, first_of_group: bool) -> str:
    group = " g" if first_of_group else ""
    key, text = area_summary(tally, _SUMMARY_TEXT)
    css = "nc" if key == NOT_CHECKED else "sum-ok" if key == SUMMARY_OK else _css(key)
    return f'<td class="{css}{group}" title="{html.escape(tally.line() or "not checked")}">{html.escape(text)}</td>'


def _head(matrix: ImplementationMatrix) -> str:
    notes = version_notes(matrix)
    kinds = "".join(f'<th class="g" colspan="{len(g.columns)}">{KIND_TITLE[g.kind]}</th>' for g in matrix.groups)
    names, profiles = [], []
    for group in matrix.groups:
        for i, column in enumerate(group.columns):
            cls = ' class="g"' if i == 0 else ""
            title = html.escape(
                f"{column[0]} under {column[1]}, {_version_note(matrix, column)}: "
                f"{matrix.tally(column, matrix.clauses).line()}"
            )
            # A hyphen is where a long name wraps (confluent-kafka, rdkafka-mock).
            name = html.escape(short_name(column[0])).replace("-", "-<wbr>").replace("@", "<wbr>@")
            version, note = _header_version(matrix, column, notes)
            if version:  # under the name, small, cut short when long (the note under the table gives it in full)
                sup = f"<sup>{note}</sup>" if note else ""
                name += f'<br><small class="ver">{html.escape(version).replace(" ", "<wbr> ")}{sup}</small>'
            names.append(f'<th{cls} title="{title}">{name}</th>')
            profiles.append(f"<th{cls}>{html.escape(column[1])}</th>")
    rows = [
        f'<tr class="kind"><th class="c"></th>{kinds}</tr>',
        f'<tr class="names"><th class="c">Clause</th>{"".join(names)}</tr>',
    ]
    if len(matrix.profiles) > 1:
        rows.append(f'<tr class="profile"><th class="c">profile</th>{"".join(profiles)}</tr>')
    return "<thead>" + "".join(rows) + "</thead>"


def _group_starts(matrix: ImplementationMatrix) -> set[Column]:
    return {g.columns[0] for g in matrix.groups}


def _overview(matrix: ImplementationMatrix) -> str:
    """Areas x implementations: each area's worst departure per column, the first thing a reader sees."""
    starts = _group_starts(matrix)
    body = []
    for area in matrix.areas:
        cells = "".join(_summary_td(matrix.tally(c, area.clauses), c in starts) for c in matrix.columns)
        body.append(f'<tr><th class="c">{html.escape(area.title)} <small>{len(area.clauses)}</small></th>{cells}</tr>')
    cells = "".join(_summary_td(matrix.tally(c, matrix.clauses), c in starts) for c in matrix.columns)
    body.append(f'<tr class="total"><th class="c">all clauses <small>{len(matrix.clauses)}</small></th>{cells}</tr>')
    return f'<table class="m">{_head(matrix)}<tbody>{"".join(body)}</tbody></table>'


def _clause_th(clause: str) -> str:
    level = clause_level(clause)
    try:
        found = get_clause(clause)
        title = f"{found.summary} ({found.level.value}; {', '.join(found.rules)}; {found.kip})"
    except KeyError:
        title = "not in this version's clause catalogue"
    tag = f"<small>{level.value}</small>" if level is not None and level is not Level.MUST else ""
    return f'<th class="c" title="{html.escape(title)}"><code>{html.escape(clause)}</code>{tag}</th>'


def _detail(matrix: ImplementationMatrix) -> str:
    starts = _group_starts(matrix)
    body = []
    for area in matrix.areas:
        summary = "".join(_summary_td(matrix.tally(c, area.clauses), c in starts) for c in matrix.columns)
        count = f"{len(area.clauses)} clause{'s' if len(area.clauses) != 1 else ''}"
        head = f'<th class="c">{html.escape(area.title)} <small>{count}</small></th>'
        body.append(f'<tr class="area">{head}{summary}</tr>')
        for clause in area.clauses:
            cells = []
            for column in matrix.columns:
                group = " g" if column in starts else ""
                cell = matrix.cell(clause, column)
                if cell is None:
                    why = html.escape(matrix.not_checked_reason(clause, column))
                    cells.append(f'<td class="nc{group}" title="{why}">{NOT_CHECKED}</td>')
                    continue
                text = html.escape(_CELL_TEXT.get(cell.verdict, cell.verdict))
                title = html.escape(_cell_title(clause, cell))
                cells.append(f'<td class="{_css(cell.verdict)}{group}" title="{title}">{text}</td>')
            quiet = "" if matrix.departs(clause) else ' class="quiet"'
            body.append(f"<tr{quiet}>{_clause_th(clause)}{''.join(cells)}</tr>")
    return f'<table class="m">{_head(matrix)}<tbody>{"".join(body)}</tbody></table>'


def _page(title: str, body: str) -> str:
    return (
        '<!doctype html><html lang="en"><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width"><title>{html.escape(title)}</title>'
        f"<style>{_STYLE}{_verdict_styles()}</style><body>{body}</body></html>\n"
    )


def _versions_html(matrix: ImplementationMatrix) -> str:
    """The note under a table: the versions its headers cut short, in full."""
    notes = version_notes(matrix)
    if not notes:
        return ""
    listed = "; ".join(
        f"<sup>{n}</sup> {html.escape(short_name(target))}: <code>{html.escape(version)}</code>"
        for (target, version), n in notes.items()
    )
    return f'<p class="meta versions">Versions cut short in the headers: {listed}.</p>'


def to_html(matrix: ImplementationMatrix, title: str, *, meta: str = "", mutants: str = "") -> str:
    """The matrix page: the legend, an overview (area x implementation), then every clause. `meta`: a line about
    the campaign; `mutants`: a line about the kill table (linked to mutants.html)."""
    kinds = ", ".join(f"{len(g.columns)} {g.kind.value}{'s' if len(g.columns) != 1 else ''}" for g in matrix.groups)
    intro = (
        f'<p class="meta">{html.escape(meta)} {kinds}; profile{"s" if len(matrix.profiles) > 1 else ""} '
        f"{html.escape(', '.join(matrix.profiles))}. Each cell is the most severe verdict over the seeds; hover a "
        "cell for its evidence and the command that replays it.</p>"
    )
    link = f'<p><a href="mutants.html">Mutant kill table</a>: {html.escape(mutants)}</p>' if mutants else ""
    return _page(
        title,
        f"<h1>{html.escape(title)}</h1>{intro}{_legend()}{link}"
        f"<h2>By area</h2>{_overview(matrix)}{_versions_html(matrix)}"
        f"<h2>By clause</h2>"
        '<input type="checkbox" id="quiet"> <label for="quiet">only the clauses where an implementation departs '
        "or did not decide</label>"
        f"{_detail(matrix)}",
    )


# --- PNG -------------------------------------------------------------------------------------------------------

_PNG_TEXT = {**_SUMMARY_TEXT, V.PASS.value: ""}


def to_png(matrix: ImplementationMatrix, path: Path, title: str) -> tuple[int, int]:
    """A heatmap: clauses down (an area's header row above its clauses, with the area's worst departure per
    column), implementations across (grouped by kind), one colour per verdict as in the HTML; the departures are
    also written in their cells. Returns the image's size in pixels."""
    import matplotlib.pyplot as plt

    fig = png_figure(matrix, title)
    fig.savefig(path, dpi=_PNG_DPI)
    plt.close(fig)
    width, height = fig.get_size_inches()
    return round(width * _PNG_DPI), round(height * _PNG_DPI)


def png_column_label(matrix: ImplementationMatrix, column: Column, notes: dict[tuple[str, str], int]) -> str:
    """A column's name over the heatmap: its library, its version cut short ([n]: the note under the legend gives it
    in full), and its profile when the campaign ran several."""
    version, note = _header_version(matrix, column, notes)
    label = " ".join(part for part in (short_name(column[0]), version, f"[{note}]" if note else "") if part)
    return label + (f" ({column[1]})" if len(matrix.profiles) > 1 else "")


def png_figure(matrix: ImplementationMatrix, title: str) -> Any:
    """The heatmap's matplotlib figure (to_png); its header makes room for the longest column name, so that no
    name reaches the kinds' headings or the figure's edge."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle

    starts = _group_starts(matrix)
    xs: list[float] = []  # each column's left edge, in cells; a gap between kinds
    x = 0.0
    for column in matrix.columns:
        if column in starts and xs:
            x += _PNG_GAP
        xs.append(x)
        x += 1
    span = x
    rows: list[tuple[str, AreaGroup | None, str | None]] = []  # (label, area of a header row, clause)
    for area_group in matrix.areas:
        rows.append((area_group.title, area_group, None))
        rows += [(clause, None, clause) for clause in area_group.clauses]
    notes = version_notes(matrix)
    labels = [png_column_label(matrix, column, notes) for column in matrix.columns]
    longest = max((len(label) for label in labels), default=0)
    cell_w, row_h, label_w = 0.56, 0.17, 2.6  # inches
    # The names lean at 50 degrees: each character takes about _PNG_CHAR_IN of the line, sin 50 of it upwards
    # and cos 50 of it to the right.
    names_h = max(0.95, 0.2 + longest * _PNG_CHAR_IN * 0.766)
    title_h, kinds_h, legend_h, notes_h = 0.4, 0.3, 0.55, 0.16 * len(notes)
    grid_w = cell_w * span
    # The last column's name leans right; the legend needs ~7 in.
    fig_w = max(7.2, label_w + grid_w + max(0.9, 0.35 * cell_w + longest * _PNG_CHAR_IN * 0.643 + 0.2))
    fig_h = title_h + kinds_h + names_h + row_h * len(rows) + legend_h + notes_h
    fig = plt.figure(figsize=(fig_w, fig_h), dpi=_PNG_DPI)
    bottom = legend_h + notes_h
    ax = fig.add_axes((label_w / fig_w, bottom / fig_h, grid_w / fig_w, row_h * len(rows) / fig_h))
    ax.set_xlim(0, span)
    ax.set_ylim(len(rows), 0)
    ax.axis("off")
    patches: list[Rectangle] = []
    for y, (label, area, clause) in enumerate(rows):
        if area is not None:
            ax.axhline(y, color="#333", linewidth=1.0, clip_on=False)
            ax.text(-0.15, y + 0.55, label, ha="right", va="center", fontsize=7.4, fontweight="bold")
        else:
            ax.text(-0.15, y + 0.55, label, ha="right", va="center", fontsize=6.8, family="DejaVu Sans Mono")
        for x0, column in zip(xs, matrix.columns, strict=True):
            if area is not None:
                colour, text, bold = _png_summary(matrix.tally(column, area.clauses))
            else:
                cell = matrix.cell(str(clause), column)
                if cell is None:
                    colour, text, bold = NOT_CHECKED_COLOUR, "–", False
                else:
                    colour = COLOURS.get(cell.verdict, NOT_CHECKED_COLOUR)
                    text, bold = _PNG_TEXT.get(cell.verdict, cell.verdict), cell.verdict not in _CELL_TEXT
            edge = "#e2e2e2" if colour == NOT_CHECKED_COLOUR else "white"
            patches.append(Rectangle((x0, y), 1, 1, facecolor=colour, edgecolor=edge, linewidth=0.6))
            if text:
                ink = "#fff" if colour in _LIGHT_INK else "#b0b0b0" if text == "–" else "#222"
                ax.text(x0 + 0.5, y + 0.56, text, ha="center", va="center", fontsize=5.4 if area is None else 5.8,
                        fontweight="bold" if bold or area is not None else "normal", color=ink)  # fmt: skip
    for patch in patches:
        ax.add_patch(patch)
    # The column names lean over the grid; each kind's name above its columns.
    for x0, name in zip(xs, labels, strict=True):
        ax.text(x0 + 0.35, -0.25, name, ha="left", va="bottom", rotation=50, rotation_mode="anchor", fontsize=7.2,
                gid="column-name")  # fmt: skip
    kinds_y = 1 - (title_h + kinds_h * 0.55) / fig_h
    for group in matrix.groups:
        left = label_w + cell_w * xs[matrix.columns.index(group.columns[0])]
        right = label_w + cell_w * (xs[matrix.columns.index(group.columns[-1])] + 1)
        fig.add_artist(Line2D([(left + 0.04) / fig_w, (right - 0.04) / fig_w], [kinds_y, kinds_y], color="#333",
                              linewidth=1.2))  # fmt: skip
        fig.text((left + right) / 2 / fig_w, kinds_y + 0.03 / fig_h, KIND_TITLE[group.kind].upper(), ha="center",
                 va="bottom", fontsize=7.5, fontweight="bold", gid="kind")  # fmt: skip
    fig.text(0.12 / fig_w, 1 - 0.12 / fig_h, title, ha="left", va="top", fontsize=9.5, fontweight="bold", gid="title")
    handles = [Patch(facecolor=COLOURS[v.value], edgecolor="#999", linewidth=0.3, label=v.value) for v in PRECEDENCE]
    handles.append(Patch(facecolor="#fff", edgecolor="#999", linewidth=0.3, label="– not checked by this kind"))
    fig.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.1 / fig_w, (notes_h + 0.02) / fig_h), ncol=6,
               fontsize=6.5, frameon=False, handlelength=1.2, columnspacing=1.0)  # fmt: skip
    for i, ((target, version), n) in enumerate(notes.items()):  # the versions cut short in the names, in full
        fig.text(0.12 / fig_w, (notes_h - 0.16 * (i + 1) + 0.05) / fig_h, f"[{n}] {short_name(target)}: {version}",
                 ha="left", va="bottom", fontsize=6.5, color="#444", gid="version-note")  # fmt: skip
    return fig


_PNG_DPI = 110
_PNG_CHAR_IN = 0.062  # the width of a character of the column names (7.2 pt DejaVu Sans), in inches, generously
_PNG_GAP = 0.35  # the space between two kinds' columns, in cells
_LIGHT_INK = frozenset(COLOURS[v] for v in _LIGHT_TEXT)


def _png_summary(tally: Tally) -> tuple[str, str, bool]:
    """An area header's cell: (colour, text, bold), as the HTML's area summary."""
    key, text = area_summary(tally, _PNG_TEXT)
    if key == NOT_CHECKED:
        return NOT_CHECKED_COLOUR, "–", False
    if key == SUMMARY_OK:
        return _SUMMARY_OK_COLOUR, text, True
    return COLOURS.get(key, NOT_CHECKED_COLOUR), text, key not in QUIET


# --- the kill table ---------------------------------------------------------------------------------------------


def _kill_detail(kill: Kill, *, brief: bool = False) -> str:
    """`by LO.first-ge-target (FAIL, 0.4 s); also VAL.x, ...`; `brief`: the other clauses as a count."""
    first = f", {kill.first_failure_s:.1f} s" if kill.first_failure_s is not None else ""
    detail = f"by {', '.join(kill.killed_by)} ({kill.verdict}{first})" if kill.status == K.KILLED else ""
    if kill.other_clauses:
        others = kill.other_clauses
        listed = f"{len(others)} other clause{'s' if len(others) != 1 else ''}" if brief else ", ".join(others)
        detail += ("; " if detail else "") + ("also " if kill.status == K.KILLED else "caught only by ") + listed
    return detail


def _group_title(row: KillRow) -> str:
    area = f"{row.area.prefix} · {row.area.value}" if row.area is not None else "other"
    return f"{row.kind.value} mutants · {area}"


def kill_markdown(table: KillTable, title: str) -> str:
    """The kill table: a line per way it was run with its counts, then a row per mutant, grouped by kind and area."""
    lines = [f"# {title}", ""]
    lines += [f"- {way}: {table.summary(way)}" for way in table.ways]
    lines += ["", "| Mutant | Profile | Declared | " + " | ".join(table.ways) + " |"]
    lines.append("|---|---|---|" + "---|" * len(table.ways))
    heading = None
    for row in table.rows:
        if _group_title(row) != heading:
            heading = _group_title(row)
            lines.append(f"| **{heading}** | | |" + " |" * len(table.ways))
        cells = []
        for way in table.ways:
            kill = row.kills.get(way)
            cells.append(NOT_CHECKED if kill is None else f"{kill.status} {_kill_detail(kill)}".strip())
        lines.append(f"| `{row.mutant}` | {row.profile} | {', '.join(row.declared)} | " + " | ".join(cells) + " |")
    meanings = "; ".join(f"{status}: {meaning}" for status, meaning in KILL_MEANING.items())
    return "\n".join([*lines, "", meanings]) + "\n"


_KILL_STYLE = (
    ".m td.k{text-align:left;width:260px;min-width:200px;max-width:340px;white-space:normal}"
    ".m td.p{width:auto;min-width:0;color:#444}"
    ".m td.d{text-align:left;width:auto;max-width:330px;min-width:0;white-space:normal;color:#444;font-size:11px}"
    ".m thead th{text-align:left}"
)


def _missed(table: KillTable, way: str) -> str:
    """`; not killed: <code>a</code> (SURVIVED), ...`: the mutants a reader looks for first."""
    missed = [r for r in table.rows if (k := r.kills.get(way)) is not None and k.status not in (K.KILLED, K.NOT_SERVED)]
    if not missed:
        return ""
    return "; not killed: " + ", ".join(
        f"<code>{html.escape(r.mutant)}</code> ({html.escape(r.kills[way].status)})" for r in missed
    )


def kill_html(table: KillTable, title: str) -> str:
    """The kill table as one self-contained page: a row per mutant (hover: its fault), a column per way."""
    legend = "".join(
        f'<span style="background:{KILL_COLOURS[s]}{";color:#fff" if s in _KILL_LIGHT else ""}" '
        f'title="{html.escape(m)}">{html.escape(s)}</span>'
        for s, m in KILL_MEANING.items()
    )
    counts = "".join(f"<li><b>{html.escape(way)}</b>: {html.escape(table.summary(way))}{_missed(table, way)}</li>"
                     for way in table.ways)  # fmt: skip
    head = "".join(f"<th>{html.escape(w)}</th>" for w in table.ways)
    body: list[str] = []
    heading = None
    for row in table.rows:
        if _group_title(row) != heading:
            heading = _group_title(row)
            body.append(
                f'<tr class="area"><th class="c" colspan="{3 + len(table.ways)}">{html.escape(heading)}</th></tr>'
            )
        cells = []
        for way in table.ways:
            kill = row.kills.get(way)
            if kill is None:
                cells.append(f'<td class="nc" title="not run this way">{NOT_CHECKED}</td>')
                continue
            tip = "\n".join(
                part
                for part in (
                    KILL_MEANING.get(kill.status, ""),
                    f"other clauses that failed: {', '.join(kill.other_clauses)}" if kill.other_clauses else "",
                    f"replay: {kill.replay}" if kill.replay else "",
                )
                if part
            )
            ink = ";color:#fff" if kill.status in _KILL_LIGHT else ""
            cells.append(
                f'<td class="k" style="background:{KILL_COLOURS.get(kill.status, "#fff")}{ink}" '
                f'title="{html.escape(tip)}"><b>{html.escape(kill.status)}</b> '
                f"<small>{html.escape(_kill_detail(kill, brief=True))}</small></td>"
            )
        caught = all(k.status in (K.KILLED, K.NOT_SERVED) for k in row.kills.values())
        quiet = ' class="quiet"' if caught else ""
        body.append(
            f'<tr{quiet}><th class="c" title="{html.escape(row.description)}">'
            f"<code>{html.escape(row.mutant)}</code></th>"
            f'<td class="p">{html.escape(row.profile)}</td><td class="d">{html.escape(", ".join(row.declared))}</td>'
            f"{''.join(cells)}</tr>"
        )
    return _page(
        title,
        f"<style>{_KILL_STYLE}</style><h1>{html.escape(title)}</h1>"
        '<p class="meta">A mutant is the reference model with one seeded fault. It is KILLED when a clause it declares '
        "fails. Hover a mutant for its fault, a cell for what it means and the command that replays the failure. "
        f'The conformance matrix of the implementations: <a href="matrix.html">matrix.html</a>.</p><ul>{counts}</ul>'
        f'<p class="legend">{legend}</p>'
        '<input type="checkbox" id="quiet"> <label for="quiet">only the mutants not killed in some way</label>'
        f'<table class="m"><thead><tr><th class="c">Mutant</th><th>Profile</th><th>Declared clauses</th>{head}</tr>'
        f"</thead><tbody>{''.join(body)}</tbody></table>",
    )
