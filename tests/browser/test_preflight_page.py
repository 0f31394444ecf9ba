"""The preflight page with findings in it (the route walk of test_phone and test_accessibility
sees only the dry run's rows): a TA reads the table on a 390 px phone without scrolling sideways,
and axe finds no WCAG 2.1 A/AA violation at 390 and 1280 px."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.core.models import Role
from tests.browser.conftest import wider_than_screen
from tests.browser.test_accessibility import _violations
from tests.compute.cloud.test_preflight import ALLOW_INTERNAL, _clean, _plant
from tests.factories import member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_preflight_page_with_findings_fits_a_phone_and_passes_axe(  # type: ignore[no-untyped-def]
    browser, live_server, ee290, gce_peer
) -> None:
    from axe_playwright_python.sync_playwright import Axe

    _clean(gce_peer, ee290)
    _plant(
        gce_peer,
        firewalls=[ALLOW_INTERNAL],
        metadata={"enable-oslogin": "TRUE"},
        denied=["compute.firewalls.create"],
        quotas={"us-central1": {"NVIDIA_H100_GPUS": 16}},
    )
    client = Client()
    client.force_login(member(ee290, Role.TA))
    axe, found = Axe(), []
    for width in (390, 1280):
        context = browser.new_context(viewport={"width": width, "height": 844})
        context.add_cookies(
            [
                {
                    "name": "sessionid",
                    "value": client.cookies["sessionid"].value,
                    "url": live_server.url,
                }
            ]
        )
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{live_server.url}/c/{ee290.code}/compute/cloud/preflight/", wait_until="load")
        assert "4 findings" in page.inner_text("main")
        if width == 390:
            assert wider_than_screen(page) <= 0
        found += _violations(axe, page, f"{width}px preflight")
        context.close()
    assert found == []
