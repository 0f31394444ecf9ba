from __future__ import annotations

import datetime as dt
import zoneinfo
from typing import Any

from django.http import HttpRequest
from django.utils import timezone

from apps.calendar.cache import course_calendar
from apps.calendar.models import CourseEvent
from apps.calendar.selectors import deadline_list, lecture_upcoming
from apps.core.models import Course, Role


def deadlines_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    """Upcoming assignments and milestones in the tables, today's marked; past ones folded. A
    student's tables fold too: their next 7 days are Today's list, so A3 is not listed twice."""
    memo = request.__dict__.setdefault("_memo", {})  # shared by the panels of this page
    deadlines = deadline_list(course=course, user=request.user, memo=memo)  # type: ignore[arg-type]
    upcoming = [d for d in deadlines if not d.is_past]
    zone = zoneinfo.ZoneInfo(course.timezone)
    today = timezone.now().astimezone(zone).date()

    def rows(kind: str) -> list[dict[str, Any]]:
        return [
            {"d": d, "today": d.due_at.astimezone(zone).date() == today}
            for d in upcoming
            if d.kind == kind
        ]

    return {
        "assignments": rows("assignment"),
        "milestones": rows("milestone"),
        "past": [d for d in deadlines if d.is_past][::-1],
        "next_deadline": upcoming[0] if upcoming else None,
        "folded": role == Role.STUDENT and bool(upcoming),  # nothing ahead: nothing repeated
        "ahead": len(upcoming),
    }


def lectures_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    return {"lectures": lecture_upcoming(course=course)}


def week_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    """What is due in the next 7 days for this person (effective deadlines for a student)."""
    memo = request.__dict__.setdefault("_memo", {})
    now = timezone.now()
    soon = now + dt.timedelta(days=7)
    deadlines = deadline_list(course=course, user=request.user, memo=memo)  # type: ignore[arg-type]
    return {"due": [d for d in deadlines if now < d.due_at <= soon]}


def about_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    """Who teaches, when and where lectures and office hours are, and the course's links."""
    now = timezone.now()
    # The next office hours; after the term, the first ones (still says when they were).
    hours = [e for e in course_calendar(course).events if e.kind == CourseEvent.Kind.OFFICE_HOURS]
    office = next((e for e in hours if e.ends_at >= now), hours[0] if hours else None)
    office_text = ""
    if office is not None:
        s, e = office.starts_at.astimezone(course.tz), office.ends_at.astimezone(course.tz)
        office_text = (
            f"{s:%A}s, {s:%I:%M %p}".replace(" 0", " ").lstrip("0")
            + f"–{e:%I:%M %p} {e.tzname()}".replace("–0", "–")
            + (f" · {office.location}" if office.location else "")
        )
    return {
        "instructors": [n.strip() for n in course.instructors.split(",") if n.strip()],
        "office": office,
        "office_text": office_text,
        "links": course.links or [],
    }
