"""The twins of tests/test_api_twins.py for the grading, study and people pages (#68): each
page's items as its API gives them, with the facts the page writes beside each (a time in
course time with the zone named, a state, a count, a score, a decision).

Some of these pages show their items as cards or a plain list, not a table: `items_of` reads
those by the container's aria-label, and `table_with_inputs` reads a table whose facts are the
values of its inputs (an editable weight is a fact the page shows)."""

from __future__ import annotations

import datetime as dt
from html.parser import HTMLParser
from typing import Any

from apps.core.numbers import sig

Item = tuple[str, list[str]]

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
HEADINGS = {"h2", "h3", "h4"}


def _num(x: float | None) -> str:
    return sig(x, 4)


class _Items(HTMLParser):
    """The children of the element with a given aria-label that are list items or cards
    (`li`, `section`, `article`, or role=listitem): each becomes a row of two cells, its name
    (its heading, h2–h4; none: its first link; none: its whole text) and its whole text, with
    each visible input's value written as `[value: …]`."""

    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label
        self.rows: list[list[str]] = []
        self.found = False
        self._depth = 0  # depth inside the labelled container (0: outside)
        self._item_depth = 0  # depth at which the current item opened (0: none)
        self._text: list[str] = []
        self._heading: list[str] | None = None
        self._heading_done = False
        self._in_heading = 0
        self._link: list[str] | None = None
        self._in_link = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if self._depth == 0:
            if a.get("aria-label") == self.label and tag not in VOID:
                self.found = True
                self._depth = 1
            return
        if tag == "input" and self._item_depth and a.get("type") != "hidden":
            self._text.append(f" [value: {a.get('value') or ''}] ")
        if tag in ("td", "th") and self._item_depth:
            self._text.append(" | ")
        if tag in VOID:
            return
        self._depth += 1
        if self._item_depth == 0 and (
            tag in ("li", "section", "article") or a.get("role") == "listitem"
        ):
            self._item_depth = self._depth
            self._text, self._heading, self._heading_done = [], None, False
            self._link = None
        elif self._item_depth and tag in HEADINGS and not self._heading_done:
            self._heading, self._in_heading = [], self._depth
        elif self._item_depth and tag == "a" and self._link is None:
            self._link, self._in_link = [], self._depth

    def handle_endtag(self, tag: str) -> None:
        if self._depth == 0 or tag in VOID:
            return
        if self._in_heading == self._depth:
            self._in_heading, self._heading_done = 0, True
        if self._in_link == self._depth:
            self._in_link = 0
        if self._item_depth == self._depth:
            text = " ".join("".join(self._text).split())
            name = self._heading if self._heading is not None else self._link
            self.rows.append([" ".join("".join(name).split()) if name is not None else text, text])
            self._item_depth = 0
        self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._item_depth:
            self._text.append(data)
            if self._in_heading and self._heading is not None:
                self._heading.append(data)
            if self._in_link and self._link is not None:
                self._link.append(data)


def items_of(html: str, label: str) -> list[list[str]]:
    """The cards or list items of the element labelled `label`: [name, whole text] each."""
    parser = _Items(label)
    parser.feed(html)
    assert parser.found, f"no element labelled {label!r} on the page"
    return parser.rows


class _Blocks(HTMLParser):
    """Every element whose class list holds a given class: a row of two cells, its name (the
    text of its first blockquote or heading, else of its first `strong`, else its whole text)
    and its whole text."""

    def __init__(self, cls: str) -> None:
        super().__init__()
        self.cls = cls
        self.rows: list[list[str]] = []
        self._depth = 0
        self._text: list[str] = []
        self._quote: list[str] | None = None
        self._in_quote = False
        self._from_strong = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        if self._depth:
            self._depth += 1
            if tag in ("blockquote", *HEADINGS) and (self._quote is None or self._from_strong):
                self._quote, self._in_quote, self._from_strong = [], True, False
            elif tag == "strong" and self._quote is None:
                self._quote, self._in_quote, self._from_strong = [], True, True
        elif self.cls in (dict(attrs).get("class") or "").split():
            self._depth, self._text, self._quote = 1, [], None

    def handle_endtag(self, tag: str) -> None:
        if not self._depth or tag in VOID:
            return
        if tag in ("blockquote", "strong", *HEADINGS):
            self._in_quote = False
        self._depth -= 1
        if self._depth == 0:
            text = " ".join("".join(self._text).split())
            quote = " ".join("".join(self._quote).split()) if self._quote is not None else text
            self.rows.append([quote, text])

    def handle_data(self, data: str) -> None:
        if self._depth:
            self._text.append(data)
            if self._in_quote and self._quote is not None:
                self._quote.append(data)


