"""What goes on a person's calendar, collected from every app without importing any of them.

Each app registers, in its `ready()`:
- an *event source*: `source(query) -> Iterable[Event]`, the events one person sees (their own
  effective deadlines, their group's milestones and windows, later their duties);
- a *reminder source*: `source(course, start, end) -> Iterable[(user_id, Event)]`, every
  person's deadlines due in [start, end), computed for the whole course at once, so the
  reminder task costs a few queries per course, not a few per student.

The calendar page, the iCal feed, the JSON API, the dashboard's "next 7 days" and the reminder
e-mails all read these, so a new app's dates appear everywhere by registering once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from apps.core.models import Course, User

# Kinds of deadline a person can turn reminders off for (calendar page).
REMINDER_KINDS = {
    "assignment": "Assignments",
    "milestone": "Project milestones",
    "duty": "Duties (scribing, checkoffs, reviews)",
}


@dataclass(frozen=True)
class Event:
    """One calendar entry. `end is None` makes it a deadline, due at `start`; otherwise it
    happens over [start, end). `uid` is stable across edits (a moved deadline updates the
    event in a subscribed calendar); `sequence` grows with every change of it."""

    uid: str
    kind: str  # lecture, recess, release, session, office-hours, assignment, milestone, window …
    title: str
    start: dt.datetime
    end: dt.datetime | None = None
    code: str = ""
    description: str = ""
    location: str = ""
    path: str = ""  # the page about it, relative to SITE_URL
    sequence: int = 0
    all_day: bool = False
    reminder_kind: str = ""  # one of REMINDER_KINDS when reminders cover it
    released_at: dt.datetime | None = None
    status: str = ""  # e.g. a milestone's "submitted"
    edit_path: str = ""  # staff only: where to change it

    @property
    def is_deadline(self) -> bool:
        return self.end is None


@dataclass
class EventQuery:
    course: Course
    user: User
    staff: bool
    start: dt.datetime | None = None
    end: dt.datetime | None = None
    memo: dict[str, Any] = field(default_factory=dict)  # a request's, shared by its panels
    for_feed: bool = False  # sources compute exact SEQUENCE numbers (a few more queries)
    deadlines_only: bool = False  # sources may skip everything that is not due (dashboards)


EventSource = Callable[[EventQuery], Iterable[Event]]
ReminderSource = Callable[[Course, dt.datetime, dt.datetime], Iterable[tuple[int, Event]]]

_EVENTS: dict[str, EventSource] = {}
_EVENT_READS: dict[str, tuple[str, ...]] = {}
_REMINDERS: dict[str, ReminderSource] = {}


def register_events(name: str, source: EventSource, *, reads: tuple[str, ...]) -> None:
    """`reads`: the app or model labels whose writes change what the source gives a person
    (a student's Today is kept until one of them is written: apps.core.todaycache)."""
    _EVENTS[name] = source
    _EVENT_READS[name] = reads


def event_reads() -> tuple[str, ...]:
    """Every label an event source reads."""
    return tuple(label for reads in _EVENT_READS.values() for label in reads)


def register_reminders(name: str, source: ReminderSource) -> None:
    _REMINDERS[name] = source


def event_sources() -> list[EventSource]:
    return list(_EVENTS.values())


def reminder_sources() -> list[ReminderSource]:
    return list(_REMINDERS.values())


def overlaps(event: Event, start: dt.datetime | None, end: dt.datetime | None) -> bool:
    """Whether the event falls in [start, end) (either bound may be open)."""
    last = event.end or event.start
    if start is not None and last < start:
        return False
    return not (end is not None and event.start >= end)
