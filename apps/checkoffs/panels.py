"""Dashboard panels: a student's group's next checkoffs and the sign-ups it has not booked yet;
staff, today's checkoffs (theirs and everyone's) with the way to the schedule."""

from __future__ import annotations

import datetime as dt
from typing import Any, cast

from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.http import HttpRequest
from django.utils import timezone

from apps.checkoffs.models import HOLDS, Booking, CheckoffSet, CheckoffSlot
from apps.core.models import Course, Role, User
from apps.groups.selectors import current_group_id


def student_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    """One query: the published sign-ups, each with the group's booked slot (if any) and whether
    an open future slot is left; split here into the next checkoffs and the ones to book."""
    now = timezone.now()
    memo = request.__dict__.setdefault("_memo", {})
    gid = current_group_id(course=course, user=cast(User, request.user), memo=memo)
    if gid is None:  # no group, nothing to book
        return {"upcoming": [], "to_book": []}
    held = Booking.objects.filter(HOLDS, set=OuterRef("pk"), group_id=gid).order_by(
        "slot__starts_at"
    )
    cutoff = now + dt.timedelta(hours=course.checkoff_cutoff_hours)
    open_slot = CheckoffSlot.objects.filter(
        set=OuterRef("pk"), starts_at__gt=cutoff, booked__lt=F("capacity")
    )
    sets = list(CheckoffSet.objects.filter(course=course, published_at__isnull=False)
                .annotate(held_start=Subquery(held.values("slot__starts_at")[:1]),
                          held_place=Subquery(held.values("slot__location")[:1]), can_book=Exists(open_slot))
                .filter(Q(held_start__gte=now - dt.timedelta(hours=1)) | Q(held_start__isnull=True, can_book=True))
                .order_by("book_by", "pk")[:20])  # fmt: skip
    upcoming = sorted((x for x in sets if x.held_start), key=lambda x: x.held_start)[:3]
    return {"upcoming": upcoming, "to_book": [x for x in sets if not x.held_start][:3]}


def staff_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    now = timezone.now().astimezone(course.tz)
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    today = CheckoffSlot.objects.filter(set__course=course, starts_at__gte=start, starts_at__lt=start + dt.timedelta(days=1),
                                        booked__gt=0).aggregate(all=Count("id"), mine=Count("id", filter=Q(staff=cast(User, request.user))))  # fmt: skip
    return {"today_all": today["all"], "today_mine": today["mine"], "date": start.date()}
