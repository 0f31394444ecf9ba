"""Compute Engine as Google runs it (issue #69): the local peer refuses what the real API
refuses and models its documented rules (tests/peers/gce, each rule citing its page), and the
provider, through the real google-cloud-compute client, does the right thing under each: window
firewall rules target only the window's nodes and cover their internal addresses, stops say
what happens to Local SSD data, OS Login is granted through the instance's IAM policy, rate
limits are retried with back-off and other 403s end at once, lists are paged."""

from __future__ import annotations

import datetime as dt
import time

import pytest
import requests
from django.utils import timezone
from google.api_core import exceptions as gx

from apps.compute.board.services import allocation_create
from apps.compute.cloud import sync as cloud
from apps.compute.cloud.providers.gcp import Gcp
from apps.compute.models import Allocation, CloudOp, Node
from apps.core.models import Role
from apps.groups.models import GroupMembership
from tests.compute.cloud.test_cloud import _window, _with_keys
from tests.factories import group_of, member

pytestmark = pytest.mark.django_db(transaction=True)


def _client(gce_peer):  # type: ignore[no-untyped-def]
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import compute_v1

    kw = {
        "transport": "rest",
        "credentials": AnonymousCredentials(),
        "client_options": ClientOptions(api_endpoint=gce_peer.base),
    }
    from apps.compute.cloud.providers.gcp import point_operations_at_endpoint

    clients = [compute_v1.InstancesClient(**kw), compute_v1.FirewallsClient(**kw)]
    point_operations_at_endpoint(clients, kw)
    return compute_v1, *clients


def _node(course, name: str = "ee290-node-1") -> Node:  # type: ignore[no-untyped-def]
    return Node.objects.get(course=course, name=name)


def test_the_peer_refuses_unknown_fields_and_wrong_enums_with_the_apis_400(ee290, gce_peer) -> None:  # type: ignore[no-untyped-def]
    gce_peer.seed_from_board(ee290)
    url = f"{gce_peer.base}/compute/v1/projects/{gce_peer.project}/global/firewalls"
    body = {"name": "x", "targetTags": ["t"], "allowed": [{"IPProtocol": "tcp"}]}
    r = requests.post(url, json={**body, "sourceRange": ["1.2.3.4/32"]}, timeout=10)
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["message"] == (
        "Invalid JSON payload received. Unknown name \"sourceRange\" at 'firewall_resource': "
        "Cannot find field."
    )
    assert err["status"] == "INVALID_ARGUMENT"
    assert err["errors"][0]["reason"] == "invalid"
    # A wrong enum through the real client: the API's own message names the enum type.
    v1, _, firewalls = _client(gce_peer)
    with pytest.raises(gx.BadRequest, match=r"firewall_resource\.direction.*Firewall\.Direction"):
        firewalls.insert(
            project=gce_peer.project,
            firewall_resource=v1.Firewall(name="y", direction="INWARD", target_tags=["t"]),
        )
    assert gce_peer.state()["firewalls"] == {}
    # Nested messages are checked too (Metadata.items[].key is fine; an unknown key is not).
    inst = f"{gce_peer.base}/compute/v1/projects/{gce_peer.project}/zones/us-central1-a"
    r = requests.post(
        f"{inst}/instances/ee290-node-1/setMetadata",
        json={"fingerprint": "x", "items": [{"key": "a", "value": "b", "ttl": 3}]},
        timeout=10,
    )
    assert r.status_code == 400
    assert 'Unknown name "ttl"' in r.json()["error"]["message"]


