"""The node agent's token: staff issue one per node (the old one stops working); the agent sends
GPU samples with it (`api/agent_views.py`). One transaction: the hash and its audit row."""

from __future__ import annotations

import hashlib
import secrets

from django.db import transaction

from apps.compute.board.services import require_staff
from apps.compute.cloud.nodeops import node_of
from apps.compute.models import Node
from apps.core.models import Course, User
from apps.core.services import audit_record


def agent_token_issue(*, actor: User, course: Course, node_id: int) -> tuple[Node, str]:
    """A new agent token for the node (the old one stops working); only its hash is kept."""
    require_staff(actor, course)
    node = node_of(actor, course, node_id)
    token = f"cna_{secrets.token_urlsafe(32)}"
    with transaction.atomic():
        Node.objects.filter(pk=node.pk).update(
            agent_token_hash=hashlib.sha256(token.encode()).hexdigest()
        )
        audit_record(actor=actor, action="node.agent_token", course=course, obj=node)
    return node, token
