"""Writes shared by every app. Today: the audit helper every later service calls."""

from __future__ import annotations

from typing import Any

from django.db import models, transaction

from apps.core.models import AuditEvent, Course, User


def audit_record(
    *,
    actor: User | None,
    action: str,
    course: Course | None = None,
    obj: models.Model | None = None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    note: str = "",
) -> AuditEvent:
    """Append one audit event. Call it inside the service's own transaction, so the event and
    the change it describes commit (or roll back) together.

    Raises `RuntimeError` when called outside a transaction: an audit row that can survive a
    rolled-back change would describe something that never happened.
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit_record must run inside the service's transaction.atomic().")
    return AuditEvent.objects.create(
        actor=actor if actor is not None and actor.is_authenticated else None,
        course=course,
        action=action,
        object_type=obj._meta.label_lower if obj is not None else "",
        object_id=str(obj.pk) if obj is not None and obj.pk is not None else "",
        object_repr=str(obj)[:200] if obj is not None else "",
        before=before,
        after=after,
        note=note,
    )
