"""Lecture check-in as the room uses it: staff open it for the lecture under way and show the
rotating code; a student types it on their phone (from Today's box too) and is marked present
once; an expired, wrong or malformed code and a closed session are refused with the reason; 50
check-ins at once by one student leave one; staff correct a check-in."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from apps.core.models import Role, User
from apps.participation import checkin
from apps.participation.models import Checkin, ParticipationEvent
from tests.factories import CourseFactory, LectureFactory, member
from tests.threads import run_at_once

pytestmark = pytest.mark.django_db


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


@pytest.fixture
def room():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    now = timezone.now()
    lecture = LectureFactory(
        course=course,
        number=7,
        starts_at=now - dt.timedelta(minutes=10),
        ends_at=now + dt.timedelta(minutes=70),
    )
    ta = member(course, Role.TA)
    ada = member(course, email="ada@uni.edu")
    return course, lecture, ta, ada


def _opened(room):  # type: ignore[no-untyped-def]
    course, lecture, ta, _ada = room
    answer = as_user(ta).post(f"/c/{course.code}/checkin/open/", {"lecture": lecture.pk})
    assert answer.status_code == 302
    session = lecture.checkin
    screen = as_user(ta).get(answer["Location"]).content.decode()
    assert checkin.code_at(session, timezone.now()) in screen  # the room sees today's code
    return session


def test_a_student_checks_in_with_the_code_on_the_screen_once(room) -> None:  # type: ignore[no-untyped-def]
    course, lecture, _ta, ada = room
    student = as_user(ada)
    assert (
        "No lecture check-in is open now"
        in student.get(f"/c/{course.code}/checkin/").content.decode()
    )
    session = _opened(room)
    today = student.get(f"/c/{course.code}/").content.decode()
    assert "Code on the screen for L7" in today  # the box is on Today during the lecture
    code = checkin.code_at(session, timezone.now())
    answer = student.post(f"/c/{course.code}/checkin/enter/", {"code": code, "next": "today"})
    assert answer["Location"] == f"/c/{course.code}/"
    assert "Checked in to L7" in student.get(answer["Location"]).content.decode()
    again = student.post(f"/c/{course.code}/checkin/enter/", {"code": code}, follow=True)
    assert "already checked in to L7" in again.content.decode()
    assert Checkin.objects.count() == 1
    mark = ParticipationEvent.objects.get()
    assert (mark.kind, mark.occurred_on) == (
        "attendance",
        timezone.localtime(lecture.starts_at, course.tz).date(),
    )


def test_an_expired_a_wrong_and_a_malformed_code_are_refused_with_the_reason(room) -> None:  # type: ignore[no-untyped-def]
    course, _lecture, _ta, ada = room
    session = _opened(room)
    now = timezone.now()
    old = checkin.code_at(session, now - dt.timedelta(seconds=120))
    current = {
        checkin.code_at(session, now),
        checkin.code_at(session, now - dt.timedelta(seconds=30)),
    }
    wrong = next(c for c in (f"{i:06d}" for i in range(1000)) if c not in current and c != old)
    api = f"/api/v1/courses/{course.code}/participation/checkin/"
    expired = as_user(ada).post(api, {"code": old}, content_type="application/json")
    if old not in current:  # (the same six digits twice in a row is a one-in-a-million draw)
        assert expired.status_code == 409
        assert "expired" in expired.json()["detail"]
    bad = as_user(ada).post(api, {"code": wrong}, content_type="application/json")
    assert bad.status_code == 400
    assert "not the code on the screen" in bad.json()["detail"]
    short = as_user(ada).post(f"/c/{course.code}/checkin/enter/", {"code": "12a"}, follow=True)
    page = short.content.decode()
    assert "Enter the 6 digits shown in the room." in page
    assert 'aria-invalid="true"' in page
    assert not Checkin.objects.exists()


def test_after_the_session_closes_the_code_is_refused(room) -> None:  # type: ignore[no-untyped-def]
    course, _lecture, ta, ada = room
    session = _opened(room)
    code = checkin.code_at(session, timezone.now())
    as_user(ta).post(f"/c/{course.code}/checkin/sessions/{session.pk}/close/")
    answer = as_user(ada).post(
        f"/api/v1/courses/{course.code}/participation/checkin/",
        {"code": code},
        content_type="application/json",
    )
    assert answer.status_code == 409
    assert "No lecture check-in is open now" in answer.json()["detail"]


def test_check_in_cannot_open_outside_the_lectures_time(room) -> None:  # type: ignore[no-untyped-def]
    course, lecture, ta, _ada = room
    with time_machine.travel(lecture.ends_at + dt.timedelta(hours=2)):
        answer = as_user(ta).post(
            f"/c/{course.code}/checkin/open/", {"lecture": lecture.pk}, follow=True
        )
    assert "can be opened from" in answer.content.decode()
    assert not hasattr(lecture, "checkin") or not lecture.checkin


def test_staff_remove_a_check_in_with_its_attendance_mark(room) -> None:  # type: ignore[no-untyped-def]
    course, _lecture, ta, ada = room
    session = _opened(room)
    c = checkin.check_in(actor=ada, course=course, code=checkin.code_at(session, timezone.now()))
    page = as_user(ta).get(f"/c/{course.code}/checkin/").content.decode()
    assert "ada@uni.edu" in page or ada.get_full_name() in page
    as_user(ta).post(f"/c/{course.code}/checkin/entries/{c.pk}/remove/")
    assert not Checkin.objects.exists()
    assert not ParticipationEvent.objects.exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_fifty_check_ins_at_once_by_one_student_leave_one(room) -> None:  # type: ignore[no-untyped-def]
    course, lecture, ta, ada = room
    session = checkin.session_open(actor=ta, course=course, lecture_id=lecture.pk)
    code = checkin.code_at(session, timezone.now())
    results = run_at_once(
        [lambda: checkin.check_in(actor=ada, course=course, code=code) for _ in range(50)]
    )
    done = [r for r in results if isinstance(r, Checkin)]
    refused = [r for r in results if isinstance(r, checkin.Conflict)]
    assert len(done) == 1
    assert len(refused) == 49
    assert all("already checked in" in str(r.message) for r in refused)
    assert Checkin.objects.filter(student=ada).count() == 1
    assert ParticipationEvent.objects.filter(student=ada, kind="attendance").count() == 1


def _wrong_codes(session, n: int) -> list[str]:  # type: ignore[no-untyped-def]
    """n six-digit codes that are neither valid nor expired now."""
    now = timezone.now()
    taken = {checkin.code_at(session, now - dt.timedelta(seconds=30 * k)) for k in range(12)}
    return [c for c in (f"{i:06d}" for i in range(100)) if c not in taken][:n]


def test_the_sixth_wrong_code_is_429_and_others_still_check_in(room) -> None:  # type: ignore[no-untyped-def]
    """Five wrong codes for one lecture, then 429 with a clear message — even for the right
    code, so guessing stops; another student checks in as before; staff see the tries."""
    course, _lecture, ta, ada = room
    session = _opened(room)
    api = f"/api/v1/courses/{course.code}/participation/checkin/"
    student = as_user(ada)
    for code in _wrong_codes(session, 5):
        r = student.post(api, {"code": code}, content_type="application/json")
        assert r.status_code == 400, r.json()
    sixth = student.post(
        api, {"code": checkin.code_at(session, timezone.now())}, content_type="application/json"
    )
    assert sixth.status_code == 429
    assert "5 wrong codes for L7" in sixth.json()["detail"]
    assert "ask the staff to record your attendance" in sixth.json()["detail"]
    assert int(sixth["Retry-After"]) > 0
    page = student.post(f"/c/{course.code}/checkin/enter/", {"code": "123456"})
    assert page.status_code == 429
    assert "check-in to this lecture is closed to you" in page.content.decode()
    assert not Checkin.objects.filter(student=ada).exists()
    bea = member(course, email="bea@uni.edu")
    ok = as_user(bea).post(
        api, {"code": checkin.code_at(session, timezone.now())}, content_type="application/json"
    )
    assert ok.status_code == 201
    staff_page = as_user(ta).get(f"/c/{course.code}/checkin/").content.decode()
    assert "Wrong codes for L7 (1)" in staff_page
    assert "check-in closed to them" in staff_page
    assert (ada.get_full_name() or ada.email) in staff_page


def test_wrong_codes_count_per_lecture(room) -> None:  # type: ignore[no-untyped-def]
    """The limit is per lecture: the next lecture's check-in starts afresh."""
    course, _lecture, ta, ada = room
    session = _opened(room)
    for code in _wrong_codes(session, 5):
        with pytest.raises(checkin.DomainError):
            checkin.check_in(actor=ada, course=course, code=code)
    with pytest.raises(checkin.doors.TooManyTries):
        checkin.check_in(actor=ada, course=course, code="000000")
    later = timezone.now() + dt.timedelta(days=2)
    LectureFactory(
        course=course,
        number=8,
        starts_at=later,
        ends_at=later + dt.timedelta(minutes=80),
    )
    with time_machine.travel(later + dt.timedelta(minutes=5)):
        nxt = checkin.session_open(actor=ta, course=course, lecture_id=course_lecture(course, 8))
        c = checkin.check_in(actor=ada, course=course, code=checkin.code_at(nxt, timezone.now()))
    assert c.session == nxt


