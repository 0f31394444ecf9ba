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


@shared_task(name="compute.notify_window_closed")
def notify_window_closed(window_id: int, ended_group_id: int) -> int:
    """E-mail the current members of every other group in a window that closed because a group
    ended. Returns how many were e-mailed; safe to run twice (it only sends mail)."""
    from apps.compute.models import SharingWindow
    from apps.groups.models import GroupMembership

    window = (
        SharingWindow.objects.select_related("course", "requester").filter(pk=window_id).first()
    )
    if window is None:
        return 0
    groups = {window.requester_id, *window.nodes.values_list("owner_id", flat=True)}
    groups.discard(ended_group_id)
    to = sorted(
        set(
            GroupMembership.objects.filter(group_id__in=groups, left_at__isnull=True).values_list(
                "user__email", flat=True
            )
        )
    )
    if not to:
        return 0
    course = window.course
    send_mail(
        f"[{course.code}] Sharing window #{window.pk} is {window.get_status_display().lower()}",
        f"Window #{window.pk} ({window.purpose or 'multi-node run'}) is now "
        f"{window.get_status_display().lower()}: {window.note}\n"
        f"Request a new one on your node page: {settings.SITE_URL}/c/{course.code}/node/\n",
        None,
        to,
    )
    return len(to)