def blocks_of(html: str, cls: str) -> list[list[str]]:
    """The blocks of class `cls` (for a page whose items are neither a table nor a labelled
    list): [its name, its whole text] each."""
    parser = _Blocks(cls)
    parser.feed(html)
    return parser.rows


def table_with_inputs(html: str, label: str) -> list[list[str]]:
    """A table's rows as `page_rows` reads them, with each visible input's value written as
    `[value: …]` in its cell (what a reader sees in the box)."""
    from tests.test_api_twins import _Tables

    class Tables(_Tables):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            a = dict(attrs)
            if tag == "input" and self._cell is not None and a.get("type") != "hidden":
                self._cell.append(f" [value: {a.get('value') or ''}] ")
            super().handle_starttag(tag, attrs)

    parser = Tables()
    parser.feed(html)
    assert label in parser.tables, f"no table {label!r} on the page: {sorted(parser.tables)}"
    return parser.tables[label]


# --- the world's state these pages need ----------------------------------------------------


def twin_ids(world: Any) -> dict[str, Any]:
    """The ids a twin's URLs name (the query budgets' placeholders)."""
    return {"run": world.ids["run_id"], "assessment": world.ids["assessment_id"]}


def state_b(world: Any) -> None:
    """What these pages need beyond the shared state: the grading run the twins open is the
    real one the shared state graded (the world's own run never ran)."""
    from apps.autograder.models import GradingRun

    run = (
        GradingRun.objects.filter(
            question_set__course=world.course, question_set__key=world.ids["key"]
        )
        .order_by("-pk")
        .first()
    )
    assert run is not None
    world.ids["run_id"] = run.pk
    # Student A took the world's assessment before the unit (a submitted pre form, 7 points),
    # and its post form is open now until a week from now.
    from django.utils import timezone

    from apps.assessments.models import Administration, Assessment, Response
    from apps.assessments.services import participant_for

    a = Assessment.objects.get(pk=world.ids["assessment_id"])
    p = participant_for(a, world.people["student_a"], create=True)
    pre = Administration.objects.get(assessment=a, phase="pre")
    Response.objects.create(administration=pre, participant=p, status="submitted", total=7)
    now = timezone.now()
    Administration.objects.filter(assessment=a, phase="post").update(
        opens_at=now - dt.timedelta(hours=1), closes_at=now + dt.timedelta(days=7)
    )
    # Group A recorded a run (a seed, a pinned configuration).
    from apps.compute.models import RunRecord

    RunRecord.objects.create(
        course=world.course,
        group=world.group_a,
        created_by=world.people["student_a"],
        title="2-node FSDP, bs 512",
        repository="https://github.com/team/project",
        commit="0123456789abcdef0123",
        config_text="batch_size: 512\n",
        seed=42,
        nodes="2",
    )
    # Staff scored group A's evidence item and its impact.
    from apps.impact import services as impact

    ta, item_id = world.people["ta"], world.ids["impact_item_id"]
    impact.item_score(actor=ta, course=world.course, item_id=item_id, score=80, note="merged")
    impact.group_score(
        actor=ta, course=world.course, group_id=world.group_a.pk, percent=82.5, note="useful"
    )


# --- the extractors: the API's answer, the role → the items with their facts ----------------


