"""Reads for compute, scoped by role: a student sees only their own group's node, IP, windows."""

from __future__ import annotations

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from apps.compute.board.access import Bundle, Participant
from apps.compute.models import Allocation, Incident, Node, RunRecord, SharingWindow
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.groups.selectors import current_group_id


def group_id_of(*, user: User, course: Course) -> int | None:
    """The student's current group id (`groups.selectors.current_group_id`, unmemoized)."""
    return current_group_id(course=course, user=user)


LOOKUP = -1  # window_list: find the student's group (pass the id when the caller has it)


def window_list(
    *, user: User, course: Course, group_id: int | None = LOOKUP
) -> QuerySet[SharingWindow]:
    """Staff: every window. Students: windows their group requested or that use its node."""
    runs = (
        RunRecord.objects.filter(window=OuterRef("pk"))
        .order_by()
        .values("window")
        .annotate(n=Count("pk"))
        .values("n")
    )
    qs = (
        SharingWindow.objects.filter(course=course)
        .select_related("requester")
        .prefetch_related("nodes__node", "nodes__owner")
        .annotate(n_runs=Coalesce(Subquery(runs), 0))
    )
    if is_staff(user, course):
        return qs.order_by("starts_at")
    gid = group_id_of(user=user, course=course) if group_id == LOOKUP else group_id
    if gid is None:
        return qs.none()
    return qs.filter(Q(requester_id=gid) | Q(nodes__owner_id=gid)).distinct().order_by("starts_at")


def own_node_bundle(*, allocation: Allocation) -> Bundle:
    node, ip = allocation.node, allocation.static_ip
    return Bundle(
        title=f"{allocation.course.code} {allocation.group.name} node",
        slug=f"{allocation.course.code}-g{allocation.group_id}",
        participants=(
            Participant(
                0, node.name, ip.address, node.internal_ip, allocation.group.name, node.gpu_count
            ),
        ),
        gcp_project=node.gcp_project,
    )


def window_bundle(*, window: SharingWindow) -> Bundle:
    """Participants with the IP each node's group holds now (2 queries)."""
    rows = list(window.nodes.select_related("node", "owner").order_by("rank"))
    ips = dict(
        Allocation.objects.filter(
            node_id__in=[r.node_id for r in rows], ended_at__isnull=True
        ).values_list("node_id", "static_ip__address")
    )
    participants = tuple(
        Participant(
            r.rank,
            r.node.name,
            ips.get(r.node_id, ""),
            r.node.internal_ip,
            r.owner.name,
            r.node.gpu_count,
        )
        for r in rows
    )
    return Bundle(
        title=f"{window.course.code} window #{window.pk}",
        slug=f"{window.course.code}-w{window.pk}",
        participants=participants,
        gcp_project=rows[0].node.gcp_project if rows else "",
        master_port=window.master_port,
        starts=window.starts_at,
        ends=window.ends_at,
        zone=window.course.timezone,
    )


# ---------------------------------------------------------------- one scope per model
# Pages and API read through these, never `if not is_staff: filter(...)` in a view: staff see
# the course's rows, a student their own group's (none when in no group).


def allocation_list(*, user: User, course: Course) -> QuerySet[Allocation]:
    """Current allocations: staff all, by node name; a student their group's."""
    qs = Allocation.objects.filter(course=course, ended_at__isnull=True).select_related(
        "group", "node", "static_ip"
    )
    if is_staff(user, course):
        return qs.order_by("node__name")
    return qs.filter(group_id=group_id_of(user=user, course=course) or 0)


def node_list(*, user: User, course: Course) -> QuerySet[Node]:
    """Nodes: staff all; a student the node their group holds."""
    nodes = Node.objects.filter(course=course).order_by("name")
    if is_staff(user, course):
        return nodes
    return nodes.filter(pk__in=allocation_list(user=user, course=course).values("node_id"))


def incident_list(*, user: User, course: Course) -> QuerySet[Incident]:
    """Incidents, newest first: staff all; a student their group's reports."""
    qs = Incident.objects.filter(course=course).select_related("node", "group", "reported_by")
    if is_staff(user, course):
        return qs
    gid = group_id_of(user=user, course=course)
    return qs.filter(group_id=gid) if gid else qs.none()
