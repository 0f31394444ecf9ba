"""A student applies a slack day in a real browser, confirms, and sees the new deadline."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.core.timefmt import format_instant
from apps.slackdays.rules import add_calendar_days
from tests.browser.conftest import log_in, open_from_menu
from tests.factories import PASSWORD, AssignmentFactory, CourseFactory, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_apply_a_slack_day_and_see_the_new_deadline(page, live_server) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory(code="cs-slack")
    due = (timezone.now() + dt.timedelta(days=3)).replace(second=0, microsecond=0)
    AssignmentFactory(course=course, code="A2", title="Pre-Training Assignment", due_at=due)
    member(course, email="ada@uni.edu", full_name="Ada Okafor")
    log_in(page, live_server, "ada@uni.edu", PASSWORD)
    open_from_menu(page, "Coursework", "Slack days")
    assert page.locator("#slack-left").inner_text() == "3 of 3"
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.accept()))
    page.get_by_role("button", name="Apply slack day").click()
    page.wait_for_load_state("networkidle")
    assert "Ada Okafor" in dialogs[0]
    assert page.locator("#slack-left").inner_text() == "2 of 3"
    new = format_instant(add_calendar_days(due, 1, course.timezone), course.timezone)
    row = (
        page.get_by_role("table", name="Assignment deadlines")
        .get_by_role("row")
        .filter(has_text="A2")
    )
    assert "+1 slack day" in row.inner_text()
    assert new in row.inner_text()


def test_apply_a_slack_day_by_keyboard_alone(page, live_server) -> None:  # type: ignore[no-untyped-def]
    """From the page's top: the skip link, then Tab until the button for A2 has focus, Enter,
    accept the confirmation with Enter. Counted: the presses it takes."""
    course = CourseFactory(code="cs-slack-kb")
    due = (timezone.now() + dt.timedelta(days=3)).replace(second=0, microsecond=0)
    AssignmentFactory(course=course, code="A2", title="Pre-Training Assignment", due_at=due)
    member(course, email="kai@uni.edu", full_name="Kai Mensah")
    log_in(page, live_server, "kai@uni.edu", PASSWORD)
    page.goto(f"{live_server.url}/c/{course.code}/slack/")
    page.on("dialog", lambda d: d.accept())
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # skip to the content
    presses = 2
    name = ""
    while "Apply slack day to A2" not in name and presses < 30:
        page.keyboard.press("Tab")
        presses += 1
        name = page.evaluate("() => document.activeElement.textContent || ''")
    assert "Apply slack day to A2" in name, presses
    page.keyboard.press("Enter")
    page.wait_for_load_state("networkidle")
    assert page.locator("#slack-left").inner_text() == "2 of 3"
    assert presses <= 10, presses
