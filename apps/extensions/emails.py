"""The e-mails of extension requests (queued by the services, sent by the tasks): staff hear of
a request the rule did not approve, with the deadline's relief (the arithmetic past the cap);
the student (and their group) hear the decision."""

from __future__ import annotations

from django.conf import settings

from apps.core import outbox
from apps.core.models import STAFF_ROLES, Course, Membership
from apps.core.timefmt import format_instant
from apps.extensions.models import ExtensionRequest
from apps.extensions.services import deadline_of
from apps.groups.models import Group


def staff_emails(course: Course) -> list[str]:
    return sorted(
        Membership.objects.filter(course=course, role__in=STAFF_ROLES, is_active=True)
        .values_list("user__email", flat=True)
        .distinct()
    )


def email_staff(request_id: int) -> None:
    r = (
        ExtensionRequest.objects.select_related("course", "student", "assignment", "milestone")
        .filter(pk=request_id)
        .first()
    )
    if r is None or r.status != ExtensionRequest.Status.OPEN:
        return
    course = r.course
    mail = outbox.Mail(
        staff_emails(course),
        f"[{course.code}] Extension request: {r.student} asks {r.days} day(s) on {r.target_name}",
        f"{r.student} ({r.student.email}) asks for {r.days} day(s) on {r.target_name}"
        f"{' for their group' if r.group_id else ''}{' (DSP accommodation)' if r.dsp else ''}.\n\n"
        f"Reason: {r.reason}\n\n"
        + (f"The deadline's relief: {r.relief_note}\n\n" if r.relief_note else "")
        + f"Decide: {settings.SITE_URL.rstrip('/')}/c/{course.code}/extensions/#request-{r.pk}",
    )
    outbox.post("extensions.email_staff", [mail], course_id=course.pk)


def email_decision(request_id: int) -> None:
    r = (
        ExtensionRequest.objects.select_related("course", "student", "assignment", "milestone")
        .filter(pk=request_id)
        .first()
    )
    if r is None or r.status not in {"approved", "declined"}:
        return
    course = r.course
    if r.status == ExtensionRequest.Status.APPROVED:
        new = deadline_of(course, r.student, assignment=r.assignment, milestone=r.milestone)
        outcome = (
            f"approved: {r.approved_days} day(s){' by the course rule' if r.auto else ''}. "
            f"Your deadline is now {format_instant(new, course.timezone)}."
        )
    else:
        outcome = "declined."
    to = [r.student.email]
    if r.group_id:
        group = Group.objects.filter(pk=r.group_id).first()
        if group is not None:
            to = sorted(
                {r.student.email}
                | set(
                    group.memberships.filter(left_at__isnull=True).values_list(
                        "user__email", flat=True
                    )
                )
            )
    mail = outbox.Mail(
        to,
        f"[{course.code}] Extension request on {r.target_name}: {r.status}",
        f"The request for {r.days} day(s) on {r.target_name} was {outcome}\n\n"
        + (f"Staff's comment: {r.comment}\n\n" if r.comment else "")
        + f"{settings.SITE_URL.rstrip('/')}/c/{course.code}/extensions/",
    )
    outbox.post("extensions.email_decision", [mail], course_id=course.pk)
