"""The twins of tests/test_api_twins.py for the pages whose items are cards or sections (#68):
one lab's steps, a student's own group, staff's group board, the incidents page and a day's
checkoff schedule, each beside its API with the facts the page writes (a time in course time
with the zone named, a state in the page's words, a count).

`own_text_of` reads a labelled list whose items are named by their own leading text (a member
before the e-mail beside it); `records_of` reads a day's schedule, one row per booking form
with the room (its column's heading) and the slot's line above it."""

from __future__ import annotations

import datetime as dt
from html.parser import HTMLParser
from typing import Any

Item = tuple[str, list[str]]

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class _OwnText(HTMLParser):
    """The `li` children of the element with a given aria-label: [the li's own text before its
    first child element, its whole text]."""

    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label
        self.rows: list[list[str]] = []
        self.found = False
        self._depth = 0
        self._item = 0
        self._lead: list[str] = []
        self._lead_open = False
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        if self._depth == 0:
            if dict(attrs).get("aria-label") == self.label:
                self.found, self._depth = True, 1
            return
        self._depth += 1
        if self._item == 0 and tag == "li":
            self._item, self._lead, self._text, self._lead_open = self._depth, [], [], True
        elif self._item:
            self._lead_open = False

    def handle_endtag(self, tag: str) -> None:
        if self._depth == 0 or tag in VOID:
            return
        if self._item == self._depth:
            self.rows.append(
                [" ".join("".join(self._lead).split()), " ".join("".join(self._text).split())]
            )
            self._item = 0
        self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._item:
            self._text.append(data)
            if self._lead_open:
                self._lead.append(data)


def own_text_of(html: str, label: str) -> list[list[str]]:
    parser = _OwnText(label)
    parser.feed(html)
    assert parser.found, f"no element labelled {label!r} on the page"
    return parser.rows


class _Records(HTMLParser):
    """A day's checkoff schedule: each `form` of class `cls` (one booking) as the row [its id,
    "<column heading> | <the slot's line> | <the form's text>"], a select written as its chosen
    option `[chosen: …]` and a visible input as `[value: …]`."""

    def __init__(self, cls: str) -> None:
        super().__init__()
        self.cls = cls
        self.rows: list[list[str]] = []
        self._h2: list[str] | None = None
        self._heading = ""
        self._in_article = False
        self._slot: list[str] | None = None
        self._slot_line = ""
        self._form: tuple[str, list[str]] | None = None
        self._option: bool | None = None  # inside an option: is it the chosen one

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "h2":
            self._h2 = []
        elif tag == "article":
            self._in_article, self._slot = True, None
        elif tag == "p" and self._in_article and self._form is None and not self._slot_line:
            self._slot = []
        elif tag == "form" and self.cls in (a.get("class") or "").split():
            self._form = (a.get("id") or "", [])
        elif self._form is not None and tag == "option":
            self._option = "selected" in a
            if self._option:
                self._form[1].append(" [chosen: ")
        elif self._form is not None and tag == "input" and a.get("type") != "hidden":
            self._form[1].append(f" [value: {a.get('value') or ''}] ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2" and self._h2 is not None:
            self._heading, self._h2 = " ".join("".join(self._h2).split()), None
        elif tag == "p" and self._slot is not None:
            self._slot_line, self._slot = " ".join("".join(self._slot).split()), None
        elif tag == "article":
            self._in_article, self._slot_line = False, ""
        elif tag == "option" and self._option is not None:
            if self._option and self._form is not None:
                self._form[1].append("] ")
            self._option = None
        elif tag == "form" and self._form is not None:
            ident, text = self._form
            body = " ".join("".join(text).split())
            self.rows.append([ident, f"{self._heading} | {self._slot_line} | {body}"])
            self._form = None

    def handle_data(self, data: str) -> None:
        if self._h2 is not None:
            self._h2.append(data)
        if self._slot is not None:
            self._slot.append(data)
        if self._form is not None and self._option is not False:
            self._form[1].append(data)


def records_of(html: str, cls: str) -> list[list[str]]:
    parser = _Records(cls)
    parser.feed(html)
    return parser.rows


# --- the world's ids these twins need ----------------------------------------------------


def twin_ids(world: Any) -> dict[str, Any]:
    """The group a student's own group page shows, and the course-time day of the world's
    booked checkoff slot (the schedule opens a day)."""
    from apps.checkoffs.models import CheckoffSlot
    from apps.core.timefmt import to_course_tz

    slot = CheckoffSlot.objects.get(pk=world.ids["slot_id"])
    day: dt.date = to_course_tz(slot.starts_at, world.course.timezone).date()
    return {"group_a": world.group_a.pk, "slot_day": day.isoformat()}


# --- the extractors: the API's answer, the role → the items with their facts ----------------


def lab_steps(body: Any, role: str) -> list[Item]:
    """labs/<key>/ as the lab's page: each step's section, named by its title, under its act
    with "step N of M"."""
    steps = body["steps"]
    return [(s["title"], [s["act"], f"· step {s['number']} of {len(steps)}"]) for s in steps]


def my_group(body: Any, role: str) -> list[Item]:
    """groups/<id>/ (the caller's own, in full) as the "My group" card: each member, their
    e-mail and the day they joined (course time)."""
    return [
        (m["name"], [m["email"], f"joined {m['joined_text'].split(',')[0]}"])
        for m in body["members"]
    ]


def group_board(body: Any, role: str) -> list[Item]:
    """groups/ (staff) as the group board: each group's card, named by its name and size, with
    every member's name and e-mail and the join code."""
    out = []
    for g in body:
        facts = [f"{m['name']} {m['email']}" for m in g["members"]]
        facts.append(f"Join code {g['join_code']}")
        out.append((f"{g['name']} {g['size']}", facts))
    return out


def incidents(body: Any, role: str) -> list[Item]:
    """incidents/ as the incidents page's reports: node, summary, state in the page's words,
    who reported it for which group, when it happened (course time, zone named), job IDs,
    and the repro, logs and staff notes the page shows."""
    out = []
    for i in body:
        who = i["reported_by"] + (f" ({i['group']})" if i["group"] else "")
        facts = [
            f"#{i['id']} {i['node']}",
            i["summary"],
            i["status_label"],
            f"{who} · happened {i['occurred_text']} · job IDs {i['job_ids'] or '—'}",
        ]
        facts += [i[k] for k in ("repro", "logs", "staff_notes") if i[k]]
        out.append((f"incident-{i['id']}", facts))
    return out


def schedule(body: Any, role: str) -> list[Item]:
    """checkoffs/bookings/?date= as the day's schedule (per room): each booking's form under
    its room, the slot's start (course time, zone named), sign-up and staff member, the group,
    attendance and outcome as chosen and the notes."""
    return [
        (
            f"b{b['id']}",
            [
                f"{b['location']} | {b['starts_text']} · {b['set_title']} · "
                f"{b['staff'] or 'nobody assigned'} |",
                b["group_name"],
                f"[chosen: {b['attendance_label']}]",
                f"[chosen: {b['outcome_label']}]",
                f"[value: {b['notes']}]",
            ],
        )
        for b in body
    ]
