"""Every page fits a 390 × 844 phone: no horizontal scroll, the menu one tap away, every page of
the menu one more tap away, tap targets at least 44 px.

The pages are not listed by hand: every GET route of the URL configuration (the API, the admin
and the third-party Swagger UI aside) is filled with the ids of the permission matrix's world and
asked for as each role; each that answers 200 with HTML is opened in Chromium at 390 px. A new
page is therefore checked the day its route exists. Screenshots go to test-artifacts/phone-*.png.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from tests.browser.conftest import wider_than_screen
from tests.test_permissions_matrix import _url, all_routes
from tests.world import World, build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
NOT_PAGES = ("api/", "admin/")  # JSON, Django's admin, and the Swagger UI (third-party)
# Query strings that change a page's layout a lot, checked on top of the bare routes.
VARIANTS = {
    "c/<slug:code>/calendar/": ["?view=list", "?month=2026-02"],
    "c/<slug:code>/gradebook/": ["?target=A-"],
    "calc/plan/": ["?model=llama-3-70b&nodes=2&tp=8&pp=2&dp=1"],
    "calc/<slug:name>/": ["?flops=32+GFLOP&bytes_moved=16+GB&gpu=h100-sxm"],
}


@pytest.fixture
def world(ee290_demo) -> World:  # type: ignore[no-untyped-def]
    return build_world(ee290_demo)


@pytest.fixture
def phone(browser, live_server):  # type: ignore[no-untyped-def]
    context = browser.new_context(
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
        timezone_id="UTC",
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def html_pages(world: World, role: str) -> dict[str, str]:
    """{route or route+variant: url} of every page that answers `role` with HTML."""
    client = Client(raise_request_exception=False)
    client.force_login(world.people[role])
    found = {}
    for method, route in all_routes():
        if method != "GET" or route.startswith(NOT_PAGES):
            continue
        url = _url(route, world)
        for variant in ["", *VARIANTS.get(route, [])]:
            response = client.get(url + variant)
            kind = response.get("Content-Type", "")
            if response.status_code == 200 and kind.startswith("text/html"):
                found[route + variant] = url + variant
    return found


def _log_in(phone, live_server, user) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    phone.context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )


def _check(phone, live_server, role: str, pages: dict[str, str]) -> list[str]:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(exist_ok=True)
    problems = []
    for route, path in sorted(pages.items()):
        phone.goto(f"{live_server.url}{path}", wait_until="load")  # server-rendered: laid out
        extra = wider_than_screen(phone)
        if extra > 0:
            problems.append(f"{route}: {extra} px wider than the screen")
        name = re.sub(r"[^a-z0-9]+", "-", route.lower()).strip("-") or "home"
        phone.screenshot(path=str(ARTIFACTS / f"phone-{role}-{name}.png"))  # the first screen
    return problems


@pytest.mark.parametrize(
    ("role", "at_least"), [("student_a", 25), ("student_solo", 25), ("instructor", 45)]
)
def test_every_page_of_every_role_fits_a_phone(  # type: ignore[no-untyped-def]
    phone, live_server, world, role: str, at_least: int
) -> None:
    pages = html_pages(world, role)
    assert len(pages) >= at_least, sorted(pages)  # the walk really found the app's pages
    assert "c/<slug:code>/" in pages  # Today
    _log_in(phone, live_server, world.people[role])
    assert _check(phone, live_server, role, pages) == []


def test_a_route_added_tomorrow_is_checked_too(world, settings) -> None:  # type: ignore[no-untyped-def]
    """The page list comes from the URL configuration: a page nobody listed is found."""
    from django.http import HttpResponse
    from django.urls import clear_url_caches, path

    import courseops.urls

    extra = path("c/<slug:code>/brand-new/", lambda r, code: HttpResponse("<p>new</p>"))
    patterns = [*courseops.urls.urlpatterns, extra]
    module = type(courseops.urls)("phone_test_urls")
    module.urlpatterns = patterns  # type: ignore[attr-defined]
    settings.ROOT_URLCONF = module
    clear_url_caches()
    try:
        assert "c/<slug:code>/brand-new/" in html_pages(world, "student_a")
    finally:
        clear_url_caches()


def test_the_menu_opens_with_one_tap_and_its_links_are_big_enough(
    phone, live_server, world
) -> None:  # type: ignore[no-untyped-def]
    _log_in(phone, live_server, world.people["student_a"])
    phone.goto(f"{live_server.url}/c/{world.ids['code']}/")
    nav = phone.get_by_role("navigation", name="Main")
    assert not nav.is_visible()
    menu = phone.get_by_text("Menu", exact=True)
    assert menu.bounding_box()["height"] >= 44
    menu.tap()
    assert nav.is_visible()
    slack = nav.get_by_role("link", name="Slack days", exact=True)
    assert slack.bounding_box()["height"] >= 44
    with phone.expect_navigation():
        slack.tap()
    assert phone.url.endswith(f"/c/{world.ids['code']}/slack/")
    phone.goto(f"{live_server.url}/c/{world.ids['code']}/incidents/")  # a page with a form
    buttons = phone.locator("main button:visible")
    heights = [buttons.nth(i).bounding_box()["height"] for i in range(buttons.count())]
    assert heights
    assert min(heights) >= 44


def test_a_student_reaches_every_page_of_the_menu_in_two_taps(phone, live_server, world) -> None:  # type: ignore[no-untyped-def]
    """At most 7 entries at the top of a student's menu; on a phone, Menu then the page: two
    taps to each of them, counted by tapping."""
    code = world.ids["code"]
    _log_in(phone, live_server, world.people["student_a"])
    home = f"{live_server.url}/c/{code}/"
    phone.goto(home)
    top = phone.locator("#main-nav > a, #main-nav > .nav-group")
    assert top.count() <= 7, top.all_inner_texts()
    links = phone.locator("#main-nav a")
    targets = [
        (links.nth(i).inner_text(), links.nth(i).get_attribute("href"))
        for i in range(links.count())
    ]
    assert len(targets) >= 15  # every student page of the menu, under its section
    for label, href in targets:
        phone.goto(home)
        taps = 0
        phone.get_by_text("Menu", exact=True).tap()
        taps += 1
        link = phone.locator(f'#main-nav a[href="{href}"]')
        assert link.is_visible(), f"{label} is not visible after opening the menu"
        with phone.expect_navigation():
            link.tap()
        taps += 1
        assert phone.url.split("?")[0].endswith(href), label
        assert taps <= 2


def test_todays_first_screen_on_a_phone_shows_the_next_three_things_to_do(  # type: ignore[no-untyped-def]
    phone, live_server, world
) -> None:
    """390 × 844: without scrolling, a student sees the next three entries of their To do list,
    each a link with its time; the page below holds slack days, node and the rest."""
    _log_in(phone, live_server, world.people["student_a"])
    phone.goto(f"{live_server.url}/c/{world.ids['code']}/")
    items = phone.locator("#today li.todo-item")
    assert items.count() >= 3
    for i in range(3):
        box = items.nth(i).bounding_box()
        assert box["y"] + box["height"] <= 844, f"to-do {i + 1} ends at {box['y'] + box['height']}"
        assert items.nth(i).locator("a").count() >= 1
        assert items.nth(i).locator(".when").count() == 1
    height = phone.evaluate("() => document.body.scrollHeight")
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "today-phone-height.txt").write_text(f"student Today at 390 px: {height} px\n")
    assert height < 4000


def test_a_page_wider_than_the_phone_is_caught_though_the_browser_zooms_it_out(phone) -> None:  # type: ignore[no-untyped-def]
    """A phone browser widens `window.innerWidth` to fit a page that overflows, so comparing
    with it never fails; the layout width does. The 600 px block is what an absolutely placed
    label in a sideways-scrolling table did to the slack page."""
    phone.set_content(
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<div style="width:600px">wide</div>'
    )
    assert phone.evaluate("document.documentElement.scrollWidth - window.innerWidth") == 0
    assert wider_than_screen(phone) >= 600 - 390  # and the body's margin
