"""Brute-force protection: one policy (django-axes) for the login form, the admin login and the
API token endpoint; per account strict, per address generous; audited; staff can unlock."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.core import mail
from django.test import Client
from rest_framework.test import APIClient

from apps.core.models import AuditEvent, Role
from tests.factories import PASSWORD, CourseFactory, member

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
TOKEN = "/api/v1/auth/token/"


def _wrong_logins(client: Client, email: str, n: int) -> list[int]:
    return [
        client.post(LOGIN, {"username": email, "password": f"wrong-{i}"}).status_code
        for i in range(n)
    ]


def test_forty_wrong_passwords_lock_the_account_and_say_until_when() -> None:
    student = member(CourseFactory(), Role.STUDENT)
    client = Client()
    codes = _wrong_logins(client, student.email, 40)
    limit = settings.AXES_FAILURE_LIMIT
    # The first limit-1 tries are ordinary failures; from the limit on, every try is refused.
    assert codes[: limit - 1] == [200] * (limit - 1)
    assert set(codes[limit - 1 :]) == {429}
    page = client.post(LOGIN, {"username": student.email, "password": "again"})
    text = page.content.decode()
    assert page.status_code == 429
    assert "locked until" in text
    # The courses' own zone, named (every course here is in Los Angeles), never bare UTC.
    assert re.search(r"locked until \d+:\d\d [AP]M P[SD]T \(about 1[45] minutes\)", text), text
    assert int(page["Retry-After"]) > 0
    # Even the right password is refused while the lock holds, on the form and the API alike.
    right = client.post(LOGIN, {"username": student.email, "password": PASSWORD})
    assert right.status_code == 429
    api = APIClient().post(TOKEN, {"email": student.email, "password": PASSWORD}, format="json")
    assert api.status_code == 429
    assert api.json()["code"] == "locked_out"
    assert api.json()["locked_until"]
    assert "locked until" in api.json()["detail"]


def test_the_lock_counts_the_account_whatever_the_case_of_the_email() -> None:
    student = member(CourseFactory(), Role.STUDENT)
    client = Client()
    for i in range(settings.AXES_FAILURE_LIMIT):
        email = student.email.upper() if i % 2 else student.email
        client.post(LOGIN, {"username": email, "password": "wrong"})
    right = client.post(LOGIN, {"username": student.email, "password": PASSWORD})
    assert right.status_code == 429


def test_wrong_passwords_on_the_api_lock_the_login_form_too() -> None:
    student = member(CourseFactory(), Role.STUDENT)
    api = APIClient()
    codes = [
        api.post(TOKEN, {"email": student.email, "password": "wrong"}, format="json").status_code
        for _ in range(settings.AXES_FAILURE_LIMIT + 1)
    ]
    assert codes[0] == 400
    assert codes[-1] == 429
    form = Client().post(LOGIN, {"username": student.email, "password": PASSWORD})
    assert form.status_code == 429


def test_the_admin_login_shares_the_lock() -> None:
    staff = member(CourseFactory(), Role.INSTRUCTOR)
    staff.is_staff = True
    staff.save()
    _wrong_logins(Client(), staff.email, settings.AXES_FAILURE_LIMIT)
    response = Client().post(
        "/admin/login/?next=/admin/", {"username": staff.email, "password": PASSWORD}
    )
    assert response.status_code == 429


def test_a_lecture_hall_behind_one_address_can_log_in_at_once() -> None:
    """50 students on one campus NAT, each mistyping once, then logging in: nobody is refused."""
    course = CourseFactory()
    students = [member(course, Role.STUDENT) for _ in range(50)]
    api = APIClient()
    for s in students:
        wrong = api.post(TOKEN, {"email": s.email, "password": "typo"}, format="json")
        assert wrong.status_code == 400
    codes = [
        api.post(TOKEN, {"email": s.email, "password": PASSWORD}, format="json").status_code
        for s in students
    ]
    assert codes == [200] * 50


def test_one_address_guessing_many_accounts_is_locked(settings) -> None:  # type: ignore[no-untyped-def]
    settings.COURSEOPS_IP_FAILURE_LIMIT = 20
    course = CourseFactory()
    victims = [member(course, Role.STUDENT) for _ in range(21)]
    client = Client()
    for v in victims[:20]:
        client.post(LOGIN, {"username": v.email, "password": "guess"})
    # The 21st account was never tried, but the address is now locked.
    response = client.post(LOGIN, {"username": victims[20].email, "password": PASSWORD})
    assert response.status_code == 429
    # Another address is not.
    other = Client(REMOTE_ADDR="10.9.8.7")
    assert (
        other.post(LOGIN, {"username": victims[20].email, "password": PASSWORD}).status_code == 302
    )


def test_a_locked_out_attempt_is_audited() -> None:
    student = member(CourseFactory(), Role.STUDENT)
    _wrong_logins(Client(), student.email, settings.AXES_FAILURE_LIMIT + 2)
    events = AuditEvent.objects.filter(action="auth.login_locked_out")
    assert events.count() >= 3
    assert events.first().after["username"] == student.email.lower()  # type: ignore[union-attr]


def test_staff_unlock_a_member_of_their_course_from_the_roster() -> None:
    course = CourseFactory()
    ta = member(course, Role.TA)
    student = member(course, Role.STUDENT)
    _wrong_logins(Client(), student.email, settings.AXES_FAILURE_LIMIT)
    staff = Client()
    staff.force_login(ta)
    roster = staff.get(f"/c/{course.code}/roster/").content.decode()
    assert "Locked out of log-in" in roster
    assert student.email in roster
    # Another student cannot unlock; a TA of another course gets 404 for this course.
    other = Client()
    other.force_login(member(course, Role.STUDENT))
    assert other.post(f"/c/{course.code}/roster/unlock/{student.pk}/").status_code == 403
    response = staff.post(f"/c/{course.code}/roster/unlock/{student.pk}/", follow=True)
    assert "can log in again" in response.content.decode()
    assert AuditEvent.objects.filter(action="auth.unlock", course=course).count() == 1
    login = Client().post(LOGIN, {"username": student.email, "password": PASSWORD})
    assert login.status_code == 302


def test_staff_cannot_unlock_someone_outside_their_course() -> None:
    course = CourseFactory()
    ta = member(course, Role.TA)
    outsider = member(CourseFactory(), Role.STUDENT)
    staff = Client()
    staff.force_login(ta)
    response = staff.post(f"/c/{course.code}/roster/unlock/{outsider.pk}/", follow=True)
    assert "No such person in this course" in response.content.decode()


def test_password_reset_does_not_reveal_whether_an_account_exists(  # type: ignore[no-untyped-def]
    celery_eager, django_capture_on_commit_callbacks
) -> None:
    student = member(CourseFactory(), Role.STUDENT)
    with django_capture_on_commit_callbacks(execute=True):
        known = Client().post("/accounts/password/reset/", {"email": student.email})
        unknown = Client().post("/accounts/password/reset/", {"email": "nobody@nowhere.example"})
    assert known.status_code == unknown.status_code == 302
    assert known["Location"] == unknown["Location"]
    assert len(mail.outbox) == 1


def test_other_peoples_failures_on_the_same_network_do_not_stretch_a_lock() -> None:
    import datetime as dt

    import time_machine
    from django.utils import timezone

    course = CourseFactory()
    locked, neighbour = member(course, Role.STUDENT), member(course, Role.STUDENT)
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        _wrong_logins(Client(), locked.email, settings.AXES_FAILURE_LIMIT)
    with time_machine.travel(start + dt.timedelta(minutes=10), tick=False):
        Client().post(LOGIN, {"username": neighbour.email, "password": "typo"})  # same address
        from django.test import RequestFactory

        from apps.core.lockout import locked_until

        until = locked_until(RequestFactory().post(LOGIN), locked.email)
    # The lock ends 15 minutes after the account's own last failure, not the neighbour's.
    assert until is not None
    assert until < start + dt.timedelta(minutes=16)


def test_the_lock_is_told_in_utc_when_the_courses_keep_different_zones() -> None:
    """With courses in two zones no single course time fits the log-in page: UTC, named."""
    student = member(CourseFactory(timezone="America/Los_Angeles"), Role.STUDENT)
    CourseFactory(timezone="Europe/Berlin")
    client = Client()
    _wrong_logins(client, student.email, settings.AXES_FAILURE_LIMIT)
    text = client.post(LOGIN, {"username": student.email, "password": "x"}).content.decode()
    assert re.search(r"locked until \d+:\d\d [AP]M UTC \(about", text), text
