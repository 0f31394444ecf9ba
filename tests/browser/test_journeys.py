"""Journeys a person takes, in a real browser."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def test_a_student_logs_in_and_sees_deadlines_in_pacific_time(
    page, live_server, ee290_demo
) -> None:  # type: ignore[no-untyped-def]
    log_in(page, live_server, "student12@example.edu")
    assert page.url.endswith("/c/ee290-sp26/")
    # The demo term is over: nothing ahead, and every deadline folded under "Past deadlines".
    assert "Nothing ahead." in page.get_by_role("table", name="Assignments").inner_text()
    past = page.get_by_role("table", name="Past deadlines")
    assert not past.is_visible()
    page.get_by_text("Past deadlines (13)").click()
    for code in ("A1", "A2", "A3", "A4", "A5"):
        assert past.get_by_role("row").filter(has_text=f"{code} ").count() == 1
    a1 = past.get_by_role("row").filter(has_text="Parallelism Assignment")
    assert "Tue Feb 10, 2026, 11:59 PM PST" in a1.inner_text()
    a5 = past.get_by_role("row").filter(has_text="Applications Assignment")
    assert "Tue Apr 21, 2026, 11:59 PM PDT" in a5.inner_text()
    assert past.get_by_role("row").count() == 14  # header + 5 assignments + 8 milestones
    assert "Draft report" in past.inner_text()
    assert page.locator("#panel-my-group").get_by_text("Flash Attention").is_visible()
    assert page.locator(".badge.demo").is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "student-dashboard.png"), full_page=True)
    assert page.external_requests == []


def test_a_wrong_password_keeps_the_student_on_the_login_page(
    page, live_server, ee290_demo
) -> None:  # type: ignore[no-untyped-def]
    log_in(page, live_server, "student12@example.edu", password="wrong")
    assert "/accounts/login/" in page.url
    # One announcement: the page frame's error summary (it takes focus), naming the refusal.
    summary = page.get_by_role("alert")
    assert summary.is_visible()
    assert "Please enter a correct email" in summary.inner_text()


def test_api_docs_render_with_no_network(page, live_server, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    log_in(page, live_server, "ta1@example.edu")
    page.goto(f"{live_server.url}/api/docs/")
    page.locator(".swagger-ui .opblock").first.wait_for()
    text = page.locator(".swagger-ui").inner_text()
    assert "/api/v1/courses/{code}/" in text
    assert "courseops API" in text
    assert page.external_requests == []
