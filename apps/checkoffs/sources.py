"""Checkoffs on the calendar: a student's group's bookings (with the room), a "book a slot by"
deadline while the group holds no place in a set that has one, and for staff the booked slots
they run. Reminders: the members of each booked group before the slot, and of each unbooked
group before the book-by date."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import TypeVar

from django.db.models import Model, QuerySet

from apps.calendar.registry import Event, EventQuery
from apps.calendar.sources import uid
from apps.checkoffs.models import HOLDS, Booking, CheckoffSet
from apps.checkoffs.selectors import group_signups, unbooked_groups
from apps.core.models import Course
from apps.groups.models import GroupMembership
from apps.groups.selectors import current_group_id

M = TypeVar("M", bound=Model)


def booking_event(b: Booking, course: Course, description: str = "") -> Event:
    s, slot = b.set, b.slot
    who = f" with {slot.staff.get_full_name()}" if slot.staff_id and slot.staff else ""
    return Event(
        uid=uid("checkoff", b.pk, course.code),
        kind="checkoff",
        code=s.title,
        title=f"{s.title}: {b.group.name}",
        start=slot.starts_at,
        end=slot.ends_at,
        location=slot.location,
        description=description
        or f"Your group's {s.title.lower()}{who}. Be there a few minutes early.",
        path=f"/c/{course.code}/checkoffs/?set={s.pk}",
        reminder_kind="duty",
    )


def book_by_event(s: CheckoffSet, course: Course) -> Event:
    """Only for sets with a book-by date (callers filter on it)."""
    return Event(
        uid=uid("checkoff-book-by", s.pk, course.code),
        kind="checkoff",
        code=s.title,
        title=f"Book a slot: {s.title}",
        start=s.book_by or s.created_at,
        description="Your group has not booked a slot yet.",
        path=f"/c/{course.code}/checkoffs/?set={s.pk}",
        reminder_kind="duty",
    )


def _window(
    qs: QuerySet[M], field: str, start: dt.datetime | None, end: dt.datetime | None
) -> QuerySet[M]:
    if start:
        qs = qs.filter(**{f"{field}__gte": start})
    if end:
        qs = qs.filter(**{f"{field}__lt": end})
    return qs


def booking_events(query: EventQuery) -> Iterable[Event]:
    course = query.course
    base = Booking.objects.filter(set__course=course, cancelled_at__isnull=True).select_related(
        "set", "slot", "slot__staff", "group"
    )
    if query.staff:
        mine = _window(
            base.filter(slot__staff=query.user), "slot__starts_at", query.start, query.end
        )
        return [booking_event(b, course, f"{b.group.name} at {b.slot.location}") for b in mine]
    gid = current_group_id(course=course, user=query.user, memo=query.memo)
    if gid is None:  # no group: no bookings, nothing to book
        return []
    booked = _window(
        base.filter(HOLDS, group_id=gid, set__published_at__isnull=False),
        "slot__starts_at",
        query.start,
        query.end,
    )
    out = [] if query.deadlines_only else [booking_event(b, course) for b in booked]
    sets, held = group_signups(course=course, group_id=gid, memo=query.memo)
    out += [
        book_by_event(s, course)
        for s in sets
        if s.book_by
        and s.pk not in held
        and (query.start is None or s.book_by >= query.start)
        and (query.end is None or s.book_by < query.end)
    ]
    return out


def booking_reminders(
    course: Course, start: dt.datetime, end: dt.datetime
) -> Iterable[tuple[int, Event]]:
    out: list[tuple[int, Event]] = []
    bookings = list(
        Booking.objects.filter(
            HOLDS,
            set__course=course,
            set__published_at__isnull=False,
            slot__starts_at__gte=start,
            slot__starts_at__lt=end,
        ).select_related("set", "slot", "slot__staff", "group")
    )
    members: dict[int, list[int]] = {}
    for gid, user_id in GroupMembership.objects.filter(
        group_id__in=[b.group_id for b in bookings], left_at__isnull=True
    ).values_list("group_id", "user_id"):
        members.setdefault(gid, []).append(user_id)
    for b in bookings:
        event = booking_event(b, course)
        out.extend((u, event) for u in members.get(b.group_id, []))
    for s in CheckoffSet.objects.filter(
        course=course, published_at__isnull=False, book_by__gte=start, book_by__lt=end
    ):
        event = book_by_event(s, course)
        users = GroupMembership.objects.filter(group__in=unbooked_groups(s), left_at__isnull=True)
        out.extend((u, event) for u in users.values_list("user_id", flat=True))
    return out
