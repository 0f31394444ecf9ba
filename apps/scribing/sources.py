"""Scribe duties on the calendar: a student's notes due dates (with the lecture named), reminded
like any other duty until the notes are submitted. Staff see no per-student entries."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from django.db.models import QuerySet

from apps.calendar.registry import Event, EventQuery
from apps.calendar.sources import uid
from apps.core.compiled import compiled_query
from apps.core.models import Course
from apps.scribing.models import ScribeDuty


def _event(d: ScribeDuty, course: Course) -> Event:
    return Event(
        uid=uid("scribe", d.pk, course.code),
        kind="duty",
        code=f"Scribe L{d.lecture.number}",
        title=f"Scribe notes: L{d.lecture.number} {d.lecture.title}",
        start=d.due_at,
        description=f"Status: {d.get_status_display()}",
        path=f"/c/{course.code}/scribing/",
        reminder_kind="duty",
        status=d.status,
    )


def _duties(course_id: int, student_id: int) -> QuerySet[ScribeDuty]:
    return (
        ScribeDuty.objects.filter(course_id=course_id, student_id=student_id)
        .select_related("lecture")
        .order_by("due_at", "pk")
    )  # the default ordering would join the user table for nothing


def duties_of(course_id: int, student_id: int, memo: dict[str, Any]) -> list[ScribeDuty]:
    """The student's duties with their lectures, read once per `memo` (a request's: the
    dashboard's deadlines and its Today list share them)."""
    key = f"scribe_duties:{course_id}:{student_id}"
    if key not in memo:
        memo[key] = compiled_query("scribing.duties", _duties, course_id, student_id)
    rows: list[ScribeDuty] = memo[key]
    return rows


def duty_events(query: EventQuery) -> Iterable[Event]:
    if query.staff:
        return []
    if not (query.start or query.end):  # the dashboard's deadlines, feeds: the hot shape
        duties = duties_of(query.course.pk, query.user.pk, query.memo)
        return [_event(d, query.course) for d in duties]
    qs = _duties(query.course.pk, query.user.pk)
    if query.start:
        qs = qs.filter(due_at__gte=query.start)
    if query.end:
        qs = qs.filter(due_at__lt=query.end)
    return [_event(d, query.course) for d in qs]


def duty_reminders(
    course: Course, start: dt.datetime, end: dt.datetime
) -> Iterable[tuple[int, Event]]:
    qs = ScribeDuty.objects.filter(
        course=course,
        due_at__gte=start,
        due_at__lt=end,
        status__in=[ScribeDuty.Status.ASSIGNED, ScribeDuty.Status.REVISION],
    ).select_related("lecture")
    return [(d.student_id, _event(d, course)) for d in qs]
