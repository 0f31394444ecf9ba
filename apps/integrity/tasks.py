"""The similarity check's worker task: thin, it calls the service."""

from __future__ import annotations

from celery import shared_task

from apps.integrity.services import similarity_crashed, similarity_run


@shared_task(name="integrity.similarity")
def similarity(check_id: int) -> str:
    try:
        return similarity_run(check_id)
    except Exception as exc:  # ended now with the error, not by the sweeper minutes later
        similarity_crashed(check_id, f"{type(exc).__name__}: {exc}")
        raise
