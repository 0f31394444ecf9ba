"""The course's GCP project follows the board, through the real google-cloud-compute client
talking to a local Compute Engine (tests/peers/gce): inventory sync, keys and addresses on
allocation, dissolve, window rules and keys only during the window, and injected faults that
end with the cloud matching the board and a job history that says what happened."""

from __future__ import annotations

import datetime as dt

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from django.utils import timezone

from apps.compute.board.services import allocation_create, allocation_release
from apps.compute.board.sshkeys import key_add
from apps.compute.cloud import inventory
from apps.compute.cloud import sync as cloud
from apps.compute.models import Allocation, CloudOp, Node, SharingWindow, StaticIP
from apps.core.invariants import run_checks
from apps.core.models import Role
from apps.groups.models import Group, GroupMembership
from tests.factories import group_of, member

pytestmark = pytest.mark.django_db(transaction=True)


def _key() -> str:
    return (
        ed25519.Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode()
    )


def _with_keys(group: Group) -> list[str]:
    """Give every member of the group one key; the lines the node should carry."""
    out = []
    for m in GroupMembership.objects.filter(group=group).select_related("user"):
        k = key_add(actor=m.user, text=_key(), label="laptop")
        name = cloud.unix_names(group.course_id, [m.user_id])[m.user_id]
        out.append(f"{name}:{k.public_key} courseops")
    return sorted(out)


def _drift(course) -> list[str]:  # type: ignore[no-untyped-def]
    return [d.line for d in cloud.drift(course)]


def test_sync_plan_apply_builds_the_board_from_the_project(ee290, gce_peer) -> None:  # type: ignore[no-untyped-def]
    gce_peer.seed_from_board(ee290)
    staff = member(ee290, Role.INSTRUCTOR)
    assert inventory.plan(ee290).changes == []  # the course file matches the project
    # The project gains a node and an address and loses one node; one node moved zone.
    gce_peer.seed(
        [
            {
                "name": n.name,
                "zone": "us-central1-b" if n.name.endswith("-2") else n.zone,
                "internal_ip": n.internal_ip,
            }
            for n in Node.objects.filter(course=ee290).exclude(name="ee290-node-8")
        ]
        + [
            {"name": "ee290-node-9", "zone": "us-central1-a", "internal_ip": "10.128.0.19"},
            {"name": "login-vm", "zone": "us-central1-a", "internal_ip": "10.128.0.2", "gpus": 0},
        ],
        [
            {"name": ip.resource_name, "region": ip.region, "address": ip.address}
            for ip in StaticIP.objects.filter(course=ee290)
        ]
        + [{"name": "ee290-ip-9", "region": "us-central1", "address": "203.0.113.19"}],
    )
    p = inventory.plan(ee290)
    got = {(c.what, c.action, c.name) for c in p.changes}
    assert got == {
        ("node", "new", "ee290-node-9"),
        ("node", "gone", "ee290-node-8"),
        ("node", "changed", "ee290-node-2"),
        ("address", "new", "203.0.113.19"),
    }
    with pytest.raises(Exception, match="changed since you looked"):
        inventory.apply(actor=staff, course=ee290, digest="0" * 16)
    inventory.apply(actor=staff, course=ee290, digest=p.digest)
    assert Node.objects.get(course=ee290, name="ee290-node-9").gpu_count == 8
    assert Node.objects.get(course=ee290, name="ee290-node-8").status == Node.Status.RETIRED
    assert Node.objects.get(course=ee290, name="ee290-node-2").zone == "us-central1-b"
    assert StaticIP.objects.filter(course=ee290, address="203.0.113.19").exists()
    assert inventory.plan(ee290).changes == []


