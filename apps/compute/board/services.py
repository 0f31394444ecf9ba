"""Writes for compute: allocation of nodes and IPs to groups.

Each service is one transaction; it first locks the course's nodes, IPs and groups (in a fixed
order, so two staff cannot deadlock), then reads what is free, and writes an audit event. Partial
unique indexes back every "one at a time" rule; an IntegrityError from a race
becomes a Conflict (409).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, OuterRef, QuerySet
from django.utils import timezone

from apps.compute.models import Allocation, Node, StaticIP
from apps.core.errors import Conflict, DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.core.services import audit_record
from apps.groups.models import Group, GroupMembership

T = TypeVar("T")


def require_staff(actor: User, course: Course) -> None:
    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs may allocate nodes and IPs.")


def _active() -> QuerySet[Allocation]:
    return Allocation.objects.filter(ended_at__isnull=True)


def _lock_inventory(course: Course) -> None:
    """Lock every node, IP and group of the course, always in this order and by id, so
    allocations in one course serialise and never deadlock. Reads of what is free come after
    the locks, so they see every allocation committed while this transaction waited."""
    for model in (Node, StaticIP, Group):
        list(
            model.objects.select_for_update()
            .filter(course=course)
            .order_by("pk")
            .values_list("pk", flat=True)
        )


def _free_nodes(course: Course) -> list[Node]:
    return list(
        Node.objects.filter(course=course, status=Node.Status.READY)
        .exclude(pk__in=_active().values("node_id"))
        .order_by("name")
    )


def _free_ips(course: Course) -> list[StaticIP]:
    return list(
        StaticIP.objects.filter(course=course)
        .exclude(status=StaticIP.Status.RELEASED)
        .exclude(pk__in=_active().values("static_ip_id"))
        .order_by("address")
    )


def free_inventory(course: Course) -> tuple[list[Node], list[StaticIP]]:
    """The ready nodes and the IPs no live allocation holds, in the order allocation takes them."""
    return _free_nodes(course), _free_ips(course)


def _unallocated_groups(course: Course) -> list[Group]:
    """Live groups with at least one current member and no node yet (an empty group needs none)."""
    return list(
        Group.objects.filter(course=course, dissolved_at__isnull=True)
        .filter(Exists(GroupMembership.objects.filter(group=OuterRef("pk"), left_at__isnull=True)))
        .exclude(pk__in=_active().values("group_id"))
        .order_by("name")
    )


def _create(course: Course, group: Group, node: Node, ip: StaticIP) -> Allocation:
    if ip.region != node.region:
        raise DomainError(
            f"IP {ip.address} is in {ip.region}, but {node.name} is in {node.region}; choose an IP "
            "in the node's region."
        )
    try:
        with transaction.atomic():
            alloc = Allocation.objects.create(
                course=course, group=group, node=node, static_ip=ip, started_at=timezone.now()
            )
    except IntegrityError:
        raise Conflict(
            f"{group.name}, {node.name} or {ip.address} was just allocated by someone else; reload "
            "and try again."
        ) from None
    StaticIP.objects.filter(pk=ip.pk).update(status=StaticIP.Status.IN_USE)
    return alloc


def allocation_create(
    *,
    actor: User,
    course: Course,
    group_id: int,
    node_id: int | None = None,
    ip_id: int | None = None,
    override_reason: str = "",
) -> Allocation:
    """Give one group a node and an IP (the first free ones when not named). A group under the
    course's minimum size needs `override_reason` (audited): merge or fill it first otherwise."""
    require_staff(actor, course)
    with transaction.atomic():
        _lock_inventory(course)
        nodes, ips = _free_nodes(course), _free_ips(course)
        group = Group.objects.filter(course=course, pk=group_id, dissolved_at__isnull=True).first()
        if group is None:
            raise NotFound("No such group in this course.")
        if Allocation.objects.filter(group=group, ended_at__isnull=True).exists():
            raise Conflict(f"{group.name} already holds a node; release it first to reassign.")
        size = _member_counts([group]).get(group.pk, 0)
        if size < course.group_min_size and not override_reason.strip():
            raise Conflict(
                f"{group.name} has {size} member{'s' if size != 1 else ''}, under the minimum of "
                f"{course.group_min_size}: merge or fill it first, or give a reason to allocate "
                "anyway."
            )
        node = next((n for n in nodes if node_id is None or n.pk == node_id), None)
        if node is None:
            raise Conflict("That node is not free." if node_id else "No node is free.")
        ip = next(
            (i for i in ips if (ip_id is None and i.region == node.region) or i.pk == ip_id), None
        )
        if ip is None:
            raise Conflict("That IP is not free." if ip_id else f"No IP is free in {node.region}.")
        alloc = _create(course, group, node, ip)
        after: dict[str, object] = {"group": group.name, "node": node.name, "ip": ip.address}
        if size < course.group_min_size:
            after |= {"under_minimum": size, "override_reason": override_reason.strip()[:300]}
        audit_record(
            actor=actor, action="allocation.created", course=course, obj=alloc, after=after
        )
    return alloc


