"""Allocation at the group-formation deadline: with the clock past the deadline the beat task
allocates every eligible group once, names the groups under the minimum to staff, and e-mails
each group its node, IP and SSH line."""

from __future__ import annotations

import datetime as dt
import re

import pytest
import time_machine
from django.core import mail
from django.test import Client
from django.utils import timezone

from apps.compute.board.formation import allocate_at_formation
from apps.compute.board.tasks import allocate_at_formation_due
from apps.compute.models import Allocation, ComputePolicy
from apps.core.models import AuditEvent, Role
from tests.factories import compute_inventory, group_of, member, open_course

pytestmark = pytest.mark.django_db


@pytest.fixture
def course():  # type: ignore[no-untyped-def]
    course = open_course()  # formation deadline a week away
    compute_inventory(course, 4)
    for name, size in (("Attention", 4), ("Bubbles", 5), ("Cache", 2), ("Dense", 6)):
        group_of(course, size, name)
    member(course, Role.INSTRUCTOR)
    return course


def _held() -> dict[str, tuple[str, str]]:
    return {
        a.group.name: (a.node.name, a.static_ip.address)
        for a in Allocation.objects.filter(ended_at__isnull=True).select_related(
            "group", "node", "static_ip"
        )
    }


def test_nothing_happens_before_the_deadline(course, celery_eager) -> None:  # type: ignore[no-untyped-def]
    assert allocate_at_formation_due() == 0
    assert _held() == {}


def test_past_the_deadline_every_eligible_group_gets_a_node_once(  # type: ignore[no-untyped-def]
    course, celery_eager, django_capture_on_commit_callbacks
) -> None:
    with time_machine.travel(timezone.now() + dt.timedelta(days=7, minutes=5)):
        with django_capture_on_commit_callbacks(execute=True):
            assert allocate_at_formation_due() == 3
        held = _held()
        assert set(held) == {"Attention", "Bubbles", "Dense"}  # Cache (2) is under the minimum
        assert len({n for n, _ in held.values()}) == 3
        # Each allocated group's members got their node, IP and SSH line; staff got the rest.
        # One e-mail per member, each with that member's own login name on the node.
        to_groups = [m for m in mail.outbox if "your node is" in m.subject]
        assert len(to_groups) == 4 + 5 + 6
        bubbles = [m for m in to_groups if "Bubbles" in m.subject]
        assert len(bubbles) == 5
        assert all(len(m.to) == 1 for m in bubbles)
        for m in bubbles:
            login = m.to[0].split("@")[0]
            assert f"ssh {login}@{held['Bubbles'][1]}" in m.body
        assert "YOUR_USERNAME" not in "".join(m.body for m in to_groups)
        staff = next(m for m in mail.outbox if "Formation allocation" in m.subject)
        assert "Cache (2 members)" in staff.body
        # A second run (or a second worker) changes nothing and sends nothing.
        sent = len(mail.outbox)
        with django_capture_on_commit_callbacks(execute=True):
            assert allocate_at_formation_due() == 0
        assert _held() == held
        assert len(mail.outbox) == sent
    assert AuditEvent.objects.filter(action="allocation.formation").count() == 1


def test_the_board_names_the_groups_left_and_staff_can_run_it_early(course) -> None:  # type: ignore[no-untyped-def]
    instructor = course.memberships.get(role=Role.INSTRUCTOR).user
    c = Client()
    c.force_login(instructor)
    page = c.get(f"/c/{course.code}/compute/").content.decode()
    assert "Runs by itself at the formation deadline" in page
    assert "Cache (2)" in page  # left to staff, named before it runs
    r = c.post(f"/c/{course.code}/compute/formation/", follow=True)
    assert "Allocated 3 group(s)" in r.content.decode()
    assert "Left to you: Cache (2 members)" in r.content.decode()
    assert set(_held()) == {"Attention", "Bubbles", "Dense"}
    again = c.post(f"/c/{course.code}/compute/formation/", follow=True).content.decode()
    assert re.search(
        r"Nothing to do: It already ran on \w{3} \w{3} \d+, \d{4}, \d+:\d\d [AP]M P[SD]T\.", again
    )


def test_turned_off_in_the_course_file_it_waits_for_staff(course) -> None:  # type: ignore[no-untyped-def]
    ComputePolicy.objects.create(course=course, allocate_at_formation=False)
    with time_machine.travel(timezone.now() + dt.timedelta(days=8)):
        assert allocate_at_formation_due() == 0
        assert _held() == {}


def test_too_few_nodes_allocates_what_there_is_and_names_the_rest(course) -> None:  # type: ignore[no-untyped-def]
    from apps.compute.models import Node

    Node.objects.filter(course=course).order_by("-name")[:1].get().delete()
    Node.objects.filter(course=course).order_by("-name")[:1].get().delete()  # 2 nodes left
    result = allocate_at_formation(course=course, now=timezone.now() + dt.timedelta(days=8))
    assert result.ran
    assert len(result.allocated) == 2
    assert result.without_node == ["Dense"]
