"""Anonymous grading can be undone only by those allowed: instructors, and head TAs when the
course file says so. A TA sees no "Show names again" button and is refused (403 with the reason)
on the page's POST and over the API; every reveal is an audit row listed on the set's page."""

from __future__ import annotations

import html

import pytest
from django.http import HttpResponse
from django.test import Client
from rest_framework.test import APIClient

from apps.autograder.bank import BANKS, bank_load
from apps.autograder.models import GradingPolicy
from apps.core.models import AuditEvent, Role, User
from apps.core.timefmt import format_instant
from tests.factories import CourseFactory, member

pytestmark = pytest.mark.django_db


def text(response: HttpResponse) -> str:
    return html.unescape(response.content.decode())


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


def api_as(u: User) -> APIClient:
    c = APIClient()
    c.force_authenticate(u)
    return c


@pytest.fixture
def hidden():  # type: ignore[no-untyped-def]
    course = CourseFactory(timezone="America/Los_Angeles")
    prof = member(course, Role.INSTRUCTOR, email="prof@uni.edu", full_name="Pat Professor")
    ta1 = member(course, Role.TA, email="ta1@uni.edu", full_name="Tess One")
    ta2 = member(course, Role.TA, email="ta2@uni.edu", full_name="Theo Two")
    member(course, email="s1@uni.edu")
    qs = bank_load(course=course, path=BANKS / "lab09-numbers.yaml")
    set_url = f"/c/{course.code}/questions/{qs.key}/"
    assert as_user(ta1).post(f"{set_url}hide-names/", {"hide": "1"}).status_code == 302
    qs.refresh_from_db()
    assert qs.hide_names
    return course, prof, ta1, ta2, qs, set_url


def _reveals() -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action="grading.names_shown"))


def test_a_ta_is_refused_show_names_again_on_the_page_and_the_api(hidden) -> None:  # type: ignore[no-untyped-def]
    course, _prof, ta1, _ta2, qs, set_url = hidden
    page = text(as_user(ta1).get(set_url))
    assert "Names are hidden" in page
    assert "Show names again" not in page  # no button for a TA
    assert "Only the course's instructors may show names again" in page
    refused = as_user(ta1).post(f"{set_url}hide-names/", {"hide": "0"})
    assert refused.status_code == 403
    assert "Only the course's instructors may show students' names again" in text(refused)
    api = api_as(ta1).post(
        f"/api/v1/courses/{course.code}/question-sets/{qs.key}/names-hidden/",
        {"hidden": False},
        format="json",
    )
    assert api.status_code == 403
    assert "Only the course's instructors" in api.json()["detail"]
    read = api_as(ta1).get(f"/api/v1/courses/{course.code}/question-sets/{qs.key}/written/")
    assert read.json()["may_reveal"] is False
    qs.refresh_from_db()
    assert qs.hide_names is True
    assert _reveals() == []


def test_an_instructor_shows_names_again_with_an_audit_row_listed_on_the_set_page(hidden) -> None:  # type: ignore[no-untyped-def]
    course, prof, ta1, _ta2, qs, set_url = hidden
    assert "Show names again" in as_user(prof).get(set_url).content.decode()
    done = as_user(prof).post(f"{set_url}hide-names/", {"hide": "0"}, follow=True)
    assert done.status_code == 200
    qs.refresh_from_db()
    assert qs.hide_names is False
    [row] = _reveals()
    assert row.actor == prof
    assert row.object_id == str(qs.pk)
    assert (row.before, row.after) == ({"hide_names": True}, {"hide_names": False})
    shown = text(as_user(ta1).get(set_url))
    # course time with its zone named, e.g. "Tue Feb 10, 2026, 11:59 PM PST"
    assert (
        f"Names shown to Pat Professor at {format_instant(row.created_at, course.timezone)}"
        in shown
    )
    assert format_instant(row.created_at, course.timezone).endswith(("PST", "PDT"))
    api = api_as(ta1).get(f"/api/v1/courses/{course.code}/question-sets/{qs.key}/written/")
    assert [r["by"] for r in api.json()["names_shown"]] == ["prof@uni.edu"]


def test_the_course_file_may_allow_head_tas(hidden) -> None:  # type: ignore[no-untyped-def]
    course, _prof, ta1, ta2, qs, set_url = hidden
    GradingPolicy.objects.create(course=course, reveal_names="head_tas", head_tas=["TA2@uni.edu"])
    assert "Show names again" not in as_user(ta1).get(set_url).content.decode()
    assert as_user(ta1).post(f"{set_url}hide-names/", {"hide": "0"}).status_code == 403
    assert "Show names again" in as_user(ta2).get(set_url).content.decode()
    ok = api_as(ta2).post(
        f"/api/v1/courses/{course.code}/question-sets/{qs.key}/names-hidden/",
        {"hidden": False},
        format="json",
    )
    assert ok.status_code == 200, ok.content
    assert ok.json()["hide_names"] is False
    assert [e.actor for e in _reveals()] == [ta2]
    assert "Names shown to Theo Two at" in text(as_user(ta1).get(set_url))


def test_the_course_file_setting_is_loaded() -> None:
    import yaml

    from apps.core.coursefile import parse_course_file
    from apps.setup.course_loader import course_load

    spec = yaml.safe_load(open("courses/ee290-sp26.yaml").read())  # noqa: SIM115
    assert spec["policy"]["anonymous_grading"] == {"reveal_names": "instructors", "head_tas": []}
    spec["policy"]["anonymous_grading"] = {"reveal_names": "head_tas", "head_tas": ["Ta@Uni.edu"]}
    spec["policy"]["practice"] = {"solution_after_wrong_checks": 5}
    report = course_load(cf=parse_course_file(yaml.safe_dump(spec)))
    policy = GradingPolicy.objects.get(course=report.course)
    assert (policy.reveal_names, policy.head_tas) == ("head_tas", ["ta@uni.edu"])
    assert policy.practice_solution_after == 5
