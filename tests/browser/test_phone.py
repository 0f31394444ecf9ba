"""Every page a student checks on a phone fits a 390 × 844 screen: no horizontal scroll, the menu
one tap away, tap targets at least 44 px. Screenshots go to test-artifacts/phone-*.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

STUDENT_PAGES = {
    "dashboard": "/c/ee290-sp26/",
    "slack": "/c/ee290-sp26/slack/",
    "node": "/c/ee290-sp26/node/",
    "group": "/c/ee290-sp26/group/",
    "calendar": "/c/ee290-sp26/calendar/?month=2026-02",
    "calendar-list": "/c/ee290-sp26/calendar/?view=list",
    "milestones": "/c/ee290-sp26/milestones/",
    "scribing": "/c/ee290-sp26/scribing/",
    "peer review": "/c/ee290-sp26/peer-review/",
    "checkoffs": "/c/ee290-sp26/checkoffs/",
    "assessments": "/c/ee290-sp26/assessments/",
    "questions": "/c/ee290-sp26/questions/mlsysim-quiz/",
    "calculator": "/calc/roofline-time/?flops=32+GFLOP&bytes_moved=16+GB&gpu=h100-sxm",
    "planner": "/calc/plan/?model=llama-3-70b&nodes=2&tp=8&pp=2&dp=1",
    "hierarchical allreduce": "/calc/hierarchical-allreduce/?message_bytes=14+GB&nodes=2&intra_bandwidth_bytes_per_s=450+GB%2Fs&inter_bandwidth_bytes_per_s=12.5+GB%2Fs",
    "incidents": "/c/ee290-sp26/incidents/",
    "grades": "/c/ee290-sp26/gradebook/?target=A-",
    "impact": "/c/ee290-sp26/impact/",
    "questionnaire": "/c/ee290-sp26/questionnaire/",
    "contributions": "/c/ee290-sp26/contributions/",
    "participation": "/c/ee290-sp26/participation/",
    "api tokens": "/accounts/tokens/",
}
STAFF_PAGES = {
    "staff-groups": "/c/ee290-sp26/groups/",
    "staff-slack": "/c/ee290-sp26/slack/staff/",
    "staff-compute": "/c/ee290-sp26/compute/",
    "staff-roster": "/c/ee290-sp26/roster/",
    "staff-milestones": "/c/ee290-sp26/milestones/",
    "staff-scribing": "/c/ee290-sp26/scribing/",
    "staff-peer-review": "/c/ee290-sp26/peer-review/",
    "staff-checkoffs": "/c/ee290-sp26/checkoffs/",
    "staff-checkoff-outcomes": "/c/ee290-sp26/checkoffs/outcomes/",
    "staff-assessments": "/c/ee290-sp26/assessments/",
    "staff-calendar-list": "/c/ee290-sp26/calendar/?view=list",
    "staff-gradebook": "/c/ee290-sp26/gradebook/",
    "staff-gradebook-components": "/c/ee290-sp26/gradebook/components/",
    "staff-gradebook-import": "/c/ee290-sp26/gradebook/import/",
    "staff-impact": "/c/ee290-sp26/impact/",
    "staff-questionnaire": "/c/ee290-sp26/questionnaire/",
    "staff-contributions": "/c/ee290-sp26/contributions/",
    "staff-questionnaire-people": "/c/ee290-sp26/questionnaire/people/",
    "staff-questionnaire-suggestions": "/c/ee290-sp26/questionnaire/suggestions/",
    "staff-participation": "/c/ee290-sp26/participation/",
    "staff-checks": "/c/ee290-sp26/check/",
    "staff-jobs": "/c/ee290-sp26/jobs/",
    "staff-regrades": "/c/ee290-sp26/regrades/",
}


@pytest.fixture
def phone(browser, live_server):  # type: ignore[no-untyped-def]
    context = browser.new_context(
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
        timezone_id="UTC",
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def _too_wide(page) -> int:  # type: ignore[no-untyped-def]
    return int(page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth"))


def _check(phone, live_server, pages: dict[str, str]) -> list[str]:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(exist_ok=True)
    problems = []
    for name, path in pages.items():
        phone.goto(f"{live_server.url}{path}")
        phone.wait_for_load_state("networkidle")
        extra = _too_wide(phone)
        if extra > 0:
            problems.append(f"{name}: {extra} px wider than the screen")
        phone.screenshot(path=str(ARTIFACTS / f"phone-{name}.png"), full_page=True)
    return problems


def test_student_pages_fit_a_phone(phone, live_server, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    log_in(phone, live_server, "student01@example.edu")
    assert _check(phone, live_server, STUDENT_PAGES) == []


def test_staff_pages_fit_a_phone(phone, live_server, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    log_in(phone, live_server, "instructor@example.edu")
    assert _check(phone, live_server, STAFF_PAGES) == []


def test_the_menu_opens_with_one_tap_and_its_links_are_big_enough(
    phone, live_server, ee290_demo
) -> None:  # type: ignore[no-untyped-def]
    log_in(phone, live_server, "student01@example.edu")
    nav = phone.get_by_role("navigation", name="Main")
    assert not nav.is_visible()
    menu = phone.get_by_text("Menu", exact=True)
    assert menu.bounding_box()["height"] >= 44
    menu.tap()
    assert nav.is_visible()
    slack = nav.get_by_role("link", name="Slack days", exact=True)
    assert slack.bounding_box()["height"] >= 44
    with phone.expect_navigation():
        slack.tap()
    assert phone.url.endswith("/c/ee290-sp26/slack/")
    phone.goto(f"{live_server.url}/c/ee290-sp26/incidents/")  # a page with a form to submit
    buttons = phone.locator("button:visible")
    heights = [buttons.nth(i).bounding_box()["height"] for i in range(buttons.count())]
    assert heights
    assert min(heights) >= 44
