"""axe-core (the engine behind Lighthouse's accessibility audit, shipped by axe-playwright-python)
with the WCAG 2.1 A and AA rules on every HTML page of the URL conf — found by the phone test's
walk, so a page is scanned the day its route exists — as a student, a TA and an instructor, at
390 px (and at 1280 px: here for a student in no group, in the production crawl's term walk for
the others), with each menu section open, and after each core form is refused: no violation of
any impact. The same walk checks that no card touches the one stacked above it.

The counts go to test-artifacts/accessibility-<role>.txt (the closing notes quote them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from tests.browser.test_phone import html_pages
from tests.world import World, build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
WCAG = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
    "resultTypes": ["violations"],  # only what fails is gathered in full: the walk is faster
}
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


TOUCHING = """() => {
  const cards = [...document.querySelectorAll('main .card')].filter(c => c.offsetParent);
  const out = [];
  for (let i = 1; i < cards.length; i++) {
    const a = cards[i - 1].getBoundingClientRect(), b = cards[i].getBoundingClientRect();
    const stacked = Math.abs(a.left - b.left) < 2 && b.top >= a.bottom - 1;
    if (stacked && b.top - a.bottom < 8) {
      out.push((cards[i].querySelector('h2, h3, legend') || cards[i]).textContent.trim().slice(0, 40));
    }
  }
  return out;
}"""


@pytest.mark.parametrize("role", ["student_a", "student_solo", "ta", "instructor"])
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
    from tests.termwalk import READERS  # here, not at the top: termwalk imports this module

    # The production crawl's term walk scans every page of its readers at 1280 px (a slice each
    # week, on the served stack, in states the demo never reaches); here those readers' pages are
    # scanned at 390 px, with the menus at 1280, and the other roles' at both widths.
    widths = (390,) if role in READERS else WIDTHS
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
        for route, url in sorted(pages.items()) if width in widths else ():
            page.goto(f"{live_server.url}{url}", wait_until="load")  # server-rendered: all there
            found += _violations(axe, page, f"{width}px {route}")
            found += [
                f"{width}px {route}: card {name!r} touches the one above it"
                for name in page.evaluate(TOUCHING)
            ]
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
        f"{role}: {len(pages)} pages x {len(widths)} width(s) + menus = {scans} scans, "
        f"{len(found)} violations\n"
    )
    assert found == []


def test_each_core_form_after_a_refused_submit_has_no_wcag_violation(  # type: ignore[no-untyped-def]
    browser, live_server, ee290_live
) -> None:
    """A wrong value in each of the forms people fill most: the page that comes back (the error
    summary, the field marked invalid and described by its message) is scanned at both widths,
    and focus is on the error summary."""
    from axe_playwright_python.sync_playwright import Axe
    from django.utils import timezone

    from apps.core.models import User
    from apps.labs.models import LabRecord, StepRecord
    from tests.browser.conftest import log_in

    axe = Axe()
    code = ee290_live.code
    student = User.objects.get(email="student40@example.edu")  # step 1 done: step 2 asks a number
    record = LabRecord.objects.create(course=ee290_live, lab_key="lab09-perf-engr", student=student)
    now = timezone.now()
    StepRecord.objects.create(record=record, number=1, choice="B", ran_at=now, submitted_at=now)
    lab = f"/c/{code}/labs/lab09-perf-engr/"
    refusals = [  # (who, page, what to type: {label: value}, the button)
        (
            "instructor@example.edu",
            f"/c/{code}/gradebook/",
            {"Student": "student01@example.edu", "Percent": "150"},
            "Save the score",
        ),
        (
            "instructor@example.edu",
            f"/c/{code}/milestones/",
            {"Group": "Nobody", "Hours": "12", "Reason": "node down"},
            "Set extension",
        ),
        ("student40@example.edu", lab, {"Your prediction (%)": "forty-ish"}, "Lock my prediction"),
        ("", "/accounts/login/", {"Email": "student01@example.edu", "Password": "wrong"}, "Log in"),
    ]
    found: list[str] = []
    scans = 0
    for width in WIDTHS:
        for who, url, typed, button in refusals:
            context = browser.new_context(viewport={"width": width, "height": 900})
            page = context.new_page()
            page.set_default_timeout(15_000)
            if who:
                log_in(page, live_server, who)
            page.goto(f"{live_server.url}{url}")
            page.on("dialog", lambda d: d.accept())
            where_form = {
                lab: "#step-2",
                f"/c/{code}/gradebook/": "main form.stack",
                f"/c/{code}/milestones/": "main form:has(#id_group)",
            }
            scope = page.locator(where_form.get(url, "main"))
            for label, value in typed.items():
                exact = scope.get_by_label(label, exact=True)
                (exact if exact.count() else scope.get_by_label(label)).first.fill(value)
            where = f"{width}px refused {url}"
            with page.expect_navigation():
                scope.get_by_role("button", name=button).first.click()
            error = page.locator("#error-summary, .errorlist, .field-error, [role=alert]")
            assert error.count() >= 1, f"{where}: no error shown"
            if page.locator("#error-summary").count():
                assert page.evaluate("() => document.activeElement.id") == "error-summary", where
            found += _violations(axe, page, where)
            scans += 1
            context.close()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "accessibility-refused-forms.txt").write_text(
        f"{len(refusals)} refused forms x {len(WIDTHS)} widths = {scans} scans, "
        f"{len(found)} violations\n"
    )
    assert found == []
