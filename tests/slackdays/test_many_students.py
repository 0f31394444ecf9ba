"""`students_slack` (a staff queue's page in 3 queries) gives each student exactly what
`student_slack` (their own pages) gives: days left and every deadline with slack days, their own
and their group's extensions and accommodations applied."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.core.models import Role
from apps.slackdays.selectors import student_slack, students_slack
from apps.slackdays.services import exception_grant, slack_apply
from tests.factories import (
    AssignmentFactory,
    CourseFactory,
    GroupFactory,
    GroupMembershipFactory,
    member,
)

pytestmark = pytest.mark.django_db


def test_many_at_once_equals_one_by_one_in_queries_that_do_not_grow() -> None:
    course = CourseFactory()
    a1, a2 = (
        AssignmentFactory(course=course, code="A1"),
        AssignmentFactory(course=course, code="A2"),
    )
    ta = member(course, Role.TA)
    people = [member(course) for _ in range(6)]
    group = GroupFactory(course=course)
    for u in people[:3]:
        GroupMembershipFactory(group=group, user=u)
    exception_grant(
        actor=ta,
        course=course,
        kind="extension",
        hours=30,
        reason="node outage",
        assignment_id=a1.pk,
        group_id=group.pk,
    )
    exception_grant(
        actor=ta,
        course=course,
        kind="extension",
        hours=12,
        reason="flu",
        assignment_id=a2.pk,
        student_ids=[people[4].pk],
    )
    exception_grant(
        actor=ta,
        course=course,
        kind="accommodation",
        hours=24,
        reason="DSP letter",
        student_ids=[people[1].pk, people[5].pk],
    )
    slack_apply(actor=people[0], course=course, assignment_id=a2.pk)
    slack_apply(actor=people[5], course=course, assignment_id=a1.pk)
    ids = [u.pk for u in people]
    students_slack(course=course, student_ids=ids[:1])  # reads the course's calendar once
    with CaptureQueriesContext(connection) as two:
        students_slack(course=course, student_ids=ids[:2])
    with CaptureQueriesContext(connection) as ctx:
        many = students_slack(course=course, student_ids=ids)
    # memberships, exceptions, accounts: three queries, not three per student
    assert len(ctx.captured_queries) == len(two.captured_queries) == 3
    for u in people:
        assert many[u.pk] == student_slack(course=course, student=u), u.email
    assert many[people[1].pk][1][0].extension_hours == 30  # the group's extension reached her
    assert many[people[5].pk][0] == 2  # one slack day spent
