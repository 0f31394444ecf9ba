from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

from apps.core.permissions import role_in
from apps.core.registry import nav_for


def navigation(request: HttpRequest) -> dict[str, Any]:
    """The current course (set by course-scoped views) and the role's navigation links."""
    course = getattr(request, "course", None)
    if course is None or not request.user.is_authenticated:
        return {"nav_items": [], "current_role": None}
    role = role_in(request.user, course)
    items = []
    for item in nav_for(role):
        try:
            url = reverse(item.url_name, kwargs={"code": course.code} if item.course_scoped else {})
        except NoReverseMatch:
            continue
        items.append({"label": item.label, "url": url, "active": request.path == url})
    return {"nav_items": items, "current_role": role, "course": course}
