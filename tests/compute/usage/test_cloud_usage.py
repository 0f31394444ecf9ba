"""Power, idle nodes and the budget: the agent's samples through its token, six idle hours
e-mailing the group and staff once (and stopping the node when the course says so), GPU-hours
and the burn-down for a simulated term, and a real worker taking a cloud job to the peer."""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from decimal import Decimal

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from apps.compute.board.services import allocation_create
from apps.compute.cloud import sync as cloud
from apps.compute.models import (
    Allocation,
    CloudOp,
    ComputePolicy,
    GpuSample,
    Node,
    NodeStatusChange,
)
from apps.compute.usage import metering as usage
from apps.core.models import Role
from tests.factories import group_of, member


def _login(user) -> Client:  # type: ignore[no-untyped-def]
    c = Client()
    c.force_login(user)
    return c


def _token(node: Node) -> str:
    token = f"cna_test_{node.pk}"
    Node.objects.filter(pk=node.pk).update(
        agent_token_hash=hashlib.sha256(token.encode()).hexdigest()
    )
    return token


@pytest.mark.django_db
def test_the_agent_posts_samples_with_its_nodes_token_and_nothing_else(ee290) -> None:  # type: ignore[no-untyped-def]
    node = Node.objects.filter(course=ee290).first()
    token = _token(node)
    c = Client()
    url = "/api/v1/compute/agent/samples/"
    body = {"gpus": [{"util": 3, "mem_used_mib": 1000}, {"util": 97.5, "mem_used_mib": 70000}]}
    assert c.post(url, body, content_type="application/json").status_code == 401
    bad = c.post(url, body, content_type="application/json", HTTP_AUTHORIZATION="Bearer nope")
    assert bad.status_code == 401
    ok = c.post(url, body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert ok.status_code == 201
    s = GpuSample.objects.get(node=node)
    assert (s.util_max, s.gpus, s.mem_used_mib) == (97.5, 2, 71000)
    assert s.util_mean == pytest.approx(50.25)
    again = c.post(url, body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert again.status_code == 200
    assert GpuSample.objects.count() == 1
    for junk in ({"gpus": []}, {"gpus": [{"util": 140, "mem_used_mib": 1}]}, {"gpus": "x"}, {}):
        r = c.post(url, junk, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}")
        assert r.status_code == 400, junk
    # The agent's own parser reads nvidia-smi's CSV.
    from apps.compute.usage.agent.courseops_agent import sample

    assert sample("12, 40000\n0, 3\n") == [
        {"util": 12.0, "mem_used_mib": 40000},
        {"util": 0.0, "mem_used_mib": 3},
    ]


@pytest.mark.django_db(transaction=True)
def test_six_idle_hours_email_the_group_and_staff_once_and_stop_the_node_when_told(
    ee290, celery_eager, time_machine
) -> None:  # type: ignore[no-untyped-def]
    staff = member(ee290, Role.INSTRUCTOR)
    group = group_of(ee290, 4, "Alpha")
    alloc = allocation_create(actor=staff, course=ee290, group_id=group.pk)
    node = alloc.node
    ComputePolicy.objects.filter(course=ee290).update(
        idle_stop=True, idle_hours=6, idle_below_pct=5
    )
    start = timezone.now()
    cloud.record_status(node, "RUNNING", start)
    for i in range(6 * 12 + 1):  # every 5 minutes for 6 hours, the busiest GPU at 2 %
        GpuSample.objects.create(
            node=node,
            at=start + dt.timedelta(minutes=5 * i),
            util_mean=1,
            util_max=2,
            mem_used_mib=500,
            gpus=8,
        )
    time_machine.move_to(start + dt.timedelta(hours=5, minutes=50))
    assert usage.idle_check(ee290) == []  # not six hours yet
    time_machine.move_to(start + dt.timedelta(hours=6, minutes=1))
    mail.outbox.clear()
    assert usage.idle_check(ee290) == [node.name]
    (sent,) = [m for m in mail.outbox if "idle" in m.subject]
    assert staff.email in sent.to
    assert set(group.memberships.values_list("user__email", flat=True)) <= set(sent.to)
    assert "stopping it now" in sent.body
    cloud.drain(ee290.pk)
    stop = CloudOp.objects.get(course=ee290, kind=CloudOp.Kind.STOP)
    assert stop.status == CloudOp.Status.DONE
    node.refresh_from_db()
    assert node.cloud_status == "TERMINATED"
    # Once per idle spell: the next check sends nothing.
    cloud.record_status(node, "RUNNING")
    assert usage.idle_check(ee290) == []
    assert len([m for m in mail.outbox if "idle" in m.subject]) == 1


@pytest.mark.django_db
def test_gpu_hours_and_the_burn_down_of_a_simulated_term(
    ee290, time_machine, django_capture_on_commit_callbacks, settings
) -> None:  # type: ignore[no-untyped-def]
    staff = member(ee290, Role.INSTRUCTOR)
    ComputePolicy.objects.filter(course=ee290).update(
        price_per_node_hour=Decimal("90.00"), credit_budget=Decimal("100000")
    )
    t0 = dt.datetime(2026, 2, 2, 8, 0, tzinfo=dt.UTC)
    time_machine.move_to(t0)
    a, b = group_of(ee290, 4, "Alpha"), group_of(ee290, 4, "Bravo")
    na = allocation_create(actor=staff, course=ee290, group_id=a.pk).node
    nb = allocation_create(actor=staff, course=ee290, group_id=b.pk).node
    # 20 days: Alpha's node runs 10 h a day, Bravo's 24 h a day.
    for day in range(20):
        d = t0 + dt.timedelta(days=day)
        NodeStatusChange.objects.create(node=na, status="RUNNING", at=d)
        NodeStatusChange.objects.create(node=na, status="TERMINATED", at=d + dt.timedelta(hours=10))
    NodeStatusChange.objects.create(node=nb, status="RUNNING", at=t0)
    now = t0 + dt.timedelta(days=20)
    time_machine.move_to(now)
    mail.outbox.clear()
    result = usage.budget(ee290, now)
    hours = {g.group: g for g in result.groups}
    assert hours["Alpha"].node_hours == pytest.approx(200.0)
    assert hours["Alpha"].gpu_hours == pytest.approx(1600.0)
    assert hours["Bravo"].node_hours == pytest.approx(480.0)
    assert result.spent == Decimal("61200.00")  # 680 node-hours × $90
    assert result.rate_per_day == Decimal("3060.00")  # (10 + 24) h a day × $90
    # $38,800 left at $3,060 a day: 12.68 days → the 13th day after now.
    assert result.runs_out == (now + dt.timedelta(days=38800 / 3060)).astimezone(ee290.tz).date()
    assert result.daily[-1][1] == result.spent
    svg = usage.burndown_svg(result, ee290.timezone)
    assert "<svg" in svg
    assert "$61,200.00 of $100,000.00" in svg
    # 61 % used: staff hear about 50 % once, not again, and 80 % later.
    with django_capture_on_commit_callbacks(execute=True):
        # A dry run's stand-in statuses are not spend: no e-mail until the provider is live.
        assert usage.budget_alert(ee290, now) is None
        settings.COMPUTE_PROVIDER = "gcp"
        assert usage.budget_alert(ee290, now) == 50
        assert usage.budget_alert(ee290, now) is None
    assert len([m for m in mail.outbox if "Compute credits" in m.subject]) == 1
    settings.COMPUTE_PROVIDER = "dry-run"
    page = _login(staff).get(f"/c/{ee290.code}/compute/budget/").content.decode()
    assert "Dry run: the running time below is the stand-in project" in page
    assert "$61,200.00" in page
    assert "Alpha" in page
    assert "1600.0" in page
    assert "America/Los_Angeles" in page or ee290.timezone in page


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_takes_the_cloud_job_to_the_peer(
    ee290, gce_peer, celery_worker_process
) -> None:  # type: ignore[no-untyped-def]
    from tests.compute.cloud.test_cloud import _with_keys

    gce_peer.seed_from_board(ee290)
    celery_worker_process(COMPUTE_CALL_TIMEOUT_S="2", COMPUTE_OP_BACKOFF_S="0.5")
    staff = member(ee290, Role.INSTRUCTOR)
    group = group_of(ee290, 4, "Alpha")
    want = _with_keys(group)
    gce_peer.faults(setMetadata=[503])
    alloc = allocation_create(actor=staff, course=ee290, group_id=group.pk)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if [k for k in gce_peer.keys_on(alloc.node.name) if k.endswith("courseops")] == want and (
            gce_peer.address_of(alloc.node.name) == alloc.static_ip.address
        ):
            break
        time.sleep(0.3)
    else:
        raise AssertionError(gce_peer.state()["calls"])
    assert not CloudOp.objects.filter(course=ee290, status=CloudOp.Status.FAILED).exists()
    assert Allocation.objects.filter(pk=alloc.pk, ended_at__isnull=True).exists()


@pytest.mark.django_db(transaction=True)
def test_the_holding_group_starts_and_stops_its_node_and_nobody_elses(ee290, celery_eager) -> None:  # type: ignore[no-untyped-def]
    staff = member(ee290, Role.INSTRUCTOR)
    mine, theirs = group_of(ee290, 4, "Alpha"), group_of(ee290, 4, "Bravo")
    node = allocation_create(actor=staff, course=ee290, group_id=mine.pk).node
    other = allocation_create(actor=staff, course=ee290, group_id=theirs.pk).node
    student = mine.memberships.first().user
    c = _login(student)
    base = f"/c/{ee290.code}/compute/nodes"
    assert c.get(f"{base}/{node.pk}/power/").status_code == 200
    assert c.get(f"{base}/{other.pk}/power/").status_code == 404
    assert c.post(f"{base}/{other.pk}/stop/").status_code == 404
    assert c.post(f"{base}/999999/stop/").status_code == 404
    r = c.post(f"{base}/{node.pk}/stop/", follow=True)
    assert "Stopping" in r.content.decode()
    node.refresh_from_db()
    assert node.cloud_status == "TERMINATED"  # the dry-run project, through the job
    assert c.post(f"{base}/{node.pk}/start/").status_code == 302
    node.refresh_from_db()
    assert node.cloud_status == "RUNNING"
    ComputePolicy.objects.filter(course=ee290).update(groups_may_power=False)
    assert c.post(f"{base}/{node.pk}/stop/").status_code == 404
    assert CloudOp.objects.filter(course=ee290, kind="stop").count() == 1
