"""Scribing end to end in a real browser: a student marks preferences; staff solve, see the
charts, publish; the student submits notes with the sources declaration; staff accept them."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from apps.calendar.models import Lecture
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def test_preferences_solve_publish_submit_accept(
    page, live_server, ee290_demo, celery_eager
) -> None:  # type: ignore[no-untyped-def]
    from apps.setup.liveterm import move_term, weeks_to_today

    # The week before the term: every lecture is still to come (held ones take no new scribe).
    move_term(ee290_demo, weeks_to_today(ee290_demo, week=0))
    code = ee290_demo.code
    l3 = Lecture.objects.get(course=ee290_demo, number=3)
    l1 = Lecture.objects.get(course=ee290_demo, number=1)
    log_in(page, live_server, "student12@example.edu")
    page.goto(f"{live_server.url}/c/{code}/scribing/")
    page.select_option(f"#lec-{l3.pk}", "1")
    page.select_option(f"#lec-{l1.pk}", "cannot")
    page.get_by_role("button", name="Save preferences").click()
    expect(page.locator(".messages")).to_contain_text("Preferences saved", use_inner_text=True)
    assert page.locator(f"#lec-{l3.pk}").input_value() == "1"
    page.get_by_role("button", name="Log out").click()

    log_in(page, live_server, "instructor@example.edu")
    page.goto(f"{live_server.url}/c/{code}/scribing/")
    page.get_by_role("button", name="Solve").click()
    result = page.locator("#solve-result").inner_text()
    assert "Preference score 3" in result
    assert "proven optimal" in result
    assert page.locator("svg[aria-labelledby='loads-t loads-d'] rect.bar").count() == 26
    assert "1 of 1" in page.locator("svg[aria-labelledby='ranks-t ranks-d']").inner_html()
    page.get_by_label("I checked the assignment").check()
    page.get_by_role("button", name="Publish").click()
    expect(page.locator(".messages")).to_contain_text(
        "Published: 80 duties created", use_inner_text=True
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "scribing-staff-board.png"), full_page=True)
    page.get_by_role("button", name="Log out").click()

    log_in(page, live_server, "student12@example.edu")
    page.goto(f"{live_server.url}/c/{code}/scribing/")
    mine = page.get_by_role("table", name="My scribe lectures")
    assert "L3 " in mine.inner_text()
    assert "L1 " not in mine.inner_text()
    row = mine.get_by_role("row").filter(has_text="L3 ")
    row.get_by_label("Link to the notes").fill("https://github.com/ee290/notes/pull/3")
    row.get_by_label("Sources declaration").fill("none")
    row.get_by_role("button", name="Submit notes").click()
    expect(page.locator(".messages")).to_contain_text("Notes submitted", use_inner_text=True)
    page.screenshot(path=str(ARTIFACTS / "scribing-student.png"), full_page=True)
    page.get_by_role("button", name="Log out").click()

    log_in(page, live_server, "instructor@example.edu")
    page.goto(f"{live_server.url}/c/{code}/scribing/")
    item = page.locator(".pending").filter(has_text="L3")
    item.get_by_role("button", name="Accept").click()
    expect(page.locator(".messages")).to_contain_text("Review saved", use_inner_text=True)
    assert "accepted 1" in page.get_by_text("Duties:").inner_text()
    assert page.external_requests == []
