"""A first look, as `make run` gives it: the demo course in a live term (today in week 7), then
every page a student, a TA and the instructor reach by following links from the course home
answers without a server error.

`make test` runs this file twice: in the suite on PostgreSQL and once more on SQLite, the
database `make run` uses, where a query PostgreSQL accepts can fail (interval arithmetic,
datetimes sent as text)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from apps.core.models import User

pytestmark = pytest.mark.django_db
LINK = re.compile(r'href="(/c/[^"#?]*)"')
SKIP = ("/logout", ".csv", ".ics", "/export", "/download")


def _crawl(client: Client, start: str, limit: int = 250) -> dict[str, int]:
    seen: dict[str, int] = {}
    todo = [start]
    while todo and len(seen) < limit:
        url = todo.pop(0)
        if url in seen or any(s in url for s in SKIP):
            continue
        response = client.get(url)
        seen[url] = response.status_code
        if response.status_code == 200 and "html" in response.get("Content-Type", ""):
            todo += LINK.findall(response.content.decode())
    return seen


@pytest.mark.parametrize(
    ("email", "at_least"),
    [("student01@example.edu", 15), ("ta1@example.edu", 40), ("instructor@example.edu", 40)],
)
def test_every_linked_page_of_the_demo_answers_without_a_server_error(
    ee290_live, email: str, at_least: int
) -> None:
    client = Client()
    client.force_login(User.objects.get(email=email))
    seen = _crawl(client, f"/c/{ee290_live.code}/")
    assert len(seen) >= at_least, sorted(seen)  # the crawl really went through the app
    assert {u: s for u, s in seen.items() if s >= 500} == {}
    assert seen[f"/c/{ee290_live.code}/"] == 200
