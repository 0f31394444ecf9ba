"""Today items: the group's tracked milestones due this week and not yet recorded."""

from __future__ import annotations

import datetime as dt

from django.http import HttpRequest
from django.urls import reverse

from apps.core.models import Course, Role
from apps.core.registry import TodayItem
from apps.milestones import rules
from apps.milestones.selectors import cells_for_groups, group_of

WEEK = dt.timedelta(days=7)


def due(request: HttpRequest, course: Course, role: Role, now: dt.datetime) -> list[TodayItem]:
    group = group_of(course=course, user=request.user)  # type: ignore[arg-type]
    if group is None:
        return []
    url = reverse("milestones:page", kwargs={"code": course.code})
    return [
        TodayItem(
            kind="milestone",
            title=c.milestone.name,
            url=url,
            when=c.due,
            detail=f"{group.name} records the link once for the group.",
            urgent=c.due - now < dt.timedelta(days=1),
            subject=f"milestone:{c.milestone.key}",
        )
        for c in cells_for_groups(course=course, groups=[group])[group.pk]
        if c.status == rules.Status.NOT_SUBMITTED and now < c.due <= now + WEEK
    ]