def gradebook_components(body: Any, role: str) -> list[Item]:
    from django.template.defaultfilters import floatformat

    out = []
    for c in body["components"]:
        name = ("↳ " if c["parent"] else "") + c["name"] + c["key"]
        out.append(
            (
                name,
                [
                    f"[value: {floatformat(c['weight'], '-2')}]",
                    f"[value: {floatformat(c['satisfactory_threshold'], '-2')}]",
                    c["source_text"],
                ],
            )
        )
    return out


def participation_summary(body: Any, role: str) -> list[Item]:
    from django.template.defaultfilters import floatformat

    from apps.participation.models import KINDS

    out = []
    for s in body:
        counts = " | ".join(str(s["counts"].get(k, 0)) for k, _ in KINDS)
        score = "—" if s["score"] is None else floatformat(s["score"], 1)
        out.append((s["name"] or s["student"], [f"{counts} | {score}"]))
    return out


def checkins(body: Any, role: str) -> list[Item]:
    return [(c["name"], [c["at_text"]]) for c in body["checkins"]]


def questionnaire_people(body: Any, role: str) -> list[Item]:
    out = []
    for p in body:
        facts = [", ".join(p["interests"]) or "—"]
        if p["teammates"]:
            facts.append("wishes: " + ", ".join(p["teammates"]))
        if p["decision"]:
            facts += [f"[chosen: {p['decision_label']}]", p["decided_at_text"]]
        who = (p["name"] or p["student"]) + p["student"]
        out.append((who + ("" if p["answered"] else " · not answered"), facts))
    return out


def run_totals(body: Any, role: str) -> list[Item]:
    return [
        (
            f"{t['name'] or t['email']} {t['email']}",
            [f"{_num(t['score'])} / {_num(t['max'])}"],
        )
        for t in body
    ]


def regrades(body: Any, role: str) -> list[Item]:
    out = []
    for r in body:
        part = f" part {r['part']}" if r["part"] is not None else ""
        head = f"{r['question_set_title']} · {r['question']}{part} — {r['student_name']}"
        facts = [
            f"{r['student']} · asked {r['created_at_text']}",
            f"{_num(r['old_points'])} of {_num(r['question_points'])} points",
        ]
        if r["status"] != "open":
            decided = f" to {_num(r['new_points'])}" if r["new_points"] is not None else ""
            facts.append(f"{r['status_label']}{decided} by {r['decided_by']}")
        out.append((head, facts))
    return out


def written_answers(body: Any, role: str) -> list[Item]:
    out = []
    for g in body:
        n = len(g["students"])
        facts = [f"{n} answer{'s' if n != 1 else ''}"]
        if not g["items"]:
            facts.append("not graded yet")
        out.append((" ".join(g["text"].split()), facts))
    return out


def item_analysis(body: Any, role: str) -> list[Item]:
    return [
        (
            f"{i['question']} {i['goal']}".strip(),
            [f"{_num(i['mean'])} / {_num(i['points'])}", f"{round(i['share_correct'] * 100)} %"],
        )
        for i in body["items"]
    ]


def _score(r: dict[str, Any]) -> str:
    total = f"{_num(r['total'])} points" if r["status"] == "submitted" else r["status_label"]
    return f"{r['phase_label']}: {total}"


def assessments(body: Any, role: str) -> list[Item]:
    out = []
    for a in body:
        facts = [f"{a['question_set_title']} · {a['time_limit_minutes']}-minute limit"]
        if a["published_at"]:
            facts.append("report published")
        facts += [
            f"Take the {f['phase']} quiz open until {f['closes_at_text'] or 'further notice'}"
            for f in a["open_forms"]
        ]
        facts += [_score(r) for r in a["mine"]]
        out.append((a["title"], facts))
    return out


def my_assessment_scores(body: Any, role: str) -> list[Item]:
    return [(_score(r), []) for r in body]


