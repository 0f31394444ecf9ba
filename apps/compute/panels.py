from __future__ import annotations

from typing import Any

from django.db.models import Count
from django.http import HttpRequest

from apps.compute.models import Node, StaticIP
from apps.core.models import Course, Role


def inventory_context(request: HttpRequest, course: Course, role: Role) -> dict[str, Any]:
    nodes = dict(Node.objects.filter(course=course).values_list("status").annotate(n=Count("id")))
    ips = StaticIP.objects.filter(course=course).count()
    return {"node_status": nodes, "node_total": sum(nodes.values()), "ip_total": ips}