def allocation_release(*, actor: User, course: Course, allocation_id: int) -> Allocation:
    """End an allocation now; the node and IP become free. History stays."""
    require_staff(actor, course)
    with transaction.atomic():
        alloc = (
            Allocation.objects.select_for_update()
            .filter(course=course, pk=allocation_id)
            .select_related("group", "node", "static_ip")
            .first()
        )
        if alloc is None:
            raise NotFound("No such allocation in this course.")
        if alloc.ended_at is not None:
            raise Conflict("That allocation has already ended.")
        alloc.ended_at = timezone.now()
        alloc.save(update_fields=["ended_at"])
        StaticIP.objects.filter(pk=alloc.static_ip_id).update(status=StaticIP.Status.RESERVED)
        audit_record(
            actor=actor,
            action="allocation.released",
            course=course,
            obj=alloc,
            before={
                "group": alloc.group.name,
                "node": alloc.node.name,
                "ip": alloc.static_ip.address,
            },
        )
    return alloc


def _member_counts(groups: list[Group]) -> dict[int, int]:
    return dict(
        GroupMembership.objects.filter(group__in=groups, left_at__isnull=True)
        .values("group_id")
        .annotate(n=Count("id"))
        .values_list("group_id", "n")
    )


def groups_under_minimum(course: Course) -> list[tuple[Group, int]]:
    """Unallocated live groups under the course's minimum size, with their sizes: `allocate_all`
    leaves them out; each needs a merge or an allocation with a reason."""
    groups = _unallocated_groups(course)
    counts = _member_counts(groups)
    return [(g, counts.get(g.pk, 0)) for g in groups if counts.get(g.pk, 0) < course.group_min_size]


def allocate_all(*, actor: User, course: Course) -> list[Allocation]:
    """Give every unallocated group of at least the minimum size a free node and an IP, in a
    stable order (groups, nodes and IPs by name/address), all or nothing. With too few free
    nodes or IPs nothing is allocated and the Conflict names the groups that would be left
    without. Groups under the minimum are left out (`groups_under_minimum`)."""
    require_staff(actor, course)
    with transaction.atomic():
        _lock_inventory(course)
        short = {g.pk for g, _ in groups_under_minimum(course)}
        groups = [g for g in _unallocated_groups(course) if g.pk not in short]
        nodes, ips = _free_nodes(course), _free_ips(course)
        if not groups:
            return []
        by_region: dict[str, list[StaticIP]] = {}
        for ip in ips:
            by_region.setdefault(ip.region, []).append(ip)
        pairs: list[tuple[Group, Node, StaticIP]] = []
        for group in groups:
            node = next((n for n in nodes if by_region.get(n.region)), None)
            if node is None:
                break
            nodes.remove(node)
            pairs.append((group, node, by_region[node.region].pop(0)))
        left = [g.name for g in groups[len(pairs) :]]
        if left:
            raise Conflict(
                f"Not enough free nodes and IPs: {len(groups)} groups need one, {len(pairs)} "
                f"available. Left without: {', '.join(left)}. Nothing was allocated."
            )
        created = [_create(course, g, n, i) for g, n, i in pairs]
        audit_record(
            actor=actor,
            action="allocation.allocate_all",
            course=course,
            obj=course,
            after={"allocated": {g.name: [n.name, i.address] for g, n, i in pairs}},
        )
    return created


