from __future__ import annotations

from typing import Any, cast

from django.db.models import Count, QuerySet
from django.http import HttpRequest

from apps.compute.board.logins import login_names
from apps.compute.models import Allocation, Node, StaticIP
from apps.core.compiled import compiled_query
from apps.core.models import Course, Role, User


def inventory_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    nodes = dict(Node.objects.filter(course=course).values_list("status").annotate(n=Count("id")))
    ips = StaticIP.objects.filter(course=course).count()
    return {"node_status": nodes, "node_total": sum(nodes.values()), "ip_total": ips}


def _current_allocation(course_id: int, group_id: int) -> QuerySet[Allocation]:
    return (
        Allocation.objects.filter(course_id=course_id, ended_at__isnull=True, group_id=group_id)
        .select_related("node", "static_ip")
        .order_by("pk")[:1]
    )


def my_node_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    """The node and static IP the student's group holds, for the SSH line: 1 query after the
    page's group lookup (shared by the panels), none for a student in no group."""
    from apps.groups.selectors import current_group_id

    user = cast(User, request.user)  # the dashboard is behind login_required
    gid = current_group_id(course=course, user=user, memo=request.__dict__.setdefault("_memo", {}))
    allocation = None
    if gid is not None:
        found = compiled_query("compute.my_node", _current_allocation, course.pk, gid)
        allocation = found[0] if found else None
    login = None
    if allocation is not None:
        login = login_names(course.pk, [user.pk], os_login=allocation.node.os_login).get(user.pk)
    return {"allocation": allocation, "in_group": gid is not None, "login": login}
