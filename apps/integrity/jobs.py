"""Similarity checks on the staff status page, and their sweeper: a check that has not
reported progress for `LEASE` lost its worker and ends failed with the reason (upload again)."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from apps.core.jobs import Job
from apps.integrity.models import SimilarityCheck

LEASE = dt.timedelta(minutes=10)


def sweep(now: dt.datetime) -> list[str]:
    n = SimilarityCheck.objects.filter(
        status__in=SimilarityCheck.IN_PROGRESS, updated_at__lt=now - LEASE
    ).update(
        status=SimilarityCheck.Status.FAILED,
        note="No worker moved this check for 10 minutes (its worker stopped, or none is "
        "running); upload again.",
    )
    return [f"{n} similarity check(s) failed: worker gone"] if n else []


def listed(course_id: int | None) -> list[Job]:
    rows = SimilarityCheck.objects.filter(status__in=SimilarityCheck.IN_PROGRESS).select_related(
        "course"
    )
    if course_id is not None:
        rows = rows.filter(course_id=course_id)
    now = timezone.now()
    return [
        Job(
            "similarity check",
            f"{c.course.code} {c.title}",
            "stuck" if now - c.updated_at > LEASE else c.status,
            c.updated_at,
            f"{c.progress} %",
            f"/c/{c.course.code}/integrity/{c.pk}/",
        )
        for c in rows
    ]
