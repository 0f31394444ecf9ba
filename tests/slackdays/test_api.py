"""Slack API for every role: a student sees only their own ledger and their group's deadlines."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.core.models import Role, User
from tests.factories import AssignmentFactory, CourseFactory, group_of, member

pytestmark = pytest.mark.django_db


def api(u: User | None) -> APIClient:
    c = APIClient()
    if u:
        c.force_authenticate(u)
    return c


@pytest.fixture
def world():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    a = AssignmentFactory(course=course, code="A1")
    g = group_of(course, 2, "Pair")
    other = member(course)
    return course, a, [m.user for m in g.memberships.all()], other, member(course, Role.TA)


def test_apply_through_the_api_charges_the_group_and_shows_the_new_deadline(world) -> None:  # type: ignore[no-untyped-def]
    course, a, pair, _other, _ta = world
    base = f"/api/v1/courses/{course.code}/slack"
    created = api(pair[0]).post(f"{base}/apply/", {"assignment": a.pk}, format="json")
    assert created.status_code == 201
    assert {e["student"] for e in created.json()} == {u.email for u in pair}
    me = api(pair[1]).get(f"{base}/me/").json()
    assert me["balance"] == 2
    d = me["deadlines"][0]
    assert d["slack_days"] == 1
    eff = dt.datetime.fromisoformat(d["effective"]).astimezone(zoneinfo.ZoneInfo(course.timezone))
    assert eff.strftime("%H:%M") == a.due_at.astimezone(
        zoneinfo.ZoneInfo(course.timezone)
    ).strftime("%H:%M")
    again = api(pair[1]).post(f"{base}/apply/", {"assignment": a.pk}, format="json")
    assert again.status_code == 409
    assert "already used 1" in again.json()["detail"]


def test_a_student_sees_only_their_own_ledger(world) -> None:  # type: ignore[no-untyped-def]
    course, a, pair, other, ta = world
    base = f"/api/v1/courses/{course.code}/slack"
    api(pair[0]).post(f"{base}/apply/", {"assignment": a.pk}, format="json")
    mine = api(pair[0]).get(f"{base}/ledger/?student={pair[1].pk}").json()["results"]
    assert {e["student"] for e in mine} == {pair[0].email}  # the filter is ignored for students
    assert api(other).get(f"{base}/ledger/").json()["results"] == []
    assert api(ta).get(f"{base}/ledger/").json()["count"] == 2


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "balances/"), ("post", "refund/"), ("post", "adjust/"), ("post", "lateness/")],
)
def test_students_get_403_on_staff_endpoints(world, method: str, path: str) -> None:  # type: ignore[no-untyped-def]
    course, _a, pair, _other, _ta = world
    response = getattr(api(pair[0]), method)(
        f"/api/v1/courses/{course.code}/slack/{path}",
        {"student": pair[1].pk, "reason": "x", "delta": 1},
        format="json",
    )
    assert response.status_code == 403


def test_students_cannot_grant_themselves_exceptions(world) -> None:  # type: ignore[no-untyped-def]
    course, a, pair, _other, _ta = world
    response = api(pair[0]).post(
        f"/api/v1/courses/{course.code}/slack/exceptions/",
        {
            "kind": "extension",
            "hours": 48,
            "reason": "please",
            "assignment": a.pk,
            "students": [pair[0].pk],
        },
        format="json",
    )
    assert response.status_code == 403


def test_staff_grant_bulk_and_students_see_their_own_and_their_groups(world) -> None:  # type: ignore[no-untyped-def]
    course, a, pair, other, ta = world
    base = f"/api/v1/courses/{course.code}/slack/exceptions/"
    made = api(ta).post(
        base,
        {"kind": "accommodation", "hours": 24, "reason": "DSP", "students": [pair[0].pk, other.pk]},
        format="json",
    )
    assert made.status_code == 201
    assert len(made.json()) == 2
    from apps.groups.models import Group

    api(ta).post(
        base,
        {
            "kind": "extension",
            "hours": 6,
            "reason": "outage",
            "assignment": a.pk,
            "group": Group.objects.get().pk,
        },
        format="json",
    )
    assert api(pair[1]).get(base).json()["count"] == 1  # the group's extension only
    assert api(pair[0]).get(base).json()["count"] == 2  # own accommodation + group's extension
    bad = api(ta).post(
        base,
        {"kind": "accommodation", "hours": 24, "reason": "", "students": [other.pk]},
        format="json",
    )
    assert bad.status_code == 400


def test_lateness_import_through_the_api(world) -> None:  # type: ignore[no-untyped-def]
    course, a, pair, _other, ta = world
    late = (
        (a.due_at + dt.timedelta(hours=3))
        .astimezone(zoneinfo.ZoneInfo(course.timezone))
        .strftime("%Y-%m-%d %H:%M:%S %z")
    )
    csv = f"Email,Submission Time\n{pair[0].email},{late}\n{pair[1].email},{late}\n".encode()
    up = api(ta).post(
        f"/api/v1/courses/{course.code}/slack/lateness/",
        {"assignment": a.pk, "file": SimpleUploadedFile("a.csv", csv)},
        format="multipart",
    )
    assert up.status_code == 201
    assert up.json()["summary"] == {"charged": 1, "already_covered": 1, "problems": 0}
    done = api(ta).post(f"/api/v1/courses/{course.code}/slack/lateness/{up.json()['id']}/commit/")
    assert done.status_code == 200
    assert (
        api(ta)
        .post(f"/api/v1/courses/{course.code}/slack/lateness/{up.json()['id']}/commit/")
        .status_code
        == 409
    )


def test_anonymous_401_and_outsiders_404(world) -> None:  # type: ignore[no-untyped-def]
    course, _a, _pair, _other, _ta = world
    assert api(None).get(f"/api/v1/courses/{course.code}/slack/me/").status_code == 401
    assert (
        api(member(CourseFactory())).get(f"/api/v1/courses/{course.code}/slack/me/").status_code
        == 404
    )


def test_my_slack_costs_the_same_queries_however_long_the_ledger(world) -> None:  # type: ignore[no-untyped-def]
    """`slack/me` names the student of every ledger entry: read with the entries, not one
    entry at a time (it cost two queries an entry)."""
    course, a, pair, _other, _ta = world
    base = f"/api/v1/courses/{course.code}/slack"
    client = api(pair[0])

    def queries() -> tuple[int, int]:
        with CaptureQueriesContext(connection) as seen:
            me = client.get(f"{base}/me/").json()
        return len(seen), len(me["ledger"])

    assert client.post(f"{base}/apply/", {"assignment": a.pk}, format="json").status_code == 201
    short = queries()
    for code in ("A2", "A3"):
        more = AssignmentFactory(course=course, code=code)
        assert (
            client.post(f"{base}/apply/", {"assignment": more.pk}, format="json").status_code == 201
        )
    long = queries()
    assert long[1] >= short[1] + 2, (short, long)  # the ledger grew by the two spends
    assert long[0] == short[0], (short, long)
