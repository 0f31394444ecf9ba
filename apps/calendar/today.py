"""Today items: every assignment and milestone due for the student in the next 7 days, as a
fallback: the app that owns a deadline (slack days, milestones) says more about it and leads."""

from __future__ import annotations

import datetime as dt

from django.http import HttpRequest
from django.urls import reverse

from apps.calendar.selectors import deadline_list
from apps.core.models import Course, Role
from apps.core.registry import TodayItem

WEEK = dt.timedelta(days=7)
DONE = {"submitted", "late", "excused"}  # a milestone the group has recorded is not to do


def due_this_week(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    memo = request.__dict__.setdefault("_memo", {})  # shared with the dashboard's panels
    return [
        TodayItem(
            kind=d.kind,
            title=f"{d.code} {d.title}" if d.kind == "assignment" else d.title,
            url=d.path or reverse("calendar:calendar", kwargs={"code": course.code}),
            when=d.due_at,
            urgent=d.due_at - now < dt.timedelta(days=1),
            subject=f"{d.kind}:{d.code}",
            fallback=True,
        )
        for d in deadline_list(course=course, user=request.user, memo=memo)  # type: ignore[arg-type]
        if d.kind in ("assignment", "milestone")
        and now < d.due_at <= now + WEEK
        and d.status not in DONE
    ]
