from __future__ import annotations

import pytest
from django.test import Client

from apps.core.models import Role, User
from apps.slackdays.models import DeadlineException
from tests.factories import AssignmentFactory, CourseFactory, group_of, member

pytestmark = pytest.mark.django_db


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


def test_student_page_shows_boxes_deadlines_and_who_will_be_charged() -> None:
    course = CourseFactory()
    a = AssignmentFactory(course=course, code="A1")
    group = group_of(course, 3)
    me = group.memberships.first().user
    client = as_user(me)
    page = client.get(f"/c/{course.code}/slack/").content.decode()
    assert page.count('class="slack-box full"') == 3
    assert "Apply slack day" in page
    for m in group.memberships.all():
        assert (
            m.user.get_full_name().replace("'", "\\u0027") in page or m.user.get_full_name() in page
        )
    client.post(f"/c/{course.code}/slack/", {"action": "apply", "assignment": a.pk})
    page = client.get(f"/c/{course.code}/slack/").content.decode()
    assert page.count('class="slack-box full"') == 2
    assert "Cancel slack day" in page
    assert "+1 slack day" in page


def test_dashboard_shows_the_students_effective_deadline() -> None:
    course = CourseFactory()
    a = AssignmentFactory(course=course, code="A1")
    me = member(course)
    staff = member(course, Role.TA)
    as_user(staff).post(
        f"/c/{course.code}/slack/staff/",
        {
            "action": "grant",
            "kind": "extension",
            "hours": 48,
            "assignment": a.pk,
            "students": [me.pk],
            "reason": "illness",
        },
    )
    assert DeadlineException.objects.count() == 1
    import datetime as dt

    from apps.core.timefmt import format_instant

    page = as_user(me).get(f"/c/{course.code}/").content.decode()
    assert format_instant(a.due_at + dt.timedelta(hours=48), course.timezone) in page


def test_staff_page_is_staff_only_and_exports_csv() -> None:
    course = CourseFactory()
    student = member(course)
    assert as_user(student).get(f"/c/{course.code}/slack/staff/").status_code == 403
    staff = member(course, Role.INSTRUCTOR)
    body = b"".join(
        as_user(staff).get(f"/c/{course.code}/slack/staff/?format=csv").streaming_content
    ).decode()
    assert body.splitlines()[0] == "name,email,sid,group,balance,allowance,used_on"
    assert f"{student.email}" in body


def test_grant_without_a_reason_is_refused_on_the_page() -> None:
    course = CourseFactory()
    a = AssignmentFactory(course=course)
    staff, student = member(course, Role.TA), member(course)
    response = as_user(staff).post(
        f"/c/{course.code}/slack/staff/",
        {
            "action": "grant",
            "kind": "extension",
            "hours": 5,
            "assignment": a.pk,
            "students": [student.pk],
            "reason": "",
        },
        follow=True,
    )
    assert "Give a reason" in response.content.decode()
    assert DeadlineException.objects.count() == 0
