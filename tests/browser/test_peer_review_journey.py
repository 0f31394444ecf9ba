"""Peer review end to end in a real browser: staff create a round and publish the pairing; a
reviewing group saves and submits its review; after the due date the reviewed group reads it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from apps.peerreview.models import PeerAssignment, PeerRound
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TEXT = "A concrete, careful report; the measurements match the roofline predictions well."


def test_round_pairing_review_and_release(page, live_server, ee290_demo, celery_eager) -> None:  # type: ignore[no-untyped-def]
    code = ee290_demo.code
    log_in(page, live_server, "instructor@example.edu")
    page.goto(f"{live_server.url}/c/{code}/peer-review/")
    page.select_option(
        "#nr-m", label=page.locator("#nr-m option", has_text="Draft").first.inner_text()
    )
    due = (
        (timezone.now() + dt.timedelta(days=2)).astimezone(ee290_demo.tz).strftime("%Y-%m-%dT%H:%M")
    )
    page.fill("#nr-d", due)
    page.get_by_role("button", name="Create round").click()
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("svg.pairing line.edge")).to_have_count(8)
    page.get_by_label("E-mail every group whom it reviews.").check()
    # No group has recorded its draft in this course yet: the page names them; staff confirm.
    page.get_by_label("Publish although").check()
    page.get_by_role("button", name="Publish").click()
    expect(page.locator(".messages")).to_contain_text(
        "Published 8 review assignments", use_inner_text=True
    )
    page.screenshot(path=str(ARTIFACTS / "peer-review-staff.png"), full_page=True)
    page.get_by_role("button", name="Log out").click()

    a = PeerAssignment.objects.select_related("reviewer", "reviewee").first()
    writer = a.reviewer.memberships.filter(left_at__isnull=True).order_by("pk").first().user
    log_in(page, live_server, writer.email)
    page.goto(f"{live_server.url}/c/{code}/peer-review/")
    form = page.locator(f"#review-{a.pk}")
    assert f"Your group reviews {a.reviewee.name}" in form.inner_text()
    for key in ("clarity", "depth", "correctness", "rigour", "artifact"):
        form.locator(f"#{key}-{a.pk}").select_option("4")
    form.get_by_role("button", name="Save draft").click()
    expect(page.locator(".messages")).to_contain_text("Draft saved", use_inner_text=True)
    form = page.locator(f"#review-{a.pk}")
    assert form.locator(f"#clarity-{a.pk}").input_value() == "4"
    for key in ("strengths", "weaknesses", "suggestions"):
        form.locator(f"#{key}-{a.pk}").fill(TEXT)
    form.locator(f"#recommendation-{a.pk}").select_option("good")
    form.get_by_role("button", name="Submit").click()
    # Submitting asks the integrity question first (what was typed is kept as a draft).
    said = page.locator(".messages").inner_text()
    assert "Saved as a draft, not submitted: Answer “External code or AI assistants used?”" in said
    form = page.locator(f"#review-{a.pk}")
    form.get_by_role("radio", name="Yes", exact=True).check()
    form.locator(f"#ai-description-{a.pk}").fill("ChatGPT to tighten the wording of the summary.")
    form.get_by_role("button", name="Submit").click()
    expect(page.locator(".messages")).to_contain_text("Review submitted", use_inner_text=True)
    page.get_by_role("button", name="Log out").click()

    reviewed = a.reviewee.memberships.filter(left_at__isnull=True).order_by("pk").first().user
    log_in(page, live_server, reviewed.email)
    page.goto(f"{live_server.url}/c/{code}/peer-review/")
    assert TEXT not in page.content()  # not before the due date
    PeerRound.objects.update(due_at=timezone.now() - dt.timedelta(minutes=1))
    page.reload()
    assert page.locator(".received").filter(has_text=TEXT).count() == 1
    page.screenshot(path=str(ARTIFACTS / "peer-review-received.png"), full_page=True)
    assert page.external_requests == []
