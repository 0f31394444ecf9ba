from __future__ import annotations

import datetime as dt

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from apps.compute.board.incidents import incident_report, incident_update
from apps.compute.board.services import allocate_all
from apps.compute.board.tasks import notify_staff_of_incident
from apps.compute.models import Allocation, Incident
from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import Role
from apps.core.timefmt import format_instant
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
    assert f"When: {format_instant(incident.occurred_at, course.timezone)}\n" in mail.outbox[0].body


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


def test_a_course_wide_incident_reaches_every_student_without_its_logs(  # type: ignore[no-untyped-def]
    django_capture_on_commit_callbacks,
) -> None:
    from django.test import Client

    from apps.compute.board.incidents import incident_report, incident_update
    from apps.compute.board.services import allocate_all
    from apps.compute.models import Allocation, Node
    from apps.core.models import Role
    from tests.factories import CourseFactory, compute_inventory, group_of, member

    course = CourseFactory()
    compute_inventory(course, 3)
    groups = [group_of(course, 4, f"G{i}") for i in range(3)]
    staff = member(course, Role.TA)
    allocate_all(actor=staff, course=course)
    reporter = groups[0].memberships.first().user
    other = groups[1].memberships.first().user
    node = Allocation.objects.get(group=groups[0], ended_at__isnull=True).node
    incident = incident_report(
        actor=reporter,
        course=course,
        node_id=node.pk,
        occurred_at=timezone.now(),
        summary="NVLink errors, node unusable",
        job_ids="job-SECRET-77",
        logs="Xid 74 SECRET-LOG-LINE",
        repro="torchrun SECRET-REPRO",
    )
    c = Client()
    c.force_login(other)
    assert "NVLink errors" not in c.get(f"/c/{course.code}/").content.decode()
    Node.objects.filter(pk=node.pk).update(status=Node.Status.FAILED)
    incident_update(
        actor=staff,
        course=course,
        incident_id=incident.pk,
        status="acknowledged",
        note="Replacing the host; use a spare.",
        course_wide=True,
    )
    for url in (f"/c/{course.code}/", f"/c/{course.code}/incidents/"):
        page = c.get(url).content.decode()
        assert f"{node.name}: NVLink errors" in page or "NVLink errors" in page
        assert "SECRET" not in page
    incidents_page = c.get(f"/c/{course.code}/incidents/").content.decode()
    assert f"{node.name} · failed" in incidents_page
    assert "Replacing the host" in incidents_page
    api = c.get(f"/api/v1/courses/{course.code}/incidents/course-wide/").json()
    assert api["results"][0]["node_status"] == "failed"
    assert "SECRET" not in str(api)
    assert "logs" not in api["results"][0]
    # "Affects us too", once per group.
    r = c.post(f"/c/{course.code}/incidents/{incident.pk}/affects-us/", follow=True)
    assert "Noted" in r.content.decode()
    assert "1 group said it is hit too" in r.content.decode()
    again = c.post(f"/api/v1/courses/{course.code}/incidents/{incident.pk}/affects-us/")
    assert again.status_code == 409


def test_a_group_on_a_failed_node_is_moved_to_a_spare_keeping_its_ip(  # type: ignore[no-untyped-def]
    celery_eager, django_capture_on_commit_callbacks
) -> None:
    from django.test import Client

    from apps.compute.board.services import allocate_all
    from apps.compute.models import Allocation, Node, NodeMove
    from apps.core.models import Role
    from tests.factories import CourseFactory, compute_inventory, group_of, member

    course = CourseFactory()
    compute_inventory(course, 3)  # 3 nodes for 2 groups: one spare
    groups = [group_of(course, 4, f"G{i}") for i in range(2)]
    staff = member(course, Role.TA)
    allocate_all(actor=staff, course=course)
    before = Allocation.objects.get(group=groups[0], ended_at__isnull=True)
    student = Client()
    student.force_login(groups[0].memberships.first().user)
    refused = student.post(f"/c/{course.code}/node/move/", follow=True).content.decode()
    assert "is ready; a move is offered when staff mark it failed" in refused
    Node.objects.filter(pk=before.node_id).update(status=Node.Status.FAILED)
    page = student.get(f"/c/{course.code}/node/").content.decode()
    assert "Ask to move to a spare node" in page
    asked = student.post(f"/c/{course.code}/node/move/", follow=True).content.decode()
    assert "Asked: the staff move you" in asked
    again = student.post(f"/c/{course.code}/node/move/", follow=True).content.decode()
    assert "already asked" in again
    board = Client()
    board.force_login(staff)
    assert (
        "Groups asking to leave a failed node"
        in board.get(f"/c/{course.code}/compute/").content.decode()
    )
    move = NodeMove.objects.get(status="requested")
    with django_capture_on_commit_callbacks(execute=True):
        done = board.post(f"/c/{course.code}/compute/moves/{move.pk}/approve/", follow=True)
    assert "moved to" in done.content.decode()
    after = Allocation.objects.get(group=groups[0], ended_at__isnull=True)
    assert after.node_id != before.node_id
    assert after.static_ip_id == before.static_ip_id  # the SSH address stays
    assert Node.objects.get(pk=after.node_id).status == Node.Status.READY
    told = [m for m in mail.outbox if "Node move" in m.subject]
    assert len(told) == 1
    assert "Your static IP is unchanged" in told[0].body


