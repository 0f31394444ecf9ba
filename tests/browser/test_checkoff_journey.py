"""Checkoffs in a real browser: a student books a slot for the group from the week view, moves
it, cancels it, books again, and is refused after the cut-off with the cut-off time in course time;
the TA records the outcome on the day's schedule, which also fits a phone."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from apps.checkoffs import rules
from apps.checkoffs.models import Booking, CheckoffSlot
from apps.core.timefmt import format_instant
from apps.groups.models import Group
from tests.browser.conftest import log_in, wider_than_screen

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def _message(page) -> str:  # type: ignore[no-untyped-def]
    return page.locator(".messages").inner_text()


def test_book_move_cancel_then_refused_after_the_cutoff(
    page, live_server, ee290_demo, celery_eager
) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    group = (
        Group.objects.filter(course=course)
        .exclude(checkoff_bookings__isnull=False)
        .order_by("name")
        .first()
    )
    student = group.memberships.filter(left_at__isnull=True).order_by("pk").first().user
    log_in(page, live_server, student.email)
    page.goto(f"{live_server.url}/c/{course.code}/checkoffs/")
    assert (
        page.locator("svg.slotgrid rect.slot-free").count() >= 3
    )  # the week view, free places shown
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "checkoffs-week.png"), full_page=True)

    page.get_by_role("link", name="Book…").first.click()
    expect(page.locator("#confirm")).to_contain_text(
        "Book for your whole group", use_inner_text=True
    )
    page.get_by_role("button", name="Yes, book it").click()
    assert "Booked:" in _message(page)
    first = Booking.objects.get(group=group, cancelled_at__isnull=True)
    assert page.locator("svg.slotgrid rect.slot-mine").count() == 1

    page.get_by_role("link", name="Move here…").nth(1).click()
    page.get_by_role("button", name="Yes, move here").click()
    assert "Moved:" in _message(page)
    moved = Booking.objects.get(group=group, cancelled_at__isnull=True)
    assert moved.slot_id != first.slot_id

    page.get_by_role("link", name="Cancel…").click()
    page.get_by_role("button", name="Yes, cancel the booking").click()
    assert "Cancelled" in _message(page)
    assert not Booking.objects.filter(group=group, cancelled_at__isnull=True).exists()

    page.get_by_role("link", name="Book…").first.click()
    page.get_by_role("button", name="Yes, book it").click()
    held = Booking.objects.select_related("slot").get(group=group, cancelled_at__isnull=True)
    page.get_by_role("link", name="Cancel…").click()  # the confirmation is open …
    soon = timezone.now() + dt.timedelta(
        minutes=90
    )  # … when the slot is moved to inside the cut-off
    CheckoffSlot.objects.filter(pk=held.slot_id).update(
        starts_at=soon, ends_at=soon + dt.timedelta(minutes=15)
    )
    page.get_by_role("button", name="Yes, cancel the booking").click()
    text = _message(page)
    cutoff = format_instant(rules.cutoff_at(soon, course.checkoff_cutoff_hours), course.timezone)
    assert "Too late to cancel" in text
    assert f"closed at {cutoff} (2 h before it starts)" in text
    assert Booking.objects.filter(pk=held.pk, cancelled_at__isnull=True).exists()
    page.get_by_role("button", name="Log out").click()

    # The checkoff starts; the TA records the outcome on that day's schedule.
    begun = timezone.now() - dt.timedelta(minutes=5)
    CheckoffSlot.objects.filter(pk=held.slot_id).update(
        starts_at=begun, ends_at=begun + dt.timedelta(minutes=15)
    )
    log_in(page, live_server, "ta1@example.edu")
    day = begun.astimezone(course.tz).date().isoformat()
    page.goto(f"{live_server.url}/c/{course.code}/checkoffs/schedule/?date={day}")
    form = page.locator(f"#b{held.pk}")
    form.locator("select[name=attendance]").select_option("present")
    form.locator("select[name=outcome]").select_option("redo")
    form.locator("input[name=notes]").fill("Re-run the scaling plot with 4 nodes.")
    form.get_by_role("button", name="Save").click()
    assert f"{group.name}: present, redo" in _message(page)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(
        f"{live_server.url}/c/{course.code}/checkoffs/schedule/?date={day}"
    )  # as a phone opens it
    assert wider_than_screen(page) <= 0
    page.screenshot(path=str(ARTIFACTS / "phone-staff-checkoff-schedule.png"), full_page=True)
