"""Extension requests' relief invariants for `check_course`: no relief without its source row."""

from __future__ import annotations

from apps.extensions.models import ExtensionRequest
from apps.slackdays.models import DeadlineException


def relief_has_its_source(course_id: int) -> list[str]:
    """Every approved request on an assignment points at the extension it granted, for the same
    student or group and assignment; every extension that says it came from a request is that
    request's; a group's request granted the group's extension, not one member's."""
    out = [
        f"{r.student.email}: approved request #{r.pk} on {r.target_name} granted nothing"
        for r in ExtensionRequest.objects.filter(
            course_id=course_id,
            status="approved",
            assignment__isnull=False,
            exception__isnull=True,
        ).select_related("student", "assignment")
    ]
    for r in ExtensionRequest.objects.filter(
        course_id=course_id, status="approved", exception__isnull=False
    ).select_related("exception", "student", "assignment"):
        e = r.exception
        if e is None:
            continue
        same = e.assignment_id == r.assignment_id and (
            e.group_id == r.group_id if r.group_id else e.student_id == r.student_id
        )
        if not same:
            out.append(f"{r.student.email}: request #{r.pk} points at another deadline's extension")
    out += [
        f"extension {e.pk} says it came from a request, but no request granted it"
        for e in DeadlineException.objects.filter(
            course_id=course_id, reason__startswith="Extension request #", request__isnull=True
        )
    ]
    return out
