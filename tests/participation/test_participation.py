"""Participation: events recorded one by one or imported all or nothing, the score a student and
the gradebook see."""

from __future__ import annotations

import datetime as dt

import pytest
from rest_framework.test import APIClient

from apps.core.errors import Conflict, NotAllowed
from apps.core.models import User
from apps.gradebook import selectors as gradebook
from apps.participation import rules, selectors, services
from apps.participation.models import ParticipationEvent

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("attended", "held", "contributions", "score"),
    [
        (26, 26, 5, 100.0),
        (13, 26, 0, 35.0),
        (26, 26, 0, 70.0),
        (0, 26, 10, 30.0),
        (3, 0, 2, None),
        (30, 26, 1, 76.0),
    ],
)
def test_the_score(attended: int, held: int, contributions: int, score: float | None) -> None:
    assert rules.participation_score(attended, held, contributions) == (
        pytest.approx(score) if score is not None else None
    )


def test_import_reports_every_problem_and_stores_nothing_until_the_file_is_clean(
    ee290_demo,
) -> None:
    course = ee290_demo
    ParticipationEvent.objects.filter(course=course).delete()
    ta = User.objects.get(email="ta1@example.edu")
    bad = "email,kind,date,note\nstudent01@example.edu,attendance,2026-01-20,L1\nstudent01@example.edu,attendance,2026-01-20,again\nnobody@example.edu,comment,2026-01-22,\nstudent02@example.edu,dance,2026-01-22,\nstudent02@example.edu,ed-post,22/01/2026,\n"
    record, plan = services.import_upload(
        actor=ta, course=course, filename="p.csv", data=bad.encode()
    )
    assert [str(p) for p in plan.problems] == [
        "row 3, column 'date': student01@example.edu is already marked present on 2026-01-20",
        "row 4, column 'email': 'nobody@example.edu': no student of this course",
        "row 5, column 'kind': 'dance': use one of attendance, ed-post, ed-answer, comment, "
        "checkin, other",
        "row 6, column 'date': '22/01/2026' is not a date (YYYY-MM-DD)",
    ]
    with pytest.raises(Conflict, match="4 problem"):
        services.import_commit(actor=ta, course=course, import_id=record.pk)
    assert not ParticipationEvent.objects.filter(course=course).exists()
    good = "email,kind,date\nstudent01@example.edu,attendance,2026-01-20\nstudent01@example.edu,Ed answer,2026-01-21\n"
    record, plan = services.import_upload(
        actor=ta, course=course, filename="p.csv", data=good.encode()
    )
    assert services.import_commit(actor=ta, course=course, import_id=record.pk) == 2
    with pytest.raises(Conflict, match="already marked present"):
        services.event_record(
            actor=ta,
            course=course,
            student_email="student01@example.edu",
            kind="attendance",
            occurred_on=dt.date(2026, 1, 20),
        )
    s = selectors.summaries(course, [User.objects.get(email="student01@example.edu").pk])
    assert next(iter(s.values())).counts == {"attendance": 1, "ed-answer": 1}


def test_students_see_only_their_own_and_the_gradebook_reads_the_score(ee290_demo) -> None:
    course = ee290_demo
    ta = User.objects.get(email="ta1@example.edu")
    s1, s2 = (
        User.objects.get(email="student01@example.edu"),
        User.objects.get(email="student02@example.edu"),
    )
    with pytest.raises(NotAllowed):
        services.event_record(
            actor=s1,
            course=course,
            student_email=s1.email,
            kind="comment",
            occurred_on=dt.date(2026, 2, 1),
        )
    services.event_record(
        actor=ta,
        course=course,
        student_email=s2.email,
        kind="comment",
        occurred_on=dt.date(2026, 2, 1),
        note="SECRET of student02",
    )
    c = APIClient()
    c.force_authenticate(s1)
    mine = c.get(f"/api/v1/courses/{course.code}/participation/events/").json()
    assert all(e["student"] == s1.email for e in mine["results"])
    assert "SECRET of student02" not in str(mine)
    summary = selectors.summaries(course, [s2.pk])[s2.pk]
    cell = gradebook.gradebook_rows(course, student_ids=[s2.pk])[0].cells["participation"]
    assert cell.origin == "participation"
    assert cell.percent == pytest.approx(summary.score)


def test_the_staff_page_records_imports_and_removes_each_through_its_own_action(
    ee290_demo,
) -> None:
    """Record one event (an unknown student comes back on the form, nothing stored), import a
    file (to its preview), remove an event, landing on the filtered list each time."""
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client

    course = ee290_demo
    ParticipationEvent.objects.filter(course=course).delete()
    ta = Client()
    ta.force_login(User.objects.get(email="ta1@example.edu"))
    url = f"/c/{course.code}/participation/"
    event = {"kind": "attendance", "occurred_on": "2026-01-20", "note": "L1"}
    r = ta.post(f"{url}record/", {**event, "student": "nobody@example.edu"})
    assert r.status_code == 200
    assert not ParticipationEvent.objects.filter(course=course).exists()
    r = ta.post(f"{url}record/", {**event, "student": "student01@example.edu", "back": "q=01"})
    assert r["Location"] == f"{url}?q=01"
    e = ParticipationEvent.objects.get(course=course)
    csv = b"email,kind,date\nstudent02@example.edu,attendance,2026-01-20\n"
    r = ta.post(f"{url}import/", {"file": SimpleUploadedFile("p.csv", csv)})
    assert "/participation/imports/" in r["Location"]
    ta.post(f"{url}events/{e.pk}/delete/")
    assert not ParticipationEvent.objects.filter(pk=e.pk).exists()


def test_a_row_given_twice_is_named_in_the_preview_and_nothing_is_stored(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """Two identical Ed posts on one day are almost always a copy-paste slip: the preview says
    which row repeats which, as the gradebook import does, and the file cannot be committed."""
    course = ee290_demo
    ParticipationEvent.objects.filter(course=course).delete()
    ta = User.objects.get(email="ta1@example.edu")
    data = (
        b"email,kind,date,note\r"  # old-Mac line endings, as some exports still write
        b"student01@example.edu,ed-post,2026-01-21,\r"
        b"student02@example.edu,ed-post,2026-01-21,\r"
        b"Student01@example.edu,Ed-Post,2026-01-21,\r"
    )
    record, plan = services.import_upload(actor=ta, course=course, filename="p.csv", data=data)
    assert [str(p) for p in plan.problems] == ["row 4: the same as row 2; remove one"]
    with pytest.raises(Conflict, match="1 problem"):
        services.import_commit(actor=ta, course=course, import_id=record.pk)
    assert not ParticipationEvent.objects.filter(course=course).exists()
