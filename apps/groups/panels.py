from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from apps.core.models import Course, Role
from apps.groups.selectors import group_for_student, group_list_with_sizes, students_without_group


def my_group_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    return {"group": group_for_student(course=course, user=request.user)}  # type: ignore[arg-type]


def groups_overview_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    groups = list(group_list_with_sizes(course=course))
    return {
        "groups": groups,
        "under_min": [g for g in groups if g.size < course.group_min_size],  # type: ignore[attr-defined]
        "ungrouped_count": students_without_group(course=course).count(),
    }
