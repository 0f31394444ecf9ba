"""Groups and roster API, every endpoint for every role."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.core.models import Role, User
from tests.factories import CourseFactory, group_of, member, open_course

pytestmark = pytest.mark.django_db


def api(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_a_student_sees_their_group_in_full_and_others_by_name_and_size_only() -> None:
    course = open_course()
    mine, theirs = group_of(course, 4, "Mine"), group_of(course, 5, "Theirs")
    me = mine.memberships.first().user
    page = api(me).get(f"/api/v1/courses/{course.code}/groups/").json()
    assert page["count"] == 2
    body = {g["name"]: g for g in page["results"]}
    # The list is names and sizes only, for every student; their own group is in full alone.
    assert body["Theirs"] == {"id": theirs.pk, "name": "Theirs", "size": 5, "full": False}
    assert body["Mine"] == {"id": mine.pk, "name": "Mine", "size": 4, "full": False}
    own = api(me).get(f"/api/v1/courses/{course.code}/groups/{mine.pk}/").json()
    assert own["full"] is True
    assert len(own["members"]) == 4
    assert own["join_code"] == mine.join_code
    detail = api(me).get(f"/api/v1/courses/{course.code}/groups/{theirs.pk}/").json()
    assert "members" not in detail
    assert "join_code" not in detail


def test_staff_see_every_group_in_full() -> None:
    course = open_course()
    group_of(course, 4)
    for role in (Role.TA, Role.INSTRUCTOR):
        body = (
            api(member(course, role))
            .get(f"/api/v1/courses/{course.code}/groups/")
            .json()["results"]
        )
        assert all(g["full"] and len(g["members"]) == 4 for g in body)


def test_create_join_leave_through_the_api() -> None:
    course = open_course()
    ada, bo = member(course), member(course)
    created = api(ada).post(
        f"/api/v1/courses/{course.code}/groups/", {"name": "Roofline"}, format="json"
    )
    assert created.status_code == 201
    code = created.json()["join_code"]
    joined = api(bo).post(
        f"/api/v1/courses/{course.code}/groups/join/", {"code": code.lower()}, format="json"
    )
    assert joined.status_code == 200
    assert {m["email"] for m in joined.json()["members"]} == {ada.email, bo.email}
    assert api(bo).post(f"/api/v1/courses/{course.code}/groups/leave/").status_code == 204
    again = api(bo).post(f"/api/v1/courses/{course.code}/groups/leave/")
    assert again.status_code == 400
    assert again.json()["detail"] == "You are not in a group."


def test_conflicts_are_409_with_a_message() -> None:
    course = open_course()
    full = group_of(course, 6)
    response = api(member(course)).post(
        f"/api/v1/courses/{course.code}/groups/join/", {"code": full.join_code}, format="json"
    )
    assert response.status_code == 409
    assert response.json() == {"detail": f"{full.name} is full (6 members).", "code": "conflict"}


def test_after_the_deadline_a_student_gets_403() -> None:
    course = CourseFactory()
    from tests.factories import MilestoneFactory

    MilestoneFactory(course=course, key="group-formation", due_at="2026-01-30T07:59:00Z")
    group = group_of(course, 4)
    response = api(member(course)).post(
        f"/api/v1/courses/{course.code}/groups/join/", {"code": group.join_code}, format="json"
    )
    assert response.status_code == 403
    assert "ask the course staff" in response.json()["detail"]


def test_students_get_403_on_every_staff_action() -> None:
    course = open_course()
    a, b = group_of(course, 4), group_of(course, 4)
    student = a.memberships.first().user
    client = api(student)
    base = f"/api/v1/courses/{course.code}/groups"
    assert (
        client.post(f"{base}/{b.pk}/members/", {"user": student.pk}, format="json").status_code
        == 403
    )
    assert client.delete(f"{base}/{a.pk}/members/{student.pk}/").status_code == 403
    assert client.post(f"{base}/{a.pk}/merge/", {"into": b.pk}, format="json").status_code == 403
    assert client.delete(f"{base}/{b.pk}/").status_code == 403
    assert client.get(f"{base}/ungrouped/").status_code == 403
    assert client.patch(f"{base}/{b.pk}/", {"name": "Mine now"}, format="json").status_code == 403


def test_staff_move_merge_dissolve_through_the_api() -> None:
    course = open_course()
    a, b, c = group_of(course, 4, "A"), group_of(course, 1, "B"), group_of(course, 2, "C")
    ta = api(member(course, Role.TA))
    base = f"/api/v1/courses/{course.code}/groups"
    loner = member(course)
    assert [u["email"] for u in ta.get(f"{base}/ungrouped/").json()["results"]] == [loner.email]
    assert ta.post(f"{base}/{a.pk}/members/", {"user": loner.pk}, format="json").json()["size"] == 5
    assert ta.post(f"{base}/{b.pk}/merge/", {"into": c.pk}, format="json").json()["size"] == 3
    assert ta.delete(f"{base}/{c.pk}/").status_code == 204
    assert [g["name"] for g in ta.get(f"{base}/").json()["results"]] == ["A"]


def test_other_courses_are_404_and_anonymous_401() -> None:
    course, other = open_course(), open_course()
    group = group_of(other, 2)
    outsider = member(course)
    assert api(outsider).get(f"/api/v1/courses/{other.code}/groups/").status_code == 404
    assert api(outsider).get(f"/api/v1/courses/{course.code}/groups/{group.pk}/").status_code == 404
    assert APIClient().get(f"/api/v1/courses/{course.code}/groups/").status_code == 401


def test_group_list_queries_do_not_grow_with_groups(django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    course = open_course()
    ta = api(member(course, Role.TA))
    group_of(course, 4)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    ta.get(f"/api/v1/courses/{course.code}/groups/")  # warm: the role is cached on the user
    with CaptureQueriesContext(connection) as small:
        ta.get(f"/api/v1/courses/{course.code}/groups/")
    for _ in range(6):
        group_of(course, 5)
    with CaptureQueriesContext(connection) as big:
        ta.get(f"/api/v1/courses/{course.code}/groups/")
    assert len(big.captured_queries) == len(small.captured_queries)


# ---------------------------------------------------------------- roster API


CSV = b"name,email,sid,role\nAda,ada@uni.edu,3031,student\nBo,bo@uni.edu,3032,student\n"


def test_roster_upload_preview_and_commit() -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    course = CourseFactory()
    ta = api(member(course, Role.TA))
    base = f"/api/v1/courses/{course.code}/roster"
    up = ta.post(f"{base}/imports/", {"file": SimpleUploadedFile("r.csv", CSV)}, format="multipart")
    assert up.status_code == 201
    assert up.json()["summary"]["added"] == 2
    assert ta.get(f"{base}/?role=student").json()["count"] == 0  # nothing yet
    done = ta.post(f"{base}/imports/{up.json()['id']}/commit/")
    assert done.status_code == 200
    assert done.json()["committed"] is True
    assert ta.get(f"{base}/?role=student&q=ada").json()["results"][0]["email"] == "ada@uni.edu"
    assert ta.post(f"{base}/imports/{up.json()['id']}/commit/").status_code == 409


def test_roster_with_bad_rows_cannot_be_committed() -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    course = CourseFactory()
    ta = api(member(course, Role.TA))
    base = f"/api/v1/courses/{course.code}/roster"
    up = ta.post(
        f"{base}/imports/",
        {"file": SimpleUploadedFile("r.csv", CSV + b"Cy,cy@uni,1,teacher-ish\n")},
        format="multipart",
    ).json()
    assert up["problems"] == [
        {"row": 4, "column": "email", "message": "'cy@uni' is not an email address"},
        {
            "row": 4,
            "column": "role",
            "message": "unknown role 'teacher-ish' (use student, TA or instructor)",
        },
    ]
    response = ta.post(f"{base}/imports/{up['id']}/commit/")
    assert response.status_code == 409
    assert "Nothing was changed" in response.json()["detail"]


def test_students_cannot_touch_the_roster() -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    course = CourseFactory()
    student = api(member(course))
    base = f"/api/v1/courses/{course.code}/roster"
    assert student.get(f"{base}/").status_code == 403
    assert (
        student.post(
            f"{base}/imports/", {"file": SimpleUploadedFile("r.csv", CSV)}, format="multipart"
        ).status_code
        == 403
    )


def test_upload_without_a_file_is_400() -> None:
    course = CourseFactory()
    response = api(member(course, Role.TA)).post(
        f"/api/v1/courses/{course.code}/roster/imports/", {}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json()["field"] == "file"
