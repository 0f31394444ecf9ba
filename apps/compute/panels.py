from __future__ import annotations

from typing import Any, cast

from django.db.models import Count
from django.http import HttpRequest

from apps.compute.models import Node, StaticIP
from apps.core.models import Course, Role, User


def inventory_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    nodes = dict(Node.objects.filter(course=course).values_list("status").annotate(n=Count("id")))
    ips = StaticIP.objects.filter(course=course).count()
    return {"node_status": nodes, "node_total": sum(nodes.values()), "ip_total": ips}


def my_node_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    """The node and static IP the student's group holds, for the SSH line (1 query; 2 when
    the group holds none)."""
    from apps.compute.models import Allocation
    from apps.groups.models import GroupMembership

    user = cast(User, request.user)  # the dashboard is behind login_required
    allocation = (
        Allocation.objects.filter(course=course, ended_at__isnull=True, group__memberships__user=user,
                                  group__memberships__left_at__isnull=True)
        .select_related("node", "static_ip")
        .first()
    )  # fmt: skip
    in_group = allocation is not None or (
        GroupMembership.objects.filter(course=course, user=user, left_at__isnull=True).exists()
    )
    return {"allocation": allocation, "in_group": in_group}
