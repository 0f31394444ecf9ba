"""Today items: the group's checkoff bookings this week."""

from __future__ import annotations

import datetime as dt

from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse

from apps.checkoffs.models import Booking
from apps.core.compiled import compiled_query
from apps.core.models import Course, Role
from apps.core.registry import TodayItem
from apps.groups.selectors import current_group_id

WEEK = dt.timedelta(days=7)


def bookings(request: HttpRequest, course: Course, role: Role, now: dt.datetime) -> list[TodayItem]:
    memo = request.__dict__.setdefault("_memo", {})  # shared with the dashboard's panels
    group_id = current_group_id(course=course, user=request.user, memo=memo)  # type: ignore[arg-type]
    if group_id is None:
        return []
    url = reverse("checkoffs:page", kwargs={"code": course.code})
    return [
        TodayItem(
            kind="booking",
            title=f"{b.set.title} — {b.group.name}",
            url=url,
            when=b.slot.starts_at,
            detail=f"At {b.slot.location}; cancel up to the cut-off if plans change.",
            urgent=b.slot.starts_at - now < dt.timedelta(days=1),
        )
        for b in compiled_query("checkoffs.today.bookings", _bookings, group_id, now, now + WEEK)
    ]


def _bookings(group_id: int, after: dt.datetime, until: dt.datetime) -> QuerySet[Booking]:
    return (
        Booking.objects.filter(
            group_id=group_id,
            cancelled_at__isnull=True,
            slot__starts_at__gt=after,
            slot__starts_at__lte=until,
        )
        .select_related("slot", "set", "group")
        .order_by("slot__starts_at")
    )
