from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from apps.core.models import Course, Role
from apps.groups.models import Group
from apps.groups.selectors import (
    current_group_id,
    current_members_prefetch,
    group_list_with_sizes,
    students_without_group,
)


def my_group_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    """The student's group and its members: 2 queries after the page's group lookup, which the
    other panels share."""
    memo = request.__dict__.setdefault("_memo", {})
    gid = current_group_id(course=course, user=request.user, memo=memo)  # type: ignore[arg-type]
    if gid is None:
        return {"group": None}
    group = (
        Group.objects.filter(pk=gid, course=course)
        .prefetch_related(current_members_prefetch())
        .first()
    )
    return {"group": group}


def groups_overview_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    groups = list(group_list_with_sizes(course=course))
    return {
        "groups": groups,
        "under_min": [g for g in groups if g.size < course.group_min_size],  # type: ignore[attr-defined]
        "ungrouped_count": students_without_group(course=course).count(),
    }
