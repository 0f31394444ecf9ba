"""Today items for staff: groups under the minimum size and students without a group."""

from __future__ import annotations

import datetime as dt

from django.http import HttpRequest
from django.urls import reverse

from apps.core.models import Course, Role
from apps.core.registry import TodayItem
from apps.groups.selectors import group_list_with_sizes, size_of, students_without_group


def decisions(
    request: HttpRequest, course: Course, role: Role, now: dt.datetime
) -> list[TodayItem]:
    url = reverse("groups:board", kwargs={"code": course.code})
    small = [
        (g.name, size_of(g))
        for g in group_list_with_sizes(course=course)
        .filter(size__lt=course.group_min_size)  # type: ignore[misc]
        .only("name")[:6]
    ]
    out = []
    if small:
        names = ", ".join(f"{name} ({size})" for name, size in small[:5])
        out.append(
            TodayItem(
                kind="decide",
                title=f"Groups under {course.group_min_size} members: {names}"
                + (" and more" if len(small) > 5 else ""),
                url=url,
                detail="Merge them, move students in, or dissolve.",
                urgent=True,
            )
        )
    alone = students_without_group(course=course).count()
    if alone:
        out.append(
            TodayItem(
                kind="decide",
                title=f"{alone} student(s) without a group",
                url=url,
                detail="Place them in a group with room.",
            )
        )
    return out
