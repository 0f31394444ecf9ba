"""Today's per-course sources (the lab windows, the unreleased question sets) are cached under
the course's version (#73): read from Redis on the next request, and every change a student
would notice — a deadline moved, a question added, a set released, a lab window or the whole
term moved — shows on the next Today."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.autograder.models import Question, QuestionSet
from apps.autograder.today import _unreleased_sets
from apps.core.models import Course, Role
from apps.labs.models import CourseLab
from apps.labs.today import _windows
from apps.setup.liveterm import move_term
from apps.slackdays.moves import assignment_update
from tests.factories import AssignmentFactory, CourseFactory, member

pytestmark = [pytest.mark.redis, pytest.mark.django_db]
LAB = "lab09-perf-engr"


def _today(client: Client, course: Course) -> str:
    page = client.get(f"/c/{course.code}/").content.decode()
    return page[page.index('id="today"') : page.index('<div class="panels">')]


def _login(user) -> Client:  # type: ignore[no-untyped-def]
    c = Client()
    c.force_login(user)
    return c


def test_a_question_sets_line_follows_its_questions_its_deadline_and_its_release(
    redis_cache,
) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    staff = member(course, Role.INSTRUCTOR)
    student = _login(member(course))
    a = AssignmentFactory(course=course, code="A1", due_at=timezone.now() + dt.timedelta(days=3))
    s = QuestionSet.objects.create(
        course=course, key="a1-numbers", title="A1 numbers", assignment=a
    )
    for i in (1, 2):
        Question.objects.create(question_set=s, key=f"q{i}", position=i, kind="numeric", prompt="?")
    assert "A1 numbers: 2 of 2 unanswered" in _today(student, course)
    again = Course.objects.get(pk=course.pk)
    with CaptureQueriesContext(connection) as ctx:
        assert [x.key for x in _unreleased_sets(again)] == ["a1-numbers"]
    assert not ctx.captured_queries  # from the cache

    Question.objects.create(question_set=s, key="q3", position=3, kind="numeric", prompt="?")
    assert "A1 numbers: 3 of 3 unanswered" in _today(student, course)
    # Staff move the deadline out of the week, then back into it.
    later = timezone.now() + dt.timedelta(days=10)
    assignment_update(actor=staff, course=course, assignment_id=a.pk, due_at=later, confirm=True)
    assert "A1 numbers" not in _today(student, course)
    soon = timezone.now() + dt.timedelta(days=2)
    assignment_update(actor=staff, course=course, assignment_id=a.pk, due_at=soon, confirm=True)
    assert "A1 numbers: 3 of 3 unanswered" in _today(student, course)
    s.released_at = timezone.now()
    s.save(update_fields=["released_at"])
    assert "A1 numbers" not in _today(student, course)
    Question.objects.filter(question_set=s).first().delete()  # type: ignore[union-attr]
    s.released_at = None
    s.save(update_fields=["released_at"])
    assert "A1 numbers: 2 of 2 unanswered" in _today(student, course)


def test_a_labs_line_follows_its_window_and_the_term_moved(redis_cache) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    student = _login(member(course))
    now = timezone.now()
    w = CourseLab.objects.create(
        course=course,
        lab_key=LAB,
        opens_at=now - dt.timedelta(days=1),
        closes_at=now + dt.timedelta(days=3),
    )
    assert "0 of 4 steps done" in _today(student, course)
    with CaptureQueriesContext(connection) as ctx:
        assert [x.lab_key for x in _windows(Course.objects.get(pk=course.pk))] == [LAB]
    assert len(ctx.captured_queries) == 1  # the course; the windows from the cache
    w.closes_at = now + dt.timedelta(days=10)  # as the course file loaded again does
    w.save()
    assert "steps done" not in _today(student, course)
    w.closes_at = now + dt.timedelta(days=3)
    w.save()
    assert "0 of 4 steps done" in _today(student, course)
    move_term(course, 1)  # a bulk update of every window: a week later, out of this week
    assert "steps done" not in _today(student, course)
