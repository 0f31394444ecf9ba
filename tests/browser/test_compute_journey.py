"""Group G0 asks for G1's node; a member of G1 approves; G0 downloads the hosts file."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from apps.compute.board.services import allocate_all
from apps.compute.models import Allocation
from apps.core.models import Role
from tests.browser.conftest import log_in, open_from_menu, wider_than_screen
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
    expect(page.locator(".messages")).to_contain_text("requested", use_inner_text=True)

    other = browser.new_context().new_page()
    log_in(other, live_server, "bo@uni.edu", PASSWORD)
    open_from_menu(other, "Group & node", "My node")
    other.get_by_role("button", name=f"Approve use of {node1}").click()
    expect(other.locator(".messages")).to_contain_text("is now approved", use_inner_text=True)
    other.context.close()

    page.reload()
    with page.expect_download() as info:
        page.get_by_role("table", name="Windows").get_by_role("link", name="hosts").click()
    text = open(info.value.path(), encoding="utf-8").read()  # noqa: SIM115
    hosts = [line.split("\t")[0] for line in text.splitlines() if line and not line.startswith("#")]
    assert hosts == [ip0, ip1]


def test_staff_read_the_burn_down_on_a_phone_with_its_numbers_as_text(
    browser, live_server, ee290
) -> None:  # type: ignore[no-untyped-def]
    from apps.compute.models import NodeStatusChange

    staff = UserFactory(email="prof@uni.edu")
    MembershipFactory(user=staff, course=ee290, role=Role.INSTRUCTOR)
    g = group_of(ee290, 4, "Flash")
    alloc = allocate_all(actor=staff, course=ee290)[0]
    assert alloc.group == g
    four_days_ago = timezone.now() - dt.timedelta(days=4)
    Allocation.objects.filter(pk=alloc.pk).update(started_at=four_days_ago)
    NodeStatusChange.objects.create(node=alloc.node, status="RUNNING", at=four_days_ago)
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    phone = context.new_page()
    log_in(phone, live_server, "prof@uni.edu", PASSWORD)
    phone.goto(f"{live_server.url}/c/{ee290.code}/compute/")
    phone.get_by_role("link", name="Budget and GPU-hours").click()
    chart = phone.locator("figure svg.chart")
    assert chart.is_visible()
    box = chart.bounding_box()
    assert box is not None
    assert box["width"] <= 390
    assert box["height"] > 80
    assert phone.locator("svg.chart polyline").count() == 1
    assert wider_than_screen(phone) <= 0
    # The same numbers as text: 4 days × 24 h × $88.49 ≈ $8,495, and Flash's 768 GPU-hours.
    text = phone.locator("main").inner_text()
    assert "of $250,000.00 spent" in text
    spent = float(text.split("spent")[0].rsplit("$", 2)[-2].split()[0].replace(",", ""))
    assert spent == pytest.approx(4 * 24 * 88.49, rel=0.01)
    row = phone.get_by_role("row", name="Flash")
    assert "768" in row.inner_text()
    phone.get_by_text("Spend by day (a table)").click()
    expect(phone.get_by_role("table", name="Credits spent by the end of each day")).to_be_visible()
    context.close()
