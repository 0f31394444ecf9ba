"""Content-Security-Policy in a real browser: every main page loads with no CSP violation in
Chromium's console (no inline script or style slipped in), Swagger included, and the
confirmation prompts and the grading progress bar still work from the static script."""

from __future__ import annotations

import pytest

from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STUDENT_PAGES = [
    "/c/ee290-sp26/",
    "/c/ee290-sp26/calendar/",
    "/c/ee290-sp26/group/",
    "/c/ee290-sp26/node/",
    "/c/ee290-sp26/slack/",
    "/c/ee290-sp26/incidents/",
    "/c/ee290-sp26/questions/",
    "/c/ee290-sp26/questions/mlsysim-quiz/",
    "/calc/",
    "/calc/roofline-time/?flops=32+GFLOP&bytes_moved=16+GB&gpu=h100-sxm",
    "/calc/compare/",
    "/calc/hardware/",
    "/api/docs/",
]
STAFF_PAGES = [
    "/c/ee290-sp26/",
    "/c/ee290-sp26/groups/",
    "/c/ee290-sp26/roster/",
    "/c/ee290-sp26/compute/",
    "/c/ee290-sp26/slack/staff/",
    "/c/ee290-sp26/slack/import/",
    "/c/ee290-sp26/questions/mlsysim-quiz/",
]


def _violations(page) -> list[str]:  # type: ignore[no-untyped-def]
    found: list[str] = []
    page.on(
        "console",
        lambda msg: found.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    page.evaluate("() => 0")  # make sure the page exists before listening
    return found


def _visit_all(page, live_server, paths: list[str]) -> list[str]:  # type: ignore[no-untyped-def]
    found = _violations(page)
    seen: list[str] = []
    for path in paths:
        response = page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
        assert response.status == 200, path
        assert "default-src 'self'" in response.headers["content-security-policy"], path
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"], path
        seen += [f"{path}: {v}" for v in found]
        found.clear()
    return seen


def test_student_pages_log_no_csp_violation(page, live_server, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    log_in(page, live_server, "student01@example.edu")
    assert _visit_all(page, live_server, STUDENT_PAGES) == []
    assert page.external_requests == []


def test_staff_pages_log_no_csp_violation(page, live_server, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    log_in(page, live_server, "instructor@example.edu")
    assert _visit_all(page, live_server, STAFF_PAGES) == []


def test_swagger_ui_renders_the_operations_under_the_policy(page, live_server, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    log_in(page, live_server, "student01@example.edu")
    found = _violations(page)
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".opblock", timeout=20_000)
    # Past about 150 operations Swagger UI renders the list virtually (only what is on screen):
    # scroll to the end and the last operations (the calculator's) must have rendered.
    assert page.locator(".opblock").count() >= 10
    for _ in range(120):
        if page.locator(".opblock", has_text="/api/v1/perfcalc/").count() >= 5:
            break
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        page.wait_for_timeout(150)
    assert page.locator(".opblock", has_text="/api/v1/perfcalc/").count() >= 5
    assert found == []


def test_a_confirmation_still_guards_a_destructive_action(page, live_server, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """The dissolve-free example: releasing a node asks first; dismissing keeps the allocation."""
    log_in(page, live_server, "instructor@example.edu")
    page.goto(f"{live_server.url}/c/ee290-sp26/compute/")
    asked: list[str] = []

    def dismiss(dialog) -> None:  # type: ignore[no-untyped-def]
        asked.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    before = page.get_by_role("button", name="release").count()
    page.get_by_role("button", name="release").first.click()
    page.wait_for_load_state("networkidle")
    assert asked
    assert asked[0].startswith("Release ")
    assert page.get_by_role("button", name="release").count() == before
