"""Staff (and, when the course file allows, the holding group) start and stop a node; staff
issue a node's agent token. Each is one transaction: the job or the token and its audit row."""

from __future__ import annotations

import hashlib
import secrets

from django.db import transaction

from apps.compute import cloud
from apps.compute.models import Allocation, CloudOp, ComputePolicy, Node
from apps.compute.selectors import group_id_of
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
        from apps.compute.quotas import start_refusal

        refusal = start_refusal(course, group_id_of(user=actor, course=course))
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


def agent_token_issue(*, actor: User, course: Course, node_id: int) -> tuple[Node, str]:
    """A new agent token for the node (the old one stops working); only its hash is kept."""
    from apps.compute.services import _require_staff

    _require_staff(actor, course)
    node = node_of(actor, course, node_id)
    token = f"cna_{secrets.token_urlsafe(32)}"
    with transaction.atomic():
        Node.objects.filter(pk=node.pk).update(
            agent_token_hash=hashlib.sha256(token.encode()).hexdigest()
        )
        audit_record(actor=actor, action="node.agent_token", course=course, obj=node)
    return node, token
