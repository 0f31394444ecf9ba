"""Dashboard panels: a student's group's next checkoffs and the sign-ups it has not booked yet;
staff, today's checkoffs (theirs and everyone's) with the way to the schedule."""

from __future__ import annotations

import datetime as dt
from typing import Any, cast

from django.db.models import Count, Q
from django.http import HttpRequest
from django.utils import timezone

from apps.checkoffs.models import CheckoffSlot
from apps.checkoffs.selectors import group_signups
from apps.core.models import Course, Role, User
from apps.groups.selectors import current_group_id


def student_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    """The group's next checkoffs and the published sign-ups it has not booked while a future
    slot is open (`group_signups`: two plain queries, shared with the calendar's book-by
    deadlines; one correlated query cost the page more Python than both)."""
    now = timezone.now()
    memo = request.__dict__.setdefault("_memo", {})
    gid = current_group_id(course=course, user=cast(User, request.user), memo=memo)
    if gid is None:  # no group, nothing to book
        return {"upcoming": [], "to_book": []}
    sets, held = group_signups(course=course, group_id=gid, memo=memo)
    upcoming, to_book = [], []
    for s in sets:
        if s.pk in held:
            s.held_start, s.held_place = held[s.pk]  # type: ignore[attr-defined]
            if s.held_start >= now - dt.timedelta(hours=1):  # type: ignore[attr-defined]
                upcoming.append(s)
        elif s.can_book:  # type: ignore[attr-defined]
            to_book.append(s)
    upcoming.sort(key=lambda x: x.held_start)  # type: ignore[attr-defined]
    return {"upcoming": upcoming[:3], "to_book": to_book[:3]}


def staff_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    now = timezone.now().astimezone(course.tz)
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    today = CheckoffSlot.objects.filter(
        set__course=course,
        starts_at__gte=start,
        starts_at__lt=start + dt.timedelta(days=1),
        booked__gt=0,
    ).aggregate(all=Count("id"), mine=Count("id", filter=Q(staff=cast(User, request.user))))
    return {"today_all": today["all"], "today_mine": today["mine"], "date": start.date()}
