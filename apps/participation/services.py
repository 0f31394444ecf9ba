"""Writes: staff record or remove a participation event, or import many from CSV (preview, then
all or nothing). Every write is one transaction with an audit row."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.core.csvfile import CsvRefused, Problem, read_csv, refuse_unreadable
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, Membership, Role, User
from apps.core.permissions import is_staff
from apps.core.services import audit_record
from apps.participation.models import KINDS, ParticipationEvent, ParticipationImport

MAX_BYTES = 5_000_000
_KIND_WORDS = (
    {k: k for k, _ in KINDS}
    | {label.lower(): k for k, label in KINDS}
    | {
        "lecture": "attendance",
        "present": "attendance",
        "ed": "ed-post",
        "post": "ed-post",
        "answer": "ed-answer",
        "check-in": "checkin",
        "meeting": "checkin",
    }
)


def _require_staff(actor: User, course: Course) -> None:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs record participation.")


def _student(course: Course, email: str) -> User:
    user = (
        User.objects.filter(
            memberships__course=course, memberships__role=Role.STUDENT, memberships__is_active=True
        )
        .filter(email__iexact=email.strip())
        .first()
    )
    if user is None:
        raise DomainError(f"{email!r} is not a student of this course.", field="student")
    return user


def event_record(
    *,
    actor: User,
    course: Course,
    student_email: str,
    kind: str,
    occurred_on: dt.date,
    note: str = "",
) -> ParticipationEvent:
    _require_staff(actor, course)
    kind = _KIND_WORDS.get(kind.strip().lower(), "")
    if not kind:
        raise DomainError(f"kind is one of {', '.join(k for k, _ in KINDS)}.", field="kind")
    student = _student(course, student_email)
    try:
        with transaction.atomic():
            event = ParticipationEvent.objects.create(
                course=course,
                student=student,
                kind=kind,
                occurred_on=occurred_on,
                note=note.strip()[:300],
                recorded_by=actor,
            )
            audit_record(
                actor=actor,
                action="participation.recorded",
                course=course,
                obj=event,
                after={"student": student.email, "kind": kind, "on": occurred_on.isoformat()},
            )
    except IntegrityError:
        raise Conflict(
            f"{student.get_full_name() or student.email} is already marked present on "
            f"{occurred_on}."
        ) from None
    return event


def event_delete(*, actor: User, course: Course, event_id: int) -> None:
    _require_staff(actor, course)
    with transaction.atomic():
        event = (
            ParticipationEvent.objects.select_for_update()
            .filter(course=course, pk=event_id)
            .first()
        )
        if event is None:
            raise NotFound("No such participation event.")
        audit_record(
            actor=actor,
            action="participation.removed",
            course=course,
            obj=event,
            before={
                "student": event.student_id,
                "kind": event.kind,
                "on": event.occurred_on.isoformat(),
            },
        )
        event.delete()


@dataclass
class Plan:
    events: list[ParticipationEvent] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and bool(self.events)


def import_plan(*, course: Course, data: bytes) -> Plan:
    """Rows of `email` (or `sid`), `kind`, `date` (YYYY-MM-DD), optional `note`; every problem
    by row and column; attendance already recorded (in the file or before) is a problem."""
    plan = Plan()
    try:
        table = read_csv(data, max_bytes=MAX_BYTES)
    except CsvRefused as exc:
        plan.problems.append(exc.problem)
        return plan
    header = [h.lower() for h in table.header]
    who = next((h for h in ("email", "sid") if h in header), None)
    for need in ("kind", "date"):
        if need not in header:
            plan.problems.append(Problem(1, None, f"no {need!r} column"))
    if who is None:
        plan.problems.append(Problem(1, None, "no column says who: add 'email' or 'sid'"))
    if plan.problems:
        return plan
    assert who is not None  # noqa: S101 - narrowed by the return above
    students = Membership.objects.filter(
        course=course, role=Role.STUDENT, is_active=True
    ).select_related("user")
    by_key = {(m.user.email.lower() if who == "email" else m.user.sid): m.user for m in students}
    present = set(
        ParticipationEvent.objects.filter(course=course, kind="attendance").values_list(
            "student_id", "occurred_on"
        )
    )
    col = {h: i for i, h in enumerate(header)}
    seen: dict[tuple[str, ...], int] = {}
    for n, cells in table.rows:
        same = tuple(c.strip().lower() for c in cells)
        if same in seen:
            plan.problems.append(Problem(n, None, f"the same as row {seen[same]}; remove one"))
            continue
        seen[same] = n
        get = lambda h: cells[col[h]].strip() if col.get(h, 99) < len(cells) else ""  # noqa: E731, B023
        ident = get(who)
        user = by_key.get(ident.lower() if who == "email" else ident)
        if user is None:
            plan.problems.append(Problem(n, who, f"{ident!r}: no student of this course"))
        kind = _KIND_WORDS.get(get("kind").lower(), "")
        if not kind:
            plan.problems.append(
                Problem(n, "kind", f"{get('kind')!r}: use one of {', '.join(k for k, _ in KINDS)}")
            )
        try:
            day = dt.date.fromisoformat(get("date"))
        except ValueError:
            plan.problems.append(Problem(n, "date", f"{get('date')!r} is not a date (YYYY-MM-DD)"))
            continue
        if day > timezone.localdate() + dt.timedelta(days=1):
            plan.problems.append(Problem(n, "date", f"{day} is in the future"))
        if user is None or not kind:
            continue
        if kind == "attendance":
            if (user.pk, day) in present:
                plan.problems.append(
                    Problem(n, "date", f"{user.email} is already marked present on {day}")
                )
                continue
            present.add((user.pk, day))
        plan.events.append(
            ParticipationEvent(
                course=course, student=user, kind=kind, occurred_on=day, note=get("note")[:300]
            )
        )
    if not plan.events and not plan.problems:
        plan.problems.append(Problem(None, None, "the file has a header but no rows"))
    return plan


def import_upload(
    *, actor: User, course: Course, filename: str, data: bytes
) -> tuple[ParticipationImport, Plan]:
    _require_staff(actor, course)
    refuse_unreadable(data, max_bytes=MAX_BYTES)
    record = ParticipationImport.objects.create(
        course=course,
        filename=(filename or "participation.csv")[:200],
        content=data,
        uploaded_by=actor,
    )
    return record, import_plan(course=course, data=data)


def import_get(*, actor: User, course: Course, import_id: int) -> ParticipationImport:
    _require_staff(actor, course)
    record = ParticipationImport.objects.filter(course=course, pk=import_id).first()
    if record is None:
        raise NotFound("No such import in this course.")
    return record


def import_commit(*, actor: User, course: Course, import_id: int) -> int:
    """Store every row or none: re-planned now, refused (409) with any problem or when stored."""
    record = import_get(actor=actor, course=course, import_id=import_id)
    with transaction.atomic():
        Course.objects.select_for_update().get(pk=course.pk)
        record = ParticipationImport.objects.select_for_update().get(pk=record.pk)
        if record.committed_at is not None:
            raise Conflict("This file was already imported.")
        plan = import_plan(course=course, data=bytes(record.content))
        if not plan.ok:
            raise Conflict(
                f"The file has {len(plan.problems)} problem(s); fix them and upload it again. "
                "Nothing was changed."
            )
        for e in plan.events:
            e.recorded_by, e.source = actor, record
        ParticipationEvent.objects.bulk_create(plan.events, batch_size=1000)
        record.committed_at, record.added = timezone.now(), len(plan.events)
        record.save(update_fields=["committed_at", "added"])
        audit_record(
            actor=actor,
            action="participation.imported",
            course=course,
            obj=record,
            after={"added": record.added},
        )
    return record.added
