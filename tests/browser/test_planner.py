"""The step planner in a real browser: a student changes the layout in the form and sees the
memory verdict, both pictures and the rank update; the page never scrolls sideways on a laptop."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from apps.core.models import User
from tests.browser.conftest import log_in, wider_than_screen

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_a_student_plans_a_two_node_run(page, live_server) -> None:  # type: ignore[no-untyped-def]
    User.objects.create_user(
        email="planner@example.edu", password="courseops-demo", full_name="Pat Planner"
    )
    log_in(page, live_server, "planner@example.edu")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/calc/")
    page.get_by_role("link", name="Plan a multi-node training step →").click()
    page.select_option("#id_model", "llama-3-70b")
    page.fill("#id_nodes", "2")
    page.fill("#id_tp", "8")
    page.fill("#id_pp", "2")
    page.fill("#id_dp", "1")
    page.get_by_role("button", name="Plan").click()
    expect(page.locator("#memory-verdict")).to_contain_text("does not fit", use_inner_text=True)
    assert page.locator("#time-plot svg rect.segment").count() >= 3
    assert page.locator("#memory-plot svg line.limit").count() == 1
    page.screenshot(path="test-artifacts/planner-70b-2-nodes.png", full_page=True)
    # raise the ZeRO stage and use 8 nodes: now it fits and is ranked
    page.select_option("#id_zero_stage", "3")
    page.fill("#id_nodes", "8")
    page.fill("#id_dp", "4")
    page.get_by_role("button", name="Plan").click()
    expect(page.locator("#memory-verdict")).to_contain_text("fits in 80 GB", use_inner_text=True)
    assert "feasible layouts of 64 GPUs" in page.locator("#rank").inner_text()
    assert "zero_stage=3" in page.url
    assert "nodes=8" in page.url
    assert wider_than_screen(page) <= 0
    page.screenshot(path="test-artifacts/planner-70b-8-nodes.png", full_page=True)
    # a bad layout is named on its field
    page.fill("#id_dp", "3")
    page.get_by_role("button", name="Plan").click()
    expect(page.locator("#err-dp")).to_contain_text("must equal the 64 GPUs of 8 node(s)")
