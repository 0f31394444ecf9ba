from __future__ import annotations

import datetime as dt
import re
import shlex
import threading

import pytest
from django.db import connection
from django.utils import timezone

from apps.compute.board import access, rules
from apps.compute.board.selectors import window_bundle, window_list
from apps.compute.board.services import allocate_all
from apps.compute.board.windows import window_approve, window_cancel, window_decline, window_request
from apps.compute.models import Allocation, SharingWindow, WindowNode
from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import Role
from tests.factories import CourseFactory, compute_inventory, group_of, member

pytestmark = pytest.mark.django_db
NOW = timezone.now


def setup(n: int = 3):  # type: ignore[no-untyped-def]
    course = CourseFactory()
    compute_inventory(course, n)
    groups = [group_of(course, 4, f"G{i}") for i in range(n)]
    staff = member(course, Role.TA)
    allocate_all(actor=staff, course=course)
    node = {g.name: Allocation.objects.get(group=g, ended_at__isnull=True).node for g in groups}
    students = {g.name: g.memberships.first().user for g in groups}
    return course, staff, groups, node, students


def later(hours: float) -> dt.datetime:
    return NOW() + dt.timedelta(hours=hours)


# ---------------------------------------------------------------- rules


def test_window_rules() -> None:
    now = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    ok = rules.window_problems(
        start=now + dt.timedelta(hours=1), end=now + dt.timedelta(hours=49), now=now, max_hours=48
    )
    assert ok == []
    assert rules.window_problems(
        start=now, end=now + dt.timedelta(hours=1), now=now, max_hours=48
    ) == ["The window must start in the future."]
    assert (
        "at most 48 hours"
        in rules.window_problems(
            start=now + dt.timedelta(hours=1),
            end=now + dt.timedelta(hours=50),
            now=now,
            max_hours=48,
        )[0]
    )
    assert (
        rules.window_problems(
            start=now + dt.timedelta(hours=2),
            end=now + dt.timedelta(hours=1),
            now=now,
            max_hours=48,
        )[0]
        == "The window must end after it starts."
    )
    t = now
    assert not rules.overlaps(
        t, t + dt.timedelta(hours=1), t + dt.timedelta(hours=1), t + dt.timedelta(hours=2)
    )  # back-to-back
    assert rules.overlaps(
        t, t + dt.timedelta(hours=2), t + dt.timedelta(hours=1), t + dt.timedelta(hours=3)
    )


# ---------------------------------------------------------------- services


def test_request_then_the_other_group_approves() -> None:
    course, _staff, groups, node, students = setup()
    w = window_request(
        actor=students["G0"],
        course=course,
        node_ids=[node["G1"].pk],
        starts_at=later(2),
        ends_at=later(26),
    )
    assert w.status == "requested"
    assert [(n.node, n.rank, n.approved_at is not None) for n in w.nodes.all()] == [
        (node["G0"], 0, True),
        (node["G1"], 1, False),
    ]
    with pytest.raises(NotAllowed):
        window_approve(actor=students["G2"], course=course, window_id=w.pk)  # not an owner
    w = window_approve(actor=groups[1].memberships.last().user, course=course, window_id=w.pk)
    assert w.status == "approved"
    assert WindowNode.objects.filter(window=w, active=True).count() == 2


def test_request_validation() -> None:
    course, staff, _groups, node, students = setup()
    with pytest.raises(DomainError, match="at most 48 hours"):
        window_request(
            actor=students["G0"],
            course=course,
            node_ids=[node["G1"].pk],
            starts_at=later(1),
            ends_at=later(50),
        )
    with pytest.raises(DomainError, match="start in the future"):
        window_request(
            actor=students["G0"],
            course=course,
            node_ids=[node["G1"].pk],
            starts_at=later(-1),
            ends_at=later(3),
        )
    with pytest.raises(DomainError, match="at least one other group's node"):
        window_request(
            actor=students["G0"],
            course=course,
            node_ids=[node["G0"].pk],
            starts_at=later(1),
            ends_at=later(3),
        )
    with pytest.raises(NotAllowed):
        window_request(
            actor=staff,
            course=course,
            node_ids=[node["G1"].pk],
            starts_at=later(1),
            ends_at=later(3),
        )