def test_a_windows_rule_targets_only_its_nodes_and_admits_their_internal_addresses(
    ee290, gce_peer, time_machine
) -> None:  # type: ignore[no-untyped-def]
    gce_peer.seed_from_board(ee290)
    v1, _, firewalls = _client(gce_peer)
    # Today's body, no target: it would reach every instance on the network; refused.
    with pytest.raises(gx.PreconditionFailed, match="must name its targets"):
        firewalls.insert(
            project=gce_peer.project,
            firewall_resource=v1.Firewall(
                name="courseops-untargeted",
                network="global/networks/default",
                source_ranges=["203.0.113.1/32"],
                allowed=[v1.Allowed(I_p_protocol="tcp", ports=["22"])],
            ),
        )
    staff = member(ee290, Role.INSTRUCTOR)
    a, b, c = (group_of(ee290, 4, n) for n in ("Alpha", "Bravo", "Charlie"))
    alloc_a = allocation_create(actor=staff, course=ee290, group_id=a.pk)
    alloc_b = allocation_create(actor=staff, course=ee290, group_id=b.pk)
    alloc_c = allocation_create(actor=staff, course=ee290, group_id=c.pk)
    start = timezone.now() + dt.timedelta(hours=1)
    _window(ee290, a, b, start)
    cloud.drain(ee290.pk)
    time_machine.move_to(start + dt.timedelta(minutes=5))
    cloud.reconcile(ee290)
    cloud.drain(ee290.pk)
    state = gce_peer.state()
    (rule,) = state["firewalls"].values()
    window_nodes = sorted([alloc_a.node.name, alloc_b.node.name])
    assert rule["reach"] == window_nodes  # not Charlie's node, nor any other
    assert alloc_c.node.name not in rule["reach"]
    assert sorted(rule["sourceRanges"]) == sorted(
        [f"{x.static_ip.address}/32" for x in (alloc_a, alloc_b)]
        + [f"{x.node.internal_ip}/32" for x in (alloc_a, alloc_b)]
    )
    assert cloud.drift(ee290) == []
    # When the window ends the rule goes and so do the tags.
    time_machine.move_to(start + dt.timedelta(hours=2, minutes=5))
    cloud.reconcile(ee290)
    cloud.drain(ee290.pk)
    state = gce_peer.state()
    assert state["firewalls"] == {}
    assert all(not i["tags"]["items"] for i in state["instances"].values())
    assert cloud.drift(ee290) == []
    assert not CloudOp.objects.filter(course=ee290, status=CloudOp.Status.FAILED).exists()


def test_a_stop_keeps_local_ssd_data_unless_staff_chose_to_discard_it(ee290, gce_peer) -> None:  # type: ignore[no-untyped-def]
    gce_peer.seed_from_board(ee290)
    node = _node(ee290)
    _v1, instances, _ = _client(gce_peer)
    # Compute Engine refuses a stop that does not say what happens to the Local SSDs.
    with pytest.raises(gx.BadRequest, match="undefined value for `discard-local-ssd`"):
        instances.stop(project=gce_peer.project, zone=node.zone, instance=node.name)
    assert gce_peer.state()["instances"][node.name]["status"] == "RUNNING"

    op = cloud.request(ee290.pk, CloudOp.Kind.STOP, node.pk, why="test")
    cloud.drain(ee290.pk)
    op.refresh_from_db()
    assert op.status == CloudOp.Status.DONE, op.reason
    inst = gce_peer.state()["instances"][node.name]
    assert inst["status"] == "TERMINATED"
    assert inst["ssd_saved"] is True
    assert "Local SSD (6,000 GiB) kept" in op.calls[-1]["call"]
    node.refresh_from_db()
    assert node.cloud_status == "TERMINATED"
    cloud.request(ee290.pk, CloudOp.Kind.START, node.pk, why="test")
    cloud.drain(ee290.pk)
    assert gce_peer.state()["instances"][node.name]["ssd_data"] == "scratch"  # still there

    cloud.request(ee290.pk, CloudOp.Kind.STOP, node.pk, why="test", discard_local_ssd=True)
    cloud.drain(ee290.pk)
    cloud.request(ee290.pk, CloudOp.Kind.START, node.pk, why="test")
    cloud.drain(ee290.pk)
    assert gce_peer.state()["instances"][node.name]["ssd_data"] == ""  # gone, as chosen


