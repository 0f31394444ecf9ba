"""Today items: the group's tracked milestones due this week and not yet recorded."""

from __future__ import annotations

import datetime as dt

from django.http import HttpRequest
from django.urls import reverse

from apps.calendar.cache import course_calendar
from apps.core.models import Course, Role
from apps.core.registry import TodayItem
from apps.groups.selectors import current_group_id
from apps.milestones import rules
from apps.milestones.sources import group_records, record_status

WEEK = dt.timedelta(days=7)


def due(request: HttpRequest, course: Course, role: Role, now: dt.datetime) -> list[TodayItem]:
    """The group's tracked milestones due this week (its extension applied) and not recorded:
    the milestones from the course's cached calendar, the group's records shared with the
    dashboard's deadlines (one query between them)."""
    memo = request.__dict__.setdefault("_memo", {})
    gid = current_group_id(course=course, user=request.user, memo=memo)  # type: ignore[arg-type]
    if gid is None:
        return []
    records = group_records(course.pk, gid, memo)
    url = reverse("milestones:page", kwargs={"code": course.code})
    out = []
    for m in course_calendar(course).milestones:
        if not m.tracked:
            continue
        status, ext = record_status(m, records.get(m.pk, {}))
        due_at = rules.group_due(m.due_at, ext)
        if status == rules.Status.NOT_SUBMITTED and now < due_at <= now + WEEK:
            out.append(
                TodayItem(
                    kind="milestone",
                    title=m.name,
                    url=url,
                    when=due_at,
                    detail="Any member records the link once for the whole group.",
                    urgent=due_at - now < dt.timedelta(days=1),
                    subject=f"milestone:{m.key}",
                )
            )
    return out
