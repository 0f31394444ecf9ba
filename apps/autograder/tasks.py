"""Thin Celery tasks: a run fans out into chunk tasks spread over the workers."""

from __future__ import annotations

import time

from celery import shared_task
from django.conf import settings

from apps.autograder.models import GradingRun
from apps.autograder.services import chunks, grade_chunk, students_of


@shared_task(name="autograder.grade_run")
def grade_run(run_id: int) -> int:
    """Queue one chunk task per `chunk_size` students; returns how many were queued."""
    run = GradingRun.objects.select_related("question_set__course").filter(pk=run_id).first()
    if run is None:
        return 0
    GradingRun.objects.filter(pk=run_id).update(status=GradingRun.Status.RUNNING)
    ids = students_of(run.question_set.course)
    parts = list(chunks(ids, run.chunk_size))
    for part in parts:
        grade_run_chunk.delay(run_id, part)
    return len(parts)


@shared_task(name="autograder.grade_run_chunk")
def grade_run_chunk(run_id: int, student_ids: list[int]) -> int:
    if settings.AUTOGRADER_CHUNK_PAUSE_S:
        time.sleep(settings.AUTOGRADER_CHUNK_PAUSE_S)
    run = GradingRun.objects.select_related("question_set__course").filter(pk=run_id).first()
    if run is None:
        return 0
    return grade_chunk(run, student_ids)
