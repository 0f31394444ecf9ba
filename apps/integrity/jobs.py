"""Similarity checks on the staff status page, and their sweeper (apps.core.jobs), the same
pattern as the autograder's uploads: a *running* check whose worker stopped renewing its lease
is queued again (comparing twice is harmless: the worker that was taken over from stores
nothing), and fails, saying so, after `JOB_TAKEOVERS_MAX` takeovers. A *queued* check is only
waiting its turn (one queue, shared with grading passes): it is never failed; once it has
waited `RESEND_AFTER`, its task is sent again, in case the message was lost (a second delivery
of a check already taken does nothing)."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from apps.core.jobs import Job
from apps.core.queue import broker_errors, task_named
from apps.integrity.models import SimilarityCheck
from apps.integrity.services import LEASE

RESEND_AFTER = dt.timedelta(minutes=30)


def _lease_ran_out(now: dt.datetime) -> Q:
    # a check claimed before leases existed has none: its last progress stands in for it
    return Q(lease_until__lt=now) | Q(lease_until__isnull=True, updated_at__lt=now - LEASE)


def sweep(now: dt.datetime) -> list[str]:
    out = []
    stale = SimilarityCheck.objects.filter(status=SimilarityCheck.Status.RUNNING).filter(
        _lease_ran_out(now)
    )
    for check in stale.only("pk", "takeovers"):
        mine = SimilarityCheck.objects.filter(
            pk=check.pk, status=SimilarityCheck.Status.RUNNING, takeovers=check.takeovers
        )
        if check.takeovers + 1 >= settings.JOB_TAKEOVERS_MAX:
            n = mine.update(
                status=SimilarityCheck.Status.FAILED,
                lease_until=None,
                takeovers=F("takeovers") + 1,
                note=f"A worker stopped while comparing this check {check.takeovers + 1} "
                "times (out of memory or killed?); nothing was stored. Upload again, or split "
                "the assignment's files into smaller checks.",
            )
            if n:
                out.append(f"similarity check {check.pk} failed: its worker stopped")
            continue
        n = mine.update(
            status=SimilarityCheck.Status.QUEUED,
            lease_until=None,
            progress=0,
            takeovers=F("takeovers") + 1,
        )
        if n:
            out.append(f"similarity check {check.pk} queued again: its worker stopped")
            _send(check.pk)
    waiting = SimilarityCheck.objects.filter(
        status=SimilarityCheck.Status.QUEUED, updated_at__lt=now - RESEND_AFTER
    )
    for pk in waiting.values_list("pk", flat=True)[:200]:
        if not _send(pk):
            break
        SimilarityCheck.objects.filter(pk=pk, status=SimilarityCheck.Status.QUEUED).update(
            updated_at=now
        )
        out.append(f"similarity check {pk} sent again after waiting {RESEND_AFTER}")
    return out


def _send(check_id: int) -> bool:
    try:
        task_named("integrity.similarity").delay(check_id)
    except broker_errors():
        return False  # still queued: sent again at the next sweep
    return True


def listed(course_id: int | None) -> list[Job]:
    rows = SimilarityCheck.objects.filter(status__in=SimilarityCheck.IN_PROGRESS).select_related(
        "course"
    )
    if course_id is not None:
        rows = rows.filter(course_id=course_id)
    now = timezone.now()
    out = []
    for c in rows:
        stuck = c.status == SimilarityCheck.Status.RUNNING and (
            (c.lease_until or c.updated_at + LEASE) < now
        )
        out.append(
            Job(
                "similarity check",
                f"{c.course.code} {c.title}",
                "stuck" if stuck else c.status,
                c.updated_at,
                f"{c.progress} %",
                f"/c/{c.course.code}/integrity/{c.pk}/",
            )
        )
    return out