def course_lecture(course, number: int) -> int:  # type: ignore[no-untyped-def]
    from apps.calendar.models import Lecture

    return int(Lecture.objects.get(course=course, number=number).pk)


def test_staff_read_who_checked_in_over_the_api_in_course_time_a_page_at_a_time(
    room, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """What the staff check-in page lists, the API gives: each check-in with its time in course
    time (zone named), the count, and the next page; a student gets their own state only."""
    from rest_framework.test import APIClient

    from apps.participation.api import views as api

    course, _lecture, ta, ada = room
    session = _opened(room)
    bea = member(course, email="bea@uni.edu", full_name="Bea Lind")
    now = timezone.now()
    Checkin.objects.create(session=session, student=ada, at=now - dt.timedelta(minutes=2))
    Checkin.objects.create(session=session, student=bea, at=now - dt.timedelta(minutes=1))
    monkeypatch.setattr(api, "CHECKINS_PAGE", 1)
    client = APIClient()
    client.force_authenticate(ta)
    url = f"/api/v1/courses/{course.code}/participation/checkin/"
    first = client.get(url).json()
    assert first["shown_lecture"] == 7
    assert first["checkins_count"] == 2
    assert [c["student"] for c in first["checkins"]] == ["ada@uni.edu"]
    assert first["checkins"][0]["at_text"].endswith(("PST", "PDT"))
    assert first["checkins_next_page"] == 2
    second = client.get(url + "?page=2").json()
    assert [c["name"] for c in second["checkins"]] == ["Bea Lind"]
    assert second["checkins_next_page"] is None
    client.force_authenticate(ada)
    mine = client.get(url).json()
    assert mine["checkins"] == []
    assert mine["shown_lecture"] is None
