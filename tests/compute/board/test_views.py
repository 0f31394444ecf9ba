"""Compute pages: My node, downloads, windows; the staff board; nobody sees another group's IP."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from apps.compute.board.services import allocate_all
from apps.compute.board.windows import window_approve, window_request
from apps.compute.models import Allocation, SharingWindow
from apps.core.models import Role, User
from apps.core.timefmt import format_instant
from tests.factories import CourseFactory, compute_inventory, group_of, member

pytestmark = pytest.mark.django_db


def as_user(user: User) -> Client:
    c = Client()
    c.force_login(user)
    return c


@pytest.fixture
def world():  # type: ignore[no-untyped-def]
    course = CourseFactory()
    compute_inventory(course, 3)
    groups = [group_of(course, 4, f"G{i}") for i in range(3)]
    staff = member(course, Role.TA)
    allocate_all(actor=staff, course=course)
    alloc = {g.name: Allocation.objects.get(group=g, ended_at__isnull=True) for g in groups}
    students = {g.name: g.memberships.first().user for g in groups}
    return course, staff, alloc, students


def test_my_node_shows_my_ip_and_nobody_elses(world) -> None:  # type: ignore[no-untyped-def]
    course, _staff, alloc, students = world
    page = as_user(students["G0"]).get(f"/c/{course.code}/node/").content.decode()
    assert f'id="static-ip">{alloc["G0"].static_ip.address}' in page
    login = students["G0"].email.split("@")[0]
    assert f"ssh {login}@{alloc['G0'].static_ip.address}" in page
    for other in ("G1", "G2"):
        assert alloc[other].static_ip.address not in page


def test_my_node_files_are_my_groups_only(world) -> None:  # type: ignore[no-untyped-def]
    course, _staff, alloc, students = world
    client = as_user(students["G1"])
    for kind in ("hosts", "ssh", "launch", "firewall"):
        body = client.get(f"/c/{course.code}/node/files/{kind}/").content.decode()
        assert alloc["G1"].static_ip.address in body
        assert alloc["G0"].static_ip.address not in body
    assert client.get(f"/c/{course.code}/node/files/passwords/").status_code == 404


def test_window_files_only_for_participants_after_approval(world) -> None:  # type: ignore[no-untyped-def]
    course, staff, alloc, students = world
    w = window_request(
        actor=students["G0"],
        course=course,
        node_ids=[alloc["G1"].node_id],
        starts_at=timezone.now() + dt.timedelta(hours=2),
        ends_at=timezone.now() + dt.timedelta(hours=8),
    )
    url = f"/c/{course.code}/windows/{w.pk}/files/hosts/"
    assert as_user(students["G0"]).get(url).status_code == 403  # not approved yet
    window_approve(actor=staff, course=course, window_id=w.pk, confirm=True)
    body = as_user(students["G1"]).get(url).content.decode()
    assert alloc["G0"].static_ip.address in body and alloc["G1"].static_ip.address in body  # noqa: PT018
    # The window's span in the file is course time with the zone named, as on the pages.
    w.refresh_from_db()
    span = f"valid {format_instant(w.starts_at, course.timezone)} – "
    assert span in body.splitlines()[0] and "UTC" not in body  # noqa: PT018
    assert as_user(students["G2"]).get(url).status_code == 404  # not a participant
    assert (
        as_user(students["G2"]).post(f"/c/{course.code}/windows/{w.pk}/cancel/").status_code == 404
    )


def test_a_windows_ssh_config_names_each_node_by_its_own_login(world) -> None:  # type: ignore[no-untyped-def]
    """OS Login on one of a window's nodes only: that node's block has the Google identity's
    POSIX name, the other the course's login name (one name for all would fail on one)."""
    from apps.compute.board.logins import os_login_name, unix_names
    from apps.compute.models import Node

    course, staff, alloc, students = world
    w = window_request(
        actor=students["G0"],
        course=course,
        node_ids=[alloc["G1"].node_id],
        starts_at=timezone.now() + dt.timedelta(hours=2),
        ends_at=timezone.now() + dt.timedelta(hours=8),
    )
    window_approve(actor=staff, course=course, window_id=w.pk, confirm=True)
    Node.objects.filter(pk=alloc["G1"].node_id).update(os_login=True)
    me = students["G0"]
    body = as_user(me).get(f"/c/{course.code}/windows/{w.pk}/files/ssh/").content.decode()
    blocks = {b.split()[1]: b for b in body.split("\n\n")[1:]}
    own, lent = alloc["G0"].node.name, alloc["G1"].node.name
    assert f"User {unix_names(course.pk, [me.pk])[me.pk]}\n" in blocks[own]
    assert f"User {os_login_name(me.email)}\n" in blocks[lent]


