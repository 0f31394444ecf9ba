"""Racing for slots on PostgreSQL with real threads: the last place goes to exactly one group,
one group never holds two places in a sign-up, and the database refuses both even when a write
skips the services."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, transaction
from rest_framework.test import APIClient

from apps.checkoffs import services
from apps.checkoffs.models import Booking, CheckoffSlot
from tests.checkoffs.conftest import make_signup
from tests.threads import run_at_once

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_eight_groups_book_the_last_place_at_once_one_gets_it_seven_get_409_naming_the_slot() -> (
    None
):
    s = make_signup(n_groups=10, capacity=3)
    slot = s.slots[0]
    for i in (8, 9):  # two places already taken
        services.book(actor=s.student(i), course=s.course, slot_id=slot.pk)
    url = f"/api/v1/courses/{s.course.code}/checkoffs/slots/{slot.pk}/book/"

    def post(i: int) -> Any:
        client = APIClient()
        client.force_authenticate(s.student(i))
        return client.post(url, {}, format="json")

    responses = run_at_once([lambda i=i: post(i) for i in range(8)])
    assert not [r for r in responses if isinstance(r, Exception)], responses
    codes = sorted(r.status_code for r in responses)
    assert codes == [201] + [409] * 7
    label = services.label(slot, s.course).removeprefix(
        "the "
    )  # "Wed Nov 25, 2:00 PM slot at 521 Cory Hall"
    for r in responses:
        if r.status_code == 409:
            assert label in r.json()["detail"]
            assert "is full (3 of 3 places taken)" in r.json()["detail"]
    assert CheckoffSlot.objects.get(pk=slot.pk).booked == 3
    assert Booking.objects.filter(slot=slot, cancelled_at__isnull=True).count() == 3


def test_two_members_of_one_group_book_different_slots_at_once_the_group_holds_one() -> None:
    s = make_signup(n_groups=1)
    results = run_at_once(
        [
            lambda k=k: services.book(actor=s.student(0, k), course=s.course, slot_id=s.slots[k].pk)
            for k in range(3)
        ]
    )
    wins = [r for r in results if isinstance(r, Booking)]
    assert len(wins) == 1, results
    assert all("already holds" in r.message for r in results if not isinstance(r, Booking))
    assert Booking.objects.filter(group=s.groups[0], cancelled_at__isnull=True).count() == 1
    assert sum(CheckoffSlot.objects.filter(set=s.set).values_list("booked", flat=True)) == 1


def test_moves_and_bookings_racing_keep_every_count_right() -> None:
    """Group 1 moves from slot A to B while group 2 books A and group 3 books B (one place each)."""
    s = make_signup(n_groups=3)
    a, b = s.slots[0], s.slots[1]
    services.book(actor=s.student(0), course=s.course, slot_id=a.pk)
    run_at_once(
        [
            lambda: services.book(actor=s.student(0), course=s.course, slot_id=b.pk, move=True),
            lambda: services.book(actor=s.student(1), course=s.course, slot_id=a.pk),
            lambda: services.book(actor=s.student(2), course=s.course, slot_id=b.pk),
        ]
    )
    for slot in (a, b):
        held = Booking.objects.filter(slot=slot, cancelled_at__isnull=True).count()
        assert CheckoffSlot.objects.get(pk=slot.pk).booked == held <= 1
    assert Booking.objects.filter(group=s.groups[0], cancelled_at__isnull=True).count() == 1


def test_the_database_itself_refuses_overbooking_and_a_second_place() -> None:
    s = make_signup(n_groups=2)
    booking = services.book(actor=s.student(0), course=s.course, slot_id=s.slots[0].pk)
    with pytest.raises(IntegrityError), transaction.atomic():
        CheckoffSlot.objects.filter(pk=s.slots[0].pk).update(booked=2)  # capacity 1
    with pytest.raises(IntegrityError), transaction.atomic():
        Booking.objects.create(
            set=s.set, slot=s.slots[1], group=s.groups[0]
        )  # a second place in the set
    booking.outcome = "redo"
    booking.attendance = "present"
    booking.save()
    Booking.objects.create(set=s.set, slot=s.slots[1], group=s.groups[0])  # after a redo: allowed
