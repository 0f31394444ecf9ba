from __future__ import annotations

import datetime as dt

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from apps.compute.incidents import incident_report, incident_update
from apps.compute.models import Allocation, Incident
from apps.compute.services import allocate_all
from apps.compute.tasks import notify_staff_of_incident
from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import Role
from tests.factories import CourseFactory, compute_inventory, group_of, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    compute_inventory(course, 2)
    g0, g1 = group_of(course, 4, "G0"), group_of(course, 4, "G1")
    instructor, ta = member(course, Role.INSTRUCTOR), member(course, Role.TA)
    allocate_all(actor=ta, course=course)
    node = {g.name: Allocation.objects.get(group=g, ended_at__isnull=True).node for g in (g0, g1)}
    return course, instructor, ta, node, g0.memberships.first().user, g1.memberships.first().user


def report(course, actor, node, **kw):  # type: ignore[no-untyped-def]
    return incident_report(
        actor=actor,
        course=course,
        node_id=node.pk,
        occurred_at=timezone.now() - dt.timedelta(minutes=5),
        summary=kw.pop("summary", "NCCL timeout"),
        **kw,
    )


def test_reporting_queues_an_email_to_staff_after_commit(
    world, django_capture_on_commit_callbacks, celery_eager
) -> None:  # type: ignore[no-untyped-def]
    course, instructor, ta, node, s0, _ = world
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        incident = report(
            course,
            s0,
            node["G0"],
            job_ids="run-42",
            logs="RuntimeError: NCCL timeout\n" * 3,
            repro="torchrun ...",
        )
    assert len(callbacks) == 1
    assert len(mail.outbox) == 1
    assert set(mail.outbox[0].to) == {instructor.email, ta.email}
    assert f"Incident #{incident.pk} on {node['G0'].name}: NCCL timeout" in mail.outbox[0].subject
    assert "run-42" in mail.outbox[0].body


def test_nothing_is_sent_when_the_report_fails(world, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    course, _instructor, _ta, node, s0, _ = world
    with django_capture_on_commit_callbacks() as callbacks, pytest.raises(NotAllowed):
        report(course, s0, node["G1"])  # not their node
    assert callbacks == []


def test_report_validation(world) -> None:  # type: ignore[no-untyped-def]
    course, _instructor, _ta, node, s0, _ = world
    with pytest.raises(DomainError, match="at most 1 MB"):
        report(course, s0, node["G0"], logs="x" * (1024 * 1024 + 1))
    with pytest.raises(DomainError, match="one line"):
        report(course, s0, node["G0"], summary="  ")
    with pytest.raises(DomainError, match="in the future"):
        incident_report(
            actor=s0,
            course=course,
            node_id=node["G0"].pk,
            occurred_at=timezone.now() + dt.timedelta(hours=1),
            summary="x",
        )


def test_status_moves_forward_only_and_staff_only(world) -> None:  # type: ignore[no-untyped-def]
    course, _instructor, ta, node, s0, _ = world
    i = report(course, s0, node["G0"])
    with pytest.raises(NotAllowed):
        incident_update(actor=s0, course=course, incident_id=i.pk, status="resolved")
    incident_update(
        actor=ta, course=course, incident_id=i.pk, status="acknowledged", note="Looking at the NIC"
    )
    i = incident_update(
        actor=ta, course=course, incident_id=i.pk, status="resolved", note="Replaced the node"
    )
    assert "Looking at the NIC" in i.staff_notes and "Replaced the node" in i.staff_notes  # noqa: PT018
    with pytest.raises(Conflict, match="resolved cannot become open"):
        incident_update(actor=ta, course=course, incident_id=i.pk, status="open")


def test_students_see_only_their_groups_incidents(world) -> None:  # type: ignore[no-untyped-def]
    course, _instructor, ta, node, s0, s1 = world
    mine, theirs = (
        report(course, s0, node["G0"], summary="mine"),
        report(course, s1, node["G1"], summary="theirs"),
    )
    c = Client()
    c.force_login(s0)
    page = c.get(f"/c/{course.code}/incidents/").content.decode()
    assert f"#{mine.pk}" in page
    assert "theirs" not in page
    staff = Client()
    staff.force_login(ta)
    page = staff.get(f"/c/{course.code}/incidents/").content.decode()
    assert "mine" in page and "theirs" in page  # noqa: PT018
    assert (
        c.post(f"/c/{course.code}/incidents/{theirs.pk}/", {"status": "resolved"}).status_code
        == 403
    )


def test_the_task_is_safe_for_a_missing_incident() -> None:
    assert notify_staff_of_incident(123456) == 0
    assert Incident.objects.count() == 0
