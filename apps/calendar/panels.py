from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from apps.calendar.selectors import deadline_list, lecture_upcoming
from apps.core.models import Course, Role


def deadlines_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    deadlines = deadline_list(course=course, user=request.user)  # type: ignore[arg-type]
    upcoming = [d for d in deadlines if not d.is_past]
    return {
        "assignments": [d for d in deadlines if d.kind == "assignment"],
        "milestones": [d for d in deadlines if d.kind == "milestone"],
        "next_deadline": upcoming[0] if upcoming else None,
    }


def lectures_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    return {"lectures": lecture_upcoming(course=course)}
