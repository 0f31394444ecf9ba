"""Run records: a group records what it ran (code version, configuration and its hash, seed,
artifacts); staff search and export them; a course can ask for one before a window starts."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from apps.compute.board.services import allocate_all
from apps.compute.board.windows import window_approve, window_request
from apps.compute.models import Allocation, ComputePolicy
from apps.core.models import Role, User
from apps.groups.services import group_merge
from tests.factories import CourseFactory, compute_inventory, group_of, member

pytestmark = pytest.mark.django_db

CONFIG = "model: llama-7b\nbatch_size: 512\nlr: 3.0e-4\n"


def as_user(user: User) -> Client:
    c = Client()
    c.force_login(user)
    return c


@pytest.fixture
def world():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    compute_inventory(course, 2)
    g0, g1 = group_of(course, 4, "G0"), group_of(course, 4, "G1")
    staff = member(course, Role.TA)
    allocate_all(actor=staff, course=course)
    return course, staff, g0, g1


def _student(group):  # type: ignore[no-untyped-def]
    return group.memberships.first().user


def test_round_trip_create_list_export(world) -> None:  # type: ignore[no-untyped-def]
    course, staff, g0, g1 = world
    c = as_user(_student(g0))
    r = c.post(
        f"/c/{course.code}/runs/",
        {
            "title": "1-node FSDP baseline",
            "repository": "https://github.com/g0/project",
            "commit": "A1B2C3D4E5F6",
            "config_file": SimpleUploadedFile("run.yaml", CONFIG.encode()),
            "seed": "1234",
            "artifacts": "gs://g0-runs/baseline/",
            "nodes": "node-1",
        },
        follow=True,
    )
    page = r.content.decode()
    assert "recorded" in page
    assert "1-node FSDP baseline" in page
    sha = hashlib.sha256(CONFIG.encode()).hexdigest()
    assert sha[:16] in page
    # The other group sees nothing of it; staff find it by commit and by group.
    assert (
        "1-node FSDP baseline"
        not in as_user(_student(g1)).get(f"/c/{course.code}/runs/").content.decode()
    )
    found = as_user(staff).get(f"/c/{course.code}/runs/?q=a1b2c3").content.decode()
    assert "1-node FSDP baseline" in found
    rows = list(
        csv.DictReader(
            io.StringIO(
                b"".join(
                    as_user(staff).get(f"/c/{course.code}/runs/export.csv").streaming_content
                ).decode()
            )
        )
    )
    assert [(x["group"], x["commit"], x["config_sha256"], x["seed"]) for x in rows] == [
        ("G0", "a1b2c3d4e5f6", sha, "1234")
    ]
    # Through the API as well: listed for the group, created with the same checks.
    api = APIClient()
    api.force_authenticate(_student(g0))
    listed = api.get(f"/api/v1/courses/{course.code}/runs/").json()
    assert listed["count"] == 1
    assert listed["results"][0]["config_sha256"] == sha


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("commit", "not-a-sha", "hexadecimal"),
        ("seed", "twelve", "integer"),
        ("title", "   ", "blank"),
        ("window", "99999", "not a window of your group"),
    ],
)
def test_bad_values_are_named(world, field, value, says) -> None:  # type: ignore[no-untyped-def]
    course, _, g0, _ = world
    api = APIClient()
    api.force_authenticate(_student(g0))
    data = {"title": "x", "repository": "https://x", "commit": "abcdef1", field: value}
    r = api.post(f"/api/v1/courses/{course.code}/runs/", data, format="json")
    assert r.status_code == 400, r.content
    body = r.json()
    assert body["field"] == field
    assert says in str(body).lower()


def test_a_window_that_needs_a_record_refuses_to_start_without_one(world) -> None:  # type: ignore[no-untyped-def]
    course, staff, g0, g1 = world
    ComputePolicy.objects.create(course=course, windows_need_run_record=True)
    start = timezone.now() + dt.timedelta(days=1)
    g1_node = Allocation.objects.get(group=g1, ended_at__isnull=True).node_id
    w = window_request(
        actor=_student(g0),
        course=course,
        node_ids=[g1_node],
        starts_at=start,
        ends_at=start + dt.timedelta(hours=4),
        purpose="2-node run",
    )
    window_approve(actor=staff, course=course, window_id=w.pk, confirm=True)
    c = as_user(_student(g0))
    refused = c.get(f"/c/{course.code}/windows/{w.pk}/files/launch/", follow=True)
    assert "asks for a run record before a window starts" in refused.content.decode()
    assert refused.redirect_chain[-1][0].endswith(f"/runs/?window={w.pk}")
    api = APIClient()
    api.force_authenticate(_student(g0))
    files = f"/api/v1/courses/{course.code}/windows/{w.pk}/files/"
    assert api.get(files).status_code == 409
    made = api.post(
        f"/api/v1/courses/{course.code}/runs/",
        {"title": "2-node", "repository": "https://x", "commit": "abcdef1", "window": w.pk},
        format="json",
    )
    assert made.status_code == 201, made.content
    assert api.get(files).status_code == 200
    launch = c.get(f"/c/{course.code}/windows/{w.pk}/files/launch/")
    assert launch.status_code == 200
    assert b"MASTER_ADDR" in launch.content
    # The window's row on the node page shows its record.
    assert "1 run record" in c.get(f"/c/{course.code}/node/").content.decode()


def test_records_move_with_their_group_on_a_merge(world) -> None:  # type: ignore[no-untyped-def]
    course, staff, g0, _g1 = world
    g2 = group_of(course, 2, "G2")
    api = APIClient()
    api.force_authenticate(_student(g2))
    made = api.post(
        f"/api/v1/courses/{course.code}/runs/",
        {"title": "kept", "repository": "https://x", "commit": "abcdef1"},
        format="json",
    )
    assert made.status_code == 201, made.content
    group_merge(actor=staff, course=course, source_id=g2.pk, target_id=g0.pk)
    listed = as_user(_student(g0)).get(f"/c/{course.code}/runs/").content.decode()
    assert "kept" in listed
