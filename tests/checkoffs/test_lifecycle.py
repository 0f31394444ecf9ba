"""When a group ends, its checkoff bookings follow: a dissolved group's future booking is
cancelled and its place freed; on a merge the target keeps one booking per sign-up."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.checkoffs import services
from apps.checkoffs.models import HOLDS, Booking, CheckoffSlot
from apps.core.invariants import run_checks
from apps.core.models import AuditEvent
from apps.groups.services import group_dissolve, group_merge
from tests.checkoffs.conftest import make_signup

pytestmark = pytest.mark.django_db


def test_a_dissolved_groups_booking_is_cancelled_and_its_place_freed() -> None:
    s = make_signup()
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    assert CheckoffSlot.objects.get(pk=s.slots[0].pk).booked == 1
    group_dissolve(actor=s.ta, course=s.course, group_id=s.groups[0].pk)
    assert CheckoffSlot.objects.get(pk=s.slots[0].pk).booked == 0
    assert not Booking.objects.filter(HOLDS, group=s.groups[0]).exists()
    assert AuditEvent.objects.filter(action="checkoffs.cancel").latest("pk").after["event"] == (
        "GroupDissolved"
    )
    services.book(actor=s.student(1), course=s.course, slot_id=s.slots[0].pk)  # free again
    assert run_checks(s.course.pk) == []


def test_a_merge_keeps_one_booking_per_sign_up() -> None:
    s = make_signup(n_groups=4)
    for g in s.groups[:3]:  # two members each, so any two fit one group
        for m in g.memberships.order_by("-pk")[:2]:
            m.left_at = timezone.now()
            m.save()
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    services.book(actor=s.student(1), course=s.course, slot_id=s.slots[1].pk)
    # both booked: the target keeps its own, the source's is dropped and its place freed
    group_merge(actor=s.ta, course=s.course, source_id=s.groups[0].pk, target_id=s.groups[1].pk)
    assert Booking.objects.get(HOLDS, group=s.groups[1]).slot_id == s.slots[1].pk
    assert CheckoffSlot.objects.get(pk=s.slots[0].pk).booked == 0
    dropped = AuditEvent.objects.filter(action="checkoffs.cancel").latest("pk")
    assert "dropped on merge" in dropped.note
    # only the source booked: its booking moves to the target
    services.book(actor=s.student(2), course=s.course, slot_id=s.slots[2].pk)
    group_merge(actor=s.ta, course=s.course, source_id=s.groups[2].pk, target_id=s.groups[3].pk)
    assert Booking.objects.get(HOLDS, group=s.groups[3]).slot_id == s.slots[2].pk
    assert CheckoffSlot.objects.get(pk=s.slots[2].pk).booked == 1
    assert run_checks(s.course.pk) == []


def test_the_invariant_names_a_slot_whose_count_drifted() -> None:
    s = make_signup()
    services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    CheckoffSlot.objects.filter(pk=s.slots[0].pk).update(booked=0)
    found = [v.detail for v in run_checks(s.course.pk)]
    assert found == [f"slot #{s.slots[0].pk} counts 0 booked but holds 1"]


def test_reminders_follow_the_group_a_student_is_in_now() -> None:
    """A student moved out of a group with a booking is no longer reminded of it; the student
    moved in is; a dissolved group's cancelled booking reminds nobody."""
    from apps.calendar.reminders import reminders_due
    from apps.groups.services import member_move

    s = make_signup()
    from apps.calendar.sources import uid as event_uid

    booking = services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    uid = event_uid("checkoff", booking.pk, s.course.code)

    def reminded() -> set[int]:
        now = s.slots[0].starts_at - timezone.timedelta(hours=47)
        return {r.user_id for r in reminders_due(course=s.course, now=now) if r.event.uid == uid}

    leaver, joiner = s.student(0), s.student(1)
    assert leaver.pk in reminded()
    assert joiner.pk not in reminded()
    member_move(actor=s.ta, course=s.course, user_id=leaver.pk, group_id=s.groups[1].pk)
    member_move(actor=s.ta, course=s.course, user_id=joiner.pk, group_id=s.groups[0].pk)
    assert leaver.pk not in reminded()
    assert joiner.pk in reminded()
    group_dissolve(actor=s.ta, course=s.course, group_id=s.groups[0].pk)
    assert reminded() == set()
