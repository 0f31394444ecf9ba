"""Writes for incident reports. Reporting queues an email to the course staff after commit."""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.utils import timezone

from apps.compute.models import MAX_LOG_BYTES, Allocation, Incident, Node, WindowNode
from apps.compute.selectors import group_id_of
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_member, is_staff
from apps.core.queue import enqueue_on_commit
from apps.core.services import audit_record

NEXT = {
    Incident.Status.OPEN: {Incident.Status.ACKNOWLEDGED, Incident.Status.RESOLVED},
    Incident.Status.ACKNOWLEDGED: {Incident.Status.RESOLVED},
    Incident.Status.RESOLVED: set(),
}


def _nodes_for_group(course: Course, group_id: int) -> set[int]:
    own = set(
        Allocation.objects.filter(
            course=course, group_id=group_id, ended_at__isnull=True
        ).values_list("node_id", flat=True)
    )
    shared = set(
        WindowNode.objects.filter(
            window__course=course, active=True, window__nodes__owner_id=group_id
        ).values_list("node_id", flat=True)
    )
    return own | shared


def incident_report(
    *,
    actor: User,
    course: Course,
    node_id: int,
    occurred_at: dt.datetime,
    summary: str,
    job_ids: str = "",
    logs: str = "",
    repro: str = "",
) -> Incident:
    """A student reports on their group's node (or one shared with it); staff on any node."""
    if not is_member(actor, course):
        raise NotAllowed("Only members of the course report incidents.")
    if not summary.strip():
        raise DomainError("Say in one line what went wrong.", field="summary")
    if len(logs.encode()) > MAX_LOG_BYTES:
        raise DomainError("Logs are at most 1 MB; keep the lines around the error.", field="logs")
    if occurred_at > timezone.now() + dt.timedelta(minutes=5):
        raise DomainError("That time is in the future.", field="occurred_at")
    node = Node.objects.filter(course=course, pk=node_id).first()
    if node is None:
        raise NotFound("No such node in this course.", field="node")
    staff = is_staff(actor, course)
    gid = None if staff else group_id_of(user=actor, course=course)
    if not staff and (gid is None or node.pk not in _nodes_for_group(course, gid)):
        raise NotAllowed("You can report only on your group's node or one shared with it.")
    with transaction.atomic():
        incident = Incident.objects.create(
            course=course,
            node=node,
            group_id=gid,
            reported_by=actor,
            occurred_at=occurred_at,
            summary=summary.strip()[:200],
            job_ids=job_ids[:500],
            logs=logs,
            repro=repro,
        )
        audit_record(
            actor=actor,
            action="incident.reported",
            course=course,
            obj=incident,
            after={"node": node.name, "summary": incident.summary},
        )
        from apps.compute.tasks import notify_staff_of_incident

        enqueue_on_commit(
            lambda: notify_staff_of_incident.delay(incident.pk),
            what="the staff notification for this incident",
            critical=False,
        )
    return incident


def incident_update(
    *, actor: User, course: Course, incident_id: int, status: str, note: str = ""
) -> Incident:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course staff update incidents.")
    with transaction.atomic():
        incident = (
            Incident.objects.select_for_update().filter(course=course, pk=incident_id).first()
        )
        if incident is None:
            raise NotFound("No such incident in this course.")
        before = incident.status
        if status != before and status not in NEXT[Incident.Status(before)]:
            raise Conflict(f"An incident that is {before} cannot become {status}.")
        incident.status = status
        if note.strip():
            stamp = timezone.now().strftime("%Y-%m-%d %H:%M UTC")
            incident.staff_notes = (
                incident.staff_notes + f"\n[{stamp}, {actor}] {note.strip()}"
            ).strip()
        incident.save(update_fields=["status", "staff_notes", "updated_at"])
        audit_record(
            actor=actor,
            action="incident.updated",
            course=course,
            obj=incident,
            before={"status": before},
            after={"status": status, "note": note},
        )
    return incident
