"""Pages: My group, the formation board (staff only), the roster import."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from apps.core.models import Membership, Role, User
from apps.groups.models import Group
from tests.factories import CourseFactory, MilestoneFactory, group_of, member, open_course

pytestmark = pytest.mark.django_db


def as_user(user: User) -> Client:
    c = Client()
    c.force_login(user)
    return c


def test_my_group_forms_until_the_deadline() -> None:
    course = open_course()
    student = member(course)
    client = as_user(student)
    page = client.get(f"/c/{course.code}/group/").content.decode()
    assert "Join a group" in page and "Start a group" in page  # noqa: PT018
    client.post(f"/c/{course.code}/group/create/", {"create-name": "Tensor Cores"})
    page = client.get(f"/c/{course.code}/group/").content.decode()
    group = Group.objects.get(name="Tensor Cores")
    assert f'id="join-code">{group.join_code}' in page


def test_my_group_shows_errors_on_the_field() -> None:
    course = open_course()
    group_of(course, 2, "Taken")
    response = as_user(member(course)).post(
        f"/c/{course.code}/group/create/", {"create-name": "taken"}
    )
    assert "There is already a group called" in response.content.decode()
    response = as_user(member(course)).post(
        f"/c/{course.code}/group/join/", {"join-code": "ZZZZ9999"}
    )
    assert "No group in this course has that join code" in response.content.decode()


def test_after_the_deadline_the_page_says_ask_staff() -> None:
    course = CourseFactory()
    MilestoneFactory(course=course, key="group-formation", due_at="2026-01-30T07:59:00Z")
    page = as_user(member(course)).get(f"/c/{course.code}/group/").content.decode()
    assert "Groups were final at" in page
    assert "Join a group" not in page


def test_board_is_staff_only() -> None:
    course = open_course()
    assert as_user(member(course)).get(f"/c/{course.code}/groups/").status_code == 403
    assert as_user(member(course)).get(f"/c/{course.code}/groups/export.csv").status_code == 403
    assert as_user(member(course)).get(f"/c/{course.code}/roster/").status_code == 403


def test_board_lists_under_minimum_groups_and_ungrouped_students() -> None:
    course = open_course()
    small = group_of(course, 3, "Small")
    fine = group_of(course, 5, "Fine")
    loner = member(course, full_name="Lone Wolf")
    page = (
        as_user(member(course, Role.TA))
        .get(f"/c/{course.code}/groups/?show=under")
        .content.decode()
    )
    assert f'id="g{small.pk}"' in page
    assert f'id="g{fine.pk}"' not in page
    assert "Lone Wolf" in page
    assert loner.email in page


def test_board_actions_and_dissolve_confirmation() -> None:
    course = open_course()
    a = group_of(course, 4, "A")
    loner = member(course)
    ta = as_user(member(course, Role.TA))
    ta.post(f"/c/{course.code}/groups/move/", {"user": loner.pk, "group": a.pk})
    assert a.memberships.filter(left_at__isnull=True).count() == 5
    confirm = ta.get(f"/c/{course.code}/groups/{a.pk}/dissolve/").content.decode()
    assert "Dissolve A?" in confirm and "5 student(s) will be without a group" in confirm  # noqa: PT018
    assert a.memberships.filter(left_at__isnull=True).count() == 5  # GET changes nothing
    ta.post(f"/c/{course.code}/groups/{a.pk}/dissolve/")
    assert a.memberships.filter(left_at__isnull=True).count() == 0


def test_groups_export_csv() -> None:
    course = open_course()
    g = group_of(course, 2, "Ring Reduce")
    body = (
        as_user(member(course, Role.INSTRUCTOR))
        .get(f"/c/{course.code}/groups/export.csv")
        .content.decode()
    )
    lines = body.strip().splitlines()
    assert lines[0] == "group,size,join_code,name,email,sid,joined_at"
    assert sum(line.startswith(f"Ring Reduce,2,{g.join_code}") for line in lines) == 2


def test_roster_upload_preview_confirm_in_pages() -> None:
    course = CourseFactory()
    ta = as_user(member(course, Role.TA))
    response = ta.post(
        f"/c/{course.code}/roster/",
        {"file": SimpleUploadedFile("r.csv", b"name,email\nAda,ada@uni.edu\n")},
    )
    assert response.status_code == 302
    preview = ta.get(response["Location"]).content.decode()
    assert "Confirm: import 1 added" in preview
    assert Membership.objects.filter(course=course, role=Role.STUDENT).count() == 0
    ta.post(response["Location"])
    assert Membership.objects.filter(course=course, role=Role.STUDENT).count() == 1
    bad = ta.post(
        f"/c/{course.code}/roster/", {"file": SimpleUploadedFile("r.csv", b"name,email\nAda,\n")}
    )
    page = ta.get(bad["Location"]).content.decode()
    assert "missing email" in page and "Confirm" not in page  # noqa: PT018
