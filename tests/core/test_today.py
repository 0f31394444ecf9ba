"""Today: what a student must do this week across every app, and what staff must decide, on the
demo's live term; and the menu grouped by what people do (at most 7 entries for a student)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from apps.core.models import Role, User
from apps.core.registry import STAFF_SECTIONS, STUDENT_SECTIONS, nav_for, section_of

pytestmark = pytest.mark.django_db


def _todo(client: Client, code: str) -> str:
    page = client.get(f"/c/{code}/").content.decode()
    return page[page.index('id="today"') : page.index('<div class="panels">')]


def _as(email: str) -> Client:
    c = Client()
    c.force_login(User.objects.get(email=email))
    return c


def test_a_students_today_lists_a_deadline_a_duty_a_booking_and_a_review(ee290_live) -> None:  # type: ignore[no-untyped-def]
    todo = _todo(_as("student01@example.edu"), ee290_live.code)
    kinds = re.findall(r'<span class="badge kind">(\w+)</span>', todo)
    assert {"deadline", "duty", "booking", "review"} <= set(kinds), kinds
    assert "A3 Post-Training Assignment" in todo
    assert "2 slack day(s) left — one more would move it a day" in todo  # Tensor Cores spent one
    assert "Scribe L" in todo
    assert "checkoff — Tensor Cores" in todo
    assert "Review " in todo


def test_a_course_wide_incident_reaches_a_student_of_another_group_without_its_logs(
    ee290_live,
) -> None:  # type: ignore[no-untyped-def]
    # student33 is not in Tensor Cores, whose member reported the node's NCCL timeouts.
    todo = _todo(_as("student33@example.edu"), ee290_live.code)
    assert "NCCL timeouts across nodes" in todo
    assert "affects the whole course" in todo
    page = _as("student33@example.edu").get(f"/c/{ee290_live.code}/incidents/").content.decode()
    assert "GCP is rolling back a firewall change" in page  # the staff note
    assert "Connection closed by remote peer" not in page  # never the logs
    assert "fsdp-a3-0412" not in page  # nor the job IDs


def test_staff_today_lists_what_waits_for_a_decision(ee290_live) -> None:  # type: ignore[no-untyped-def]
    todo = _todo(_as("ta1@example.edu"), ee290_live.code)
    assert "1 late submission(s) slack could not cover" in todo
    assert "1 sharing window(s) to approve" in todo
    assert "1 regrade request(s) waiting" in todo
    assert 'href="/c/ee290-sp26/compute/#pending-windows"' in todo


def test_today_says_when_nothing_is_waiting(ee290) -> None:  # type: ignore[no-untyped-def]
    """The real dates (a term that is over) and nobody's activity: nothing to do, said so."""
    from tests.factories import member

    c = Client()
    c.force_login(member(ee290, Role.TA))
    assert "Nothing waiting" in _todo(c, ee290.code)
    c.force_login(member(ee290, Role.STUDENT))
    assert "Nothing due in the next 7 days." in _todo(c, ee290.code)


def test_the_menu_is_grouped_and_a_student_sees_at_most_7_entries(ee290_live) -> None:  # type: ignore[no-untyped-def]
    for role, sections in ((Role.STUDENT, STUDENT_SECTIONS), (Role.TA, STAFF_SECTIONS)):
        keys = {s.key for s in sections}
        lost = [i.label for i in nav_for(role) if section_of(i, role) not in keys]
        assert lost == [], f"{role}: pages filed under no section: {lost}"
        assert len(sections) <= 7
    page = _as("student01@example.edu").get(f"/c/{ee290_live.code}/").content.decode()
    nav = page[page.index('id="main-nav"') : page.index("</nav>")]
    top = re.findall(r'^    (?:<a href|<div class="nav-group)', nav, flags=re.M)
    assert 5 <= len(top) <= 7
    for label in ("Today", "Calendar", "Group &amp; node", "Coursework", "Grades", "Help"):
        assert f">{label}<" in nav
    staff = _as("instructor@example.edu").get(f"/c/{ee290_live.code}/").content.decode()
    staff_nav = staff[staff.index('id="main-nav"') : staff.index("</nav>")]
    for label in ("People &amp; groups", "Compute", "Deadlines &amp; slack", "Grading"):
        assert f">{label}<" in staff_nav
    assert ">Admin<" in staff_nav  # the instructor is a Django staff user


def test_help_lists_every_menu_page_and_the_rules(ee290_live) -> None:  # type: ignore[no-untyped-def]
    page = _as("student01@example.edu").get(f"/c/{ee290_live.code}/help/").content.decode()
    assert "Where things are" in page
    assert "3 for the term, at most 1 per assignment" in page
    for label in ("Slack days", "My node", "Scribing", "Peer review", "Checkoffs", "API tokens"):
        assert f">{label}</a>" in page


