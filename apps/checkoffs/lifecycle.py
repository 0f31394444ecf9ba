"""How checkoffs react when a group ends (lifecycle events, in the group change's transaction).

- Dissolved: its future bookings are cancelled and their places freed.
- Merged A into B: B keeps one booking per sign-up. A's future booking in a sign-up where B has
  none moves to B; where B has one, A's is cancelled and the audit row says it was dropped.
Past bookings (attendance and outcome recorded) stay where they were: they are history.
"""

from __future__ import annotations

from django.db.models import Count, F, Q
from django.utils import timezone

from apps.checkoffs.models import HOLDS, Booking, CheckoffSlot
from apps.core.lifecycle import GroupDissolved, GroupMerged, LifecycleEvent
from apps.core.models import Course
from apps.core.services import audit_record
from apps.core.transactions import in_callers_transaction


def _future_holdings(event: LifecycleEvent, group_id: int) -> list[Booking]:
    return list(
        Booking.objects.select_for_update()
        .filter(HOLDS, group_id=group_id, slot__starts_at__gt=event.at)
        .select_related("slot", "set")
        .order_by("slot_id", "pk")
    )


@in_callers_transaction
def _cancel(event: LifecycleEvent, booking: Booking, why: str) -> None:
    list(CheckoffSlot.objects.select_for_update().filter(pk=booking.slot_id).values_list("pk"))
    booking.cancelled_at, booking.cancelled_by = event.at, event.actor
    booking.save(update_fields=["cancelled_at", "cancelled_by"])
    CheckoffSlot.objects.filter(pk=booking.slot_id).update(booked=F("booked") - 1)
    audit_record(
        actor=event.actor,
        action="checkoffs.cancel",
        course=event.course,
        obj=booking,
        after=event.caused_by(),
        note=why,
    )


def on_group_dissolved(event: GroupDissolved) -> None:
    for b in _future_holdings(event, event.group_id):
        _cancel(event, b, f"{event.group_name} was dissolved")


@in_callers_transaction
def on_group_merged(event: GroupMerged) -> None:
    kept = {
        b.set_id
        for b in Booking.objects.select_for_update().filter(HOLDS, group_id=event.target_id)
    }
    for b in _future_holdings(event, event.source_id):
        if b.set_id in kept:
            _cancel(event, b, f"dropped on merge: {event.target_name} keeps its own booking")
            continue
        b.group_id = event.target_id
        b.save(update_fields=["group"])
        kept.add(b.set_id)
        audit_record(
            actor=event.actor,
            action="checkoffs.moved",
            course=event.course,
            obj=b,
            after=event.caused_by(),
            note=f"moved from {event.source_name} to {event.target_name}",
        )


def dissolve_preview(course: Course, group_id: int) -> list[str]:
    """What dissolving the group does to checkoffs, for the confirmation page."""
    n = Booking.objects.filter(HOLDS, group_id=group_id, slot__starts_at__gt=timezone.now()).count()
    return [f"{n} checkoff booking(s) to come are cancelled and their places freed."] if n else []


def booking_invariants(course_id: int) -> list[str]:
    """No future booking held by an ended group; every slot's count equals its bookings that
    are not cancelled."""
    found = [
        f"{b.group.name} (ended) still holds a booking at slot #{b.slot_id} of “{b.set.title}”"
        for b in Booking.objects.filter(
            HOLDS, set__course_id=course_id, group__dissolved_at__isnull=False
        )
        .filter(slot__starts_at__gt=F("group__dissolved_at"))
        .select_related("group", "set")
    ]
    # A redo keeps its place counted (the slot was used); only a cancellation frees it.
    slots = CheckoffSlot.objects.filter(set__course_id=course_id).annotate(
        held=Count("bookings", filter=Q(bookings__cancelled_at__isnull=True))
    )
    found += [
        f"slot #{s.pk} counts {s.booked} booked but holds {s.held}"
        for s in slots
        if s.booked != s.held
    ]
    return found
