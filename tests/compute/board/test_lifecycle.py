"""When a group ends, compute reacts in the same transaction: the node and IP are free at once,
the allocation's history ends at that instant, its windows close and the other groups hear it."""

from __future__ import annotations

import contextlib
import datetime as dt
import io

import pytest
from django.core import mail
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from apps.compute.board.windows import window_approve, window_request
from apps.compute.models import Allocation, SharingWindow
from apps.core.models import AuditEvent, Role, User
from apps.groups.services import group_dissolve, group_merge
from tests.factories import CourseFactory, compute_inventory, group_of, member

pytestmark = pytest.mark.django_db


def as_user(user: User) -> Client:
    c = Client()
    c.force_login(user)
    return c


def check_course(code: str) -> str:
    out = io.StringIO()
    with contextlib.suppress(SystemExit):
        call_command("check_course", code, stdout=out)
    return out.getvalue()


@pytest.fixture
def world():  # type: ignore[no-untyped-def]
    from apps.compute.board.services import allocate_all

    course = CourseFactory()
    compute_inventory(course, 3)
    groups = [group_of(course, 4, f"G{i}") for i in range(3)]
    staff = member(course, Role.TA)
    allocate_all(actor=staff, course=course)
    students = {g.name: g.memberships.first().user for g in groups}
    return course, staff, groups, students


def _window(course, students, staff, *, approve: bool) -> SharingWindow:  # type: ignore[no-untyped-def]
    g1_node = Allocation.objects.get(group__name="G1", ended_at__isnull=True).node_id
    start = timezone.now() + dt.timedelta(days=1)
    w = window_request(
        actor=students["G0"],
        course=course,
        node_ids=[g1_node],
        starts_at=start,
        ends_at=start + dt.timedelta(hours=4),
        purpose="2-node run",
    )
    if approve:
        window_approve(actor=staff, course=course, window_id=w.pk, confirm=True)
    return w


