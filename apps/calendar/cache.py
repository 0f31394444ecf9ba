"""A course's calendar rows, cached: assignments, milestones, lectures, events and recess days
are read by nearly every page and change a few times a term.

One cache entry per course (`course-calendar:<id>`), dropped whenever one of those rows is saved
or deleted (signals, so the admin and `load_course` invalidate too) and again when that
transaction commits, so a reader between the write and the commit cannot keep the old rows.
`COURSE_CACHE_SECONDS = 0` turns caching off (the tests, which edit rows with update()).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save

from apps.calendar.models import Assignment, CourseEvent, Lecture, Milestone, RecessDay
from apps.core.models import Course
from apps.core.versions import course_changed

MODELS = (Assignment, Milestone, Lecture, CourseEvent, RecessDay)


@dataclass(frozen=True)
class CourseCalendar:
    assignments: list[Assignment]
    milestones: list[Milestone]
    lectures: list[Lecture]
    events: list[CourseEvent]
    recess: list[RecessDay]


def _key(course_id: int) -> str:
    return f"course-calendar:{course_id}"


def _load(course: Course) -> CourseCalendar:
    return CourseCalendar(
        assignments=list(Assignment.objects.filter(course=course).order_by("due_at", "code")),
        milestones=list(Milestone.objects.filter(course=course).order_by("due_at", "key")),
        lectures=list(Lecture.objects.filter(course=course).order_by("starts_at", "number")),
        events=list(CourseEvent.objects.filter(course=course).order_by("starts_at", "key")),
        recess=list(RecessDay.objects.filter(course=course).order_by("date")),
    )


def course_calendar(course: Course) -> CourseCalendar:
    """The course's calendar rows, read once per course object (a request's) and, when
    `COURSE_CACHE_SECONDS` > 0, from the shared cache (one cache read instead of five queries).
    Treat the lists as read-only. A save or delete of a calendar row in this process also drops
    the per-object copies (a generation number), so a service that edits and then reads sees
    its own edit."""
    memo = course.__dict__.get("_course_calendar")
    if memo is not None and memo[0] == _generation[0]:
        return memo[1]
    seconds = settings.COURSE_CACHE_SECONDS
    rows = cache.get(_key(course.pk)) if seconds > 0 else None
    if rows is None:
        rows = _load(course)
        if seconds > 0:
            cache.set(_key(course.pk), rows, seconds)
    course.__dict__["_course_calendar"] = (_generation[0], rows)
    return rows


_generation = [0]


def forget(course_id: int) -> None:
    _generation[0] += 1
    course_changed(course_id)  # what Today's per-course sources built from the calendar
    cache.delete(_key(course_id))
    transaction.on_commit(lambda: cache.delete(_key(course_id)))


def _changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    forget(instance.course_id)


def connect() -> None:
    for model in MODELS:
        post_save.connect(_changed, sender=model, dispatch_uid=f"course-calendar-{model.__name__}")
        post_delete.connect(
            _changed, sender=model, dispatch_uid=f"course-calendar-del-{model.__name__}"
        )
