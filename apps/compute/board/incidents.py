"""Writes for incident reports. Reporting queues an email to the course staff after commit."""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.db.models import Case, Count, QuerySet, When
from django.utils import timezone

from apps.compute.board.selectors import group_id_of
from apps.compute.models import (
    MAX_LOG_BYTES,
    Allocation,
    Incident,
    IncidentAffected,
    Node,
    WindowNode,
)
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_member, is_staff
from apps.core.queue import enqueue_on_commit
from apps.core.services import audit_record
from apps.core.timefmt import format_instant

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
        from apps.compute.board.tasks import notify_staff_of_incident

        enqueue_on_commit(
            lambda: notify_staff_of_incident.delay(incident.pk),
            what="the staff notification for this incident",
            critical=False,
        )
    return incident


def incident_update(
    *,
    actor: User,
    course: Course,
    incident_id: int,
    status: str,
    note: str = "",
    course_wide: bool | None = None,
) -> Incident:
    """Staff move an incident on, add a note, and say whether it affects the whole course
    (`course_wide`: then every student sees its summary, node, status and notes)."""
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
        wide_before = incident.course_wide
        if course_wide is not None:
            incident.course_wide = course_wide
        if note.strip():
            # Stamped in course time, zone named: the note is read by students in that zone.
            stamp = format_instant(timezone.now(), course.timezone)
            incident.staff_notes = (
                incident.staff_notes + f"\n[{stamp}, {actor}] {note.strip()}"
            ).strip()
        incident.save(update_fields=["status", "staff_notes", "course_wide", "updated_at"])
        audit_record(
            actor=actor,
            action="incident.updated",
            course=course,
            obj=incident,
            before={"status": before, "course_wide": wide_before},
            after={"status": status, "note": note, "course_wide": incident.course_wide},
        )
    return incident


def course_wide_incidents(course: Course) -> QuerySet[Incident]:
    """Incidents staff marked as affecting the course, open ones first, newest first, with how
    many groups said "affects us too". Callers show only the public fields (`PUBLIC_FIELDS`)."""
    return (
        Incident.objects.filter(course=course, course_wide=True)
        .select_related("node")
        .annotate(n_affected=Count("affected"))
        .order_by(
            Case(When(status=Incident.Status.RESOLVED, then=1), default=0), "-created_at", "-id"
        )
    )


# What a student of another group may read of a course-wide incident: never logs, job IDs,
# repro or the reporter.
PUBLIC_FIELDS = ("id", "summary", "node", "status", "staff_notes", "occurred_at", "updated_at")


def incident_affects_us(*, actor: User, course: Course, incident_id: int) -> IncidentAffected:
    """A student says a course-wide incident hits their group too (once per group); staff see
    the count and the groups."""
    gid = group_id_of(user=actor, course=course)
    if gid is None:
        raise NotAllowed("Join a group first: “affects us too” is said for a group.")
    with transaction.atomic():
        incident = (
            Incident.objects.select_for_update()
            .filter(course=course, pk=incident_id, course_wide=True)
            .first()
        )
        if incident is None:
            raise NotFound("No such course-wide incident.")
        if incident.status == Incident.Status.RESOLVED:
            raise Conflict("That incident is resolved; report a new one if it is back.")
        if incident.group_id == gid:
            raise Conflict("Your group reported it.")
        mark, created = IncidentAffected.objects.get_or_create(
            incident=incident, group_id=gid, defaults={"said_by": actor}
        )
        if not created:
            raise Conflict("Your group has already said it is affected.")
        audit_record(
            actor=actor,
            action="incident.affects_us",
            course=course,
            obj=incident,
            after={"group_id": gid},
        )
    return mark
