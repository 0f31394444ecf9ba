"""Every id a page points at exists on that page, every page has a title of its own, every table
has a header cell and every chart its numbers as a table beside it: `aria-describedby` (Django
points each field with help text at `<id>_helptext`), `aria-labelledby`, `aria-controls`,
`<label for>` and `<input list>`. A broken reference is invisible to a sighted user and silent to a screen reader,
so it is counted here on every HTML page of the URL conf (the phone test's walk) for a student,
a TA and an instructor, without a browser: the references are in the HTML as served. The same
walk then sends each page's POST forms empty, and counts the references of the pages that come
back with errors."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.db import transaction
from django.test import Client

from tests.browser.test_phone import html_pages
from tests.formwalk import WALKERS, PostForm, post_forms
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


def test_no_page_points_at_an_id_it_does_not_have_or_goes_untitled(world) -> None:  # type: ignore[no-untyped-def]
    found, scanned = [], 0
    for role in WALKERS:
        client = Client()
        client.force_login(world.people[role])
        titles: dict[str, str] = {}
        for route, url in sorted(html_pages(world, role).items()):
            scanned += 1
            html = client.get(url).content.decode()
            found += [f"{role} {route}: {b}" for b in broken_references(html)]
            match = re.search(r"<title>(.*?)</title>", html, re.S)
            title = match.group(1).strip() if match else "(none)"
            page = route.split("?")[0]  # a page's variants share its title
            # WCAG 2.4.2: a tab, a history entry and a screen reader tell pages apart by title.
            first = titles.setdefault(title, page)
            if title.split(" · ")[0] == "courseops":  # base.html's default: no title block
                found.append(f"{role} {route}: no <title> of its own")
            elif first != page:
                found.append(f"{role} {route}: the <title> {title!r} of {first}")
    assert scanned >= 100, scanned  # the walk found the pages
    assert found == [], f"{len(found)} problems:\n" + "\n".join(found)


class _Summary(HTMLParser):
    """A refused page's invalid fields and its error summary (`#error-summary`, focusable by
    script: tabindex=-1) with the fields it links to."""

    def __init__(self) -> None:
        super().__init__()
        self.invalid: list[str] = []
        self.summary = False
        self.linked: set[str] = set()
        self.depth = 0  # > 0 inside the summary

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("aria-invalid") == "true":
            self.invalid.append(a.get("id") or f"<{tag} name={a.get('name')!r}>")
        if a.get("id") == "error-summary":
            self.summary = a.get("tabindex") == "-1" and a.get("role") == "alert"
            self.depth = 1
        elif self.depth and tag not in VOID:
            self.depth += 1
        if self.depth and tag == "a" and (a.get("href") or "").startswith("#"):
            self.linked.add((a.get("href") or "")[1:])

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag not in VOID:
            self.depth -= 1


def summary_problems(html: str) -> list[str]:
    """What a refused page lacks (WCAG 3.3.1): an error summary that takes focus, with a link to
    every field marked invalid. [] for a page with no invalid field."""
    summary = _Summary()
    summary.feed(html)
    summary.close()
    if not summary.invalid:
        return []
    if not summary.summary:
        return [f"no focusable error summary for {', '.join(summary.invalid)}"]
    # One link names a group of choices: `#id_nodes_0` (or the group's `#pred-2`) for each of
    # id_nodes_0, id_nodes_1, …
    linked = {re.sub(r"_\d+$", "", f) for f in summary.linked}
    return [
        f"{f} not linked from the error summary"
        for f in summary.invalid
        if re.sub(r"_\d+$", "", f) not in linked
    ]


def test_the_summary_check_wants_a_link_to_each_refused_field() -> None:
    field = '<input id="id_days" aria-invalid="true">'
    assert summary_problems(field) == ["no focusable error summary for id_days"]
    summary = '<div id="error-summary" role="alert" tabindex="-1"><ul><li>{}</li></ul></div>'
    assert summary_problems(summary.format("Days: required") + field) == [
        "id_days not linked from the error summary"
    ]
    linked = summary.format('<a href="#id_days">Days: required</a>')
    assert summary_problems(linked + field) == []
    assert summary_problems('<input id="id_days">') == []
    group = '<input id="id_nodes_0" aria-invalid="true"><input id="id_nodes_1" aria-invalid="true">'
    assert summary_problems(summary.format('<a href="#id_nodes_0">Nodes</a>') + group) == []


def test_the_walk_reads_a_pages_post_forms() -> None:
    page = (
        '<form method="get"><input name="q"></form><form method="post">'
        '<input type="hidden" name="csrfmiddlewaretoken" value="t"><input type="hidden" '
        'name="phase" value="pre"><input name="opens_at"><select name="kind"></select></form>'
        '<form method="post" action="../x/" data-confirm="Sure?"><button>Go</button></form>'
        '<form method="post" action="y/"><input type="checkbox" name="confirm" required></form>'
    )
    assert post_forms(page, "/c/a/b/") == [
        PostForm("/c/a/b/", {"phase": "pre"}, ["opens_at", "kind"], asks=False),
        PostForm("/c/a/x/", asks=True),
        PostForm("/c/a/b/y/", fields=["confirm"], asks=True),
    ]


def test_a_form_sent_empty_comes_back_with_every_reference_it_makes(world) -> None:  # type: ignore[no-untyped-def]
    """Each POST form on every page, sent as if its button were pressed with nothing filled in.
    A page that comes back with a refused field opens on its error summary (WCAG 3.3.1:
    `#error-summary`, focused by script) linking to every field marked invalid.
    Where the page comes back (or redirects back) with the form's errors, Django points each
    refused field at `<id>_error` (WCAG 3.3.1: the reason is read with the field); a template
    that writes the message without that id leaves a screen reader user with "invalid" and no
    reason (`core/_field_errors.html` writes it). Each post runs in a savepoint that is rolled
    back, so one form's action does not change the next page; none may answer 5xx."""
    found, refused = [], 0
    for role in WALKERS:
        client = Client(raise_request_exception=False)
        client.force_login(world.people[role])
        sent = {"/accounts/logout/"}  # the menu's log-out form would end the walk
        for route, url in sorted(html_pages(world, role).items()):
            for form in post_forms(client.get(url).content.decode(), url):
                action = form.action
                if action in sent:
                    continue
                sent.add(action)
                with transaction.atomic():
                    response = client.post(action, form.hidden, follow=True)
                    transaction.set_rollback(True)
                kind = response.get("Content-Type", "")
                if response.status_code >= 500:  # an empty post is bad input, never a crash
                    found.append(f"{role} {route} → {action}: {response.status_code}")
                if response.status_code in (200, 400) and kind.startswith("text/html"):
                    html = response.content.decode()
                    refused += 'aria-invalid="true"' in html
                    problems = broken_references(html) + summary_problems(html)
                    found += [f"{role} {route} → {action}: {b}" for b in problems]
    assert refused >= 10, refused  # the walk reached forms that refuse an empty post
    assert found == [], f"{len(found)} broken references:\n" + "\n".join(found)


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
SELF_EXPLAINED = {"hidden", "submit", "button", "checkbox", "radio", "reset", "image"}


