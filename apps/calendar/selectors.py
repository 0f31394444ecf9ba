"""Reads of the course calendar.

`deadline_list` is the one place pages and the API get a user's deadlines from; the slack-days
issue replaces each assignment's base deadline with the student's effective one here.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from apps.calendar.models import Assignment, Lecture, Milestone
from apps.core.models import Course, User


@dataclass(frozen=True)
class Deadline:
    kind: str  # "assignment" | "milestone"
    code: str
    title: str
    due_at: dt.datetime
    release_at: dt.datetime | None
    notes: str

    @property
    def is_past(self) -> bool:
        return self.due_at <= timezone.now()


def deadline_list(
    *, course: Course, user: User, memo: dict[str, Any] | None = None
) -> list[Deadline]:
    """Assignments (a student's effective deadlines) and milestones, soonest first. `memo`
    (the request's) lets panels of one page share the student's deadlines."""
    from apps.core.permissions import is_student
    from apps.slackdays.selectors import student_slack_memo

    if is_student(user, course):
        # A student's own deadlines: base + exceptions + slack (one rule, apps.slackdays.rules).
        items = [
            Deadline("assignment", d.assignment.code, d.assignment.title, d.effective, d.assignment.release_at,
                     "" if d.effective == d.base else f"base deadline moved by {d.extension_hours + d.accommodation_hours} h of exceptions and {d.slack_days} slack day(s)")
            for d in student_slack_memo({} if memo is None else memo, course=course, student=user)[1]
        ]  # fmt: skip
    else:
        items = [
            Deadline("assignment", a.code, a.title, a.due_at, a.release_at, "")
            for a in Assignment.objects.filter(course=course)
        ]
    items += [
        Deadline("milestone", m.key, m.name, m.due_at, None, m.notes)
        for m in Milestone.objects.filter(course=course)
    ]
    return sorted(items, key=lambda d: (d.due_at, d.kind, d.code))


def lecture_list(*, course: Course) -> QuerySet[Lecture]:
    return Lecture.objects.filter(course=course).order_by("starts_at")


def lecture_upcoming(*, course: Course, limit: int = 4) -> list[Lecture]:
    return list(lecture_list(course=course).filter(ends_at__gte=timezone.now())[:limit])
