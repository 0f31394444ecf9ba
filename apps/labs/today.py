"""Today items: a lab whose window closes this week with steps the student has not submitted."""

from __future__ import annotations

import datetime as dt

from django.db.models import Count
from django.http import HttpRequest
from django.urls import reverse

from apps.core.models import Course, Role
from apps.core.registry import TodayItem
from apps.core.versions import cached, course_version
from apps.labs.labfile import shipped
from apps.labs.models import CourseLab, StepRecord

WEEK = dt.timedelta(days=7)


def _windows(course: Course) -> list[CourseLab]:
    """The course's lab windows, from the course file: cached under the course's version,
    which every save of a window (and the term moved) drops."""
    return cached(
        course_version(course.pk),
        "lab-windows",
        lambda: list(CourseLab.objects.filter(course=course).order_by("opens_at", "lab_key")),
        course,
    )


def open_labs(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    labs = shipped()
    windows = [
        w
        for w in _windows(course)
        if w.lab_key in labs and w.opens_at <= now < w.closes_at <= now + WEEK
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