def test_allocation_puts_exactly_the_members_keys_and_the_address_on_the_node_and_dissolve_removes_them(
    ee290, gce_peer
) -> None:  # type: ignore[no-untyped-def]
    gce_peer.seed_from_board(ee290)
    staff = member(ee290, Role.INSTRUCTOR)
    group = group_of(ee290, 4, "Alpha")
    other = group_of(ee290, 4, "Bravo")
    want = _with_keys(group)
    _with_keys(other)
    # Staff's own line on the node is not the board's: it stays through everything below.
    gce_peer.change(
        {
            "ee290-node-1": {
                "metadata": {
                    "items": [
                        {"key": "ssh-keys", "value": "prof:ssh-ed25519 AAAAC3Nz staff-own"},
                        {"key": "startup-script", "value": "echo hi"},
                    ],
                    "fingerprint": "f0",
                }
            }
        }
    )
    node = Node.objects.get(course=ee290, name="ee290-node-1")
    alloc = allocation_create(actor=staff, course=ee290, group_id=group.pk, node_id=node.pk)
    cloud.drain(ee290.pk)
    assert [k for k in gce_peer.keys_on("ee290-node-1") if k.endswith("courseops")] == want
    assert "prof:ssh-ed25519 AAAAC3Nz staff-own" in gce_peer.keys_on("ee290-node-1")
    assert gce_peer.address_of("ee290-node-1") == alloc.static_ip.address
    items = gce_peer.state()["instances"]["ee290-node-1"]["metadata"]["items"]
    assert {"key": "startup-script", "value": "echo hi"} in items
    assert _drift(ee290) == []
    assert run_checks(ee290.pk) == []

    # A member leaves: exactly their key goes.
    leaver = GroupMembership.objects.filter(group=group).first()
    from apps.groups.services import member_remove

    member_remove(actor=staff, course=ee290, user_id=leaver.user_id)
    cloud.drain(ee290.pk)
    name = cloud.unix_names(ee290.pk, [leaver.user_id])[leaver.user_id]
    on_node = gce_peer.keys_on("ee290-node-1")
    assert not any(k.startswith(f"{name}:") for k in on_node)
    assert len([k for k in on_node if k.endswith("courseops")]) == 3

    # Dissolved: no course key is left and the address is free for the next group.
    from apps.groups.services import group_dissolve

    group_dissolve(actor=staff, course=ee290, group_id=group.pk)
    cloud.drain(ee290.pk)
    assert gce_peer.keys_on("ee290-node-1") == ["prof:ssh-ed25519 AAAAC3Nz staff-own"]
    assert gce_peer.address_of("ee290-node-1") is None
    state = gce_peer.state()
    assert all(not a["user"] for a in state["addresses"].values())
    assert run_checks(ee290.pk) == []
    done = CloudOp.objects.filter(course=ee290, status=CloudOp.Status.DONE)
    assert any("deleteAccessConfig ee290-node-1" in c["call"] for op in done for c in op.calls)


def _window(course, requester, lender, start, hours=2):  # type: ignore[no-untyped-def]
    from apps.compute.models import WindowNode

    staff = member(course, Role.TA)
    w = SharingWindow.objects.create(
        course=course,
        requester=requester,
        starts_at=start,
        ends_at=start + dt.timedelta(hours=hours),
        created_by=staff,
    )
    for rank, g in enumerate((requester, lender)):
        a = Allocation.objects.get(group=g, ended_at__isnull=True)
        WindowNode.objects.create(
            window=w,
            node=a.node,
            owner=g,
            rank=rank,
            starts_at=w.starts_at,
            ends_at=w.ends_at,
            active=True,
            approved_at=timezone.now(),
            approved_by=staff,
        )
    w.status = SharingWindow.Status.APPROVED
    w.save()
    return w


