"""Thin Celery tasks for usage, run by beat: quotas and schedules per group (`quotas`,
`schedules`, `silence`; `CELERY_BEAT_SCHEDULE["usage-rules"]`), idle nodes and the budget."""

from __future__ import annotations

import logging

from celery import shared_task

log = logging.getLogger(__name__)


@shared_task(name="compute.usage_rules")
def usage_rules_run() -> int:
    """Beat, every 5 minutes: for every course with nodes, the night's shutdown when due, each
    group's quota (warn, stop) and silent nodes (unknown). Returns how many things it did; safe
    to run twice or on two beats (each step claims a unique row before it acts)."""
    from apps.compute.models import Node
    from apps.compute.usage.quotas import quota_enforce
    from apps.compute.usage.schedules import shutdown_run
    from apps.compute.usage.silence import silence_check
    from apps.core.models import Course

    done = 0
    for course in Course.objects.filter(pk__in=Node.objects.values("course_id")):
        for step in (shutdown_run, quota_enforce, silence_check):
            try:
                done += len(step(course))
            except Exception:  # one course's fault must not starve the others
                log.exception("%s of %s", step.__name__, course.code)
    return done


@shared_task(name="compute.watch_usage")
def watch_usage() -> int:
    """Beat: idle nodes (e-mail, stop if the course says so) and budget thresholds. Returns how
    many nodes were reported idle."""
    from apps.compute.models import Node
    from apps.compute.usage.metering import budget_alert, idle_check
    from apps.core.models import Course

    told = 0
    for course in Course.objects.filter(pk__in=Node.objects.values("course_id")):
        told += len(idle_check(course))
        budget_alert(course)
    return told
