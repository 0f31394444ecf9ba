"""Thin Celery tasks for the LMS link."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="lti.sync_rosters")
def sync_rosters() -> list[str]:
    """Beat (off unless LTI_ROSTER_SYNC_EVERY_S is set): every linked course's roster from its
    LMS, committed like the staff's button would — unless it has problems or would drop more
    than a fifth of the students, which waits for staff (who are e-mailed the preview)."""
    from apps.lti.sync import roster_sync_all

    return roster_sync_all()
