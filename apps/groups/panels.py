from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest

from apps.core.compiled import compiled_query
from apps.core.models import Course, Role
from apps.groups.models import GroupMembership
from apps.groups.selectors import (
    current_group_id,
    group_list_with_sizes,
    students_without_group,
)


def _current_members(course_id: int, group_id: int) -> QuerySet[GroupMembership]:
    return (
        GroupMembership.objects.filter(group_id=group_id, course_id=course_id, left_at__isnull=True)
        .select_related("group", "user")
        .order_by("joined_at")
    )


def my_group_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    """The student's group and its current members: one query after the page's group lookup
    (which the other panels share), the group read with its members."""
    memo = request.__dict__.setdefault("_memo", {})
    gid = current_group_id(course=course, user=request.user, memo=memo)  # type: ignore[arg-type]
    if gid is None:
        return {"group": None}
    members = compiled_query("groups.my_group", _current_members, course.pk, gid)
    group = members[0].group if members else None
    if group is not None:
        group.current_members = members  # type: ignore[attr-defined]  # as current_members_prefetch
    return {"group": group}


def groups_overview_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    groups = list(group_list_with_sizes(course=course))
    return {
        "groups": groups,
        "under_min": [g for g in groups if g.size < course.group_min_size],  # type: ignore[attr-defined]
        "ungrouped_count": students_without_group(course=course).count(),
    }
