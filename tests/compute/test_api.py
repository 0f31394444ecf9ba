"""Compute API for every role: a student never sees another group's IP, files or incidents."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.compute.board.incidents import incident_report
from apps.compute.board.services import allocate_all
from apps.compute.board.windows import window_approve, window_request
from apps.compute.models import Allocation
from apps.core.models import Role, User
from tests.factories import CourseFactory, compute_inventory, group_of, member

pytestmark = pytest.mark.django_db


def api(user: User | None) -> APIClient:
    c = APIClient()
    if user is not None:
        c.force_authenticate(user)
    return c


@pytest.fixture
def world():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    compute_inventory(course, 3)
    groups = {n: group_of(course, 4, n) for n in ("A", "B", "C")}
    ta = member(course, Role.TA)
    allocate_all(actor=ta, course=course)
    alloc = {n: Allocation.objects.get(group=g, ended_at__isnull=True) for n, g in groups.items()}
    students = {n: g.memberships.first().user for n, g in groups.items()}
    # B and C share a window; B reports an incident
    w = window_request(
        actor=students["B"],
        course=course,
        node_ids=[alloc["C"].node_id],
        starts_at=timezone.now() + dt.timedelta(hours=3),
        ends_at=timezone.now() + dt.timedelta(hours=9),
    )
    window_approve(actor=ta, course=course, window_id=w.pk, confirm=True)
    incident_report(
        actor=students["B"],
        course=course,
        node_id=alloc["B"].node_id,
        occurred_at=timezone.now() - dt.timedelta(minutes=1),
        summary="B's secret trouble",
    )
    return course, ta, alloc, students, w


READS = ["nodes/", "allocations/", "my-node/files/", "windows/", "incidents/"]


def test_a_student_of_group_a_never_sees_group_bs_ip_through_any_endpoint(world) -> None:  # type: ignore[no-untyped-def]
    course, _ta, alloc, students, w = world
    client = api(students["A"])
    b_ip = alloc["B"].static_ip.address
    for path in [*READS, f"windows/{w.pk}/files/", "static-ips/"]:
        response = client.get(f"/api/v1/courses/{course.code}/{path}")
        assert b_ip not in json.dumps(response.json()), path
        assert "secret trouble" not in json.dumps(response.json()), path
    assert client.get(f"/api/v1/courses/{course.code}/windows/{w.pk}/files/").status_code == 404
    assert client.get(f"/api/v1/courses/{course.code}/static-ips/").status_code == 403


def test_a_student_sees_their_own_node_ip_and_files(world) -> None:  # type: ignore[no-untyped-def]
    course, _ta, alloc, students, _w = world
    client = api(students["A"])
    allocs = client.get(f"/api/v1/courses/{course.code}/allocations/").json()["results"]
    assert [a["static_ip"] for a in allocs] == [alloc["A"].static_ip.address]
    files = client.get(f"/api/v1/courses/{course.code}/my-node/files/").json()
    assert files["launch_env"][alloc["A"].node.name]["MASTER_ADDR"] == alloc["A"].static_ip.address


def test_window_partners_get_both_ips_in_the_files(world) -> None:  # type: ignore[no-untyped-def]
    course, _ta, alloc, students, w = world
    files = api(students["C"]).get(f"/api/v1/courses/{course.code}/windows/{w.pk}/files/").json()
    assert alloc["B"].static_ip.address in files["hosts"]
    assert alloc["C"].static_ip.address in files["hosts"]
    assert files["launch_env"][alloc["C"].node.name]["NNODES"] == "2"


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        (
            "post",
            "nodes/",
            {
                "name": "n9",
                "gcp_project": "p-project",
                "zone": "us-central1-a",
                "internal_ip": "10.0.9.9",
            },
        ),
        (
            "post",
            "static-ips/",
            {"address": "198.51.100.99", "resource_name": "ip-99", "region": "us-central1"},
        ),
        ("post", "allocations/allocate-all/", None),
        ("post", "allocations/", {"group": 1}),
    ],
)
def test_students_get_403_on_staff_writes(world, method: str, path: str, body: dict | None) -> None:  # type: ignore[no-untyped-def]
    course, _ta, _alloc, students, _w = world
    response = getattr(api(students["A"]), method)(
        f"/api/v1/courses/{course.code}/{path}", body, format="json"
    )
    assert response.status_code == 403


def test_staff_release_and_node_status(world) -> None:  # type: ignore[no-untyped-def]
    course, ta, alloc, _students, _w = world
    client = api(ta)
    assert client.post(
        f"/api/v1/courses/{course.code}/allocations/{alloc['A'].pk}/release/"
    ).json()["ended_at"]
    patched = client.patch(
        f"/api/v1/courses/{course.code}/nodes/{alloc['A'].node_id}/",
        {"status": "maintenance"},
        format="json",
    )
    assert patched.json()["status"] == "maintenance"
    assert (
        client.post(
            f"/api/v1/courses/{course.code}/allocations/{alloc['A'].pk}/release/"
        ).status_code
        == 409
    )


def test_overlapping_window_approval_is_409_naming_the_window(world) -> None:  # type: ignore[no-untyped-def]
    course, _ta, alloc, students, w = world
    start = w.starts_at + dt.timedelta(hours=1)
    created = api(students["A"]).post(
        f"/api/v1/courses/{course.code}/windows/",
        {
            "node_ids": [alloc["C"].node_id],
            "starts_at": start.isoformat(),
            "ends_at": (start + dt.timedelta(hours=2)).isoformat(),
        },
        format="json",
    )
    assert created.status_code == 201
    response = api(students["C"]).post(
        f"/api/v1/courses/{course.code}/windows/{created.json()['id']}/approve/"
    )
    assert response.status_code == 409
    assert f"window #{w.pk} of B" in response.json()["detail"]


def test_bad_window_request_is_400(world) -> None:  # type: ignore[no-untyped-def]
    course, _ta, alloc, students, _w = world
    start = timezone.now() + dt.timedelta(hours=1)
    response = api(students["A"]).post(
        f"/api/v1/courses/{course.code}/windows/",
        {
            "node_ids": [alloc["B"].node_id],
            "starts_at": start.isoformat(),
            "ends_at": (start + dt.timedelta(hours=72)).isoformat(),
        },
        format="json",
    )
    assert response.status_code == 400
    assert "at most 48 hours" in response.json()["detail"]


def test_incidents_through_the_api(world) -> None:  # type: ignore[no-untyped-def]
    course, ta, alloc, students, _w = world
    created = api(students["A"]).post(
        f"/api/v1/courses/{course.code}/incidents/",
        {
            "node": alloc["A"].node_id,
            "occurred_at": timezone.now().isoformat(),
            "summary": "Xid 79",
        },
        format="json",
    )
    assert created.status_code == 201
    assert [
        i["summary"]
        for i in api(students["A"])
        .get(f"/api/v1/courses/{course.code}/incidents/")
        .json()["results"]
    ] == ["Xid 79"]
    assert (
        api(students["A"])
        .post(
            f"/api/v1/courses/{course.code}/incidents/{created.json()['id']}/status/",
            {"status": "resolved"},
            format="json",
        )
        .status_code
        == 403
    )
    done = api(ta).post(
        f"/api/v1/courses/{course.code}/incidents/{created.json()['id']}/status/",
        {"status": "resolved", "note": "GPU reset"},
        format="json",
    )
    assert done.json()["status"] == "resolved"


@pytest.mark.parametrize("path", READS)
def test_anonymous_is_401_and_other_courses_404(world, path: str) -> None:  # type: ignore[no-untyped-def]
    course, _ta, _alloc, _students, _w = world
    assert api(None).get(f"/api/v1/courses/{course.code}/{path}").status_code == 401
    outsider = member(CourseFactory())
    assert api(outsider).get(f"/api/v1/courses/{course.code}/{path}").status_code == 404
