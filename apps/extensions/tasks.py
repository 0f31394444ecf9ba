from __future__ import annotations

from celery import shared_task


@shared_task(name="extensions.email_staff")
def email_staff(request_id: int) -> None:
    """Tell the course staff a student asked for an extension the rule did not approve."""
    from apps.extensions.emails import email_staff as send

    send(request_id)


@shared_task(name="extensions.email_decision")
def email_decision(request_id: int) -> None:
    """Tell the student (and their group, for a group's request) what was decided."""
    from apps.extensions.emails import email_decision as send

    send(request_id)
