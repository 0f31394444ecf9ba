from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

from apps.core.compiled import compiled_query
from apps.core.models import Membership, Role
from apps.core.permissions import remember_role, role_in
from apps.core.registry import nav_for, section_of, sections_for
from apps.core.selectors import memberships_of


def _first_membership(user_id: int) -> QuerySet[Membership]:
    return memberships_of(user_id)[:1]


def navigation(request: HttpRequest) -> dict[str, Any]:
    """The current course (set by course-scoped views) and the role's navigation links."""
    if not request.user.is_authenticated:
        return {"nav_groups": [], "current_role": None}
    course = getattr(request, "course", None)
    if course is None:  # pages outside a course (calculator …): navigate the user's first course
        found = compiled_query("core.nav_membership", _first_membership, request.user.pk)
        first = found[0] if found else None
        if first is None:
            return {"nav_groups": [], "current_role": None}
        course = first.course
        remember_role(request.user, first.course_id, first.role)
    role = role_in(request.user, course)
    groups = []
    for label, links in _nav_links(role, course.code):
        items = [{"label": t, "url": u, "active": request.path == u} for t, u in links]
        if label == "Course setup" and request.user.is_staff:
            items.append({"label": "Admin", "url": reverse("admin:index"), "active": False})
        groups.append(
            {
                "label": label,
                "items": items,
                "url": items[0]["url"] if len(items) == 1 else "",
                "active": any(i["active"] for i in items),
            }
        )
    return {"nav_groups": groups, "current_role": role, "course": course}


@lru_cache(maxsize=1024)
def _nav_links(role: Role | None, code: str) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """(section label, ((label, url), …)) of the role's menu in a course, sections in order and
    empty ones left out: the same for every page and person, so reversed once per process."""
    by_section: dict[str, list[tuple[str, str]]] = {}
    for item in nav_for(role):
        try:
            url = reverse(item.url_name, kwargs={"code": code} if item.course_scoped else {})
        except NoReverseMatch:
            continue
        by_section.setdefault(section_of(item, role), []).append((item.label, url))
    return tuple(
        (sec.label, tuple(by_section[sec.key]))
        for sec in sections_for(role)
        if by_section.get(sec.key)
    )