def test_power_changes_pass_through_their_states_with_their_timing(ee290, gce_peer) -> None:  # type: ignore[no-untyped-def]
    gce_peer.seed_from_board(ee290)
    gce_peer.seed(
        [
            {
                "name": "login-vm",
                "zone": "us-central1-a",
                "internal_ip": "10.0.0.2",
                "gpus": 0,
                "machine_type": "e2-standard-4",
            },
            {"name": "gpu-vm", "zone": "us-central1-a", "internal_ip": "10.0.0.3"},
        ],
        [],
    )
    gce_peer.timing(stop=0.6, start=0.6, suspend=0.6, resume=0.6)
    v1, instances, _ = _client(gce_peer)
    zone, project = "us-central1-a", gce_peer.project

    def status(name: str) -> str:
        return str(gce_peer.state()["instances"][name]["status"])

    op = instances.stop(project=project, zone=zone, instance="login-vm")
    assert status("login-vm") == "STOPPING"
    op.result(timeout=5)
    assert status("login-vm") == "TERMINATED"
    op = instances.start(project=project, zone=zone, instance="login-vm")
    assert status("login-vm") == "STAGING"
    op.result(timeout=5)
    assert status("login-vm") == "RUNNING"
    op = instances.suspend(project=project, zone=zone, instance="login-vm")  # no Local SSD
    assert status("login-vm") == "SUSPENDING"
    op.result(timeout=5)
    assert status("login-vm") == "SUSPENDED"
    with pytest.raises(gx.BadRequest, match="already suspended"):
        instances.suspend(project=project, zone=zone, instance="login-vm")
    instances.resume(project=project, zone=zone, instance="login-vm").result(timeout=5)
    assert status("login-vm") == "RUNNING"
    # A GPU machine cannot be suspended.
    with pytest.raises(gx.BadRequest, match="guest accelerators"):
        instances.suspend(
            request=v1.SuspendInstanceRequest(
                project=project, zone=zone, instance="gpu-vm", discard_local_ssd=False
            )
        )
    # The time passes even when nobody polls.
    instances.stop(project=project, zone=zone, instance="login-vm")
    time.sleep(0.8)
    assert status("login-vm") == "TERMINATED"

    # The provider waits for the operation and records where the node ended.
    gce_peer.seed_from_board(ee290)
    gce_peer.timing(stop=0.5, start=0.5)
    node = _node(ee290)
    cloud.request(ee290.pk, CloudOp.Kind.STOP, node.pk, why="test")
    cloud.drain(ee290.pk)
    node.refresh_from_db()
    assert node.cloud_status == "TERMINATED"


def test_rate_limits_are_retried_after_a_wait_and_other_403s_end_the_job(
    ee290, gce_peer, settings
) -> None:  # type: ignore[no-untyped-def]
    gce_peer.seed_from_board(ee290)
    staff = member(ee290, Role.INSTRUCTOR)
    group = group_of(ee290, 4, "Alpha")
    want = _with_keys(group)
    settings.COMPUTE_RATE_LIMIT_WAIT_S = 60
    gce_peer.faults(**{"instances.get": ["rateLimitExceeded", 429]})
    alloc = allocation_create(actor=staff, course=ee290, group_id=group.pk)
    op = CloudOp.objects.get(course=ee290, target=f"node:{alloc.node_id}")
    before = timezone.now()
    cloud.run(op.pk)
    op.refresh_from_db()
    assert op.status == CloudOp.Status.QUEUED
    assert "rate limit" in op.reason
    assert op.reason.startswith("retrying in 60 s")
    assert op.not_before >= before + dt.timedelta(seconds=59)
    settings.COMPUTE_RATE_LIMIT_WAIT_S = 0.2
    cloud.drain(ee290.pk)
    op.refresh_from_db()
    assert op.status == CloudOp.Status.DONE
    assert [k for k in gce_peer.keys_on(alloc.node.name) if k.endswith("courseops")] == want
    said = " | ".join(c["result"] for c in op.calls)
    assert "403 rate limit" in said
    assert "429 rate limit" in said

    # A 403 that is not a rate limit (a missing permission) is final at once.
    gce_peer.faults(setMetadata=[403])
    GroupMembership.objects.filter(group=group).first().delete()
    cloud.nodes_changed(ee290.pk, [alloc.node_id], "test")
    cloud.drain(ee290.pk)
    failed = CloudOp.objects.get(course=ee290, status=CloudOp.Status.FAILED)
    assert failed.attempts == 1
    assert "permission" in failed.reason


def test_every_list_is_read_page_by_page(ee290, gce_peer, settings) -> None:  # type: ignore[no-untyped-def]
    gce_peer.seed_from_board(ee290)
    settings.COMPUTE_PAGE_SIZE = 3
    p = Gcp("ee290-sp26-compute")
    assert sorted(i.name for i in p.instances()) == sorted(
        Node.objects.filter(course=ee290).values_list("name", flat=True)
    )
    assert len(p.addresses()) == ee290.static_ips.count()
    calls = [c for c in gce_peer.state()["calls"] if "aggregated/instances" in c]
    assert len(calls) == 3
    assert all("maxResults=3" in c for c in calls)
    assert sum("pageToken=" in c for c in calls) == 2
    url = f"{gce_peer.base}/compute/v1/projects/{gce_peer.project}/aggregated/instances"
    r = requests.get(url, params={"maxResults": 501}, timeout=10)
    assert r.status_code == 400
    assert "maxResults" in r.json()["error"]["message"]