def test_requesting_a_window_in_course_time_and_errors_on_fields(world) -> None:  # type: ignore[no-untyped-def]
    course, _staff, alloc, students = world
    client = as_user(students["G0"])
    start = (
        (timezone.now() + dt.timedelta(days=2))
        .astimezone(course.tz)
        .replace(minute=0, second=0, microsecond=0)
    )
    data = {
        "nodes": [str(alloc["G1"].node_id)],
        "starts_at": start.strftime("%Y-%m-%dT%H:%M"),
        "ends_at": (start + dt.timedelta(hours=50)).strftime("%Y-%m-%dT%H:%M"),
        "master_port": 29500,
    }
    page = client.post(f"/c/{course.code}/node/", data).content.decode()
    assert "at most 48 hours" in page
    data["ends_at"] = (start + dt.timedelta(hours=12)).strftime("%Y-%m-%dT%H:%M")
    assert client.post(f"/c/{course.code}/node/", data).status_code == 302
    w = SharingWindow.objects.get()
    assert w.starts_at == start  # read as course time, not UTC
    page = as_user(students["G1"]).get(f"/c/{course.code}/node/").content.decode()
    assert f"Approve use of {alloc['G1'].node.name}" in page


def test_the_board_is_staff_only_and_shows_the_timeline(world) -> None:  # type: ignore[no-untyped-def]
    course, staff, alloc, students = world
    assert as_user(students["G0"]).get(f"/c/{course.code}/compute/").status_code == 403
    w = window_request(
        actor=students["G0"],
        course=course,
        node_ids=[alloc["G1"].node_id],
        starts_at=timezone.now() + dt.timedelta(days=1),
        ends_at=timezone.now() + dt.timedelta(days=1, hours=12),
    )
    page = as_user(staff).get(f"/c/{course.code}/compute/").content.decode()
    assert "<svg" in page and 'class="window requested"' in page  # noqa: PT018
    assert f"#{w.pk} G0" in page
    for a in alloc.values():
        assert a.static_ip.address in page


def test_board_release_and_allocate_all(world) -> None:  # type: ignore[no-untyped-def]
    course, staff, alloc, _students = world
    client = as_user(staff)
    client.post(f"/c/{course.code}/compute/allocations/{alloc['G2'].pk}/release/")
    assert not Allocation.objects.filter(group=alloc["G2"].group, ended_at__isnull=True).exists()
    group_of(course, 4, "G9")
    response = client.post(f"/c/{course.code}/compute/allocate-all/", follow=True)
    assert "Left without: G9" in response.content.decode()  # 1 free node, 2 groups: none allocated
    assert not Allocation.objects.filter(group=alloc["G2"].group, ended_at__isnull=True).exists()


def test_staff_set_node_status_and_cannot_retire_a_held_node(world) -> None:  # type: ignore[no-untyped-def]
    course, staff, alloc, students = world
    client = as_user(staff)
    node = alloc["G0"].node
    response = client.post(
        f"/c/{course.code}/compute/nodes/{node.pk}/status/",
        {"status": "retired"},
        follow=True,
    )
    assert "still holds" in response.content.decode()
    node.refresh_from_db()
    assert node.status == "ready"
    client.post(
        f"/c/{course.code}/compute/nodes/{node.pk}/status/",
        {"status": "maintenance"},
    )
    node.refresh_from_db()
    assert node.status == "maintenance"
    assert (
        as_user(students["G0"])
        .post(
            f"/c/{course.code}/compute/nodes/{node.pk}/status/",
            {"status": "failed"},
        )
        .status_code
        == 403
    )


