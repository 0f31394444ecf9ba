"""Every id a page points at exists on that page, and every table has a header cell: `aria-describedby` (Django points each field
with help text at `<id>_helptext`), `aria-labelledby`, `aria-controls`, `<label for>` and
`<input list>`. A broken reference is invisible to a sighted user and silent to a screen reader,
so it is counted here on every HTML page of the URL conf (the phone test's walk) for a student,
a TA and an instructor, without a browser: the references are in the HTML as served."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.test import Client

from tests.browser.test_phone import html_pages
from tests.world import World, build_world

pytestmark = pytest.mark.django_db
POINTERS = ("aria-describedby", "aria-labelledby", "aria-controls", "for", "list")


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.wanted: list[tuple[str, str, str]] = []  # (tag, attribute, id)
        self.tables: list[list[str]] = []  # open tables: their name and whether a th was seen
        self.headless: list[str] = []  # tables closed without a header cell

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([dict(attrs).get("aria-label") or dict(attrs).get("class") or ""])
        elif tag == "th" and self.tables:
            self.tables[-1].append("th")
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            elif name in POINTERS and value and (name != "for" or tag == "label"):
                self.wanted += [(tag, name, ref) for ref in value.split()]

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self.tables:
            table = self.tables.pop()
            if "th" not in table[1:]:
                self.headless.append(f"<table {table[0]!r}> without a header cell")


def broken_references(html: str) -> list[str]:
    refs = _Refs()
    refs.feed(html)
    refs.close()
    broken = [f"<{tag} {attr}={ref!r}>" for tag, attr, ref in refs.wanted if ref not in refs.ids]
    return broken + refs.headless


def test_the_checker_finds_a_broken_reference_and_a_table_without_headers() -> None:
    page = '<label for="a">A</label><input id="a" aria-describedby="a_helptext">'
    assert broken_references(page) == ["<input aria-describedby='a_helptext'>"]
    assert broken_references(page + '<p id="a_helptext">help</p>') == []
    table = '<table aria-label="Slots"><tr><td>1</td></tr></table>'
    assert broken_references(table) == ["<table 'Slots'> without a header cell"]
    assert broken_references(table.replace("<td>", "<th>").replace("</td>", "</th>")) == []


@pytest.fixture
def world(ee290_demo) -> World:  # type: ignore[no-untyped-def]
    return build_world(ee290_demo)


def test_no_page_points_at_an_id_it_does_not_have(world) -> None:  # type: ignore[no-untyped-def]
    found, scanned = [], 0
    for role in ("student_a", "ta", "instructor"):
        client = Client()
        client.force_login(world.people[role])
        for route, url in sorted(html_pages(world, role).items()):
            scanned += 1
            html = client.get(url).content.decode()
            found += [f"{role} {route}: {b}" for b in broken_references(html)]
    assert scanned >= 100, scanned  # the walk found the pages
    assert found == [], f"{len(found)} broken references:\n" + "\n".join(found)