def test_overlapping_approval_is_refused_naming_the_window_and_back_to_back_is_fine() -> None:
    course, staff, _groups, node, students = setup()
    first = window_request(
        actor=students["G0"],
        course=course,
        node_ids=[node["G1"].pk],
        starts_at=later(2),
        ends_at=later(10),
    )
    window_approve(actor=staff, course=course, window_id=first.pk, confirm=True)
    clash = window_request(
        actor=students["G2"],
        course=course,
        node_ids=[node["G1"].pk],
        starts_at=later(9),
        ends_at=later(12),
    )
    with pytest.raises(
        Conflict, match=rf"{node['G1'].name} is already shared in window #{first.pk} of G0"
    ):
        window_approve(actor=staff, course=course, window_id=clash.pk, confirm=True)
    clash.refresh_from_db()
    assert clash.status == "requested"
    assert not WindowNode.objects.filter(window=clash, active=True).exists()
    adjacent = window_request(
        actor=students["G2"],
        course=course,
        node_ids=[node["G1"].pk],
        starts_at=first.ends_at,
        ends_at=later(14),
    )
    assert (
        window_approve(actor=staff, course=course, window_id=adjacent.pk, confirm=True).status
        == "approved"
    )


def test_cancel_frees_the_nodes_and_decline_is_staff_only() -> None:
    course, staff, groups, node, students = setup()
    w = window_request(
        actor=students["G0"],
        course=course,
        node_ids=[node["G1"].pk],
        starts_at=later(2),
        ends_at=later(10),
    )
    window_approve(actor=staff, course=course, window_id=w.pk, confirm=True)
    with pytest.raises(NotAllowed):
        window_cancel(actor=students["G2"], course=course, window_id=w.pk)
    window_cancel(actor=groups[0].memberships.last().user, course=course, window_id=w.pk)
    assert not WindowNode.objects.filter(window=w, active=True).exists()
    other = window_request(
        actor=students["G2"],
        course=course,
        node_ids=[node["G1"].pk],
        starts_at=later(3),
        ends_at=later(5),
    )
    with pytest.raises(NotAllowed):
        window_decline(actor=students["G1"], course=course, window_id=other.pk)
    assert (
        window_decline(actor=staff, course=course, window_id=other.pk, note="Maintenance").status
        == "declined"
    )
    with pytest.raises(Conflict):
        window_approve(actor=staff, course=course, window_id=other.pk, confirm=True)


def test_students_see_only_windows_of_their_group() -> None:
    course, staff, _groups, node, students = setup()
    window_request(
        actor=students["G0"],
        course=course,
        node_ids=[node["G1"].pk],
        starts_at=later(2),
        ends_at=later(10),
    )
    assert window_list(user=students["G1"], course=course).count() == 1  # their node is asked for
    assert window_list(user=students["G2"], course=course).count() == 0
    assert window_list(user=staff, course=course).count() == 1


# ---------------------------------------------------------------- access files


def test_access_files_for_a_two_node_window_name_both_ips_and_parse_back() -> None:
    course, _staff, groups, node, students = setup()
    w = window_request(
        actor=students["G0"],
        course=course,
        node_ids=[node["G1"].pk],
        starts_at=later(2),
        ends_at=later(10),
        master_port=29600,
    )
    ips = {
        g.name: Allocation.objects.get(group=g, ended_at__isnull=True).static_ip.address
        for g in groups
    }
    b = window_bundle(window=w)

    hosts = [
        line.split("\t")
        for line in access.hosts_block(b).splitlines()
        if line and not line.startswith("#")
    ]
    assert [(h[0], h[1]) for h in hosts] == [
        (ips["G0"], node["G0"].name),
        (ips["G1"], node["G1"].name),
    ]

    ssh = access.ssh_config(b)
    parsed = dict(re.findall(r"Host (\S+)\n\s+HostName (\S+)", ssh))
    assert parsed == {node["G0"].name: ips["G0"], node["G1"].name: ips["G1"]}

    env = {}
    for block in access.launch_script(b).split("# --- on ")[1:]:
        name = block.split(" ---")[0]
        env[name] = dict(
            line.removeprefix("export ").split("=", 1)
            for line in block.splitlines()
            if line.startswith("export ")
        )
    assert env[node["G0"].name] == {
        "MASTER_ADDR": ips["G0"],
        "MASTER_PORT": "29600",
        "NNODES": "2",
        "NODE_RANK": "0",
        "NPROC_PER_NODE": "8",
    }
    assert env[node["G1"].name]["NODE_RANK"] == "1"
    assert env[node["G1"].name]["MASTER_ADDR"] == ips["G0"]

    fw = access.firewall_command(b)
    command = fw[fw.index("\ngcloud") + 1 :].split("\ngcloud compute instances")[0]
    args = shlex.split(command.replace("\\\n", " "))
    assert args[:5] == [
        "gcloud",
        "compute",
        "firewall-rules",
        "create",
        f"courseops-{course.code}-w{w.pk}",
    ]
    sources = next(a for a in args if a.startswith("--source-ranges=")).split("=", 1)[1].split(",")
    # External addresses, then the internal ones NCCL uses between nodes of one network.
    assert sources == [
        f"{ips['G0']}/32",
        f"{ips['G1']}/32",
        f"{node['G0'].internal_ip}/32",
        f"{node['G1'].internal_ip}/32",
    ]
    tag = f"--target-tags=courseops-{course.code.lower()}-w{w.pk}"
    assert tag in args
    assert f"add-tags {node['G0'].name} --tags={tag.split('=')[1]}" in fw
    assert "--rules=tcp:22,tcp:29600-29700" in args


