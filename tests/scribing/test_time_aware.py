"""Scribing in the middle of a term: a lecture already held takes no new scribe (the duty would
be late at once), the duties published on it stay, and students rank only lectures to come."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest
import time_machine
from django.test import Client

from apps.core.errors import DomainError
from apps.core.models import Membership, Role
from apps.scribing import services
from apps.scribing.models import ScribeDuty

pytestmark = pytest.mark.django_db
# Monday 2 March 2026, 09:00 in Berkeley: lectures 1–12 have been held, 13–26 are to come.
MID_TERM = dt.datetime(2026, 3, 2, 17, 0, tzinfo=dt.UTC)


def test_a_mid_term_solve_assigns_only_lectures_still_to_come(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff = Membership.objects.filter(course=course, role=Role.INSTRUCTOR).first().user
    students = services.active_students(course)
    with time_machine.travel(MID_TERM, tick=False):
        result = services.solve(actor=staff, course=course)
        assert result.ok, result.reasons
        services.publish(actor=staff, course=course)
        duties = ScribeDuty.objects.filter(course=course).select_related("lecture")
        assert duties.count() == 2 * len(students)
        assert min(d.lecture.number for d in duties) == 13
        assert all(d.lecture.starts_at > MID_TERM for d in duties)
        assert all(d.due_at > MID_TERM for d in duties)  # nobody is late the day it is posted


def test_published_duties_on_held_lectures_stay_and_count(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff = Membership.objects.filter(course=course, role=Role.INSTRUCTOR).first().user
    students = services.active_students(course)
    with time_machine.travel(dt.datetime(2026, 1, 12, 17, 0, tzinfo=dt.UTC), tick=False):
        services.solve(actor=staff, course=course)
        services.publish(actor=staff, course=course)
    before = set(ScribeDuty.objects.values_list("student_id", "lecture_id"))
    held = {p for p in before if p[1] in _held_ids(course)}
    assert held  # some published duties are on lectures that have been held by mid-term
    held_ids = _held_ids(course)
    mine: dict[int, list[int]] = {}
    for s, lid in before:
        mine.setdefault(s, []).append(lid)
    # A student with one duty behind them and one to come: staff release the one to come.
    victim = next(s for s, lids in mine.items() if len(set(lids) & held_ids) == 1)
    upcoming = ScribeDuty.objects.get(student_id=victim, lecture__starts_at__gt=MID_TERM)
    with time_machine.travel(MID_TERM, tick=False):
        services.release(actor=staff, course=course, duty_id=upcoming.pk)
        result = services.solve(actor=staff, course=course)
        assert result.ok, result.reasons
        services.publish(actor=staff, course=course)
    after = set(ScribeDuty.objects.values_list("student_id", "lecture_id"))
    assert held <= after  # what happened stays
    theirs = ScribeDuty.objects.filter(student_id=victim).select_related("lecture")
    assert theirs.count() == 2  # the held one counts: one more, not two
    assert sum(d.lecture.starts_at > MID_TERM for d in theirs) == 1
    assert len(after) == 2 * len(students)
    assert set(Counter(s for s, _ in after).values()) == {2}


def _held_ids(course) -> set[int]:  # type: ignore[no-untyped-def]
    return set(course.lectures.filter(starts_at__lte=MID_TERM).values_list("pk", flat=True))


def test_students_rank_only_lectures_to_come(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    student = services.active_students(course)[0]
    held = course.lectures.get(number=3)
    later = course.lectures.get(number=20)
    with time_machine.travel(MID_TERM, tick=True):
        with pytest.raises(DomainError, match="have not happened yet"):
            services.preferences_save(student=student, course=course, cannot=[], prefer=[held.pk])
        services.preferences_save(student=student, course=course, cannot=[], prefer=[later.pk])
        c = Client()
        c.force_login(student)
        page = c.get(f"/c/{course.code}/scribing/").content.decode()
        assert "L20" in page or "Lecture 20" in page or later.title in page
        assert held.title not in page
