"""The demo's live term: the course's dates moved so that today falls in its seventh week.

`make run` loads the real EE 290 course file (Spring 2026) and then the demo; visited later,
every deadline would be over (no slack day to spend, no lecture to come). `load_demo` therefore
moves the demo database's calendar — lectures, events, releases, deadlines, milestones, lab
windows, recess days — by whole weeks, in course time (a 23:59 deadline stays 23:59 across
daylight saving), before it adds its people and their activity. The course file on disk is
untouched, and `load_course` alone (a real deployment) keeps the real dates.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.calendar.cache import forget
from apps.calendar.models import Assignment, CourseEvent, Lecture, Milestone, RecessDay
from apps.core.models import Course
from apps.labs.models import CourseLab

# The demo visitor arrives in week 7 of lectures (week 1 holds the first lecture): A1 and A2 are
# past, A3 (due on the Tuesday of week 8) is 2 to 8 days away whatever the weekday, the proposal
# drafts are in and the project is under way.
WEEK = 7


def weeks_to_today(course: Course, *, today: dt.date | None = None, week: int = WEEK) -> int:
    """How many whole weeks to move the course so that `today` is in its week `week` (week 1
    is the week of the first lecture)."""
    first = Lecture.objects.filter(course=course).order_by("starts_at").first()
    if first is None:
        return 0
    today = today or timezone.localdate(timezone=course.tz)
    start = first.starts_at.astimezone(course.tz).date()
    monday = start - dt.timedelta(days=start.weekday())
    target = today - dt.timedelta(days=today.weekday()) - dt.timedelta(weeks=week - 1)
    return (target - monday).days // 7


DEMO_MARK = " (demo dates)"


def term_label(term: str, shift_days: int) -> str:
    """The course's term as the file names it, marked when the demo moved its dates."""
    base = term.removesuffix(DEMO_MARK)
    return f"{base}{DEMO_MARK}"[:40] if shift_days else base


def shift_found(course: Course, first_lecture: dt.date | None) -> int:
    """The days a demo moved `course`, for a database that moved them before the shift was
    recorded (its term carries the mark): the first lecture's date now against the file's."""
    if DEMO_MARK not in course.term or first_lecture is None:
        return course.calendar_shift_days
    first = Lecture.objects.filter(course=course).order_by("starts_at").first()
    if first is None:
        return 0
    return (first.starts_at.astimezone(course.tz).date() - first_lecture).days


def moved(instant: dt.datetime, days: int, tz: dt.tzinfo) -> dt.datetime:
    """The same wall-clock time in the course's zone `tz`, `days` later."""
    if not days:
        return instant
    local = instant.astimezone(tz)
    naive = local.replace(tzinfo=None) + dt.timedelta(days=days)
    return naive.replace(tzinfo=tz).astimezone(dt.UTC)


def move_term(course: Course, weeks: int) -> int:
    """Move every calendar row of the course by `weeks`; returns how many rows moved."""
    if weeks == 0:
        return 0
    days = weeks * 7
    count = 0
    with transaction.atomic():
        tables: list[tuple[Any, tuple[str, ...]]] = [
            (Lecture, ("starts_at", "ends_at")),
            (CourseEvent, ("starts_at", "ends_at")),
            (Assignment, ("release_at", "due_at")),
            (Milestone, ("due_at",)),
            (CourseLab, ("opens_at", "closes_at")),
        ]
        for model, fields in tables:
            rows = list(model.objects.filter(course=course))
            for row in rows:
                for f in fields:
                    value = getattr(row, f)
                    if value is not None:
                        setattr(row, f, moved(value, days, course.tz))
            model.objects.bulk_update(rows, list(fields))
            count += len(rows)
        for r in RecessDay.objects.filter(course=course):
            r.date += dt.timedelta(days=days)
            r.save(update_fields=["date"])
            count += 1
        course.calendar_shift_days += days
        course.term = term_label(course.term, course.calendar_shift_days)
        course.save(update_fields=["term", "calendar_shift_days"])
        forget(course.pk)
    return count