def test_the_timeline_moves_and_lists_what_it_does_not_show(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    """A window requested for five weeks ahead is not in the default three weeks: it is listed
    under the picture, and 'later' or the term range shows it."""
    import datetime as dt

    from django.test import Client
    from django.utils import timezone

    from apps.compute.board.windows import window_request
    from apps.compute.models import Allocation
    from apps.core.models import User

    student = User.objects.get(email="student01@example.edu")
    mine = Allocation.objects.get(group__memberships__user=student, ended_at__isnull=True)
    other = Allocation.objects.exclude(pk=mine.pk).filter(ended_at__isnull=True).first()
    start = timezone.now() + dt.timedelta(days=35)
    w = window_request(
        actor=student,
        course=ee290_demo,
        node_ids=[other.node_id],  # type: ignore[union-attr]
        starts_at=start,
        ends_at=start + dt.timedelta(hours=6),
    )
    staff = Client()
    staff.force_login(User.objects.get(email="instructor@example.edu"))
    board = staff.get(f"/c/{ee290_demo.code}/compute/").content.decode()
    outside = board[board.index("outside this range") :]
    assert f"#{w.pk}" in outside
    later = staff.get(
        f"/c/{ee290_demo.code}/compute/",
        {"range": "3weeks", "from": (timezone.now() + dt.timedelta(days=21)).date().isoformat()},
    ).content.decode()
    drawn = f"<title>#{w.pk} {w.requester.name} (requested)"
    assert drawn not in board  # not drawn in the default three weeks…
    assert drawn in later  # …but drawn once the board moves on
    rest = later[later.index("</figure>") :]
    assert f"#{w.pk} " not in rest[: rest.index("</section>")]  # …and no longer listed below
    week = staff.get(f"/c/{ee290_demo.code}/compute/", {"range": "week"}).content.decode()
    assert 'aria-current="page">a week' in week
    term = staff.get(
        f"/c/{ee290_demo.code}/compute/", {"range": "term", "from": "not-a-date"}
    ).content.decode()
    assert 'aria-current="page">the term' in term


def test_staff_choose_the_node_and_ip_for_one_group_on_the_board(world) -> None:  # type: ignore[no-untyped-def]
    """Two nodes and IPs free, one group waiting: the board lists the free ones with 'next
    free' preselected; staff pick the second node and the last IP, and the group gets exactly
    those. A node someone else took meanwhile, or a typed-in value, is refused by name."""
    from apps.compute.models import Node, StaticIP

    course, staff, alloc, _students = world
    client = as_user(staff)
    client.post(f"/c/{course.code}/compute/allocations/{alloc['G2'].pk}/release/")
    client.post(f"/c/{course.code}/compute/allocations/{alloc['G1'].pk}/release/")
    Allocation.objects.filter(group=alloc["G1"].group).delete()
    g1 = alloc["G1"].group
    g1.dissolved_at = timezone.now()
    g1.save()
    page = client.get(f"/c/{course.code}/compute/").content.decode()
    free = [alloc["G1"].node, alloc["G2"].node]
    for n in free:
        assert f'<option value="{n.pk}">{n.name}' in page
    assert "Next free" in page
    ips = list(StaticIP.objects.filter(course=course).exclude(pk=alloc["G0"].static_ip_id))
    chosen_node = max(free, key=lambda n: n.name)
    chosen_ip = max(ips, key=lambda i: i.address)
    g2 = alloc["G2"].group
    bad = client.post(
        f"/c/{course.code}/compute/groups/{g2.pk}/allocate/", {"node": "node-3"}, follow=True
    ).content.decode()
    assert "Choose a node from the list" in bad
    taken = client.post(
        f"/c/{course.code}/compute/groups/{g2.pk}/allocate/",
        {"node": str(alloc["G0"].node_id)},
        follow=True,
    ).content.decode()
    assert "That node is not free." in taken
    ok = client.post(
        f"/c/{course.code}/compute/groups/{g2.pk}/allocate/",
        {"node": str(chosen_node.pk), "ip": str(chosen_ip.pk)},
        follow=True,
    ).content.decode()
    assert f"G2 now holds {chosen_node.name} and {chosen_ip.address}." in ok
    held = Allocation.objects.get(group=g2, ended_at__isnull=True)
    assert (held.node_id, held.static_ip_id) == (chosen_node.pk, chosen_ip.pk)
    assert Node.objects.filter(pk=chosen_node.pk).exists()


def test_staff_download_the_cloud_jobs_of_a_filter_in_course_time(ee290) -> None:  # type: ignore[no-untyped-def]
    import csv
    import io

    from apps.compute.models import CloudOp, Node

    node = Node.objects.filter(course=ee290).order_by("name").first()
    ta = member(ee290, Role.TA, email="ta@uni.edu")
    made = [
        ("start", "failed", "403 FORBIDDEN", "A group asked", ta, 3),
        ("stop", "done", "", "Nightly stop", None, 1),
    ]
    for kind, status, reason, why, by, tries in made:
        CloudOp.objects.create(
            course=ee290,
            kind=kind,
            node=node,
            target=f"{kind}:{node.pk}",
            status=status,
            reason=reason,
            why=why,
            requested_by=by,
            attempts=tries,
        )
    client = Client()
    client.force_login(ta)
    url = f"/c/{ee290.code}/compute/cloud/"
    page = client.get(url, {"status": "failed"}).content.decode()
    assert 'href="?status=failed&amp;format=csv"' in page
    answer = client.get(url, {"status": "failed", "format": "csv"})
    assert f"{ee290.code}-cloud-jobs-failed.csv" in answer["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(b"".join(answer.streaming_content).decode())))
    assert rows[0][:5] == ["job", "asked", "what", "node", "status"]
    assert len(rows) == 2
    assert rows[1][3:8] == [node.name, "Failed", "3", "403 FORBIDDEN", "ta@uni.edu"]
    assert rows[1][1].endswith(("PST", "PDT"))
    every = client.get(url, {"status": "bogus", "format": "csv"})
    assert f"{ee290.code}-cloud-jobs-all.csv" in every["Content-Disposition"]
    assert len(list(csv.reader(io.StringIO(b"".join(every.streaming_content).decode())))) == 3
    student = Client()
    student.force_login(member(ee290))
    assert student.get(url, {"format": "csv"}).status_code == 403
