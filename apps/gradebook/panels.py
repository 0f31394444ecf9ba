"""Dashboard panel: a student's course grade so far, or why it is at risk."""

from __future__ import annotations

from typing import Any, cast

from django.http import HttpRequest

from apps.core.models import Course, Role, User
from apps.gradebook import selectors


def student_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    user = cast(User, request.user)
    rows = selectors.gradebook_rows(course, student_ids=[user.pk])
    return {"row": rows[0] if rows else None}