def node_set_status(*, actor: User, course: Course, node_id: int, status: str) -> Node:
    """Staff mark a node ready, in maintenance, failed or retired. A node a group still holds
    cannot be retired (release it first, so the group is not left pointing at nothing)."""
    require_staff(actor, course)
    if status not in Node.Status.values:
        raise DomainError(
            f"Status must be one of: {', '.join(Node.Status.values)}.", field="status"
        )
    with transaction.atomic():
        node = Node.objects.select_for_update().filter(course=course, pk=node_id).first()
        if node is None:
            raise NotFound("No such node in this course.")
        held = _active().filter(node=node).select_related("group").first()
        if status == Node.Status.RETIRED and held is not None:
            raise Conflict(
                f"{held.group.name} still holds {node.name}; release it before retiring the node."
            )
        before = node.status
        node.status = status
        node.save(update_fields=["status"])
        audit_record(
            actor=actor,
            action="node.status",
            course=course,
            obj=node,
            before={"status": before},
            after={"status": status},
        )
    return node


def _unique_or_conflict(save: Callable[[], T], what: str) -> T:
    """Run `save` in a savepoint; a unique-constraint violation becomes a 409 naming `what`,
    never a 500 (the database is the judge when two staff save at once)."""
    try:
        with transaction.atomic():
            return save()
    except IntegrityError as exc:
        raise Conflict(f"{what} is already taken in this course.") from exc


def node_save(
    *, actor: User, course: Course, data: dict[str, Any], node_id: int | None = None
) -> Node:
    """Staff add a node, or edit one (`node_id`). Name and internal IP are unique per course
    (409 naming the clash); a status change goes through `node_set_status`'s rule (a held node
    cannot be retired). Audited."""
    require_staff(actor, course)
    data = dict(data)
    status = data.pop("status", None)
    for key, label in (("name", "name"), ("internal_ip", "internal IP")):
        value = data.get(key)
        clash = Node.objects.filter(course=course, **{key: value})
        if node_id is not None:
            clash = clash.exclude(pk=node_id)
        if value and clash.exists():
            raise Conflict(f"Another node already has {label} {value}.", field=key)
    with transaction.atomic():
        if node_id is None:
            node = Node(course=course, **data)
        else:
            found = Node.objects.select_for_update().filter(course=course, pk=node_id).first()
            if found is None:
                raise NotFound("No such node in this course.")
            node = found
            for key, value in data.items():
                setattr(node, key, value)
        _unique_or_conflict(node.save, "That node name or internal IP")
        audit_record(
            actor=actor,
            action="node.save",
            course=course,
            obj=node,
            after={k: str(v) for k, v in data.items()},
        )
    if status is not None and status != node.status:
        node = node_set_status(actor=actor, course=course, node_id=node.pk, status=status)
    return node


def static_ip_create(*, actor: User, course: Course, data: dict[str, Any]) -> StaticIP:
    """Staff register a reserved static external IP. An address is unique everywhere (409)."""
    require_staff(actor, course)
    address = data.get("address")
    if StaticIP.objects.filter(address=address).exists():
        raise Conflict(f"{address} is already registered.", field="address")
    with transaction.atomic():
        ip = StaticIP(course=course, **data)
        _unique_or_conflict(ip.save, f"The address {address}")
        audit_record(
            actor=actor,
            action="static_ip.create",
            course=course,
            obj=ip,
            after={k: str(v) for k, v in data.items()},
        )
    return ip
