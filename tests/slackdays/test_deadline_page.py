"""A deadline's page (#67, "staff see the whole stack ... on a deadline's page"): every
student's relief on one assignment — slack, own and group extensions, accommodation, the
deadline in course time with its zone, the cap left, staff's override — filtered by group and by
closeness to the cap, as CSV and through its read-only API twin; staff only; the same number of
queries for 4 students as for 40; linked from the requests page, the slack page and the
calendar where staff see the assignment."""

from __future__ import annotations

import csv
import datetime as dt
import io

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.core.models import Role, User
from apps.core.timefmt import format_instant
from apps.slackdays.rules import add_calendar_days
from apps.slackdays.services import exception_grant, slack_apply
from tests.factories import AssignmentFactory, CourseFactory, group_of, member

pytestmark = pytest.mark.django_db
EE290 = {
    "relief_cap_days": 7,
    "relief_slack_with_extension": "stack",
    "relief_accommodations_count": True,
    "relief_over_cap": "staff",
}


def as_user(u: User) -> Client:
    c = Client()
    c.force_login(u)
    return c


def _world():  # type: ignore[no-untyped-def]
    """A3 with: a group of 3 that spent a slack day and got a 2-day group extension, one of them
    a day of their own on top; a student alone with a 3-day accommodation and a 5-day extension
    staff confirmed past the cap (8 days); a second group with nothing."""
    course = CourseFactory(**EE290)
    a3 = AssignmentFactory(course=course, code="A3", title="Scaling")
    ta = member(course, Role.TA)
    g1 = group_of(course, 3, name="Alpha")
    group_of(course, 2, name="Beta")
    alpha = [m.user for m in g1.memberships.order_by("user_id")]
    slack_apply(actor=alpha[0], course=course, assignment_id=a3.pk)  # charges the whole group
    grant = {"actor": ta, "course": course, "reason": "Node down.", "assignment_id": a3.pk}
    exception_grant(kind="extension", hours=48, group_id=g1.pk, **grant)
    exception_grant(kind="extension", hours=24, student_ids=[alpha[1].pk], **grant)
    solo = member(course, full_name="Sol Alone", email="sol@uni.edu")
    exception_grant(
        actor=ta, course=course, kind="accommodation", hours=72, reason="DSP", student_ids=[solo.pk]
    )
    exception_grant(kind="extension", hours=120, student_ids=[solo.pk], over_cap=True, **grant)
    return course, a3, ta, g1, alpha, solo


def _rows(html: str) -> dict[str, str]:
    from tests.test_api_twins import page_rows

    return {r[0]: " | ".join(r) for r in page_rows(html, "Every student's relief")}


def test_staff_see_every_students_stack_on_a_deadline_with_filters_and_csv() -> None:
    course, a3, ta, g1, alpha, solo = _world()
    url = f"/c/{course.code}/slack/deadlines/{a3.pk}/"
    page = as_user(ta).get(url)
    assert page.status_code == 200
    rows = _rows(page.content.decode())
    assert len(rows) == 6  # every student of the course, in a group or not
    tz = course.timezone
    m1 = next(v for k, v in rows.items() if alpha[1].email in k)
    # slack 1 day, own 24 h, group 48 h: 4 days of 7; the deadline in course time, zone named
    assert "1 day" in m1
    assert "24 h" in m1
    assert "48 h" in m1
    effective = add_calendar_days(a3.due_at + dt.timedelta(hours=72), 1, tz)
    assert format_instant(effective, tz) in m1
    assert format_instant(effective, tz).endswith(("PST", "PDT"))
    assert "3 days of 7 days" in m1
    sol = next(v for k, v in rows.items() if "sol@uni.edu" in k)
    assert "72 h" in sol
    assert "120 h" in sol
    assert "staff confirmed 8 days" in sol
    assert "0 days of 8 days" in sol
    # filters: one group; past the course's cap; near it
    only = _rows(as_user(ta).get(url, {"group": g1.pk}).content.decode())
    assert sorted(only) == sorted(f"{u.get_full_name()} {u.email}" for u in alpha)
    over = _rows(as_user(ta).get(url, {"cap": "over"}).content.decode())
    assert list(over) == [f"{solo.get_full_name()} {solo.email}"]
    near = _rows(as_user(ta).get(url, {"cap": "near"}).content.decode())
    assert list(near) == [f"{solo.get_full_name()} {solo.email}"]
    # the CSV follows the filters and says the same
    got = as_user(ta).get(url, {"group": g1.pk, "format": "csv"})
    lines = list(csv.reader(io.StringIO(b"".join(got.streaming_content).decode())))  # type: ignore[attr-defined]
    assert lines[0][:4] == ["name", "email", "group", "slack days"]
    assert len(lines) == 4
    m1_line = next(line for line in lines if line[1] == alpha[1].email)
    assert m1_line[2:7] == ["Alpha", "1", "24", "48", "0"]
    assert m1_line[8] == format_instant(effective, tz)
    assert m1_line[9:11] == ["7", str(3 * 24)]
    everyone = as_user(ta).get(url, {"format": "csv", "cap": "over"})
    over_lines = list(csv.reader(io.StringIO(b"".join(everyone.streaming_content).decode())))  # type: ignore[attr-defined]
    assert [line[1] for line in over_lines[1:]] == ["sol@uni.edu"]
    assert over_lines[1][-1] == "8"


