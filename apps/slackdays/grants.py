"""Staff grant extra hours (one-off extensions and accommodations), under the relief rule.

A grant is judged against the whole relief of every deadline it moves (`relief.relief_judge`):
one that would pass the course's cap is refused with the arithmetic unless staff confirm going
past it (`over_cap`), which records the total they confirmed on the exception row
(`cap_days_confirmed`) and writes a `relief.cap_overridden` audit row. Locks the group's row and
the affected students' slack accounts in student order first (`relief.relief_lock`)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from apps.calendar.models import Assignment
from apps.core.errors import DomainError, NotAllowed, NotFound
from apps.core.models import Course, Membership, Role, User
from apps.core.permissions import is_staff
from apps.core.services import audit_record
from apps.groups.models import Group
from apps.slackdays import relief
from apps.slackdays.models import DeadlineException

CONFIRM = "Tick “Go past the cap” to grant it anyway (the grant is audited)."


def exception_grant(
    *,
    actor: User,
    course: Course,
    kind: str,
    hours: int,
    reason: str,
    assignment_id: int | None = None,
    student_ids: Iterable[int] = (),
    group_id: int | None = None,
    over_cap: bool = False,
) -> list[DeadlineException]:
    """Staff grant extra hours: a one-off extension (one assignment; students or a group) or an
    accommodation (every assignment; students). Many students at once make one row each. Past
    the course's relief cap only with `over_cap` (audited)."""
    if not is_staff(actor, course):
        raise NotAllowed("Only the course staff grant exceptions.")
    if not reason.strip():
        raise DomainError("Give a reason; it is kept with the exception.", field="reason")
    if not 1 <= hours <= 24 * 60:
        raise DomainError("Hours must be between 1 and 1,440.", field="hours")
    student_ids = list(student_ids)
    students = list(
        Membership.objects.filter(
            course=course, user_id__in=student_ids, role=Role.STUDENT, is_active=True
        ).select_related("user")
    )
    if len(students) != len(set(student_ids)):
        raise DomainError(
            "Some of those people are not active students of this course.", field="student_ids"
        )
    group: Group | None = None
    assignments: list[Assignment]
    if kind == "accommodation":
        if group_id or assignment_id:
            raise DomainError(
                "An accommodation is for students on every assignment; leave the assignment and "
                "group out."
            )
        if not students:
            raise DomainError("Choose at least one student.", field="student_ids")
        assignments = list(Assignment.objects.filter(course=course).order_by("due_at", "pk"))
    elif kind == "extension":
        found = Assignment.objects.filter(course=course, pk=assignment_id or 0).first()
        if found is None:
            raise NotFound("No such assignment in this course.")
        assignments = [found]
        if group_id:
            group = Group.objects.filter(
                course=course, pk=group_id, dissolved_at__isnull=True
            ).first()
            if group is None or students:
                raise DomainError("Give either a group or students, not both.")
        elif not students:
            raise DomainError("Choose a group or at least one student.", field="student_ids")
    else:
        raise DomainError("Kind is 'extension' or 'accommodation'.", field="kind")
    people = [m.user for m in students]
    with transaction.atomic():
        reached = relief.relief_members(course, group, None) if group else people
        relief.relief_lock(course, group=group, students=reached)
        confirm: dict[int, int] = {}
        for a in assignments:
            j = relief.relief_judge(course, a, reached, adding_hours=hours, kind=kind, group=group)
            if j.refusal is None:
                continue
            if not over_cap:
                raise DomainError(f"{j.refusal} {CONFIRM}", field="hours")
            relief.record_override(
                course, actor=actor, target=a, judgement=j, what=f"{kind} +{hours} h: {reason}"
            )
            for s in reached:
                confirm[s.pk] = max(confirm.get(s.pk, 0), j.confirm_days)
        common = {"course": course, "kind": kind, "hours": hours, "reason": reason}
        if group is not None:
            rows = [
                DeadlineException(
                    **common,
                    assignment=assignments[0],
                    group=group,
                    granted_by=actor,
                    cap_days_confirmed=max(confirm.values(), default=None),
                )
            ]
        else:
            rows = [
                DeadlineException(
                    **common,
                    assignment=assignments[0] if kind == "extension" else None,
                    student=u,
                    granted_by=actor,
                    cap_days_confirmed=confirm.get(u.pk),
                )
                for u in people
            ]
        created = DeadlineException.objects.bulk_create(rows)
        audit_record(
            actor=actor,
            action="exception.granted",
            course=course,
            obj=course,
            after={
                "kind": kind,
                "hours": hours,
                "count": len(created),
                "reason": reason,
                "over_cap": bool(confirm),
            },
        )
    return created
