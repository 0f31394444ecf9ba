"""A student dropped by a roster import leaves scribing in the same transaction: preferences go,
future published duties are released for the next solve, past ones stay."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.core.models import AuditEvent, Role
from apps.roster.services import roster_commit, roster_upload
from apps.scribing.models import ScribeDuty, ScribePreference
from tests.factories import CourseFactory, LectureFactory, member

pytestmark = pytest.mark.django_db


def test_a_dropped_student_s_future_duties_are_released_and_past_ones_kept() -> None:
    course = CourseFactory()
    staff = member(course, Role.INSTRUCTOR)
    leaving, staying = member(course), member(course)
    now = timezone.now()
    past = LectureFactory(course=course, number=1, starts_at=now - dt.timedelta(days=7))
    future = LectureFactory(course=course, number=9, starts_at=now + dt.timedelta(days=7))
    for lec, who in ((past, leaving), (future, leaving), (future, staying)):
        ScribeDuty.objects.create(
            course=course, lecture=lec, student=who, due_at=lec.starts_at + dt.timedelta(days=7)
        )
    ScribePreference.objects.create(course=course, student=leaving, lecture=future, kind="prefer")
    csv = (
        "name,email,sid,role\n"
        f"{staying.full_name},{staying.email},{staying.sid or ''},student\n"
        f"{staff.full_name},{staff.email},,instructor\n"
    ).encode()
    record, preview = roster_upload(actor=staff, course=course, filename="r.csv", data=csv)
    assert [c.email for c in preview.dropped] == [leaving.email]
    roster_commit(actor=staff, record=record)
    kept = ScribeDuty.objects.filter(student=leaving)
    assert [d.lecture_id for d in kept] == [past.pk]  # the past duty is history
    assert ScribeDuty.objects.filter(student=staying, lecture=future).exists()
    assert not ScribePreference.objects.filter(student=leaving).exists()
    released = AuditEvent.objects.get(action="scribing.release")
    assert released.after["event"] == "StudentDropped"
