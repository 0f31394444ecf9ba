"""Every id a page points at exists on that page, every table has a header cell and every chart
its numbers as a table beside it: `aria-describedby` (Django points each field
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


class _Charts(HTMLParser):
    """Each <section> (or the page, outside any) that draws a chart (`<svg role="img">`) must
    also hold its numbers as text (WCAG 1.1.1): a table, visible or in a <details>, or a
    <desc> listing them that the chart is labelled by (the calculator's pattern)."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[list[str]] = [["the page", "", ""]]  # [name, charts, tables]
        self.chart: dict[str, object] | None = None  # the <svg> being read
        self.bare: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section":
            self.open.append([a.get("id") or a.get("aria-labelledby") or "a section", "", ""])
        elif tag == "svg" and a.get("role") == "img":
            labels = set((a.get("aria-labelledby") or "").split())
            self.chart = {"name": a.get("aria-label") or "", "labels": labels, "desc": False}
        elif tag == "desc" and self.chart is not None and a.get("id") in self.chart["labels"]:
            self.chart["desc"] = True
        elif tag == "table":
            self.open[-1][2] += "t"

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg" and self.chart is not None:
            if not self.chart["desc"]:
                self.open[-1][1] += "c"
            self.chart = None
        elif tag == "section" and len(self.open) > 1:
            self._close(self.open.pop())

    def close(self) -> None:
        super().close()
        while self.open:
            self._close(self.open.pop())

    def _close(self, block: list[str]) -> None:
        if block[1] and not block[2]:
            self.bare.append(f"chart in {block[0]!r} without its numbers as a table")


def charts_without_numbers(html: str) -> list[str]:
    charts = _Charts()
    charts.feed(html)
    charts.close()
    return charts.bare


def broken_references(html: str) -> list[str]:
    refs = _Refs()
    refs.feed(html)
    refs.close()
    broken = [f"<{tag} {attr}={ref!r}>" for tag, attr, ref in refs.wanted if ref not in refs.ids]
    return broken + refs.headless + charts_without_numbers(html)


def test_the_checker_finds_a_broken_reference_and_a_table_without_headers() -> None:
    page = '<label for="a">A</label><input id="a" aria-describedby="a_helptext">'
    assert broken_references(page) == ["<input aria-describedby='a_helptext'>"]
    assert broken_references(page + '<p id="a_helptext">help</p>') == []
    table = '<table aria-label="Slots"><tr><td>1</td></tr></table>'
    assert broken_references(table) == ["<table 'Slots'> without a header cell"]
    assert broken_references(table.replace("<td>", "<th>").replace("</td>", "</th>")) == []
    chart = '<section id="s"><svg role="img" aria-label="Bars"></svg></section>'
    assert broken_references(chart) == ["chart in 's' without its numbers as a table"]
    numbers = "<details><table><tr><th>A</th><td>3</td></tr></table></details>"
    assert broken_references(chart.replace("</section>", numbers + "</section>")) == []
    described = '<svg role="img" aria-labelledby="t d"><title id="t">B</title><desc id="d">A: 3'
    assert broken_references(f"{described}</desc></svg>") == []
    unreferenced = '<svg role="img" aria-label="B"><desc id="d">12 values</desc></svg>'
    assert broken_references(unreferenced) == ["chart in 'the page' without its numbers as a table"]


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