def test_a_windows_borrower_keys_and_firewall_rule_exist_only_during_the_window(
    ee290, gce_peer, time_machine
) -> None:  # type: ignore[no-untyped-def]
    gce_peer.seed_from_board(ee290)
    staff = member(ee290, Role.INSTRUCTOR)
    a, b = group_of(ee290, 4, "Alpha"), group_of(ee290, 4, "Bravo")
    a_keys, b_keys = _with_keys(a), _with_keys(b)
    allocation_create(actor=staff, course=ee290, group_id=a.pk)
    alloc_b = allocation_create(actor=staff, course=ee290, group_id=b.pk)
    start = timezone.now() + dt.timedelta(hours=1)
    _window(ee290, a, b, start)
    cloud.drain(ee290.pk)
    lent = alloc_b.node.name
    assert [k for k in gce_peer.keys_on(lent) if k.endswith("courseops")] == b_keys
    assert gce_peer.state()["firewalls"] == {}

    time_machine.move_to(start + dt.timedelta(minutes=5))
    cloud.reconcile(ee290)  # the beat task's work: the window has opened
    cloud.drain(ee290.pk)
    assert [k for k in gce_peer.keys_on(lent) if k.endswith("courseops")] == sorted(a_keys + b_keys)
    rules = gce_peer.state()["firewalls"]
    assert len(rules) == 1
    (rule,) = rules.values()
    held = Allocation.objects.filter(course=ee290, ended_at__isnull=True).select_related("node")
    assert sorted(rule["sourceRanges"]) == sorted(
        [f"{x.static_ip.address}/32" for x in held] + [f"{x.node.internal_ip}/32" for x in held]
    )
    assert rule["reach"] == sorted(x.node.name for x in held)
    assert rule["allowed"][0]["ports"] == ["22", "29500-29600"]
    assert run_checks(ee290.pk) == []

    time_machine.move_to(start + dt.timedelta(hours=2, minutes=5))
    cloud.reconcile(ee290)
    cloud.drain(ee290.pk)
    assert [k for k in gce_peer.keys_on(lent) if k.endswith("courseops")] == b_keys
    assert gce_peer.state()["firewalls"] == {}
    assert run_checks(ee290.pk) == []


def test_injected_faults_end_with_the_cloud_matching_the_board_and_a_history_that_says_so(
    ee290, gce_peer
) -> None:  # type: ignore[no-untyped-def]
    gce_peer.seed_from_board(ee290)
    staff = member(ee290, Role.INSTRUCTOR)
    group = group_of(ee290, 4, "Alpha")
    want = _with_keys(group)
    gce_peer.faults(setMetadata=[412, 503], addAccessConfig=["timeout"], **{"instances.get": [429]})
    alloc = allocation_create(actor=staff, course=ee290, group_id=group.pk)
    cloud.drain(ee290.pk)
    name = alloc.node.name
    assert [k for k in gce_peer.keys_on(name) if k.endswith("courseops")] == want
    assert gce_peer.address_of(name) == alloc.static_ip.address
    assert _drift(ee290) == []
    assert run_checks(ee290.pk) == []
    ops = list(CloudOp.objects.filter(course=ee290, target=f"node:{alloc.node_id}"))
    assert all(op.status == CloudOp.Status.DONE for op in ops)
    said = " | ".join(c["result"] for op in ops for c in op.calls)
    for words in ("429", "412", "503", "did not answer in time"):
        assert words in said, said
    assert max(op.attempts for op in ops) >= 3

    # A quota refusal is not retried: the job fails with the cloud's reason, on the Jobs page.
    gce_peer.faults(stop=["quota"])
    op = cloud.request(ee290.pk, CloudOp.Kind.STOP, alloc.node_id, why="test")
    cloud.drain(ee290.pk)
    op.refresh_from_db()
    assert op.status == CloudOp.Status.FAILED
    assert "Quota exceeded" in op.reason
    assert op.attempts == 1
    from apps.core.jobs import jobs

    assert any(j.status == "failed" and "Quota" in j.detail for j in jobs(ee290.pk))

    # Something changed behind the board's back: check_course says so until reconcile fixes it.
    gce_peer.change({name: {"access": None}})
    assert any("has address none" in line for line in run_checks_lines(ee290.pk))
    cloud.reconcile(ee290)
    cloud.drain(ee290.pk)
    assert gce_peer.address_of(name) == alloc.static_ip.address
    assert run_checks(ee290.pk) == []
    allocation_release(actor=staff, course=ee290, allocation_id=alloc.pk)
    cloud.drain(ee290.pk)
    assert gce_peer.keys_on(name) == []
    assert gce_peer.address_of(name) is None, [
        (op.kind, op.status, op.reason, op.calls)
        for op in CloudOp.objects.filter(course=ee290).order_by("pk")
    ]


def run_checks_lines(course_id: int) -> list[str]:
    return [v.detail for v in run_checks(course_id)]
