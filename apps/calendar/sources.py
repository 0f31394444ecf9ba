"""The calendar app's own entries: lectures, recess days, course events and assignment releases.

The rows come from the course's cached calendar (`apps.calendar.cache`); `event_list` keeps
only what overlaps the asked range. Deadlines are not here: an assignment's deadline is the
student's effective one, which the
slack-days app registers; a milestone's is the group's, which the milestones app registers.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from django.urls import reverse

from apps.calendar.cache import course_calendar
from apps.calendar.registry import Event, EventQuery


def uid(kind: str, pk: int, course_code: str) -> str:
    """A stable UID: the same object keeps it through every edit."""
    return f"{kind}-{pk}@{course_code}.courseops"


def calendar_events(query: EventQuery) -> Iterable[Event]:
    if query.deadlines_only:
        return
    course = query.course
    code = course.code
    schedule = reverse("calendar:calendar", kwargs={"code": code})
    rows = course_calendar(course)
    for lec in rows.lectures:
        yield Event(
            uid=uid("lecture", lec.pk, code),
            kind="lecture",
            code=f"L{lec.number}",
            title=f"L{lec.number}. {lec.title}" + (" (guest lecture)" if lec.is_guest else ""),
            start=lec.starts_at,
            end=lec.ends_at,
            location=course.location,
            description=" · ".join(x for x in (lec.part, lec.notes) if x),
            path=schedule,
            sequence=lec.revision,
            edit_path=reverse("calendar:lecture-edit", kwargs={"code": code, "lecture_id": lec.pk})
            if query.staff
            else "",
        )
    for ev in rows.events:
        yield Event(
            uid=uid("event", ev.pk, code),
            kind=ev.kind,
            title=ev.name,
            start=ev.starts_at,
            end=ev.ends_at,
            location=ev.location,
            description=ev.notes,
            path=schedule,
            sequence=ev.revision,
            all_day=ev.all_day,
        )
    for a in rows.assignments:
        yield Event(
            uid=uid("release", a.pk, code),
            kind="release",
            code=a.code,
            title=f"{a.code} released: {a.title}",
            start=a.release_at,
            end=a.release_at + dt.timedelta(minutes=30),
            path=schedule,
            sequence=a.revision,
        )
    zone = course.tz
    for r in rows.recess:
        start = dt.datetime.combine(r.date, dt.time(0), tzinfo=zone).astimezone(dt.UTC)
        end = dt.datetime.combine(r.date + dt.timedelta(days=1), dt.time(0), tzinfo=zone)
        yield Event(
            uid=f"recess-{r.date.isoformat()}@{code}.courseops",
            kind="recess",
            title=r.note,
            start=start,
            end=end.astimezone(dt.UTC),
            all_day=True,
            path=schedule,
        )
