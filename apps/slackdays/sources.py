"""Assignment deadlines on calendars, feeds and reminders: a student's effective deadline (base
+ exceptions + slack, `rules.effective_deadline`), the base deadline for staff.

`course_deadlines` computes every student's effective deadline for some assignments in four
queries whatever the course's size; reminders and the impact of moving a deadline use it.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count, Q
from django.urls import reverse

from apps.calendar.models import Assignment
from apps.calendar.registry import Event, EventQuery
from apps.calendar.sources import uid
from apps.core.models import Course, Membership, Role
from apps.groups.models import GroupMembership
from apps.slackdays import rules
from apps.slackdays.models import DeadlineException, LedgerEntry
from apps.slackdays.selectors import relief_policy, relief_rows, student_slack_memo


def _event(
    a: Assignment,
    course: Course,
    *,
    due: dt.datetime,
    note: str = "",
    seq: int = 0,
    staff: bool = False,
) -> Event:
    return Event(
        uid=uid("assignment", a.pk, course.code),
        kind="assignment",
        code=a.code,
        title=f"{a.code} {a.title}",
        start=due,
        description=note,
        # staff open the deadline's page (every student's relief); a student their slack page
        path=reverse("slackdays:deadline", kwargs={"code": course.code, "assignment_id": a.pk})
        if staff
        else f"/c/{course.code}/slack/",
        sequence=a.revision + seq,
        reminder_kind="assignment",
        released_at=a.release_at,
        edit_path=reverse(
            "slackdays:assignment-edit", kwargs={"code": course.code, "assignment_id": a.pk}
        )
        if staff
        else "",  # only staff's events link to the edit form (a student's many never reverse)
    )


def _personal_changes(query: EventQuery, group_id: int | None) -> Counter[int]:
    """assignment id → how many times the student's own deadline changed (slack spent or
    cancelled, exceptions granted or revoked): it only grows, so it can feed SEQUENCE."""
    course, student = query.course, query.user
    changes: Counter[int] = Counter(
        dict(
            LedgerEntry.objects.filter(
                account__course=course, account__student=student, assignment__isnull=False
            )
            .values_list("assignment_id")
            .annotate(n=Count("id"))
            .values_list("assignment_id", "n")
        )
    )
    mine = Q(student=student) | (Q(group_id=group_id) if group_id else Q(pk__in=[]))
    every = list(Assignment.objects.filter(course=course).values_list("pk", flat=True))
    for a_id, revoked in DeadlineException.objects.filter(mine, course=course).values_list(
        "assignment_id", "revoked_at"
    ):
        for target in [a_id] if a_id else every:
            changes[target] += 2 if revoked else 1
    return changes


def assignment_events(query: EventQuery) -> Iterable[Event]:
    course = query.course
    if query.staff:
        for a in Assignment.objects.filter(course=course):
            yield _event(a, course, due=a.due_at, staff=True)
        return
    _, deadlines = student_slack_memo(query.memo, course=course, student=query.user)
    changes: Counter[int] = Counter()
    if query.for_feed:
        gid = (
            GroupMembership.objects.filter(course=course, user=query.user, left_at__isnull=True)
            .values_list("group_id", flat=True)
            .first()
        )
        changes = _personal_changes(query, gid)
    for d in deadlines:
        parts = []
        if d.extension_hours:
            parts.append(f"+{d.extension_hours} h extension")
        if d.accommodation_hours:
            parts.append(f"+{d.accommodation_hours} h accommodation")
        if d.slack_days:
            parts.append(f"+{d.slack_days} slack day")
        note = (
            f"Your deadline (base {d.base.astimezone(course.tz):%b %d %H:%M %Z}, "
            f"{', '.join(parts)})"
            if parts
            else ""
        )
        yield _event(d.assignment, course, due=d.effective, note=note, seq=changes[d.assignment.pk])


@dataclass(frozen=True)
class StudentDue:
    student_id: int
    assignment: Assignment
    without_slack: dt.datetime
    effective: dt.datetime
    extension_hours: int
    accommodation_hours: int
    slack_days: int


def course_deadlines(*, course: Course, assignments: list[Assignment]) -> list[StudentDue]:
    """Every active student's deadline on each of `assignments` (4 queries in all), from the
    relief rule itself (`rules.relief_stack`, as every page computes it): slack, own and group
    extensions and accommodations composed under the course's cap, never their bare sum."""
    if not assignments:
        return []
    students = list(
        Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True).values_list(
            "user_id", flat=True
        )
    )
    group_of = dict(
        GroupMembership.objects.filter(
            course=course, user_id__in=students, left_at__isnull=True
        ).values_list("user_id", "group_id")
    )
    known: dict[int, int | None] = {s: group_of.get(s) for s in students}
    ext, acc, slack, _ = relief_rows(course, set(students), known)
    policy = relief_policy(course)
    out = []
    for a in assignments:
        for s in students:
            mine = ext[s][a.pk]
            stack = rules.relief_stack(
                a.due_at,
                tz=course.timezone,
                policy=policy,
                parts=[rules.ReliefPart(kind="slack", hours=24)] * slack[s][a.pk] + mine + acc[s],
            )
            e, h = sum(p.hours for p in mine), sum(p.hours for p in acc[s])
            without = rules.effective_deadline(
                a.due_at, tz=course.timezone, extension_hours=e, accommodation_hours=h
            )
            out.append(StudentDue(s, a, without, stack.effective, e, h, slack[s][a.pk]))
    return out


def assignment_reminders(
    course: Course, start: dt.datetime, end: dt.datetime
) -> Iterable[tuple[int, Event]]:
    """(student, event) for each effective deadline due in [start, end)."""
    # An effective deadline is at most (exceptions + slack) after the base: look back that far.
    longest = DeadlineException.objects.filter(course=course, revoked_at__isnull=True).values_list(
        "hours", flat=True
    )
    reach = dt.timedelta(hours=sum(longest) + 25 * course.slack_days_max_per_assignment)
    assignments = list(
        Assignment.objects.filter(course=course, due_at__lt=end, due_at__gte=start - reach)
    )
    for d in course_deadlines(course=course, assignments=assignments):
        if start <= d.effective < end:
            yield d.student_id, _event(d.assignment, course, due=d.effective)
