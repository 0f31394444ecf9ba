"""Today items: a student's extension requests answered this week (under the deadline they
move, by subject); staff's queue of requests waiting."""

from __future__ import annotations

import datetime as dt

from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse

from apps.core.compiled import compiled_query
from apps.core.models import Course, Role
from apps.core.registry import TodayItem
from apps.extensions.models import ExtensionRequest

WEEK = dt.timedelta(days=7)


def _decided(course_id: int, user_id: int, since: dt.datetime) -> QuerySet[ExtensionRequest]:
    return ExtensionRequest.objects.filter(
        course_id=course_id,
        student_id=user_id,
        decided_at__gte=since,
        status__in=["approved", "declined"],
    ).select_related("assignment", "milestone")


def for_student(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    out = []
    for r in compiled_query(
        "extensions.today.decided", _decided, course.pk, request.user.pk, now - WEEK
    ):
        verdict = f"approved, {r.approved_days} day(s)" if r.approved_days else "declined"
        out.append(
            TodayItem(
                kind="extension",
                title=f"Extension on {r.target_name}: {verdict}",
                url=reverse("extensions:page", kwargs={"code": course.code}),
                when=r.decided_at,
                detail=r.comment[:200],
                subject=f"assignment:{r.assignment.code}"
                if r.assignment is not None
                else f"milestone:{r.milestone.key}",  # type: ignore[union-attr]
            )
        )
    return out


def for_staff(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    n = ExtensionRequest.objects.filter(course=course, status="open").count()
    if not n:
        return []
    return [
        TodayItem(
            kind="decide",
            title=f"{n} extension request(s) waiting",
            url=reverse("extensions:page", kwargs={"code": course.code}),
            urgent=True,
        )
    ]
