"""Responses from a CSV (a Google Forms export: a participant-ID column, one column per question
or part; the autograder's column mapping and file decoding, reused). Every row is checked and
every problem reported with its row and column; a file with any problem is not stored at all.

Opting out: the literal text NO RESEARCH in the ID cell ("123456 NO RESEARCH") or in an opt-out
column (one whose header mentions research or opt-out; "yes", "x" or "true" there count too)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from apps.autograder.intake import map_columns
from apps.autograder.models import Question
from apps.core.csvfile import CsvRefused, read_csv

ID_HEADERS = ("participant id", "participant", "participant_id", "pid", "id")
OPT_WORDS = ("research", "opt-out", "opt out", "optout")
NO_RESEARCH = re.compile(r"\bno[\s_-]*research\b", re.IGNORECASE)
CODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
MAX_ROWS = 20_000


@dataclass
class Row:
    line: int
    code: str
    opted_out: bool
    answers: dict[str, list[str]]


@dataclass
class Parsed:
    rows: list[Row] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "row 7, column “Participant ID”: …"
    notes: list[str] = field(default_factory=list)
    mapping: dict[str, str] = field(default_factory=dict)
    unmapped: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "rows": len(self.rows),
            "participants": len({r.code for r in self.rows}),
            "opted_out": sum(1 for r in self.rows if r.opted_out),
            "problems": self.problems[:200],
            "problem_count": len(self.problems),
            "notes": self.notes[:50],
            "mapping": self.mapping,
            "unmapped": self.unmapped,
        }


def parse(data: bytes, questions: list[Question]) -> Parsed:
    out = Parsed()
    try:
        table = read_csv(data, max_rows=MAX_ROWS)
    except CsvRefused as exc:
        out.problems.append(str(exc))
        return out
    headers = table.header
    folded = [h.strip().lower() for h in headers]
    id_col = next((i for i, h in enumerate(folded) if h in ID_HEADERS), None)
    if id_col is None:
        out.problems.append("row 1: no participant-ID column (a header such as “Participant ID”)")
        return out
    opt_col = next(
        (i for i, h in enumerate(folded) if i != id_col and any(w in h for w in OPT_WORDS)), None
    )
    mapped, out.unmapped = map_columns(
        [h for i, h in enumerate(headers) if i not in {id_col, opt_col}], questions
    )
    out.unmapped = [
        h for h in out.unmapped if h.strip().lower() not in {"timestamp", "email address", "score"}
    ]
    out.mapping = {
        h: q.key + (f" part {p + 1}" if q.kind != Question.Kind.CHOICE else "")
        for h, (q, p) in mapped.items()
    }
    if not mapped:
        out.problems.append("row 1: no column matches a question (q1, q2 … or q6.1, q6.2)")
        return out
    index = {h: i for i, h in enumerate(headers)}
    seen: dict[str, int] = {}
    for n, rec in table.rows:
        raw_id = rec[id_col].strip() if id_col < len(rec) else ""
        opted = bool(NO_RESEARCH.search(raw_id))
        code = NO_RESEARCH.sub("", raw_id).strip(" ,;:-()[]")
        if opt_col is not None and opt_col < len(rec):
            cell = rec[opt_col].strip()
            opted = (
                opted
                or bool(NO_RESEARCH.search(cell))
                or cell.lower() in {"yes", "y", "x", "true", "1"}
            )
        if not code:
            out.problems.append(f"row {n}, column “{headers[id_col]}”: no participant ID")
            continue
        if not CODE.match(code):
            out.problems.append(
                f"row {n}, column “{headers[id_col]}”: “{code[:40]}” is not a participant ID "
                "(letters, digits, - and _, at most 32)"
            )
            continue
        answers: dict[str, list[str]] = {}
        for h, (q, part) in mapped.items():
            value = rec[index[h]].strip() if index[h] < len(rec) else ""
            if q.kind == Question.Kind.CHOICE and value:
                letter = (
                    value.strip("() ").lower()[:1]
                    if re.match(r"^\(?[a-z]\)?(\s|$|[.:)])", value.strip().lower())
                    else ""
                )
                labels = [o["label"].lower() for o in q.options]
                if letter not in labels:
                    out.problems.append(
                        f"row {n}, column “{h}”: “{value[:40]}” is not one of the options "
                        f"({', '.join(labels)})"
                    )
                    continue
                value = letter
            slots = answers.setdefault(q.key, [""] * max(len(q.parts), 1))
            slots[part] = value[:500]
        if code in seen:
            out.notes.append(
                f"row {n}: participant {code} also on row {seen[code]}; the later row is kept"
            )
            out.rows = [r for r in out.rows if r.code != code]
        seen[code] = n
        out.rows.append(Row(n, code, opted, answers))
    if not out.rows and not out.problems:
        out.problems.append("file: no response rows")
    return out
