"""Today items: a lab whose window closes this week with steps the student has not submitted."""

from __future__ import annotations

import datetime as dt

from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.urls import reverse

from apps.core.compiled import compiled_query
from apps.core.models import Course, Role
from apps.core.registry import TodayItem
from apps.labs.labfile import shipped
from apps.labs.models import CourseLab, StepRecord

WEEK = dt.timedelta(days=7)


def _closing(
    course_id: int, opened_by: dt.datetime, after: dt.datetime, until: dt.datetime
) -> QuerySet[CourseLab]:
    """Lab windows opened by `opened_by` that close in (`after`, `until`]: now is given twice,
    since a compiled query's argument reaches the SQL once."""
    return CourseLab.objects.filter(
        course_id=course_id, opens_at__lte=opened_by, closes_at__gt=after, closes_at__lte=until
    )


def open_labs(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    labs = shipped()
    windows = [
        w
        for w in compiled_query("labs.today.windows", _closing, course.pk, now, now, now + WEEK)
        if w.lab_key in labs
    ]
    if not windows:
        return []
    done: dict[str, int] = dict(
        StepRecord.objects.filter(
            record__course=course,
            record__student=request.user,  # type: ignore[misc]
            submitted_at__isnull=False,
        )
        .values_list("record__lab_key")
        .annotate(n=Count("id"))
    )
    out = []
    for w in windows:
        lab, n = labs[w.lab_key], done.get(w.lab_key, 0)
        if n < len(lab.steps):
            out.append(
                TodayItem(
                    kind="lab",
                    title=f"{lab.title}: {n} of {len(lab.steps)} steps done",
                    url=reverse("labs:lab", kwargs={"code": course.code, "lab": lab.key}),
                    when=w.closes_at,
                    detail="Predictions and reflections close then; the lab stays readable.",
                    urgent=w.closes_at - now < dt.timedelta(days=1),
                )
            )
    return out
