"""The autograder's background jobs as the staff status page and `/readyz` see them, and its
sweepers (apps.core.jobs): grading passes and answers uploads."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from apps.autograder import passes, uploads
from apps.autograder.models import AnswerUpload, GradingPass
from apps.core.jobs import Job

RECENT = dt.timedelta(days=7)


def _url(code: str, key: str) -> str:
    return f"/c/{code}/questions/{key}/"


def listed(course_id: int | None) -> list[Job]:
    now = timezone.now()
    out = []
    grading = GradingPass.objects.filter(
        status__in=[*GradingPass.IN_PROGRESS, GradingPass.Status.FAILED]
    ).exclude(status=GradingPass.Status.FAILED, created_at__lt=now - RECENT)
    if course_id is not None:
        grading = grading.filter(run__question_set__course_id=course_id)
    for p in grading.select_related("run__question_set__course"):
        qs = p.run.question_set
        status = "stuck" if passes.is_stuck(p, now) else p.status
        out.append(
            Job(
                "grading pass",
                f"{qs.title}: pass {p.number} ({p.chunks_done}/{p.chunks_total} chunks)",
                status,
                p.created_at,
                p.note,
                _url(qs.course.code, qs.key),
            )
        )
    files = AnswerUpload.objects.exclude(
        status__in=[AnswerUpload.Status.PREVIEWED, AnswerUpload.Status.COMMITTED]
    ).exclude(status=AnswerUpload.Status.FAILED, created_at__lt=now - RECENT)
    if course_id is not None:
        files = files.filter(question_set__course_id=course_id)
    for u in files.select_related("question_set__course").defer("data"):
        qs = u.question_set
        stuck = u.lease_until is not None and u.lease_until < now
        status = "failed" if u.status == AnswerUpload.Status.FAILED else "running"
        if u.status != AnswerUpload.Status.FAILED and u.lease_until is None:
            status = "queued"
        out.append(
            Job(
                "answers upload",
                f"{u.filename} → {qs.title}",
                "stuck" if stuck else status,
                u.created_at,
                u.error,
                _url(qs.course.code, qs.key),
            )
        )
    return out


def sweep(now: dt.datetime) -> list[str]:
    return passes.sweep(now) + uploads.sweep(now)


def took() -> list[tuple[str, float]]:
    """The last grading pass's duration (seconds), per kind."""
    p = (
        GradingPass.objects.filter(status=GradingPass.Status.DONE, started_at__isnull=False)
        .order_by("-finished_at")
        .first()
    )
    if p is None or p.finished_at is None or p.started_at is None:
        return []
    return [("grading pass", (p.finished_at - p.started_at).total_seconds())]
