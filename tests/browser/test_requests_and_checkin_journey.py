"""On a phone (390 px, Chromium): a student asks for an extension and the TA approves it, the
student's deadline moves on their slack page; during a lecture the TA opens check-in, the code
shown full-screen is the one a student types on Today's box, and they are checked in once."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect

from apps.calendar.models import Assignment
from apps.core.models import Role, User
from apps.core.timefmt import format_instant
from apps.participation.models import Checkin
from tests.browser.conftest import wider_than_screen
from tests.factories import AssignmentFactory, CourseFactory, LectureFactory, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def phone(browser, live_server):  # type: ignore[no-untyped-def]
    def open_as(user: User):  # type: ignore[no-untyped-def]
        context = browser.new_context(
            viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
        )
        client = Client()
        client.force_login(user)
        context.add_cookies(
            [
                {
                    "name": "sessionid",
                    "value": client.cookies["sessionid"].value,
                    "url": live_server.url,
                }
            ]
        )
        page = context.new_page()
        page.set_default_timeout(15_000)
        opened.append(context)
        return page

    opened: list = []  # type: ignore[type-arg]
    yield open_as
    for context in opened:
        context.close()


def _fits(page) -> None:  # type: ignore[no-untyped-def]
    assert wider_than_screen(page) <= 0


def test_an_extension_asked_on_a_phone_and_approved_moves_the_deadline(phone, live_server) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory(extension_auto_max_days=0)
    a1 = AssignmentFactory(course=course, code="A1", title="Roofline")
    ta = member(course, Role.TA)
    ada = member(course, email="ada@uni.edu")
    student = phone(ada)
    student.goto(f"{live_server.url}/c/{course.code}/extensions/")
    _fits(student)
    student.get_by_label("Assignment").select_option(label="A1 Roofline")
    student.get_by_label("Days", exact=False).fill("3")
    student.get_by_label("Reason").fill("I have the flu and a doctor's note.")
    student.get_by_role("button", name="Send the request").click()
    student.get_by_text("Request sent").wait_for()
    assert "Waiting for staff" in student.content()

    staff = phone(ta)
    staff.goto(f"{live_server.url}/c/{course.code}/extensions/")
    _fits(staff)
    assert "I have the flu and a doctor's note." in staff.content()
    staff.get_by_role("button", name="Approve").click()
    staff.get_by_text("approved; e-mailed").wait_for()

    student.goto(f"{live_server.url}/c/{course.code}/slack/")
    moved = Assignment.objects.get(pk=a1.pk).due_at + dt.timedelta(days=3)
    text = student.inner_text("main")
    assert any(
        part in text
        for part in (
            format_instant(moved, course.timezone),
            moved.astimezone(course.tz).strftime("%b %-d"),
        )
    )


def test_the_code_on_the_screen_checks_a_student_in_from_todays_box(phone, live_server) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    now = timezone.now()
    LectureFactory(
        course=course,
        number=7,
        starts_at=now - dt.timedelta(minutes=5),
        ends_at=now + dt.timedelta(minutes=75),
    )
    ta = member(course, Role.TA)
    ada = member(course, email="ada@uni.edu")
    staff = phone(ta)
    staff.goto(f"{live_server.url}/c/{course.code}/checkin/")
    staff.get_by_role("button", name="Open check-in").click()
    code = staff.locator(".checkin-code").inner_text().strip()
    assert re.fullmatch(r"\d{6}", code)
    _fits(staff)

    student = phone(ada)
    student.goto(f"{live_server.url}/c/{course.code}/")
    box = student.locator("#panel-checkin")
    box.get_by_label("Code on the screen for L7").fill(code)
    box.get_by_role("button", name="Check in").click()
    student.get_by_text("Checked in to L7").first.wait_for()
    _fits(student)
    assert Checkin.objects.filter(student=ada).count() == 1


def test_a_practice_check_on_a_phone_says_right_at_once(phone, live_server) -> None:  # type: ignore[no-untyped-def]
    from apps.autograder import practice
    from apps.autograder.bank import BANKS, bank_load

    course = CourseFactory()
    ada = member(course, email="ada@uni.edu")
    qs = bank_load(course=course, path=BANKS / "roofline-practice.yaml")
    q = qs.questions.get(key="decode-practice")
    _, keys = practice.variant(q, ada, 0)
    student = phone(ada)
    student.goto(f"{live_server.url}/c/{course.code}/questions/{qs.key}/")
    _fits(student)
    item = student.locator(f"#q-{q.key}")
    item.get_by_label("time per token").fill(f"{keys[0]:.4f}")
    item.get_by_role("button", name="Check").click()
    student.locator(f"#q-{q.key}").get_by_text("✓ Right").wait_for()
    _fits(student)
    item = student.locator(f"#q-{q.key}")
    item.get_by_role("button", name="New numbers").click()
    # a fresh variant, not yet answered
    expect(student.locator(f"#q-{q.key}").get_by_text("✓ Right")).to_have_count(0)
