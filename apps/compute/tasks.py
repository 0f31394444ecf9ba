"""Thin Celery tasks for compute."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.core.mail import send_mail

from apps.compute.models import Incident
from apps.core.models import STAFF_ROLES, Membership


@shared_task(name="compute.notify_staff_of_incident")
def notify_staff_of_incident(incident_id: int) -> int:
    """Email the course's active instructors and TAs about a new incident. Returns how many
    were emailed; safe to run twice (it only sends mail)."""
    incident = (
        Incident.objects.select_related("course", "node", "group", "reported_by")
        .filter(pk=incident_id)
        .first()
    )
    if incident is None:
        return 0
    to = list(
        Membership.objects.filter(
            course=incident.course, role__in=STAFF_ROLES, is_active=True
        ).values_list("user__email", flat=True)
    )
    if not to:
        return 0
    who = (
        f"{incident.reported_by} ({incident.group.name})"
        if incident.group
        else str(incident.reported_by)
    )
    body = (
        f"{who} reported a problem on {incident.node.name}.\n\n"
        f"What: {incident.summary}\nWhen: {incident.occurred_at.isoformat()}\n"
        f"Job IDs: {incident.job_ids or '-'}\n\nRepro:\n{incident.repro or '-'}\n\n"
        f"Logs: {len(incident.logs):,} characters attached in courseops.\n"
        f"{settings.SITE_URL}/c/{incident.course.code}/incidents/\n"
    )
    send_mail(
        f"[{incident.course.code}] Incident #{incident.pk} on {incident.node.name}: "
        f"{incident.summary}",
        body,
        None,
        to,
    )
    return len(to)
