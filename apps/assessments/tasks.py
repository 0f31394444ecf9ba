"""Thin Celery tasks for the study protocol."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone


@shared_task(name="assessments.retention_sweep")
def retention_sweep() -> list[str]:
    """Beat: warn instructors 30 days before, then delete raw quiz imports and the ID map at the
    course file's retention date (apps.assessments.study). Safe to run again: each step once."""
    from apps.assessments.study import retention_sweep as sweep

    return sweep(timezone.now())
