from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import NoReverseMatch, reverse
from django.utils.safestring import SafeString, mark_safe

from apps.core.compiled import compiled_query
from apps.core.models import Membership, Role
from apps.core.permissions import remember_role, role_in
from apps.core.registry import nav_for, section_of, sections_for
from apps.core.selectors import memberships_of


def _first_membership(user_id: int) -> QuerySet[Membership]:
    return memberships_of(user_id)[:1]


def navigation(request: HttpRequest) -> dict[str, Any]:
    """The current course (set by course-scoped views) and the role's navigation: its groups
    (for pages that list them, like Help) and the menu's HTML, rendered once per process for each
    (role, course, current page of the menu, staff or not) rather than on every request."""
    if not request.user.is_authenticated:
        return {"nav_groups": (), "nav_html": "", "current_role": None}
    course = getattr(request, "course", None)
    if course is None:  # pages outside a course (calculator …): navigate the user's first course
        found = compiled_query("core.nav_membership", _first_membership, request.user.pk)
        first = found[0] if found else None
        if first is None:
            return {"nav_groups": (), "nav_html": "", "current_role": None}
        course = first.course
        remember_role(request.user, first.course_id, first.role)
    role = role_in(request.user, course)
    links = _nav_links(role, course.code)
    current = request.path if request.path in _nav_urls(links) else ""
    groups, html = _nav_rendered(role, course.code, current, bool(request.user.is_staff))
    return {"nav_groups": groups, "nav_html": html, "current_role": role, "course": course}


@lru_cache(maxsize=1024)
def _nav_urls(links: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]) -> frozenset[str]:
    return frozenset(u for _, items in links for _, u in items)


@lru_cache(maxsize=4096)
def _nav_rendered(
    role: Role | None, code: str, current: str, is_staff: bool
) -> tuple[tuple[dict[str, Any], ...], SafeString]:
    """The menu's groups and its HTML (templates/core/_nav.html) for one role in one course with
    `current` marked as the page (aria-current): the same for every person with that role, so
    a page pays a dictionary lookup for its menu. The keys are few (roles × courses × the
    menu's own pages), and registries are fixed when the process starts."""
    groups = []
    for label, links in _nav_links(role, code):
        items = [{"label": t, "url": u, "active": current == u} for t, u in links]
        if label == "Course setup" and is_staff:
            items.append({"label": "Admin", "url": reverse("admin:index"), "active": False})
        groups.append(
            {
                "label": label,
                "items": items,
                "url": items[0]["url"] if len(items) == 1 else "",
                "active": any(i["active"] for i in items),
            }
        )
    html = render_to_string("core/_nav.html", {"nav_groups": groups})
    # mark_safe: the HTML comes from our own template, with every label and URL escaped there.
    return tuple(groups), mark_safe(html.strip())


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
