"""Writes shared by every app. Today: the audit helper every later service calls."""

from __future__ import annotations

from typing import Any

from django.db import models, transaction

from apps.core.models import AuditEvent, Course, User
from apps.core.transactions import require_own_transaction


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
    require_own_transaction("audit_record must run inside the service's transaction.atomic().")
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


def account_unlock(*, actor: User, course: Course, user_id: int) -> User:
    """Lift a log-in lock-out (django-axes) from one member of the course, before it expires.

    Only the course's staff may; the person must be a member of this course (404 otherwise, so
    staff cannot probe other courses' accounts). Clears that account's failed attempts, not the
    address's, and writes an audit event."""
    from axes.utils import reset

    from apps.core.errors import NotAllowed, NotFound
    from apps.core.models import Membership
    from apps.core.permissions import is_staff

    if not is_staff(actor, course):
        raise NotAllowed("Only the course's instructors and TAs may unlock accounts.")
    member = (
        Membership.objects.filter(course=course, user_id=user_id).select_related("user").first()
    )
    if member is None:
        raise NotFound("No such person in this course.")
    with transaction.atomic():
        cleared = reset(username=member.user.email.lower())
        audit_record(
            actor=actor,
            action="auth.unlock",
            course=course,
            obj=member.user,
            after={"attempts_cleared": cleared},
        )
    return member.user
