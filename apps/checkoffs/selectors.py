"""Who sees which sets, slots and bookings: the one place pages and the API read them from.

Students see published sets and their slots (with free places, never who holds them) and their
own group's bookings, outcomes and notes included; staff see everything of their course."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Exists, F, OuterRef, QuerySet
from django.utils import timezone

from apps.checkoffs.models import HOLDS, Booking, CheckoffSet, CheckoffSlot
from apps.core.compiled import compiled_query
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.groups.models import Group, GroupMembership


def set_list(*, user: User, course: Course) -> QuerySet[CheckoffSet]:
    qs = CheckoffSet.objects.filter(course=course).select_related(
        "assignment", "event", "milestone"
    )
    return qs if is_staff(user, course) else qs.filter(published_at__isnull=False)


def slot_list(*, user: User, course: Course) -> QuerySet[CheckoffSlot]:
    qs = CheckoffSlot.objects.filter(set__course=course).select_related("set", "staff")
    return qs if is_staff(user, course) else qs.filter(set__published_at__isnull=False)


def booking_list(*, user: User, course: Course) -> QuerySet[Booking]:
    qs = Booking.objects.filter(set__course=course).select_related(
        "slot", "set", "group", "booked_by", "slot__staff"
    )
    if is_staff(user, course):
        return qs
    mine = GroupMembership.objects.filter(course=course, user=user, left_at__isnull=True).values(
        "group_id"
    )
    return qs.filter(group_id__in=mine, set__published_at__isnull=False)


def unbooked_groups(s: CheckoffSet) -> QuerySet[Group]:
    """Live groups with a current member and no booking that holds a place in the set (a redo
    frees it, so a group sent back to redo is listed again)."""
    holding = Booking.objects.filter(HOLDS, set=s, group=OuterRef("pk"))
    live = GroupMembership.objects.filter(group=OuterRef("pk"), left_at__isnull=True)
    return (
        Group.objects.filter(course_id=s.course_id, dissolved_at__isnull=True)
        .filter(Exists(live))
        .exclude(Exists(holding))
        .order_by("name")
    )


def group_booking(s: CheckoffSet, group: Group | None) -> Booking | None:
    if group is None:
        return None
    return Booking.objects.filter(HOLDS, set=s, group=group).select_related("slot").first()


def _held_places(course_id: int, group_id: int) -> QuerySet[Any]:
    return (
        Booking.objects.filter(
            HOLDS, group_id=group_id, set__course_id=course_id, set__published_at__isnull=False
        )
        .order_by("slot__starts_at")
        .values_list("set_id", "slot__starts_at", "slot__location")
    )


def _published_sets(course_id: int, cutoff: dt.datetime) -> QuerySet[CheckoffSet]:
    open_slot = CheckoffSlot.objects.filter(
        set=OuterRef("pk"), starts_at__gt=cutoff, booked__lt=F("capacity")
    )
    return (
        CheckoffSet.objects.filter(course_id=course_id, published_at__isnull=False)
        .annotate(can_book=Exists(open_slot))
        .order_by("book_by", "pk")
    )


def group_signups(
    *, course: Course, group_id: int, memo: dict[str, Any] | None = None
) -> tuple[list[CheckoffSet], dict[int, tuple[dt.datetime, str]]]:
    """The course's published sign-ups (`can_book`: a slot past the booking cut-off has room)
    and, per set, the earliest slot the group holds (start, place). Two plain queries, once per
    `memo` (a request's): the dashboard's checkoffs panel and the calendar's book-by deadlines
    read the same rows."""
    key = f"signups:{course.pk}:{group_id}"
    if memo is not None and key in memo:
        return memo[key]
    held: dict[int, tuple[dt.datetime, str]] = {}
    for set_id, starts_at, location in compiled_query(
        "checkoffs.held", _held_places, course.pk, group_id
    ):
        held.setdefault(set_id, (starts_at, location))
    cutoff = timezone.now() + dt.timedelta(hours=course.checkoff_cutoff_hours)
    sets = compiled_query("checkoffs.published_sets", _published_sets, course.pk, cutoff)
    if memo is not None:
        memo[key] = (sets, held)
    return sets, held  # each set carries can_book
