"""Every button that takes something away asks first. The pages are not listed by hand: every
POST form on every page of the URL conf (the phone test's walk), as a student, a TA and an
instructor, whose action's URL name says it removes, deletes, dissolves, revokes, destroys,
releases, withdraws, cancels, leaves or unfreezes something must either ask in the browser
(`data-confirm`, which `courseops.js` turns into a dialog), carry a `confirm` box the person
ticks, or be the page's own form on a page that is itself the question (the dissolve and revoke
pages, reached by a link). Releasing results to students is not in the list: a button beside it
hides them again."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import Resolver404, resolve

from tests.browser.test_phone import html_pages
from tests.formwalk import WALKERS, post_forms
from tests.world import World, build_world

pytestmark = pytest.mark.django_db
TAKES_AWAY = re.compile(
    r"(remove|delete|dissolve|revoke|destroy|release|withdraw|cancel|leave|unfreeze)"
)
UNDONE_BY_A_BUTTON = {"release"}  # the autograder's results: "Hide results from students"


def forms_that_take_away(html: str, page_url: str) -> list[tuple[str, bool]]:
    found = []
    for form in post_forms(html, page_url):
        try:
            name = resolve(urlsplit(form.action).path).url_name or ""
        except Resolver404:
            continue
        if TAKES_AWAY.search(name) and name not in UNDONE_BY_A_BUTTON:
            is_the_question = urlsplit(form.action).path == urlsplit(page_url).path
            found.append((f"{name} ({form.action})", form.asks or is_the_question))
    return found


@pytest.fixture
def world(ee290_demo) -> World:  # type: ignore[no-untyped-def]
    return build_world(ee290_demo)


def test_the_check_tells_a_form_that_asks_from_one_that_does_not() -> None:
    bare = '<form method="post" action="/accounts/tokens/1/revoke/"><button>x</button></form>'
    assert forms_that_take_away(bare, "/accounts/tokens/") == [
        ("token-revoke (/accounts/tokens/1/revoke/)", False)
    ]
    asks = bare.replace('method="post"', 'method="post" data-confirm="Revoke?"')
    assert forms_that_take_away(asks, "/accounts/tokens/") == [
        ("token-revoke (/accounts/tokens/1/revoke/)", True)
    ]
    ticks = bare.replace("<button>", '<input type="checkbox" name="confirm" required><button>')
    assert forms_that_take_away(ticks, "/accounts/tokens/")[0][1] is True
    assert forms_that_take_away(bare.replace("revoke", "create"), "/accounts/tokens/") == []


def test_every_button_that_takes_something_away_asks_first(world) -> None:  # type: ignore[no-untyped-def]
    bare, checked = set(), 0
    for role in WALKERS:
        client = Client()
        client.force_login(world.people[role])
        for route, url in sorted(html_pages(world, role).items()):
            for action, asks in forms_that_take_away(client.get(url).content.decode(), url):
                checked += 1
                if not asks:
                    bare.add(f"{role} on {route}: {action}")
    assert checked >= 20, checked  # the walk found such buttons
    assert bare == set(), f"{len(bare)} ask nothing:\n" + "\n".join(sorted(bare))
