"""The what-if counts only what is final. In week 7 of 15, participation so far (10 % of the
grade) is a share of the lectures held: the lectures still to come move it, so the what-if must
take it as still to come, name it in its message, and ask the same of a student who attended
every lecture so far as of one who attended none (#68, as #49 asked)."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.test import Client
from rest_framework.test import APIClient

from apps.calendar.models import Lecture
from apps.core.models import User
from apps.gradebook.services import score_change, scores_apply
from apps.participation.models import ParticipationEvent

pytestmark = pytest.mark.django_db


def _what_if(user: User, code: str) -> tuple[dict, str]:  # type: ignore[type-arg]
    api = APIClient()
    api.force_authenticate(user)
    me = api.get(f"/api/v1/courses/{code}/gradebook/me/?target=B").json()
    page = Client()
    page.force_login(user)
    html = page.get(f"/c/{code}/gradebook/?target=B").content.decode()
    return me, html


def test_participation_so_far_is_still_to_come_in_the_what_if(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    ta = User.objects.get(email="ta1@example.edu")
    keen = User.objects.get(email="student01@example.edu")
    absent = User.objects.get(email="student02@example.edu")
    lectures = list(Lecture.objects.filter(course=course).order_by("starts_at"))
    held = len(lectures) * 7 // 15  # week 7 of 15
    week7 = lectures[held].starts_at - dt.timedelta(hours=1)
    ParticipationEvent.objects.filter(course=course, student__in=[keen, absent]).delete()
    ParticipationEvent.objects.bulk_create(
        ParticipationEvent(
            course=course, student=keen, kind="attendance", occurred_on=lec.starts_at.date()
        )
        for lec in lectures[:held]
    )
    for who in (keen, absent):  # the same staff scores on everything staff enter
        scores_apply(
            actor=ta,
            course=course,
            changes=[
                score_change(
                    course=course, component_key=key, percent="88", student_email=who.email
                )
                for key in ("project-technical", "assignments-core", "assignments-enhancements")
            ],
        )
    with time_machine.travel(week7, tick=False):
        keen_me, keen_html = _what_if(keen, course.code)
        absent_me, absent_html = _what_if(absent, course.code)

    part = next(c for c in keen_me["components"] if c["component"] == "participation")
    assert part["percent"] is not None  # a score so far is shown…
    ahead = len(lectures) - held
    to_come = f"{ahead} of {len(lectures)} lectures not held yet"
    for me, html in ((keen_me, keen_html), (absent_me, absent_html)):
        message = me["what_if"]["message"]
        # …but the what-if names it as still to come, with why
        assert f"Attendance & participation ({to_come})" in message, message
        assert "Counted as still to come:" in message
        assert f"Attendance &amp; participation ({to_come})" in html  # the page says it too
        assert f"So far; still to come: {to_come}" in html
    # and asks the same of both: the lectures so far decide nothing yet
    assert keen_me["what_if"]["needed"] == absent_me["what_if"]["needed"], (
        keen_me["what_if"],
        absent_me["what_if"],
    )


def test_after_the_last_lecture_participation_is_final(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    student = User.objects.get(email="student01@example.edu")
    last = Lecture.objects.filter(course=course).order_by("-starts_at").first()
    assert last is not None
    with time_machine.travel(last.starts_at + dt.timedelta(days=1), tick=False):
        me, _ = _what_if(student, course.code)
    part = next(c for c in me["components"] if c["component"] == "participation")
    assert part["percent"] is not None
    assert "Attendance & participation (" not in (me["what_if"] or {}).get("message", "")
