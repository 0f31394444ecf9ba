"""Cloud jobs on the staff Jobs page, and taken over when their worker died (apps.core.jobs).

A running job whose lease ran out goes back to the queue (it is idempotent); a queued job
whose message was lost (the broker was down when it was queued, or a retry's countdown died
with its worker) is sent again once it is due and a minute old."""

from __future__ import annotations

import datetime as dt

from django.db.models import Q
from django.urls import reverse

from apps.compute.models import CloudOp
from apps.core.jobs import Job
from apps.core.queue import broker_errors, task_named


def sweep(now: dt.datetime) -> list[str]:
    out = []
    stale = CloudOp.objects.filter(status=CloudOp.Status.RUNNING, lease_until__lt=now)
    for op in stale.select_related("course"):
        # Back to the queue, unless a newer request for the same thing is already waiting.
        if CloudOp.objects.filter(
            course_id=op.course_id, target=op.target, status=CloudOp.Status.QUEUED
        ).exists():
            CloudOp.objects.filter(pk=op.pk).update(
                status=CloudOp.Status.DONE, reason="worker died; a newer job took over"
            )
            continue
        CloudOp.objects.filter(pk=op.pk, status=CloudOp.Status.RUNNING).update(
            status=CloudOp.Status.QUEUED, lease_until=None, reason="worker died; taken over"
        )
        out.append(f"cloud job #{op.pk} ({op.target}) taken over")
    lost = CloudOp.objects.filter(
        status=CloudOp.Status.QUEUED, created_at__lt=now - dt.timedelta(minutes=1)
    ).filter(Q(not_before__isnull=True) | Q(not_before__lt=now - dt.timedelta(seconds=30)))
    for pk in lost.values_list("pk", flat=True)[:200]:
        try:
            task_named("compute.run_cloud_op").delay(pk)
        except broker_errors():
            break
        out.append(f"cloud job #{pk} sent again")
    return out


def listed(course_id: int | None) -> list[Job]:
    qs = CloudOp.objects.filter(
        Q(status__in=(CloudOp.Status.QUEUED, CloudOp.Status.RUNNING))
        | Q(status=CloudOp.Status.FAILED)
    ).select_related("course", "node")
    if course_id is not None:
        qs = qs.filter(course_id=course_id)
    out = []
    for op in qs.order_by("-created_at")[:100]:
        what = op.node.name if op.node else "firewall rules"
        out.append(
            Job(
                kind=f"cloud: {op.get_kind_display().lower()}",
                label=f"#{op.pk} {what}",
                status=op.status,
                since=op.created_at,
                detail=op.reason or op.why,
                url=reverse("compute:cloud-job", kwargs={"code": op.course.code, "op_id": op.pk}),
            )
        )
    return out
