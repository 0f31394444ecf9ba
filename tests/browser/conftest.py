"""Playwright on Debian's Chromium against pytest-django's live server.

Every request that leaves 127.0.0.1 is aborted and recorded, so a page that needs a CDN fails.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest

from tests.conftest import CHROMIUM

# Playwright's sync API runs an event loop in this thread; the ORM calls in tests are still
# synchronous and safe here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing")  # the browser marker turns this into a failure in CI
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, live_server):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="UTC")
    pg = context.new_page()
    pg.external_requests = []  # type: ignore[attr-defined]

    def route(r):  # type: ignore[no-untyped-def]
        host = urlparse(r.request.url).hostname
        if host in {"127.0.0.1", "localhost"}:
            return r.continue_()
        pg.external_requests.append(r.request.url)  # type: ignore[attr-defined]
        return r.abort()

    pg.route("**/*", route)
    pg.set_default_timeout(15_000)
    yield pg
    context.close()


def log_in(page, live_server, email: str, password: str = "courseops-demo") -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state("networkidle")


def open_from_menu(page, section: str, link: str) -> None:  # type: ignore[no-untyped-def]
    """Reach a page as a person does on a laptop: click its menu section (a disclosure button:
    the click opens it), then the page in it."""
    nav = page.get_by_role("navigation", name="Main")
    nav.get_by_role("button", name=section, exact=True).click()
    nav.get_by_role("link", name=link, exact=True).click()
    page.wait_for_load_state("networkidle")


TAB_TARGET = """() => {
  const e = document.activeElement;
  const label = e.labels && e.labels.length ? e.labels[0].innerText : '';
  const name = (e.getAttribute('aria-label') || label || e.innerText || e.value || '').trim();
  const style = getComputedStyle(e);
  return {name, tag: e.tagName, id: e.id, ring: style.outlineStyle !== 'none'
          && parseFloat(style.outlineWidth) >= 2};
}"""


def tab_to(page, text: str, *, limit: int = 150) -> int:  # type: ignore[no-untyped-def]
    """Press Tab until the focused control's name holds `text`; the presses it took. Every stop
    on the way must show a focus ring (WCAG 2.4.7)."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        now = page.evaluate(TAB_TARGET)
        assert now["ring"], f"no visible focus on {now}"
        if text in now["name"]:
            return presses
    raise AssertionError(f"{text!r} not reached in {limit} Tab presses")


def skip_to_content(page) -> None:  # type: ignore[no-untyped-def]
    """The first Tab reaches the skip link; Enter moves on to the page's content."""
    page.keyboard.press("Tab")
    assert "Skip to content" in page.evaluate(TAB_TARGET)["name"]
    page.keyboard.press("Enter")


def wider_than_screen(page) -> int:  # type: ignore[no-untyped-def]
    """How many pixels the page is wider than the screen it is laid out for. Measured against
    the layout width (`clientWidth`), never `window.innerWidth`: a phone browser widens
    innerWidth to the overflowing page (zooming it out), so that difference is 0 exactly when
    the page scrolls sideways."""
    return int(
        page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
    )
