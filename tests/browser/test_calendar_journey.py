"""Calendar in a real browser: a student subscribes (copies the feed address) and sees what is
next; staff move a deadline and see who it affects before they confirm."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from apps.calendar.models import Assignment
from apps.core.models import Role
from tests.browser.conftest import log_in
from tests.factories import (
    PASSWORD,
    AssignmentFactory,
    CourseFactory,
    MilestoneFactory,
    group_of,
    member,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _course():  # type: ignore[no-untyped-def]
    course = CourseFactory(code="cs-cal", title="Scalable AI")
    due = (timezone.now() + dt.timedelta(days=3)).replace(second=0, microsecond=0)
    AssignmentFactory(
        course=course,
        code="A2",
        title="Pre-Training Assignment",
        due_at=due,
        release_at=due - dt.timedelta(days=14),
    )
    MilestoneFactory(
        course=course, key="proposal", name="Project proposal v2", due_at=due + dt.timedelta(days=2)
    )
    group = group_of(course, 4, "Alpha")
    return course, group


def test_a_student_copies_the_feed_address_and_sees_the_next_deadline(page, live_server) -> None:  # type: ignore[no-untyped-def]
    _, group = _course()
    student = group.memberships.first().user
    student.set_password(PASSWORD)
    student.save()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    log_in(page, live_server, student.email, PASSWORD)
    week = page.locator("#today")  # a student's week is Today's own list
    assert "A2 Pre-Training Assignment" in week.inner_text()
    page.get_by_role("navigation", name="Main").get_by_role(
        "link", name="Calendar", exact=True
    ).click()
    expect(page.get_by_role("region", name="day by day")).to_have_count(1)
    page.get_by_role("button", name="Make my feed address").click()
    page.wait_for_load_state("networkidle")
    address = page.locator("#feed-url").input_value()
    assert address.startswith(live_server.url + "/feeds/")
    page.get_by_role("button", name="Copy").click()
    page.wait_for_function("() => document.querySelector('[data-copy]').textContent === 'Copied'")
    assert page.evaluate("() => navigator.clipboard.readText()") == address
    feed = page.request.get(address)
    assert feed.ok
    body = feed.text()
    assert body.startswith("BEGIN:VCALENDAR")
    assert "SUMMARY:Due: A2 Pre-Training Assignment" in body
    assert "BEGIN:VTIMEZONE" in body
    page.screenshot(path="test-artifacts/calendar-student.png", full_page=True)


def test_staff_see_who_a_moved_deadline_affects_before_confirming(page, live_server) -> None:  # type: ignore[no-untyped-def]
    course, _ = _course()
    member(course, Role.INSTRUCTOR, email="prof@uni.edu", full_name="Prof Sahai")
    a2 = Assignment.objects.get(course=course, code="A2")
    log_in(page, live_server, "prof@uni.edu", PASSWORD)
    page.goto(f"{live_server.url}/c/{course.code}/calendar/?view=list")
    row = (
        page.get_by_role("row").filter(has_text="A2 Pre-Training Assignment").filter(has_text="due")
    )
    row.get_by_role("link", name="Edit").click()
    new_local = (a2.due_at + dt.timedelta(days=2)).astimezone(course.tz)
    page.get_by_label("Due (base deadline)").fill(new_local.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_role("button", name="Save").click()
    page.wait_for_load_state("networkidle")
    assert "Before you confirm" in page.content()
    assert page.locator("#affected-count").inner_text().startswith("4 students")
    assert Assignment.objects.get(pk=a2.pk).due_at == a2.due_at  # nothing moved yet
    page.screenshot(path="test-artifacts/calendar-move-preview.png", full_page=True)
    page.get_by_role("button", name="Move it and e-mail 4 people").click()
    page.wait_for_load_state("networkidle")
    assert "saved" in page.locator(".messages").inner_text()
    assert Assignment.objects.get(pk=a2.pk).due_at == a2.due_at + dt.timedelta(days=2)
