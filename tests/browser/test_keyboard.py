"""The keyboard alone, in Chromium: the skip link, the menus (WAI-ARIA disclosure navigation)
and a focus ring that can be seen.

- Tab first reaches "Skip to content"; Enter on it puts the next Tab on the page's own first
  control: at most 3 presses, on every page.
- A closed section's pages are never Tab stops; Enter or Space on a section opens it, its pages
  follow in the Tab order, Escape closes it and gives focus back to its button.
- The focus ring's contrast with what is behind it is computed from the colours the browser
  uses: at least 3:1 (WCAG 1.4.11) on the page and on the top bar.
- Work in progress is a status region updated in place, never a page that reloads itself.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FOCUSED = """() => {
  const e = document.activeElement;
  return {tag: e.tagName, text: (e.innerText || e.value || '').trim().slice(0, 40),
          id: e.id, closedItem: !!e.closest('.nav-group-items') &&
            e.closest('.nav-group').querySelector('.nav-group-label')
              .getAttribute('aria-expanded') !== 'true',
          inMain: !!e.closest('main')};
}"""

CONTRAST = """() => {
  const e = document.activeElement;
  const rgb = s => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = c => { const [r, g, b] = c.map(v => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  let bg = null;
  for (let n = e.parentElement; n; n = n.parentElement) {
    const c = getComputedStyle(n).backgroundColor;
    if (c && !c.startsWith('rgba(0, 0, 0, 0)') && c !== 'transparent') { bg = c; break; }
  }
  const ring = getComputedStyle(e).outlineColor;
  const [a, b] = [lum(rgb(ring)), lum(rgb(bg || 'rgb(255,255,255)'))];
  return {ring, bg, style: getComputedStyle(e).outlineStyle,
          ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)};
}"""

PAGES = {
    "student01@example.edu": ["/c/ee290-sp26/", "/c/ee290-sp26/slack/", "/c/ee290-sp26/calendar/"],
    "instructor@example.edu": [
        "/c/ee290-sp26/",
        "/c/ee290-sp26/compute/",
        "/c/ee290-sp26/gradebook/",
    ],
}


@pytest.mark.parametrize("email", sorted(PAGES))
def test_the_skip_link_reaches_the_content_in_three_presses(  # type: ignore[no-untyped-def]
    page, live_server, ee290_demo, email: str
) -> None:
    log_in(page, live_server, email)
    for path in PAGES[email]:
        page.goto(f"{live_server.url}{path}")
        page.keyboard.press("Tab")
        first = page.evaluate(FOCUSED)
        assert first["text"] == "Skip to content", (path, first)
        page.keyboard.press("Enter")
        assert page.evaluate("() => document.activeElement.id") == "content", path
        controls = page.locator("main a:visible, main button:visible, main input:visible")
        if controls.count():
            page.keyboard.press("Tab")
            third = page.evaluate(FOCUSED)  # 3 presses: Tab, Enter, Tab
            assert third["inMain"], (path, third)


@pytest.mark.parametrize("email", sorted(PAGES))
def test_closed_menus_are_no_tab_stops_and_escape_closes_an_open_one(  # type: ignore[no-untyped-def]
    page, live_server, ee290_demo, email: str
) -> None:
    log_in(page, live_server, email)
    page.goto(f"{live_server.url}/c/ee290-sp26/")
    bar = page.locator(".topbar").bounding_box()
    assert bar["height"] < 60, bar  # one row at 1280 px, the course number not cut
    sections = page.locator("#main-nav .nav-group-label")
    n_sections = sections.count()
    assert n_sections >= 3
    items = page.locator("#main-nav .nav-group-items a").count()
    # Walk the whole top bar by Tab: every stop is a link or button of its own, none a page
    # inside a closed section.
    stops = []
    for _ in range(40):
        page.keyboard.press("Tab")
        here = page.evaluate(FOCUSED)
        if here["inMain"]:
            break
        assert not here["closedItem"], here
        stops.append(here["text"])
    assert len(stops) <= 3 + n_sections + 4, stops  # skip link, brand, sections, links, log out
    assert len(stops) < items, (stops, items)  # the closed pages were skipped

    for i, key in enumerate(["Enter", " "]):  # a section opens with Enter and with Space
        button = sections.nth(i)
        button.focus()
        page.keyboard.press(key)
        expect(button).to_have_attribute("aria-expanded", "true")
        group = page.locator(f"#{button.get_attribute('aria-controls')}")
        assert group.is_visible()
        page.keyboard.press("Tab")
        inside = page.evaluate(FOCUSED)
        assert not inside["closedItem"]
        assert inside["text"] == group.locator("a").first.inner_text()
        page.keyboard.press("Escape")
        expect(button).to_have_attribute("aria-expanded", "false")
        assert not group.is_visible()
        assert page.evaluate("() => document.activeElement.classList.contains('nav-group-label')")
    # Opening one section closes the other.
    sections.nth(0).click()
    sections.nth(1).click()
    expect(sections.nth(0)).to_have_attribute("aria-expanded", "false")
    assert sections.nth(1).get_attribute("aria-expanded") == "true"


def test_the_focus_ring_has_3_to_1_contrast_on_the_page_and_the_top_bar(  # type: ignore[no-untyped-def]
    page, live_server, ee290_demo
) -> None:
    log_in(page, live_server, "instructor@example.edu")
    seen = []
    for path in ["/c/ee290-sp26/slack/staff/", "/c/ee290-sp26/checkoffs/"]:
        page.goto(f"{live_server.url}{path}")
        page.keyboard.press("Tab")  # the skip link, on the page's background
        seen.append((path, "skip link", page.evaluate(CONTRAST)))
        page.keyboard.press("Tab")  # the brand, on the top bar
        seen.append((path, "top bar", page.evaluate(CONTRAST)))
        for field in page.locator("main input:visible, main select:visible").all()[:6]:
            field.focus()
            page.keyboard.press("Shift+Tab")
            page.keyboard.press("Tab")  # focus by keyboard: :focus-visible applies
            seen.append((path, field.get_attribute("name") or "?", page.evaluate(CONTRAST)))
    assert len(seen) >= 6
    weak = [(p, what, c) for p, what, c in seen if c["style"] == "none" or c["ratio"] < 3]
    assert weak == []


def test_work_in_progress_is_announced_in_place_not_by_reloading_the_page(  # type: ignore[no-untyped-def]
    page, live_server, ee290_demo
) -> None:
    """The scribing solve's notice is a status region refreshed in place (no meta refresh, so
    focus and reading position stay); when the solve is over the page shows the result."""
    from apps.scribing.models import ScribePlan

    plan, _ = ScribePlan.objects.get_or_create(course=ee290_demo)
    ScribePlan.objects.filter(pk=plan.pk).update(solve_status="solving")
    log_in(page, live_server, "instructor@example.edu")
    page.goto(f"{live_server.url}/c/{ee290_demo.code}/scribing/")
    assert page.locator('meta[http-equiv="refresh"]').count() == 0
    notice = page.locator("#solving")
    assert notice.get_attribute("role") == "status"
    page.evaluate("() => { window.__same = true; }")  # gone if the page is loaded again
    page.wait_for_timeout(6_000)
    assert page.evaluate("() => window.__same === true")  # still the same page: no reload
    ScribePlan.objects.filter(pk=plan.pk).update(solve_status="done")
    notice.wait_for(state="detached", timeout=15_000)  # the result is shown once it is ready


def test_a_refused_score_opens_on_the_error_summary(page, live_server, ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """Typing a score of 150 and pressing Enter: the page comes back with focus on the problem,
    read out as an alert."""
    log_in(page, live_server, "instructor@example.edu")
    page.goto(f"{live_server.url}/c/{ee290_demo.code}/gradebook/")
    form = page.locator("main form.stack")
    form.get_by_label("Student").fill("student01@example.edu")
    form.get_by_label("Percent").fill("150")
    form.get_by_label("Percent").press("Enter")
    page.wait_for_load_state("networkidle")
    focused = page.evaluate(
        "() => [document.activeElement.id, document.activeElement.getAttribute('role'),"
        " document.activeElement.innerText]"
    )
    assert focused[:2] == ["error-summary", "alert"]
    assert "100" in focused[2], focused
