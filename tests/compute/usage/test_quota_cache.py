"""A group's GPU-hour standing is cached between the writes that change it (#73): the Today page
and the node page read it from Redis, and every change a student would notice — the node
started or stopped, staff raising the quota, the policy, the allocation released, a new week —
shows on the next page. Redis down still serves the page, from the database."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.compute.board.services import allocation_create, allocation_release
from apps.compute.cloud import sync as cloud
from apps.compute.models import UsagePolicy
from apps.compute.usage import quotas
from apps.core.models import Course, Role
from tests.factories import group_of, member

pytestmark = [pytest.mark.redis]
LA = zoneinfo.ZoneInfo("America/Los_Angeles")
MONDAY = dt.datetime(2026, 2, 2, 8, 0, tzinfo=LA)


def _login(user) -> Client:  # type: ignore[no-untyped-def]
    c = Client()
    c.force_login(user)
    return c


def _pages(client: Client, course: Course) -> tuple[str, str]:
    today = client.get(f"/c/{course.code}/").content.decode()
    node = client.get(f"/c/{course.code}/node/").content.decode()
    return today, node


@pytest.mark.django_db(transaction=True)
def test_the_cached_standing_follows_every_change_a_student_would_notice(
    ee290, redis_cache, time_machine
) -> None:  # type: ignore[no-untyped-def]
    staff = member(ee290, Role.INSTRUCTOR)
    alpha, bravo = group_of(ee290, 4, "Alpha"), group_of(ee290, 4, "Bravo")
    time_machine.move_to(MONDAY)
    held = allocation_create(actor=staff, course=ee290, group_id=alpha.pk)
    allocation_create(actor=staff, course=ee290, group_id=bravo.pk)
    cloud.record_status(held.node, "RUNNING", MONDAY)
    student = _login(alpha.memberships.first().user)

    time_machine.move_to(MONDAY + dt.timedelta(hours=68))
    today, node = _pages(student, ee290)
    assert "81% of your GPU-hours used: 544 of 672" in today
    assert "544.0 used of 672" in node
    # Read from the cache now: no query for the standing.
    course = Course.objects.get(pk=ee290.pk)  # as the next request has it
    with CaptureQueriesContext(connection) as ctx:
        assert quotas.standing_of(course, alpha.pk).used == 544  # type: ignore[union-attr]
    assert not ctx.captured_queries
    # The other group's student never sees Alpha's hours (its own node has not run).
    other = _pages(_login(bravo.memberships.first().user), ee290)
    assert "544" not in other[0] + other[1]
    assert "0.0 used of 672" in other[1]

    # No write, two hours on: the running node's hours count on from the cached rows.
    time_machine.move_to(MONDAY + dt.timedelta(hours=70))
    today, node = _pages(student, ee290)
    assert "83% of your GPU-hours used: 560 of 672" in today
    # The node stops (a status change): its hours stop counting.
    cloud.record_status(held.node, "TERMINATED", MONDAY + dt.timedelta(hours=70))
    time_machine.move_to(MONDAY + dt.timedelta(hours=75))
    assert "560.0 used of 672" in _pages(student, ee290)[1]

    # Staff raise the quota on the usage page: the warning goes, the new quota shows.
    r = _login(staff).post(
        f"/c/{ee290.code}/compute/usage/quota/",
        {"group": alpha.pk, "gpu_hours": 1000, "note": "Final project sweep"},
    )
    assert r.status_code == 302
    today, node = _pages(student, ee290)
    assert "GPU-hours used" not in today
    assert "560.0 used of 1000" in node
    # The course's policy warns earlier: the warning is back.
    policy = UsagePolicy.objects.get(course=ee290)
    policy.warn_pct = 50
    policy.save()
    assert "56% of your GPU-hours used: 560 of 1000" in _pages(student, ee290)[0]

    # The node is released and runs for another group: none of it is Alpha's.
    allocation_release(actor=staff, course=ee290, allocation_id=held.pk)
    time_machine.move_to(MONDAY + dt.timedelta(hours=76))
    cloud.record_status(held.node, "RUNNING", MONDAY + dt.timedelta(hours=76))
    time_machine.move_to(MONDAY + dt.timedelta(hours=90))
    assert "560" in _pages(student, ee290)[0]

    # A new week starts with no write at all: Alpha's hours are back to 0.
    time_machine.move_to(MONDAY + dt.timedelta(days=7, minutes=1))
    today, _ = _pages(student, ee290)
    assert "GPU-hours used" not in today
    assert quotas.standing_of(ee290, alpha.pk).used == 0  # type: ignore[union-attr]


@pytest.mark.django_db(transaction=True)
def test_a_standing_read_inside_a_transaction_that_rolls_back_is_not_kept(
    ee290, redis_cache, time_machine
) -> None:  # type: ignore[no-untyped-def]
    from django.db import transaction

    staff = member(ee290, Role.INSTRUCTOR)
    alpha = group_of(ee290, 4, "Alpha")
    time_machine.move_to(MONDAY)
    held = allocation_create(actor=staff, course=ee290, group_id=alpha.pk)
    time_machine.move_to(MONDAY + dt.timedelta(hours=68))
    assert quotas.standing_of(ee290, alpha.pk).used == 0  # type: ignore[union-attr]

    class Undo(Exception):
        pass

    def started_then_undone() -> None:
        with transaction.atomic():
            cloud.record_status(held.node, "RUNNING", MONDAY)
            assert quotas.standing_of(ee290, alpha.pk).used == 544  # type: ignore[union-attr]
            raise Undo

    with pytest.raises(Undo):
        started_then_undone()
    assert quotas.standing_of(ee290, alpha.pk).used == 0  # type: ignore[union-attr]


@pytest.mark.django_db(transaction=True)
def test_with_redis_down_the_pages_still_show_the_standing(ee290, settings, time_machine) -> None:  # type: ignore[no-untyped-def]
    settings.CACHES = {
        "default": {"BACKEND": "apps.core.cache.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}
    }
    settings.COURSE_CACHE_SECONDS = 300
    staff = member(ee290, Role.INSTRUCTOR)
    alpha = group_of(ee290, 4, "Alpha")
    time_machine.move_to(MONDAY)
    held = allocation_create(actor=staff, course=ee290, group_id=alpha.pk)
    cloud.record_status(held.node, "RUNNING", MONDAY)
    time_machine.move_to(MONDAY + dt.timedelta(hours=68))
    student = _login(alpha.memberships.first().user)
    for _ in range(2):
        today, node = _pages(student, ee290)
        assert "81% of your GPU-hours used: 544 of 672" in today
        assert "544.0 used of 672" in node
