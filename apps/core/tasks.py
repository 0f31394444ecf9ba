"""Thin Celery tasks. The health task proves a worker can reach the broker and the database."""

from __future__ import annotations

import os
import socket

from celery import shared_task
from django.db import connection


@shared_task(name="core.health_check")
def health_check(token: str = "") -> dict[str, object]:
    """Echo `token` with the worker's host, process and the database vendor it reached."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        (one,) = cursor.fetchone() or (0,)
    return {
        "token": token,
        "worker": socket.gethostname(),
        "pid": os.getpid(),
        "db": connection.vendor,
        "ok": one == 1,
    }


@shared_task(name="core.sweep_jobs")
def sweep_jobs() -> list[str]:
    """Beat's once-a-minute round (apps.core.jobs): take over the work of dead workers, end what
    was taken over too often, and leave a heartbeat for `/readyz`."""
    from django.utils import timezone

    from apps.core.jobs import sweep_all
    from apps.core.models import Heartbeat

    now = timezone.now()
    lines = sweep_all(now)
    Heartbeat.objects.update_or_create(
        name="sweep", defaults={"at": now, "detail": f"{len(lines)} job(s) taken over or ended"}
    )
    return lines
