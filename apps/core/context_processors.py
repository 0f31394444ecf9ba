from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

from apps.core.permissions import role_in
from apps.core.registry import nav_for
from apps.core.selectors import membership_list


def navigation(request: HttpRequest) -> dict[str, Any]:
    """The current course (set by course-scoped views) and the role's navigation links."""
    if not request.user.is_authenticated:
        return {"nav_items": [], "current_role": None}
    course = getattr(request, "course", None)
    if course is None:  # pages outside a course (calculator …): navigate the user's first course
        first = membership_list(user=request.user).first()
        if first is None:
            return {"nav_items": [], "current_role": None}
        course = first.course
    role = role_in(request.user, course)
    items = []
    for item in nav_for(role):
        try:
            url = reverse(item.url_name, kwargs={"code": course.code} if item.course_scoped else {})
        except NoReverseMatch:
            continue
        items.append({"label": item.label, "url": url, "active": request.path == url})
    return {"nav_items": items, "current_role": role, "course": course}
