"""The course's calendar rows in the shared cache (Redis): read once, dropped on every change."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.calendar.cache import course_calendar
from apps.calendar.models import Assignment, Lecture
from apps.core.models import Course, Role
from apps.slackdays.moves import assignment_update
from tests.factories import AssignmentFactory, CourseFactory, LectureFactory, member

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


def fresh(course: Course) -> Course:
    """A new object for the same course, as the next request would have."""
    return Course.objects.get(pk=course.pk)


def test_the_second_request_reads_the_calendar_from_redis_and_a_change_drops_it(
    redis_cache,
) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    a = AssignmentFactory(course=course, code="A1")
    LectureFactory(course=course)
    staff = member(course, Role.INSTRUCTOR)
    assert [x.code for x in course_calendar(fresh(course)).assignments] == ["A1"]
    again = fresh(course)
    with CaptureQueriesContext(connection) as ctx:
        rows = course_calendar(again)
    assert len(ctx.captured_queries) == 0
    assert rows.assignments[0].due_at == a.due_at
    new_due = a.due_at + dt.timedelta(days=2)
    assignment_update(actor=staff, course=course, assignment_id=a.pk, due_at=new_due, confirm=True)
    assert course_calendar(fresh(course)).assignments[0].due_at == new_due
    Lecture.objects.filter(course=course).first().delete()  # type: ignore[union-attr]
    assert course_calendar(fresh(course)).lectures == []
    AssignmentFactory(course=course, code="A2")
    assert sorted(x.code for x in course_calendar(fresh(course)).assignments) == ["A1", "A2"]


def test_the_same_object_sees_an_edit_made_in_the_same_request(redis_cache) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    a = AssignmentFactory(course=course, code="A1")
    assert course_calendar(course).assignments[0].title == a.title
    a.title = "Renamed"
    a.save()
    assert course_calendar(course).assignments[0].title == "Renamed"
    assert Assignment.objects.get(pk=a.pk).title == "Renamed"
