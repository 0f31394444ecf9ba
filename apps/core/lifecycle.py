"""Course lifecycle events: what changed about a group or a person, told to every app that holds
state about them, in the same transaction.

The service that makes the change (groups, roster, calendar …) calls `publish(event)` inside its
`transaction.atomic()`; apps above it subscribe in their `ready()` with `subscribe(EventType,
handler)`. A handler runs at once, in the publisher's transaction, so either every app reacts or
nothing changes at all; it writes its own audit rows (naming the event through `caused_by`) and
queues e-mail with `on_commit`. Core knows only the event types, never the subscribers, so the
arrows keep pointing down.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from apps.core.models import Course, User
from apps.core.transactions import require_own_transaction


@dataclass(frozen=True)
class LifecycleEvent:
    """What every event carries: the course, who made the change (None: the system) and when."""

    course: Course
    actor: User | None
    at: dt.datetime

    @property
    def name(self) -> str:
        return type(self).__name__

    def caused_by(self) -> dict[str, Any]:
        """The audit note a reaction stores, naming the event that caused it."""
        payload = {k: v for k, v in self.__dict__.items() if k not in ("course", "actor", "at")}
        return {"event": self.name, **payload, "at": self.at.isoformat()}


@dataclass(frozen=True)
class GroupDissolved(LifecycleEvent):
    """A group ended: dissolved by staff, or left empty by its last member."""

    group_id: int = 0
    group_name: str = ""
    member_ids: tuple[int, ...] = ()  # who was in it when it ended


@dataclass(frozen=True)
class GroupMerged(LifecycleEvent):
    """Every member of `source` moved into `target`; `source` ended."""

    source_id: int = 0
    target_id: int = 0
    source_name: str = ""
    target_name: str = ""
    member_ids: tuple[int, ...] = ()  # who moved from source to target


@dataclass(frozen=True)
class MemberLeft(LifecycleEvent):
    """A student left a group (on their own, removed by staff, moved to another group, or dropped
    from the course). Not published for the members of a merge (GroupMerged says it)."""

    group_id: int = 0
    user_id: int = 0
    to_group_id: int | None = None  # set when the student moved straight into another group


@dataclass(frozen=True)
class StudentsEnrolled(LifecycleEvent):
    """Students became active in the course (roster import, LMS launch, the demo): apps open
    what each student holds from the first day (a slack account), so the deadline hour finds it."""

    user_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class StudentDropped(LifecycleEvent):
    """A student is no longer active in the course (roster import, admin)."""

    user_id: int = 0


@dataclass(frozen=True)
class StaffRemoved(LifecycleEvent):
    """A member of the course staff (instructor or TA) is no longer on it: their membership
    ended (admin), or their role became student (roster import, admin). Apps hand back the work
    given to them that they have not done (split shares, second gradings, slots they run);
    what they already did stays, with their name on it. Not published for a change between
    staff roles (TA to instructor)."""

    user_id: int = 0
    role: str = ""  # the staff role they had
    now: str = ""  # their role in the course now ("student"), or "" when they left it


E = TypeVar("E", bound=LifecycleEvent)
_SUBSCRIBERS: dict[type[LifecycleEvent], list[Callable[[Any], None]]] = {}
_PREVIEWS: dict[type[LifecycleEvent], list[Callable[[Course, int], list[str]]]] = {}


def subscribe(kind: type[E], handler: Callable[[E], None]) -> None:
    """Register `handler` for events of `kind` (once; a second registration is ignored)."""
    handlers = _SUBSCRIBERS.setdefault(kind, [])
    if handler not in handlers:
        handlers.append(handler)


def publish(event: LifecycleEvent) -> None:
    """Tell every subscriber, in registration order, inside the caller's transaction."""
    require_own_transaction(f"{event.name} must be published inside the change's transaction.")
    for handler in list(_SUBSCRIBERS.get(type(event), [])):
        handler(event)


def subscribers(kind: type[LifecycleEvent]) -> list[Callable[[Any], None]]:
    """The handlers registered for `kind` (for tests and for staff pages that preview them)."""
    return list(_SUBSCRIBERS.get(kind, []))


def describe(kind: type[LifecycleEvent], preview: Callable[[Course, int], list[str]]) -> None:
    """Register what an app will do when `kind` happens to a group or a person (by id: a group
    for the group events, a user for StaffRemoved), in sentences, so the staff page that makes
    the change can show the consequences before confirming."""
    previews = _PREVIEWS.setdefault(kind, [])
    if preview not in previews:
        previews.append(preview)


def consequences(kind: type[LifecycleEvent], course: Course, group_id: int) -> list[str]:
    """Every app's sentences about what `kind` would do to this group (or person), in
    registration order."""
    return [line for preview in _PREVIEWS.get(kind, []) for line in preview(course, group_id)]