def test_the_api_twin_gives_the_same_stacks_read_only_and_to_staff_only() -> None:
    course, a3, ta, g1, alpha, _ = _world()
    api = APIClient()
    api.force_authenticate(ta)
    url = f"/api/v1/courses/{course.code}/slack/deadlines/{a3.pk}/"
    body = api.get(url).json()
    assert body["count"] == 6
    rows = {r["email"]: r for r in body["results"]}
    m1 = rows[alpha[1].email]
    assert (m1["slack_days"], m1["own_extension_hours"], m1["group_extension_hours"]) == (1, 24, 48)
    assert (m1["cap_days"], m1["cap_left_hours"], m1["override_days"]) == (7, 72, None)
    assert m1["group"] == "Alpha"
    assert m1["timezone"] == course.timezone
    assert m1["effective_text"].endswith(("PST", "PDT"))
    assert rows["sol@uni.edu"]["override_days"] == 8
    assert rows["sol@uni.edu"]["accommodation_hours"] == 72
    assert [r["email"] for r in api.get(url, {"cap": "over"}).json()["results"]] == ["sol@uni.edu"]
    assert api.get(url, {"group": g1.pk}).json()["count"] == 3
    assert api.post(url, {}).status_code == 405  # read-only
    student = APIClient()
    student.force_authenticate(alpha[0])
    assert student.get(url).status_code == 403
    instructor = APIClient()
    instructor.force_authenticate(member(course, Role.INSTRUCTOR))
    assert instructor.get(url).status_code == 200
    other = AssignmentFactory()  # another course's assignment: not found here
    assert api.get(f"/api/v1/courses/{course.code}/slack/deadlines/{other.pk}/").status_code == 404


def test_students_cannot_open_the_page_and_staff_reach_it_from_their_pages() -> None:
    course, a3, ta, _, alpha, _ = _world()
    url = f"/c/{course.code}/slack/deadlines/{a3.pk}/"
    assert as_user(alpha[0]).get(url).status_code == 403
    assert as_user(member(course, Role.INSTRUCTOR)).get(url).status_code == 200
    assert Client().get(url).status_code == 302  # to the log-in page
    staff = as_user(ta)
    for page in ("extensions/?status=", "slack/staff/", "calendar/?view=list"):
        assert url in staff.get(f"/c/{course.code}/{page}").content.decode(), page


def _count(user: User, url: str) -> int:
    client = as_user(user)
    client.get(url)
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_the_page_and_its_api_read_as_many_queries_for_40_students_as_for_4() -> None:
    counts = []
    for n in (2, 20):
        course = CourseFactory(**EE290)
        a = AssignmentFactory(course=course)
        ta = member(course, Role.TA)
        for _ in range(2):
            g = group_of(course, n)
            exception_grant(
                actor=ta,
                course=course,
                kind="extension",
                hours=24,
                reason="x",
                assignment_id=a.pk,
                group_id=g.pk,
            )
            first = g.memberships.first().user  # type: ignore[union-attr]
            slack_apply(actor=first, course=course, assignment_id=a.pk)
        counts.append(
            (
                _count(ta, f"/c/{course.code}/slack/deadlines/{a.pk}/?cap=near"),
                _count(ta, f"/api/v1/courses/{course.code}/slack/deadlines/{a.pk}/"),
            )
        )
    assert counts[0] == counts[1], counts
