"""Answers from a CSV: courseops' template (email, q1, q6.1, q6.2 …), Google Forms and Gradescope
exports (identity column + one column per question). Columns are mapped to questions by number
and part; the mapping is shown before anything is stored. Unknown students and bad rows are
reported, never fatal: the rest of the batch is stored. The preview is the import, rolled back."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from django.db import transaction

from apps.autograder.models import Question, QuestionSet
from apps.autograder.services import answers_upsert_columns
from apps.core.csvfile import CsvRefused, read_csv
from apps.core.errors import NotAllowed
from apps.core.models import Membership, Role, User
from apps.core.permissions import is_staff

IDENTITY = {
    "email": ("email", "email address", "e-mail", "username"),
    "sid": ("sid", "student id", "student number"),
}
COLUMN = re.compile(
    r"^\s*(?:q(?:uestion)?\s*)?(\d+)\s*(?:[._\-]\s*(\d+)|\s*\(?([ab])\)?)?(?=$|[\s:.)\]])",
    re.IGNORECASE,
)

MAX_UPLOAD_BYTES = 50 * 1024 * 1024  # a whole course's answers: 2,000 students × 40 questions
# The report keeps the first problems and counts them all: it is stored with the upload and sent
# with every poll of the page's progress bar, and a wrong file of 100,000 unknown students would
# make each poll megabytes. The first thousand show what to fix.
PROBLEMS_KEPT = 1_000


@dataclass
class IntakeReport:
    mapping: dict[str, str] = field(default_factory=dict)  # header → "q6 part 2"
    unmapped: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the first PROBLEMS_KEPT
    problem_count: int = 0  # all of them
    students: int = 0
    answers: int = 0

    def problem(self, text: str) -> None:
        self.problem_count += 1
        if len(self.problems) < PROBLEMS_KEPT:
            self.problems.append(text)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def map_columns(
    headers: list[str], questions: list[Question]
) -> tuple[dict[str, tuple[Question, int]], list[str]]:
    by_pos = {q.position: q for q in questions}
    by_key = {q.key.lower(): q for q in questions}
    mapped: dict[str, tuple[Question, int]] = {}
    unmapped = []
    for h in headers:
        folded = h.strip().lower()
        if any(folded in names for names in IDENTITY.values()) or folded in {
            "timestamp",
            "name",
            "first name",
            "last name",
            "participant id",
        }:
            continue
        m = COLUMN.match(h)
        q = by_key.get(folded.split(".")[0]) if "." in folded else by_key.get(folded)
        part = 0
        if m:
            q = by_pos.get(int(m.group(1))) or q
            if m.group(2):
                part = int(m.group(2)) - 1
            elif m.group(3):
                part = "ab".index(m.group(3).lower())
        if q is None or (q.kind != Question.Kind.CHOICE and part >= max(len(q.parts), 1)):
            unmapped.append(h)
            continue
        mapped[h] = (q, part)
    return mapped, unmapped


PROGRESS_EVERY = 2000  # rows between progress reports


def answers_import(
    *,
    actor: User,
    question_set: QuestionSet,
    data: bytes,
    commit: bool,
    progress: Callable[[int], None] | None = None,
) -> IntakeReport:
    """Read the CSV, map its columns, and store every answer of a known student in one
    transaction (rolled back when `commit` is false: the preview is the import). `progress` is
    called with the rows read so far every PROGRESS_EVERY rows."""
    if not is_staff(actor, question_set.course):
        raise NotAllowed("Only the course staff upload answers.")
    report = IntakeReport()
    try:
        table = read_csv(data, max_bytes=MAX_UPLOAD_BYTES)
    except CsvRefused as exc:
        report.problem(str(exc))
        return report
    headers = table.header
    folded = [h.strip().lower() for h in headers]
    ident = {
        kind: next((i for i, h in enumerate(folded) if h in names), None)
        for kind, names in IDENTITY.items()
    }
    if ident["email"] is None and ident["sid"] is None:
        report.problem("row 1: no Email or SID column to match students")
        return report
    questions = list(question_set.questions.order_by("position"))
    mapped, report.unmapped = map_columns(headers, questions)
    report.mapping = {
        h: f"{q.key}"
        + (f" part {p + 1}" if q.kind != Question.Kind.CHOICE and len(q.parts) > 1 else "")
        for h, (q, p) in mapped.items()
    }
    if not mapped:
        report.problem("row 1: no column matches a question (use q1, q2 … or q6.1, q6.2)")
        return report
    members = list(
        Membership.objects.filter(course=question_set.course, role=Role.STUDENT).values_list(
            "user_id", "user__email", "user__sid"
        )
    )
    by_email = {email: (pk, email) for pk, email, _sid in members}
    by_sid = {sid: (pk, email) for pk, email, sid in members if sid}
    index = {h: i for i, h in enumerate(headers)}
    # A student's later row wins: keep each student's last row, then cut the columns out of
    # those rows (one list per question part) rather than handle each answer on its own.
    last: dict[int, list[str]] = {}
    with transaction.atomic():
        for n, rec in table.rows:
            if progress is not None and n % PROGRESS_EVERY == 0:
                progress(n - 1)
            email = (
                rec[ident["email"]].strip().lower()
                if ident["email"] is not None and ident["email"] < len(rec)
                else ""
            )
            sid = (
                rec[ident["sid"]].strip()
                if ident["sid"] is not None and ident["sid"] < len(rec)
                else ""
            )
            student = by_email.get(email) or by_sid.get(sid)
            if student is None:
                report.problem(
                    f"row {n}: no student of this course with email {email or '—'} or SID "
                    f"{sid or '—'} (row skipped)"
                )
                continue
            student_id, student_email = student
            if student_id in last:
                report.problem(f"row {n}: {student_email} appears again; the later row wins")
            last[student_id] = rec
        students, recs = list(last), list(last.values())
        columns = {}
        for h, (q, part) in mapped.items():  # two headers of one part: the later column wins
            i = index[h]
            columns[(q.pk, part)] = (q, part, students, [r[i] if i < len(r) else "" for r in recs])
        report.answers = answers_upsert_columns(list(columns.values()), "csv")
        report.students = len(last)
        if not commit:
            transaction.set_rollback(True)
    return report