def assessment_forms(body: Any, role: str) -> list[Item]:
    out = []
    for adm in body["administrations"]:
        if adm["opens_at"]:
            window = [adm["opens_at_text"], adm["closes_at_text"] or "open"]
        else:
            window = ["closed"]
        out.append((adm["phase_label"], [*window, str(body["counts"][adm["phase"]])]))
    return out


def impact_evidence(body: Any, role: str) -> list[Item]:
    from django.utils.text import Truncator

    out = []
    for i in body:
        facts = [f"{i['kind_label']} · {i['happened_on_text']}", i["claim"]]
        facts.append(f"added by {i['added_by_name'] or '—'}")
        if i["score"] is not None:
            facts.append(f"staff: {i['score']}/100")
        out.append((Truncator(i["url"]).chars(50), facts))
    return out


def impact_groups(body: Any, role: str) -> list[Item]:
    from django.template.defaultfilters import floatformat

    out = []
    for g in body:
        facts = [] if g["items"] else ["No evidence recorded."]
        if g["percent"] is not None:
            facts += [f"[value: {floatformat(g['percent'], '-2')}]", f"[value: {g['note']}]"]
        out.append((g["name"], facts))
    return out


def proposals(body: Any, role: str) -> list[Item]:
    return [
        (
            f"#{p['id']} {p['status_label']}",
            [f"{', '.join(p['authors'])} · {p['kind_label']} · {p['created_at_text']}"],
        )
        for p in body
    ]


def questionnaire_tallies(body: Any, role: str) -> list[Item]:
    out = []
    for x in body["summary"]:
        facts = [f"{x['answered']} answered · {x['kind_label']}"]
        facts += [f"| {t['option']} | {t['answers']}" for t in x["tally"]]
        out.append((x["prompt"], facts))
    return out


def runs(body: Any, role: str) -> list[Item]:
    out = []
    for r in body:
        facts = [f"{r['repository']} @ {r['commit'][:12]}", f"Seed{r['seed']}"]
        if r["config_sha256"]:
            facts.append(f"sha256 {r['config_sha256'][:16]}…")
        if role == "ta":
            facts.append(f" · {r['group']}")
        out.append((f"#{r['id']} {r['title']}", facts))
    return out


def my_grade(body: Any, role: str) -> list[Item]:
    from django.template.defaultfilters import floatformat

    out = []
    for x in body["lines"]:
        name = ("↳ " if x["part"] else "") + x["name"]
        name += f"{floatformat(x['weight'], '-2')} % of the grade · {x['source_text']}"
        score = "not yet" if x["percent"] is None else x["percent_text"]
        facts = [score + x["detail"]]
        if x["to_come"] and x["percent"] is not None:
            facts.append(f"So far; still to come: {x['to_come']}")
        if x["failing"]:
            facts.append("below the threshold")
        t = x["satisfactory_threshold"]
        facts.append(f"≥ {floatformat(t, '-2')} %" if t else "—")
        out.append((name, facts))
    return out


def gradebook_board(body: Any, role: str) -> list[Item]:
    from django.template.defaultfilters import floatformat

    out = []
    for r in body:
        name = (r["name"] or r["student"]) + (r["group"] or "no group")
        name += "at risk" if r["at_risk"] else ""
        cells = [
            "—"
            if c["percent"] is None
            else ("▼ " if c["below_threshold"] else "") + c["percent_text"]
            for c in r["components"]
        ]
        if r["total"] is not None:
            total = floatformat(r["total"], 1)
        elif r["to_date"] is not None:
            total = f"{floatformat(r['to_date'], 1)} so far"
        else:
            total = "—"
        grade = r["letter"] or r["status"]
        if r["status"] == "fail":
            grade += r["reason"]
        out.append((name, [" | ".join([*cells, total, grade])]))
    return out


def suggested_groups(body: Any, role: str) -> list[Item]:
    out = []
    for n, g in enumerate(body["members"], start=1):
        facts = [f"{m['name']}{', '.join(m['interests']) or 'no interests given'}" for m in g]
        out.append((f"Group {n} {len(g)} people", facts))
    return out
