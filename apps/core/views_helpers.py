"""Small helpers shared by course-scoped pages."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied

from apps.core.http import AuthedRequest
from apps.core.models import Course
from apps.core.permissions import is_staff
from apps.core.selectors import course_get


def course_for(request: AuthedRequest, code: str, *, staff: bool = False) -> Course:
    """The course (404 for non-members), set on the request for navigation; 403 for non-staff
    on staff pages."""
    course = course_get(user=request.user, code=code)
    request.course = course
    if staff and not is_staff(request.user, course):
        raise PermissionDenied("Only the course's instructors and TAs can open this page.")
    return course


def int_or_none(value: str | None) -> int | None:
    """A whole number typed in a form or query string, or None when empty or not a number."""
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None
