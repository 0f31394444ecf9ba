"""The gradebook API as a client would use it, and the scores it reads from other apps."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from apps.core.coursefile import parse_course_file
from apps.core.models import User
from apps.gradebook import selectors, services
from apps.groups.models import Group
from apps.scribing.models import ScribeDuty
from apps.setup.course_loader import course_load
from tests.bigcourse import build_big_course
from tests.conftest import COURSE_FILE

pytestmark = pytest.mark.django_db


def api(user: User) -> APIClient:
    c = APIClient()
    c.force_authenticate(user)
    return c


def test_bulk_scores_are_all_or_nothing_and_name_every_bad_row(ee290_demo) -> None:
    course = ee290_demo
    ta = User.objects.get(email="ta1@example.edu")
    group = Group.objects.filter(course=course).order_by("name").first()
    url = f"/api/v1/courses/{course.code}/gradebook/scores/"
    bad = {
        "scores": [
            {"component": "participation", "student": "student01@example.edu", "percent": "90"},
            {"component": "participation", "student": "student02@example.edu", "percent": "190"},
            {"component": "nope", "group": group.pk, "percent": "80"},
        ]
    }
    r = api(ta).post(url, bad, format="json")
    assert r.status_code == 400
    assert set(r.json()["errors"]) == {"scores[1].percent", "scores[2].component"}
    assert api(ta).get(url).json()["count"] == 0  # the good row was not stored either
    good = {
        "scores": [
            {"component": "participation", "student": "student01@example.edu", "percent": "90"},
            {
                "component": "project-technical",
                "group": group.pk,
                "percent": "17/20",
                "note": "demo",
            },
        ]
    }
    assert api(ta).post(url, good, format="json").json() == {"set": 2, "cleared": 0, "unchanged": 0}
    assert api(ta).get(url).json()["count"] == 2


def test_me_and_what_if(ee290_demo) -> None:
    course = ee290_demo
    student = User.objects.get(email="student01@example.edu")
    ta = User.objects.get(email="ta1@example.edu")
    for key in ("project-technical", "project-impact", "assignments-enhancements", "participation"):
        services.scores_apply(
            actor=ta,
            course=course,
            changes=[
                services.score_change(
                    course=course, component_key=key, percent="90", student_email=student.email
                )
            ],
        )
    me = api(student).get(f"/api/v1/courses/{course.code}/gradebook/me/?target=A-").json()
    assert me["status"] == "incomplete"
    # Technical quality blends the staff's 90 with the peer-review score, which has not come yet
    assert me["missing"] == [
        "Technical quality",
        "Core / working",
        "Scribing (2 lectures per student)",
    ]
    assert me["what_if"]["needed"] == 90  # the same 90 % on the missing components
    assert api(ta).get(f"/api/v1/courses/{course.code}/gradebook/me/").status_code == 403
    assert api(student).get(f"/api/v1/courses/{course.code}/gradebook/students/").status_code == 403


def test_a_ta_cannot_change_weights_but_reads_them(ee290_demo) -> None:
    course = ee290_demo
    ta = User.objects.get(email="ta1@example.edu")
    instructor = User.objects.get(email="instructor@example.edu")
    url = f"/api/v1/courses/{course.code}/gradebook/components/"
    body = {"components": [{"key": "scribing", "weight": 10}]}
    assert api(ta).put(url, body, format="json").status_code == 403
    r = api(instructor).put(url, body, format="json")
    assert r.status_code == 400
    assert "add up to 105, not 100" in r.json()["detail"]
    assert {c["key"]: c["weight"] for c in api(ta).get(url).json()["components"]}["scribing"] == 5


def test_scribing_scores_come_from_accepted_notes(ee290_demo) -> None:
    course = ee290_demo
    student = User.objects.get(email="student01@example.edu")
    lectures = list(course.lectures.order_by("number")[:2])
    past = timezone.now() - timezone.timedelta(days=1)
    ScribeDuty.objects.bulk_create(
        [
            ScribeDuty(
                course=course,
                lecture=lectures[0],
                student=student,
                due_at=past,
                status=ScribeDuty.Status.ACCEPTED,
            ),
            ScribeDuty(
                course=course,
                lecture=lectures[1],
                student=student,
                due_at=past + timezone.timedelta(days=30),
            ),
        ]
    )
    cell = selectors.gradebook_rows(course, student_ids=[student.pk])[0].cells["scribing"]
    assert cell.percent is None  # one note not due yet: incomplete, not 50 %
    assert cell.detail == "1 of 2 notes accepted; 1 not due yet"
    ScribeDuty.objects.filter(student=student).update(due_at=past)
    cell = selectors.gradebook_rows(course, student_ids=[student.pk])[0].cells["scribing"]
    assert (cell.percent, cell.origin) == (50, "scribing")


def _course(n: int, tag: str):  # type: ignore[no-untyped-def]
    cf = parse_course_file(COURSE_FILE.read_text(encoding="utf-8"))
    cf = cf.model_copy(
        update={"course": cf.course.model_copy(update={"code": f"ee290-{tag}"}), "compute": None}
    )
    course = course_load(cf=cf).course
    people = build_big_course(course, n, tag=tag)
    groups = Group.objects.filter(course=course).values_list("name", flat=True)
    data = "group,project-technical\n" + "".join(
        f"{g},{70 + i % 30}\n" for i, g in enumerate(groups)
    )
    record, _ = services.import_upload(
        actor=people["ta"], course=course, filename="g.csv", data=data.encode()
    )
    services.import_commit(actor=people["ta"], course=course, import_id=record.pk)
    return course, people


def test_the_staff_gradebook_costs_the_same_queries_at_40_and_2000_students() -> None:
    counts, sizes = {}, {}
    for n in (40, 2000):
        course, people = _course(n, f"q{n}")
        c = Client()
        c.force_login(people["ta"])
        for url in (
            "gradebook/",
            "gradebook/?sort=-total&page=3",
            "gradebook/?status=incomplete&q=Student",
        ):
            c.get(f"/c/{course.code}/{url}")
            with CaptureQueriesContext(connection) as ctx:
                r = c.get(f"/c/{course.code}/{url}")
            assert r.status_code == 200
            counts[(n, url)], sizes[(n, url)] = len(ctx.captured_queries), len(r.content)
    for url in (
        "gradebook/",
        "gradebook/?sort=-total&page=3",
        "gradebook/?status=incomplete&q=Student",
    ):
        assert counts[(2000, url)] == counts[(40, url)], url
        assert sizes[(2000, url)] < 100_000, url
