"""Extension points: each app adds its navigation links and dashboard panels in `ready()`.

The foundation registers the calendar panels; later apps (groups, compute, slack days …)
register theirs, so the base layout and the dashboards never import the apps that extend them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest

from apps.core.models import Course, Role

ALL_ROLES = frozenset(Role)
STAFF = frozenset({Role.INSTRUCTOR, Role.TA})


@dataclass(frozen=True)
class NavItem:
    label: str
    url_name: str  # reversed with kwargs {"code": course.code} when course_scoped
    roles: frozenset[Role] = ALL_ROLES
    course_scoped: bool = True
    order: int = 100


@dataclass(frozen=True)
class Panel:
    key: str
    title: str
    template: str
    context: Callable[[HttpRequest, Course, Role], dict[str, Any]]
    roles: frozenset[Role] = ALL_ROLES
    order: int = 100
    wide: bool = field(default=False)


_NAV: list[NavItem] = []
_PANELS: list[Panel] = []


def register_nav(item: NavItem) -> None:
    if all(existing.url_name != item.url_name for existing in _NAV):
        _NAV.append(item)


def register_panel(panel: Panel) -> None:
    if all(existing.key != panel.key for existing in _PANELS):
        _PANELS.append(panel)


def nav_for(role: Role | None) -> list[NavItem]:
    return sorted((i for i in _NAV if role is not None and role in i.roles), key=lambda i: i.order)


def panels_for(role: Role) -> Iterable[Panel]:
    return sorted((p for p in _PANELS if role in p.roles), key=lambda p: p.order)