def test_under_os_login_members_get_login_through_the_instance_iam_policy(ee290, gce_peer) -> None:  # type: ignore[no-untyped-def]
    gce_peer.seed_from_board(ee290)
    gce_peer.set_project(project_metadata=[{"key": "enable-oslogin", "value": "TRUE"}])
    staff = member(ee290, Role.INSTRUCTOR)
    group = group_of(ee290, 4, "Alpha")
    _with_keys(group)
    alloc = allocation_create(actor=staff, course=ee290, group_id=group.pk)
    cloud.drain(ee290.pk)
    emails = sorted(
        GroupMembership.objects.filter(group=group).values_list("user__email", flat=True)
    )
    state = gce_peer.state()["instances"][alloc.node.name]
    assert state["os_login"] is True
    # ssh-keys are on the node but ignored: the people who can log in are the IAM grants.
    assert state["logins"] == sorted(e.lower() for e in emails)
    assert cloud.drift(ee290) == []
    # A member leaves: their grant goes with their key.
    leaver = GroupMembership.objects.filter(group=group).select_related("user").first()
    from apps.groups.services import member_remove

    member_remove(actor=staff, course=ee290, user_id=leaver.user_id)
    cloud.drain(ee290.pk)
    logins = gce_peer.state()["instances"][alloc.node.name]["logins"]
    assert leaver.user.email.lower() not in logins
    assert len(logins) == 3
    # An instance that turns OS Login off for itself is reached by ssh-keys again.
    other = Allocation.objects.get(pk=alloc.pk).node.name
    items = gce_peer.state()["instances"][other]["metadata"]["items"]
    gce_peer.change(
        {
            other: {
                "metadata": {
                    "items": [*items, {"key": "enable-oslogin", "value": "FALSE"}],
                    "fingerprint": "f9",
                }
            }
        }
    )
    state = gce_peer.state()["instances"][other]
    assert state["os_login"] is False
    assert len(state["logins"]) == 3


def test_the_stop_page_shows_the_local_ssd_at_stake_and_only_staff_may_discard_it_after_confirming(
    ee290, celery_eager
) -> None:  # type: ignore[no-untyped-def]
    from django.test import Client

    from apps.compute.models import ComputePolicy

    staff = member(ee290, Role.INSTRUCTOR)
    group = group_of(ee290, 4, "Alpha")
    node = allocation_create(actor=staff, course=ee290, group_id=group.pk).node
    base = f"/c/{ee290.code}/compute/nodes/{node.pk}"
    c = Client()
    c.force_login(staff)
    page = c.get(f"{base}/power/").content.decode()
    assert "6,000 GiB" in page
    assert 'value="keep"' in page
    assert "checked" in page.split('value="keep"')[1][:40]
    assert 'value="discard"' in page
    # Discarding without ticking the box is refused, and nothing is queued.
    r = c.post(f"{base}/stop/", {"local_ssd": "discard"})
    assert r.status_code == 400
    assert "Tick this to discard" in r.content.decode()
    assert not CloudOp.objects.filter(course=ee290, kind="stop").exists()
    c.post(f"{base}/stop/", {"local_ssd": "discard", "confirm": "on"})
    assert CloudOp.objects.get(course=ee290, kind="stop").discard_local_ssd is True
    # A student of the holding group may stop the node, never discard its data.
    ComputePolicy.objects.filter(course=ee290).update(groups_may_power=True)
    s = Client()
    s.force_login(group.memberships.first().user)
    page = s.get(f"{base}/power/").content.decode()
    assert 'value="discard"' not in page
    assert "Only staff may discard" in page
    r = s.post(f"{base}/stop/", {"local_ssd": "discard", "confirm": "on"})
    assert r.status_code == 400
    s.post(f"{base}/stop/")
    assert CloudOp.objects.filter(course=ee290, kind="stop", discard_local_ssd=False).count() != 0
