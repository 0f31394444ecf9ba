"""Today items for staff: sharing windows to approve and node incidents still open."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse

from apps.compute.board.incidents import course_wide_incidents
from apps.compute.models import Incident, SharingWindow
from apps.core.compiled import compiled_query
from apps.core.models import Course, Role
from apps.core.registry import TodayItem


def decisions(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    out = []
    windows = SharingWindow.objects.filter(
        course=course, status=SharingWindow.Status.REQUESTED, ends_at__gt=now
    )
    first = windows.order_by("starts_at").values_list("starts_at", flat=True).first()
    if first is not None:
        n = windows.count()
        out.append(
            TodayItem(
                kind="decide",
                title=f"{n} sharing window(s) to approve",
                url=reverse("compute:board", kwargs={"code": course.code}) + "#pending-windows",
                when=first,
                detail="The first one starts then; decline with a reason or approve.",
                urgent=True,
            )
        )
    n = Incident.objects.filter(course=course, status=Incident.Status.OPEN).count()
    if n:
        out.append(
            TodayItem(
                kind="decide",
                title=f"{n} node incident(s) open",
                url=reverse("compute:incidents", kwargs={"code": course.code}),
                urgent=True,
            )
        )
    return out


def _course_wide_open(course_id: int) -> QuerySet[Any]:
    """The three newest open ones of `incidents.course_wide_incidents`: a compiled query's
    builder for a student's Today."""
    return course_wide_incidents(Course(pk=course_id)).exclude(status=Incident.Status.RESOLVED)[:3]


def course_wide(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    """For everyone: an open incident staff marked as affecting the course (node down …)."""
    return [
        TodayItem(
            kind="incident",
            title=f"{i.node.name}: {i.summary}",
            url=reverse("compute:incidents", kwargs={"code": course.code}) + "#course-wide",
            when=i.occurred_at,
            detail=f"{i.get_status_display()} · affects the whole course",
            urgent=True,
        )
        for i in compiled_query("compute.today.course_wide", _course_wide_open, course.pk)
    ]
