"""Group suggestions a worker computes or accepts, for the status page, and their sweeper: a
suggestion that has not reported progress for `SUGGEST_LEASE` lost its worker (a block of 200
people takes a few seconds, accepting 2,000 people about ten); a computation ends failed with
the reason on its page, where "Suggest groups" starts anew, and an acceptance (one transaction,
so nothing was made) is ready to accept again with the reason."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from apps.core.jobs import Job
from apps.onboarding.models import GroupSuggestion

SUGGEST_LEASE = dt.timedelta(minutes=5)


def sweep(now: dt.datetime) -> list[str]:
    n = GroupSuggestion.objects.filter(
        status__in=GroupSuggestion.IN_PROGRESS, updated_at__lt=now - SUGGEST_LEASE
    ).update(
        status=GroupSuggestion.Status.FAILED,
        note="No worker moved this suggestion for 5 minutes (its worker stopped, or none is "
        "running); suggest again.",
    )
    out = [f"{n} group suggestion(s) failed: worker gone"] if n else []
    # A worker still inside the acceptance holds the row lock: this UPDATE waits for it and then
    # finds the row done (PostgreSQL re-checks the WHERE), so only a lost acceptance is reset.
    n = GroupSuggestion.objects.filter(
        status=GroupSuggestion.Status.ACCEPTING, updated_at__lt=now - SUGGEST_LEASE
    ).update(
        status=GroupSuggestion.Status.DONE,
        note="No worker accepted this suggestion for 5 minutes (its worker stopped, or none is "
        "running); no group was made. Accept again.",
    )
    return [*out, f"{n} group acceptance(s) reset: worker gone"] if n else out


def listed(course_id: int | None) -> list[Job]:
    rows = GroupSuggestion.objects.filter(status__in=GroupSuggestion.BUSY).select_related("course")
    if course_id is not None:
        rows = rows.filter(course_id=course_id)
    now = timezone.now()
    return [
        Job(
            "group suggestion",
            f"{s.course.code} suggested groups ({s.stats.get('people', '?')} people)",
            "stuck" if now - s.updated_at > SUGGEST_LEASE else s.status,
            s.updated_at,
            "" if s.status == GroupSuggestion.Status.ACCEPTING else f"{s.progress} %",
            f"/c/{s.course.code}/questionnaire/suggestions/",
        )
        for s in rows
    ]
