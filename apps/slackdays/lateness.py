"""Gradescope lateness import: parse the assignment export, then charge slack or list late work.

Rows are matched by email, else SID. Each submission is compared with the student's deadline
before slack (base + exceptions). Late within the slack window and covered → a slack day is
charged for the whole group (once, whichever member's row comes first); later, or no balance →
late work for staff. The preview runs the very same commit in a transaction and rolls it back.
Importing the same file again changes nothing: covered rows already hold their slack day and
late work is unique per student and assignment.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Q

from apps.calendar.models import Assignment
from apps.core.csvfile import CsvRefused, read_csv, refuse_unreadable
from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import Course, Membership, Role, User
from apps.core.permissions import is_staff
from apps.core.services import audit_record
from apps.slackdays import rules
from apps.slackdays.models import ActiveSpend, LatenessImport, LateWork
from apps.slackdays.services import deadline_without_slack, slack_apply

TIME_FORMATS = (
    "%Y-%m-%d %H:%M:%S %z",
    "%Y-%m-%d %H:%M:%S%z",
    "%Y-%m-%dT%H:%M:%S%z",
    "%Y-%m-%d %H:%M %z",
)


@dataclass
class Row:
    row: int
    email: str
    sid: str
    submitted: dt.datetime | None


@dataclass
class Outcome:
    row: int
    student: str
    result: str  # on_time | charged | already_covered | late_not_covered | no_submission
    detail: str = ""


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for o in self.outcomes:
            counts[o.result] = counts.get(o.result, 0) + 1
        counts["problems"] = len(self.problems)
        return counts


def parse_time(text: str) -> dt.datetime | None:
    t = text.strip()
    for f in TIME_FORMATS:
        try:
            return dt.datetime.strptime(t, f).astimezone(dt.UTC)
        except ValueError:
            continue
    try:
        parsed = dt.datetime.fromisoformat(t)
    except ValueError:
        return None
    return parsed.astimezone(dt.UTC) if parsed.tzinfo else None


def parse_export(data: bytes) -> tuple[list[Row], list[str]]:
    try:
        table = read_csv(data)
    except CsvRefused as exc:
        return [], [str(exc)]
    headers = {h.lower(): h for h in table.header}
    problems = []
    if "email" not in headers and "sid" not in headers:
        problems.append("row 1: no Email or SID column")
    if "submission time" not in headers:
        problems.append("row 1: no 'Submission Time' column")
    if problems:
        return [], problems
    rows = []
    for n, rec in table.records():
        email = (rec.get(headers.get("email", ""), "") or "").strip().lower()
        sid = (rec.get(headers.get("sid", ""), "") or "").strip()
        raw = (rec.get(headers["submission time"], "") or "").strip()
        if not email and not sid:
            problems.append(f"row {n}: no email or SID")
            continue
        submitted = parse_time(raw) if raw else None
        if raw and submitted is None:
            problems.append(
                f"row {n}, column 'Submission Time': {raw!r} is not a timestamp with a UTC offset "
                f"(e.g. 2026-02-11 08:30:12 -0800)"
            )
            continue
        rows.append(Row(n, email, sid, submitted))
    return rows, problems


def _apply(
    course: Course, assignment: Assignment, actor: User, rows: list[Row], report: Report
) -> None:
    members = Membership.objects.filter(course=course, role=Role.STUDENT).select_related("user")
    by_email = {m.user.email: m.user for m in members}
    by_sid = {m.user.sid: m.user for m in members if m.user.sid}
    for r in rows:
        student = by_email.get(r.email) or by_sid.get(r.sid)
        if student is None:
            report.problems.append(
                f"row {r.row}: no student of this course with email {r.email or '—'} or SID "
                f"{r.sid or '—'}"
            )
            continue
        name = student.get_full_name()
        if r.submitted is None:
            report.outcomes.append(Outcome(r.row, name, "no_submission"))
            continue
        base = deadline_without_slack(course, assignment, student)
        lateness, days = rules.classify(
            submitted=r.submitted,
            deadline_without_slack=base,
            tz=course.timezone,
            grace_minutes=course.slack_grace_minutes,
            max_slack_days=course.slack_days_max_per_assignment,
        )
        if lateness == rules.Lateness.ON_TIME:
            report.outcomes.append(Outcome(r.row, name, "on_time"))
            continue
        held = ActiveSpend.objects.filter(
            account__course=course, account__student=student, assignment=assignment
        ).count()
        if lateness == rules.Lateness.COVERED and held >= days:
            report.outcomes.append(Outcome(r.row, name, "already_covered"))
            continue
        late_by = r.submitted - base
        if lateness == rules.Lateness.COVERED:
            try:
                for _ in range(days - held):
                    slack_apply(
                        actor=student,
                        course=course,
                        assignment_id=assignment.pk,
                        charged_by=actor,
                        reason=f"late submission ({late_by} after the deadline), from the "
                        "Gradescope export",
                    )
            except DomainError as exc:
                why = f"slack could not be charged: {exc.message}"
            else:
                report.outcomes.append(Outcome(r.row, name, "charged", f"{late_by} late"))
                continue
        else:
            most = course.slack_days_max_per_assignment
            why = f"submitted {late_by} after the deadline; slack covers at most {most} day(s)"
        LateWork.objects.get_or_create(
            course=course,
            assignment=assignment,
            student=student,
            defaults={"submitted_at": r.submitted, "late_by": late_by, "why": why[:300]},
        )
        report.outcomes.append(Outcome(r.row, name, "late_not_covered", why))


def lateness_run(*, actor: User, record: LatenessImport, commit: bool) -> Report:
    """Preview (commit=False: everything rolled back) or commit (all or nothing)."""
    course = record.course
    if not is_staff(actor, course):
        raise NotAllowed("Only the course staff import lateness.")
    rows, problems = parse_export(bytes(record.content))
    report = Report(problems=problems)
    with transaction.atomic():
        locked = LatenessImport.objects.select_for_update().get(pk=record.pk)
        if commit and locked.committed_at is not None:
            raise Conflict("This import was already committed.")
        _apply(course, record.assignment, actor, rows, report)  # also names unknown students
        if not commit:
            transaction.set_rollback(True)
            return report
        if report.problems:
            raise Conflict(f"The file has {len(report.problems)} problem(s); nothing was changed.")
        from django.utils import timezone

        locked.committed_at = timezone.now()
        locked.summary = report.summary()
        locked.save(update_fields=["committed_at", "summary"])
        audit_record(
            actor=actor,
            action="lateness.imported",
            course=course,
            obj=record.assignment,
            after=report.summary(),
        )
    return report


def lateness_upload(
    *, actor: User, course: Course, assignment_id: int, filename: str, data: bytes
) -> LatenessImport:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course staff import lateness.")
    assignment = Assignment.objects.filter(Q(pk=assignment_id), course=course).first()
    if assignment is None:
        raise DomainError("No such assignment in this course.", field="assignment")
    refuse_unreadable(data)
    return LatenessImport.objects.create(
        course=course,
        assignment=assignment,
        filename=filename[:200] or "export.csv",
        content=data,
        uploaded_by=actor,
    )
