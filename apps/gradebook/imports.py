"""Reading a score CSV (pure: bytes and the course's components in, rows and problems out).

The file has one identifier column — `email` (or Canvas's `SIS Login ID`), `sid` (`SIS User ID`,
`Student ID`) or `group` (a group's name: the score applies to each member) — and one column per
component to score, named by its key (`project-technical`) or its name (`Technical quality`),
any case. An optional `note` column is kept with each score. A blank cell changes nothing.
Scores are 85, 85 %, or points as 17/20. Other columns are ignored and said so. Every problem is
reported with its row (the header is row 1) and column, so staff fix the whole file at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from apps.core.csvfile import CsvRefused, Problem, read_csv
from apps.core.models import GradingComponent
from apps.gradebook.rules import parse_score

__all__ = ["MAX_BYTES", "ParsedScores", "Problem", "ScoreRow", "parse_scores"]

MAX_BYTES = 5_000_000
MAX_ROWS = 20_000
IDENTIFIERS = {
    "email": ("email", "e-mail", "email address", "sis login id", "login id"),
    "sid": ("sid", "student id", "sis user id", "student number"),
    "group": ("group", "group name", "team"),
}


@dataclass(frozen=True)
class ScoreRow:
    row: int
    kind: str  # email | sid | group
    who: str
    column_of_who: str
    scores: list[tuple[str, float, str]]  # (component key, percent, column header)
    note: str = ""


@dataclass
class ParsedScores:
    rows: list[ScoreRow] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _fold(text: str) -> str:
    return " ".join(text.strip().lower().replace("_", " ").split())


GRADESCOPE = {"total score", "max points"}  # with Email/SID: Gradescope's "Download Grades"


def _gradescope(
    table: Any, components: Sequence[GradingComponent], component_key: str, out: ParsedScores
) -> ParsedScores:
    """Gradescope's own score export, as downloaded: Name, SID, Email, Total Score, Max Points,
    Status, then per-question columns. Its Total Score / Max Points becomes a percent for the
    component staff chose; a 'Missing' submission changes nothing (it is listed)."""
    header = [_fold(h) for h in table.header]
    col = {h: i for i, h in enumerate(header)}
    target = next((c for c in components if c.key == component_key), None)
    if target is None:
        keys = ", ".join(c.key for c in components)
        out.problems.append(
            Problem(
                1,
                None,
                "this is a Gradescope score export: choose which component its Total Score is "
                f"for (one of: {keys})",
            )
        )
        return out
    who = next((k for k in ("email", "sid") if k in col), None)
    if who is None:
        out.problems.append(Problem(1, None, "the export has neither an Email nor a SID column"))
        return out
    out.notes.append(
        f"Gradescope export: Total Score ÷ Max Points → {target.name} ({target.key}); "
        f"students matched by {'e-mail' if who == 'email' else 'SID'}."
    )
    missing = []
    for n, cells in table.rows:

        def cell(name: str, cells: list[str] = cells) -> str:
            i = col.get(name)
            return cells[i].strip() if i is not None and i < len(cells) else ""

        ident = cell(who)
        if not ident:
            out.problems.append(Problem(n, table.header[col[who]], "empty: every row must say who"))
            continue
        if cell("status").lower() == "missing" or not cell("total score"):
            missing.append(ident)
            continue
        try:
            got, most = float(cell("total score")), float(cell("max points"))
        except ValueError:
            out.problems.append(
                Problem(n, "Total Score", f"{cell('total score')!r} / {cell('max points')!r}")
            )
            continue
        if most <= 0 or not 0 <= got <= most * 1.5:
            out.problems.append(Problem(n, "Total Score", f"{got:g} of {most:g} points"))
            continue
        percent = min(got / most * 100, 100.0)
        out.rows.append(
            ScoreRow(n, who, ident, table.header[col[who]], [(target.key, percent, "Total Score")])
        )
    if missing:
        out.notes.append(f"{len(missing)} submission(s) Missing in Gradescope: left unchanged.")
    return out


def parse_scores(
    data: bytes, components: Sequence[GradingComponent], component_key: str = ""
) -> ParsedScores:
    out = ParsedScores()
    try:
        table = read_csv(data, max_bytes=MAX_BYTES, max_rows=MAX_ROWS)
    except CsvRefused as exc:
        out.problems.append(exc.problem)
        return out
    out.notes.extend(table.notes)
    if {_fold(h) for h in table.header} >= GRADESCOPE:
        parents = {c.parent_id for c in components if c.parent_id}
        leaves = [c for c in components if c.pk not in parents]
        return _gradescope(table, leaves, component_key, out)
    header = table.header
    parents = {c.parent_id for c in components if c.parent_id}
    by_name: dict[str, GradingComponent] = {}
    for c in components:
        by_name[_fold(c.key)] = c
        by_name.setdefault(_fold(c.name), c)
    id_col: tuple[int, str, str] | None = None
    score_cols: list[tuple[int, GradingComponent, str]] = []
    note_col: int | None = None
    ignored = []
    for i, raw in enumerate(header):
        name = _fold(raw)
        kind = next((k for k, words in IDENTIFIERS.items() if name in words), None)
        if kind is not None:
            if id_col is None or (id_col[1] != "email" and kind == "email"):
                id_col = (i, kind, raw.strip())  # prefer e-mail when a file has several
            continue
        if name in ("note", "notes", "comment"):
            note_col = i
        elif (found := by_name.get(name)) is not None:
            c = found
            if c.pk in parents:
                out.problems.append(
                    Problem(1, raw.strip(), f"{c.name} has parts: give a column per part instead")
                )
            else:
                score_cols.append((i, c, raw.strip()))
        elif name:
            ignored.append(raw.strip())
    if id_col is None:
        out.problems.append(Problem(1, None, "no column says who: add 'email', 'sid' or 'group'"))
    if not score_cols and not any(p.row == 1 for p in out.problems):
        keys = ", ".join(c.key for c in components if c.pk not in parents)
        out.problems.append(Problem(1, None, f"no column names a component (use one of: {keys})"))
    if ignored:
        out.notes.append(
            "Ignored columns: " + ", ".join(ignored[:20]) + ("…" if len(ignored) > 20 else "") + "."
        )
    if out.problems or id_col is None:
        return out
    idx, kind, who_header = id_col
    for n, cells in table.rows:
        who = cells[idx].strip() if idx < len(cells) else ""
        if not who:
            out.problems.append(Problem(n, who_header, "empty: every row must say who"))
            continue
        scores = []
        for i, c, head in score_cols:
            cell = cells[i].strip() if i < len(cells) else ""
            if not cell:
                continue
            try:
                scores.append((c.key, parse_score(cell), head))
            except ValueError as exc:
                out.problems.append(Problem(n, head, str(exc)))
        note = (
            cells[note_col].strip()[:300] if note_col is not None and note_col < len(cells) else ""
        )
        out.rows.append(ScoreRow(n, kind, who, who_header, scores, note))
    if not out.rows and not out.problems:
        out.problems.append(Problem(None, None, "the file has a header but no rows"))
    return out
