"""How scribing reacts when a student is dropped (lifecycle events, in the roster change's
transaction): their preferences go; their published duties for lectures still to come are
released, so the next solve fills the gap (the existing late-joiner path); past duties, and
notes already submitted, stay. Moving group changes nothing here: duties are a student's own."""

from __future__ import annotations

from apps.core.lifecycle import StudentDropped
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction
from apps.scribing.models import ScribeDuty, ScribePreference, ScribeSwap


@in_callers_transaction
def on_student_dropped(event: StudentDropped) -> None:
    ScribePreference.objects.filter(course=event.course, student_id=event.user_id).delete()
    duties = list(
        ScribeDuty.objects.select_for_update()
        .filter(
            course=event.course,
            student_id=event.user_id,
            status=ScribeDuty.Status.ASSIGNED,
            lecture__starts_at__gt=event.at,
        )
        .select_related("lecture")
        .order_by("lecture__starts_at")
    )
    for duty in duties:
        audit_record(
            actor=event.actor,
            action="scribing.release",
            course=event.course,
            obj=duty,
            before={"lecture": duty.lecture.number, "student": event.user_id},
            after=event.caused_by(),
            note="the student was dropped; solve again to fill the gap",
        )
        ScribeSwap.objects.filter(duty=duty).delete()
        duty.delete()
