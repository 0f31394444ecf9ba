"""Thin Celery tasks: a pass fans out into chunk tasks spread over the workers.

Tasks are acknowledged late and redelivered if a worker dies; `passes.grade_pass_chunk` makes a
redelivery harmless. A chunk that raises is retried with backoff; after its last retry the pass
is marked failed with the students it could not grade.
"""

from __future__ import annotations

import time

from celery import shared_task
from django.conf import settings

from apps.autograder import passes

CHUNK_RETRIES = 3


@shared_task(name="autograder.grade_pass")
def grade_pass(pass_id: int) -> int:
    """Queue one task per chunk still to grade; returns how many were queued."""
    indexes = passes.pass_start(pass_id)
    for index in indexes:
        grade_pass_chunk.delay(pass_id, index)
    return len(indexes)


@shared_task(
    name="autograder.grade_pass_chunk",
    bind=True,
    max_retries=CHUNK_RETRIES,
    soft_time_limit=max(1, settings.AUTOGRADER_CHUNK_TIME_LIMIT_S - 5),
    time_limit=settings.AUTOGRADER_CHUNK_TIME_LIMIT_S,
)
def grade_pass_chunk(self, pass_id: int, index: int) -> int:
    if settings.AUTOGRADER_CHUNK_PAUSE_S:
        time.sleep(settings.AUTOGRADER_CHUNK_PAUSE_S)
    try:
        return passes.grade_pass_chunk(pass_id, index)
    except Exception as exc:
        if self.request.retries >= CHUNK_RETRIES:
            passes.chunk_failed(pass_id, index, f"{type(exc).__name__}: {exc}")
            raise
        raise self.retry(exc=exc, countdown=2**self.request.retries) from exc


@shared_task(name="autograder.answers_intake")
def answers_intake(upload_id: int) -> str:
    """Preview or store an uploaded answers file (apps.autograder.uploads.upload_run)."""
    from apps.autograder.uploads import upload_run

    return upload_run(upload_id)


@shared_task(name="autograder.email_regrade")
def email_regrade(request_id: int) -> None:
    """Tell the student what staff decided on their regrade request."""
    from apps.autograder.regrades import email_decision

    email_decision(request_id)