def test_a_lab_closing_this_week_is_on_a_students_today(ee290_live) -> None:  # type: ignore[no-untyped-def]
    """The live term's Lab 09 window (with A3) closes within the week: student01, who has not
    started it, sees it with the steps left; a student who finished it does not."""
    import datetime as dt

    from django.utils import timezone

    from apps.labs.models import CourseLab

    CourseLab.objects.filter(course=ee290_live).update(
        closes_at=timezone.now() + dt.timedelta(days=3)
    )
    todo = _todo(_as("student01@example.edu"), ee290_live.code)
    assert "Lab 09: You can&#x27;t optimize what you can&#x27;t measure: 0 of 4 steps done" in todo


def test_a_deadline_is_one_entry_however_many_apps_speak_of_it(ee290_live) -> None:  # type: ignore[no-untyped-def]
    """A3 is due this week and has an unanswered question set: the slack days' deadline leads,
    the questions sit under it, and nothing else on the page lists A3 open (the deadline
    tables fold, the week panel is staff's)."""
    from apps.autograder.models import Question, QuestionSet
    from apps.calendar.models import Assignment

    a3 = Assignment.objects.get(course=ee290_live, code="A3")
    qs = QuestionSet.objects.create(
        course=ee290_live, key="a3-numbers", title="A3 numbers", assignment=a3
    )
    for i in (1, 2):
        Question.objects.create(
            question_set=qs, key=f"q{i}", position=i, kind="numeric", prompt="?"
        )
    page = _as("student01@example.edu").get(f"/c/{ee290_live.code}/").content.decode()
    todo = page[page.index('id="today"') : page.index('<div class="panels">')]
    entries = re.findall(r'<li class="todo-item.*?</li>', todo, flags=re.S)
    with_a3 = [e for e in entries if "A3" in e]
    assert len(with_a3) == 1, with_a3
    assert "A3 Post-Training Assignment" in with_a3[0]
    assert "A3 numbers: 2 of 2 unanswered" in with_a3[0]
    assert 'id="panel-next-7-days"' not in page
    rest = page[page.index('<div class="panels">') :]
    open_part = re.sub(r"<details.*?</details>", "", rest, flags=re.S)
    assert "A3" not in open_part
    times = re.findall(r'<span class="when">(.*?)</span>', todo)
    assert len(times) == len(entries)  # every student entry has its time


def test_todays_entries_are_in_time_order_with_urgency_in_words(ee290_live) -> None:  # type: ignore[no-untyped-def]
    import datetime as dt

    from django.utils import timezone

    from apps.core.registry import TodayItem, today_merge

    now = timezone.now()
    page = _as("student01@example.edu").get(f"/c/{ee290_live.code}/")
    todo = page.context["todo"]
    whens = [t.when for t in todo]
    assert whens == sorted(whens), [t.title for t in todo]
    html = _todo(_as("student01@example.edu"), ee290_live.code)
    for entry in re.findall(r'<li class="todo-item urgent">.*?</li>', html, flags=re.S):
        assert '<span class="badge warn">' in entry  # said in words, not by the red bar alone
    soon = now + dt.timedelta(hours=3)
    merged = today_merge(
        [
            TodayItem("assignment", "A9 Base", "/c", when=soon, subject="a:A9", fallback=True),
            TodayItem("questions", "A9 numbers", "/q", when=soon, subject="a:A9"),
            TodayItem("deadline", "A9 Lead", "/s", when=soon, subject="a:A9"),
            TodayItem("duty", "Scribe", "/d", when=soon),
            TodayItem("milestone", "M only", "/m", when=soon, subject="m:1", fallback=True),
        ]
    )
    assert [(m.title, [a.title for a in m.also]) for m in merged] == [
        ("A9 numbers", ["A9 Lead"]),
        ("Scribe", []),
        ("M only", []),
    ]


def test_a_groups_milestone_is_on_today_until_recorded_and_moves_with_its_extension() -> None:
    """The milestone item reads the course's cached calendar and the group's records (shared
    with the deadlines panel): due in three days it shows; an extension past the week takes it
    off; once any member records it, it is gone; another group's record does not count."""
    import datetime as dt

    from django.utils import timezone

    from apps.milestones.models import GroupMilestone
    from tests.factories import CourseFactory, MilestoneFactory, group_of

    course = CourseFactory()
    ours, theirs = group_of(course, 2), group_of(course, 2)
    report = MilestoneFactory(
        course=course,
        name="Mid-term report",
        tracked=True,
        due_at=timezone.now() + dt.timedelta(days=3),
    )
    MilestoneFactory(course=course, name="Untracked talk", tracked=False)
    student = ours.memberships.first().user  # type: ignore[union-attr]
    client = Client()
    client.force_login(student)

    def shown() -> bool:
        return "Mid-term report" in _todo(client, course.code)

    GroupMilestone.objects.create(
        course=course, milestone=report, group=theirs, submitted_at=timezone.now()
    )
    assert shown()
    assert "Untracked talk" not in _todo(client, course.code)
    record = GroupMilestone.objects.create(
        course=course, milestone=report, group=ours, extension_hours=24 * 5
    )
    assert not shown()  # due in eight days for this group: not this week's
    record.extension_hours = 0
    record.submitted_at = timezone.now()
    record.save()
    assert not shown()
