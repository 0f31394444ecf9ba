"""Thin Celery tasks for the cloud: run one job, and the beat's reconcile."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="compute.run_cloud_op")
def run_cloud_op(op_id: int) -> str:
    """Run one cloud job (apps.compute.cloud.sync.run): done, queued again with backoff, or failed
    with the cloud's reason. Safe to deliver twice: only a queued job is claimed."""
    from apps.compute.cloud.sync import run

    return run(op_id)


@shared_task(name="compute.reconcile_cloud")
def reconcile_cloud() -> int:
    """Beat: every course with nodes — statuses from the cloud, a job for whatever drifted from
    the board (keys, addresses, window rules that should start or end). Returns drift lines."""
    from apps.compute.cloud.providers.base import CloudError
    from apps.compute.cloud.sync import reconcile
    from apps.compute.models import Node
    from apps.core.models import Course

    found = 0
    for course in Course.objects.filter(pk__in=Node.objects.values("course_id")):
        try:
            found += len(reconcile(course)[1])
        except CloudError as exc:
            import logging

            logging.getLogger(__name__).warning("reconcile %s: %s", course.code, exc.reason)
    return found
