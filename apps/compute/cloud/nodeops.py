"""Staff (and, when the course file allows, the holding group) start and stop a node: one
transaction, the job and its audit row. A group's start is refused when a registered guard
(`hooks.start_refusal`: its GPU-hour quota) says so."""

from __future__ import annotations

from django.db import transaction

from apps.compute.board.selectors import group_id_of
from apps.compute.cloud import hooks
from apps.compute.cloud import sync as cloud
from apps.compute.models import Allocation, CloudOp, ComputePolicy, Node
from apps.core.errors import DomainError, NotAllowed, NotFound
from apps.core.models import Course, User
from apps.core.permissions import is_staff
from apps.core.services import audit_record


def may_power(actor: User, course: Course, node: Node) -> bool:
    if is_staff(actor, course):
        return True
    if not ComputePolicy.objects.filter(course=course, groups_may_power=True).exists():
        return False
    group = group_id_of(user=actor, course=course)
    return bool(
        group
        and Allocation.objects.filter(node=node, group_id=group, ended_at__isnull=True).exists()
    )


def node_of(actor: User, course: Course, node_id: int, *, power: bool = False) -> Node:
    """The course's node; for `power`, only one the actor may start and stop (404 otherwise)."""
    node = Node.objects.filter(course=course, pk=node_id).first()
    if node is None or (power and not may_power(actor, course, node)):
        raise NotFound("No such node of yours.")
    return node


def power_request(
    *, actor: User, course: Course, node_id: int, kind: str, discard_local_ssd: bool = False
) -> CloudOp:
    """Queue starting or stopping the node (a cloud job, sent once this commits). A stop keeps
    the node's Local SSD data unless staff chose to discard it."""
    node = node_of(actor, course, node_id, power=True)
    if kind == CloudOp.Kind.START and not is_staff(actor, course):
        refusal = hooks.start_refusal(course, group_id_of(user=actor, course=course))
        if refusal:
            raise DomainError(refusal)
    if discard_local_ssd and not is_staff(actor, course):
        raise NotAllowed("Only staff may discard a node's Local SSD data.")
    with transaction.atomic():
        op = cloud.request(
            course.pk,
            kind,
            node.pk,
            why=f"{kind} by {actor.email}"
            + (" (discarding Local SSD data)" if discard_local_ssd else ""),
            actor_id=actor.pk,
            discard_local_ssd=discard_local_ssd,
        )
        audit_record(
            actor=actor,
            action=f"node.{kind}",
            course=course,
            obj=node,
            after={"job": op.pk, "discard_local_ssd": discard_local_ssd},
        )
    return op
