"""Whatever a person types, a form answers with a page, never a server error. Every POST form on
every page of the URL conf (the phone test's walk), as a student, a TA and an instructor, is sent
with every field it shows filled with one kind of junk at a time: text far past any column's
length, a number past any column's range, a date that is no date, a date at the end of the
calendar, "NaN", a NUL byte. Each post
runs in a savepoint that is rolled back, so one form's action does not change the next page.

Found by this walk when it was written: a 5,000-character link to scribe notes and a 25-digit
"scribes needed" or group-suggestion seed each answered 500 (the database refused the value), and
a deadline on 9999-12-31 overflowed in UTC on the assignment, milestone and scribing forms."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.test import Client

from tests.browser.test_phone import html_pages
from tests.formwalk import WALKERS, post_forms
from tests.world import World, build_world

pytestmark = pytest.mark.django_db
JUNK = ("x" * 5000, "9" * 25, "2026-13-45T25:61", "9999-12-31T23:59", "NaN", "a\x00b")


@pytest.fixture
def world(ee290_demo) -> World:  # type: ignore[no-untyped-def]
    return build_world(ee290_demo)


def test_no_form_answers_junk_with_a_server_error(world) -> None:  # type: ignore[no-untyped-def]
    crashed, posts = set(), 0
    for role in WALKERS:
        client = Client(raise_request_exception=False)
        client.force_login(world.people[role])
        sent = {"/accounts/logout/"}  # the menu's log-out form would end the walk
        for url in sorted(html_pages(world, role).values()):
            for form in post_forms(client.get(url).content.decode(), url):
                if form.action in sent or not form.fields:
                    continue
                sent.add(form.action)
                for junk in JUNK:
                    with transaction.atomic():
                        data = {**form.hidden, **dict.fromkeys(form.fields, junk)}
                        status = client.post(form.action, data).status_code
                        transaction.set_rollback(True)
                    posts += 1
                    if status >= 500:
                        crashed.add(f"{role} {form.action} with {junk[:12]!r}…: {status}")
    assert posts >= 300, posts  # the walk reached the forms
    assert crashed == set(), f"{len(crashed)} server errors:\n" + "\n".join(sorted(crashed))