# ---------------------------------------------------------------- PostgreSQL


@pytest.mark.postgres
def test_the_exclusion_constraint_is_in_the_database() -> None:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = "
            "'window_node_no_overlap'"
        )
        (definition,) = cur.fetchone()
    assert "EXCLUDE USING gist" in definition
    assert "tstzrange(starts_at, ends_at, '[)'::text) WITH &&" in definition


@pytest.mark.postgres
def test_the_database_refuses_overlap_even_when_the_service_is_bypassed() -> None:
    from django.db import IntegrityError, transaction

    course, _staff, _groups, node, students = setup()
    a = window_request(
        actor=students["G0"],
        course=course,
        node_ids=[node["G1"].pk],
        starts_at=later(2),
        ends_at=later(10),
    )
    b = window_request(
        actor=students["G2"],
        course=course,
        node_ids=[node["G1"].pk],
        starts_at=later(5),
        ends_at=later(12),
    )
    WindowNode.objects.filter(window=a).update(active=True)
    with pytest.raises(IntegrityError), transaction.atomic():
        WindowNode.objects.filter(window=b).update(active=True)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_sixteen_simultaneous_overlapping_approvals_exactly_one_wins() -> None:
    course, _staff, _groups, node, students = setup()
    windows = [
        window_request(
            actor=students["G0"] if i % 2 else students["G2"],
            course=course,
            node_ids=[node["G1"].pk],
            starts_at=later(2 + i * 0.1),
            ends_at=later(8 + i * 0.1),
        )
        for i in range(16)
    ]
    staff_members = [member(course, Role.TA) for _ in range(16)]
    barrier = threading.Barrier(16)
    results: list[object] = [None] * 16

    def approve(i: int) -> None:
        connection.ensure_connection()
        barrier.wait()
        try:
            results[i] = window_approve(
                actor=staff_members[i], course=course, window_id=windows[i].pk, confirm=True
            )
        except Exception as exc:
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=approve, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    wins = [r for r in results if isinstance(r, SharingWindow)]
    assert len(wins) == 1
    assert sum(isinstance(r, Conflict) for r in results) == 15
    assert SharingWindow.objects.filter(status="approved").count() == 1
    assert WindowNode.objects.filter(node=node["G1"], active=True).count() == 1


def test_staff_approving_over_a_lenders_pending_consent_must_confirm_the_override() -> None:
    from django.test import Client

    from apps.core.models import AuditEvent

    course, staff, _groups, node, students = setup()
    w = window_request(
        actor=students["G0"],
        course=course,
        node_ids=[node["G1"].pk],
        starts_at=later(2),
        ends_at=later(4),
    )
    with pytest.raises(Conflict, match="G1 has not agreed to lend a node for this window yet"):
        window_approve(actor=staff, course=course, window_id=w.pk)
    assert SharingWindow.objects.get(pk=w.pk).status == "requested"  # nothing changed

    c = Client()
    c.force_login(staff)
    board = c.get(f"/c/{course.code}/compute/").content.decode()
    assert f"Override: G1 has not agreed to lend {node['G1'].name}" in board
    url = f"/c/{course.code}/windows/{w.pk}/approve/"
    refused = c.post(url, follow=True).content.decode()
    assert "overrides that consent; confirm to approve anyway" in refused
    done = c.post(url, {"confirm": "1"}, follow=True).content.decode()
    assert f"Window #{w.pk} is now approved" in done
    assert AuditEvent.objects.get(action="window.approved").after["overrode"] == ["G1"]
