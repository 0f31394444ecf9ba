"""A student checks quiz Q1 on the roofline page, in a real browser, with no network."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def test_roofline_page_for_quiz_q1_shows_memory_bound_and_a_plot(
    page, live_server, ee290_demo
) -> None:  # type: ignore[no-untyped-def]
    log_in(page, live_server, "student05@example.edu")
    page.get_by_role("link", name="Calculator").click()
    page.get_by_role("link", name="Roofline time").click()
    page.get_by_label("Work (FLOP)").fill("32 GFLOP")
    page.get_by_label("Data moved (B)").fill("16 GB")
    page.get_by_label("Peak compute (FLOP/s)").fill("1,979 TFLOPS")
    page.get_by_label("Memory bandwidth (B/s)").fill("3.35 TB/s")
    page.get_by_role("button", name="Calculate").click()
    answer = page.locator("#answer")
    assert "4.776 ms" in answer.inner_text()
    assert "memory-bound" in answer.inner_text()
    plot = page.get_by_role("img", name="Roofline: memory-bound at 2 FLOP/B")
    assert plot.is_visible()
    assert page.locator("svg.roofline circle.point").count() == 1
    assert "flops=32+GFLOP" in page.url  # shareable
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "roofline-q1.png"), full_page=True)

    page.get_by_label("Work (FLOP)").fill("-1")
    page.get_by_role("button", name="Calculate").click()
    expect(page.locator("#id_flops_error")).to_contain_text(
        "must be greater than zero", use_inner_text=True
    )
    assert page.external_requests == []
