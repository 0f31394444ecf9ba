from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

from apps.core.compiled import compiled_query
from apps.core.models import Membership, Role
from apps.core.permissions import remember_role, role_in
from apps.core.registry import nav_for
from apps.core.selectors import memberships_of


def _first_membership(user_id: int) -> QuerySet[Membership]:
    return memberships_of(user_id)[:1]


def navigation(request: HttpRequest) -> dict[str, Any]:
    """The current course (set by course-scoped views) and the role's navigation links."""
    if not request.user.is_authenticated:
        return {"nav_items": [], "current_role": None}
    course = getattr(request, "course", None)
    if course is None:  # pages outside a course (calculator …): navigate the user's first course
        found = compiled_query("core.nav_membership", _first_membership, request.user.pk)
        first = found[0] if found else None
        if first is None:
            return {"nav_items": [], "current_role": None}
        course = first.course
        remember_role(request.user, first.course_id, first.role)
    role = role_in(request.user, course)
    items = [
        {"label": label, "url": url, "active": request.path == url}
        for label, url in _nav_links(role, course.code)
    ]
    return {"nav_items": items, "current_role": role, "course": course}


@lru_cache(maxsize=1024)
def _nav_links(role: Role | None, code: str) -> tuple[tuple[str, str], ...]:
    """(label, url) of the role's navigation in a course: the same for every page and person,
    so reversed once per process instead of a dozen reverse() calls per request."""
    links = []
    for item in nav_for(role):
        try:
            url = reverse(item.url_name, kwargs={"code": code} if item.course_scoped else {})
        except NoReverseMatch:
            continue
        links.append((item.label, url))
    return tuple(links)
