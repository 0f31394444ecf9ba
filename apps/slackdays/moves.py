"""Staff change an assignment's dates. Exceptions are stored relative to the base, so every
student's deadline moves with it; the impact (who, from when to when, whose slack day the move
makes moot) is shown before the move is confirmed, and everyone affected is e-mailed once."""

from __future__ import annotations

import datetime as dt

from django.db import transaction

from apps.calendar.models import Assignment
from apps.calendar.moves import MoveImpact, PersonMove, deadline_moved_notify
from apps.core.errors import DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.core.services import audit_record
from apps.slackdays.sources import course_deadlines


def assignment_move_impact(
    *, course: Course, assignment: Assignment, new_due: dt.datetime
) -> MoveImpact:
    """Every active student's deadline before and after; a slack day is moot when the new
    deadline without slack already reaches the deadline the slack day bought."""
    impact = MoveImpact(
        what=f"{assignment.code} {assignment.title}", old_due=assignment.due_at, new_due=new_due
    )
    moved = Assignment(
        pk=assignment.pk,
        course=course,
        code=assignment.code,
        title=assignment.title,
        release_at=assignment.release_at,
        due_at=new_due,
        accepts_slack=assignment.accepts_slack,
    )  # an unsaved copy: the same students, exceptions and slack against the new base
    before = course_deadlines(course=course, assignments=[assignment])
    after = {d.student_id: d for d in course_deadlines(course=course, assignments=[moved])}
    users = User.objects.in_bulk([d.student_id for d in before])
    for d in before:
        user, new = users[d.student_id], after[d.student_id]
        parts = [f"+{d.extension_hours} h extension"] if d.extension_hours else []
        parts += [f"+{d.accommodation_hours} h accommodation"] if d.accommodation_hours else []
        parts += [f"+{d.slack_days} slack day"] if d.slack_days else []
        person = PersonMove(
            user.pk,
            user.get_full_name() or user.email,
            user.email,
            d.effective,
            new.effective,
            ", ".join(parts),
        )
        impact.people.append(person)
        if d.slack_days and new.without_slack >= d.effective:
            impact.moot.append(person)
    impact.people.sort(key=lambda p: (p.note == "", p.name))
    return impact


def assignment_update(
    *,
    actor: User,
    course: Course,
    assignment_id: int,
    title: str | None = None,
    release_at: dt.datetime | None = None,
    due_at: dt.datetime | None = None,
    confirm: bool = False,
) -> tuple[Assignment, MoveImpact | None]:
    """Staff rename an assignment or move its release or due date. Moving the deadline needs
    `confirm` (the caller has shown the impact). Locks the assignment, bumps its revision (the
    feeds' SEQUENCE), audits before → after and, for a moved deadline, e-mails every affected
    student once after commit."""
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs edit the calendar.")
    with transaction.atomic():
        a = Assignment.objects.select_for_update().filter(course=course, pk=assignment_id).first()
        if a is None:
            raise NotFound("No such assignment in this course.")
        before = {
            "title": a.title,
            "release_at": a.release_at.isoformat(),
            "due_at": a.due_at.isoformat(),
        }
        if title is not None:
            if not title.strip():
                raise DomainError("An assignment needs a title.", field="title")
            a.title = title.strip()[:200]
        if release_at is not None:
            a.release_at = release_at
        impact = None
        if due_at is not None and due_at != a.due_at:
            impact = assignment_move_impact(course=course, assignment=a, new_due=due_at)
            if not confirm:
                raise DomainError(
                    f"Moving {a.code} changes the deadline of {impact.count} students"
                    + (f" and makes {len(impact.moot)} slack day(s) moot" if impact.moot else "")
                    + "; look at the impact and confirm.",
                    field="confirm",
                )
            a.due_at = due_at
        if a.due_at <= a.release_at:
            raise DomainError("The deadline must be after the release.", field="due_at")
        after = {
            "title": a.title,
            "release_at": a.release_at.isoformat(),
            "due_at": a.due_at.isoformat(),
        }
        if after != before:
            a.revision += 1
            a.save()
            audit_record(
                actor=actor,
                action="assignment.updated",
                course=course,
                obj=a,
                before=before,
                after=after,
                note=f"{impact.count} students affected" if impact else "",
            )
            if impact is not None:
                deadline_moved_notify(course=course, impact=impact, path=f"/c/{course.code}/slack/")
    return a, impact
