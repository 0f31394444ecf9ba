"""Today items for staff: question proposals waiting for a review."""

from __future__ import annotations

import datetime as dt

from django.http import HttpRequest
from django.urls import reverse

from apps.contributions.models import QuestionProposal
from apps.core.models import Course, Role
from apps.core.registry import TodayItem


def to_review(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    n = QuestionProposal.objects.filter(course=course, status="proposed").count()
    if not n:
        return []
    return [
        TodayItem(
            kind="decide",
            title=f"{n} contributed question(s) to review",
            url=reverse("contributions:page", kwargs={"code": course.code}),
        )
    ]
