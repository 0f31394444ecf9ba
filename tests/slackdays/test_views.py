from __future__ import annotations

import pytest
from django.test import Client

from apps.core.models import Role, User
from apps.slackdays.models import DeadlineException
from tests.factories import AssignmentFactory, CourseFactory, group_of, member
from tests.slackdays.test_services import balance

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
    client.post(f"/c/{course.code}/slack/apply/", {"assignment": a.pk})
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
        f"/c/{course.code}/slack/staff/exceptions/grant/",
        {
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
        f"/c/{course.code}/slack/staff/exceptions/grant/",
        {
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


def test_staff_refund_and_adjust_from_the_page_by_e_mail() -> None:
    """The staff page's refund and adjust forms name the student by e-mail; a bad number or an
    unknown address is a message naming it, and nothing changes."""
    course = CourseFactory()
    a = AssignmentFactory(course=course, code="A1")
    staff, student = member(course, Role.TA), member(course)
    as_user(student).post(f"/c/{course.code}/slack/apply/", {"assignment": a.pk})
    assert balance(course, student) == 2
    page = as_user(staff).get(f"/c/{course.code}/slack/staff/").content.decode()
    assert "Refund a slack day" in page
    assert "Adjust a balance" in page
    r = as_user(staff).post(
        f"/c/{course.code}/slack/staff/refund/",
        {"student": student.email.upper(), "assignment": a.pk, "reason": "node-3 outage"},
        follow=True,
    )
    assert "Slack day refunded." in r.content.decode()
    assert balance(course, student) == 3
    r = as_user(staff).post(
        f"/c/{course.code}/slack/staff/adjust/",
        {"student": student.email, "delta": "lots", "reason": "typo"},
        follow=True,
    )
    assert "Give the change in days as a whole number." in r.content.decode()
    r = as_user(staff).post(
        f"/c/{course.code}/slack/staff/adjust/",
        {"student": "nobody@example.edu", "delta": "-1", "reason": "typo"},
        follow=True,
    )
    assert "nobody@example.edu" in r.content.decode()
    assert balance(course, student) == 3
    as_user(staff).post(
        f"/c/{course.code}/slack/staff/adjust/",
        {"student": student.email, "delta": "-1", "reason": "charged by hand"},
    )
    assert balance(course, student) == 2
