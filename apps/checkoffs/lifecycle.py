"""How checkoffs react when a group ends (lifecycle events, in the group change's transaction).

- Dissolved: its future bookings are cancelled and their places freed.
- Merged A into B: B keeps one booking per sign-up. A's future booking in a sign-up where B has
  none moves to B; where B has one, A's is cancelled and the audit row says it was dropped.
Past bookings (attendance and outcome recorded) stay where they were: they are history.

And when a staff member leaves the staff (`StaffRemoved`), the slots to come they run name nobody.
"""

from __future__ import annotations

from django.db.models import Count, F, Q
from django.utils import timezone

from apps.checkoffs.models import HOLDS, Booking, CheckoffSlot
from apps.core.lifecycle import GroupDissolved, GroupMerged, LifecycleEvent, StaffRemoved
from apps.core.models import STAFF_ROLES, Course, Membership
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


CLEARED = "checkoffs.slot_staff_cleared"  # a slot to come whose staff member left the staff


@in_callers_transaction
def on_staff_removed(event: StaffRemoved) -> None:
    """A staff member left: the slots still to come that they run name nobody (the sign-up page
    then shows no name, and staff pick who runs them); the slots they ran stay theirs."""
    theirs = CheckoffSlot.objects.filter(
        set__course=event.course, staff_id=event.user_id, starts_at__gt=event.at
    )
    for slot in theirs.select_for_update().order_by("pk"):
        CheckoffSlot.objects.filter(pk=slot.pk).update(staff=None)
        note = {**event.caused_by(), "staff": None}
        audit_record(actor=event.actor, action=CLEARED, course=event.course, obj=slot, after=note)


def staff_removed_preview(course: Course, user_id: int) -> list[str]:
    """What a staff member leaving does to checkoffs, for the roster preview."""
    n = CheckoffSlot.objects.filter(
        set__course=course, staff_id=user_id, starts_at__gt=timezone.now()
    ).count()
    return [f"{n} checkoff slot(s) to come they run name nobody instead."] if n else []


def slots_run_by_non_staff(course_id: int) -> list[str]:
    """No slot still to come is run by someone off the course staff."""
    staff = Membership.objects.filter(
        course_id=course_id, role__in=STAFF_ROLES, is_active=True
    ).values("user_id")
    return [
        f"slot #{s.pk} of “{s.set.title}” is run by {getattr(s.staff, 'email', '?')}, "
        "who is not on the staff"
        for s in CheckoffSlot.objects.filter(
            set__course_id=course_id, staff__isnull=False, starts_at__gt=timezone.now()
        )
        .exclude(staff_id__in=staff)
        .select_related("set", "staff")
    ]
