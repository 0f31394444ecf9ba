"""Today items of quotas and schedules: a student's group near or over its GPU-hour quota, and
the staff's opt-out requests to decide."""

from __future__ import annotations

import datetime as dt

from django.http import HttpRequest
from django.urls import reverse

from apps.compute.usage.quotas import standing_of
from apps.compute.usage_models import ShutdownOptOut
from apps.core.models import Course, Role
from apps.core.registry import TodayItem
from apps.groups.selectors import current_group_id


def quota(request: HttpRequest, course: Course, role: Role, now: dt.datetime) -> list[TodayItem]:
    """The group has passed its warning threshold (or used its quota) this period."""
    memo = request.__dict__.setdefault("_memo", {})  # the group id the other sources read
    group_id = current_group_id(course=course, user=request.user, memo=memo)  # type: ignore[arg-type]
    if group_id is None:
        return []
    s = standing_of(course, group_id, now)
    if s is None or s.standing not in ("warn", "over"):
        return []
    over = s.standing == "over"
    return [
        TodayItem(
            kind="quota",
            title=(
                f"GPU-hour quota used: {s.used:g} of {s.quota}"
                if over
                else f"{s.pct}% of your GPU-hours used: {s.used:g} of {s.quota}"
            ),
            url=reverse("compute:mine", kwargs={"code": course.code}) + "#quota",
            when=s.resets_at,
            detail=(
                "Your node is stopped and cannot be started until the quota resets or staff "
                "raise it."
                if over
                else "At the quota courseops stops your node; stop it when nothing runs."
            ),
            urgent=over,
        )
    ]


def opt_outs(request: HttpRequest, course: Course, role: Role, now: dt.datetime) -> list[TodayItem]:
    """Requests to keep a node running through a night, waiting on staff."""
    today = now.astimezone(course.tz).date()
    waiting = ShutdownOptOut.objects.filter(
        course=course, status=ShutdownOptOut.Status.REQUESTED, night__gte=today
    )
    n = waiting.count()
    if not n:
        return []
    return [
        TodayItem(
            kind="decide",
            title=f"{n} request(s) to skip the nightly shutdown",
            url=reverse("compute:usage", kwargs={"code": course.code}) + "#opt-outs",
            detail="Approve to keep the group's node running that night, or decline with a reason.",
            urgent=True,
        )
    ]
