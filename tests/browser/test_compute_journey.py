"""Group G0 asks for G1's node; a member of G1 approves; G0 downloads the hosts file."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.compute.models import Allocation
from apps.compute.services import allocate_all
from apps.core.models import Role
from tests.browser.conftest import log_in, open_from_menu
from tests.factories import (
    PASSWORD,
    CourseFactory,
    MembershipFactory,
    UserFactory,
    compute_inventory,
    group_of,
    member,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_request_a_window_the_other_group_approves_download_hosts(
    page, live_server, browser
) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory(code="cs-nodes")
    compute_inventory(course, 2)
    g0, g1 = group_of(course, 3, "Tensor Cores"), group_of(course, 3, "Warp Drive")
    ada, bo = UserFactory(email="ada@uni.edu"), UserFactory(email="bo@uni.edu")
    for user, group in ((ada, g0), (bo, g1)):
        MembershipFactory(user=user, course=course, role=Role.STUDENT)
        group.memberships.create(course=course, user=user)
    allocate_all(actor=member(course, Role.INSTRUCTOR), course=course)
    ip0 = Allocation.objects.get(group=g0, ended_at__isnull=True).static_ip.address
    ip1 = Allocation.objects.get(group=g1, ended_at__isnull=True).static_ip.address
    node1 = Allocation.objects.get(group=g1, ended_at__isnull=True).node.name

    log_in(page, live_server, "ada@uni.edu", PASSWORD)
    open_from_menu(page, "Group & node", "My node")
    page.get_by_label(f"{node1} (Warp Drive)").check()
    start = (
        (timezone.now() + dt.timedelta(days=3))
        .astimezone(course.tz)
        .replace(minute=0, second=0, microsecond=0)
    )
    page.get_by_label("Start").fill(start.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label("End").fill((start + dt.timedelta(hours=6)).strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label("Purpose").fill("2-node FSDP run")
    page.get_by_role("button", name="Request window").click()
    assert "requested" in page.locator(".messages").inner_text()

    other = browser.new_context().new_page()
    log_in(other, live_server, "bo@uni.edu", PASSWORD)
    open_from_menu(other, "Group & node", "My node")
    other.get_by_role("button", name=f"Approve use of {node1}").click()
    assert "is now approved" in other.locator(".messages").inner_text()
    other.context.close()

    page.reload()
    with page.expect_download() as info:
        page.get_by_role("table", name="Windows").get_by_role("link", name="hosts").click()
    text = open(info.value.path(), encoding="utf-8").read()  # noqa: SIM115
    hosts = [line.split("\t")[0] for line in text.splitlines() if line and not line.startswith("#")]
    assert hosts == [ip0, ip1]
