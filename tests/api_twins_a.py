"""Extractors for the list pages compared in tests/test_api_twins.py (#68, part a): each turns
an API answer into the items a page's table shows, as (the cell that names the item, the facts
the page writes about it)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from apps.core.timefmt import format_short

Item = tuple[str, list[str]]


def slack_deadlines(body: Any, role: str) -> list[Item]:
    """slack/me/'s deadlines as the student's slack page lists them: base and own deadline in
    course time, the extra hours, the relief in words, and the button the row offers."""
    out = []
    for d in body["deadlines"]:
        facts = [d["base_text"], d["effective_text"]]
        if d["extension_hours"]:
            facts.append(f"+{d['extension_hours']} h extension")
        if d["accommodation_hours"]:
            facts.append(f"+{d['accommodation_hours']} h accommodation")
        if d["slack_days"]:
            facts.append(f"+{d['slack_days']} slack day")
        if d["extension_hours"] or d["accommodation_hours"] or d["slack_days"]:
            facts.append(f"Relief: {d['relief']}")
        if d["can_cancel"]:
            facts.append("Cancel slack day")
        elif d["can_apply"]:
            facts.append("Apply slack day")
        out.append((f"{d['assignment']} {d['assignment_title']}", facts))
    return out


def slack_balances(body: Any, role: str) -> list[Item]:
    """slack/balances/ as the staff page's Balances table: group, days left of the allowance,
    the assignments slack was used on."""
    return [
        (
            b["name"] + b["email"],
            [b["group"], f"{b['balance']} / {b['allowance']}", ", ".join(b["used"]) or "—"],
        )
        for b in body
    ]


def milestones_mine(body: Any, role: str) -> list[Item]:
    """milestones/ as a student's page lists their group's milestones: the group's deadline in
    course time, its extension, the status in the page's words, who recorded it and when."""
    out = []
    for group in body:
        for c in group["milestones"]:
            facts = [c["due_text"], c["status_label"]]
            if c["extension_hours"]:
                facts.append(f"+{c['extension_hours']} h extension")
            if c["submitted_text"]:
                facts += [c["submitted_text"], f" by {c['submitted_by_name']}"]
            out.append((c["name"] + c["notes"], facts))
    return out


def milestones_board(body: Any, role: str) -> list[Item]:
    """milestones/ as staff's board: one row a group, each milestone's status in the page's
    words (with its extension)."""
    out = []
    for group in body:
        facts = []
        for c in group["milestones"]:
            facts.append(c["status_label"])
            if c["extension_hours"]:
                facts.append(f"+{c['extension_hours']} h")
        out.append((group["group_name"], facts))
    return out


def when(text: str, iso: str, zone: str) -> str:
    """A table cell's instant as the page writes it (coursewhen): the API's `*_text`, then the
    short form a phone shows."""
    return text + format_short(dt.datetime.fromisoformat(iso), zone)


def scribe_duties(body: Any, role: str) -> list[Item]:
    """scribing/duties/ as a student's "My scribe lectures": the lecture (number, title, start),
    when the notes are due, the status in the page's words and whether it is late."""
    out = []
    for d in body:
        start = when(d["lecture_starts_text"], d["lecture_starts_at"], d["timezone"])
        status = d["status_label"] + (" · late" if d["late"] else "")
        facts = [d["due_text"], status]
        if d["feedback"]:
            facts.append(f"Feedback: {d['feedback']}")
        out.append((f"L{d['lecture_number']} {d['lecture_title']}{start}", facts))
    return out


def checkoff_sets(body: Any, role: str) -> list[Item]:
    """checkoffs/sets/ as the sign-ups page lists them. A student: their group's booking (when
    and where, in course time) and its outcome; staff: kind, slots, groups booked of the live
    groups, book-by, and whether students see it."""
    out = []
    for s in body:
        if role == "student":
            b = s["booking"]
            facts = [f"book by {s['book_by_text']}"] if s["book_by_text"] else []
            if b is None:
                facts.append("not booked")
            else:
                facts += [b["starts_text"], b["location"]]
                if b["staff"]:
                    facts.append(f" · {b['staff']}")
                facts.append(b["outcome_label"] or b["attendance_label"] or "—")
        else:
            facts = [
                s["kind_label"],
                str(s["slots"]),
                f"{s['booked']} of {s['groups']}",
                s["book_by_text"] or "—",
                "yes" if s["published_at"] else "not published",
            ]
        out.append((s["title"], facts))
    return out


def checkoff_outcomes(body: Any, role: str) -> list[Item]:
    """checkoffs/sets/ as the outcomes board's "Per sign-up": groups booked, and passed."""
    return [(s["title"], [str(s["booked"]), str(s["passed"])]) for s in body]


def peer_pairs(body: Any, role: str) -> list[Item]:
    """peer-review/rounds/<id>/assignments/ as staff's completion board: whom each group
    reviews, its review's status in the page's words, late, and when it was last saved."""
    out = []
    for p in body:
        facts = [p["reviewee_name"], p["status_label"]]
        if p["late"]:
            facts.append("late")
        if p["saved_text"]:
            facts.append(p["saved_text"])
        out.append((p["reviewer_name"], facts))
    return out


def state_a(world: Any) -> None:
    """What the pages compared here need beyond the shared state: a peer review saved as a
    draft (so the completion board has a status and a time to compare)."""
    from apps.peerreview.models import PeerAssignment, PeerReview

    pair = PeerAssignment.objects.filter(round_id=world.ids["round_id"]).first()
    PeerReview.objects.create(assignment=pair, clarity=4, updated_by=world.people["student_a"])


def calendar_list(body: Any, role: str) -> list[Item]:
    """calendar/ as the calendar's list view: when (in course time; a day for an all-day
    event) and what (due, kind, title, a milestone's status, description, place). Office hours
    are the page's side panel, not its list."""
    out = []
    for e in body:
        if e["kind"] == "office-hours":
            continue
        start = e["start_text"]
        if not e["all_day"]:
            start = when(start, e["start"], e["timezone"])
        what = ("due " if e["is_deadline"] else "") + f"{e['kind']} {e['title']}"
        what += (f" {e['status']}" if e["status"] else "") + e["description"] + e["location"]
        out.append((f"{start} | {what}", []))
    return out


def labs(body: Any, role: str) -> list[Item]:
    """labs/ as the labs page lists them: the window in course time (or always open), and a
    student's progress or staff's counts."""
    out = []
    for lab in body:
        facts = [lab["opens_text"], lab["closes_text"]] if lab["opens_text"] else ["always"]
        n = lab["steps"]
        if role == "ta":
            facts.append(f"{lab['started']} started · {lab['completed']} completed · {n} steps")
        elif lab["completed_text"]:
            facts.append(f"Completed {lab['completed_text']}")
        elif lab["steps_done"]:
            facts.append(f"{lab['steps_done']} of {n} steps done")
        else:
            facts.append(f"{n} steps")
        out.append((lab["title"] + lab["summary"], facts))
    return out
