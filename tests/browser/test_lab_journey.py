"""A student works through Lab 09 on a 390 px phone: every prediction is locked before its
instrument opens, the instrument comes pre-filled, the reveal shows the gap, each reflection is
saved, and the record keeps every step; a second lock of the same step is refused (409)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from playwright.sync_api import expect
from rest_framework.test import APIClient

from apps.core.models import Role
from apps.labs.models import LabRecord
from tests.browser.conftest import wider_than_screen
from tests.factories import CourseFactory, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
LAB = "lab09-perf-engr"


def test_a_student_completes_lab_09_on_a_phone(browser, live_server) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    student = member(course, Role.STUDENT)
    client = Client()
    client.force_login(student)
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.on("dialog", lambda d: d.accept())  # "Lock this prediction? It cannot be changed."
    page.goto(f"{live_server.url}/c/{course.code}/labs/{LAB}/")

    def step(n: int):  # type: ignore[no-untyped-def]
        return page.locator(f"#step-{n}")

    # Step 1: the instrument is not there until the prediction is locked.
    assert step(1).locator("select[name=target]").count() == 0
    step(1).get_by_label("B: The profiler would show").check()
    step(1).get_by_role("button", name="Lock my prediction").click()
    expect(step(1).locator("select[name=target]")).to_have_value("attention")  # pre-filled
    assert step(1).locator("input[name=k]").input_value() == "3"
    step(1).get_by_role("button", name="Run").click()
    assert "+8.7 %" in step(1).inner_text()
    assert "the answer is B" in step(1).inner_text()
    step(1).get_by_label("A: Profile to find").check()
    step(1).get_by_role("button", name="Save and close the step").click()

    # Step 2: a number, off from the truth: the reveal says by how much.
    step(2).get_by_label("Your prediction (%)").fill("20")
    step(2).get_by_role("button", name="Lock my prediction").click()
    expect(step(2).locator("select[name=target]")).to_have_value("allreduce")
    step(2).get_by_role("button", name="Run").click()
    assert "off by -22.86 %" in step(2).inner_text()
    step(2).get_by_label("Your answer").fill("AllReduce is 45 % of the step, attention only 12 %.")
    step(2).get_by_role("button", name="Save and close the step").click()

    # Step 3: over the budget first (the failure state), then within it.
    step(3).get_by_label("B: The pipeline bubble").check()
    step(3).get_by_role("button", name="Lock my prediction").click()
    step(3).get_by_label("AllReduce compression (×)").fill("4")
    step(3).get_by_label("Data prefetch workers per GPU").fill("16")
    step(3).get_by_role("button", name="Run").click()
    assert "Engineering budget exceeded" in step(3).inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "lab09-over-budget-phone.png"), full_page=True)
    step(3).get_by_label("AllReduce compression (×)").fill("1")
    step(3).get_by_label("Data prefetch workers per GPU").fill("4")
    step(3).get_by_label("Pipeline micro-batches per step (m)").fill("16")
    step(3).get_by_role("button", name="Run").click()
    assert "Engineering budget exceeded" not in step(3).inner_text()
    step(3).get_by_label("B: Bubbles scale").check()
    step(3).get_by_role("button", name="Save and close the step").click()

    # Step 4: exact, within tolerance.
    step(4).get_by_label("Your prediction (%)").fill("39.4")
    step(4).get_by_role("button", name="Lock my prediction").click()
    step(4).get_by_role("button", name="Run").click()
    assert "39.44 %" in step(4).inner_text()
    step(4).get_by_label("Your answer").fill("Sixteen micro-batches: 1.7 engineer-weeks, 39 % MFU.")
    step(4).get_by_role("button", name="Save and close the step").click()
    expect(page.locator("main")).to_contain_text("Lab completed", use_inner_text=True)
    assert wider_than_screen(page) <= 0
    page.screenshot(path=str(ARTIFACTS / "lab09-done-phone.png"), full_page=True)
    context.close()

    record = LabRecord.objects.get(course=course, student=student)
    assert record.completed_at is not None
    assert [s.number for s in record.steps.order_by("number")] == [1, 2, 3, 4]
    api = APIClient()
    api.force_authenticate(student)
    again = api.post(
        f"/api/v1/courses/{course.code}/labs/{LAB}/steps/1/lock/",
        {"prediction": "A"},
        format="json",
    )
    assert again.status_code == 409