def test_dissolving_a_group_frees_its_node_and_ip_closes_its_windows_and_tells_the_others(
    world, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course, staff, groups, students = world
    approved = _window(course, students, staff, approve=True)
    asked = _window(course, students, staff, approve=False)
    held = Allocation.objects.get(group=groups[0], ended_at__isnull=True)
    assert "0 violations" in check_course(course.code)
    confirm = as_user(staff).get(f"/c/{course.code}/groups/{groups[0].pk}/dissolve/")
    assert f"{held.node.name} and {held.static_ip.address} become free at once." in (
        confirm.content.decode()
    )
    assert "2 sharing window(s) close" in confirm.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        group_dissolve(actor=staff, course=course, group_id=groups[0].pk)
    held.refresh_from_db()
    dissolved_at = groups[0].__class__.objects.get(pk=groups[0].pk).dissolved_at
    assert held.ended_at == dissolved_at  # history ends at that instant
    board = as_user(staff).get(f"/c/{course.code}/compute/").content.decode()
    nodes_table = board.split('aria-label="Nodes"', 1)[1].split("</table>", 1)[0]
    assert held.node.name in nodes_table
    assert ">G0<" not in nodes_table  # the node's row shows no group
    rows = as_user(staff).get(f"/api/v1/courses/{course.code}/allocations/").json()["results"]
    assert sorted(r["group"] for r in rows) == ["G1", "G2"]
    assert SharingWindow.objects.get(pk=approved.pk).status == "cancelled"
    assert SharingWindow.objects.get(pk=asked.pk).status == "declined"
    g1_emails = set(groups[1].memberships.values_list("user__email", flat=True))
    told = {to for m in mail.outbox for to in m.to if "Sharing window" in m.subject}
    assert told == g1_emails  # the lending group, not the dissolved one
    caused = AuditEvent.objects.filter(action="allocation.released").latest("pk")
    assert caused.after["event"] == "GroupDissolved"
    # the freed node is allocatable at once
    newcomer = group_of(course, 4, "G9")
    from apps.compute.board.services import allocation_create

    again = allocation_create(actor=staff, course=course, group_id=newcomer.pk)
    assert again.node_id == held.node_id
    assert "0 violations" in check_course(course.code)


def test_merging_keeps_the_targets_node_or_moves_the_sources(world) -> None:  # type: ignore[no-untyped-def]
    course, staff, groups, _students = world
    g0 = Allocation.objects.get(group=groups[0], ended_at__isnull=True)
    g1 = Allocation.objects.get(group=groups[1], ended_at__isnull=True)
    for g in groups[:2]:  # two members each, so the merged group fits
        for m in g.memberships.filter(left_at__isnull=True).order_by("-pk")[:2]:
            m.left_at = timezone.now()
            m.save()
    group_merge(actor=staff, course=course, source_id=groups[0].pk, target_id=groups[1].pk)
    assert Allocation.objects.get(pk=g1.pk).ended_at is None  # the target keeps its node
    assert Allocation.objects.get(pk=g0.pk).ended_at is not None  # the source's is freed
    # a group without a node merged with one that has: the node moves with the members
    g2 = Allocation.objects.get(group=groups[2], ended_at__isnull=True)
    lone = group_of(course, 2, "Lone")
    for m in groups[2].memberships.filter(left_at__isnull=True).order_by("-pk")[:2]:
        m.left_at = timezone.now()
        m.save()
    group_merge(actor=staff, course=course, source_id=groups[2].pk, target_id=lone.pk)
    moved = Allocation.objects.get(group=lone, ended_at__isnull=True)
    assert (moved.node_id, moved.static_ip_id) == (g2.node_id, g2.static_ip_id)
    assert Allocation.objects.get(pk=g2.pk).ended_at == moved.started_at
    assert "0 violations" in check_course(course.code)


def test_check_course_names_a_dissolved_group_that_still_holds_a_node(world) -> None:  # type: ignore[no-untyped-def]
    """The invariant itself: a group ended behind the services' back is found and named."""
    course, _staff, groups, _students = world
    type(groups[0]).objects.filter(pk=groups[0].pk).update(dissolved_at=timezone.now())
    out = check_course(course.code)
    assert "G0 (ended) still holds" in out
    assert "1 violations" in out
    with pytest.raises(SystemExit) as exit_:
        call_command("check_course", course.code, stdout=io.StringIO())
    assert exit_.value.code == 1


def test_dropping_every_member_from_the_roster_ends_the_group_and_frees_its_node(world) -> None:  # type: ignore[no-untyped-def]
    """The roster import drops students; groups reacts (the memberships end, an emptied group
    ends) and compute reacts to that in turn, all in the import's transaction."""
    from apps.core.models import Membership
    from apps.roster.services import roster_commit, roster_upload

    course, _, groups, _ = world
    instructor = member(course, Role.INSTRUCTOR)
    held = Allocation.objects.get(group=groups[0], ended_at__isnull=True)
    leaving = set(groups[0].memberships.values_list("user__email", flat=True))
    keep = Membership.objects.filter(course=course, role=Role.STUDENT).select_related("user")
    rows = "".join(
        f"{m.user.full_name},{m.user.email},,student\n" for m in keep if m.user.email not in leaving
    )
    record, preview = roster_upload(
        actor=instructor,
        course=course,
        filename="r.csv",
        data=f"name,email,sid,role\n{rows}".encode(),
    )
    assert {c.email for c in preview.dropped} == leaving
    roster_commit(actor=instructor, record=record)
    groups[0].refresh_from_db()
    assert groups[0].dissolved_at is not None
    assert Allocation.objects.get(pk=held.pk).ended_at is not None
    assert "0 violations" in check_course(course.code)


def test_a_dissolved_groups_request_to_move_nodes_is_declined_with_it(world) -> None:  # type: ignore[no-untyped-def]
    from apps.compute.board.moves import move_request
    from apps.compute.models import Node, NodeMove

    course, staff, groups, students = world
    held = Allocation.objects.get(group=groups[0], ended_at__isnull=True)
    Node.objects.filter(pk=held.node_id).update(status=Node.Status.FAILED)
    move = move_request(actor=students["G0"], course=course)
    group_dissolve(actor=staff, course=course, group_id=groups[0].pk)
    move.refresh_from_db()
    assert move.status == NodeMove.Status.DECLINED
    assert "G0 was dissolved" in move.note
    assert "0 violations" in check_course(course.code)
    # With the reaction undone, check_course names the ended group's open request.
    NodeMove.objects.filter(pk=move.pk).update(status=NodeMove.Status.REQUESTED)
    assert "G0 (ended) still asks to move off" in check_course(course.code)


def test_a_merged_groups_affects_us_marks_become_the_targets_once(world) -> None:  # type: ignore[no-untyped-def]
    from apps.compute.board.incidents import incident_affects_us, incident_report, incident_update
    from apps.compute.models import IncidentAffected

    course, staff, groups, students = world
    g0, _, g2 = groups
    small = group_of(course, 1, "Solo")
    node = Allocation.objects.get(group=g2, ended_at__isnull=True).node_id
    wide = incident_report(
        actor=students["G2"],
        course=course,
        node_id=node,
        occurred_at=timezone.now(),
        summary="Filesystem full",
    )
    incident_update(
        actor=staff, course=course, incident_id=wide.pk, status="open", course_wide=True
    )
    solo = small.memberships.first().user
    incident_affects_us(actor=solo, course=course, incident_id=wide.pk)
    incident_affects_us(actor=students["G0"], course=course, incident_id=wide.pk)
    # Solo merges into G0, which already said so: one mark stays, G0's.
    group_merge(actor=staff, course=course, source_id=small.pk, target_id=g0.pk)
    assert list(IncidentAffected.objects.values_list("group__name", flat=True)) == ["G0"]
    assert "0 violations" in check_course(course.code)
