from __future__ import annotations

import threading

import pytest
from django.db import connection

from apps.compute.board.services import allocate_all, allocation_create, allocation_release
from apps.compute.models import Allocation, Node, StaticIP
from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.models import AuditEvent, Role
from tests.factories import (
    CourseFactory,
    NodeFactory,
    StaticIPFactory,
    compute_inventory,
    group_of,
    member,
)

pytestmark = pytest.mark.django_db


def active() -> int:
    return Allocation.objects.filter(ended_at__isnull=True).count()


def test_the_demo_course_has_every_group_on_a_node(ee290_demo) -> None:  # type: ignore[no-untyped-def]
    allocs = Allocation.objects.filter(course=ee290_demo, ended_at__isnull=True).select_related(
        "group", "node", "static_ip"
    )
    assert allocs.count() == 8
    assert len({a.node_id for a in allocs}) == 8
    assert len({a.static_ip_id for a in allocs}) == 8
    assert {a.group.name: a.node.name for a in allocs}[
        "Flash Attention"
    ] == "ee290-node-1"  # stable order


def test_allocate_all_gives_each_group_a_node_and_ip_in_stable_order() -> None:
    course = CourseFactory()
    compute_inventory(course, 3)
    for name in ("Charlie", "Alpha", "Bravo"):
        group_of(course, 4, name)
    staff = member(course, Role.TA)
    created = allocate_all(actor=staff, course=course)
    assert [(a.group.name, a.node.name) for a in created] == [
        ("Alpha", Node.objects.order_by("name")[0].name),
        ("Bravo", Node.objects.order_by("name")[1].name),
        ("Charlie", Node.objects.order_by("name")[2].name),
    ]
    assert set(StaticIP.objects.values_list("status", flat=True)) == {"in_use"}
    assert allocate_all(actor=staff, course=course) == []  # nothing left to do


def test_allocate_all_with_too_few_nodes_allocates_nothing_and_names_who_is_left(
    ee290_demo,
) -> None:  # type: ignore[no-untyped-def]
    ninth = group_of(ee290_demo, 4, "Zero Bubble")
    instructor = member(ee290_demo, Role.INSTRUCTOR)
    before = active()
    with pytest.raises(Conflict, match=r"Left without: Zero Bubble\. Nothing was allocated\."):
        allocate_all(actor=instructor, course=ee290_demo)
    assert active() == before
    assert not Allocation.objects.filter(group=ninth).exists()


def test_release_frees_the_node_and_keeps_history() -> None:
    course = CourseFactory()
    compute_inventory(course, 1)
    group = group_of(course, 4)
    staff = member(course, Role.INSTRUCTOR)
    alloc = allocation_create(actor=staff, course=course, group_id=group.pk)
    with pytest.raises(Conflict, match="already holds a node"):
        allocation_create(actor=staff, course=course, group_id=group.pk)
    allocation_release(actor=staff, course=course, allocation_id=alloc.pk)
    again = allocation_create(actor=staff, course=course, group_id=group.pk)
    assert again.node_id == alloc.node_id
    assert Allocation.objects.filter(group=group).count() == 2
    assert [e.action for e in AuditEvent.objects.order_by("id")] == [
        "allocation.created",
        "allocation.released",
        "allocation.created",
    ]


def test_an_ip_must_be_in_the_nodes_region() -> None:
    course = CourseFactory()
    node = NodeFactory(course=course, zone="us-central1-a")
    far = StaticIPFactory(course=course, region="europe-west4")
    group = group_of(course, 4)
    with pytest.raises(DomainError, match=r"IP .* is in europe-west4, but .* is in us-central1"):
        allocation_create(
            actor=member(course, Role.TA),
            course=course,
            group_id=group.pk,
            node_id=node.pk,
            ip_id=far.pk,
        )


def test_nodes_in_maintenance_are_not_allocated() -> None:
    course = CourseFactory()
    NodeFactory(course=course, status=Node.Status.MAINTENANCE)
    StaticIPFactory(course=course)
    group = group_of(course, 4)
    with pytest.raises(Conflict, match="Left without"):
        allocate_all(actor=member(course, Role.TA), course=course)
    assert not Allocation.objects.filter(group=group).exists()


def test_students_cannot_allocate() -> None:
    course = CourseFactory()
    compute_inventory(course, 1)
    group = group_of(course, 4)
    with pytest.raises(NotAllowed):
        allocate_all(actor=group.memberships.first().user, course=course)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_staff_allocating_at_once_never_double_assign() -> None:
    course = CourseFactory()
    compute_inventory(course, 6)
    groups = [group_of(course, 4, f"G{i}") for i in range(6)]
    staff = [member(course, Role.TA), member(course, Role.INSTRUCTOR)]
    barrier = threading.Barrier(4)
    outcomes: list[object] = []

    def run(fn) -> None:  # type: ignore[no-untyped-def]
        connection.ensure_connection()
        barrier.wait()
        try:
            outcomes.append(fn())
        except Exception as exc:
            outcomes.append(exc)
        finally:
            connection.close()

    jobs = [
        lambda: allocate_all(actor=staff[0], course=course),
        lambda: allocate_all(actor=staff[1], course=course),
        lambda: allocation_create(actor=staff[0], course=course, group_id=groups[0].pk),
        lambda: allocation_create(actor=staff[1], course=course, group_id=groups[5].pk),
    ]
    threads = [threading.Thread(target=run, args=(j,)) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not [o for o in outcomes if isinstance(o, Exception) and not isinstance(o, Conflict)]
    live = Allocation.objects.filter(ended_at__isnull=True)
    assert live.count() == 6
    assert len(set(live.values_list("node_id", flat=True))) == 6
    assert len(set(live.values_list("static_ip_id", flat=True))) == 6
    assert len(set(live.values_list("group_id", flat=True))) == 6


def test_a_group_under_the_minimum_needs_a_reason_and_allocate_all_leaves_it_out() -> None:
    course = CourseFactory()  # minimum 4
    compute_inventory(course, 3)
    full, pair = group_of(course, 4, "Alpha"), group_of(course, 2, "Bravo")
    staff = member(course, Role.TA)
    created = allocate_all(actor=staff, course=course)
    assert [a.group.name for a in created] == ["Alpha"]  # Bravo (2) is left out, not given a node
    with pytest.raises(Conflict, match="Bravo has 2 members, under the minimum of 4"):
        allocation_create(actor=staff, course=course, group_id=pair.pk)
    a = allocation_create(
        actor=staff,
        course=course,
        group_id=pair.pk,
        override_reason="two join after the add deadline",
    )
    assert a.group == pair
    event = AuditEvent.objects.filter(action="allocation.created").latest("id")
    assert event.after["under_minimum"] == 2
    assert event.after["override_reason"] == "two join after the add deadline"
    assert Allocation.objects.filter(group=full, ended_at__isnull=True).exists()
