"""Reading a class list: pure functions of bytes and plain values, no database.

Accepts a plain `name,email,sid,role` file and the column names of a Canvas/bCourses roster
export; detects the delimiter and the encoding (UTF-8 with or without BOM; Windows-1252 as a
fallback, said out loud). Every problem is reported with its row number (the header is row 1)
and column, so staff fix the whole file in one pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.core.csvfile import CsvRefused, Problem, read_csv
from apps.core.emails import canonical_email

MAX_BYTES = 5 * 1024 * 1024
MAX_ROWS = 20_000

# canonical field → accepted header names (compared lower-case, spaces/underscores folded)
ALIASES: dict[str, tuple[str, ...]] = {
    "name": ("name", "full name", "student name", "student", "display name", "sortable name"),
    "email": ("email", "email address", "e-mail", "e-mail address", "login email", "primary email"),
    "sid": ("sid", "student id", "student number", "sis user id", "sis id", "university id"),
    "role": ("role", "course role", "enrollment role", "type"),
}
ROLE_WORDS: dict[str, str] = {
    "student": "student",
    "studentenrollment": "student",
    "learner": "student",
    "auditor": "student",
    "waitlist student": "student",
    "ta": "ta",
    "gsi": "ta",
    "teaching assistant": "ta",
    "tutor": "ta",
    "taenrollment": "ta",
    "reader": "ta",
    "lead ta": "ta",
    "uga": "ta",
    "instructor": "instructor",
    "teacher": "instructor",
    "professor": "instructor",
    "teacherenrollment": "instructor",
    "lead instructor": "instructor",
}
EMAIL_RE = re.compile(r"^[^@\s,;]+@[^@\s,;]+\.[^@\s,;]+$")


@dataclass(frozen=True)
class RosterRow:
    row: int
    name: str
    email: str
    sid: str
    role: str


@dataclass
class ParsedRoster:
    rows: list[RosterRow] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    columns: dict[str, str] = field(default_factory=dict)  # canonical → header in the file


def _fold(header: str) -> str:
    return " ".join(header.strip().lower().replace("_", " ").split())


def display_name(raw: str) -> str:
    """'Okafor, Ada' (Canvas/bCourses sortable name) → 'Ada Okafor'."""
    name = " ".join(raw.split())
    if name.count(",") == 1:
        last, first = (part.strip() for part in name.split(","))
        if last and first:
            return f"{first} {last}"
    return name


def parse_roster(data: bytes) -> ParsedRoster:
    out = ParsedRoster()
    try:
        table = read_csv(data, max_bytes=MAX_BYTES, max_rows=MAX_ROWS)
    except CsvRefused as exc:
        out.problems.append(Problem(exc.row, None, exc.message))
        return out
    out.notes.extend(table.notes)
    header = table.header
    folded = [_fold(h) for h in header]
    index: dict[str, int] = {}
    for canonical, names in ALIASES.items():
        for i, h in enumerate(folded):
            if h in names:
                out.columns[canonical] = header[i].strip()
                index[canonical] = i
                break
    for required in ("name", "email"):
        if required not in out.columns:
            accepted = ", ".join(repr(a) for a in ALIASES[required][:4])
            out.problems.append(
                Problem(1, None, f"no {required} column (accepted names include {accepted})")
            )
    if "role" not in out.columns:
        out.notes.append("No role column: everyone in the file is taken as a student.")
    if "sid" not in out.columns:
        out.notes.append("No student ID column: people are matched by email only.")
    if out.problems:
        return out

    seen_email: dict[str, int] = {}
    seen_sid: dict[str, int] = {}
    for number, record in table.rows:
        if len(record) < len(header) and len(record) <= max(index.values()):
            out.problems.append(
                Problem(number, None, f"has {len(record)} cells, the header has {len(header)}")
            )
            continue

        def cell(c: str, record: list[str] = record) -> str:
            return record[index[c]].strip() if c in index and index[c] < len(record) else ""

        name, email, sid, role_text = (
            cell("name"),
            canonical_email(cell("email")),
            cell("sid"),
            cell("role"),
        )
        bad = False
        if not name:
            out.problems.append(Problem(number, out.columns["name"], "missing name"))
            bad = True
        if not email:
            out.problems.append(Problem(number, out.columns["email"], "missing email"))
            bad = True
        elif not EMAIL_RE.match(email):
            out.problems.append(
                Problem(number, out.columns["email"], f"{email!r} is not an email address")
            )
            bad = True
        elif email in seen_email:
            out.problems.append(
                Problem(
                    number,
                    out.columns["email"],
                    f"duplicate email {email} (also row {seen_email[email]})",
                )
            )
            bad = True
        if sid:
            if sid in seen_sid:
                out.problems.append(
                    Problem(
                        number,
                        out.columns["sid"],
                        f"duplicate SID {sid} (also row {seen_sid[sid]})",
                    )
                )
                bad = True
            elif len(sid) > 32:
                out.problems.append(
                    Problem(number, out.columns["sid"], "SID longer than 32 characters")
                )
                bad = True
        role = "student"
        if "role" in out.columns:
            role = ROLE_WORDS.get(_fold(role_text), "")
            if not role:
                shown = role_text or "(blank)"
                out.problems.append(
                    Problem(
                        number,
                        out.columns["role"],
                        f"unknown role {shown!r} (use student, TA or instructor)",
                    )
                )
                bad = True
        if email and email not in seen_email:
            seen_email[email] = number
        if sid and sid not in seen_sid:
            seen_sid[sid] = number
        if not bad:
            out.rows.append(RosterRow(number, display_name(name), email, sid, role))
    if not out.rows and not out.problems:
        out.problems.append(Problem(None, None, "the file has a header but no people"))
    return out