@pytest.mark.parametrize("reaction", [True, False])
def test_a_window_on_a_moved_node_follows_it_to_the_new_node(  # type: ignore[no-untyped-def]
    reaction, monkeypatch, celery_eager, django_capture_on_commit_callbacks
) -> None:
    import datetime as dt

    from django.utils import timezone

    from apps.compute.board import moves
    from apps.compute.board.services import allocate_all
    from apps.compute.board.windows import window_approve, window_request
    from apps.compute.models import Allocation, Node, NodeMove, SharingWindow
    from apps.core.invariants import run_checks
    from apps.core.models import Role
    from tests.factories import CourseFactory, compute_inventory, group_of, member

    course = CourseFactory()
    compute_inventory(course, 3)  # 3 nodes for 2 groups: one spare
    lender, borrower = group_of(course, 4, "Lender"), group_of(course, 4, "Borrower")
    staff = member(course, Role.TA)
    allocate_all(actor=staff, course=course)
    lent = Allocation.objects.get(group=lender, ended_at__isnull=True).node
    start = timezone.now() + dt.timedelta(days=1)
    w = window_request(
        actor=borrower.memberships.first().user,
        course=course,
        node_ids=[lent.pk],
        starts_at=start,
        ends_at=start + dt.timedelta(hours=2),
    )
    window_approve(actor=lender.memberships.first().user, course=course, window_id=w.pk)
    assert SharingWindow.objects.get(pk=w.pk).status == "approved"

    if not reaction:  # what the course check sees when nothing follows the move
        monkeypatch.setattr(moves, "_windows_follow", lambda *a, **k: [])
    Node.objects.filter(pk=lent.pk).update(status=Node.Status.FAILED)
    move = moves.move_request(actor=lender.memberships.first().user, course=course)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        moves.move_approve(actor=staff, course=course, move_id=move.pk)
    new = Allocation.objects.get(group=lender, ended_at__isnull=True).node
    said = [v.detail for v in run_checks(course.pk) if "window" in v.check]
    if not reaction:
        assert said == [
            f"Window #{w.pk} borrows {lent.name} from Lender, which no longer holds it."
        ]
        return
    assert said == []
    assert NodeMove.objects.get(pk=move.pk).status == "done"
    w.refresh_from_db()
    assert w.status == "approved"
    assert {n.node_id for n in w.nodes.all()} >= {new.pk}
    assert lent.pk not in {n.node_id for n in w.nodes.all()}
    assert f"Runs on {new.name} now" in w.note
    told = [m for m in mail.outbox if f"Sharing window #{w.pk}" in m.subject]
    assert len(told) == 1
    everyone = set(lender.memberships.values_list("user__email", flat=True)) | set(
        borrower.memberships.values_list("user__email", flat=True)
    )
    assert set(told[0].to) == everyone  # the lender and the borrowers


def test_a_staff_note_is_stamped_in_course_time_with_its_zone(world) -> None:  # type: ignore[no-untyped-def]
    """Students read the note in the course's zone, so its stamp is in that zone, named."""
    import re

    course, _instructor, ta, node, s0, _ = world
    assert course.timezone == "America/Los_Angeles"
    i = report(course, s0, node["G0"])
    i = incident_update(
        actor=ta, course=course, incident_id=i.pk, status="acknowledged", note="Looking at it"
    )
    assert "UTC" not in i.staff_notes
    assert re.fullmatch(
        rf"\[\w{{3}} \w{{3}} \d+, \d{{4}}, \d+:\d\d [AP]M P[SD]T, {re.escape(str(ta))}\] Looking at it",
        i.staff_notes,
    ), i.staff_notes


def test_the_incident_list_pages_keeping_the_status_filter(world) -> None:  # type: ignore[no-untyped-def]
    """A term's reports grow with the course: 25 a page, newest first, the filter kept."""
    course, _instructor, ta, node, s0, _ = world
    made = [report(course, s0, node["G0"], summary=f"report {n:02d}") for n in range(27)]
    staff = Client()
    staff.force_login(ta)
    url = f"/c/{course.code}/incidents/?status=open"
    first = staff.get(url).content.decode()
    assert "report 26" in first and "report 02" in first  # noqa: PT018
    assert "report 01" not in first
    assert "page 1 of 2" in first
    assert "status=open&amp;page=2" in first
    second = staff.get(url + "&page=2").content.decode()
    assert "report 01" in second and "report 00" in second and "report 26" not in second  # noqa: PT018
    incident_update(actor=ta, course=course, incident_id=made[0].pk, status="acknowledged")
    assert (
        "No resolved incidents."
        in staff.get(f"/c/{course.code}/incidents/?status=resolved").content.decode()
    )


def test_a_course_wide_incident_no_group_has_joined_says_so_in_words(world) -> None:  # type: ignore[no-untyped-def]
    course, _instructor, ta, node, s0, s1 = world
    i = report(course, s0, node["G0"], summary="NIC flaps")
    incident_update(actor=ta, course=course, incident_id=i.pk, status="open", course_wide=True)
    c = Client()
    c.force_login(s1)
    url = f"/c/{course.code}/incidents/"
    assert "no group has said it is hit too" in c.get(url).content.decode()
