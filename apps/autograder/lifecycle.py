"""How the autograder reacts when a student is dropped (lifecycle events, in the roster
change's transaction): their open regrade requests are closed as declined ("dropped from the
course"), so the staff queue holds only people still in it; their grades stay, for the record."""

from __future__ import annotations

from django.utils import timezone

from apps.autograder.models import RegradeRequest
from apps.core.lifecycle import StudentDropped
from apps.core.models import Membership, Role
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction


@in_callers_transaction
def on_student_dropped(event: StudentDropped) -> None:
    open_ = RegradeRequest.objects.select_for_update().filter(
        question__question_set__course=event.course,
        student_id=event.user_id,
        status=RegradeRequest.Status.OPEN,
    )
    for r in open_:
        r.status = RegradeRequest.Status.DECLINED
        r.comment = "Closed: the student was dropped from the course."
        r.decided_by, r.decided_at = event.actor, timezone.now()
        r.save(update_fields=["status", "comment", "decided_by", "decided_at"])
        audit_record(
            actor=event.actor,
            action="grading.regrade_closed",
            course=event.course,
            obj=r,
            after=event.caused_by(),
        )


def open_requests_of_dropped_students(course_id: int) -> list[str]:
    """No open regrade request belongs to someone no longer an active student."""
    active = Membership.objects.filter(course_id=course_id, role=Role.STUDENT, is_active=True)
    stale = (
        RegradeRequest.objects.filter(
            question__question_set__course_id=course_id, status=RegradeRequest.Status.OPEN
        )
        .exclude(student_id__in=active.values("user_id"))
        .select_related("student", "question")
    )
    return [f"{r.student.email}: open regrade request on {r.question.key}" for r in stale]