class _Help(HTMLParser):
    """The fields of a page's forms (POST, and the GET ones that search and filter) that a
    person types or picks in, each with the text of
    the elements its `aria-describedby` names (its help, read with it)."""

    def __init__(self) -> None:
        super().__init__()
        self.text: dict[str, str] = {}
        self.stack: list[tuple[str, str | None]] = []  # open elements: (tag, id)
        self.in_form = False
        self.fields: list[tuple[str, str, list[str]]] = []  # (tag, name, described by)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self.in_form = True
        typed = (a.get("type") or "text") not in SELF_EXPLAINED
        if self.in_form and tag in ("input", "select", "textarea") and typed:
            by = (a.get("aria-describedby") or "").split()
            self.fields.append((tag, a.get("name") or "?", by))
        if tag not in VOID:
            self.stack.append((tag, a.get("id")))
            if a.get("id"):
                self.text.setdefault(a["id"], "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.in_form = False
        while self.stack:
            open_tag, _ = self.stack.pop()
            if open_tag == tag:
                break

    def handle_data(self, data: str) -> None:
        for _, element_id in self.stack:
            if element_id:
                self.text[element_id] += data


def fields_without_help(html: str) -> list[str]:
    page = _Help()
    page.feed(html)
    page.close()
    return [
        f"<{tag} name={name!r}>"
        for tag, name, by in page.fields
        if not any(page.text.get(ref, "").strip() for ref in by)
    ]


def test_the_help_check_reads_the_text_a_field_points_at() -> None:
    form = '<form method="post"><label for="a">A</label><input id="a" name="a"{}>{}</form>'
    assert fields_without_help(form.format("", "")) == ["<input name='a'>"]
    assert fields_without_help(form.format(' aria-describedby="h"', '<p id="h"> </p>')) == [
        "<input name='a'>"
    ]
    helped = form.format(' aria-describedby="h"', '<p id="h">Your <b>group</b> name.</p>')
    assert fields_without_help(helped) == []
    searched = '<form method="get"><label for="q">Search</label><input id="q" name="q"></form>'
    assert fields_without_help(searched) == ["<input name='q'>"]  # a filter's field too


def test_every_field_of_every_form_points_at_its_help(world) -> None:  # type: ignore[no-untyped-def]
    """A TA setting a weight or a student picking a lecture to swap reads what the field wants
    and in what form, with the field, on every form as each role sees it: the POST forms, and
    the GET forms that search and filter a list or plan a layout (checkboxes and
    radio buttons are explained by their own label)."""
    found, fields = set(), 0
    for role in WALKERS:
        client = Client()
        client.force_login(world.people[role])
        for route, url in sorted(html_pages(world, role).items()):
            html = client.get(url).content.decode()
            page = _Help()
            page.feed(html)
            fields += len(page.fields)
            found |= {f"{route}: {f}" for f in fields_without_help(html)}
    assert fields >= 100, fields  # the walk found the forms
    assert found == set(), f"{len(found)} fields without help:\n" + "\n".join(sorted(found))
