"""Extension points: each app adds its navigation links, dashboard panels and Today items in
`ready()`.

The foundation registers the calendar panels; later apps (groups, compute, slack days …)
register theirs, so the base layout and the dashboards never import the apps that extend them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from django.http import HttpRequest

from apps.core.models import Course, Role

ALL_ROLES = frozenset(Role)
STAFF = frozenset({Role.INSTRUCTOR, Role.TA})


@dataclass(frozen=True)
class NavSection:
    """A top-level menu entry grouping pages by what people do. One page: a plain link."""

    key: str
    label: str
    order: int


# The menu, by what each kind of user comes to do (at most 7 top-level entries each). Apps file
# their pages under these keys; core owns the list so the menu reads the same in every course.
STUDENT_SECTIONS = (
    NavSection("today", "Today", 0),
    NavSection("calendar", "Calendar", 10),
    NavSection("group", "Group & node", 20),
    NavSection("coursework", "Coursework", 30),
    NavSection("grades", "Grades", 40),
    NavSection("calculator", "Calculator", 50),
    NavSection("help", "Help", 60),
)
STAFF_SECTIONS = (
    NavSection("today", "Today", 0),
    NavSection("people", "People & groups", 10),
    NavSection("compute", "Compute", 20),
    NavSection("deadlines", "Deadlines & slack", 30),
    NavSection("grading", "Grading", 40),
    NavSection("project", "Project", 50),
    NavSection("setup", "Course setup", 60),
)


@dataclass(frozen=True)
class NavItem:
    label: str
    url_name: str  # reversed with kwargs {"code": course.code} when course_scoped
    roles: frozenset[Role] = ALL_ROLES
    course_scoped: bool = True
    order: int = 100
    section: str = "help"  # a key of STUDENT_SECTIONS (and of STAFF_SECTIONS unless staff_section)
    staff_section: str = ""  # where staff find it, when that differs from students


@dataclass(frozen=True)
class TodayItem:
    """One thing a person must do or decide soon, for the Today page."""

    kind: str  # shown as a badge: "deadline", "duty", "booking", "review", "regrade", "decide" …
    title: str
    url: str
    when: dt.datetime | None = None  # due or starting at; None for a queue ("3 to approve")
    detail: str = ""
    urgent: bool = False  # listed first (overdue, within a day, or waiting on a decision)
    # What it is about ("assignment:A3"): items of one subject are one entry on Today, the first
    # source's title with the others beneath it, so a deadline is never listed twice.
    subject: str = ""
    fallback: bool = False  # shown only when no other source's item has its subject
    also: tuple[TodayItem, ...] = ()  # the other items of its subject (set by `today_merge`)


def labels_of(reads: tuple[str, ...] | Callable[[], Iterable[str]]) -> tuple[str, ...]:
    """A `reads` field's labels (a callable is asked when every app has registered)."""
    return tuple(reads() if callable(reads) else reads)


@dataclass(frozen=True)
class TodaySource:
    key: str
    items: Callable[[HttpRequest, Course, Role, dt.datetime], list[TodayItem]]
    roles: frozenset[Role] = ALL_ROLES
    # What a write must touch for the items to change: app labels ("slackdays") or model
    # labels ("core.Membership"), or a callable giving them once every app has registered. A
    # student's Today is kept in the cache until a save or delete in one of these (or the
    # minute) turns (apps.core.todaycache); a source students see must name them
    # (courseops.E007).
    reads: tuple[str, ...] | Callable[[], Iterable[str]] = ()

    def read_labels(self) -> tuple[str, ...]:
        return labels_of(self.reads)


@dataclass(frozen=True)
class Panel:
    key: str
    title: str
    template: str
    # The template's context, or None to leave the panel out of the page this time.
    context: Callable[[HttpRequest, Course, Role], dict[str, Any] | None]
    roles: frozenset[Role] = ALL_ROLES
    order: int = 100
    wide: bool = field(default=False)
    # What a write must touch to change the panel (labels, as `TodaySource.reads`): given, a
    # student's panel is rendered once and kept until then or the minute turns; left empty,
    # rendered on every request (a panel with a form, or one that follows the clock closely).
    reads: tuple[str, ...] | Callable[[], Iterable[str]] = ()

    def read_labels(self) -> tuple[str, ...]:
        return labels_of(self.reads)


_NAV: list[NavItem] = []
_PANELS: list[Panel] = []
_TODAY: list[TodaySource] = []


def register_nav(item: NavItem) -> None:
    if all(existing.url_name != item.url_name for existing in _NAV):
        _NAV.append(item)


def register_panel(panel: Panel) -> None:
    if all(existing.key != panel.key for existing in _PANELS):
        _PANELS.append(panel)


def register_today(source: TodaySource) -> None:
    if all(existing.key != source.key for existing in _TODAY):
        _TODAY.append(source)


def today_sources(role: Role) -> list[TodaySource]:
    return [s for s in _TODAY if role in s.roles]


def today_merge(items: Iterable[TodayItem]) -> list[TodayItem]:
    """One entry per subject: the first item that is not a fallback leads, the others of its
    subject go under it (`also`); a fallback shows only when nothing else names its subject."""
    items = list(items)
    led: dict[str, TodayItem] = {}
    for item in sorted(items, key=lambda i: i.fallback):
        if not item.subject:
            continue
        lead = led.get(item.subject)
        if lead is None:
            led[item.subject] = item
        elif not item.fallback:
            led[item.subject] = replace(lead, also=(*lead.also, item))
    out = []
    for item in items:
        if not item.subject:
            out.append(item)
        elif led.get(item.subject) is not None and led[item.subject].fallback == item.fallback:
            out.append(led.pop(item.subject))
    return out


def sections_for(role: Role | None) -> tuple[NavSection, ...]:
    return STAFF_SECTIONS if role in STAFF else STUDENT_SECTIONS


def section_of(item: NavItem, role: Role | None) -> str:
    return (item.staff_section or item.section) if role in STAFF else item.section


def nav_for(role: Role | None) -> list[NavItem]:
    return sorted((i for i in _NAV if role is not None and role in i.roles), key=lambda i: i.order)


def panels_for(role: Role) -> Iterable[Panel]:
    return sorted((p for p in _PANELS if role in p.roles), key=lambda p: p.order)
