"""axe-core (the engine behind Lighthouse's accessibility audit, shipped by axe-playwright-python)
with the WCAG 2.1 A and AA rules on every HTML page of the URL conf — found by the phone test's
walk, so a page is scanned the day its route exists — as a student and as an instructor, at
1280 px and at 390 px, and with each menu section open: no violation of any impact.

The counts go to test-artifacts/accessibility-<role>.txt (the closing notes quote them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from tests.browser.test_phone import html_pages
from tests.world import World, build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
WCAG = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
WIDTHS = (1280, 390)


@pytest.fixture
def world(ee290_demo) -> World:  # type: ignore[no-untyped-def]
    return build_world(ee290_demo)


def _violations(axe, page, where: str) -> list[str]:  # type: ignore[no-untyped-def]
    results = axe.run(page, options=WCAG)
    return [
        f"{where}: {v['id']} ({v['impact']}): {v['help']} at "
        + "; ".join(str(n["target"][0]) for n in v["nodes"][:3])
        for v in results.response["violations"]
    ]


@pytest.mark.parametrize("role", ["student_a", "instructor"])
def test_every_page_has_no_wcag_violation_at_both_widths(  # type: ignore[no-untyped-def]
    browser, live_server, world, role: str
) -> None:
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    pages = html_pages(world, role)
    assert len(pages) >= 25, sorted(pages)
    client = Client()
    client.force_login(world.people[role])
    found: list[str] = []
    scans = 0
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 900})
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
        page.set_default_timeout(15_000)
        for route, url in sorted(pages.items()):
            page.goto(f"{live_server.url}{url}")
            page.wait_for_load_state("networkidle")
            found += _violations(axe, page, f"{width}px {route}")
            scans += 1
        if width == WIDTHS[0]:  # each menu section open, on Today
            page.goto(f"{live_server.url}/c/{world.ids['code']}/")
            sections = page.locator("#main-nav .nav-group-label")
            for i in range(sections.count()):
                sections.nth(i).click()
                found += _violations(axe, page, f"menu {sections.nth(i).inner_text()} open")
                scans += 1
        context.close()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"accessibility-{role}.txt").write_text(
        f"{role}: {len(pages)} pages x {len(WIDTHS)} widths + menus = {scans} scans, "
        f"{len(found)} violations\n"
    )
    assert found == []
