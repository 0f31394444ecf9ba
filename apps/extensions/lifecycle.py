"""How extension requests follow people and groups (lifecycle events, in the change's own
transaction): a dropped student's open requests close; a group's open requests close when the
group is dissolved or merged away, and when their asker leaves it — each with the reason, so
the staff queue holds only requests someone can still use. Approved extensions stay as granted."""

from __future__ import annotations

from django.db.models import Q
from django.utils import timezone

from apps.core.lifecycle import (
    GroupDissolved,
    GroupMerged,
    LifecycleEvent,
    MemberLeft,
    StudentDropped,
)
from apps.core.models import Membership, Role
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction
from apps.extensions.models import ExtensionRequest


@in_callers_transaction
def _close(event: LifecycleEvent, rows: Q, why: str) -> None:
    for r in ExtensionRequest.objects.select_for_update().filter(
        rows, course=event.course, status=ExtensionRequest.Status.OPEN
    ):
        r.status, r.comment = ExtensionRequest.Status.CLOSED, f"Closed: {why}"
        r.decided_by, r.decided_at = event.actor, timezone.now()
        r.save(update_fields=["status", "comment", "decided_by", "decided_at"])
        audit_record(
            actor=event.actor,
            action="extension.closed",
            course=event.course,
            obj=r,
            after=event.caused_by(),
        )


@in_callers_transaction
def on_student_dropped(event: StudentDropped) -> None:
    _close(event, Q(student_id=event.user_id), "the student was dropped from the course.")


@in_callers_transaction
def on_group_dissolved(event: GroupDissolved) -> None:
    _close(event, Q(group_id=event.group_id), f"the group {event.group_name} was dissolved.")


@in_callers_transaction
def on_group_merged(event: GroupMerged) -> None:
    why = f"{event.source_name} merged into {event.target_name}; ask again for the new group."
    _close(event, Q(group_id=event.source_id), why)


@in_callers_transaction
def on_member_left(event: MemberLeft) -> None:
    why = "the student who asked left the group."
    _close(event, Q(group_id=event.group_id, student_id=event.user_id), why)


def open_requests_nobody_can_use(course_id: int) -> list[str]:
    """No open request belongs to someone no longer an active student, or to a dissolved group."""
    active = Membership.objects.filter(course_id=course_id, role=Role.STUDENT, is_active=True)
    stale = (
        ExtensionRequest.objects.filter(course_id=course_id, status=ExtensionRequest.Status.OPEN)
        .filter(
            ~Q(student_id__in=active.values("user_id"))
            | Q(group__isnull=False, group__dissolved_at__isnull=False)
        )
        .select_related("student", "assignment", "milestone")
    )
    return [f"{r.student.email}: open extension request on {r.target_name}" for r in stale]
