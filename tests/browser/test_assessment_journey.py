"""A pre/post assessment in a real browser: a student reads the notice, ticks consent, takes the
timed quiz and sees the score; staff read the report with its three pictures on a laptop and on
a phone (no horizontal scroll)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from apps.assessments import services
from apps.assessments.models import Assessment
from apps.core.models import User
from tests.browser.conftest import log_in, wider_than_screen

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def test_take_the_quiz_then_read_the_report(page, live_server, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    a = Assessment.objects.get(course=course)  # the demo's, with 40 imported responses each way
    instructor = User.objects.get(email="instructor@example.edu")
    services.window_set(
        actor=instructor,
        course=course,
        assessment_id=a.pk,
        phase="post",
        opens_at=timezone.now() - dt.timedelta(minutes=5),
        closes_at=timezone.now() + dt.timedelta(hours=1),
    )
    log_in(page, live_server, "student07@example.edu")
    page.goto(f"{live_server.url}/c/{course.code}/assessments/")
    page.get_by_role("link", name="Take the post quiz").click()
    # expect() retries until the next page has rendered; page.content() read right after the
    # click could catch the document between the old page and the new one (empty).
    expect(page.locator("main")).to_contain_text(
        "Research participation notice", use_inner_text=True
    )
    page.get_by_label("I have read the notice above.").check()
    page.get_by_role("button", name="Start the 5-minute quiz").click()
    expect(page.locator("main")).to_contain_text("Submit by", use_inner_text=True)
    page.locator("input[name=q1][value=b]").check()
    page.locator("input[name=q2][value=a]").check()
    page.fill("#q6-0", "40")
    page.fill("#q6-1", "100")
    page.get_by_role("button", name="Submit").click()
    expect(page.locator(".messages")).to_contain_text(
        "Recorded: 4 of 12 points", use_inner_text=True
    )
    page.get_by_role("button", name="Log out").click()

    log_in(page, live_server, "instructor@example.edu")
    page.goto(f"{live_server.url}/c/{course.code}/assessments/{a.pk}/")
    for key in ("hist", "goals", "misc"):
        assert page.locator(f"svg.plot.{key}").count() == 1
    assert "NO RESEARCH left out of every figure" in page.locator("main").inner_text()
    assert wider_than_screen(page) <= 0  # the laptop too
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "assessment-report.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/c/{course.code}/assessments/{a.pk}/")
    assert wider_than_screen(page) <= 0
    page.screenshot(path=str(ARTIFACTS / "phone-staff-assessment-report.png"), full_page=True)
