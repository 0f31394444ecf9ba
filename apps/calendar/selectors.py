"""Reads of the course calendar.

`event_list` is the one place pages, the feed, the API and the dashboard get a person's
calendar from: every registered source (apps.calendar.registry), each scoped to what that person
may see. `deadline_list` is its deadlines (effective for a student, base for staff).
"""

from __future__ import annotations

import datetime as dt
import hmac
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from apps.calendar.cache import course_calendar
from apps.calendar.models import CalendarSettings, Lecture
from apps.calendar.registry import Event, EventQuery, event_sources, overlaps
from apps.core.models import Course, User
from apps.core.permissions import is_staff


def event_list(
    *,
    course: Course,
    user: User,
    start: dt.datetime | None = None,
    end: dt.datetime | None = None,
    memo: dict[str, Any] | None = None,
    for_feed: bool = False,
    deadlines_only: bool = False,
) -> list[Event]:
    """Everything on the person's calendar overlapping [start, end), in time order (or only
    the deadlines). Computed once per `memo` (a request's), so a page's panels share it."""
    memo = {} if memo is None else memo
    key = f"events:{course.pk}:{user.pk}:{start}:{end}:{for_feed}:{deadlines_only}"
    if key not in memo:
        query = EventQuery(
            course=course,
            user=user,
            staff=is_staff(user, course),
            start=start,
            end=end,
            memo=memo,
            for_feed=for_feed,
            deadlines_only=deadlines_only,
        )
        events = [e for source in event_sources() for e in source(query)]
        memo[key] = sorted(
            (e for e in events if overlaps(e, start, end)),
            key=lambda e: (e.start, e.end is not None, e.kind, e.code, e.title),
        )
    return memo[key]


@dataclass(frozen=True)
class Deadline:
    kind: str  # "assignment" | "milestone" | a duty
    code: str
    title: str
    due_at: dt.datetime
    release_at: dt.datetime | None
    notes: str
    path: str = ""
    status: str = ""

    @property
    def is_past(self) -> bool:
        return self.due_at <= timezone.now()

    @property
    def status_label(self) -> str:
        return self.status.replace("_", " ")


def deadline_list(
    *, course: Course, user: User, memo: dict[str, Any] | None = None
) -> list[Deadline]:
    """The person's deadlines (a student's effective ones), soonest first; events excluded.
    `title` is without the code ("Parallelism Assignment"; pages show `code` beside it)."""
    return [
        Deadline(
            e.kind,
            e.code,
            # Pages show an assignment's code beside its title; other kinds keep their whole
            # title ("Peer review of …" must not lose its first words to the code "Peer review").
            e.title.removeprefix(f"{e.code} ") if e.kind == "assignment" else e.title,
            e.start,
            e.released_at,
            e.description,
            e.path,
            e.status,
        )
        for e in event_list(course=course, user=user, memo=memo, deadlines_only=True)
        if e.is_deadline
    ]


def lecture_upcoming(*, course: Course, limit: int = 4) -> list[Lecture]:
    now = timezone.now()
    return [lec for lec in course_calendar(course).lectures if lec.ends_at >= now][:limit]


def calendar_settings_get(*, user: User, course: Course) -> CalendarSettings | None:
    return CalendarSettings.objects.filter(user=user, course=course).first()


def feed_owner(token: str) -> CalendarSettings | None:
    """The settings row a feed token belongs to, or None. The 12-character key is looked up;
    the rest is compared in constant time."""
    key, secret = token[:12], token[12:]
    if len(key) != 12 or not secret:
        return None
    row = CalendarSettings.objects.filter(feed_key=key).select_related("user", "course").first()
    if row is None or not hmac.compare_digest(row.feed_secret.encode(), secret.encode()):
        return None
    if not row.user.is_active:
        return None
    return row
