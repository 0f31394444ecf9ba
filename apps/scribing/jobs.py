"""Scribing's background job (a large course's solve) for the status page, and its sweeper:
a solve still "solving" long after any solve could take (`SOLVE_LEASE`) lost its worker; it
ends as failed with the reason on the board, where "Solve" starts it again."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from apps.core.jobs import Job
from apps.scribing.models import ScribePlan

SOLVE_LEASE = dt.timedelta(minutes=10)  # 2,000 students solve in about 20 s


def sweep(now: dt.datetime) -> list[str]:
    stale = ScribePlan.objects.filter(solve_status="solving", updated_at__lt=now - SOLVE_LEASE)
    out = []
    for plan in stale:
        n = ScribePlan.objects.filter(pk=plan.pk, solve_status="solving").update(
            solve_status="failed",
            solved_at=now,
            proposal=[],
            proposal_reasons=["The solve did not finish: its worker stopped. Solve again."],
        )
        if n:
            out.append(f"course {plan.course_id}: solve failed (worker gone)")
    return out


def listed(course_id: int | None) -> list[Job]:
    plans = ScribePlan.objects.filter(solve_status="solving").select_related("course")
    if course_id is not None:
        plans = plans.filter(course_id=course_id)
    now = timezone.now()
    return [
        Job(
            "scribing solve",
            f"{p.course.code} scribe assignment",
            "stuck" if now - p.updated_at > SOLVE_LEASE else "running",
            p.updated_at,
            "",
            f"/c/{p.course.code}/scribing/",
        )
        for p in plans
    ]
